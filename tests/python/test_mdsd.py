"""The Python package mdsd (src/python/mdsd) against the CLI and against independent
references: alpha* and verifier rates to 1e-12 of `mdsd bound/accept --json`, verify()
and the samplers by fixed-seed frequency tests (bounds from the sample size), batch
evaluation against per-position calls and `mdsd table`, the dump writer/reader/validator,
and errors as exceptions carrying the library's message. Run by tests/test_api.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd`."""

import csv
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import mdsd
from support import ROOT, mdsd_bin, mdsd_cli as cli, csvlist


def random_pair(rng, V, hard=False):
    if hard:  # low temperature, wide gaps: subnormal masses
        lp, lq = rng.normal(0, 40, V), rng.normal(0, 40, V)
        return mdsd.softmax(lp, 0.05), mdsd.softmax(lq, 0.05)
    p, q = rng.dirichlet(np.full(V, 0.5)), rng.dirichlet(np.full(V, 0.5))
    return p, q


class AgreesWithCli(unittest.TestCase):
    def setUp(self):
        if mdsd_bin() is None:
            self.fail("MDSD_BIN is not set to the mdsd binary")

    def test_alpha_star_every_scheme_and_method(self):
        rng = np.random.default_rng(7)
        cases = [("iid", 2, "auto"), ("iid", 3, "sort"), ("wor", 3, "auto"), ("greedy", 3, "auto"),
                 ("hub", 2, "auto"), ("cps", 2, "auto"), ("iid", 2, "k2"), ("wor", 2, "brute"),
                 ("iid", 2, "lp-full"), ("wor", 2, "lp-reduced"), ("wor", 3, "maxflow")]
        for i, (scheme, n, method) in enumerate(cases):
            p, q = random_pair(rng, 6, hard=scheme == "iid" and i % 2 == 0)
            got = mdsd.alpha_star(p, q, n=n, scheme=scheme, method=method)
            want = json.loads(cli("bound", "-p", csvlist(p), "-q", csvlist(q), "-n", n,
                                  "--scheme", scheme, "--method", method, "--json"))["alpha"]
            self.assertLessEqual(abs(got - want), 1e-12, (scheme, n, method, got, want))

    def test_verifier_rates(self):
        rng = np.random.default_rng(8)
        for verifier, n in (("rrs", 3), ("rrsw", 2), ("kseq", 2), ("greedy", 3), ("spechub", 2),
                            ("sd", 1)):
            p, q = random_pair(rng, 7)
            alpha, per = mdsd.verifier_rate(verifier, p, q, n=n)
            want = json.loads(cli("accept", "-p", csvlist(p), "-q", csvlist(q), "-n", n, "-v",
                                  verifier, "--json"))
            self.assertLessEqual(abs(alpha - want["alpha"]), 1e-12, verifier)
            np.testing.assert_allclose(per, want["per_draft"], rtol=0, atol=1e-12)
            self.assertAlmostEqual(per.sum(), alpha, delta=1e-12)

    def test_alpha_star_bounds_every_verifier(self):
        rng = np.random.default_rng(9)
        p, q = random_pair(rng, 8)
        best = mdsd.alpha_star(p, q, n=2, scheme="iid", method="lp-full")
        for verifier in ("rrs", "kseq"):
            self.assertLessEqual(mdsd.verifier_rate(verifier, p, q, n=2)[0], best + 1e-7)


