"""What the Python package takes and says (src/python/mdsd): logits of every floating type
in mdsd.batch (numpy float16 / float32 / float64, torch bfloat16 / float16 / float32 /
float64, converted exactly before they reach C; anything else a TypeError naming the
argument), the progress callback (same results with and without it), errors in Python's
words rather than the command line's flags, and mdsd.__version__. Run by
tests/test_package.c: `PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest
test_mdsd_inputs` (torch is Debian's python3-torch; the package imports it only when given
a tensor)."""

import csv
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import mdsd
from support import ROOT, mdsd_bin

# A command-line option outside `backquoted` text: "--trials", "(-o)".
FLAG = re.compile(r"(^|[^\w`-])--?[a-z][\w-]*")


def unquoted(msg):
    return re.sub(r"`[^`]*`", "", msg)


def random_pair(rng, V):
    x, y = rng.random(V), rng.random(V)
    return x / x.sum(), y / y.sum()


class PythonWords(unittest.TestCase):
    def assert_python_words(self, call, *expected):
        with self.assertRaises(mdsd.MdsdError) as cm:
            call()
        msg = str(cm.exception)
        self.assertIsNone(FLAG.search(unquoted(msg)), msg)
        for e in expected:
            self.assertIn(e, msg)

    def test_library_messages_reached_from_python(self):
        rng = np.random.default_rng(1)
        p40, q40 = random_pair(rng, 40)
        p3k, q3k = random_pair(rng, 3000)
        p2k, q2k = random_pair(rng, 2000)
        dump = os.path.join(ROOT, "data", "kjv-ngram.h5")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.csv")
            trees = os.path.join(ROOT, "data", "kjv-trees.h5")
            cases = [
                (lambda: mdsd.alpha_star([0.5, 0.6], [0.5, 0.5], n=2), "mdsd.softmax(logits)"),
                (lambda: mdsd.alpha_star(p40, q40, n=2, method="brute"), "method=sort",
                 "maxflow"),
                (lambda: mdsd.verifier_rate("is", p3k, q3k, n=2), "is_top=S"),
                (lambda: mdsd.verifier_rate("rrsw", p2k, q2k, n=3, max_paths=10), "max_paths=",
                 "trials="),
                (lambda: mdsd.batch(np.log(p2k)[None], np.log(q2k)[None], n=6, scheme="wor",
                                    verifier="rrsw"), "(trials=)"),
                (lambda: mdsd.table(dump, out, temperatures=()), "temperatures=", "draft_counts="),
                (lambda: mdsd.table(dump, out, simulate=True), "simulate=True needs trials=K"),
                (lambda: mdsd.block(trees, out, verifiers="rrs,nope"), "verifiers=rrs,nope"),
                (lambda: mdsd.block(trees, out, resume=True, discard_partial=True),
                 "resume=True and discard_partial=True"),
            ]
            for case in cases:
                with self.subTest(expected=case[1]):
                    self.assert_python_words(*case)

    def test_every_mapped_message(self):
        """The library's messages that name an option, as the C sources spell them (the ones
        too slow or too rare to provoke above): no option is left, no marker either."""
        for msg in ("alpha*: 4000 variables x 300 rows, about 90 s of simplex (limit 60 s); "
                    "try mdsd bound `method sort` (iid, wor, cps, greedy, hub), maxflow or "
                    "lp-reduced, or pass `force` to solve it anyway",
                    "wor: ...; use `method brute` or lp-reduced",
                    "verifier x has no exact acceptance rate; estimate it by Monte Carlo "
                    "(`trials`)",
                    "rrsw: ... |supp q|^n = 1e9 draw paths exceed `max_paths`; estimate by "
                    "Monte Carlo instead (`trials`)",
                    "no exact acceptance at this size; pass `trials K` for Monte Carlo (rrsw: "
                    "or raise `max_paths`, the guard on its draw-path visits)",
                    "table: no output file (`output`)",
                    "'x.partial', line 3: a NUL byte; pass `discard_partial` to start over",
                    "`verifiers rrs,nope`: unknown verifier 'nope'",
                    "`sequences` is for seq dumps; t.h5 holds trees",
                    "bv verifies one draft path: `sequences 1` (gbv verifies K paths)"):
            with self.subTest(msg=msg):
                got = mdsd._python_words(msg.encode())
                self.assertIsNone(FLAG.search(got), got)
                self.assertNotIn("`", got)


