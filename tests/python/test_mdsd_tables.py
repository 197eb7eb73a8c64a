"""The whole job from Python (src/python/mdsd/tables.py, mdsd.block): mdsd.evaluate over
logits in memory against `mdsd table` on a dump of the same rows (every number to 1e-12,
table_check.py), against the shipped dump's own rows, with 16-bit inputs, a progress
callback and the one-sample note; tidy tables as numpy columns or a pandas DataFrame;
mdsd.block on tree dumps and Markov toys against the command line, vLLM's names included,
and its errors in Python's words. Run by tests/test_package.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd_tables`.
Planted errors this catches (each shown once): evaluate making every row its own sample
(three tests fail: the samples column off by 228 and 282, no one-sample note), the
Markov result's per-position rates set to the conditional ones."""

import json
import os
import subprocess
import sys
import tempfile
import types
import unittest
import warnings

import numpy as np

import mdsd
import table_check
from support import ROOT, mdsd_bin
from test_mdsd_inputs import FLAG, unquoted

SHIPPED = os.path.join(ROOT, "data", "kjv-ngram.h5")
TREES = os.path.join(ROOT, "data", "kjv-trees.h5")
TOY = os.path.join(ROOT, "papers", "block", "toys", "toy3.txt")


class Evaluate(unittest.TestCase):
    def setUp(self):
        self.bin = mdsd_bin()
        if self.bin is None:
            self.skipTest("no mdsd binary (MDSD_BIN)")
        self.work = tempfile.mkdtemp(prefix="mdsd-test-tables-")

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.work], check=False)

    def test_numpy_logits_match_mdsd_table(self):
        table_check.main(self.bin, self.work)

    def test_shipped_rows_match_the_dump_job(self):
        with mdsd.DumpReader(SHIPPED) as r:
            t, d = r.logits("target", 0, 300), r.logits("kn3", 0, 300)
            _, sid, pos = r.rows(0, 300)
        job = dict(temperatures=(0.7,), draft_counts=(2, 3), schemes=("iid", "wor"),
                   verifiers=("rrs", "kseq"))
        table = mdsd.evaluate(t, d, samples=sid, positions=pos, label="kjv-ngram.h5",
                              pandas=False, **job)
        out = os.path.join(self.work, "cli.csv")
        subprocess.run([self.bin, "table", SHIPPED, "-o", out, "-t", "0.7", "-d", "2,3",
                        "-s", "iid,wor", "-v", "rrs,kseq", "--draft-model", "kn3",
                        "--positions", "0:300"], check=True, capture_output=True)
        import csv
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        table_check.compare(table, rows, "kjv-ngram.h5", "kjv-ngram.h5:kn3"
                            if rows[0]["dump"].endswith(":kn3") else "kjv-ngram.h5")
        self.assertTrue(all(s > 1 for s in table["samples"]))

    def test_16_bit_inputs_progress_and_the_one_sample_note(self):
        target, drafts, samples = table_check.logits(N=120, samples=6)
        near = drafts["near"]
        base = mdsd.evaluate(target.astype(np.float16), near.astype(np.float16),
                             samples=samples, verifiers=("rrs",), pandas=False)
        calls = []
        again = mdsd.evaluate(target.astype(np.float16).astype(np.float32),
                              near.astype(np.float16).astype(np.float32), samples=samples,
                              verifiers=("rrs",), pandas=False, temperatures=(1.0,),
                              progress=lambda done, total: calls.append((done, total)))
        np.testing.assert_array_equal(base["alpha"], again["alpha"])
        self.assertEqual(calls[-1], (120, 120))
        self.assertEqual(calls, sorted(calls))
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            tb = torch.from_numpy(target).to(torch.bfloat16)
            db = torch.from_numpy(near).to(torch.bfloat16)
            viat = mdsd.evaluate(tb, db, samples=samples, verifiers=("rrs",), pandas=False)
            vian = mdsd.evaluate(tb.float().numpy(), db.float().numpy(), samples=samples,
                                 verifiers=("rrs",), pandas=False)
            np.testing.assert_array_equal(viat["alpha"], vian["alpha"])
        # one sample: i.i.d. standard errors, said, and no stars
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            one = mdsd.evaluate(target, near, verifiers=("rrs",), pandas=False)
        self.assertTrue(any("samples = 1" in str(x.message) for x in w), [str(x.message) for x in w])
        self.assertTrue((one["samples"] == 1).all())
        self.assertTrue(all(s == "" for s in one["significance"]))
        self.assertFalse(np.allclose(one["stderr"], base["stderr"]))  # the clustering matters

        def stop(done, total):
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            mdsd.evaluate(target, near, samples=samples, progress=stop)

    def test_bad_inputs_in_python_words(self):
        target, drafts, samples = table_check.logits(N=24, samples=2)
        near = drafts["near"]
        for call, expect in (
                (lambda: mdsd.evaluate(target, near[:, :10]), "shape"),
                (lambda: mdsd.evaluate(target, near, samples=samples[:5]), "samples"),
                (lambda: mdsd.evaluate(target, near, samples=np.tile([0, 1], 12)),
                 "row 2: sample 0 starts again"),
                (lambda: mdsd.evaluate(target[0], near[0]), "[N, V]"),
                (lambda: mdsd.evaluate(target, {}), "empty"),
                (lambda: mdsd.evaluate(target, near, label="a/b"), "plain name"),
                (lambda: mdsd.evaluate(target, near, verifiers=("rrs",), simulate=True),
                 "simulate=True needs trials=")):
            with self.assertRaises(mdsd.MdsdError) as cm:
                call()
            msg = str(cm.exception)
            self.assertIn(expect, msg)
            self.assertIsNone(FLAG.search(unquoted(msg)), msg)
        with self.assertRaises(TypeError):
            mdsd.evaluate(target.astype(np.complex64), near)


