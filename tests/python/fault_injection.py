"""Fault injection for the runner's checkpoint (src/mdsd_runner/checkpoint.py): RUNS runs of
`mdsd-runner ngram` on a tiny corpus, each killed with SIGKILL at a random moment while it
writes OUT.partial (kill -9 leaves HDF5 files torn), then resumed with the same command.
Every resume must end either with a dump identical, dataset by dataset and attribute by
attribute, to an uninterrupted run's (and no .partial or .rebuild left), or with a refusal:
exit 1 and one `mdsd-runner: error:` message. A traceback, another exit status, a
different dump or a resume that hangs (TIMEOUT s) is a failure.

    /usr/bin/python3 tests/python/fault_injection.py --runs 500 --seed 1 --jobs 2

(`make fault-injection`; tests/python/test_fault_injection.py runs a small count in
`make test`). The kill moments are drawn from a seeded stream over the writing time
measured on the reference run; where they land in the writing is up to the scheduler, so
two runs with one seed differ in detail, never in what must hold."""

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "python"))
from dump_compare import differences  # noqa: E402

TIMEOUT = 120
RESUME_TIMEOUT = 60


def write_inputs(folder, seed=7):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    corpus = os.path.join(folder, "corpus.txt")
    with open(corpus, "w") as f:
        for _ in range(1500):
            f.write(" ".join(rng.choice(words) for _ in range(12)) + "\n")
    prompts = os.path.join(folder, "prompts.jsonl")
    with open(prompts, "w") as f:
        for i in range(5):
            f.write(json.dumps({"prompt": f"w{i} w{i + 1}"}) + "\n")
    return corpus, prompts


def command(corpus, prompts, out):
    return ["ngram", "--corpus", corpus, "--prompts", prompts, "-o", out,
            "--vocab-size", "256", "--num-samples", "30", "--max-new-tokens", "24",
            "--batch-size", "4", "-q"]


def start(args, stderr=os.devnull):
    """The runner on ARGS in a forked child of this (warm) process: no interpreter start-up
    per run; its stderr to the file STDERR. Returns its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
            from mdsd_runner.cli import main
            code = main(args)
        except BaseException:  # noqa: BLE001 - escaped the runner's handler: report it
            import traceback
            traceback.print_exc()
            code = 99
        finally:
            os._exit(locals().get("code", 99))
    return pid


def wait(pid, timeout):
    """The child's exit status (negative: the signal that ended it), or None past TIMEOUT."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.002)
    return None


def until_partial(pid, out):
    """Waits until OUT.partial exists or the child has ended; returns its status or None."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and not os.path.exists(out + ".partial"):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.001)
    return None


def writing_time(corpus, prompts, out):
    """Seconds from OUT.partial's creation to the end of an uninterrupted run."""
    pid = start(command(corpus, prompts, out))
    early = until_partial(pid, out)
    t0 = time.monotonic()
    rc = early if early is not None else wait(pid, TIMEOUT)
    if rc != 0:
        raise SystemExit(f"the reference run failed (exit {rc})")
    return time.monotonic() - t0


def trial(i, seed, corpus, prompts, reference, window, folder):
    """One kill and resume; returns (outcome, detail): outcome 'same', 'refused' or
    'FAILED' (detail: the reason), for 'same' the detail says how it resumed."""
    rng = random.Random(seed * 1000003 + i)
    work = os.path.join(folder, f"trial-{i}")
    os.mkdir(work)
    out = os.path.join(work, "out.h5")
    pid = start(command(corpus, prompts, out))
    rc = until_partial(pid, out)
    if rc is None:
        time.sleep(rng.random() * window)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(status)
        else:
            os.kill(pid, signal.SIGKILL)
            rc = wait(pid, TIMEOUT)
    killed = rc == -signal.SIGKILL
    where = "mid-run" if killed else "after it finished"
    if not killed and rc != 0:
        return "FAILED", f"trial {i}: the victim failed by itself (exit {rc})"
    err = ""
    if killed:
        log = os.path.join(folder, f"resume-{i}.err")
        resume = start(command(corpus, prompts, out), log)
        rc = wait(resume, RESUME_TIMEOUT)
        if rc is None:
            os.kill(resume, signal.SIGKILL)
            wait(resume, TIMEOUT)
            return "FAILED", f"trial {i}: the resume hung (killed after {RESUME_TIMEOUT} s)"
        with open(log) as f:
            err = f.read()
        if "Traceback" in err or "Exception ignored" in err:
            return "FAILED", f"trial {i}: traceback on resume:\n{err}"
        if rc == 1 and err.startswith("mdsd-runner: error: "):
            return "refused", f"trial {i}: {err.strip()}"
        if rc != 0:
            return "FAILED", f"trial {i}: resume exit {rc}:\n{err}"
    left = sorted(set(os.listdir(work)) - {"out.h5"})
    if left:
        return "FAILED", f"trial {i} ({where}): left {left}"
    diff = differences(reference, out)
    if diff:
        return "FAILED", f"trial {i} ({where}): the dump differs in {diff[:8]}"
    kind = ("rebuilt" if "rebuilt from" in err else "renamed" if "is the finished dump" in err
            else "resumed in place" if killed else "finished before the kill")
    return "same", kind


