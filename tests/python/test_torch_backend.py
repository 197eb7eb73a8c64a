"""The torch backend end to end on CPU (Debian's python3-torch): tiny random-weight models of
tinylm.py saved by the test (a target and two drafters of other shapes), run through
`mdsd-runner torch`: the flat dump's logits against the same network run one sequence at a
time without padding, mask or cache (tinylm.TinyLM.forward, the training path), the sampled
tokens against the sampler replayed on those logits, a tree dump's node logits against the
network on context + draft path, `mdsd info --validate`, `mdsd table` and `mdsd block` on the
dumps, resume, and the inputs it must refuse. A planted slip of the position ids fails the
reference check."""

import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

import h5py
import numpy as np
import torch

from support import mdsd_bin, replay_sampler, run_main
# trees binds pipeline.pad_right when first imported: import it before any test patches that.
from mdsd_runner import pipeline, tinylm, trees  # noqa: F401
from mdsd_runner.ngram import SPECIALS
from mdsd_runner.pipeline import sample_rng

WORDS = ("in the beginning god created heaven and earth was without form void darkness upon "
         "face of deep spirit moved waters said let there be light , . ; : lord").split()
VOCAB = list(SPECIALS) + WORDS
V = len(VOCAB)
EOS = 1
SHAPES = {"tgt": dict(d_model=16, n_layer=2, n_head=2, n_ctx=40, seed=1),
          "d1": dict(d_model=8, n_layer=1, n_head=2, n_ctx=40, seed=2),
          "d2": dict(d_model=12, n_layer=2, n_head=3, n_ctx=40, seed=3)}