class TidyTables(unittest.TestCase):
    def test_numpy_columns_and_pandas(self):
        path = os.path.join(ROOT, "plots", "examples", "sweep.csv")
        t = mdsd.read_table(path, pandas=False)
        self.assertIsInstance(t, mdsd.Table)
        self.assertEqual(t["n"].dtype, np.int64)
        self.assertEqual(t["alpha"].dtype, np.float64)
        self.assertEqual(t["method"].dtype, object)
        self.assertTrue(all(len(a) == len(t) for a in t.values()))
        # with pandas present (a stand-in module here): a DataFrame of the same columns
        made = {}
        fake = types.ModuleType("pandas")
        fake.DataFrame = lambda d: made.setdefault("frame", ("DataFrame", d))
        real = sys.modules.get("pandas")
        sys.modules["pandas"] = fake
        try:
            frame = mdsd.read_table(path)
        finally:
            if real is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = real
        self.assertEqual(frame[0], "DataFrame")
        self.assertEqual(list(frame[1]), t.columns)
        np.testing.assert_array_equal(frame[1]["alpha"], t["alpha"])


class Block(unittest.TestCase):
    def setUp(self):
        self.bin = mdsd_bin()
        if self.bin is None:
            self.skipTest("no mdsd binary (MDSD_BIN)")

    def test_tree_dump_table_has_vllm_columns(self):
        with tempfile.TemporaryDirectory() as work:
            out = os.path.join(work, "b.csv")
            t = mdsd.block(TREES, out, verifiers=("kseq",), sequences=(2,), pandas=False)
            self.assertEqual(len(t), 4)
            np.testing.assert_array_equal(t["mean_acceptance_length"], t["block_efficiency"])
            for i in range(len(t)):
                pos = t["per_position_acceptance_rate"][i]
                cond = t["per_depth"][i]
                self.assertAlmostEqual(pos[-1], float(np.prod(cond)), delta=2e-8)
                self.assertAlmostEqual(1 + sum(pos), t["mean_acceptance_length"][i], delta=1e-8)
                se = t["per_position_acceptance_rate_stderr"][i]
                self.assertEqual(len(se), len(pos))
                self.assertTrue(all(x > 0 for x in se), se)
                if len(se) == 1:  # reach_1 = E[tau] - 1: the same standard error
                    self.assertAlmostEqual(se[0], t["stderr"][i], delta=1e-9)
            # a list column (an array per row) even where every row has one position
            t1 = mdsd.block(TREES, out, verifiers=("kseq",), sequences=(2,), depths=(1,),
                            pandas=False)
            self.assertEqual(t1["per_position_acceptance_rate_stderr"][0].shape, (1,))

    def test_markov_toys_match_the_command_line(self):
        for kw, args in (
                (dict(verifier="kseq", sequences=2, depths=3), "--sequences 2 --depth 3 -v kseq"),
                (dict(verifier="rrsw", tree=(2, 2), scheme="wor", optimal=True),
                 "--tree 2,2 --scheme wor -v rrsw --optimal"),
                (dict(verifier="gbv", sequences=2, depths=2, trials=5000, seed=3),
                 "--sequences 2 --depth 2 -v gbv --trials 5000 --seed 3")):
            r = mdsd.block(markov=TOY, **kw)
            cli = json.loads(subprocess.run([self.bin, "block", "--markov", TOY, *args.split(),
                                             "--json"], check=True, capture_output=True,
                                            text=True).stdout)
            self.assertEqual(r.block_efficiency, cli["block_efficiency"])
            self.assertEqual(r.mean_acceptance_length, cli["mean_acceptance_length"])
            self.assertEqual(r.stderr, cli["stderr"])
            self.assertEqual(r.route, cli["route"])
            np.testing.assert_array_equal(r.per_depth, cli["per_depth"])
            np.testing.assert_array_equal(r.per_position_acceptance_rate,
                                          cli["per_position_acceptance_rate"])
            np.testing.assert_array_equal(r.reach, cli["reach"])
            # vLLM's per-position rates are the running products of the conditional ones
            np.testing.assert_allclose(r.per_position_acceptance_rate, np.cumprod(r.per_depth),
                                       rtol=1e-12)
            if kw.get("optimal"):
                self.assertEqual(r.optimal_token_block_efficiency,
                                 cli["optimal_token_block_efficiency"])

    def test_markov_errors_in_python_words(self):
        for kw, expect in ((dict(verifier="kseq", sequences=2, depths=3, tree=(2, 2)), "tree="),
                           (dict(verifier="kseq", sequences=2), "depths=L"),
                           (dict(verifier="kseq", sequences=2, depths=3, scheme="wor"), "scheme="),
                           (dict(sequences=2, depths=3), "verifier="),
                           (dict(verifier="optimal", sequences=2, depths=3), "optimal-token"),
                           (dict(verifier="optimal-block", sequences=2, depths=3, trials=9),
                            "drop trials="),
                           (dict(verifier="kseq", sequences=2, depths=3, simulate=True),
                            "trials=T"),
                           (dict(verifier="kseq", tree=(0, 2)), "widths"),
                           (dict(verifier="nope", sequences=2, depths=3), "block verifier"),
                           (dict(verifier="kseq", sequences=(2, 4), depths=3), "whole number")):
            with self.assertRaises(mdsd.MdsdError, msg=str(kw)) as cm:
                mdsd.block(markov=TOY, **kw)
            msg = str(cm.exception)
            self.assertIn(expect, msg)
            self.assertIsNone(FLAG.search(unquoted(msg)), msg)
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.block(markov=os.path.join(ROOT, "no-such-toy.txt"), verifier="kseq",
                       sequences=1, depths=1)
        self.assertIn("no-such-toy.txt", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
