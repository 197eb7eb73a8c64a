"""Top-k / top-p truncation (MATH.md §0.3) against exact rationals, and the Python package's
top_p checked as the CLI checks --top-p. Run by tests/test_truncate.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_top_p`.

The reference ranks with Python's sort (decreasing probability, lower index first), sums
kept masses as Fractions (exact), compares them with P exactly, and divides by the exact
sum rounded once (float(Fraction) rounds correctly): the library's result must be the
same bits."""

import csv
import ctypes
import json
import math
import os
import re
import subprocess
import tempfile
import unittest
from fractions import Fraction

import numpy as np

import mdsd
from mdsd import _lib
from mdsd._lib import lib
from support import ROOT, mdsd_bin


def ref_truncate(p, k, P):
    V = len(p)
    order = sorted(range(V), key=lambda i: (-p[i], i))

    def cut(v, limit, P):
        kept, mass = [], Fraction(0)
        for r in order[:limit]:
            if v[r] <= 0.0 or (P is not None and mass >= Fraction(P)):
                break
            kept.append(r)
            mass += Fraction(v[r])
        total = float(mass)
        out = [0.0] * V
        for r in kept:
            out[r] = v[r] / total
        return out

    v = [float(x) for x in p]
    if 0 < k < V:
        v = cut(v, k, None)
    if P < 1.0:
        v = cut(v, V, P)
    return v


def lib_truncate(p, k, P):
    a = np.array(p, dtype=np.float64)
    err = _lib.Err()
    rc = lib.mdsd_truncate(a.ctypes.data, a.size, k, P, ctypes.byref(err))
    if rc:
        raise mdsd.MdsdError(rc, err.msg.decode())
    return a


def distribution(rng, kind, V):
    if kind == 0:
        return rng.dirichlet(np.full(V, 0.5))
    if kind == 1:  # zeros
        p = rng.dirichlet(np.full(V, 1.0)) * (rng.random(V) < 0.6)
        p[rng.integers(V)] += 0.1
        return p / p.sum()
    if kind == 2:  # ties: a few levels
        p = rng.integers(0, 4, V).astype(float)
        p[0] += 1
        return p / p.sum()
    if kind == 3:  # near-one-hot
        p = rng.random(V) * 1e-12
        p[rng.integers(V)] = 1.0
        return p / p.sum()
    if kind == 4:  # subnormal masses: T <= 0.05, gaps up to 40
        return mdsd.softmax(rng.normal(0, 40, V), float(rng.choice([0.05, 0.02, 0.01])))
    p = rng.integers(0, 5, V).astype(float)  # dyadic: every prefix mass exact
    p[0] += 2.0 ** math.ceil(math.log2(max(p.sum(), 1.0))) - p.sum()
    return p / p.sum()


def pick_P(rng, p):
    how = rng.integers(4)
    if how == 0:
        return float(rng.uniform(0.001, 0.999))
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    m = int(rng.integers(1, len(p) + 1))
    P = float(sum(Fraction(float(p[i])) for i in order[:m]))
    P = {1: P, 2: math.nextafter(P, 0.0), 3: math.nextafter(P, 2.0)}[int(how)]
    return P if 0.0 < P < 1.0 else 0.5


class AgainstExactRationals(unittest.TestCase):
    def test_truncation_is_bit_for_bit_the_exact_reference(self):
        rng = np.random.default_rng(2929)
        exact_hits = 0
        for t in range(3000):
            V = int(rng.integers(1, 17)) if t % 10 else int(rng.integers(17, 120))
            p = distribution(rng, t % 6, V)
            k = int(rng.integers(1, V + 1)) if rng.integers(3) else 0
            P = pick_P(rng, p)
            for kk, PP in ((0, P), (k, 1.0), (k, P), (0, 1.0)):
                got = lib_truncate(p, kk, PP)
                want = ref_truncate(p, kk, PP)
                self.assertEqual(got.tobytes(), np.array(want).tobytes(),
                                 f"instance {t}: k = {kk}, P = {PP!r}, p = {list(map(float.hex, p))}")
            order = sorted(range(V), key=lambda i: (-p[i], i))
            masses = np.cumsum([Fraction(float(p[i])) for i in order])
            exact_hits += any(m == Fraction(P) for m in masses)
        self.assertGreater(exact_hits, 150)  # P equal to a prefix mass is exercised

    def test_top_p_one_and_k_zero_leave_p_untouched(self):
        rng = np.random.default_rng(7)
        for _ in range(200):
            p = distribution(rng, int(rng.integers(6)), int(rng.integers(1, 40)))
            self.assertEqual(lib_truncate(p, 0, 1.0).tobytes(), np.asarray(p, float).tobytes())