class VerifyAndSample(unittest.TestCase):
    def test_verify_output_follows_p(self):
        # 20,000 decoding steps: drafts sampled, verify() picks y. y's frequencies must
        # match p within 5 standard errors; the acceptance frequency its exact rate.
        p = np.array([0.45, 0.25, 0.15, 0.1, 0.05])
        q = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
        T = 20000
        for name, scheme in (("rrs", "iid"), ("rrsw", "wor"), ("greedy", "greedy")):
            v = mdsd.Verifier(name, n=3, scheme=scheme)
            rng = mdsd.Rng(11)
            sampler = mdsd.Sampler(q, 3, scheme)
            prep = v.prepare(p, q)
            counts, hits = np.zeros(5), 0
            for _ in range(T):
                y = prep.verify(sampler.draw(rng), rng)
                counts[y] += 1
                hits += prep.last_accepted >= 0
            se = np.sqrt(p * (1 - p) / T)
            self.assertTrue(np.all(np.abs(counts / T - p) < 5 * se), (name, counts / T))
            alpha = v.rate(p, q)[0]
            self.assertLess(abs(hits / T - alpha), 5 * np.sqrt(alpha * (1 - alpha) / T), name)
            # the one-call form used inside a decoding loop
            d = sampler.draw(rng)
            y = v.verify(p, q, d, rng)
            self.assertTrue(0 <= y < 5)
            self.assertTrue(v.last_accepted == -1 or d[v.last_accepted] == y)

    def test_planted_error_is_caught(self):
        # The frequency test above fails for a wrong target: verify with p' != p.
        p = np.array([0.45, 0.25, 0.15, 0.1, 0.05])
        wrong = np.array([0.25, 0.45, 0.15, 0.1, 0.05])
        q = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
        rng, prep, s = mdsd.Rng(11), mdsd.Verifier("rrs", n=3).prepare(wrong, q), mdsd.Sampler(q, 3)
        counts = np.bincount([prep.verify(s.draw(rng), rng) for _ in range(20000)], minlength=5)
        self.assertFalse(np.all(np.abs(counts / 20000 - p) < 5 * np.sqrt(p * (1 - p) / 20000)))

    def test_sampler_schemes(self):
        q = np.array([0.4, 0.3, 0.2, 0.1])
        rng = mdsd.Rng(3)
        d = mdsd.sample_drafts(q, 3, "wor", rng=rng, size=5000)
        self.assertEqual(d.shape, (5000, 3))
        self.assertTrue(all(len(set(row)) == 3 for row in d))
        first = np.bincount(d[:, 0], minlength=4) / 5000
        self.assertTrue(np.all(np.abs(first - q) < 5 * np.sqrt(q * (1 - q) / 5000)))
        g = mdsd.sample_drafts(q, 3, "greedy", rng=rng, size=100)
        self.assertTrue(np.all(g[:, 0] == 0) and np.all(g[:, 1] == 1))
        self.assertTrue(np.all(g[:, 2] >= 2))

    def test_rng_is_reproducible(self):
        q = np.array([0.4, 0.3, 0.2, 0.1])
        a = mdsd.sample_drafts(q, 2, rng=mdsd.Rng(5), size=50)
        b = mdsd.sample_drafts(q, 2, rng=mdsd.Rng(5), size=50)
        np.testing.assert_array_equal(a, b)

    def test_monte_carlo_agrees_with_exact(self):
        p = np.array([0.5, 0.3, 0.2]); q = np.array([0.2, 0.3, 0.5])
        mc = mdsd.monte_carlo("rrs", p, q, n=2, trials=200000, seed=4, histogram=True)
        exact = mdsd.verifier_rate("rrs", p, q, n=2)[0]
        self.assertLess(abs(mc.alpha - exact), 5 * mc.se)
        self.assertEqual(int(mc.histogram.sum()), 200000)
        again = mdsd.monte_carlo("rrs", p, q, n=2, trials=200000, seed=4, threads=1)
        self.assertEqual(again.alpha, mc.alpha)  # not a function of the thread count

    def test_custom_and_multi_schemes(self):
        p = np.array([0.5, 0.3, 0.2])
        tokens = np.array([[0, 1], [1, 2], [2, 0]]); prob = np.array([0.5, 0.3, 0.2])
        a = mdsd.alpha_star(p, scheme="custom", joint=(tokens, prob), method="brute")
        b = mdsd.alpha_star(p, scheme="custom", joint=(tokens, prob), method="lp-full")
        self.assertAlmostEqual(a, b, delta=1e-7)
        q2 = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
        m1 = mdsd.alpha_star(p, q2, n=2, scheme="multi", method="brute")
        m2 = mdsd.alpha_star(p, q2, n=2, scheme="multi", method="lp-reduced")
        self.assertAlmostEqual(m1, m2, delta=1e-7)
        # maxflow (and auto, which runs it for multi and custom) against brute, 1e-9
        for method in ("maxflow", "auto"):  # auto is brute at V <= 10
            r = mdsd.alpha_star_result(p, q2, n=2, scheme="multi", method=method, want_subset=True)
            self.assertEqual(r.method, "maxflow" if method == "maxflow" else "brute")
            self.assertLessEqual(abs(r.alpha - m1), 1e-9)
            self.assertIsNotNone(r.subset)
            c = mdsd.alpha_star(p, scheme="custom", joint=(tokens, prob), method=method)
            self.assertLessEqual(abs(c - a), 1e-9)


