"""A new user's notebook session (issue 40's "Done when"), run on the INSTALLED package only:
tests/test_package.c runs `venv/bin/python -m unittest test_notebook_path` from a directory
outside the source tree, with MDSD_NOTEBOOK_TREES naming a shipped tree dump by absolute
path (the venv has no source tree). One ordered scenario (test_1 ... test_9 run in name
order): torch float32 softmax rows at V = 32,000 into alpha_star with leading axes [2, V];
bf16 and float32 torch logits into batch and evaluate (the numbers of numpy float32 of the
same values); a SIGINT mid-batch raising KeyboardInterrupt within LIMIT s with no temporary
file left; a tqdm bar on a captured stream; every job once, small (about 5 s on one core).
Planted errors this catches (each shown once): the interrupt flag not checked in
mdsd_batch_eval's row loop nor in mdsd_montecarlo's block loop (KeyboardInterrupt 43 s after
SIGINT); a wrong expected value (toy rows); run from the source tree instead of the wheel
(the site-packages assertion); no MDSD_NOTEBOOK_TREES."""

import contextlib
import glob
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

LIMIT = 1.5  # seconds from the signal to KeyboardInterrupt (1 s asked; a loaded machine)
V = 32000


class Signal:
    """SIGINT to this process from another thread (copied from test_mdsd_interrupt.py)."""

    def __init__(self):
        self.sent = None

    def send(self):
        if self.sent is None:
            self.sent = time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)

    def after(self, seconds):
        threading.Timer(seconds, self.send).start()


def logits(N, W, seed=7):
    rng = np.random.default_rng(seed)
    t = rng.normal(0, 2, (N, W)).astype(np.float32)
    return t, (t + rng.normal(0, 1, (N, W))).astype(np.float32)