def save_model(folder, name, d_model, n_layer, n_head, n_ctx, seed, vocab=VOCAB):
    config = {"format": tinylm.FORMAT, "version": 1, "name": name, "vocab_size": len(vocab),
              "n_ctx": n_ctx, "d_model": d_model, "n_layer": n_layer, "n_head": n_head,
              "d_ff": 3 * d_model, "tokenizer": "words:test"}
    model = tinylm.TinyLM(config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():   # logits of a few units, as in a trained model
            p.copy_(torch.randn(p.shape, generator=g) * (0.4 if p.dim() > 1 else 0.1))
        model.embed.weight.mul_(2.0)
    tinylm.save_folder(folder, config, vocab, model, dtype=torch.float32)
    return tinylm.load_folder(folder)[2]


def reference(model, seq):
    """Logits [len(seq), V] of one unpadded, uncached sequence from position 0, float64."""
    with torch.no_grad():
        return model(torch.tensor([list(seq)])).numpy()[0].astype(np.float64)


def tokens_of(text):
    return [2] + [VOCAB.index(w) for w in text.split()]


class TorchBackend(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.models = {k: save_model(os.path.join(self.dir, k), k, **s) for k, s in SHAPES.items()}
        self.texts = ["in the beginning", "and the earth was without form and void", "let there be",
                      "and god said"]
        self.prompts = os.path.join(self.dir, "p.jsonl")
        with open(self.prompts, "w") as f:
            f.write("".join(json.dumps({"prompt": t}) + "\n" for t in self.texts))
        self.out = os.path.join(self.dir, "out.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def run_torch(self, *args, out=None, temperature="0.8", expect=0):
        rc, stdout, err = run_main(
            "torch", "--target", os.path.join(self.dir, "tgt"), "--draft",
            os.path.join(self.dir, "d1"), "--draft", os.path.join(self.dir, "d2"), "--prompts",
            self.prompts, "-o", out or self.out, "--num-samples", "6", "--max-new-tokens", "7",
            "--seed", "3", "--gen-temperature", temperature, "-q", *args)
        self.assertEqual(rc, expect, err)
        return stdout + err

    def mdsd(self, *args):
        binary = mdsd_bin()
        self.assertIsNotNone(binary, "no mdsd binary: run through make test (MDSD_BIN)")
        proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return proc.stdout

    def check_flat(self, temperature, tol=1e-4):
        with h5py.File(self.out, "r") as f:
            tokens, sid = f["tokens"][()], f["sample_id"][()]
            stored = {"tgt": f["target/logits"][()], "d1": f["drafts/d1/logits"][()],
                      "d2": f["drafts/d2/logits"][()]}
            self.assertEqual(f.attrs["tokenizer"], "words:test")
            self.assertEqual(f["target"].attrs["model"], "tgt")
            self.assertEqual(list(f["vocab"].asstr()[()]), VOCAB)
        checked = total = 0
        for i in range(6):
            prompt = tokens_of(self.texts[i % 4])
            response = tokens[sid == i]
            self.assertTrue(len(response) == 7 or response[-1] == EOS)
            seq = prompt + list(response)[:-1]
            for k, model in self.models.items():
                ref = reference(model, seq)[len(prompt) - 1:]
                diff = np.abs(stored[k][sid == i] - ref).max()
                self.assertLessEqual(diff, tol, (k, i))
            rows = reference(self.models["tgt"], seq)[len(prompt) - 1:]
            c, n = replay_sampler(self, response, rows, sample_rng(3, i), temperature, tol, i)
            checked, total = checked + c, total + n
        self.assertGreaterEqual(checked, 0.6 * total)

    def test_flat_dump_against_the_unbatched_network(self):
        """Batches of 4 split by --max-batch-tokens 30 (left padding and the cache in
        generation, right padding in teacher forcing); mdsd info and table read it."""
        self.run_torch("--batch-size", "4", "--max-batch-tokens", "30")
        self.check_flat(0.8)
        self.mdsd("info", "--validate", self.out)
        self.mdsd("table", self.out, "-o", os.path.join(self.dir, "t.csv"), "-t", "0.8", "-d", "2",
                  "-s", "iid", "-v", "rrs", "--draft-model", "d1,d2")

    def test_greedy_and_float16_storage(self):
        self.run_torch("--batch-size", "6", "--logits-dtype", "float16", temperature="0")
        self.check_flat(0.0, tol=0.02)    # float16 rounding of logits of a few units

    def test_a_planted_position_slip_is_caught(self):
        real = pipeline.pad_right

        def slipped(seqs, pad_id):
            ids, mask, pos = real(seqs, pad_id)
            return ids, mask, pos + 1
        with mock.patch.object(pipeline, "pad_right", slipped):
            self.run_torch()
        with self.assertRaises(AssertionError):
            self.check_flat(0.8)

    def test_resume_gives_the_same_dump(self):
        self.run_torch("--batch-size", "2", "--stop-after", "2")
        self.assertTrue(os.path.exists(self.out + ".partial"))
        self.run_torch("--batch-size", "2")
        whole = os.path.join(self.dir, "whole.h5")
        self.run_torch("--batch-size", "2", out=whole)
        with h5py.File(self.out, "r") as a, h5py.File(whole, "r") as b:
            for name in ("tokens", "target/logits", "drafts/d2/logits"):
                np.testing.assert_array_equal(a[name][()], b[name][()])

    def test_tree_dump_nodes_against_the_network(self):
        self.run_torch("--tree-policy", "seq", "--tree-sequences", "3", "--tree-depth", "3",
                       "--tree-drafter", "d2", "--tree-contexts", "2", "--tree-stride", "3")
        with h5py.File(self.out, "r") as f:
            parent, edge = f["parent"][()], f["edge"][()]
            tsample, tpos = f["tree_sample"][()], f["tree_position"][()]
            tl, ql = f["target/logits"][()], f["drafts/d2/logits"][()]
            self.assertEqual(f.attrs["tree_drafter"], "d2")
        flat = os.path.join(self.dir, "flat.h5")
        self.run_torch(out=flat)            # the same responses (same seed)
        with h5py.File(flat, "r") as f:
            tokens, sid = f["tokens"][()], f["sample_id"][()]
        for r in range(len(parent)):
            path, k = [], r
            while parent[k] >= 0:
                path.insert(0, int(edge[k]))
                k = parent[k]
            i = int(tsample[r])
            seq = tokens_of(self.texts[i % 4]) + list(tokens[sid == i][:tpos[r]]) + path
            for model, stored in ((self.models["tgt"], tl), (self.models["d2"], ql)):
                np.testing.assert_allclose(stored[r], reference(model, seq)[-1], atol=1e-4)
        self.mdsd("block", self.out, "-o", os.path.join(self.dir, "b.csv"))

    def test_bad_inputs_are_refused(self):
        d1 = os.path.join(self.dir, "d1")
        cases = []
        # a drafter with another vocabulary
        save_model(os.path.join(self.dir, "other"), "other", 8, 1, 2, 40, 4,
                   vocab=VOCAB[:-1] + ["amen"])
        cases.append((["--draft", os.path.join(self.dir, "other")], "tokenizer differs"))
        # weights that do not fit the config
        cfg = os.path.join(self.dir, "bad", "config.json")
        save_model(os.path.join(self.dir, "bad"), "bad", 8, 1, 2, 40, 5)
        with open(cfg) as f:
            c = json.load(f)
        c["d_model"] = 10
        with open(cfg, "w") as f:
            json.dump(c, f)
        cases.append((["--draft", os.path.join(self.dir, "bad")], "config.json needs"))
        cases.append((["--draft", os.path.join(self.dir, "none")], "is not a model folder"))
        cases.append((["--dtype", "fp16"], "needs --device cuda"))
        for extra, message in cases:
            with self.subTest(message=message):
                rc, _, err = run_main("torch", "--target", os.path.join(self.dir, "tgt"), "--draft",
                                      d1, *extra, "--prompts", self.prompts, "-o", self.out)
                self.assertEqual(rc, 1, err)
                self.assertIn(message, err)
                self.assertFalse(os.path.exists(self.out))
        # a response that runs past the models' 40 positions
        rc, _, err = run_main("torch", "--target", os.path.join(self.dir, "tgt"), "--draft", d1,
                              "--prompts", self.prompts, "-o", self.out, "--max-new-tokens", "60",
                              "--gen-temperature", "0")
        self.assertEqual(rc, 1, err)
        self.assertIn("has 40 positions", err)


if __name__ == "__main__":
    unittest.main()
