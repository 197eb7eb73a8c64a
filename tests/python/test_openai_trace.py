"""OpenAI-compatible traces in (`mdsd-runner import --openai-logprobs`, src/mdsd_runner/
openai_trace.py) and the truncation record of the runner's dump writer (`--neg-inf unseen`):
the shipped KJV fixture (data/traces, from data/kjv-ngram.h5) goes JSONL -> dump -> `mdsd
info` with every row truncated, its kept log-probabilities those of the JSONL and of the
full rows, its missing mass that of the full rows; every malformed trace is refused naming
file, line, position and token, and leaves no output."""

import copy
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

from support import ROOT, mdsd_bin, run_main
from mdsd_runner.errors import RunnerError
from mdsd_runner.importer import truncation_record

TRACES = os.path.join(ROOT, "data", "traces")
SOURCE = os.path.join(ROOT, "data", "kjv-ngram.h5")


def load_json(path):
    with open(path) as f:
        return json.load(f)


META = load_json(os.path.join(TRACES, "kjv-trace.json"))
N, K, V = META["rows"][1], META["top_k"], META["vocab_size"]
VOCAB = os.path.join(TRACES, "kjv-vocab.json")


def trace(shape, model):
    return os.path.join(TRACES, f"kjv-{shape}-{model}.jsonl")


def log_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def full_rows():
    """The true log-probabilities of the fixture's positions: {model: [N, V]}, tokens."""
    with h5py.File(SOURCE, "r") as f:
        rows = {name: log_softmax(f[path + "/logits"][:N]) for name, path in META["models"].items()}
        return rows, f["tokens"][:N]


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def write_lines(path, lines):
    with open(path, "w") as f:
        for obj in lines:
            f.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")


