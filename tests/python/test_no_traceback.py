"""The runner's top-level handler (cli.main): write errors, library refusals and internal
errors end in one `mdsd-runner: error:` line and exit status 1, never a Python traceback."""

import os
import random
import subprocess
import tempfile
import unittest

from support import ROOT, RUNNER, run_main


def run_to(stdout, *args):
    """(exit status, stderr) of `mdsd-runner ARGS` with stdout on the open file STDOUT."""
    proc = subprocess.run([RUNNER, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, cwd=ROOT, timeout=300)
    return proc.returncode, proc.stderr


class NoTraceback(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.corpus = os.path.join(d, "corpus.txt")
        with open(cls.corpus, "w") as f:
            f.write("the lord said unto moses .\nand moses said .\n")
        cls.prompts = os.path.join(d, "p.jsonl")
        with open(cls.prompts, "w") as f:
            f.write('{"prompt": "the lord"}\n{"prompt": "and moses"}\n')
        cls.dump = os.path.join(d, "ok.h5")
        rc, _, err = run_main("ngram", "--corpus", cls.corpus, "--prompts", cls.prompts,
                              "-o", cls.dump, "--vocab-size", "20", "-q")
        assert rc == 0, err

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def refused(self, rc, err, *phrases):
        self.assertEqual(rc, 1, err)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("Exception ignored", err)
        self.assertTrue(err.startswith("mdsd-runner: error: "), err)
        for phrase in phrases:
            self.assertIn(phrase, err)

    def test_stdout_on_a_full_device(self):
        with open("/dev/full", "w") as full:
            for args in (["--help"], ["--version"], ["validate", self.dump],
                         ["ngram", "--help"], ["import", "--help"]):
                with self.subTest(args=args):
                    rc, err = run_to(full, *args)
                    self.refused(rc, err, "cannot write to standard output",
                                 "No space left on device")
                    self.assertEqual(err.count("\n"), 1, err)  # said once

    def test_a_dump_with_stdout_on_a_full_device_keeps_its_output(self):
        out = os.path.join(self.tmp.name, "full.h5")
        with open("/dev/full", "w") as full:
            rc, err = run_to(full, "ngram", "--corpus", self.corpus, "--prompts", self.prompts,
                             "-o", out, "--vocab-size", "20", "-q")
        self.refused(rc, err, "cannot write to standard output")
        self.assertTrue(os.path.exists(out))  # the dump was written before the summary line

    def test_library_refusal_of_a_live_verifier(self):
        # otm's LP over V = 300 passes libmdsd's size limit: known only once V is, deep in
        # the live walk (an uncaught MdsdError before).
        rng = random.Random(1)
        words = [f"w{i}" for i in range(400)]
        corpus = os.path.join(self.tmp.name, "wide.txt")
        with open(corpus, "w") as f:
            for _ in range(3000):
                f.write(" ".join(rng.choice(words) for _ in range(12)) + "\n")
        out = os.path.join(self.tmp.name, "live.h5")
        rc, _, err = run_main("ngram", "--corpus", corpus, "--prompts", self.prompts, "-o", out,
                              "--vocab-size", "300", "-q", "--tree-policy", "seq",
                              "--tree-live", "otm", "--tree-sequences", "2", "--tree-depth", "2")
        self.refused(rc, err, "--tree-live otm: sample 0, position 0", "otm", "limit")
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".partial"))

    def test_internal_error_is_a_message(self):
        import mdsd_runner.cli as cli
        saved = cli._validate

        def broken(files):
            raise ZeroDivisionError("division by zero")
        cli._validate = broken
        try:
            rc, _, err = run_main("validate", self.dump)
        finally:
            cli._validate = saved
        self.refused(rc, err, "internal error (ZeroDivisionError: division by zero)",
                     "MDSD_RUNNER_TRACEBACK=1")

    def test_interrupted_validate_names_no_output(self):
        import mdsd_runner.cli as cli
        saved = cli._validate

        def interrupted(files):
            raise KeyboardInterrupt
        cli._validate = interrupted
        try:
            rc, _, err = run_main("validate", self.dump)
        finally:
            cli._validate = saved
        self.assertEqual(rc, 130, err)
        self.assertIn("mdsd-runner: interrupted", err)
        self.assertNotIn("Traceback", err)


if __name__ == "__main__":
    unittest.main()
