"""The hf backend's real PyTorch code on CPU (Debian's python3-torch): a tiny causal LM
built here from torch.nn modules, behind the interface the backend calls (forward with
input_ids, attention_mask, position_ids, past_key_values, use_cache and, by transformers
version, logits_to_keep, num_logits_to_keep or neither; an object with .logits back; a
cache that grows in place like transformers' DynamicCache), loaded through a stand-in
`transformers` module (Debian has none; nothing is downloaded). Torch tensors, float32 and
bfloat16, left padding (generation), right padding (teacher forcing) and the cache run for
real; the dump is checked against the same network run one sequence at a time without
padding or cache, and by `mdsd info --validate`."""

import json
import math
import os
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

import h5py
import numpy as np
import torch
from torch import nn

from fakes import HFLikeTokenizer
from support import mdsd_bin, replay_sampler, run_main
from mdsd_runner import pipeline
from mdsd_runner.dump import from_bfloat16_bits
from mdsd_runner.pipeline import sample_rng

V = 40          # tokenizer size; the models have padded embedding rows beyond it
EOS = 1


class TinyCache:
    """Per layer keys and values [B, heads, C, d], grown in place by every forward."""

    def __init__(self, layers):
        self.keys = [None] * layers
        self.values = [None] * layers

    def get_seq_length(self, layer_idx=0):
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def update(self, k, v, layer):
        if self.keys[layer] is not None:
            k = torch.cat([self.keys[layer], k], dim=2)
            v = torch.cat([self.values[layer], v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads, self.d = heads, width // heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, bias, cache, layer):
        B, L, W = x.shape
        q, k, v = (t.view(B, L, self.heads, self.d).transpose(1, 2)
                   for t in self.qkv(self.norm1(x)).chunk(3, dim=-1))
        if cache is not None:
            k, v = cache.update(k, v, layer)
        # Attention in float32 (as many models do their softmax): a bf16 reduction over
        # C+L keys would round differently for each padded length, blurring the reference.
        scores = q.float() @ k.float().transpose(-1, -2) / math.sqrt(self.d) + bias
        a = (torch.softmax(scores, dim=-1) @ v.float()).to(x.dtype)    # [B, h, L, d]
        x = x + self.out(a.transpose(1, 2).reshape(B, L, W))
        return x + self.mlp(self.norm2(x))


class TinyCausalLM(nn.Module):
    """Learned position embeddings indexed by position_ids (a wrong position id changes the
    logits), causal attention under the padding mask, a final soft-capping after the head
    (the model's own step, which an adapter bypassing forward would miss)."""

    def __init__(self, seed, width, layers, vocab_rows, heads=2, max_positions=128):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.embed = nn.Embedding(vocab_rows, width)
        self.positions = nn.Embedding(max_positions, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab_rows, bias=False)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * (0.8 if p.dim() > 1 else 0.1))
            for norm in [self.norm] + [n for b in self.blocks for n in (b.norm1, b.norm2)]:
                norm.weight.add_(1.0)
            self.lm_head.weight.mul_(0.5)      # logits of a few units, as in a trained model
        self.config = types.SimpleNamespace(vocab_size=vocab_rows)
        self.generation_config = types.SimpleNamespace(eos_token_id=[EOS])

    @property
    def dtype(self):
        return self.lm_head.weight.dtype

    def get_input_embeddings(self):
        return self.embed

    def get_output_embeddings(self):
        return self.lm_head

    def run(self, input_ids, attention_mask, position_ids, past_key_values, use_cache, keep):
        B, L = input_ids.shape
        cache = past_key_values
        if cache is None and use_cache:
            cache = TinyCache(len(self.blocks))
        C = cache.get_seq_length() if cache is not None else 0
        assert attention_mask.shape == (B, C + L)
        x = self.embed(input_ids) + self.positions(position_ids)
        query_at = torch.arange(C, C + L)[:, None]
        allowed = (torch.arange(C + L)[None, :] <= query_at)[None] & \
            attention_mask[:, None, :].bool()                            # [B, L, C+L]
        bias = torch.zeros(allowed.shape).masked_fill(
            ~allowed, torch.finfo(torch.float32).min)[:, None]           # [B, 1, L, C+L]
        for i, block in enumerate(self.blocks):
            x = block(x, bias, cache, i)
        h = self.norm(x)
        if isinstance(keep, int):
            h = h[:, -keep:] if keep > 0 else h
        elif keep is not None:
            h = h[:, keep]
        logits = self.lm_head(h)
        logits = 30.0 * torch.tanh(logits / 30.0)
        return types.SimpleNamespace(logits=logits, past_key_values=cache if use_cache else None)


class TinyLM_4_44(TinyCausalLM):
    def forward(self, input_ids=None, attention_mask=None, position_ids=None,
                past_key_values=None, use_cache=None):
        return self.run(input_ids, attention_mask, position_ids, past_key_values, use_cache, None)


class TinyLM_4_46(TinyCausalLM):
    def forward(self, input_ids=None, attention_mask=None, position_ids=None,
                past_key_values=None, use_cache=None, num_logits_to_keep=0):
        return self.run(input_ids, attention_mask, position_ids, past_key_values, use_cache,
                        int(num_logits_to_keep))


class TinyLM_4_53(TinyCausalLM):
    def forward(self, input_ids=None, attention_mask=None, position_ids=None,
                past_key_values=None, use_cache=None, logits_to_keep=0):
        return self.run(input_ids, attention_mask, position_ids, past_key_values, use_cache,
                        logits_to_keep)


CLASSES = {"4.44.2": TinyLM_4_44, "4.46.3": TinyLM_4_46, "4.53.0": TinyLM_4_53,
           "5.0.0": TinyLM_4_53}
# Local 'folders': a larger target and a smaller drafter, padded differently.
SHAPES = {"tiny/target": dict(seed=1, width=32, layers=2, vocab_rows=V + 3),
          "tiny/draft": dict(seed=2, width=16, layers=1, vocab_rows=V + 1)}


def stand_in_transformers(version, built):
    def model(path, *, local_files_only=False, **kwargs):
        assert local_files_only is True
        dtype = kwargs.pop("dtype" if version >= "4.56" else "torch_dtype")
        assert not kwargs, kwargs
        m = CLASSES[version](**SHAPES[path]).to(dtype)
        built[path] = m
        return m

    def tokenizer(path, *, local_files_only=False):
        assert local_files_only is True
        return HFLikeTokenizer(V, "tiny", version)

    t = types.ModuleType("transformers")
    t.__version__ = version
    t.AutoModelForCausalLM = types.SimpleNamespace(from_pretrained=model)
    t.AutoTokenizer = types.SimpleNamespace(from_pretrained=tokenizer)
    return t


def reference(model, prompt, response):
    """Logits [len(response), V] of one unpadded, uncached sequence, float64."""
    seq = torch.tensor([list(prompt) + list(response)[:-1]])
    with torch.no_grad():
        out = model(input_ids=seq, attention_mask=torch.ones_like(seq),
                    position_ids=torch.arange(seq.shape[1])[None], past_key_values=None,
                    use_cache=False)
    rows = out.logits[0, len(prompt) - 1:].float().numpy().astype(np.float64)
    return rows[:, :V]


class RealTorch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.prompts = os.path.join(self.tmp.name, "p.jsonl")
        self.records = [{"prompt": "in the beginning"},
                        {"prompt": "and the earth was without form and void and darkness"},
                        {"messages": [{"role": "user", "content": "who made the light"}]},
                        {"prompt": "let there be"}]
        with open(self.prompts, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in self.records))
        self.out = os.path.join(self.tmp.name, "out.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def run_hf(self, version, dtype, *args, temperature="0.8"):
        built = {}
        with mock.patch.dict(sys.modules, {"transformers": stand_in_transformers(version, built)}):
            rc, out, err = run_main("hf", "--target", "tiny/target", "--draft", "tiny/draft",
                                    "--device", "cpu", "--dtype", dtype, "--prompts",
                                    self.prompts, "-o", self.out, "--num-samples", "6",
                                    "--max-new-tokens", "7", "--seed", "3", "--gen-temperature",
                                    temperature, *args)
        self.assertEqual(rc, 0, err)
        return built

    def check(self, built, dtype, temperature):
        """Teacher-forced logits against the reference; generated tokens against the
        sampler replayed on those logits; `mdsd info --validate`."""
        # Batched and unbatched runs agree to rounding (here: exactly): 1e-4 in float32,
        # 2 ulps of the largest logits (about 7) in bfloat16.
        tol = 1e-4 if dtype == "fp32" else 0.07
        tok = HFLikeTokenizer(V, "tiny")
        with h5py.File(self.out, "r") as f:
            tokens, sid = f["tokens"][()], f["sample_id"][()]
            stored = {}
            for g, path in (("target", "tiny/target"), ("drafts/draft", "tiny/draft")):
                d = f[g]["logits"]
                bf16 = d.attrs.get("dtype") == "bfloat16"
                self.assertEqual(bf16, dtype == "bf16")
                stored[path] = from_bfloat16_bits(d[()]) if bf16 else d[()]
                self.assertEqual(int(f[g].attrs["dropped_padding"]),
                                 SHAPES[path]["vocab_rows"] - V)
        checked = total = 0
        for i in range(6):
            r = self.records[i % 4]
            prompt = (tok.apply_chat_template(r["messages"], True, True) if "messages" in r
                      else tok(r["prompt"])["input_ids"])
            response = tokens[sid == i]
            self.assertTrue(len(response) == 7 or response[-1] == EOS)
            for path, model in built.items():
                diff = np.abs(stored[path][sid == i] - reference(model, prompt, response)).max()
                self.assertLessEqual(diff, tol, (path, i))
            # The generation (left padding, cache) sampled each token from logits within
            # tol of these: replay the inverse CDF with the sample's random stream.
            rows = reference(built["tiny/target"], prompt, response)
            c, n = replay_sampler(self, response, rows, sample_rng(3, i), temperature, tol, i)
            checked, total = checked + c, total + n
        self.assertGreaterEqual(checked, 0.6 * total)
        binary = mdsd_bin()
        self.assertIsNotNone(binary, "no mdsd binary: run through make test (MDSD_BIN)")
        proc = subprocess.run([binary, "info", "--validate", self.out], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_float32_every_logits_route(self):
        """logits_to_keep (4.53, 5.0), num_logits_to_keep (4.46), the lm-head hook (4.44);
        batches of 4 split by --max-batch-tokens 40 into smaller forwards."""
        for version in CLASSES:
            with self.subTest(version=version):
                built = self.run_hf(version, "fp32", "--batch-size", "4",
                                    "--max-batch-tokens", "40")
                self.check(built, "fp32", 0.8)
                os.unlink(self.out)

    def test_bfloat16_stored_as_bfloat16(self):
        for version, temperature in (("4.44.2", "0"), ("5.0.0", "0.8")):
            with self.subTest(version=version):
                built = self.run_hf(version, "bf16", "--batch-size", "3",
                                    temperature=temperature)
                self.assertEqual(built["tiny/target"].dtype, torch.bfloat16)
                self.check(built, "bf16", float(temperature))
                os.unlink(self.out)

    def test_greedy_float32(self):
        built = self.run_hf("4.53.0", "fp32", "--batch-size", "6", temperature="0")
        self.check(built, "fp32", 0.0)

    def test_a_planted_position_slip_is_caught(self):
        """Position ids off by one in teacher forcing: the reference check must fail."""
        real = pipeline.pad_right

        def slipped(seqs, pad_id):
            ids, mask, pos = real(seqs, pad_id)
            return ids, mask, pos + 1
        with mock.patch.object(pipeline, "pad_right", slipped):
            built = self.run_hf("5.0.0", "fp32")
        with self.assertRaises(AssertionError):
            self.check(built, "fp32", 0.8)


if __name__ == "__main__":
    unittest.main()
