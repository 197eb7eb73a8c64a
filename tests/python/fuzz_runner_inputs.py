"""A fuzz harness for mdsd-runner's input parsers: valid inputs - a prompt file, a training
corpus, .npy / .npz / .safetensors arrays for `import`, an OUT.partial checkpoint - mutated
by a seeded stream (bytes flipped, inserted, deleted, duplicated, cut; JSON values swapped
for others of any type; header fields edited), each run through the runner (forked from
this warm process, killed past TIMEOUT s). Every run must succeed (exit 0, the dump there)
or refuse: exit 1 with one `mdsd-runner: error:` message that is not an internal error,
no traceback, and no OUT or OUT.partial left that was not there before.

    /usr/bin/python3 tests/python/fuzz_runner_inputs.py --cases 5000 --seed 1

(`make fuzz-runner`; tests/python/test_fuzz_runner_inputs.py runs a small count in `make
test`, MDSD_FUZZ_CASES=N more). A failing case is kept under --keep DIR to replay."""

import argparse
import json
import os
import random
import shutil
import signal
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "python"))
from fault_injection import start, wait  # noqa: E402

TIMEOUT = 60
TARGETS = ("prompts", "corpus", "npy", "npz", "safetensors", "tokens", "checkpoint")
# How often each target is drawn: a checkpoint resume starts a child interpreter (slower).
WEIGHTS = (5, 3, 4, 2, 5, 2, 1)
JSON_VALUES = [None, True, False, 0, -1, 2 ** 64 + 1, 1e308, -0.0, "", "x" * 300, "\u0000",
               "\ud800", [], {}, [[[]]], {"prompt": "a"}, 6.5, "6", [6, 8], [-1], [2 ** 40] * 3]


def corpus_text():
    rng = random.Random(5)
    words = [f"w{i}" for i in range(40)]
    return "".join(" ".join(rng.choice(words) for _ in range(8)) + " .\n" for _ in range(60))


def prompts_text():
    return "".join(json.dumps(r) + "\n" for r in
                   ({"prompt": "w1 w2"}, {"prompt": "w3 w4 w5", "note": 1}, {"prompt": "w6"}))


def npy_bytes(rows=6, cols=8, seed=1, dtype="float32"):
    import io

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.random.default_rng(seed).normal(size=(rows, cols)).astype(dtype))
    return buf.getvalue()


def npz_bytes():
    import io

    import numpy as np
    buf = io.BytesIO()
    np.savez(buf, target=np.random.default_rng(3).normal(size=(6, 8)).astype(np.float32),
             tokens=np.arange(6) % 8)
    return buf.getvalue()


def safetensors_parts():
    import numpy as np
    data = np.random.default_rng(4).normal(size=(6, 8)).astype("<f4").tobytes()
    header = {"x": {"dtype": "F32", "shape": [6, 8], "data_offsets": [0, len(data)]},
              "__metadata__": {"format": "pt"}}
    return header, data


def safetensors_bytes(header, data):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


# ---- mutations ------------------------------------------------------------------------------

