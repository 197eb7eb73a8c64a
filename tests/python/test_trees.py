"""Tree dumps (src/mdsd_runner/trees.py, data/README.md "Tree dumps") from the ngram backend
on a tiny corpus: the layout and the tree rules, the drafting schemes' laws, drafts drawn
from the stored logits, reproducibility, bad options; trees at the block starts of live
decoding (--tree-live, live.py): each tree where the one before stopped, `mdsd block`
answering the live case only, and its estimate against the realised tokens per call of the
same runs; and the shipped data/kjv-trees.h5 remade by `make tree-dump`'s command."""

import csv
import json
import os
import shlex
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

from support import ROOT, mdsd_bin, run_cli
from test_ngram_end_to_end import PROMPTS, write_corpus

ARGS = ["--order", "4", "--draft-order", "2", "--vocab-size", "30", "--num-samples", "6",
        "--seed", "3", "--max-new-tokens", "12", "--tree-contexts", "3", "--tree-stride", "2",
        "-q"]


def probs(logits, T=1.0):
    z = np.asarray(logits, np.float64)
    w = np.exp((z - z.max()) / T)
    return w / w.sum()


class TreeDumps(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.corpus = os.path.join(d, "corpus.txt")
        write_corpus(cls.corpus, np.random.default_rng(11))
        cls.prompts = os.path.join(d, "toy-prompts.jsonl")
        with open(cls.prompts, "w") as f:
            for p in PROMPTS:
                f.write(json.dumps({"prompt": p}) + "\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def make(self, name, *extra, ok=True):
        out = os.path.join(self.tmp.name, name)
        rc, stdout, stderr = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts,
                                     "-o", out, *ARGS, *extra)
        if ok:
            self.assertEqual(rc, 0, stderr)
        return out, rc, stderr

    def check_tree_rules(self, path):
        with h5py.File(path, "r") as f:
            a = dict(f.attrs)
            self.assertEqual(int(a["mdsd_format"]), 1)
            self.assertEqual(int(a["mdsd_tree"]), 1)
            L = int(a["tree_depth"])
            parent, depth, edge = f["parent"][:], f["depth"][:], f["edge"][:]
            slots, sample = f["slots"][:], f["tree_sample"][:]
            self.assertEqual(f["parent"].dtype, np.int64)
            N = parent.size
            for name in ("tokens", "sample_id", "position", "depth", "edge", "tree_sample",
                         "tree_position"):
                self.assertEqual(f[name].shape, (N,))
            self.assertEqual(f["target/logits"].shape[0], N)
            q = f[f"drafts/{a['tree_drafter']}/logits"][:].astype(np.float64)
            for u in range(N):
                if parent[u] < 0:
                    self.assertEqual((depth[u], edge[u]), (0, -1))
                else:
                    self.assertLess(parent[u], u)
                    self.assertEqual(depth[u], depth[parent[u]] + 1)
                    self.assertIn(edge[u], list(slots[parent[u]]))
                    self.assertEqual(sample[u], sample[parent[u]])
                used = [t for t in slots[u] if t >= 0]
                self.assertTrue(used)
                qu = probs(q[u], float(a["tree_temperature"]))
                for t in used:  # drafted from the stored drafter logits
                    self.assertGreater(qu[t], 0)
                kids = sorted(edge[v] for v in np.flatnonzero(parent == u))
                want = sorted(set(used)) if depth[u] + 1 < L else []
                self.assertEqual(kids, want)
            return a, slots, q, depth

    def test_seq_dump(self):
        path, _, _ = self.make("seq.h5", "--tree-policy", "seq", "--tree-sequences", "3",
                               "--tree-depth", "3")
        a, slots, _, depth = self.check_tree_rules(path)
        self.assertEqual(a["tree_policy"], "seq")
        self.assertEqual(int(a["tree_sequences"]), 3)
        self.assertTrue((slots[depth == 0] >= 0).all())  # every sequence passes the root
        # the same command twice: the same trees
        again, _, _ = self.make("seq2.h5", "--tree-policy", "seq", "--tree-sequences", "3",
                                "--tree-depth", "3")
        with h5py.File(path) as f, h5py.File(again) as g:
            for name in ("slots", "parent", "target/logits", "drafts/kn2/logits", "tokens"):
                np.testing.assert_array_equal(f[name][()], g[name][()])
        if mdsd_bin():
            proc = subprocess.run([mdsd_bin(), "block", path], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("kseq", proc.stdout)
            proc = subprocess.run([mdsd_bin(), "info", path, "--validate"], capture_output=True,
                                  text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_tree_schemes(self):
        for scheme, widths in (("iid", "3,2"), ("wor", "3,2"), ("greedy", "3,2"), ("hub", "2,2")):
            path, _, _ = self.make(f"{scheme}.h5", "--tree-policy", "tree", "--tree-widths",
                                   widths, "--tree-scheme", scheme)
            a, slots, q, depth = self.check_tree_rules(path)
            self.assertEqual(a["tree_scheme"], scheme)
            w = [int(x) for x in widths.split(",")]
            for u in range(slots.shape[0]):
                x = [int(t) for t in slots[u] if t >= 0]
                self.assertEqual(len(x), w[depth[u]])
                order = np.lexsort((np.arange(q.shape[1]), -q[u]))
                if scheme == "wor":
                    self.assertEqual(len(set(x)), len(x))
                if scheme == "greedy":
                    self.assertEqual(x[:-1], [int(t) for t in order[:len(x) - 1]])
                    self.assertNotIn(x[-1], x[:-1])
                if scheme == "hub":
                    top = int(order[0])
                    self.assertIn(top, x)
                    self.assertNotEqual(x[0], x[1])
            if mdsd_bin():
                proc = subprocess.run([mdsd_bin(), "block", path], capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_live_dump(self):
        live = ["--order", "4", "--draft-order", "2", "--vocab-size", "30", "--num-samples",
                "300", "--seed", "3", "--max-new-tokens", "12", "-q"]
        policy = ["--tree-policy", "seq", "--tree-sequences", "2", "--tree-depth", "3"]
        out = os.path.join(self.tmp.name, "live.h5")
        rc, _, err = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts, "-o",
                             out, *live, *policy, "--tree-live", "rrs")
        self.assertEqual(rc, 0, err)
        a, slots, _, depth = self.check_tree_rules(out)
        self.assertEqual((a["tree_contexts"], a["tree_live_verifier"]), ("live", "rrs"))
        self.assertEqual(json.loads(a["runner_config"])["tree"]["live"], "rrs")
        with h5py.File(out) as f:
            root = f["parent"][:] < 0
            sample, pos = f["tree_sample"][:][root], f["tree_position"][:][root]
            tau = f["tree_tau"][:][root]
        self.assertTrue(((tau >= 1) & (tau <= 4)).all())
        for s in np.unique(sample):  # each block starts where the one before stopped
            p, t = pos[sample == s], tau[sample == s]
            self.assertEqual(p[0], 0)
            np.testing.assert_array_equal(p[1:], p[:-1] + t[:-1])
            self.assertTrue((p < 12).all())
        if not mdsd_bin():
            return
        table = os.path.join(self.tmp.name, "live.csv")
        proc = subprocess.run([mdsd_bin(), "block", out, "-o", table], capture_output=True,
                              text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(table) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["verifier"], r["sequences"], r["depth"], r["contexts"]) for r in rows],
                         [("rrs", "2", "3", "live")])
        est, se = float(rows[0]["block_efficiency"]), float(rows[0]["stderr"])
        # the realised tokens per call of the same runs (a ratio, clustered by sample): the
        # estimate integrates the verifier's randomness out of the same trees, so the two
        # differ by a mean-zero martingale whose s.e. is at most the realised one's
        C, A = np.unique(sample, return_inverse=True)[0].size, tau.sum()
        ratio = A / tau.size
        z = np.bincount(np.unique(sample, return_inverse=True)[1], weights=tau - ratio)
        se_real = np.sqrt(C / (C - 1) * (z ** 2).sum()) / tau.size
        self.assertLess(abs(est - ratio), 4 * se_real, (est, se, ratio, se_real))
        proc = subprocess.run([mdsd_bin(), "block", out, "--verifiers", "kseq"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("live decoding with rrs, seq K=2 L=3", proc.stderr)
        # the same trees whatever the batch size (each tree's and each block's own streams)
        again = os.path.join(self.tmp.name, "live-b3.h5")
        rc, _, err = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts, "-o",
                             again, *live, *policy, "--tree-live", "rrs", "--batch-size", "3")
        self.assertEqual(rc, 0, err)
        with h5py.File(out) as f, h5py.File(again) as g:
            for name in ("slots", "parent", "tree_position", "tree_tau", "target/logits"):
                np.testing.assert_array_equal(f[name][()], g[name][()], err_msg=name)
        # a tree policy, another verifier
        tree = os.path.join(self.tmp.name, "live-tree.h5")
        fewer = ["40" if a == "300" else a for a in live]
        rc, _, err = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts, "-o",
                             tree, *fewer, "--tree-policy", "tree", "--tree-widths", "2,2",
                             "--tree-live", "kseq")
        self.assertEqual(rc, 0, err)
        self.check_tree_rules(tree)
        proc = subprocess.run([mdsd_bin(), "block", tree], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("| kseq | tree 2,2 iid live | 2 |", proc.stdout)
        # a verifier the policy's nodes cannot run: refused before any work
        rc, _, err = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts, "-o",
                             out + ".bad", *live, *policy, "--tree-live", "rrsw")
        self.assertEqual(rc, 1, err)
        self.assertIn("--tree-live rrsw on iid drafts", err)
        self.assertFalse(os.path.exists(out + ".bad"))
        # names the registry does not give to live decoding (mdsd.LIVE_VERIFIERS): a block
        # verifier, an audit variant
        for name in ("bv", "is-face"):
            rc, _, err = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts,
                                 "-o", out + ".bad", *live, *policy, "--tree-live", name)
            self.assertNotEqual(rc, 0, err)
            self.assertIn(f"--tree-live {name}: not a token-level verifier for use (sd, rrs,", err)
            self.assertFalse(os.path.exists(out + ".bad"))

    def test_bad_options(self):
        for extra, msg in ((["--tree-policy", "tree"], "--tree-widths"),
                           (["--tree-policy", "tree", "--tree-widths", "2,x"], "--tree-widths"),
                           (["--tree-policy", "tree", "--tree-widths", "3", "--tree-scheme", "hub"],
                            "hub"),
                           (["--tree-policy", "seq", "--tree-sequences", "0"], "--tree-sequences"),
                           (["--tree-policy", "seq", "--tree-drafter", "kn7"], "kn7"),
                           (["--tree-policy", "seq", "--tree-live", "rrs"], "--tree-stride"),
                           (["--tree-policy", "seq", "--tree-live", "rrs-skipdup"], "rrs-skipdup")):
            out, rc, err = self.make("bad.h5", *extra, ok=False)
            self.assertEqual(rc, 1, err)
            self.assertIn(msg, err)
            self.assertFalse(os.path.exists(out))


class ShippedTreeDump(unittest.TestCase):
    def test_remade_identically(self):
        with open(os.path.join(ROOT, "Makefile")) as f:
            text = f.read().replace("\\\n", " ")
        args = text.split("TREE_DUMP_ARGS := ", 1)[1].split("\n", 1)[0]
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "t.h5")
            rc, _, err = run_cli(*shlex.split(args), "--tree-policy", "seq", "--tree-sequences",
                                 "4", "--tree-depth", "4", "-q", "-o", out)
            self.assertEqual(rc, 0, err)
            with h5py.File(out) as f, h5py.File(os.path.join(ROOT, "data/kjv-trees.h5")) as g:
                for name in ("slots", "parent", "depth", "edge", "tokens", "tree_sample",
                             "tree_position", "target/logits", "drafts/kn2/logits"):
                    np.testing.assert_array_equal(f[name][()], g[name][()], err_msg=name)
                for k, v in g.attrs.items():
                    if k != "created":
                        self.assertEqual(str(f.attrs[k]), str(v), k)


if __name__ == "__main__":
    unittest.main()
