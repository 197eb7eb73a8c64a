"""The package as numpy and torch users write it (issue 40): float32 and bfloat16 softmax
rows within a tolerance that scales with their dtype and V (a row off by 1e-3 still
refused), per-position functions over leading axes [..., V], counts from numpy and torch
scalars, one name where a list is expected, a numpy Generator or an int seed for rng=,
MdsdError a ValueError, VERIFIERS without the audit variants, one return type for both
verify paths, list-valued columns as arrays. Run by tests/test_package.c."""

import os
import tempfile
import unittest

import numpy as np

import mdsd
from mdsd._lib import lib
from support import ROOT

TREES = os.path.join(ROOT, "data", "kjv-trees.h5")
P, Q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])

try:
    import torch
except ImportError:  # torch is optional: the numpy cases still run
    torch = None


def softmax32(z):
    """A float32 softmax row as numpy computes it (float32 throughout)."""
    z = np.asarray(z, dtype=np.float32)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Tolerance(unittest.TestCase):
    V = 152064

    def test_float32_rows_off_by_their_rounding_are_taken(self):
        rng = np.random.default_rng(1)
        p, q = softmax32(rng.normal(size=self.V) * 3), softmax32(rng.normal(size=self.V) * 3)
        # off by 2e-5 (what torch's float32 softmax measured at this V): past the
        # library's 1e-6, within float32's tolerance for V = 152,064 (1.9e-4)
        p_off = (p * np.float32(1 + 2e-5)).astype(np.float32)
        self.assertGreater(abs(p_off.sum(dtype=np.float64) - 1), 1e-5)
        got = mdsd.alpha_star(p_off, q, n=2)
        p64 = p_off.astype(np.float64)
        want = mdsd.alpha_star(p64 / p64.sum(), q, n=2)
        self.assertAlmostEqual(got, want, delta=1e-12)
        with tempfile.TemporaryDirectory() as work:  # every function taking p and q
            mdsd.lp_export(os.path.join(work, "x.dat"), p_off[:8] / p_off[:8].sum(),
                           q[:8] / q[:8].sum(), n=2)
            small = (p_off[:1000] / p_off[:1000].sum(dtype=np.float32)).astype(np.float32)
            mdsd.lp_export(os.path.join(work, "y.dat"), small * np.float32(1 + 8e-6),
                           small, n=2)
        mdsd.Sampler(p_off, 2).draw(1)
        mdsd.Verifier("rrs", n=2).prepare(p_off, q).verify([0, 1], 1)
        self.assertEqual(mdsd.verifier_rate("rrs", p_off, q, n=2)[0],
                         mdsd.verifier_rate("rrs", p_off.astype(np.float64) /
                                            p_off.sum(dtype=np.float64), q, n=2)[0])

    def test_a_row_off_by_1e_3_is_refused(self):
        rng = np.random.default_rng(2)
        p = softmax32(rng.normal(size=self.V))
        for bad, dtype in ((p * np.float32(1.001), "float32"),
                           (p.astype(np.float64) * 1.001, "float64"),
                           (np.array([0.5, 0.3, 0.201]), "float64")):
            with self.subTest(dtype=dtype, V=bad.shape[-1]):
                with self.assertRaises(mdsd.MdsdError) as e:
                    mdsd.alpha_star(bad, bad, n=2)
                self.assertIn("not 1 (tolerance", str(e.exception))
                self.assertIn(dtype, str(e.exception))
        # a float64 row is held to the library's own 1e-6
        with self.assertRaises(mdsd.MdsdError):
            mdsd.alpha_star(np.array([0.5, 0.3, 0.2 + 3e-6]), Q, n=2)

    def test_the_tolerance_is_documented_and_scales(self):
        from mdsd import _inputs
        self.assertEqual(_inputs.prob_tolerance("float64", self.V), 1e-6)
        t32 = _inputs.prob_tolerance("float32", self.V)
        self.assertTrue(1e-5 < t32 < 1e-3, t32)
        self.assertLess(_inputs.prob_tolerance("float32", 1000), t32)
        self.assertGreater(_inputs.prob_tolerance("bfloat16", self.V), 2**-9)
        self.assertIn("152,064", _inputs.prob_tolerance.__doc__)

    @unittest.skipIf(torch is None, "no torch")
    def test_torch_softmax_rows(self):
        torch.manual_seed(0)
        z = torch.randn(2, 32000) * 4
        for dtype in (torch.float32, torch.bfloat16):
            with self.subTest(dtype=dtype):
                pt = torch.softmax(z.to(dtype), -1)
                got = mdsd.alpha_star(pt[0], pt[1], n=2)
                p = pt.double().numpy()
                p = p / p.sum(-1, keepdims=True)
                self.assertAlmostEqual(got, mdsd.alpha_star(p[0], p[1], n=2), delta=1e-12)
        big = torch.softmax(torch.randn(4, self.V) * 3, -1)
        self.assertEqual(mdsd.alpha_star(big, big.flip(0), n=2).shape, (4,))


