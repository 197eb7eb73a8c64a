"""Ctrl-C and progress bars in long calls from Python (src/python/mdsd/_calls.py, the
library's mdsd_interrupt): a SIGINT delivered well inside mdsd.batch, mdsd.evaluate,
mdsd.table, mdsd.block (tree dumps) and mdsd.monte_carlo raises KeyboardInterrupt within
1 s (LIMIT allows 1.5 s on a loaded machine; each measured time is printed), leaves no
temporary file, keeps the job's checkpoint, which resume=True finishes to the bytes of an
uninterrupted run, and the next call runs (the flag is cleared). Progress: a tqdm bar
(Debian's python3-tqdm) when progress= is not given, none with progress=False, the
callback as before, in the caller's thread.
Each signal is sent from another thread once the call is under way: batch and monte_carlo
after 1 s of a call of about a minute (threads=1); table and evaluate from their progress
callback, which the job calls from inside the library after its first block of rows; block
once the checkpoint holds the first of three dumps.
Run by tests/test_package.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd_interrupt`.
Planted errors this catches (each shown once, together): the flag not checked in
mdsd_batch_eval's row loop (batch: KeyboardInterrupt 41 s after SIGINT) nor in the tree
dump's loop (block: 7.8 s), an interrupted table unit not checkpointing its closed samples
(table: no OUTPUT.partial kept); separately, mdsd_montecarlo's block loop not checking it
(monte_carlo: 70 s)."""

import contextlib
import io
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import mdsd
from mdsd import _calls
from support import ROOT

TREES = os.path.join(ROOT, "data", "kjv-trees.h5")
LIMIT = 1.5  # seconds from the signal to KeyboardInterrupt (1 s asked; a loaded machine)


def logits(N, V, seed=7):
    rng = np.random.default_rng(seed)
    t = rng.normal(0, 2, (N, V)).astype(np.float32)
    return t, (t + rng.normal(0, 1, (N, V))).astype(np.float32)


class Signal:
    """SIGINT to this process from another thread (Python raises KeyboardInterrupt in the
    main thread, as a Ctrl-C does); .sent: when."""

    def __init__(self):
        self.sent = None

    def send(self):
        if self.sent is None:
            self.sent = time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)

    def after(self, seconds):
        threading.Timer(seconds, self.send).start()

    def when(self, ready, poll=0.02):
        """Sends once ready() is true (checked every poll seconds by a daemon thread)."""
        def watch():
            while not ready():
                time.sleep(poll)
            self.send()
        threading.Thread(target=watch, daemon=True).start()