class Batch(unittest.TestCase):
    def test_batch_equals_per_position_calls(self):
        rng = np.random.default_rng(5)
        N, V = 40, 50
        t = rng.normal(0, 3, (N, V)).astype(np.float32)
        d = rng.normal(0, 3, (N, V)).astype(np.float32)
        for kw in ({"temperature": 0.7}, {"temperature": 1.0, "top_k": 10, "top_p": 0.9}):
            r = mdsd.batch(t, d, n=3, scheme="iid", verifier="rrs", threads=2, **kw)
            for i in range(0, N, 7):
                p = mdsd.softmax(t[i].astype(np.float64), kw["temperature"])
                q = mdsd.softmax(d[i].astype(np.float64), kw["temperature"])
                if "top_k" in kw:
                    continue  # truncation is covered by the table comparison below
                self.assertLessEqual(abs(r.alpha_star[i] - mdsd.alpha_star(p, q, n=3)), 1e-12)
                self.assertLessEqual(abs(r.rate[i] - mdsd.verifier_rate("rrs", p, q, n=3)[0]), 1e-12)
            self.assertTrue(r.exact.all())
            one = mdsd.batch(t, d, n=3, scheme="iid", verifier="rrs", threads=1, **kw)
            np.testing.assert_array_equal(one.alpha_star, r.alpha_star)  # thread count
            np.testing.assert_array_equal(one.per_draft, r.per_draft)

    def test_batch_matches_mdsd_table_on_the_shipped_dump(self):
        dump = os.path.join(ROOT, "data", "kjv-ngram.h5")
        with mdsd.DumpReader(dump) as r:
            rows = min(r.N, 200)
            t = r.logits("target", 0, rows)
            d = r.logits(r.draft_names[0], 0, rows)
            _, sid, _ = r.rows(0, rows)
        got = mdsd.batch(t, d, temperature=0.7, n=3, scheme="iid", verifier="rrs", top_k=50)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.csv")
            cli("table", dump, "-o", out, "-t", "0.7", "-d", "3", "-s", "iid", "-v", "rrs",
                "--positions", f"0:{rows}", "--top-k", "50", "--draft-model", r.draft_names[0])
            with open(out) as f:
                table = list(csv.DictReader(f))
        # The CSV prints 10 significant digits: agreement to its last digit.
        by = {row["method"]: float(row["alpha"]) for row in table}
        self.assertLessEqual(abs(got.alpha_star.mean() - by["bound"]), 1e-9, by)
        self.assertLessEqual(abs(got.rate.mean() - by["rrs"]), 1e-9, by)

    def test_table_job_writes_the_cli_csv(self):
        dump = os.path.join(ROOT, "data", "kjv-ngram.h5")
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.csv"), os.path.join(tmp, "b.csv")
            mdsd.table(dump, a, temperatures=[0.5, 1.0], draft_counts=[2, 3],
                       schemes=["iid", "wor"], verifiers=["rrs"], rows=(0, 60), top_k=30)
            cli("table", dump, "-o", b, "-t", "0.5,1", "-d", "2,3", "-s", "iid,wor", "-v", "rrs",
                "--positions", "0:60", "--top-k", "30")
            with open(a) as fa, open(b) as fb:
                self.assertEqual(fa.read(), fb.read())
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.table("/nonexistent.h5", a)
            self.assertIn("/nonexistent.h5", str(cm.exception))

    def test_block_job_and_merge_write_the_cli_bytes(self):
        """mdsd.block on the shipped tree dump = `mdsd block` (CSV, Markdown, LaTeX), and
        mdsd.merge of CLI shards = the unsharded CSV; errors name the input."""
        trees = os.path.join(ROOT, "data", "kjv-trees.h5")
        with tempfile.TemporaryDirectory() as tmp:
            j = lambda name: os.path.join(tmp, name)
            mdsd.block(trees, j("a.csv"), verifiers=["rrs", "kseq"], sequences=[1, 4],
                       costs=[0, 0.05], markdown=j("a.md"), latex=j("a.tex"))
            cli("block", trees, "-o", j("b.csv"), "--verifiers", "rrs,kseq", "--sequences", "1,4",
                "--cost", "0,0.05", "--markdown", j("b.md"), "--latex", j("b.tex"))
            for ext in ("csv", "md", "tex"):
                with open(j("a." + ext)) as fa, open(j("b." + ext)) as fb:
                    self.assertEqual(fa.read(), fb.read(), ext)
            for i in (1, 2):
                cli("block", trees, "-o", j("s%d" % i), "--verifiers", "rrs,kseq",
                    "--sequences", "1,4", "--cost", "0,0.05", "--shard", "%d/2" % i)
            mdsd.merge([j("s2"), j("s1")], j("m.csv"))
            with open(j("m.csv")) as fa, open(j("b.csv")) as fb:
                self.assertEqual(fa.read(), fb.read())
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.block(trees, j("c.csv"), verifiers=["nosuch"])
            self.assertIn("nosuch", str(cm.exception))
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.merge([j("s1")], j("c.csv"))
            self.assertIn("shard 2/2 is missing", str(cm.exception))
            self.assertFalse(os.path.exists(j("c.csv")))

    def test_batch_errors_name_the_row(self):
        t = np.zeros((3, 4), np.float32); d = np.zeros((3, 4), np.float32)
        t[2, 1] = np.nan
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.batch(t, d, n=2)
        self.assertIn("row 2", str(cm.exception))
        self.assertIn("NaN", str(cm.exception))


