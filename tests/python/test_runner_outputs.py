"""mdsd-runner's -o against every file the command reads (issue 36): an output that is the
--prompts file, the --corpus, an import array or a file of a model folder (model.pt,
config.json) - by the same path, a symlink or a hard link, or through its OUT.partial
checkpoint - is refused before any work, naming both files, exit 1, the input untouched;
and a second run on an -o whose OUT.lock another holds is refused. The check and the lock
are libmdsd's (mdsd/output.h), the ones `mdsd` runs."""

import os
import tempfile
import unittest

import numpy as np

from support import run_main


def read(path):
    with open(path, "rb") as f:
        return f.read()


class OutputIsAnInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.corpus = self.file("corpus.txt", "the lord said unto moses .\nand moses said .\n")
        self.prompts = self.file("p.jsonl", '{"prompt": "the lord"}\n')

    def tearDown(self):
        self.tmp.cleanup()

    def file(self, name, text):
        path = os.path.join(self.d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def refused(self, args, out, victim, role):
        """The command with -o OUT exits 1 naming OUT (as given) and the input VICTIM,
        leaves VICTIM's bytes as they were and writes nothing beside OUT."""
        before = read(victim)
        listing = sorted(os.listdir(os.path.dirname(out)))
        rc, stdout, err = run_main(*args, "-o", out)
        self.assertEqual(rc, 1, stdout + err)
        self.assertIn(role, err)
        self.assertIn("is the input", err)
        self.assertIn(victim, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(read(victim), before)
        self.assertEqual(sorted(os.listdir(os.path.dirname(out))), listing)

    def ngram(self, *extra):
        return ["ngram", "--corpus", self.corpus, "--prompts", self.prompts, "--vocab-size",
                "20", "-q", *extra]

    def test_prompts_and_corpus_by_name_symlink_and_hard_link(self):
        self.refused(self.ngram(), self.prompts, self.prompts, "--prompts")
        self.refused(self.ngram(), self.corpus, self.corpus, "--corpus")
        link = os.path.join(self.d, "link.h5")
        os.symlink(self.prompts, link)
        self.refused(self.ngram(), link, self.prompts, "--prompts")
        hard = os.path.join(self.d, "hard.h5")
        os.link(self.corpus, hard)
        self.refused(self.ngram(), hard, self.corpus, "--corpus")
        # a tree dump, and an input that is -o's checkpoint OUT.partial
        self.refused(self.ngram("--tree-policy", "seq"), self.prompts, self.prompts, "--prompts")
        partial = self.file("out.h5.partial", "{\"prompt\": \"the lord\"}\n")
        self.refused(["ngram", "--corpus", self.corpus, "--prompts", partial, "-q"],
                     os.path.join(self.d, "out.h5"), partial, "checkpoint")

    def test_import_arrays(self):
        t = os.path.join(self.d, "t.npy")
        np.save(t, np.zeros((3, 4), np.float32))
        z = os.path.join(self.d, "run.npz")
        np.savez(z, draft=np.zeros((3, 4), np.float32), tokens=np.zeros(3, np.int64))
        base = ["import", "--target", t, "--draft", f"small={z}:draft"]
        self.refused(base, t, t, "--target")
        self.refused(base, z, z, "--draft small")
        tokens = os.path.join(self.d, "tokens.npy")
        np.save(tokens, np.zeros(3, np.int64))
        self.refused(base + ["--tokens", tokens], tokens, tokens, "--tokens")

    def test_model_folders(self):
        for backend in ("torch", "hf"):
            with self.subTest(backend=backend):
                target = os.path.join(self.d, backend, "target")
                draft = os.path.join(self.d, backend, "draft")
                for folder in (target, draft):
                    for name in ("config.json", "vocab.txt", "model.pt"):
                        self.file(os.path.join(folder, name), "x")
                args = [backend, "--prompts", self.prompts, "--target", target, "--draft",
                        draft, "-q"]
                self.refused(args, os.path.join(draft, "model.pt"),
                             os.path.join(draft, "model.pt"), "--draft")
                self.refused(args, os.path.join(target, "config.json"),
                             os.path.join(target, "config.json"), "--target")

    def test_a_distinct_output_still_runs(self):
        out = os.path.join(self.d, "out.h5")
        rc, stdout, err = run_main(*self.ngram(), "-o", out)
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".lock"))  # released and removed

    def test_one_writer_per_output(self):
        from mdsd import _paths
        out = os.path.join(self.d, "out.h5")
        with _paths.locked(out + ".lock", f"-o {out}"):  # another run, writing OUT.partial
            rc, stdout, err = run_main(*self.ngram(), "-o", out)
        self.assertEqual(rc, 1, stdout + err)
        self.assertIn(f"another job is writing -o {out}", err)
        self.assertIn(out + ".lock", err)
        self.assertEqual(sorted(os.listdir(self.d)), ["corpus.txt", "p.jsonl"])
        rc, stdout, err = run_main(*self.ngram(), "-o", out)  # the lock is free again
        self.assertEqual(rc, 0, err)


class TrainingWrites(unittest.TestCase):
    """The model folder and prompt file writers (tinylm.save_folder, `python3 -m
    mdsd_runner.train model|prompts`) through libmdsd's O_EXCL temporaries: a user's
    NAME.tmp is left alone and a symlink there not followed (both were, with plain
    NAME.tmp copies)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.victim = os.path.join(self.d, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("precious\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_save_folder(self):
        import torch
        from mdsd_runner import tinylm
        folder = os.path.join(self.d, "model")
        os.mkdir(folder)
        with open(os.path.join(folder, "config.json.tmp"), "w") as f:
            f.write("mine\n")
        os.symlink(self.victim, os.path.join(folder, "model.pt.tmp"))
        config = {"format": tinylm.FORMAT, "version": 1, "name": "m", "vocab_size": 5,
                  "n_ctx": 8, "d_model": 8, "n_layer": 1, "n_head": 2, "d_ff": 16,
                  "tokenizer": "words:test"}
        vocab = ["<unk>", "</s>", "<s>", "a", "b"]
        tinylm.save_folder(folder, config, vocab, tinylm.TinyLM(config), dtype=torch.float32)
        self.assertEqual(read(self.victim), b"precious\n")
        self.assertEqual(read(os.path.join(folder, "config.json.tmp")), b"mine\n")
        _, tokens, _ = tinylm.load_folder(folder)
        self.assertEqual(tokens, vocab)
        self.assertEqual(sorted(os.listdir(folder)), ["config.json", "config.json.tmp",
                                                      "model.pt", "model.pt.tmp", "vocab.txt"])

    def test_prompt_file(self):
        import contextlib
        import io
        from mdsd_runner import train
        out = os.path.join(self.d, "held.jsonl")
        os.symlink(self.victim, out + ".tmp")
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(train.main(["prompts", "-o", out]), 0)
        self.assertEqual(read(self.victim), b"precious\n")
        self.assertTrue(read(out).startswith(b'{"prompt": '))


if __name__ == "__main__":
    unittest.main()
