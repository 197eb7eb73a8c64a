"""Torch-free stand-ins for the hf backend's adapters (same interface as hf.HFModel and
hf.HFTokenizer, see pipeline.py), used to test batching, padding, caching and position
bookkeeping exactly.

FakeLM's logits at a query are a pseudo-random function of every (token, position id)
pair the query attends to (mask 1, at or before it, cache included), as in a transformer:
any slip in padding, masks, position ids, cache handling or row selection changes them.
Columns from V on are padded embedding rows with huge logits, so that keeping them would
be caught at once."""

import hashlib

import numpy as np

import support  # noqa: F401  (puts src/ on the path)
from mdsd_runner.pipeline import sample_token

EOS = 1


class FakeLM:
    def __init__(self, V, padding=0, seed=0, name="fake", eos_boost=1.5):
        self.V = V
        self.model_vocab_size = V + padding
        self.seed = seed
        self.name = name
        self.eos_boost = eos_boost
        self.calls = 0
        self.fail_after = None      # raise KeyboardInterrupt on that forward call

    def logits_of(self, attended):
        """attended: sequence of (token, position id)."""
        data = np.array(attended, dtype=np.int64).tobytes() + self.seed.to_bytes(4, "little")
        key = int.from_bytes(hashlib.sha256(data).digest()[:8], "little")
        out = np.random.default_rng(key).normal(0.0, 2.0, self.model_vocab_size)
        out[EOS] += self.eos_boost
        out[self.V:] = 50.0
        return out.astype(np.float32)

    def forward(self, ids, mask, pos, select, cache=None, keep_cache=False):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise KeyboardInterrupt
        B, L = ids.shape
        past_ids, past_pos = cache if cache is not None else (
            np.zeros((B, 0), np.int64), np.zeros((B, 0), np.int64))
        C = past_ids.shape[1]
        assert mask.shape == (B, C + L) and pos.shape == (B, L), (mask.shape, pos.shape)
        full_ids = np.concatenate([past_ids, ids], axis=1)
        full_pos = np.concatenate([past_pos, pos], axis=1)
        out = []
        for b, j in zip(select[0], select[1]):
            t = C + int(j)
            assert mask[b, t] == 1, f"logits of a padding position ({b}, {j}) requested"
            out.append(self.logits_of([(full_ids[b, s], full_pos[b, s])
                                       for s in range(t + 1) if mask[b, s]]))
        return np.array(out).reshape(len(out), self.model_vocab_size), \
            ((full_ids, full_pos) if keep_cache else None)


class FakeTokenizer:
    """Words to ids by hashing; every prompt starts with BOS id 2."""

    def __init__(self, V, name="fake-tokenizer"):
        self.name = name
        self.vocab_size = V
        self.eos_ids = frozenset([EOS])
        self.pad_id = 0

    def encode(self, record, where):
        words = record["prompt"].split()
        return [2] + [3 + int(hashlib.md5(w.encode()).hexdigest(), 16) % (self.vocab_size - 3)
                      for w in words]

    def tokens(self):
        return [f"t{i}" for i in range(self.vocab_size)]

    def get_vocab(self):
        return {t: i for i, t in enumerate(self.tokens())}


def reference_sample(model, V, prompt, max_new_tokens, temperature, rng, eos_ids=(EOS,)):
    """One sample without batching, padding or cache: (response, target logits rows)."""
    seq, response, rows = list(prompt), [], []
    for _ in range(max_new_tokens):
        logits = model.logits_of([(t, s) for s, t in enumerate(seq)])[:V]
        tok = sample_token(logits, temperature, rng)
        response.append(tok)
        rows.append(logits)
        seq.append(tok)
        if tok in eos_ids:
            break
    return response, np.array(rows)


def reference_logits(model, V, prompt, response):
    seq = list(prompt) + list(response)
    return np.array([model.logits_of([(t, s) for s, t in enumerate(seq[:len(prompt) + j])])[:V]
                     for j in range(len(response))])