class Dumps(unittest.TestCase):
    def write(self, path, position=(0, 1, 2, 0, 1)):
        rng = np.random.default_rng(1)
        t = rng.normal(size=(5, 6)).astype(np.float32)
        d = rng.normal(size=(5, 6)).astype(np.float32)
        with mdsd.DumpWriter(path, 6, ["small"], dtype="float16", creator="test",
                             dataset="unit", tokenizer="none", target_model="big") as w:
            w.write(t, [d], [1, 2, 3, 4, 5], [0, 0, 0, 1, 1], list(position))
        return t, d

    def test_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.h5")
            t, d = self.write(path)
            mdsd.validate_dump(path)
            with mdsd.DumpReader(path) as r:
                self.assertEqual((r.N, r.V, r.n_samples, r.draft_names, r.dtype),
                                 (5, 6, 2, ["small"], "float16"))
                np.testing.assert_array_equal(r.logits(mdsd.dump.TARGET),
                                              t.astype(np.float16).astype(np.float32))
                np.testing.assert_array_equal(r.logits("small"),
                                              d.astype(np.float16).astype(np.float32))
                np.testing.assert_array_equal(r.rows()[2], [0, 1, 2, 0, 1])

    def test_nothing_written_on_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.h5")
            with self.assertRaises(mdsd.MdsdError) as cm:
                with mdsd.DumpWriter(path, 3, ["s"]) as w:
                    w.write(np.array([[0, np.inf, 0]], np.float32), [np.zeros((1, 3), np.float32)],
                            [0], [0], [0])
            self.assertIn("inf", str(cm.exception))
            self.assertEqual(os.listdir(tmp), [])

    def test_validator_names_the_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.h5")
            self.write(path, position=(0, 2, 1, 0, 1))
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.validate_dump(path)
            self.assertIn("row 2", str(cm.exception))
            self.assertEqual(cm.exception.code_name, "EFORMAT")