def mdsd(*args):
    proc = subprocess.run([mdsd_bin(), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


class Fixture(unittest.TestCase):
    def test_generator_writes_the_shipped_fixture(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([sys.executable, os.path.join(TRACES, "make_kjv_trace.py"), d],
                           check=True, capture_output=True, timeout=300)
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name), "rb") as a, \
                        open(os.path.join(TRACES, name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)
            self.assertEqual(len(os.listdir(d)), 6)

    def test_fixture_is_small_and_whole_samples(self):
        size = sum(os.path.getsize(os.path.join(TRACES, n)) for n in os.listdir(TRACES))
        self.assertLess(size, 600_000)
        with h5py.File(SOURCE, "r") as f:
            sid = f["sample_id"][:]
        self.assertEqual(int(np.sum(sid < META["samples"])), N)


class RoundTrip(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def imported(self, shape, *extra):
        out = self.path(f"{shape}.h5")
        rc, so, err = run_main("import", "--openai-logprobs", trace(shape, "target"),
                               "--draft", "kn2=" + trace(shape, "kn2"), *extra, "-o", out)
        self.assertEqual(rc, 0, so + err)
        return out, so

    def check_dump(self, out, k):
        """The dump against the full rows: every row truncated, its kept entries the true
        top-k log-probabilities (float32), -inf elsewhere, its missing mass the true one."""
        rows, tokens = full_rows()
        with h5py.File(out, "r") as f:
            self.assertEqual(list(f["tokens"][:]), list(tokens))
            with h5py.File(SOURCE, "r") as src:
                self.assertEqual(list(np.bincount(f["sample_id"][:])),
                                 list(np.bincount(src["sample_id"][:N])))
            for name, group in META["models"].items():
                got = f[group + "/logits"][:]
                self.assertEqual(got.dtype, np.float32)
                self.assertEqual(list(f[group + "/truncated"][:]), [1] * N)
                kept = np.isfinite(got)
                self.assertEqual(list(kept.sum(axis=1)), [k] * N)
                true = rows[name]
                for r in range(N):
                    ids = np.flatnonzero(kept[r])
                    np.testing.assert_array_equal(got[r, ids], true[r, ids].astype(np.float32))
                    # a top set: no unseen token above the smallest kept one
                    self.assertLessEqual(np.delete(true[r], ids).max(), true[r, ids].min())
                true_missing = 1 - np.where(kept, np.exp(true), 0).sum(axis=1)
                np.testing.assert_allclose(f[group + "/missing_mass"][:], true_missing, atol=1e-6)

    @unittest.skipUnless(mdsd_bin(), "needs MDSD_BIN")
    def test_completions_trace_to_dump_and_info(self):
        out, so = self.imported("completions", "--vocab-size", V, "--prompt-only")
        self.assertIn(f"{N} truncated top-{K} rows", so)
        self.check_dump(out, K)
        rc, text, err = mdsd("info", out, "--validate")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"{N} truncated top-k rows", text)
        rc, js, err = mdsd("info", out, "--json")
        self.assertEqual(rc, 0, err)
        info = json.loads(js)
        self.assertEqual(info["target"]["truncated_rows"], N)
        self.assertEqual(info["drafts"][0]["truncated_rows"], N)
        with h5py.File(out, "r") as f:
            self.assertAlmostEqual(info["target"]["max_missing_mass"],
                                   float(f["target/missing_mass"][:].max()), places=12)
        self.assertGreater(info["target"]["max_missing_mass"], 0.5)
        # a job without certified intervals (verifiers) refuses it
        rc, so, err = mdsd("table", out, "-d", "2", "-o", self.path("t.csv"))
        self.assertEqual(rc, 1, so + err)
        self.assertIn("truncated top-k rows", err)

    @unittest.skipUnless(mdsd_bin(), "needs MDSD_BIN")
    def test_trace_to_table_in_two_commands_brackets_the_full_rows(self):
        """JSONL -> dump (mdsd-runner import) -> table (mdsd table): the certified interval
        of every n holds alpha* of the full rows the fixture was cut from, and the point
        lies inside it; the chat shape (top-19 after its own-token rule) too."""
        full = self.path("full.csv")
        r0, r1 = META["rows"]
        args = ["-t", "1", "-s", "iid", "-v", "none", "-d", "1,2,4"]
        rc, so, err = mdsd("table", os.path.join(ROOT, "data", "kjv-ngram.h5"), *args,
                           "--draft-model", "kn2", "--positions", f"{r0}:{r1}", "-o", full)
        self.assertEqual(rc, 0, err)
        with open(full) as f:
            truth = {r["n"]: float(r["alpha"]) for r in csv.DictReader(f)}
        for shape, extra in (("completions", ["--vocab-size", V, "--prompt-only"]),
                             ("chat", ["--vocab", VOCAB])):
            with self.subTest(shape=shape):
                out, _ = self.imported(shape, *extra)
                table = self.path(f"{shape}.csv")
                rc, so, err = mdsd("table", out, *args, "-o", table)
                self.assertEqual(rc, 0, err)
                with open(table) as f:
                    rows = list(csv.DictReader(f))
                self.assertEqual(len(rows), 3)
                for r in rows:
                    lo, hi, point = float(r["alpha_low"]), float(r["alpha_high"]), float(r["alpha"])
                    self.assertEqual(int(r["positions"]), r1 - r0)
                    self.assertTrue(lo < point < hi, r)
                    self.assertTrue(lo <= truth[r["n"]] <= hi, (r["n"], lo, truth[r["n"]], hi))

    def test_kept_logprobs_are_the_jsonl_ones(self):
        out, _ = self.imported("completions", "--vocab-size", V, "--prompt-only")
        with h5py.File(out, "r") as f:
            for name, group in META["models"].items():
                got, toks = f[group + "/logits"][:], f["tokens"][:]
                row = 0
                for line in read_lines(trace("completions", name)):
                    lp = line["choices"][0]["logprobs"]
                    prompt = line["usage"]["prompt_tokens"]
                    self.assertEqual(prompt, len(lp["tokens"]) - 1)  # one generated token
                    for i, top in enumerate(lp["top_logprobs"][:prompt]):
                        if top is None:
                            self.assertEqual(i, 0)
                            continue
                        own = int(lp["tokens"][i].split(":")[1])
                        self.assertEqual(toks[row], own)
                        entries = {int(t.split(":")[1]): v for t, v in top.items()}
                        if len(entries) == K + 1:  # vLLM's own token from outside the top k
                            self.assertEqual(min(entries, key=entries.get), own)
                            del entries[own]
                        ids = np.flatnonzero(np.isfinite(got[row]))
                        self.assertEqual(sorted(entries), list(ids))
                        for j, v in entries.items():
                            self.assertEqual(got[row, j], np.float32(v))
                        row += 1
                self.assertEqual(row, N)

    def test_chat_trace_with_vocab(self):
        out, so = self.imported("chat", "--vocab", VOCAB)
        # the chat shape lists the own token first and stops at K: where it lies outside
        # the top K only the top K - 1 follow it, so every row keeps the top K - 1
        self.assertIn(f"{N} truncated top-{K - 1} rows", so)
        self.check_dump(out, K - 1)
        with h5py.File(out, "r") as f:
            self.assertEqual(f["vocab"][5].decode(), load_json(VOCAB)[5])

    def test_vocab_as_object(self):
        words = load_json(VOCAB)
        with open(self.path("v.json"), "w") as f:
            json.dump({w: i for i, w in enumerate(words)}, f)
        out, _ = self.imported("chat", "--vocab", self.path("v.json"))
        self.check_dump(out, K - 1)


class Refusals(unittest.TestCase):
    """Malformed traces: refused naming file, line, position and token; no output left."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "out.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def run_edit(self, shape, model, edit, *extra, raw=None):
        """Imports the fixture with `edit(lines)` applied to `model`'s trace (a copy)."""
        paths = {}
        for m in ("target", "kn2"):
            lines = read_lines(trace(shape, m))
            if m == model:
                lines = copy.deepcopy(lines)
                edit(lines)
            paths[m] = os.path.join(self.dir, f"{m}.jsonl")
            write_lines(paths[m], lines)
        if raw:
            raw(paths[model])
        vocab = ("--vocab", VOCAB) if shape == "chat" else ("--vocab-size", V, "--prompt-only")
        rc, so, err = run_main("import", "--openai-logprobs", paths["target"], "--draft",
                               "kn2=" + paths["kn2"], *vocab, *extra, "-o", self.out)
        self.assertFalse(os.path.exists(self.out), err)
        self.assertFalse(os.path.exists(self.out + ".partial"), err)
        return rc, err, paths[model]

    def refused(self, shape, model, edit, *needles, raw=None, extra=()):
        rc, err, path = self.run_edit(shape, model, edit, *extra, raw=raw)
        self.assertEqual(rc, 1, err)
        for n in needles:
            self.assertIn(n.replace("{path}", path), err)
        return err

    # completions shape: a position's top list {token: logprob}
    @staticmethod
    def top(lines, line, pos):
        return lines[line]["choices"][0]["logprobs"]["top_logprobs"][pos]

    def test_tokens_differ_between_models(self):
        def edit(lines):
            lines[1]["choices"][0]["logprobs"]["tokens"][5] = "token_id:9"
        self.refused("completions", "kn2", edit, "{path}, line 2, position 5: token id 9",
                     "not of the same text")

    def test_tokens_differ_chat(self):
        def edit(lines):
            lines[0]["choices"][0]["logprobs"]["content"][2]["token"] = "and"
        self.refused("chat", "kn2", edit, "{path}, line 1, position 2: token id 5")

    def test_token_not_in_vocab(self):
        def edit(lines):
            lines[2]["choices"][0]["logprobs"]["content"][3]["top_logprobs"][4]["token"] = "Zebra"
        self.refused("chat", "target", edit, "{path}, line 3, position 3: token 'Zebra' is not "
                     "in --vocab", "tokenizer mismatch")

    def test_token_id_outside_vocabulary(self):
        def edit(lines):
            top = self.top(lines, 0, 1)
            top["token_id:9000"] = top.pop(sorted(top, key=top.get)[-1])
        self.refused("completions", "target", edit, "{path}, line 1, position 1: token "
                     "'token_id:9000': id 9000 is outside the vocabulary [0, 8192)")

    def test_text_tokens_without_vocab(self):
        rc, so, err = run_main("import", "--openai-logprobs", trace("chat", "target"), "--draft",
                               "kn2=" + trace("chat", "kn2"), "--vocab-size", V, "-o", self.out)
        self.assertEqual(rc, 1)
        self.assertIn("line 1, position 0: token 'saying' is spelled as text", err)
        self.assertIn("--return-tokens-as-token-ids", err)

    def test_ambiguous_vocab(self):
        words = load_json(VOCAB)
        words[100] = "saying"
        vocab = os.path.join(self.dir, "v.json")
        with open(vocab, "w") as f:
            json.dump(words, f)
        rc, so, err = run_main("import", "--openai-logprobs", trace("chat", "target"), "--draft",
                               "kn2=" + trace("chat", "kn2"), "--vocab", vocab, "-o", self.out)
        self.assertEqual(rc, 1)
        self.assertIn("token 'saying' is ids 90 and 100 of --vocab", err)

    def test_generated_token_without_prompt_only(self):
        rc, so, err = run_main("import", "--openai-logprobs", trace("completions", "target"),
                               "--draft", "kn2=" + trace("completions", "kn2"), "--vocab-size", V,
                               "-o", self.out)
        self.assertEqual(rc, 1, err)
        self.assertIn("kjv-completions-kn2.jsonl, line 1, position 4: token id", err)
        self.assertIn("pass --prompt-only", err)
        self.assertFalse(os.path.exists(self.out))

    def test_prompt_only_needs_usage(self):
        for usage, message in ((None, "got None"), ({"prompt_tokens": 0}, "got 0"),
                               ({"prompt_tokens": 99}, "in [1, 5], got 99"),
                               ({"prompt_tokens": "4"}, "got '4'")):
            with self.subTest(usage=usage):
                def edit(lines):
                    lines[0]["usage"] = usage
                self.refused("completions", "target", edit, "{path}, line 1: --prompt-only needs "
                             "usage.prompt_tokens", message)

    def test_prompt_only_refused_on_chat(self):
        self.refused("chat", "target", lambda lines: None, "{path}, line 1: --prompt-only: a chat",
                     extra=("--prompt-only",))

    def test_missing_position_at_the_end(self):
        def edit(lines):
            lp = lines[1]["choices"][0]["logprobs"]
            for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
                del lp[key][-2:]  # the generated token and the text's last one
            lines[1]["usage"]["prompt_tokens"] -= 1
        self.refused("completions", "kn2", edit, "{path}, line 2: 47 positions",
                     "position 47 (token id", "is missing")

    def test_missing_position_inside(self):
        def edit(lines):
            lines[0]["choices"][0]["logprobs"]["top_logprobs"][2] = None
        self.refused("completions", "target", edit, "{path}, line 1, position 2: token id",
                     "a missing position")

    def test_missing_response(self):
        self.refused("completions", "kn2", lambda lines: lines.pop(), "has 2 responses",
                     "has 3")

    def test_k_varies(self):
        def edit(lines):
            top = self.top(lines, 2, 7)
            for t in sorted(top, key=top.get)[:10]:
                del top[t]
        self.refused("completions", "target", edit, "{path}, line 3, position 7: token id",
                     "k) varies")

    def test_duplicate_token_in_a_completions_top_list(self):
        def raw(path):
            with open(path) as f:
                lines = f.read().split("\n")
            # the same key twice in one JSON object (json.loads would keep the last)
            edited = lines[0].replace('"top_logprobs": [null, {',
                                      '"top_logprobs": [null, {"token_id:4": -3.0, '
                                      '"token_id:4": -3.5, ', 1)
            self.assertNotEqual(edited, lines[0])
            lines[0] = edited
            with open(path, "w") as f:
                f.write("\n".join(lines))
        self.refused("completions", "kn2", lambda lines: None,
                     "{path}, line 1, position 1: token 'token_id:4' appears twice", raw=raw)

    def test_duplicate_token_in_a_chat_top_list(self):
        def edit(lines):
            top = lines[1]["choices"][0]["logprobs"]["content"][4]["top_logprobs"]
            top[3] = dict(top[2], logprob=top[3]["logprob"])
        self.refused("chat", "target", edit, "{path}, line 2, position 4: token",
                     "appears twice in the top list")

    def test_bad_logprobs(self):
        cases = [(float("nan"), "logprob NaN is not a finite number"),
                 (float("-inf"), "logprob -Infinity is not a finite number"),
                 ("-1.5", "is not a finite number"),
                 (0.25, "is positive"), (-9999.0, "stand-in for -inf"), (None, "not a finite")]
        for value, message in cases:
            with self.subTest(value=value):
                def edit(lines):
                    top = self.top(lines, 1, 3)
                    top[next(iter(top))] = value
                self.refused("completions", "kn2", edit, "{path}, line 2, position 3: token",
                             message)


    def test_kept_mass_above_one(self):
        def edit(lines):
            top = self.top(lines, 1, 6)
            for t in top:
                top[t] = -0.01  # each a log-probability, together 20 times too much
        self.refused("completions", "kn2", edit, "{path}, line 2: position 6 (token id",
                     "its kept entries carry probability", "not logits")

    def test_malformed_responses(self):
        cases = [
            (lambda lines: lines.__setitem__(0, "{not json"), "{path}, line 1: not JSON"),
            (lambda lines: lines[1].__setitem__("choices", []), "{path}, line 2: expected a "
             "response with one choice (choices[0]), got 0 choices"),
            (lambda lines: lines[1]["choices"].append(lines[1]["choices"][0]),
             "{path}, line 2: expected a response with one choice"),
            (lambda lines: lines[2]["choices"][0].__setitem__("logprobs", None),
             "{path}, line 3: choices[0].logprobs is None: request logprobs"),
            (lambda lines: lines[0]["choices"][0]["logprobs"].pop("tokens"),
             "{path}, line 1: choices[0].logprobs has neither content"),
            (lambda lines: lines[0]["choices"][0]["logprobs"]["top_logprobs"].pop(),
             "{path}, line 1: 5 tokens but 4 top_logprobs entries"),
        ]
        for edit, message in cases:
            with self.subTest(message=message):
                self.refused("completions", "kn2", edit, message)

    def test_usage_errors(self):
        t, d = trace("completions", "target"), "kn2=" + trace("completions", "kn2")
        arrays = os.path.join(self.dir, "a.npy")
        np.save(arrays, np.zeros((2, 3), np.float32))
        cases = [(("--openai-logprobs", t, "--draft", d), "--vocab-size V"),
                 (("--openai-logprobs", t, "--draft", d, "--vocab-size", V, "--neg-inf", "zero"),
                  "--neg-inf: not an option of --openai-logprobs"),
                 (("--openai-logprobs", t, "--target", t, "--draft", d, "--vocab-size", V),
                  "give exactly one of --target"),
                 (("--openai-logprobs", t, "--draft", d, "--vocab-size", V, "--logits-dtype",
                   "float16"), "--logits-dtype: not an option"),
                 (("--target", arrays, "--draft", "d=" + arrays, "--prompt-only"),
                  "--prompt-only: an option of --openai-logprobs only"),
                 (("--target", arrays, "--draft", "d=" + arrays, "--vocab", VOCAB),
                  "--vocab: an option of --openai-logprobs only"),
                 (("--draft", d, "--vocab-size", V), "give exactly one of --target")]
        for args, message in cases:
            with self.subTest(message=message):
                rc, so, err = run_main("import", *args, "-o", self.out)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertFalse(os.path.exists(self.out))


class UnseenArrays(unittest.TestCase):
    """`import --neg-inf unseen` from arrays: the writer's truncation record."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        rows, _ = full_rows()
        self.rows = {}
        for name, lp in rows.items():
            top = np.argsort(-lp, axis=1, kind="stable")[:, :K]
            sparse = np.full(lp.shape, -np.inf, dtype=np.float32)
            np.put_along_axis(sparse, top, np.take_along_axis(lp, top, axis=1).astype(np.float32), 1)
            sparse[3] = lp[3]  # one complete row
            self.rows[name] = sparse
            np.save(os.path.join(self.dir, f"{name}.npy"), sparse)
        self.out = os.path.join(self.dir, "u.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def run_import(self, *extra):
        return run_main("import", "--target", os.path.join(self.dir, "target.npy"), "--draft",
                        "kn2=" + os.path.join(self.dir, "kn2.npy"), *extra, "-o", self.out)

    def test_unseen_writes_the_record(self):
        rc, so, err = self.run_import("--neg-inf", "unseen")
        self.assertEqual(rc, 0, err)
        with h5py.File(self.out, "r") as f:
            for name, group in META["models"].items():
                np.testing.assert_array_equal(f[group + "/logits"][:], self.rows[name])
                flags = f[group + "/truncated"][:]
                self.assertEqual(flags.dtype, np.uint8)
                self.assertEqual(list(flags), [1] * 3 + [0] + [1] * (N - 4))
                mass = f[group + "/missing_mass"][:]
                self.assertEqual(mass.dtype, np.float64)
                x = self.rows[name].astype(np.float64)
                want = 1 - np.where(np.isfinite(x), np.exp(x), 0).sum(axis=1)
                want[3] = 0.0
                np.testing.assert_allclose(mass, want, atol=1e-12)
                self.assertEqual(mass[3], 0.0)
        if mdsd_bin():
            rc, js, err = mdsd("info", self.out, "--json", "--validate")
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(js)["target"]["truncated_rows"], N - 1)

    def test_kept_mass_above_one_is_refused(self):
        bad = self.rows["kn2"].copy()
        bad[10, np.isfinite(bad[10])] += 5.0  # logits, not log-probabilities
        np.save(os.path.join(self.dir, "kn2.npy"), bad)
        rc, so, err = self.run_import("--neg-inf", "unseen")
        self.assertEqual(rc, 1, err)
        self.assertIn("drafts/kn2: row 10: its kept entries carry probability", err)
        self.assertFalse(os.path.exists(self.out))
        self.assertFalse(os.path.exists(self.out + ".partial"))

    def test_rounding_above_one_reads_as_no_missing_mass(self):
        row = np.full((1, 4), -np.inf, dtype=np.float32)
        row[0, :2] = np.log([0.5, 0.5 + 1e-7]).astype(np.float32)
        flags, mass = truncation_record("x", row, 0)
        self.assertEqual((int(flags[0]), float(mass[0])), (1, 0.0))
        row[0, 1] = np.float32(np.log(0.5 + 1e-3))
        with self.assertRaisesRegex(RunnerError, "x: row 0: its kept entries carry"):
            truncation_record("x", row, 0)

    def test_unseen_needs_float32(self):
        rc, so, err = self.run_import("--neg-inf", "unseen", "--logits-dtype", "float16")
        self.assertEqual(rc, 1, err)
        self.assertIn("stored as float32", err)
        self.assertFalse(os.path.exists(self.out))

    def test_truncated_partial_resumes_through_its_checksums(self):
        """The record is part of each sample's checksum: a rebuilt checkpoint keeps it."""
        from mdsd_runner import checkpoint
        from mdsd_runner.dump import DumpWriter
        groups = [("target", "t", 6, 0), ("drafts/d", "d", 6, 0)]
        rows = np.log(np.full((2, 6), 1 / 8)).astype(np.float32)
        rows[:, 4:] = -np.inf

        def writer():
            return DumpWriter(self.out, vocab_size=6, logits_dtype="float32", compression="gzip",
                              root_attrs={"creator": "test", "dataset": "x", "tokenizer": "x",
                                          "generation_temperature": 1.0},
                              groups=groups, config="c", truncation=True)
        record = (np.ones(2, np.uint8), np.full(2, 0.5))
        w = writer()
        w.open()
        w.append(0, [1, 2], [rows, rows], [record, record])
        w.append(1, [3, 4], [rows, rows], [record, record])
        w.file.attrs[checkpoint.CLEAN] = np.int64(0)  # as if killed: rebuilt on resume
        w.file.flush()
        w.file.close()
        w.file = None
        w = writer()
        self.assertEqual(w.open(), 2)
        w.finalize()
        with h5py.File(self.out, "r") as f:
            self.assertEqual(list(f["drafts/d/truncated"][:]), [1] * 4)
            self.assertEqual(list(f["target/missing_mass"][:]), [0.5] * 4)
        with self.assertRaisesRegex(RunnerError, "internal: drafts/d/missing_mass row 1"):
            w = DumpWriter(self.out + "2", vocab_size=6, logits_dtype="float32",
                           compression="gzip", root_attrs={}, groups=groups, config="c",
                           truncation=True)
            w.open()
            try:
                w.append(0, [1, 2], [rows, rows], [record, (np.array([1, 0], np.uint8),
                                                            np.array([0.5, 0.5]))])
            finally:
                w.discard()


if __name__ == "__main__":
    unittest.main()