class LeadingAxes(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.p = mdsd.softmax(rng.normal(size=(2, 3, 7)))
        self.q = mdsd.softmax(rng.normal(size=(2, 3, 7)))

    def test_alpha_star_and_rates_per_position(self):
        a = mdsd.alpha_star(self.p, self.q, n=3)
        self.assertEqual(a.shape, (2, 3))
        r, per = mdsd.verifier_rate("rrs", self.p, self.q, n=3)
        self.assertEqual((r.shape, per.shape), ((2, 3), (2, 3, 3)))
        res = mdsd.alpha_star_result(self.p, self.q, n=3)
        self.assertEqual(res.method.shape, (2, 3))
        for i in np.ndindex(2, 3):
            self.assertEqual(a[i], mdsd.alpha_star(self.p[i], self.q[i], n=3))
            self.assertEqual(r[i], mdsd.verifier_rate("rrs", self.p[i], self.q[i], n=3)[0])
        # q broadcast over p's positions
        b = mdsd.alpha_star(self.p, self.q[0, 0], n=2)
        self.assertEqual(b[1, 2], mdsd.alpha_star(self.p[1, 2], self.q[0, 0], n=2))
        # one position: a float, as before
        self.assertIsInstance(mdsd.alpha_star(P, Q, n=2), float)

    def test_softmax_truncate_monte_carlo(self):
        z = np.random.default_rng(4).normal(size=(2, 3, 7))
        s = mdsd.softmax(z, 0.7)
        self.assertEqual(s.shape, z.shape)
        np.testing.assert_array_equal(s[1, 2], mdsd.softmax(z[1, 2], 0.7))
        t = mdsd.truncate(self.p, top_k=2)
        self.assertEqual(t.shape, self.p.shape)
        np.testing.assert_array_equal(t[0, 1], mdsd.truncate(self.p[0, 1], top_k=2))
        mc = mdsd.monte_carlo("rrs", self.p, self.q, n=2, trials=500, position=10)
        self.assertEqual((mc.alpha.shape, mc.per_draft.shape), ((2, 3), (2, 3, 2)))
        one = mdsd.monte_carlo("rrs", self.p[1, 0], self.q[1, 0], n=2, trials=500, position=13)
        self.assertEqual(mc.alpha[1, 0], one.alpha)  # position k on position + k's stream

    def test_verify_and_sample_drafts_per_position(self):
        d = mdsd.sample_drafts(self.q, 2, rng=5)
        self.assertEqual((d.shape, d.dtype), ((2, 3, 2), np.int32))
        self.assertEqual(mdsd.sample_drafts(self.q, 2, rng=5, size=4).shape, (2, 3, 4, 2))
        rng = mdsd.Rng(5)  # the positions in C order on one stream
        want = [mdsd.sample_drafts(self.q[i], 2, rng=rng) for i in np.ndindex(2, 3)]
        np.testing.assert_array_equal(d.reshape(-1, 2), want)
        v = mdsd.Verifier("rrs", n=2)
        y = v.verify(self.p, self.q, d, 8)
        acc = v.last_accepted
        self.assertEqual((y.shape, acc.shape), ((2, 3), (2, 3)))
        rng, w = mdsd.Rng(8), mdsd.Verifier("rrs", n=2)
        for i in np.ndindex(2, 3):
            self.assertEqual(w.verify(self.p[i], self.q[i], d[i], rng), y[i])
            self.assertEqual(w.last_accepted, acc[i])
        with self.assertRaises(mdsd.MdsdError):
            v.verify(self.p, self.q, d[:1], 8)


class Conventions(unittest.TestCase):
    def test_counts_from_numpy_and_torch_scalars(self):
        want = mdsd.alpha_star(P, Q, n=3)
        ns = [np.int64(3), np.array(3), np.uint8(3)]
        if torch is not None:
            ns.append(torch.tensor(3))
        for n in ns:
            with self.subTest(n=repr(n)):
                self.assertEqual(mdsd.alpha_star(P, Q, n=n), want)
                self.assertEqual(mdsd.monte_carlo("rrs", P, Q, n=n, trials=n).trials, 3)
        if torch is not None:  # the block job's counts too
            toy = os.path.join(ROOT, "papers", "block", "toys", "toy3.txt")
            want_b = mdsd.block(markov=toy, verifier="rrs", sequences=2, depths=2)
            got_b = mdsd.block(markov=toy, verifier="rrs", sequences=torch.tensor(2),
                               depths=np.int64(2))
            self.assertEqual(got_b.block_efficiency, want_b.block_efficiency)
            with tempfile.TemporaryDirectory() as work:
                mdsd.block(TREES, os.path.join(work, "b.csv"), verifiers="kseq",
                           sequences=torch.tensor(2), depths=torch.tensor([1, 2]),
                           pandas=False)
        bad = [2**64 + 1, -1, 2.5, True, np.float64(2.5), np.bool_(True), "3"]
        if torch is not None:
            bad += [torch.tensor(True), torch.tensor(2.5), torch.tensor(-1), torch.tensor([3])]
        for n in bad:
            with self.subTest(n=repr(n)):
                with self.assertRaises(mdsd.MdsdError):
                    mdsd.alpha_star(P, Q, n=n)

    def test_errors_are_value_and_type_errors(self):
        self.assertTrue(issubclass(mdsd.MdsdError, ValueError))
        with self.assertRaises(ValueError):
            mdsd.alpha_star(P, Q, n=-1)
        with self.assertRaises(TypeError) as e:
            mdsd.alpha_star(P, Q, n="3")
        self.assertIsInstance(e.exception, mdsd.MdsdError)

    def test_one_name_where_a_list_is_expected(self):
        rng = np.random.default_rng(5)
        t, d = rng.normal(size=(40, 6)), rng.normal(size=(40, 6))
        kw = dict(samples=np.repeat(np.arange(4), 10), pandas=False)
        one = mdsd.evaluate(t, d, verifiers="rrs", **kw)
        listed = mdsd.evaluate(t, d, verifiers=["rrs"], **kw)
        np.testing.assert_array_equal(one["alpha"], listed["alpha"])
        self.assertIn("rrs", list(one["method"]))
        two = mdsd.evaluate(t, d, verifiers="rrs,kseq", schemes="iid", temperatures=0.7,
                            draft_counts=3, **kw)
        self.assertLessEqual({"kseq", "rrs"}, set(two["method"]))
        self.assertNotIn("r", set(two["method"]))
        self.assertEqual(set(two["n"]), {3})

    def test_rng_takes_a_generator_or_a_seed(self):
        v = mdsd.Verifier("rrs", n=2)
        for make in (lambda: np.random.default_rng(0), lambda: 7, lambda: np.int64(7),
                     lambda: mdsd.Rng(7)):
            with self.subTest(rng=repr(make())):
                y1 = v.verify(P, Q, [0, 1], make())
                y2 = v.prepare(P, Q).verify([0, 1], make())
                self.assertEqual((type(y1), y1), (type(y2), y2))
                self.assertEqual(mdsd.Sampler(Q, 2).draw(make(), 3).shape, (3, 2))
                self.assertEqual(mdsd.sample_drafts(Q, 2, rng=make()).shape, (2,))
        # the same seed, the same stream: a Generator's state decides its draws
        self.assertTrue(np.array_equal(mdsd.sample_drafts(Q, 2, rng=np.random.default_rng(9),
                                                          size=20),
                                       mdsd.sample_drafts(Q, 2, rng=np.random.default_rng(9),
                                                          size=20)))
        with self.assertRaises(TypeError) as e:
            v.verify(P, Q, [0, 1], "seed")
        self.assertIn("numpy Generator", str(e.exception))

    def test_both_verify_paths_return_the_token(self):
        v = mdsd.Verifier("rrs", n=2)
        prep = v.prepare(P, Q)
        for seed in range(20):
            y = v.verify(P, Q, [2, 1], mdsd.Rng(seed))
            z = prep.verify([2, 1], mdsd.Rng(seed))
            self.assertIs(type(y), int)
            self.assertIs(type(z), int)
            self.assertEqual((y, v.last_accepted), (z, prep.last_accepted))

    def test_verifiers_lists_valid_ones_and_the_enum_is_kept(self):
        # the valid ones are the registry's non-audit verifiers (the names themselves are the
        # registry's, tests/python/test_registry.py); none is an audit variant
        self.assertEqual(mdsd.VERIFIERS, tuple(e.name for e in mdsd.REGISTRY
                                               if e.cls == "verifier" and not e.audit))
        self.assertIn("rrs", mdsd.VERIFIERS)
        self.assertFalse(set(mdsd.VERIFIERS) & set(mdsd.AUDIT_VERIFIERS))
        every = mdsd.VERIFIERS + mdsd.AUDIT_VERIFIERS
        for i, name in enumerate(every):  # the C enum's index of each name
            self.assertEqual(lib.mdsd_verifier_name(i).decode(), name)
        self.assertEqual(mdsd.Verifier("rrs-skipdup", n=3).name, "rrs-skipdup")
        self.assertEqual(mdsd.Verifier("is-face", n=3).kind, len(mdsd.VERIFIERS))
        with self.assertRaises(mdsd.MdsdError) as e:
            mdsd.Verifier("nope")
        self.assertIn("audit variants, not for use", str(e.exception))

    def test_list_valued_columns_are_arrays(self):
        with tempfile.TemporaryDirectory() as work:
            t = mdsd.block(TREES, os.path.join(work, "b.csv"), verifiers="kseq",
                           sequences=(2,), depths=(1, 2), pandas=False)
            for col in ("per_depth", "per_depth_stderr", "per_position_acceptance_rate",
                        "per_position_acceptance_rate_stderr"):
                for i, depth in enumerate(t["depth"]):
                    with self.subTest(col=col, row=i):
                        self.assertIsInstance(t[col][i], np.ndarray)
                        self.assertEqual(t[col][i].dtype, np.float64)
                        self.assertEqual(t[col][i].shape, (depth,))
            self.assertEqual(t["widths"][0].size, 0)  # a seq policy: no widths



class Misuse(unittest.TestCase):
    """Probabilities where logits are expected, and integer arrays (issue 40, item 4):
    mdsd.batch(P, Q, n=2) on probability rows returned alpha* = [1, 1, 1]."""

    def setUp(self):
        rng = np.random.default_rng(6)
        self.zt, self.zd = rng.normal(size=(3, 50)) * 3, rng.normal(size=(3, 50)) * 3
        self.pt, self.pd = (np.exp(z) / np.exp(z).sum(-1, keepdims=True)
                            for z in (self.zt, self.zd))

    def test_probability_rows_are_refused_as_logits(self):
        calls = {"batch": lambda t, d, **kw: mdsd.batch(t, d, n=2, **kw),
                 "evaluate": lambda t, d, **kw: mdsd.evaluate(t, d, pandas=False, **kw)}
        inputs = [(self.pt, self.pd), (self.pt.astype(np.float32), self.pd.astype(np.float32))]
        if torch is not None:
            inputs.append((torch.softmax(torch.from_numpy(self.zt).float(), -1),
                           torch.softmax(torch.from_numpy(self.zd).float(), -1)))
        for name, call in calls.items():
            for t, d in inputs:
                with self.subTest(call=name, type=type(t).__name__, dtype=str(t.dtype)):
                    with self.assertRaises(mdsd.MdsdError) as e:
                        call(t, d)
                    self.assertIn("probability distribution", str(e.exception))
                    self.assertIn("allow_probabilities=True", str(e.exception))
        # the caller says they are logits: taken as given (softmax of p)
        r = mdsd.batch(self.pt, self.pd, n=2, allow_probabilities=True)
        np.testing.assert_array_equal(r.alpha_star, mdsd.batch(self.pt + 0.0, self.pd + 0.0,
                                                               n=2, allow_probabilities=True)
                                      .alpha_star)
        # their logarithms are logits: softmax(log p) = p, alpha* of p and q
        r = mdsd.batch(np.log(self.pt), np.log(self.pd), n=2)
        np.testing.assert_allclose(r.alpha_star, mdsd.alpha_star(self.pt, self.pd, n=2),
                                   rtol=1e-12)
        # logits are taken: one row of probabilities among logit rows is not refused
        mixed = self.zt.copy()
        mixed[0] = self.pt[0]
        mdsd.batch(mixed, self.zd, n=2)

    def test_integer_arrays_are_type_errors(self):
        ints = np.arange(150).reshape(3, 50) % 7
        for t in (ints, ints.astype(np.int32), ints.astype(np.uint8), ints.tolist()):
            with self.subTest(dtype=str(np.asarray(t).dtype)):
                with self.assertRaises(TypeError) as e:
                    mdsd.batch(t, self.zd, n=2)
                self.assertIn("target_logits", str(e.exception))
                with self.assertRaises(TypeError):
                    mdsd.evaluate(self.zt, t, pandas=False)
        if torch is not None:
            with self.assertRaises(TypeError):
                mdsd.batch(torch.from_numpy(ints), self.zd, n=2)



class Messages(unittest.TestCase):
    """is past its LP's guard (V = 1,200, no is_top) said "pass trials=K for Monte Carlo";
    with trials it failed the same way: the fix is is_top=S (issue 40, item 5)."""

    def setUp(self):
        rng = np.random.default_rng(7)
        self.t, self.d = rng.normal(size=(2, 1200)), rng.normal(size=(2, 1200))

    def assert_leads_to_is_top(self, call):
        with self.assertRaises(mdsd.MdsdError) as e:
            call()
        msg = str(e.exception)
        self.assertIn("is_top=S", msg)
        self.assertNotIn("trials=K", msg)
        self.assertNotIn("--", msg)  # Python's words, not the command line's

    def test_is_without_is_top_names_is_top(self):
        for trials in (0, 50):
            with self.subTest(trials=trials):
                self.assert_leads_to_is_top(lambda: mdsd.batch(self.t, self.d, n=2,
                                                               verifier="is", trials=trials))
                self.assert_leads_to_is_top(lambda: mdsd.evaluate(
                    self.t, self.d, verifiers="is", trials=trials, pandas=False))
        # is_top=S resolves it, exactly (n = 2) and by Monte Carlo (n = 3)
        r = mdsd.batch(self.t, self.d, n=2, verifier="is", is_top=50)
        self.assertTrue(r.exact.all())
        r = mdsd.batch(self.t, self.d, n=3, verifier="is", is_top=50, trials=50)
        self.assertFalse(r.exact.any())

    def test_monte_carlo_still_named_where_it_helps(self):
        with self.assertRaises(mdsd.MdsdError) as e:
            mdsd.batch(self.t, self.d, n=3, verifier="is", is_top=50)
        self.assertIn("set trials for Monte Carlo", str(e.exception))


if __name__ == "__main__":
    unittest.main()