class Interrupt(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="mdsd-test-interrupt-")
        # evaluate's temporary dump goes to the temporary directory: a private one here
        self.tmp = os.path.join(self.work, "tmp")
        os.mkdir(self.tmp)
        self._tempdir, tempfile.tempdir = tempfile.tempdir, self.tmp

    def tearDown(self):
        tempfile.tempdir = self._tempdir
        shutil.rmtree(self.work, ignore_errors=True)

    def interrupted(self, what, call, sig):
        started = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            call()
        ended = time.monotonic()
        self.assertIsNotNone(sig.sent, f"{what}: ended before the signal was sent")
        took = ended - sig.sent
        print(f"\n{what}: KeyboardInterrupt {took:.3f} s after SIGINT "
              f"({sig.sent - started:.2f} s into the call)", file=sys.stderr)
        self.assertLess(took, LIMIT, f"{what}: {took:.3f} s from SIGINT to KeyboardInterrupt")

    def test_batch_stops_within_a_second_and_the_next_call_runs(self):
        # about 60 s uninterrupted on one core (3 ms a row: Monte Carlo, 20000 trials)
        t, d = logits(20000, 100)
        kw = dict(n=3, verifier="rrs", trials=20000, simulate=True, threads=1)
        sig = Signal()
        sig.after(1.0)
        self.interrupted("batch", lambda: mdsd.batch(t, d, progress=False, **kw), sig)
        # the flag was cleared: the next call runs to the end, with the same numbers as a
        # call made in a fresh process would give (rows keyed by row0 + row)
        few = mdsd.batch(t[:50], d[:50], progress=False, **kw)
        self.assertTrue(np.all(np.isfinite(few.rate)))
        again = mdsd.batch(t[:50], d[:50], progress=False, **kw)
        np.testing.assert_array_equal(few.rate, again.rate)

    def test_monte_carlo_stops_within_a_second(self):
        # about a minute uninterrupted on one core
        p, q = (np.random.default_rng(k).dirichlet(np.ones(100)) for k in (1, 2))
        sig = Signal()
        sig.after(1.0)
        self.interrupted("monte_carlo", lambda: mdsd.monte_carlo(
            "rrs", p, q, n=3, trials=300_000_000, threads=1), sig)
        r = mdsd.monte_carlo("rrs", p, q, n=3, trials=10000, threads=1)
        self.assertEqual(r.trials, 10000)

    def test_table_keeps_a_checkpoint_that_resumes_to_the_same_bytes(self):
        # V = 2000: blocks of about 1000 rows, so the job calls progress inside the unit;
        # 2 x 2400 rows at about 1.2 ms a row (Monte Carlo, 10000 trials, one thread)
        N, V = 2400, 2000
        t, d = logits(N, V)
        dump = os.path.join(self.work, "rows.h5")
        with mdsd.DumpWriter(dump, V, ["d"], creator="test") as w:
            w.write(t, [d], np.zeros(N, np.int32), np.repeat(np.arange(60), N // 60),
                    np.tile(np.arange(N // 60), 60))
        kw = dict(temperatures=(1.0, 0.8), draft_counts=(3,), verifiers=("rrs",),
                  trials=10000, simulate=True, seed=3, threads=1, pandas=False)
        ref = os.path.join(self.work, "ref.csv")
        mdsd.table(dump, ref, progress=False, **kw)
        out = os.path.join(self.work, "out.csv")
        sig = Signal()
        before = set(os.listdir(self.work))
        self.interrupted("table", lambda: mdsd.table(dump, out, progress=lambda done, total:
                                                     sig.send(), **kw), sig)
        self.assertEqual(sorted(set(os.listdir(self.work)) - before), ["out.csv.partial"],
                         "temporary files left, or no checkpoint")
        with open(out + ".partial") as f:
            self.assertIn("#checkpoint ", f.read(), "the samples finished before the "
                          "interrupt were not checkpointed")
        # unfinished: the same call again is refused, resume=True finishes it
        with self.assertRaises(mdsd.MdsdError):
            mdsd.table(dump, out, progress=False, **kw)
        mdsd.table(dump, out, progress=False, resume=True, **kw)
        with open(ref, "rb") as a, open(out, "rb") as b:
            self.assertEqual(a.read(), b.read(), "resumed CSV differs from an uninterrupted run")
        self.assertFalse(os.path.exists(out + ".partial"))

    def test_toy_stops_within_a_second_and_leaves_no_file(self):
        # V = 152,064 x 4,000 rows of float32 (2.4 GB written): many seconds uninterrupted
        out = os.path.join(self.work, "toy.h5")
        sig = Signal()
        sig.after(0.5)
        self.interrupted("toy", lambda: mdsd.toy(out, "zipf", 152064, 4000, threads=1), sig)
        self.assertEqual(sorted(os.listdir(self.work)), ["tmp"], "toy left a file")
        small = mdsd.toy(out, "zipf", 1000, 10, threads=1)  # the flag was cleared
        self.assertEqual(small["rows"], 10)

    def test_evaluate_removes_its_temporary_dump(self):
        N, V = 2400, 2000
        t, d = logits(N, V, seed=8)
        sig = Signal()
        self.interrupted("evaluate", lambda: mdsd.evaluate(
            t, d, samples=np.repeat(np.arange(60), N // 60), verifiers=("rrs",), trials=10000,
            simulate=True, threads=1, progress=lambda done, total: sig.send()), sig)
        self.assertEqual(os.listdir(self.tmp), [], "evaluate left its temporary files")
        # the callback runs in the caller's thread, and what it raises stops the job too
        threads, raised = [], []

        def fail(done, total):
            threads.append(threading.current_thread())
            raised.append(time.monotonic())
            raise ValueError("stop here")
        with self.assertRaisesRegex(ValueError, "stop here"):
            mdsd.evaluate(t, d, samples=np.repeat(np.arange(60), N // 60), verifiers=("rrs",),
                          trials=10000, simulate=True, threads=1, progress=fail)
        took = time.monotonic() - raised[0]
        print(f"evaluate: the callback's exception raised {took:.3f} s after it", file=sys.stderr)
        self.assertLess(took, LIMIT)
        self.assertEqual(threads, [threading.main_thread()])
        self.assertEqual(os.listdir(self.tmp), [], "evaluate left its temporary files")
        r = mdsd.evaluate(t[:40], d[:40], samples=np.repeat([0, 1], 20), verifiers=("rrs",),
                          progress=False, pandas=False)
        self.assertEqual(len(r), 2)

    def test_block_keeps_finished_dumps_and_resumes_to_the_same_bytes(self):
        # three copies of the shipped tree dump (each a checkpoint unit), about 2 s each
        dumps = []
        for k in range(3):
            dumps.append(os.path.join(self.work, f"trees{k}.h5"))
            shutil.copyfile(TREES, dumps[-1])
        kw = dict(verifiers=("ot",), threads=1, pandas=False)
        ref = os.path.join(self.work, "ref.csv")
        mdsd.block(dumps, ref, **kw)
        out = os.path.join(self.work, "out.csv")

        def one_dump_done():
            try:
                with open(out + ".partial") as f:
                    return "\nr " in f.read()
            except FileNotFoundError:
                return False
        sig = Signal()
        sig.when(one_dump_done)
        before = set(os.listdir(self.work))
        self.interrupted("block", lambda: mdsd.block(dumps, out, **kw), sig)
        self.assertEqual(sorted(set(os.listdir(self.work)) - before), ["out.csv.partial"],
                         "temporary files left, or no checkpoint")
        mdsd.block(dumps, out, resume=True, **kw)
        with open(ref, "rb") as a, open(out, "rb") as b:
            self.assertEqual(a.read(), b.read(), "resumed CSV differs from an uninterrupted run")


class Bars(unittest.TestCase):
    def setUp(self):
        self.delay, _calls.BAR_DELAY = _calls.BAR_DELAY, 0.0  # short calls show a bar too

    def tearDown(self):
        _calls.BAR_DELAY = self.delay

    def stderr_of(self, call):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            call()
        return err.getvalue()

    def test_tqdm_bar_unless_progress_false(self):
        try:
            import tqdm  # noqa: F401
        except ImportError:
            self.skipTest("tqdm is not installed (Debian: python3-tqdm)")
        t, d = logits(1000, 30)
        shown = self.stderr_of(lambda: mdsd.batch(t, d, n=2, verifier="rrs"))
        self.assertIn("mdsd.batch", shown)
        self.assertIn("/1000", shown)
        self.assertEqual(self.stderr_of(lambda: mdsd.batch(t, d, n=2, progress=False)), "")
        seen = []
        self.assertEqual(self.stderr_of(lambda: mdsd.batch(
            t, d, n=2, progress=lambda done, total: seen.append(done))), "")
        self.assertEqual(seen[-1], 1000)
        r = self.stderr_of(lambda: mdsd.evaluate(t, d, samples=np.repeat(np.arange(10), 100),
                                                 pandas=False))
        self.assertIn("mdsd.evaluate", r)
        self.assertEqual(self.stderr_of(lambda: mdsd.evaluate(
            t, d, samples=np.repeat(np.arange(10), 100), pandas=False, progress=False)), "")

    def test_block_progress_counts_each_dumps_trees(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        dumps = [os.path.join(work, f"t{k}.h5") for k in range(2)]
        for path in dumps:
            shutil.copyfile(TREES, path)
        seen = []
        out = os.path.join(work, "b.csv")
        mdsd.block(dumps, out, verifiers=("rrs",), depths=(1,), threads=1, pandas=False,
                   progress=lambda done, total: seen.append((done, total)))
        totals = sorted({total for _, total in seen})
        self.assertEqual(len(totals), 1, seen[:5])  # two copies: the same number of trees
        trees = totals[0]
        self.assertGreater(trees, 1)
        ends = [i for i, (done, total) in enumerate(seen) if done == total]
        self.assertEqual(len(ends), 2, "each dump reports up to its trees once")
        self.assertTrue(all(a[0] <= b[0] for a, b in zip(seen[:ends[0]], seen[1:ends[0] + 1])))
        self.assertLess(seen[ends[0] + 1][0], trees, "the second dump starts again")
        try:
            import tqdm  # noqa: F401
        except ImportError:
            return
        os.remove(out)
        shown = self.stderr_of(lambda: mdsd.block(dumps, out, verifiers=("rrs",), depths=(1,),
                                                  threads=1, pandas=False))
        self.assertIn("mdsd.block", shown)
        self.assertIn(f"/{trees}", shown)

    def test_without_tqdm_no_bar_and_progress_true_says_what_to_install(self):
        saved = {k: sys.modules.get(k) for k in ("tqdm", "tqdm.auto")}
        sys.modules["tqdm"] = sys.modules["tqdm.auto"] = None  # import tqdm fails
        try:
            t, d = logits(200, 30)
            self.assertEqual(self.stderr_of(lambda: mdsd.batch(t, d, n=2)), "")
            with self.assertRaisesRegex(ImportError, "python3-tqdm"):
                mdsd.batch(t, d, n=2, progress=True)
        finally:
            for k, v in saved.items():
                if v is None:
                    del sys.modules[k]
                else:
                    sys.modules[k] = v
        with self.assertRaises(TypeError):
            mdsd.batch(t, d, n=2, progress=3)


if __name__ == "__main__":
    unittest.main()
