"""How the hf backend loads models, with the stand-in transformers of fakes.FakeHub over
real torch: --revision, --trust-remote-code and --attn-implementation reach from_pretrained
(tokenizers and models) and the dump's runner_config; a GPU model loads straight onto its
device (device_map = the device, never a full copy moved afterwards), or, without
accelerate, in host memory and then moved, with a note; and the README's GPU-box command
(the `mdsd-runner hf` line of "The model runner: logit dumps"), as printed, end to end with
the stand-ins (CUDA reported present: the stand-in models compute on the CPU), its dump
validated and read by `mdsd table`. Run by tests/test_runner.c."""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import h5py
import torch

from fakes import FakeHub
from support import ROOT, mdsd_bin, run_main
from mdsd_runner.schema import validate

V = 48


class Loading(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.prompts = os.path.join(self.tmp.name, "p.jsonl")
        with open(self.prompts, "w") as f:
            f.write('{"prompt": "why is the sky blue"}\n{"prompt": "hello there"}\n')
        self.out = os.path.join(self.tmp.name, "out.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def hf(self, hub, *args, cuda=False):
        argv = ["hf", "--target", "fake/target", "--draft", "fake/draft", "--draft", "fake/draft2",
                "--prompts", self.prompts, "-o", self.out, "--num-samples", "2",
                "--max-new-tokens", "4", "--dtype", "fp32", *args]
        with mock.patch.dict(sys.modules, hub.modules()), \
                mock.patch.object(torch.cuda, "is_available", lambda: cuda):
            return run_main(*argv)

    def config(self):
        with h5py.File(self.out, "r") as f:
            return json.loads(f.attrs["runner_config"])

    def test_revision_trust_remote_code_attn_implementation(self):
        hub = FakeHub(V)
        rc, _, err = self.hf(hub, "--device", "cpu", "--revision", "v1",
                             "--revision", "fake/draft2=0123abc", "--trust-remote-code",
                             "--attn-implementation", "sdpa")
        self.assertEqual(rc, 0, err)
        want = {"fake/target": "v1", "fake/draft": "v1", "fake/draft2": "0123abc"}
        for kind, path, revision, trust, *attn in hub.options:
            self.assertEqual(revision, want[path], (kind, path))
            self.assertIs(trust, True)
            if kind == "model":
                self.assertEqual(attn, ["sdpa"])
        self.assertEqual({o[1] for o in hub.options if o[0] == "model"}, set(want))
        config = self.config()
        self.assertEqual(config["revisions"], want)
        self.assertIs(config["trust_remote_code"], True)
        self.assertEqual(config["attn_implementation"], "sdpa")
        # without the options nothing is passed (transformers' defaults) nor recorded
        os.unlink(self.out)
        hub = FakeHub(V)
        rc, _, err = self.hf(hub, "--device", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertTrue(all(o[2:] in ((None, False), (None, False, None)) for o in hub.options))
        self.assertFalse({"revisions", "trust_remote_code", "attn_implementation"} & set(self.config()))

    def test_bad_revisions(self):
        for args, message in ((("--revision", "no/such=v1"), "'no/such' is not the --target"),
                              (("--revision", "a", "--revision", "b"), "given twice without"),
                              (("--revision", "fake/draft=a", "--revision", "fake/draft=b"),
                               "fake/draft given twice"),
                              (("--revision", "fake/draft="), "an empty revision")):
            with self.subTest(args=args):
                rc, _, err = self.hf(FakeHub(V), "--device", "cpu", *args)
                self.assertEqual(rc, 1, err)
                self.assertIn(message, err)
                self.assertFalse(os.path.exists(self.out + ".partial"))

    def test_a_gpu_model_loads_straight_onto_its_device(self):
        hub = FakeHub(V)
        rc, _, err = self.hf(hub, "--device", "cuda", cuda=True)
        self.assertEqual(rc, 0, err)
        models = [c for c in hub.calls if c[0] == "model"]
        self.assertEqual(len(models), 3)
        self.assertTrue(all(c[4] == "cuda" for c in models), models)
        self.assertEqual([m.moves for m in hub.loaded.values()], [[], [], []])
        self.assertEqual(validate(self.out)[0], [])
        # on the CPU: loaded where it runs, no device_map, no move
        os.unlink(self.out)
        hub = FakeHub(V)
        rc, _, err = self.hf(hub, "--device", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertTrue(all(c[4] is None for c in hub.calls if c[0] == "model"))
        self.assertEqual([m.moves for m in hub.loaded.values()], [[], [], []])

    def test_without_accelerate_a_gpu_model_is_moved_with_a_note(self):
        hub = FakeHub(V, accelerate=False)
        rc, _, err = self.hf(hub, "--device", "cuda", cuda=True)
        self.assertEqual(rc, 0, err)
        self.assertIn("pip install accelerate to load it straight onto the device", err)
        self.assertEqual([m.moves for m in hub.loaded.values()], [["cuda"]] * 3)
        self.assertEqual(validate(self.out)[0], [])


def readme_runner_block():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## The model runner: logit dumps", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


class ReadmeQuickstart(unittest.TestCase):
    def test_the_readme_gpu_command_end_to_end(self):
        block = readme_runner_block().replace("\\\n", " ")
        hf_line = next(line for line in block.splitlines() if " hf " in line)
        words = shlex.split(hf_line)
        words = words[words.index("hf"):]
        self.assertIn("--device", words)
        self.assertEqual(words[words.index("--device") + 1], "cuda")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "dump.h5")
            argv = [{"MODEL": "fake/target", "SMALL_MODEL": "fake/draft", "dump.h5": out}.get(w, w)
                    for w in words]
            hub = FakeHub(V, "5.0.0")
            cwd = os.getcwd()
            os.chdir(ROOT)      # the README's paths are the repository's
            try:
                with mock.patch.dict(sys.modules, hub.modules()), \
                        mock.patch.object(torch.cuda, "is_available", lambda: True):
                    rc, printed, err = run_main(*argv)
            finally:
                os.chdir(cwd)
            self.assertEqual(rc, 0, err)
            self.assertIn(f"wrote {out}: 30 of 30 samples", printed)
            self.assertTrue(all(c[4] == "cuda" for c in hub.calls if c[0] == "model"))
            self.assertEqual([m.moves for m in hub.loaded.values()], [[], []])
            with h5py.File(out, "r") as f:
                self.assertEqual(f["target/logits"].attrs["dtype"], "bfloat16")
                config = json.loads(f.attrs["runner_config"])
            self.assertEqual(config["chat_template_kwargs"], {"enable_thinking": False})
            # the block's next line: validate; then the dump is read by mdsd table
            self.assertIn("mdsd-runner validate dump.h5", block)
            rc, printed, err = run_main("validate", out)
            self.assertEqual(rc, 0, err)
            table = os.path.join(tmp, "t.csv")
            done = subprocess.run([mdsd_bin(), "table", out, "-o", table, "-d", "2", "-v", "rrs"],
                                  capture_output=True, text=True, cwd=ROOT)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(table) as f:
                self.assertIn(",rrs,", f.read())


if __name__ == "__main__":
    unittest.main()