class LogitTypes(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.t = rng.normal(0, 3, (300, 40)).astype(np.float32)
        self.d = rng.normal(0, 3, (300, 40)).astype(np.float32)

    def run_batch(self, t, d, **kw):
        return mdsd.batch(t, d, temperature=0.8, n=3, verifier="rrs", **kw)

    def assert_same(self, a, b):
        np.testing.assert_array_equal(a.alpha_star, b.alpha_star)
        np.testing.assert_array_equal(a.rate, b.rate)
        np.testing.assert_array_equal(a.per_draft, b.per_draft)

    def test_numpy_types(self):
        ref32 = self.run_batch(self.t, self.d)
        self.assert_same(self.run_batch(self.t.tolist(), self.d.astype(np.float64)),
                         self.run_batch(self.t.astype(np.float64), self.d.astype(np.float64)))
        h, hd = self.t.astype(np.float16), self.d.astype(np.float16)
        self.assert_same(self.run_batch(h, hd), self.run_batch(h.astype(np.float32),
                                                               hd.astype(np.float32)))
        self.assertEqual(ref32.alpha_star.shape, (300,))
        for bad in (self.t.astype(bool), self.t.astype(np.complex64), self.t.astype(str)):
            with self.subTest(dtype=bad.dtype), self.assertRaises(TypeError) as cm:
                self.run_batch(bad, self.d)
            self.assertIn("target_logits", str(cm.exception))
        with self.assertRaises(mdsd.MdsdError) as cm:
            self.run_batch(self.t, self.d[:, :20])
        self.assertIn("draft_logits (300, 20)", str(cm.exception))

    def test_torch_tensors(self):
        import torch
        t, d = torch.from_numpy(self.t), torch.from_numpy(self.d)
        self.assert_same(self.run_batch(t, d), self.run_batch(self.t, self.d))
        self.assert_same(self.run_batch(t.double(), d), self.run_batch(self.t.astype(np.float64),
                                                                       self.d.astype(np.float64)))
        for dtype in (torch.bfloat16, torch.float16):
            tb, db = t.to(dtype), d.to(dtype)
            # the exact widening of the same values (torch's own, element by element)
            want = self.run_batch(tb.float().numpy(), db.float().numpy())
            with self.subTest(dtype=dtype):
                self.assert_same(self.run_batch(tb, db), want)
                self.assert_same(self.run_batch(tb.requires_grad_(False), db.float()), want)
        with self.assertRaises(TypeError) as cm:
            self.run_batch(t, d > 0)
        self.assertIn("draft_logits", str(cm.exception))

    def test_bfloat16_rows_match_mdsd_table_on_a_bfloat16_dump(self):
        """A bfloat16 dump's rows through `mdsd table` and the same rows as torch bf16
        tensors through mdsd.batch: the same means (to the CSV's 10 digits)."""
        import torch
        tb, db = torch.from_numpy(self.t).bfloat16(), torch.from_numpy(self.d).bfloat16()
        N = self.t.shape[0]
        with tempfile.TemporaryDirectory() as tmp:
            dump, out = os.path.join(tmp, "bf16.h5"), os.path.join(tmp, "t.csv")
            with mdsd.DumpWriter(dump, 40, ["small"], dtype="bfloat16", creator="test",
                                 dataset="unit", tokenizer="none", target_model="big") as w:
                w.write(tb.float().numpy(), [db.float().numpy()], np.arange(N) % 40,
                        np.arange(N) // 30, np.arange(N) % 30)
            got = mdsd.batch(tb, db, temperature=0.8, n=3, verifier="rrs")
            subprocess.run([mdsd_bin(), "table", dump, "-o", out, "-t", "0.8", "-d", "3", "-s",
                            "iid", "-v", "rrs"], check=True, capture_output=True, cwd=ROOT)
            with open(out) as f:
                by = {row["method"]: float(row["alpha"]) for row in csv.DictReader(f)}
        self.assertLessEqual(abs(got.alpha_star.mean() - by["bound"]), 1e-9, by)
        self.assertLessEqual(abs(got.rate.mean() - by["rrs"]), 1e-9, by)

    def test_torch_is_imported_only_for_tensors(self):
        code = ("import sys, numpy as np, mdsd; "
                "mdsd.batch(np.zeros((2, 3)), np.zeros((2, 3))); print('torch' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        self.assertEqual(out.stdout.strip(), "False")


class Progress(unittest.TestCase):
    def test_same_results_with_progress_monte_carlo_included(self):
        rng = np.random.default_rng(4)
        t = rng.normal(0, 2, (1000, 30)).astype(np.float32)
        d = rng.normal(0, 2, (1000, 30)).astype(np.float32)
        kw = dict(n=3, verifier="rrs", trials=200, simulate=True, seed=5, row0=7, threads=2)
        plain = mdsd.batch(t, d, **kw)
        seen = []
        tracked = mdsd.batch(t, d, progress=lambda done, total: seen.append((done, total)), **kw)
        np.testing.assert_array_equal(plain.rate, tracked.rate)
        np.testing.assert_array_equal(plain.per_draft, tracked.per_draft)
        np.testing.assert_array_equal(plain.alpha_star, tracked.alpha_star)
        self.assertEqual(seen[-1], (1000, 1000))
        self.assertGreater(len(seen), 5)
        self.assertEqual([s for s, _ in seen], sorted(s for s, _ in seen))
        # an error names the true row, whatever block it fell in
        t[777, 3] = np.nan
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.batch(t, d, progress=lambda *a: None, n=2)
        self.assertIn("row 777", str(cm.exception))
        with self.assertRaises(TypeError):
            mdsd.batch(t, d, progress=3)


class Version(unittest.TestCase):
    def test_version_is_the_makefiles(self):
        with open(os.path.join(ROOT, "Makefile")) as f:
            want = re.search(r"^VERSION\s*:?=\s*(\S+)", f.read(), re.M).group(1)
        self.assertEqual(mdsd.__version__, want)
        self.assertEqual(mdsd.version(), want)


if __name__ == "__main__":
    unittest.main()
