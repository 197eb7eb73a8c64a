"""The hf backend end to end through `mdsd-runner hf`, with stand-in `torch` and
`transformers` modules (numpy underneath) put in sys.modules: loading from local files
only, tokenizer checks, dropped padding, chat templates, the adapter's forward (cache,
masks, position ids, row selection) and the dump, against the unbatched reference.
What this cannot test: real transformers models and caches, CUDA, bf16/fp16 numerics."""

import contextlib
import json
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

import h5py
import numpy as np

from fakes import FakeLM, reference_logits, reference_sample
from support import run_main
from mdsd_runner.pipeline import sample_rng
from mdsd_runner.schema import validate

V = 48


class Tensor(np.ndarray):
    """What the adapter uses of torch.Tensor."""

    def float(self):
        return self.astype(np.float32).view(Tensor)

    def cpu(self):
        return self

    def numpy(self):
        return np.asarray(self)


def fake_torch(calls):
    torch = types.ModuleType("torch")
    torch.bfloat16, torch.float16, torch.float32 = "bf16", "fp16", "fp32"
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    torch.inference_mode = contextlib.nullcontext

    def as_tensor(a, device=None):
        calls.append(("as_tensor", device))
        return np.asarray(a).view(Tensor)
    torch.as_tensor = as_tensor
    return torch


class HFLikeModel:
    """A FakeLM behind transformers' calling convention: logits at every position."""

    def __init__(self, lm, eos):
        self.lm = lm
        self.generation_config = types.SimpleNamespace(eos_token_id=eos)
        self.config = types.SimpleNamespace(vocab_size=lm.model_vocab_size)
        self.device = None

    def to(self, device):
        self.device = device
        return self

    def eval(self):
        return self

    def get_output_embeddings(self):
        return types.SimpleNamespace(weight=np.zeros((self.lm.model_vocab_size, 2)))

    def __call__(self, input_ids, attention_mask, position_ids, past_key_values, use_cache):
        ids, mask, pos = (np.asarray(a) for a in (input_ids, attention_mask, position_ids))
        B, L = ids.shape
        past_ids, past_pos = past_key_values if past_key_values is not None else (
            np.zeros((B, 0), np.int64), np.zeros((B, 0), np.int64))
        full_ids = np.concatenate([past_ids, ids], axis=1)
        full_pos = np.concatenate([past_pos, pos], axis=1)
        C = past_ids.shape[1]
        logits = np.zeros((B, L, self.lm.model_vocab_size), np.float32)
        for b in range(B):
            for j in range(L):
                if mask[b, C + j]:
                    logits[b, j] = self.lm.logits_of([(full_ids[b, s], full_pos[b, s])
                                                      for s in range(C + j + 1) if mask[b, s]])
                else:
                    logits[b, j] = np.nan   # padding: garbage that must never be read
        return types.SimpleNamespace(logits=logits.view(Tensor),
                                     past_key_values=(full_ids, full_pos) if use_cache else None)


class HFLikeTokenizer:
    def __init__(self, V, name, renamed=None):
        self.V = V
        self.name_or_path = name
        self.eos_token_id = 1
        self.pad_token_id = None
        self.chat_template = "fake"
        self.renamed = renamed or {}

    def __len__(self):
        return self.V

    def get_vocab(self):
        return {self.renamed.get(i, f"t{i}"): i for i in range(self.V)}

    def _ids(self, text):
        return [3 + sum(map(ord, w)) % (self.V - 3) for w in text.split()]

    def __call__(self, text):
        return {"input_ids": [2] + self._ids(text)}

    def apply_chat_template(self, messages, add_generation_prompt, tokenize):
        ids = [2]
        for m in messages:
            ids += [4 if m["role"] == "user" else 5] + self._ids(m["content"])
        return ids + [6]

    def convert_ids_to_tokens(self, ids):
        return [self.renamed.get(i, f"t{i}") for i in ids]


