"""The ngram backend through the documented command on a tiny corpus: the dump read back
with h5py and checked against data/README.md and against independently retrained models;
reproducibility, batch-size independence, stored dtypes, resuming."""

import datetime
import json
import os
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

from support import mdsd_bin, run_cli
from mdsd_runner import ngram
from mdsd_runner.dump import from_bfloat16_bits
from mdsd_runner.ngram import BOS, EOS, KneserNey

SUBJECTS = ["the king", "a shepherd", "the people", "my son", "the prophet", "israel"]
VERBS = ["saw", "blessed", "called", "went unto", "spake to", "feared"]
OBJECTS = ["the city", "the lord", "his brethren", "the mountain", "a great multitude"]


def write_corpus(path, rng, n=300):
    with open(path, "w") as f:
        for _ in range(n):
            parts = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)]
            if rng.random() < 0.4:
                parts += ["and", rng.choice(VERBS), rng.choice(OBJECTS)]
            f.write(" ".join(parts) + (" ." if rng.random() < 0.7 else " ;") + "\n")


PROMPTS = ["the king", "And the people went unto", "my son saw the", "a stranger came",
           "Israel"]

ARGS = ["--order", "4", "--draft-order", "2", "--draft-order", "3", "--vocab-size", "30",
        "--num-samples", "8", "--seed", "3", "--max-new-tokens", "12", "-q"]


class NgramEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.corpus = os.path.join(d, "corpus.txt")
        write_corpus(cls.corpus, np.random.default_rng(11))
        cls.prompts = os.path.join(d, "toy-prompts.jsonl")
        with open(cls.prompts, "w") as f:
            for p in PROMPTS:
                f.write(json.dumps({"prompt": p}) + "\n\n")
        cls.out = cls.make("out.h5")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def make(cls, name, *extra):
        out = os.path.join(cls.tmp.name, name)
        rc, stdout, stderr = run_cli("ngram", "--corpus", cls.corpus, "--prompts", cls.prompts,
                                     "-o", out, *ARGS, *extra)
        assert rc == 0, stderr
        return out

    def read(self, path):
        with h5py.File(path, "r") as f:
            return {k: f[k][()] for k in ("tokens", "sample_id", "position", "target/logits",
                                          "drafts/kn2/logits", "drafts/kn3/logits")}

    def test_layout_and_attributes(self):
        rc, out, err = run_cli("validate", self.out)
        self.assertEqual(rc, 0, err)
        with h5py.File(self.out, "r") as f:
            a = f.attrs
            self.assertEqual(a["mdsd_format"].dtype, np.int32)
            self.assertEqual(int(a["mdsd_format"]), 1)
            self.assertTrue(a["creator"].startswith("mdsd-runner "))
            self.assertEqual(a["dataset"], "toy-prompts")
            self.assertEqual(a["tokenizer"], "ngram-words:corpus:30")
            datetime.datetime.strptime(a["created"], "%Y-%m-%dT%H:%M:%SZ")
            self.assertEqual(a["generation_temperature"].dtype, np.float64)
            self.assertEqual(a["vocab_size"].dtype, np.int64)
            V = int(a["vocab_size"])
            self.assertEqual(V, 30)
            self.assertNotIn("runner_samples_done", a)
            N = f["tokens"].shape[0]
            for name in ("tokens", "sample_id", "position"):
                self.assertEqual(f[name].dtype, np.int32)
                self.assertEqual(f[name].shape, (N,))
            for g in ("target", "drafts/kn2", "drafts/kn3"):
                d = f[g]["logits"]
                self.assertEqual((d.shape, d.dtype), ((N, V), np.float32))
                self.assertIsNotNone(d.chunks)
                self.assertEqual(int(f[g].attrs["vocab_size"]), V)
                self.assertEqual(int(f[g].attrs["dropped_padding"]), 0)
            self.assertEqual(f["target"].attrs["model"], "kneser-ney-4gram:corpus")
            self.assertEqual(f["drafts/kn2"].attrs["model"], "kneser-ney-2gram:corpus")
            self.assertEqual(len(f["vocab"]), V)
            sid = f["sample_id"][()]
            self.assertEqual(sorted(set(sid)), list(range(8)))

    def test_logits_are_the_models_log_probabilities(self):
        """Softmax of each stored row equals P(. | prompt + response so far) of models
        retrained here, and every response was sampled where the target gives weight."""
        with open(self.corpus) as f:
            words = [ngram.split_words(line) for line in f if line.strip()]
        vocab = ngram.WordVocab.build(words, 30)
        sentences = [vocab.encode(w) for w in words]
        models = {k: KneserNey(k, len(vocab)).fit(sentences) for k in (4, 2, 3)}
        data = self.read(self.out)
        keys = {4: "target/logits", 2: "drafts/kn2/logits", 3: "drafts/kn3/logits"}
        for i in range(8):
            rows = np.flatnonzero(data["sample_id"] == i)
            prompt = [BOS] + list(vocab.encode(ngram.split_words(PROMPTS[i % len(PROMPTS)])))
            response = list(data["tokens"][rows])
            self.assertTrue(response[-1] == EOS or len(response) == 12)
            self.assertNotIn(EOS, response[:-1])
            for j, r in enumerate(rows):
                for k, key in keys.items():
                    logits = data[key][r].astype(np.float64)
                    p = np.exp(logits - logits.max())
                    p /= p.sum()
                    np.testing.assert_allclose(p, models[k].dist(prompt + response[:j]),
                                               rtol=2e-6, atol=1e-9)
                self.assertGreater(models[4].dist(prompt + response[:j])[response[j]], 1e-4)

    def test_reproducible_and_independent_of_the_batch_size(self):
        again = self.make("again.h5", "--batch-size", "1")
        a, b = self.read(self.out), self.read(again)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
        other = self.read(self.make("other-seed.h5", "--seed", "4"))
        self.assertFalse(np.array_equal(a["tokens"][:20], other["tokens"][:20]))

    def test_stored_dtypes(self):
        ref = self.read(self.out)["target/logits"]
        half = self.make("half.h5", "--logits-dtype", "float16", "--compression", "none")
        bf = self.make("bf16.h5", "--logits-dtype", "bfloat16")
        for path in (half, bf):
            rc, _, err = run_cli("validate", path)
            self.assertEqual(rc, 0, err)
        with h5py.File(half, "r") as f:
            d = f["target/logits"]
            self.assertEqual(d.dtype, np.float16)
            self.assertIsNone(d.compression)
            np.testing.assert_allclose(d[()], ref, rtol=2 ** -11, atol=0)
        with h5py.File(bf, "r") as f:
            d = f["target/logits"]
            self.assertEqual((d.dtype, d.attrs["dtype"]), (np.uint16, "bfloat16"))
            np.testing.assert_allclose(from_bfloat16_bits(d[()]), ref, rtol=2 ** -8, atol=0)

    def test_resume_after_stop_equals_uninterrupted(self):
        path = os.path.join(self.tmp.name, "resumed.h5")
        rc, out, err = run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts,
                               "-o", path, *ARGS, "--stop-after", "3")
        self.assertEqual(rc, 0, err)
        self.assertIn("stopped; resume from", out)
        self.assertFalse(os.path.exists(path))
        with h5py.File(path + ".partial", "r") as f:
            self.assertEqual(int(f.attrs["runner_samples_done"]), 3)
        self.make("resumed.h5")
        self.assertFalse(os.path.exists(path + ".partial"))
        a, b = self.read(self.out), self.read(path)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])

    def test_mdsd_info_validate(self):
        """`mdsd info --validate` (the C reader) accepts the dump."""
        self.assertIsNotNone(mdsd_bin(), "no mdsd binary: run through make test (MDSD_BIN)")
        proc = subprocess.run([mdsd_bin(), "info", "--validate", self.out],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == "__main__":
    unittest.main()
