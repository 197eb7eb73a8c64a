"""The hf backend end to end through `mdsd-runner hf`, with real torch and stand-in
`transformers` modules (fakes.FakeHub, one per transformers version the backend knows:
4.44 with neither logits_to_keep nor `dtype=`, 4.46 with num_logits_to_keep, 4.53 with
logits_to_keep, 5.0 with `dtype=` and mapping-returning tokenizers) put in sys.modules:
loading from local files only, the dtype keyword, logits computed only where stored,
tokenizer checks, dropped padding, chat templates and their variables, device maps, the
adapter's forward (cache, masks, position ids, row selection) and the dump, against the
unbatched reference. test_hf_torch.py runs a real torch network instead of these."""

import json
import os
import sys
import tempfile
import unittest
from unittest import mock

import h5py
import numpy as np
import torch

from fakes import VERSIONS, FakeHub, reference_logits, reference_sample
from support import run_main
from mdsd_runner import hf
from mdsd_runner.dump import to_bfloat16_bits
from mdsd_runner.pipeline import sample_rng
from mdsd_runner.schema import validate

V = 48
GROUPS = ("target", "drafts/draft", "drafts/draft2")


class HFBackend(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.prompts = os.path.join(self.tmp.name, "qs.jsonl")
        self.records = [{"prompt": "why is the sky blue"},
                        {"messages": [{"role": "system", "content": "be brief"},
                                      {"role": "user", "content": "name three planets"}]},
                        {"prompt": "hello"}]
        with open(self.prompts, "w") as f:
            for r in self.records:
                f.write(json.dumps(r) + "\n")
        self.out = os.path.join(self.tmp.name, "out.h5")
        self.hub = FakeHub(V)

    def tearDown(self):
        self.tmp.cleanup()

    def hf(self, *args, drafts=("fake/draft", "fake/draft2"), hub=None):
        argv = ["hf", "--target", "fake/target", "--device", "cpu", "--prompts", self.prompts,
                "-o", self.out, "--num-samples", "5", "--max-new-tokens", "5", "--seed", "4",
                "--gen-temperature", "0.8"]
        for d in drafts:
            argv += ["--draft", d]
        with mock.patch.dict(sys.modules, (hub or self.hub).modules()):
            return run_main(*argv, *args)

    def prompt_ids(self, hub, record, **template_vars):
        tok = hub.toks["fake/target"]
        if "messages" in record:
            ids = tok.apply_chat_template(record["messages"], True, True, **template_vars)
            return ids["input_ids"] if isinstance(ids, dict) else ids
        return tok(record["prompt"])["input_ids"]

    def check_against_reference(self, hub, rounding=None):
        """The dump equals the unbatched, uncached reference of every model."""
        self.assertEqual(validate(self.out)[0], [])
        with h5py.File(self.out, "r") as f:
            tokens, sid = f["tokens"][()], f["sample_id"][()]
            stored = {g: f[g]["logits"][()] for g in GROUPS}
            for g in GROUPS:
                self.assertEqual(int(f[g].attrs["dropped_padding"]), 3)
                self.assertEqual(int(f[g].attrs["vocab_size"]), V + 3)
            self.assertEqual(f["target"].attrs["model"], "fake/target")
            self.assertEqual(f.attrs["tokenizer"], "fake/target")
            self.assertEqual(list(f["vocab"][:2].astype(str)), ["t0", "t1"])
        round_ = rounding or (lambda a: a)
        for i in range(5):
            prompt = self.prompt_ids(hub, self.records[i % 3])
            target_lm = hub.lms["fake/target"]
            if rounding is None:
                response, rows = reference_sample(target_lm, V, prompt, 5, 0.8, sample_rng(4, i))
                np.testing.assert_array_equal(tokens[sid == i], response)
            else:   # sampled from the rounded logits: compare the logits of the stored tokens
                response = list(tokens[sid == i])
                rows = reference_logits(target_lm, V, prompt, response)
            at = sid == i
            np.testing.assert_array_equal(stored["target"][at], round_(rows))
            for g, name in (("drafts/draft", "fake/draft"), ("drafts/draft2", "fake/draft2")):
                np.testing.assert_array_equal(
                    stored[g][at], round_(reference_logits(hub.lms[name], V, prompt, response)))

    def test_every_transformers_version_matches_the_unbatched_reference(self):
        for version in VERSIONS:
            for bs, tokens in (("1", "4096"), ("2", "4096"), ("4", "4096"), ("4", "20")):
                with self.subTest(version=version, batch_size=bs, max_batch_tokens=tokens):
                    hub = FakeHub(V, version)
                    rc, out, err = self.hf("--batch-size", bs, "--max-batch-tokens", tokens,
                                           "--dtype", "fp32", hub=hub)
                    self.assertEqual(rc, 0, err)
                    self.check_against_reference(hub)
                    loads = [c for c in hub.calls if c[0] in ("tokenizer", "model")]
                    self.assertTrue(all(c[3 if c[0] == "model" else 2] is True for c in loads))
                    self.assertIn(("model", "fake/target", torch.float32, True, None), loads)
                    with h5py.File(self.out, "r") as f:
                        self.assertEqual(f["target/logits"].dtype, np.float32)   # auto: fp32
                        config = json.loads(f.attrs["runner_config"])
                    self.assertEqual(config["transformers"], version)
                    self.assertEqual(config["torch"], str(torch.__version__))
                    os.unlink(self.out)

    def test_a_model_without_position_ids(self):
        hub = FakeHub(V, "4.44.2")
        hub.model_class = hub.no_position_ids
        rc, _, err = self.hf("--batch-size", "3", "--dtype", "fp32", hub=hub)
        self.assertEqual(rc, 0, err)
        self.check_against_reference(hub)

    def test_logits_are_computed_only_where_stored(self):
        """Per forward, rows of logits computed: with logits_to_keep (an index tensor) the
        distinct selected positions per row, with the lm-head hook exactly the selected
        ones; generation steps compute one position per row."""
        for version, at_most in (("4.44.2", "selected"), ("4.53.0", "distinct"),
                                 ("5.0.0", "distinct")):
            hub = FakeHub(V, version)
            rc, _, err = self.hf("--batch-size", "4", "--dtype", "fp32", hub=hub)
            self.assertEqual(rc, 0, err)
            with h5py.File(self.out, "r") as f:
                rows = f["tokens"].shape[0]
            for name in ("fake/draft", "fake/draft2"):     # teacher forcing only
                computed = hub.loaded[name].positions_computed
                if at_most == "selected":
                    self.assertEqual(sum(computed), rows, version)
                else:    # batch rows x distinct positions: more than rows, far less than B*L
                    self.assertLess(sum(computed), 4 * rows, version)
            os.unlink(self.out)

    def test_bf16_models_store_bfloat16_exactly(self):
        for version in ("4.53.0", "5.0.0"):
            hub = FakeHub(V, version)
            rc, _, err = self.hf("--dtype", "bf16", "--batch-size", "3", hub=hub)
            self.assertEqual(rc, 0, err)
            with h5py.File(self.out, "r") as f:
                self.assertEqual(f["target/logits"].attrs["dtype"], "bfloat16")
            self.check_against_reference(hub, rounding=to_bfloat16_bits)
            self.assertIn(("model", "fake/target", torch.bfloat16, True, None), hub.calls)
            os.unlink(self.out)
        rc, _, err = self.hf("--dtype", "fp16", "--logits-dtype", "float32")
        self.assertEqual(rc, 0, err)
        with h5py.File(self.out, "r") as f:
            self.assertEqual(f["target/logits"].dtype, np.float32)

    def test_the_dtype_keyword_follows_the_version(self):
        class T:
            pass
        for version, keyword in (("4.44.2", "torch_dtype"), ("4.55.4", "torch_dtype"),
                                 ("4.56.0", "dtype"), ("5.0.0rc1", "dtype"), ("5.1.0", "dtype")):
            T.__version__ = version
            self.assertEqual(hf.dtype_keyword(T), keyword, version)

    def test_a_dtype_the_model_ignored_is_refused(self):
        hub = FakeHub(V, "4.44.2")
        with mock.patch.object(hf, "dtype_keyword", lambda transformers: "dtype"):
            rc, _, err = self.hf("--dtype", "bf16", hub=hub)
        self.assertEqual(rc, 1)
        self.assertIn("the model fake/target loaded as torch.float32, not the torch.bfloat16", err)
        hub = FakeHub(V, "5.0.0")
        with mock.patch.object(hf, "dtype_keyword", lambda transformers: "torch_dtype"):
            rc, _, err = self.hf("--dtype", "bf16", hub=hub)
        self.assertEqual(rc, 1)          # the stand-in refuses the deprecated keyword
        self.assertFalse(os.path.exists(self.out + ".partial"))

    def test_chat_flag_and_template_variables(self):
        for version in ("4.53.0", "5.0.0"):
            hub = FakeHub(V, version)
            rc, _, err = self.hf("--chat", "--num-samples", "1", "--dtype", "fp32",
                                 "--chat-template-kwargs", '{"enable_thinking": false}', hub=hub)
            self.assertEqual(rc, 0, err)
            with h5py.File(self.out, "r") as f:
                tokens = f["tokens"][()]
                config = json.loads(f.attrs["runner_config"])
            self.assertEqual(config["chat_template_kwargs"], {"enable_thinking": False})
            prompt = self.prompt_ids(hub, {"messages": [{"role": "user",
                                                         "content": self.records[0]["prompt"]}]},
                                     enable_thinking=False)
            self.assertEqual(prompt[-2:], [7, 8])
            response, _ = reference_sample(hub.lms["fake/target"], V, prompt, 5, 0.8,
                                           sample_rng(4, 0))
            np.testing.assert_array_equal(tokens, response)
            os.unlink(self.out)

    def test_chat_template_return_shapes(self):
        """A list, a mapping (5.x), a batch of one, a tensor: the same ids."""
        class Tok:
            chat_template = "t"

            def __init__(self, value):
                self.value = value

            def __len__(self):
                return 10

            def apply_chat_template(self, messages, add_generation_prompt, tokenize):
                return self.value
        record = {"messages": [{"role": "user", "content": "hi"}]}
        for value in ([2, 5, 6], {"input_ids": [2, 5, 6]}, {"input_ids": [[2, 5, 6]]},
                      torch.tensor([[2, 5, 6]])):
            self.assertEqual(hf.HFTokenizer(Tok(value), "t", {1}).encode(record, "f line 1"),
                             [2, 5, 6])

    def test_device_map(self):
        rc, _, err = self.hf("--device-map", '{"": "cpu"}', "--dtype", "fp32")
        self.assertEqual(rc, 0, err)
        self.assertIn(("model", "fake/target", torch.float32, True, {"": "cpu"}), self.hub.calls)
        with h5py.File(self.out, "r") as f:
            self.assertEqual(json.loads(f.attrs["runner_config"])["device_map"], {"": "cpu"})
        os.unlink(self.out)
        rc, _, err = self.hf("--device-map", "auto", hub=FakeHub(V, accelerate=False))
        self.assertEqual(rc, 1)
        self.assertIn("requires `accelerate`", err)
        self.assertIn("pip install numpy h5py accelerate", err)

    def test_refusals(self):
        rc, _, err = self.hf(drafts=("fake/draft", "fake/other-tokenizer"))
        self.assertEqual(rc, 1)
        self.assertIn("tokenizers differ: token id 7 is 't7' in fake/target but 'seven' in "
                      "fake/other-tokenizer", err)
        rc, _, err = self.hf(drafts=("no/such-model",))
        self.assertEqual(rc, 1)
        self.assertIn("cannot load the tokenizer of no/such-model from local files", err)
        with mock.patch.dict(sys.modules, self.hub.modules()), \
                mock.patch.object(torch.cuda, "is_available", lambda: False):
            rc, _, err = run_main("hf", "--target", "fake/target", "--draft", "fake/draft",
                                  "--prompts", self.prompts, "-o", self.out)
        self.assertEqual(rc, 1)
        self.assertIn("--device cuda, but PyTorch finds no CUDA device", err)
        for option, value, message in (
                ("--chat-template-kwargs", "[1]", "must be a JSON object"),
                ("--chat-template-kwargs", '{"tokenize": false}', "tokenize is set by the runner"),
                ("--chat-template-kwargs", "{bad", "malformed JSON"),
                ("--device-map", "everywhere", "expected auto, balanced"),
                ("--device-map", '{"model": true}', "must map module names to devices"),
                ("--max-batch-tokens", "0", "--max-batch-tokens must be at least 1")):
            rc, _, err = self.hf(option, value)
            self.assertEqual(rc, 1 if option == "--max-batch-tokens" else 2, (option, value, err))
            self.assertIn(message, err)
        self.assertFalse(os.path.exists(self.out))
        self.assertFalse(os.path.exists(self.out + ".partial"))

    def test_missing_torch_or_transformers_names_the_fix(self):
        with mock.patch.dict(sys.modules, {"transformers": None}):
            rc, _, err = run_main("hf", "--target", "fake/target", "--draft", "fake/draft",
                                  "--prompts", self.prompts, "-o", self.out)
        self.assertEqual(rc, 1)
        self.assertIn("the hf backend needs PyTorch and transformers", err)
        self.assertIn(f"This Python is {sys.executable}", err)
        self.assertIn("python3 -m venv", err)
        self.assertIn("MDSD_PYTHON=", err)


if __name__ == "__main__":
    unittest.main()