class Errors(unittest.TestCase):
    def test_library_message_and_code(self):
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.alpha_star([0.5, 0.6], [0.5, 0.5], n=2)
        self.assertEqual(cm.exception.code_name, "EINVAL")
        self.assertIn("sum to 1.1", str(cm.exception))
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.alpha_star([0.5, 0.5], [0.5, 0.5], n=3, scheme="hub")
        self.assertIn("hub", str(cm.exception))
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.verifier_rate("kseq", [0.5, 0.5], [0.5, 0.5], n=2, scheme="wor")
        self.assertEqual(cm.exception.code_name, "EUNSUPPORTED")
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.DumpReader("/nonexistent/x.h5")
        self.assertIn("/nonexistent/x.h5", str(cm.exception))
        with self.assertRaises(mdsd.MdsdError):
            mdsd.Verifier("rrs", n=2).prepare([0.5, 0.5], [0.5, 0.5]).verify([0, 7], mdsd.Rng(1))

    def test_inputs_are_not_modified_and_not_copied(self):
        p = np.array([0.5, 0.3, 0.2]); q = np.array([0.2, 0.3, 0.5])
        before = p.copy()
        mdsd.alpha_star(p, q, n=2)
        np.testing.assert_array_equal(p, before)
        self.assertIs(np.ascontiguousarray(p, dtype=np.float64), p)