def _safe_trial(*job):
    """trial(), with anything it raises counted as a failure (the harness must finish)."""
    import traceback
    try:
        return trial(*job)
    except BaseException:  # noqa: BLE001 - a resume that raised is what this test looks for
        return "FAILED", f"trial {job[0]}: raised:\n{traceback.format_exc()}"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # cli.main installed its own


def run(runs, seed, jobs, deadline_s=3600):
    """Counts of the outcomes: {'same': n, 'refused': n, 'FAILED': n, 'rebuilt': n, ...,
    'failures': [details], 'refusals': [details]}. JOBS forked workers, each taking every
    JOBS-th run and forking its victims in turn (libmdsd's OpenMP kept to one thread, so
    that forking is safe); a worker that outlives DEADLINE_S is killed and its missing runs
    count as failures."""
    os.environ["OMP_NUM_THREADS"] = "1"
    # A torn file on which libhdf5 loops is refused by the runner's watchdog, before this
    # harness's RESUME_TIMEOUT counts the resume as hung.
    os.environ["MDSD_RUNNER_CHECKPOINT_TIMEOUT"] = str(RESUME_TIMEOUT // 3)
    with tempfile.TemporaryDirectory(prefix="mdsd-fault-") as folder:
        corpus, prompts = write_inputs(folder)
        reference = os.path.join(folder, "reference.h5")
        window = writing_time(corpus, prompts, reference)
        workers = {}
        for k in range(jobs):
            results = os.path.join(folder, f"results-{k}.jsonl")
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    with open(results, "w") as f:
                        for i in range(k, runs, jobs):
                            outcome = _safe_trial(i, seed, corpus, prompts, reference, window,
                                                  folder)
                            f.write(json.dumps(outcome) + "\n")
                            f.flush()
                    code = 0
                finally:
                    os._exit(code)
            workers[pid] = results
        end = time.monotonic() + deadline_s
        for pid in workers:
            if wait(pid, max(1.0, end - time.monotonic())) is None:
                os.kill(pid, signal.SIGKILL)
                wait(pid, TIMEOUT)
        counts = {"same": 0, "refused": 0, "FAILED": 0, "failures": [], "refusals": []}
        seen = 0
        for results in workers.values():
            with open(results) as f:
                for line in f:
                    outcome, detail = json.loads(line)
                    seen += 1
                    counts[outcome] += 1
                    if outcome == "same":
                        counts[detail] = counts.get(detail, 0) + 1
                    else:
                        counts["failures" if outcome == "FAILED" else "refusals"].append(detail)
        if seen < runs:
            counts["FAILED"] += runs - seen
            counts["failures"].append(f"{runs - seen} runs did not report (a worker hung past "
                                      f"{deadline_s} s or died)")
        counts["window_s"] = round(window, 3)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    t0 = time.monotonic()
    counts = run(args.runs, args.seed, args.jobs)
    for detail in counts["refusals"] + counts["failures"]:
        print(detail)
    summary = {k: v for k, v in counts.items() if k not in ("failures", "refusals")}
    print(f"fault injection: {args.runs} runs, seed {args.seed}: {json.dumps(summary)}, "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