def mutate_bytes(rng, data, region=None):
    """One to four byte-level edits, within region (lo, hi) when given."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        lo, hi = region or (0, len(b))
        hi = max(lo, min(hi, len(b)))
        at = rng.randint(lo, hi) if hi > lo else lo
        op = rng.randrange(7)
        if op == 0 and at < len(b):
            b[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2:
            del b[at:at + rng.randint(1, 16)]
        elif op == 3:
            del b[at:]
        elif op == 4:
            n = rng.randint(1, 32)
            b[at:at] = b[at:at + n]
        elif op == 5 and at < len(b):
            b[at] = rng.choice(b'\x00\xff"{}[],:\\\n0-9e.')
        else:
            b[at:at] = rng.choice([b"\x00", b"\xff\xfe", b"\\u0000", b"1e999", b"-1",
                                   b"[" * 3000, b'"prompt"', b"\n\n", b"\xef\xbb\xbf"])
    return bytes(b)


def mutate_json(rng, value, depth=0):
    """A copy of value with one entry, somewhere inside, replaced by a value of any type."""
    if isinstance(value, dict) and value and (depth < 3 and rng.random() < 0.7):
        key = rng.choice(sorted(value))
        out = dict(value)
        if rng.random() < 0.15:
            del out[key]
        else:
            out[key] = mutate_json(rng, value[key], depth + 1)
        return out
    if isinstance(value, list) and value and (depth < 3 and rng.random() < 0.7):
        i = rng.randrange(len(value))
        out = list(value)
        out[i] = mutate_json(rng, value[i], depth + 1)
        return out
    return rng.choice(JSON_VALUES)


def mutated_prompts(rng):
    if rng.random() < 0.5:
        records = [json.loads(line) for line in prompts_text().splitlines()]
        i = rng.randrange(len(records))
        records[i] = mutate_json(rng, records[i])
        return "".join(json.dumps(r) + "\n" for r in records).encode()
    return mutate_bytes(rng, prompts_text().encode())


def npy_header_end(data):
    (n,) = struct.unpack("<H", data[8:10])
    return 10 + n


# ---- one case -------------------------------------------------------------------------------

def make_case(rng, kind, folder, base):
    """Writes the case's inputs under folder; returns the runner's arguments."""
    out = os.path.join(folder, "o.h5")
    corpus = os.path.join(folder, "c.txt")
    prompts = os.path.join(folder, "p.jsonl")

    def put(name, data):
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        return path
    ngram = ["ngram", "--corpus", corpus, "--prompts", prompts, "-o", out, "--vocab-size",
             "30", "--num-samples", "2", "--max-new-tokens", "4", "-q"]
    if kind in ("prompts", "corpus", "checkpoint"):
        put("c.txt", corpus_text().encode())
        put("p.jsonl", prompts_text().encode())
    if kind == "prompts":
        put("p.jsonl", mutated_prompts(rng))
        return ngram
    if kind == "corpus":
        put("c.txt", mutate_bytes(rng, corpus_text().encode()))
        return ngram
    if kind == "checkpoint":
        data = base["checkpoint"]
        put("o.h5.partial", mutate_bytes(rng, data, (0, len(data))) if rng.random() < 0.5
            else mutate_bytes(rng, data, (0, min(len(data), 4096))))
        return ngram[:-5] + ["--num-samples", "4", "--max-new-tokens", "8", "-q"]
    draft = put("d.npy", npy_bytes(seed=2))
    imp = ["import", "-o", out, "--draft", f"d={draft}"]
    if kind == "npy":
        data = npy_bytes()
        region = (0, npy_header_end(data)) if rng.random() < 0.7 else None
        return imp + ["--target", put("t.npy", mutate_bytes(rng, data, region))]
    if kind == "tokens":
        import io

        import numpy as np
        buf = io.BytesIO()
        np.save(buf, np.arange(6) % 8)
        data = buf.getvalue()
        region = (0, npy_header_end(data)) if rng.random() < 0.5 else None
        flag = rng.choice(["--tokens", "--sample-ids"])
        return imp + ["--target", put("t.npy", npy_bytes()), flag,
                      put("k.npy", mutate_bytes(rng, data, region))]
    if kind == "npz":
        key = rng.choice(["", ":target", ":tokens", ":nope"])
        return imp + ["--target", put("t.npz", mutate_bytes(rng, npz_bytes())) + key]
    header, data = safetensors_parts()
    if rng.random() < 0.6:
        blob = safetensors_bytes(mutate_json(rng, header), data)
    else:
        blob = safetensors_bytes(header, data)
        blob = mutate_bytes(rng, blob, (0, len(blob) - len(data)) if rng.random() < 0.7 else None)
    return imp + ["--target", put("t.safetensors", blob) + rng.choice(["", ":x"])]


def check(args, folder, case_id):
    """'ok' or 'refused', or a failure message."""
    before = set(os.listdir(folder))
    err_path = os.path.join(folder, "..", f"err-{case_id}")
    pid = start(args, err_path)
    rc = wait(pid, TIMEOUT)
    if rc is None:
        os.kill(pid, signal.SIGKILL)
        wait(pid, TIMEOUT)
        return f"hung past {TIMEOUT} s"
    with open(err_path, errors="replace") as f:
        err = f.read()
    os.unlink(err_path)
    after = set(os.listdir(folder))
    if "Traceback" in err or "Exception ignored" in err:
        return f"traceback (exit {rc}):\n{err}"
    if rc == 0:
        if not os.path.exists(os.path.join(folder, "o.h5")):
            return "exit 0 without the dump"
        return "ok"
    if rc != 1:
        return f"exit {rc}:\n{err}"
    if not err.startswith("mdsd-runner: error: ") or "internal error" in err:
        return f"not a refusal message:\n{err}"
    new = sorted(after - before)
    if new:
        return f"refused but left {new}:\n{err}"
    return "refused"


def base_inputs(folder):
    """The valid checkpoint the checkpoint mutations start from."""
    os.makedirs(folder)
    with open(os.path.join(folder, "c.txt"), "w") as f:
        f.write(corpus_text())
    with open(os.path.join(folder, "p.jsonl"), "w") as f:
        f.write(prompts_text())
    out = os.path.join(folder, "o.h5")
    args = ["ngram", "--corpus", os.path.join(folder, "c.txt"), "--prompts",
            os.path.join(folder, "p.jsonl"), "-o", out, "--vocab-size", "30", "--num-samples",
            "4", "--max-new-tokens", "8", "-q", "--stop-after", "2"]
    if wait(start(args), TIMEOUT) != 0:
        raise SystemExit("could not make the base checkpoint")
    with open(out + ".partial", "rb") as f:
        return {"checkpoint": f.read()}


def run(cases, seed, keep=None, log=None):
    """{'ok': n, 'refused': n, 'failures': [(case, kind, message)], 'per_kind': {...}}."""
    os.environ["OMP_NUM_THREADS"] = "1"
    # A checkpoint can make libhdf5 loop (seed 7, case 996): the runner's watchdog must
    # refuse it before this harness's TIMEOUT.
    os.environ["MDSD_RUNNER_CHECKPOINT_TIMEOUT"] = str(TIMEOUT // 6)
    rng = random.Random(seed)
    counts = {"ok": 0, "refused": 0, "failures": [], "per_kind": {k: 0 for k in TARGETS}}
    with tempfile.TemporaryDirectory(prefix="mdsd-fuzz-runner-") as top:
        base = base_inputs(os.path.join(top, "base"))
        for i in range(cases):
            kind = rng.choices(TARGETS, WEIGHTS)[0]
            case_rng = random.Random(rng.getrandbits(64))
            folder = os.path.join(top, f"case-{i}")
            os.mkdir(folder)
            args = make_case(case_rng, kind, folder, base)
            verdict = check(args, folder, i)
            counts["per_kind"][kind] += 1
            if verdict in ("ok", "refused"):
                counts[verdict] += 1
                shutil.rmtree(folder)
            else:
                counts["failures"].append((i, kind, verdict))
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    shutil.copytree(folder, os.path.join(keep, f"case-{i}-{kind}"))
                    with open(os.path.join(keep, f"case-{i}-{kind}", "ARGS"), "w") as f:
                        f.write(json.dumps(args) + "\n")
                shutil.rmtree(folder)
            if log and (i + 1) % 500 == 0:
                log(f"{i + 1} cases: {counts['ok']} ok, {counts['refused']} refused, "
                    f"{len(counts['failures'])} failed")
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="copy failing cases here")
    args = ap.parse_args()
    t0 = time.monotonic()
    counts = run(args.cases, args.seed, args.keep, log=print)
    for i, kind, message in counts["failures"]:
        print(f"case {i} ({kind}): {message}")
    print(f"fuzz runner inputs: {args.cases} cases, seed {args.seed}: {counts['ok']} ok, "
          f"{counts['refused']} refused, {len(counts['failures'])} failed; per input "
          f"{json.dumps(counts['per_kind'])}; {time.monotonic() - t0:.0f} s")
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