def cli_error(*args):
    """The stderr of a refused command (exit 2, a usage error)."""
    out = subprocess.run([mdsd_bin(), *map(str, args)], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 2, (args, out.returncode, out.stderr)
    return out.stderr


class StrictIntegers(unittest.TestCase):
    """Every integer handed to C is refused when negative, not integral or out of range,
    with the command line's words (issue 25, case 8: 2**64 + 2 was n = 2, 2.7 was 2, a
    token 2**32 + 1 or 1.9 was token 1, Rng(2**64 + 1) was Rng(1), top_k=-1 ran)."""

    P = np.array([0.5, 0.3, 0.2])
    Q = np.array([0.2, 0.3, 0.5])

    def refused(self, fn, *words):
        with self.assertRaises(mdsd.MdsdError) as cm:
            fn()
        for w in words:
            self.assertIn(w, str(cm.exception))
        return str(cm.exception)

    def test_same_words_as_the_cli(self):
        p, q = "0.5,0.3,0.2", "0.2,0.3,0.5"
        for value, words in (("-1", "must be a non-negative integer"),
                             ("2.7", "is not a non-negative integer"),
                             (str(2**64 + 2), "is out of range (at most 18446744073709551615)")):
            err = cli_error("bound", "-p", p, "-q", q, "-n", value, "-s", "iid")
            self.assertIn(f"'{value}' {words}", err)
            py = self.refused(lambda: mdsd.alpha_star(self.P, self.Q, n=eval(value)), words)
            self.assertIn(f"n: '{value}' {words}", py)

    def test_issue_cases(self):
        P, Q = self.P, self.Q
        self.refused(lambda: mdsd.alpha_star(P, Q, 2**64 + 2), "out of range")
        self.refused(lambda: mdsd.alpha_star(P, Q, 2.7), "not a non-negative integer")
        self.refused(lambda: mdsd.alpha_star(P, Q, True), "not a non-negative integer")
        for tok in (2**32 + 1, 1.9, -1):
            joint = (np.array([[tok, 0]], dtype=object), np.array([1.0]))
            self.refused(lambda: mdsd.alpha_star(P, None, None, scheme="custom", joint=joint),
                         "custom joint tokens[0]")
            self.refused(lambda: mdsd.Verifier("rrs", n=2).verify(P, Q, [tok, 0], mdsd.Rng(1)),
                         "drafts[0]")
        self.refused(lambda: mdsd.Rng(2**64 + 1), "seed", "out of range")
        self.refused(lambda: mdsd.Rng(1).seed(-3), "seed", "must be a non-negative integer")
        t = np.zeros((2, 3), dtype=np.float32)
        self.refused(lambda: mdsd.batch(t, t, top_k=-1), "top_k", "must be a non-negative integer")
        self.refused(lambda: mdsd.batch(t, t, seed=1.5), "seed")
        self.refused(lambda: mdsd.monte_carlo("rrs", P, Q, n=2, trials=-5), "trials")
        self.refused(lambda: mdsd.monte_carlo("rrs", P, Q, n=2, threads=2**31), "threads")
        self.refused(lambda: mdsd.table("x.h5", "o.csv", draft_counts=(2, -1)), "draft_counts[1]")
        self.refused(lambda: mdsd.table("x.h5", "o.csv", rows=(0, 2.5)), "rows[1]")

    def test_exact_integers_still_accepted(self):
        want = mdsd.alpha_star(self.P, self.Q, n=2)
        for n in (2, np.int64(2), np.uint8(2), 2.0):
            self.assertEqual(mdsd.alpha_star(self.P, self.Q, n=n), want)
        joint = (np.array([[0, 1], [2, 2]], dtype=np.int64), np.array([0.5, 0.5]))
        a = mdsd.alpha_star(self.P, None, None, scheme="custom", joint=joint)
        b = mdsd.alpha_star(self.P, None, None, scheme="custom",
                            joint=(joint[0].astype(float), joint[1]))
        self.assertEqual(a, b)
        self.assertEqual(mdsd.Rng(2**64 - 1).uniform(), mdsd.Rng(2**64 - 1).uniform())


class StrictNames(unittest.TestCase):
    """File names and text handed to C as the OS spells them: a NUL byte cut the name short
    in C (table(["d.h5\\0x"], "r.csv\\0d.h5") read d.h5 and wrote r.csv), a bytes path
    became "b'x.lp'" (str(b"x.lp")); a NaN max_paths disabled the rrsw guard (the CLI's
    --max-paths refuses it)."""

    def test_nul_bytes_refused(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.csv")
            for fn in (lambda: mdsd.table(["x.h5\0y"], out),
                       lambda: mdsd.table(["x.h5"], out + "\0x.h5"),
                       lambda: mdsd.block([b"t.h5\0"], out),
                       lambda: mdsd.merge(["s1\0", "s2"], out),
                       lambda: mdsd.lp_export(out + "\0.lp", [0.5, 0.5], [0.5, 0.5], 2),
                       lambda: mdsd.DumpReader("x.h5\0"),
                       lambda: mdsd.validate_dump("x.h5\0"),
                       lambda: mdsd.DumpWriter(out + "\0.h5", 4, ["d"]),
                       lambda: mdsd.DumpWriter(out + ".h5", 4, ["d\0e"])):
                with self.assertRaises(mdsd.MdsdError) as cm:
                    fn()
                self.assertIn("contains a NUL byte", str(cm.exception))
            self.assertEqual(os.listdir(d), [])

    def test_bytes_and_pathlike_names(self):
        import pathlib
        with tempfile.TemporaryDirectory() as d:
            for name in (os.fsencode(os.path.join(d, "a.lp")), pathlib.Path(d) / "b.lp"):
                mdsd.lp_export(name, [0.5, 0.5], [0.9, 0.1], 2)
            self.assertEqual(sorted(os.listdir(d)), ["a.lp", "b.lp"])

    def test_max_paths_nan_refused(self):
        for bad in (float("nan"), -1.0, 0.5):
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.verifier_rate("rrsw", [0.5, 0.5], [0.9, 0.1], 2, max_paths=bad)
            self.assertIn("max_paths", str(cm.exception))
        self.assertEqual(mdsd.verifier_rate("rrsw", [0.5, 0.5], [0.9, 0.1], 2, max_paths=1e7)[0],
                         mdsd.verifier_rate("rrsw", [0.5, 0.5], [0.9, 0.1], 2)[0])


if __name__ == "__main__":
    unittest.main()