class FakeHub:
    """Local 'folders' by name; anything else fails as from_pretrained does offline."""

    def __init__(self, padding=3):
        self.calls = []
        self.lms = {"fake/target": FakeLM(V, padding=padding, seed=1),
                    "fake/draft": FakeLM(V, padding=padding, seed=2),
                    "fake/draft2": FakeLM(V, padding=padding, seed=3),
                    "fake/other-tokenizer": FakeLM(V, padding=padding, seed=4)}
        self.toks = {name: HFLikeTokenizer(V, name) for name in self.lms}
        self.toks["fake/other-tokenizer"] = HFLikeTokenizer(V, "other", renamed={7: "seven"})

    def modules(self):
        hub = self

        def tokenizer(path, local_files_only=False):
            hub.calls.append(("tokenizer", path, local_files_only))
            if path not in hub.toks:
                raise OSError(f"{path} is not a local folder and not in the cache")
            return hub.toks[path]

        def model(path, torch_dtype=None, local_files_only=False):
            hub.calls.append(("model", path, torch_dtype, local_files_only))
            if path not in hub.lms:
                raise OSError(f"{path} is not a local folder and not in the cache")
            return HFLikeModel(hub.lms[path], [1])

        transformers = types.ModuleType("transformers")
        transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=tokenizer)
        transformers.AutoModelForCausalLM = types.SimpleNamespace(from_pretrained=model)
        return {"torch": fake_torch(self.calls), "transformers": transformers}


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
        self.hub = FakeHub()

    def tearDown(self):
        self.tmp.cleanup()

    def hf(self, *args, drafts=("fake/draft", "fake/draft2")):
        argv = ["hf", "--target", "fake/target", "--device", "cpu", "--prompts", self.prompts,
                "-o", self.out, "--num-samples", "5", "--max-new-tokens", "5", "--seed", "4",
                "--gen-temperature", "0.8"]
        for d in drafts:
            argv += ["--draft", d]
        with mock.patch.dict(sys.modules, self.hub.modules()):
            return run_main(*argv, *args)

    def test_dump_matches_the_unbatched_reference(self):
        for bs in ("1", "2", "4"):
            rc, out, err = self.hf("--batch-size", bs, "--dtype", "fp16")
            self.assertEqual(rc, 0, err)
            self.assertEqual(validate(self.out)[0], [])
            with h5py.File(self.out, "r") as f:
                tokens, sid = f["tokens"][()], f["sample_id"][()]
                target, d1, d2 = (f[k][()] for k in ("target/logits", "drafts/draft/logits",
                                                      "drafts/draft2/logits"))
                for g in ("target", "drafts/draft", "drafts/draft2"):
                    self.assertEqual(int(f[g].attrs["dropped_padding"]), 3)
                    self.assertEqual(int(f[g].attrs["vocab_size"]), V + 3)
                self.assertEqual(f["target"].attrs["model"], "fake/target")
                self.assertEqual(f.attrs["tokenizer"], "fake/target")
                self.assertEqual(list(f["vocab"][:2].astype(str)), ["t0", "t1"])
            tok = self.hub.toks["fake/target"]
            for i in range(5):
                r = self.records[i % 3]
                prompt = (tok.apply_chat_template(r["messages"], True, True) if "messages" in r
                          else tok(r["prompt"])["input_ids"])
                response, rows = reference_sample(self.hub.lms["fake/target"], V, prompt, 5, 0.8,
                                                  sample_rng(4, i))
                at = sid == i
                np.testing.assert_array_equal(tokens[at], response)
                np.testing.assert_array_equal(target[at], rows)
                np.testing.assert_array_equal(d1[at], reference_logits(self.hub.lms["fake/draft"],
                                                                       V, prompt, response))
                np.testing.assert_array_equal(d2[at], reference_logits(self.hub.lms["fake/draft2"],
                                                                       V, prompt, response))
        loads = [c for c in self.hub.calls if c[0] in ("tokenizer", "model")]
        self.assertTrue(all(c[-1] is True for c in loads), loads)          # local files only
        self.assertIn(("model", "fake/target", "fp16", True), loads)
        self.assertTrue(all(c[1] == "cpu" for c in self.hub.calls if c[0] == "as_tensor"))

    def test_chat_flag_wraps_plain_prompts(self):
        rc, _, err = self.hf("--chat", "--num-samples", "1")
        self.assertEqual(rc, 0, err)
        with h5py.File(self.out, "r") as f:
            tokens = f["tokens"][()]
        tok = self.hub.toks["fake/target"]
        prompt = tok.apply_chat_template([{"role": "user", "content": self.records[0]["prompt"]}],
                                         True, True)
        response, _ = reference_sample(self.hub.lms["fake/target"], V, prompt, 5, 0.8,
                                       sample_rng(4, 0))
        np.testing.assert_array_equal(tokens, response)

    def test_refusals(self):
        rc, _, err = self.hf(drafts=("fake/draft", "fake/other-tokenizer"))
        self.assertEqual(rc, 1)
        self.assertIn("tokenizers differ: token id 7 is 't7' in fake/target but 'seven' in "
                      "fake/other-tokenizer", err)
        rc, _, err = self.hf(drafts=("no/such-model",))
        self.assertEqual(rc, 1)
        self.assertIn("cannot load the tokenizer of no/such-model from local files", err)
        with mock.patch.dict(sys.modules, self.hub.modules()):
            rc, _, err = run_main("hf", "--target", "fake/target", "--draft", "fake/draft",
                                  "--prompts", self.prompts, "-o", self.out)
        self.assertEqual(rc, 1)
        self.assertIn("--device cuda, but PyTorch finds no CUDA device", err)
        self.assertFalse(os.path.exists(self.out))
        self.assertFalse(os.path.exists(self.out + ".partial"))


if __name__ == "__main__":
    unittest.main()
