#!/usr/bin/python3
"""`make bench-runner-memory` (a measurement, not a test): peak memory of `mdsd-runner hf`
on CPU with the tiny causal LM of tests/python/test_hf_torch.py widened to Qwen2's
vocabulary (V = 152,064), computing logits only at the stored positions (logits_to_keep, or the
adapter's lm-head hook for a model without it) against the same network computing them at
every position (its head called as a plain
function, so neither logits_to_keep nor the adapter's lm-head hook applies: the adapter's
behaviour before issue 17). Each run is its own process; peak = ru_maxrss.

Usage: runner_memory.py [--prompt-tokens N] [--batch-size B] [--new-tokens M]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VOCAB = 152064


def child(mode, prompts, out, batch, new):
    sys.path[:0] = [os.path.join(ROOT, "src"), os.path.join(ROOT, "tests", "python")]
    import types
    from unittest import mock

    import torch
    import test_hf_torch as t

    shapes = {"tiny/target": dict(seed=1, width=32, layers=2, vocab_rows=VOCAB, max_positions=1024),
              "tiny/draft": dict(seed=2, width=16, layers=1, vocab_rows=VOCAB, max_positions=1024)}
    cls = t.TinyLM_4_44 if mode == "lm_head_hook" else t.TinyLM_4_53
    if mode == "full":
        # Every position's logits, as before: the head applied outside any module call.
        orig = t.TinyCausalLM.run

        def run_full(self, input_ids, attention_mask, position_ids, past, use_cache, keep):
            head = self.lm_head
            self._modules.pop("lm_head")
            object.__setattr__(self, "lm_head", lambda h: torch.nn.functional.linear(h, head.weight))
            try:
                return orig(self, input_ids, attention_mask, position_ids, past, use_cache, None)
            finally:
                object.__delattr__(self, "lm_head")
                self._modules["lm_head"] = head
        cls = type("Full", (t.TinyLM_4_44,), {"run": run_full})

    def model(path, *, local_files_only=False, **kw):
        return cls(**shapes[path]).to(kw.pop("dtype", None) or kw.pop("torch_dtype"))

    def tokenizer(path, *, local_files_only=False):
        return t.HFLikeTokenizer(VOCAB - 8, "tiny", "4.53.0")

    fake = types.ModuleType("transformers")
    fake.__version__ = "4.53.0"
    fake.AutoModelForCausalLM = types.SimpleNamespace(from_pretrained=model)
    fake.AutoTokenizer = types.SimpleNamespace(from_pretrained=tokenizer)
    from support import run_main
    t0 = time.time()
    with mock.patch.dict(sys.modules, {"transformers": fake}):
        rc, _, err = run_main("hf", "--target", "tiny/target", "--draft", "tiny/draft",
                              "--device", "cpu", "--dtype", "fp32", "--prompts", prompts,
                              "-o", out, "--num-samples", str(batch), "--batch-size", str(batch),
                              "--max-new-tokens", str(new), "--gen-temperature", "1",
                              "--max-batch-tokens", "100000", "--compression", "none", "-q")
    assert rc == 0, err
    print(json.dumps({"mode": mode, "seconds": round(time.time() - t0, 2),
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-tokens", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--new-tokens", type=int, default=8)
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        mode, prompts, out, batch, new = a.child
        return child(mode, prompts, out, int(batch), int(new))
    with tempfile.TemporaryDirectory() as tmp:
        prompts = os.path.join(tmp, "p.jsonl")
        with open(prompts, "w") as f:
            for i in range(a.batch_size):
                words = " ".join(f"w{(i * 7 + j) % 97}" for j in range(a.prompt_tokens - 1 - i))
                f.write(json.dumps({"prompt": words}) + "\n")
        print(f"V = {VOCAB}, {a.batch_size} prompts of about {a.prompt_tokens} tokens, "
              f"{a.new_tokens} new tokens, float32 on CPU")
        for mode in ("full", "logits_to_keep", "lm_head_hook"):
            out = os.path.join(tmp, mode + ".h5")
            proc = subprocess.run([sys.executable, __file__, "--child", mode, prompts, out,
                                   str(a.batch_size), str(a.new_tokens)],
                                  capture_output=True, text=True)
            if proc.returncode:
                sys.exit(proc.stderr)
            print(proc.stdout.strip())


if __name__ == "__main__":
    main()