class Notebook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # the package under test is the installed one, not a source tree on sys.path
        assert "site-packages" in mdsd.__file__, mdsd.__file__
        cls.work = tempfile.mkdtemp(prefix="mdsd-notebook-")
        cls.tmp = os.path.join(cls.work, "tmp")
        os.mkdir(cls.tmp)
        cls._tempdir, tempfile.tempdir = tempfile.tempdir, cls.tmp

    @classmethod
    def tearDownClass(cls):
        tempfile.tempdir = cls._tempdir
        shutil.rmtree(cls.work, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def test_1_torch_softmax_rows_at_32k(self):
        import torch
        g = torch.Generator().manual_seed(0)
        p = torch.softmax(torch.randn(2, V, generator=g) * 3, -1)
        q = torch.softmax(torch.randn(2, V, generator=g) * 3, -1)
        self.assertEqual(p.dtype, torch.float32)
        a = np.asarray(mdsd.alpha_star(p, q, n=2))
        self.assertEqual(a.shape, (2,))
        def f64(x):  # the same row in float64, renormalised
            x = x.double().numpy()
            return x / x.sum()
        ref = [mdsd.alpha_star(f64(p[i]), f64(q[i]), n=2) for i in range(2)]
        np.testing.assert_allclose(a, ref, rtol=0, atol=1e-5)
        self.assertTrue(np.all((a > 0) & (a <= 1)))
        bad = f64(p[0])
        bad[0] += 1e-3  # a row off by 1e-3 is still refused
        with self.assertRaises(mdsd.MdsdError):
            mdsd.alpha_star(bad, f64(q[0]), n=2)

    def test_2_torch_bf16_and_float32_logits_into_batch_and_evaluate(self):
        import torch
        t, d = logits(200, 500)
        samples = np.repeat(np.arange(10), 20)
        for dtype in (torch.bfloat16, torch.float32):
            tt, dd = torch.from_numpy(t).to(dtype), torch.from_numpy(d).to(dtype)
            nt, nd = tt.float().numpy(), dd.float().numpy()  # the same values, float32
            got = mdsd.batch(tt, dd, n=2, verifier="rrs", progress=False)
            want = mdsd.batch(nt, nd, n=2, verifier="rrs", progress=False)
            np.testing.assert_array_equal(got.alpha_star, want.alpha_star, str(dtype))
            np.testing.assert_array_equal(got.rate, want.rate, str(dtype))
            e1 = mdsd.evaluate(tt, dd, samples=samples, verifiers="rrs", progress=False,
                               pandas=False)
            e2 = mdsd.evaluate(nt, nd, samples=samples, verifiers="rrs", progress=False,
                               pandas=False)
            self.assertEqual(len(e1), len(e2))
            self.assertEqual(e1.columns, e2.columns)
            self.assertIn("alpha", e1.columns)
            for col in e1.columns:  # every column, exactly (NaN where both are NaN)
                np.testing.assert_array_equal(np.asarray(e1[col]), np.asarray(e2[col]),
                                              f"{dtype} {col}")
        # integer arrays are refused as documented
        with self.assertRaises(TypeError):
            mdsd.batch(np.ones((2, 5), np.int64), np.ones((2, 5), np.int64), n=2)

    def test_3_sigint_mid_batch(self):
        t, d = logits(20000, 100)
        kw = dict(n=3, verifier="rrs", trials=20000, simulate=True, threads=1)
        sig = Signal()
        sig.after(1.0)
        started = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            mdsd.batch(t, d, progress=False, **kw)
        ended = time.monotonic()
        self.assertIsNotNone(sig.sent, "batch ended before the signal was sent")
        took = ended - sig.sent
        print(f"\nbatch: KeyboardInterrupt {took:.3f} s after SIGINT "
              f"({sig.sent - started:.2f} s into the call)", file=sys.stderr)
        self.assertLess(took, LIMIT)
        self.assertEqual(os.listdir(self.tmp), [], "temporary files left")
        few = mdsd.batch(t[:20], d[:20], progress=False, **kw)  # the flag was cleared
        self.assertTrue(np.all(np.isfinite(few.rate)))

    def test_4_tqdm_bar(self):
        import tqdm  # noqa: F401  (python3-tqdm: required here)
        from mdsd import _calls
        delay, _calls.BAR_DELAY = _calls.BAR_DELAY, 0.0
        try:
            t, d = logits(1000, 30)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                mdsd.batch(t, d, n=2, verifier="rrs")
        finally:
            _calls.BAR_DELAY = delay
        self.assertIn("mdsd.batch", err.getvalue())
        self.assertIn("/1000", err.getvalue())

    def test_5_bound_all_and_toy(self):
        p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
        r = mdsd.alpha_star_result(p, q, n=2, method="all")
        self.assertAlmostEqual(float(r.alpha), mdsd.alpha_star(p, q, n=2), places=12)
        toy = mdsd.toy(self.path("toy.h5"), "zipf", 200, 60, samples=6, threads=1)
        self.assertEqual(toy["rows"], 60)
        self.assertTrue(os.path.exists(self.path("toy.h5")))

    def test_6_table_report_plot_merge(self):
        dump, out = self.path("toy.h5"), self.path("table.csv")
        if not os.path.exists(dump):
            mdsd.toy(dump, "zipf", 200, 60, samples=6, threads=1)
        kw = dict(temperatures=(1.0, 0.8), draft_counts=(2,), verifiers=("rrs", "ot"),
                  threads=1, progress=False, pandas=False)
        mdsd.table(dump, out, markdown=self.path("t.md"), latex=self.path("t.tex"),
                   per_position=self.path("pp.csv"), **kw)
        with open(self.path("t.md")) as f:
            self.assertIn("|", f.read())
        with open(self.path("t.tex")) as f:
            self.assertIn("\\begin{table", f.read())
        md = mdsd.report(out)
        self.assertIn("rrs", md)
        self.assertIn("\\toprule", mdsd.report(out, latex=True))
        paired = mdsd.report(self.path("pp.csv"), paired="rate_rrs:rate_ot")
        self.assertIn("rrs", paired)
        # two shards merged: the bytes of one run
        shards = [mdsd.table(dump, self.path(f"s{i}.part"), shard=(i, 2), **kw)
                  for i in (1, 2)]
        mdsd.merge(shards, self.path("merged.csv"))
        with open(out, "rb") as a, open(self.path("merged.csv"), "rb") as b:
            self.assertEqual(a.read(), b.read(), "merged shards differ from one run")
        png = mdsd.plot(out, self.path("fig.png"), kind="vs-drafts", temperature=1.0)
        with open(png, "rb") as f:
            self.assertEqual(f.read(4), b"\x89PNG")
        fig = mdsd.plot_series(out, kind="vs-drafts", temperature=1.0)
        self.assertGreater(len(fig.lines), 0)
        try:
            import matplotlib
            matplotlib.use("Agg")
        except ImportError:
            return
        ax = mdsd.plot_matplotlib(out, kind="vs-drafts", temperature=1.0)
        self.assertGreater(len(ax.get_lines()), 0)

    def test_7_check(self):
        rows = mdsd.check(count=2, only="hu-Q-wor,k2-closed-form", progress=False,
                          pandas=False)
        self.assertEqual(len(rows), 2)
        self.assertTrue(all(s in ("pass", "finding") for s in rows["status"]), rows["status"])

    def test_8_block_on_a_tree_dump_and_markov_live(self):
        trees = os.environ.get("MDSD_NOTEBOOK_TREES")
        if not trees:
            self.fail("set MDSD_NOTEBOOK_TREES to a tree dump (data/kjv-trees.h5)")
        r = mdsd.block(trees, self.path("block.csv"), verifiers="rrs", depths=(1, 2),
                       threads=1, pandas=False, progress=False)
        self.assertGreater(len(r), 0)
        eff = np.asarray(r["block_efficiency"], float)
        self.assertTrue(np.all((eff >= 1) & (eff <= 3)), eff)
        rng = np.random.default_rng(4)
        P, Q = rng.dirichlet(np.ones(6), 6), rng.dirichlet(np.ones(6), 6)
        m = mdsd.block(markov=(P, Q), verifier="rrs", sequences=2, depths=3, live=50)
        self.assertGreaterEqual(m.block_efficiency, 1)
        self.assertLessEqual(m.block_efficiency, 4)
        self.assertIsNotNone(m.live_block_efficiency)
        self.assertEqual(np.asarray(m.per_depth).shape, (3,))

    def test_9_nothing_left_in_the_temporary_directory(self):
        self.assertEqual(glob.glob(os.path.join(self.tmp, "*")), [])


if __name__ == "__main__":
    unittest.main()
