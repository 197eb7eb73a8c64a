"""Tree dumps written from Python (mdsd.TreeDumpWriter over libmdsd's mdsd/treewrite.h) and
the Markov pair as arrays (mdsd.block(markov=(P, Q))):

- the shipped tree dump re-written tree by tree through the writer gives `mdsd block` the
  same numbers, and the same datasets;
- the worked example (analysis/own_loop_trees.py: its own loop on the shipped neural pair)
  writes a dump `mdsd block` reads, whose E[tau] agrees with that of `mdsd-runner torch
  --tree-policy seq` with the same options within the standard error of the difference;
- every tree the reader would refuse is refused, naming the file, tree, argument, row and
  value, writes nothing, and leaves the writer usable; nothing is published before finish;
- markov=(P, Q) gives the numbers of the same pair as a file, and bad matrices are refused
  naming the matrix, row and value."""

import csv
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

from support import ROOT, mdsd_bin, run_main

sys.path.insert(0, os.path.join(ROOT, "src", "python"))
import mdsd  # noqa: E402

SHIPPED = os.path.join(ROOT, "data", "kjv-trees.h5")
NEURAL = os.path.join(ROOT, "data", "kjv-neural")
EXAMPLE = os.path.join(ROOT, "analysis", "own_loop_trees.py")
TREE_SETS = ("parent", "depth", "edge", "slots", "tree_sample", "tree_position", "tokens",
             "sample_id", "position", "target/logits")