class PackageTopP(unittest.TestCase):
    BAD = [(0, "is not in (0, 1]"), (0.0, "is not in (0, 1]"), (-0.0, "is not in (0, 1]"),
           (-0.1, "is not in (0, 1]"), (1.5, "is not in (0, 1]"), (math.inf, "is not in (0, 1]"),
           (10 ** 400, "is not in (0, 1]"), (math.nan, "is not a number"),
           (np.float32("nan"), "is not a number"), ("0.5", "is not a number"),
           (None, "is not a number"), (True, "is not a number"), ([0.5], "is not a number")]

    def test_batch_and_table_refuse_what_the_cli_refuses(self):
        t = np.zeros((2, 4), dtype=np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.csv")
            for bad, words in self.BAD:
                for call in (lambda: mdsd.batch(t, t, top_p=bad),
                             lambda: mdsd.table(os.path.join(ROOT, "data", "kjv-ngram.h5"), out,
                                                top_p=bad)):
                    with self.assertRaises(mdsd.MdsdError, msg=repr(bad)) as cm:
                        call()
                    self.assertIn("top_p", str(cm.exception))
                    self.assertIn(words, str(cm.exception), repr(bad))
            self.assertEqual(os.listdir(tmp), [])
        # numpy scalars and 1 are numbers in range
        for good in (np.float32(0.5), np.float64(1.0), 1, 0.25):
            mdsd.batch(t, t, top_p=good)

    def test_truncate_is_the_library_cut_and_checks_its_arguments(self):
        rng = np.random.default_rng(3)
        for _ in range(200):
            p = distribution(rng, int(rng.integers(6)), int(rng.integers(1, 30)))
            k, P = int(rng.integers(0, 5)), float(rng.uniform(0.05, 1.0))
            before = p.copy()
            valid = mdsd.truncate(p)  # validated (renormalised), not cut
            got = mdsd.truncate(p, top_k=np.int64(k), top_p=P)
            np.testing.assert_array_equal(p, before)  # the input is not touched
            self.assertEqual(got.tobytes(), np.array(ref_truncate(valid, k, P)).tobytes())
        for bad in (-1, 2.5, True, "3", None):
            with self.assertRaises(mdsd.MdsdError, msg=repr(bad)) as cm:
                mdsd.truncate([0.5, 0.5], top_k=bad)
            self.assertIn("top_k", str(cm.exception))
        for bad, words in self.BAD:
            with self.assertRaises(mdsd.MdsdError, msg=repr(bad)) as cm:
                mdsd.truncate([0.5, 0.5], top_p=bad)
            self.assertIn(words, str(cm.exception))
        for bad in ([0.5, 0.7], [0.5, math.nan], [-0.5, 1.5]):
            with self.assertRaises(mdsd.MdsdError, msg=repr(bad)):
                mdsd.truncate(bad, top_p=0.5)

    def test_batch_is_the_per_position_pipeline(self):
        rng = np.random.default_rng(11)
        N, V = 30, 24
        tl = rng.normal(0, 3, (N, V))
        dl = tl + rng.normal(0, 1, (N, V))
        for k, P in ((0, 0.8), (8, 0.6), (0, 0.3)):
            r = mdsd.batch(tl, dl, temperature=0.7, n=2, scheme="iid", verifier="rrs", top_k=k,
                           top_p=P)
            for i in range(N):
                p = ref_truncate(mdsd.softmax(tl[i], 0.7), k, P)
                q = ref_truncate(mdsd.softmax(dl[i], 0.7), k, P)
                self.assertLessEqual(abs(r.alpha_star[i] - mdsd.alpha_star(p, q, n=2)), 1e-12)
                self.assertLessEqual(abs(r.rate[i] - mdsd.verifier_rate("rrs", p, q, n=2)[0]), 1e-12)

    def test_table_writes_the_cli_csv_with_top_p(self):
        dump = os.path.join(ROOT, "data", "kjv-ngram.h5")
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.csv"), os.path.join(tmp, "b.csv")
            mdsd.table(dump, a, temperatures=[0.7], draft_counts=[2], schemes=["iid"],
                       verifiers=["rrs"], rows=(0, 80), top_p=0.9)
            out = subprocess.run([mdsd_bin(), "table", dump, "-o", b, "-t", "0.7", "-d", "2", "-s",
                                  "iid", "-v", "rrs", "--positions", "0:80", "--top-p", "0.9"],
                                 capture_output=True, text=True, cwd=ROOT, timeout=300)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(a) as fa, open(b) as fb:
                self.assertEqual(fa.read(), fb.read())
            with open(b + ".provenance.json") as f:
                self.assertEqual(json.load(f)["top_p"], 0.9)
            with open(a) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual({r["method"] for r in rows}, {"bound", "rrs"})


class SameAsTheCli(unittest.TestCase):
    """mdsd.truncate(mdsd.softmax(l, T), k, P) against `mdsd dist --logits ... --json` (the
    CLI's softmax, validation and cut), and the refusals in the CLI's words."""

    def cli(self, *args):
        return subprocess.run([mdsd_bin(), "dist", *map(str, args)], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)

    def test_the_values_are_the_cli_values(self):
        rng = np.random.default_rng(29)
        cuts = 0
        for t in range(48):
            V = int(rng.integers(2, 40))
            T = [1.0, 0.7, 0.05][t % 3]
            scale = [2.0, 40.0][t % 2]  # wide gaps at T = 0.05: subnormal masses
            lp, lq = rng.normal(0, scale, V), rng.normal(0, scale, V)
            if t % 4 == 3:  # ties: repeated logits
                lp, lq = np.round(lp / scale) * scale, np.round(lq / scale) * scale
            k = int(rng.integers(0, V + 1)) if t % 2 else 0
            p = mdsd.softmax(lp, T)
            P = [float(rng.uniform(0.05, 0.999)), 1e-300, 1.0,
                 pick_P(rng, mdsd.truncate(p, top_k=k))][t % 4]
            out = self.cli("--logits", "-p", ",".join(map(repr, lp.tolist())), "-q",
                           ",".join(map(repr, lq.tolist())), "-T", repr(T), "--top-k", k,
                           "--top-p", repr(P), "--json")
            self.assertEqual(out.returncode, 0, out.stderr)
            js = json.loads(out.stdout)
            for name, logits in (("p", lp), ("q", lq)):
                got = mdsd.truncate(mdsd.softmax(logits, T), top_k=k, top_p=P)
                want = np.array(js[name], dtype=float)
                self.assertEqual(list(got > 0), list(want > 0), f"instance {t}, {name}: kept sets")
                self.assertLessEqual(float(np.max(np.abs(got - want))), 1e-12, f"instance {t}, {name}")
                cuts += int(np.count_nonzero(got)) < int(np.count_nonzero(mdsd.softmax(logits, T)))
        self.assertGreater(cuts, 40)  # the cut is exercised, not only P = 1

    def test_refusals_are_in_the_cli_words(self):
        words = re.compile(r"^(?:mdsd dist: --top-p|top_p): (.*?) (is not .*)$", re.M)
        for arg in ("0", "-0", "-0.1", "1.5", "1.0000001", "inf", "nan", "abc", "0.5x"):
            out = self.cli("-p", "0.5,0.5", "--top-p", arg)
            self.assertEqual(out.returncode, 2, arg)
            cli = words.search(out.stderr)
            self.assertIsNotNone(cli, out.stderr)
            try:
                value = float(arg)
            except ValueError:
                value = arg
            for call in (lambda: mdsd.truncate([0.5, 0.5], top_p=value),
                         lambda: mdsd.batch(np.zeros((1, 2)), np.zeros((1, 2)), top_p=value)):
                with self.assertRaises(mdsd.MdsdError, msg=arg) as cm:
                    call()
                py = words.search(str(cm.exception))
                self.assertIsNotNone(py, str(cm.exception))
                self.assertEqual(py.group(2), cli.group(2), arg)
                if arg in ("1.5", "inf", "nan", "abc", "0.5x", "-0.1"):
                    self.assertEqual(py.group(1), cli.group(1), arg)


if __name__ == "__main__":
    unittest.main()