def block(dump, out, *extra):
    binary = mdsd_bin()
    assert binary, "no mdsd binary: run through make test (MDSD_BIN)"
    proc = subprocess.run([binary, "block", dump, "-o", out, *extra], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def validate(dump):
    """`mdsd info --validate`: every row of the dump checked as a version-1 dump."""
    proc = subprocess.run([mdsd_bin(), "info", "--validate", dump], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def rewrite(src, out, **override):
    """The tree dump src, tree by tree, through TreeDumpWriter."""
    with h5py.File(src, "r") as f:
        a = f.attrs
        names = sorted(f["drafts"])
        kw = dict(policy=str(a["tree_policy"]), drafter=str(a["tree_drafter"]),
                  temperature=float(a["tree_temperature"]),
                  dtype=str(f["target/logits"].dtype))
        if kw["policy"] == "seq":
            kw.update(sequences=int(a["tree_sequences"]), depth=int(a["tree_depth"]))
        else:
            kw.update(widths=list(a["tree_widths"]), scheme=str(a["tree_scheme"]))
        kw.update(override)
        d = {k: f[k][()] for k in TREE_SETS}
        drafts = [f[f"drafts/{n}/logits"][()].astype(np.float32) for n in names]
    par = d["parent"]
    roots = list(np.flatnonzero(par == -1)) + [len(par)]
    with mdsd.TreeDumpWriter(out, d["target/logits"].shape[1], names, **kw) as w:
        for r0, r1 in zip(roots[:-1], roots[1:]):
            local = par[r0:r1] - r0
            local[0] = -1
            w.write_tree(d["target/logits"][r0:r1], [x[r0:r1] for x in drafts],
                         d["tokens"][r0:r1], local, d["edge"][r0:r1], d["slots"][r0:r1],
                         int(d["tree_sample"][r0]), int(d["tree_position"][r0]))
    return len(roots) - 1


class RoundTrip(unittest.TestCase):
    def test_the_shipped_tree_dump_rewritten_gives_the_same_numbers(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rt.h5")
            self.assertEqual(rewrite(SHIPPED, out), 101)
            with h5py.File(SHIPPED, "r") as a, h5py.File(out, "r") as b:
                for k in TREE_SETS:
                    np.testing.assert_array_equal(a[k][()], b[k][()], err_msg=k)
                for k in ("mdsd_tree", "tree_policy", "tree_depth", "tree_sequences",
                          "tree_scheme", "tree_drafter", "tree_temperature"):
                    self.assertEqual(a.attrs[k], b.attrs[k], k)
                self.assertEqual(b["target/logits"].dtype, np.float16)
            ra = block(SHIPPED, os.path.join(tmp, "a.csv"))
            validate(out)
            rb = block(out, os.path.join(tmp, "b.csv"))
            self.assertGreater(len(ra), 10)
            for x, y in zip(ra, rb):
                x.pop("dump"), y.pop("dump")
                self.assertEqual(x, y)


def by_case(rows):
    return {(r["verifier"], r["sequences"], r["depth"]): r for r in rows}


class WorkedExample(unittest.TestCase):
    OPTIONS = ["--num-samples", "16", "--max-new-tokens", "12", "--tree-sequences", "2",
               "--tree-depth", "3", "--tree-contexts", "3", "--tree-stride", "4"]

    def test_agrees_with_the_runners_tree_dump(self):
        prompts = os.path.join(ROOT, "data", "prompts", "kjv-held-out.jsonl")
        with tempfile.TemporaryDirectory() as tmp:
            own, runner = os.path.join(tmp, "own.h5"), os.path.join(tmp, "runner.h5")
            proc = subprocess.run([sys.executable, EXAMPLE, "--prompts", prompts, "-o", own,
                                   "--temperature", "1", "--seed", "7", *self.OPTIONS],
                                  capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            rc, _, err = run_main("torch", "--target", os.path.join(NEURAL, "tf4"), "--draft",
                                  os.path.join(NEURAL, "tf1"), "--prompts", prompts, "-o", runner,
                                  "--gen-temperature", "1", "--tree-policy", "seq", "-q",
                                  *self.OPTIONS)
            self.assertEqual(rc, 0, err)
            validate(own)
            mine = by_case(block(own, os.path.join(tmp, "own.csv"), "--verifiers", "rrs,sd"))
            theirs = by_case(block(runner, os.path.join(tmp, "runner.csv"), "--verifiers",
                                   "rrs,sd"))
            self.assertEqual(sorted(mine), sorted(theirs))
            self.assertEqual(len(mine), 9)  # rrs: K in {1, 2} x L in {1, 2, 3}; sd: K = 1
            for case, a in mine.items():
                b = theirs[case]
                self.assertEqual(a["samples"], "16")
                diff = float(a["block_efficiency"]) - float(b["block_efficiency"])
                se = math.hypot(float(a["stderr"]), float(b["stderr"]))
                self.assertGreater(se, 0)
                # independent samples of the same law: the difference is within 3 of its
                # standard errors (a wrong writer or loop moves it by many)
                self.assertLess(abs(diff), 3 * se, f"{case}: {a['block_efficiency']} vs "
                                f"{b['block_efficiency']} (s.e. {se:.3g})")
                print(f"{case}: own loop {float(a['block_efficiency']):.4f} +- "
                      f"{float(a['stderr']):.4f}, runner {float(b['block_efficiency']):.4f} +- "
                      f"{float(b['stderr']):.4f}, z = {diff / se:+.2f}", file=sys.stderr)


V, K, L = 5, 2, 2
S = K


def logits(rows, seed=0):
    return np.random.default_rng(seed).normal(size=(rows, V)).astype(np.float32)


def good_tree():
    """A seq tree (K = 2, L = 2) whose sequences draft 1 and 3 at the root: rows = the root
    and its two children; the children's slots continue sequence 0 and 1."""
    return dict(target=logits(3, 1), drafts=[logits(3, 2)], tokens=[0, 2, 4],
                parent=[-1, 0, 0], edge=[-1, 1, 3], slots=[[1, 3], [2, -1], [-1, 0]],
                sample=0, position=0)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "t.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def writer(self, **kw):
        args = dict(policy="seq", sequences=K, depth=L, temperature=1.0)
        args.update(kw)
        return mdsd.TreeDumpWriter(self.path, V, ["d"], **args)

    def leftovers(self):
        return sorted(os.listdir(self.tmp.name))

    def test_bad_layouts(self):
        cases = [
            (dict(policy="trie"), "policy 'trie' is neither seq nor tree"),
            (dict(sequences=0), r"sequences K = 0 outside \[1, 16\]"),
            (dict(sequences=17), r"sequences K = 17 outside \[1, 16\]"),
            (dict(depth=33), r"depth L = 33 outside \[1, 32\]"),
            (dict(sequences=-1), "sequences: '-1' must be a non-negative integer"),
            (dict(sequences=2.5), "sequences: '2.5' is not a non-negative integer"),
            (dict(scheme="wor"), "scheme 'wor' with policy seq"),
            (dict(policy="tree", sequences=None, depth=None, widths=[2, 0]),
             r"tree width w_2 = 0 outside \[1, 16\]"),
            (dict(policy="tree", sequences=None, depth=None, widths=[2, 3], scheme="hub"),
             "width w_2 = 3 must be 2"),
            (dict(policy="tree", sequences=None, depth=None, widths=[2], scheme="cps"),
             "tree scheme cps not supported"),
            (dict(policy="tree", sequences=None, depth=None, widths=[2], scheme="nope"),
             "scheme"),
            (dict(drafter="e"), "drafter 'e' is not one of the layout's draft_names"),
            (dict(temperature=0.0), "temperature 0 is not a temperature > 0"),
            (dict(temperature=float("nan")), "temperature nan is not a temperature > 0"),
            (dict(live_verifier="bogus"), "live_verifier"),
            (dict(attrs={"tree_depth": "9"}), "extra root attribute 'tree_depth'"),
            (dict(dtype="float64"), "unknown logits dtype 'float64'"),
        ]
        for kw, msg in cases:
            with self.subTest(kw=kw):
                with self.assertRaisesRegex(mdsd.MdsdError, msg):
                    self.writer(**kw)
                self.assertEqual(self.leftovers(), [])

    def check_refused(self, w, msg, **change):
        tree = good_tree()
        tree.update(change)
        with self.assertRaisesRegex(mdsd.MdsdError, msg):
            w.write_tree(**tree)

    def test_bad_trees_are_refused_and_the_writer_goes_on(self):
        nan, inf = np.float32("nan"), np.float32("inf")
        t_nan = logits(3, 1)
        t_nan[1, 3] = nan
        t_inf = logits(3, 1)
        t_inf[2, 0] = inf
        all_ninf = logits(3, 2)
        all_ninf[1, :] = -inf
        q_zero = logits(3, 2)
        q_zero[0, 3] = -inf          # the root drafted 3
        p = self.path
        cases = [
            (dict(target=logits(3, 1)[:, :4]), r"target logits of shape \(3, 4\)"),
            (dict(drafts=[]), "0 draft arrays, the dump has 1 drafters"),
            (dict(drafts=[logits(2, 2)]), r"drafts\[0\] has shape \(2, 5\)"),
            (dict(slots=[[1, 3], [2, -1]]), r"slots has shape \(2, 2\), expected \(3, 2\)"),
            (dict(tokens=[0, 2]), r"tokens has shape \(2,\)"),
            (dict(parent=[0, 0, 0]), re.escape(f"tree dump '{p}': tree 0: parent row 0 is 0: row "
                                               "0 is the root (parent -1)")),
            (dict(parent=[-1, 2, 0]), "tree 0: parent row 1 is 2: not an earlier row"),
            (dict(parent=[-1, -1, 0]), "tree 0: parent row 1 is -1: not an earlier row of "
             r"this tree \(one tree per call\)"),
            (dict(parent=[-1, 0, 3]), r"parent\[2\]: '3' is out of range \(-1 to 2\)"),
            (dict(parent=[-1, 0, 1], edge=[-1, 1, 2]), "tree 0: row 2 is at depth 2, beyond "
             "the dump's depth L - 1 = 1"),
            (dict(tokens=[0, 5, 4]), r"tree 0: tokens row 1 is 5, outside \[0, 5\)"),
            (dict(tokens=[0, -1, 4]), r"tokens\[1\]: '-1' must be a non-negative integer"),
            (dict(tokens=[0, 1.5, 4]), r"tokens\[1\]: '1.5' is not an integer"),
            (dict(edge=[-1, 2, 3]), "tree 0: row 1 of /edge: token 2 is not among its "
             "parent's drafts"),
            (dict(edge=[0, 1, 3]), r"tree 0: row 0: a root \(parent -1\) needs depth 0 and "
             "edge -1, has 0 and 0"),
            (dict(edge=[-1, 1, 1], slots=[[1, 1], [2, 0], [2, 0]]),
             "rows 1 and 2: two children of row 0 with edge 1"),
            (dict(target=logits(2, 1), drafts=[logits(2, 2)], tokens=[0, 2], parent=[-1, 0],
                  edge=[-1, 1], slots=[[1, 3], [2, -1]]),
             r"row 0 has 1 child rows, expected 2 \(one per distinct drafted token"),
            (dict(slots=[[1, -1], [2, -1], [-1, 0]]), "row 0 of /slots: slot 1 is unused, the "
             "policy says it is used"),
            (dict(slots=[[1, 3], [2, 4], [-1, 0]]), "row 1 of /slots: slot 1 is used, the "
             "policy says it is unused"),
            (dict(slots=[[1, 3], [2, -1], [-1, 5]]), r"row 2 of /slots: token 5 outside \[0, 5\)"),
            (dict(slots=[[1, 3], [2, -1], [-2, 0]]), r"slots\[4\]: '-2' is out of range"),
            (dict(target=t_nan), "tree 0: target row 1, logit 3 is NaN"),
            (dict(target=t_inf), r"tree 0: target row 2, logit 0 is \+inf"),
            (dict(drafts=[all_ninf]), r"tree 0: drafts\[0\] row 1 has no finite logit"),
            (dict(drafts=[q_zero]), "tree 0: slots row 0, slot 1: drafted token 3 has draft "
             "probability 0 under drafter 'd'"),
            (dict(tau=2), r"tree 0: tau 2 on a dump of fixed positions"),
            (dict(sample=-1), "sample: '-1' must be a non-negative integer"),
        ]
        w = self.writer()
        for change, msg in cases:
            with self.subTest(change=list(change)):
                self.check_refused(w, msg, **change)
        w.write_tree(**good_tree())               # still usable: tree 0
        tree = good_tree()
        tree.update(sample=3, position=4)
        w.write_tree(**tree)                      # tree 1
        self.check_refused(w, "tree 2: sample 1 after sample 3 \\(trees must be in sample "
                           "order\\)", sample=1)
        self.assertFalse(os.path.exists(self.path))   # nothing before finish
        w.finish()
        self.assertEqual(self.leftovers(), ["t.h5"])
        with h5py.File(self.path, "r") as f:
            np.testing.assert_array_equal(f["parent"][()], [-1, 0, 0, -1, 3, 3])
            np.testing.assert_array_equal(f["depth"][()], [0, 1, 1, 0, 1, 1])
            np.testing.assert_array_equal(f["sample_id"][()], [0, 0, 0, 1, 1, 1])
            np.testing.assert_array_equal(f["tree_sample"][()], [0, 0, 0, 3, 3, 3])
            np.testing.assert_array_equal(f["tree_position"][()], [0, 0, 0, 4, 4, 4])
            self.assertEqual(int(f.attrs["tree_sequences"]), K)
        validate(self.path)
        rows = block(self.path, os.path.join(self.tmp.name, "b.csv"), "--verifiers", "rrs")
        self.assertEqual({r["trees"] for r in rows}, {"2"})

    def test_float16_overflow_and_rounding_to_zero(self):
        w = self.writer(dtype="float16")
        big = logits(3, 1)
        big[0, 2] = 1e5
        self.check_refused(w, "target row 0, logit 2 = 100000 overflows float16", target=big)
        w.abort()
        self.assertEqual(self.leftovers(), [])

    def test_nothing_written_is_nothing_published(self):
        w = self.writer()
        with self.assertRaisesRegex(mdsd.MdsdError, "no tree was written"):
            w.finish()
        self.assertEqual(self.leftovers(), [])
        with self.assertRaises(RuntimeError):
            with self.writer() as w:
                w.write_tree(**good_tree())
                raise RuntimeError("the loop failed")
        self.assertEqual(self.leftovers(), [])   # abandoned: no file, no temporary file
        w = self.writer()
        w.abort()
        with self.assertRaisesRegex(mdsd.MdsdError, "already closed"):
            w.write_tree(**good_tree())

    def test_tree_policy_and_live_dumps(self):
        # tree widths (2, 1), scheme wor: two distinct children at the root, one at depth 1
        w = self.writer(policy="tree", sequences=None, depth=None, widths=[2, 1], scheme="iid",
                        live_verifier="rrs")
        self.assertEqual(w.S, 2)
        tree = dict(target=logits(3, 1), drafts=[logits(3, 2)], tokens=[0, 2, 4],
                    parent=[-1, 0, 0], edge=[-1, 1, 3], slots=[[1, 3], [2, -1], [0, -1]],
                    sample=0, position=0, tau=2)
        w.write_tree(**tree)
        for change, msg in (
                (dict(position=1), "tree 1: position 1, but the block after the tree before "
                 "starts at 2"),
                (dict(tau=0), r"tree 1: tau 0 outside \[1, 3\]"),
                (dict(tau=4, position=2), r"tree 1: tau 4 outside \[1, 3\]"),
                (dict(sample=1, position=3), "position 3, but the live run of a new sample "
                 "starts at 0"),
                (dict(position=2, slots=[[1, 3], [2, 2], [0, -1]]), "row 1 of /slots: slot 1 is "
                 "used")):
            with self.subTest(change=change):
                t = dict(tree)
                t.update(change)
                with self.assertRaisesRegex(mdsd.MdsdError, msg):
                    w.write_tree(**t)
        w.write_tree(**dict(tree, position=2, tau=3))
        w.write_tree(**dict(tree, sample=1))
        w.finish()
        with h5py.File(self.path, "r") as f:
            self.assertEqual(f.attrs["tree_contexts"], "live")
            self.assertEqual(f.attrs["tree_live_verifier"], "rrs")
            np.testing.assert_array_equal(f.attrs["tree_widths"], [2, 1])
            np.testing.assert_array_equal(f["tree_tau"][()], [2] * 3 + [3] * 3 + [2] * 3)
        rows = block(self.path, os.path.join(self.tmp.name, "b.csv"), "--verifiers", "rrs",
                     "--depth", "2")
        self.assertTrue(rows and all(r["contexts"] == "live" for r in rows), rows)


def markov_file(path, P, Q):
    with open(path, "w") as f:
        f.write(f"{len(P)}\n")
        f.write("".join(" ".join(repr(float(x)) for x in row) + "\n" for row in P))
        f.write("\n")
        f.write("".join(" ".join(repr(float(x)) for x in row) + "\n" for row in Q))


class MarkovArrays(unittest.TestCase):
    def pair(self, V=4, seed=3):
        g = np.random.default_rng(seed)
        P, Q = g.dirichlet(np.ones(V), size=V), g.dirichlet(np.ones(V), size=V)
        return P, Q

    def test_arrays_give_the_files_numbers(self):
        P, Q = self.pair()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pair.txt")
            markov_file(path, P, Q)
            for kw in (dict(verifier="rrs", sequences=2, depths=3),
                       dict(verifier="rrsw", tree=(2, 1), scheme="wor", optimal=True),
                       dict(verifier="kseq", sequences=3, depths=2, trials=500, seed=5)):
                with self.subTest(kw=kw):
                    a = mdsd.block(markov=path, **kw)
                    b = mdsd.block(markov=(P, Q), **kw)
                    for x, y, field in zip(a, b, a._fields):
                        np.testing.assert_array_equal(x, y, err_msg=field)
            b = mdsd.block(markov=(P.astype(np.float32), Q.tolist()), verifier="rrs",
                           sequences=2, depths=2)
            self.assertGreater(b.block_efficiency, 1.0)

    def test_bad_matrices_are_refused(self):
        P, Q = self.pair()
        bad_sum, neg, nan = P.copy(), Q.copy(), P.copy()
        bad_sum[2] *= 1.1
        neg[1, 0], neg[1, 1] = -0.1, neg[1, 1] + 0.1
        nan[3, 2] = np.nan
        cases = [
            ((P[:3], Q[:3]), r"P has shape \(3, 4\), expected a square V x V"),
            ((P, Q[:3, :3]), r"P is \(4, 4\), Q \(3, 3\): one V"),
            ((P,), r"a pair \(P, Q\) of transition matrices, not 1 arrays"),
            ((bad_sum, Q), r"row 2: probabilities sum to 1.1"),
            ((P, neg), "Markov pair: draft row 1"),
            ((nan, Q), "Markov pair: target row 3, value 2 is nan"),
            ((P.reshape(2, 8), Q.reshape(2, 8)), "square V x V"),
            ((np.ones((4097, 1)) , Q), "square"),
        ]
        for pair, msg in cases:
            with self.subTest(msg=msg):
                with self.assertRaisesRegex(mdsd.MdsdError, msg):
                    mdsd.block(markov=pair, verifier="rrs", sequences=2, depths=2)


if __name__ == "__main__":
    unittest.main()
