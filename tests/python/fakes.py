"""Torch-free stand-ins for the hf backend's adapters (same interface as hf.HFModel and
hf.HFTokenizer, see pipeline.py), used to test batching, padding, caching and position
bookkeeping exactly.

FakeLM's logits at a query are a pseudo-random function of every (token, position id)
pair the query attends to (mask 1, at or before it, cache included), as in a transformer:
any slip in padding, masks, position ids, cache handling or row selection changes them.
Columns from V on are padded embedding rows with huge logits, so that keeping them would
be caught at once."""

import hashlib
import types

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


# -- transformers stand-ins (real torch underneath) ------------------------------------------
# The API surface hf.py uses, per transformers version, strict where the real library is
# strict and where drift would otherwise go unnoticed: a keyword that a version does not
# take raises TypeError (Python's own check of the signatures below), a `dtype=` given to a
# version before 4.56 is ignored as the real one ignores it (the model loads in float32),
# and a `torch_dtype=` given to 4.56 or later is refused (deprecated there).
VERSIONS = ("4.44.2", "4.46.3", "4.53.0", "5.0.0")


def version_tuple(v):
    return tuple(int(x) for x in v.split(".")[:2])


class FakeCache:
    """DynamicCache-like (transformers >= 4.36): grows in place on every forward."""

    def __init__(self, B):
        self.ids = np.zeros((B, 0), np.int64)
        self.pos = np.zeros((B, 0), np.int64)

    def get_seq_length(self, layer_idx=0):
        return self.ids.shape[1]


def _torch_module(torch, vocab_rows, head_scale):
    nn = torch.nn

    class Head(nn.Module):
        """The lm head: hidden states are the logits divided by head_scale."""

        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(vocab_rows, 1), requires_grad=False)

        def forward(self, h):
            return h * 1.0

    class HFLikeModel(nn.Module):
        """A FakeLM behind transformers' calling convention. The last step after the head
        (a scaling, as soft-capping or Cohere's logit_scale would be) is the model's own:
        an adapter that bypassed forward would store wrong logits."""

        def __init__(self, lm, eos, version, dtype):
            super().__init__()
            self.lm = lm
            self.version = version
            self.embed = nn.Embedding(8, 2)
            self.lm_head = Head()
            self.to(dtype)
            self.generation_config = types.SimpleNamespace(eos_token_id=eos)
            self.config = types.SimpleNamespace(vocab_size=lm.model_vocab_size)
            self.positions_computed = []    # rows of logits computed per call
            self.moves = []                 # devices the runner moved it to after loading

        def to(self, *args, **kwargs):
            if "moves" in self.__dict__ and args and isinstance(args[0], (str, torch.device)):
                self.moves.append(str(args[0]))     # a stand-in has no such device: recorded
                return self
            return super().to(*args, **kwargs)

        @property
        def dtype(self):
            return self.lm_head.weight.dtype

        def get_input_embeddings(self):
            return self.embed

        def get_output_embeddings(self):
            return self.lm_head

        def _run(self, input_ids, attention_mask, position_ids, past_key_values, use_cache, keep):
            assert isinstance(input_ids, torch.Tensor) and input_ids.dtype == torch.int64
            ids, mask, pos = (t.cpu().numpy() for t in (input_ids, attention_mask, position_ids))
            B, L = ids.shape
            cache = past_key_values
            if cache is None:
                cache = FakeCache(B) if version_tuple(self.version) >= (4, 36) else \
                    (np.zeros((B, 0), np.int64), np.zeros((B, 0), np.int64))
            past_ids, past_pos = (cache.ids, cache.pos) if isinstance(cache, FakeCache) else cache
            C = past_ids.shape[1]
            assert mask.shape == (B, C + L), (mask.shape, B, C, L)
            full_ids = np.concatenate([past_ids, ids], axis=1)
            full_pos = np.concatenate([past_pos, pos], axis=1)
            hidden = np.full((B, L, self.lm.model_vocab_size), np.nan, np.float32)
            for b in range(B):
                for j in range(L):
                    if mask[b, C + j]:
                        hidden[b, j] = self.lm.logits_of(
                            [(full_ids[b, s], full_pos[b, s]) for s in range(C + j + 1) if mask[b, s]])
            h = torch.as_tensor(hidden / head_scale).to(self.dtype)
            if keep is not None:        # as transformers: an int keeps the last positions
                h = h[:, -keep:, :] if isinstance(keep, int) and keep > 0 else \
                    (h if isinstance(keep, int) else h[:, keep, :])
            logits = self.lm_head(h)
            self.positions_computed.append(logits.shape[0] * logits.shape[1])
            logits = logits * head_scale
            if use_cache:
                if isinstance(cache, FakeCache):
                    cache.ids, cache.pos = full_ids, full_pos
                else:
                    cache = (full_ids, full_pos)
            return types.SimpleNamespace(logits=logits, past_key_values=cache if use_cache else None)

    class Model_4_44(HFLikeModel):
        def forward(self, input_ids=None, attention_mask=None, position_ids=None,
                    past_key_values=None, use_cache=None):
            return self._run(input_ids, attention_mask, position_ids, past_key_values, use_cache, None)

    class Model_4_46(HFLikeModel):
        def forward(self, input_ids=None, attention_mask=None, position_ids=None,
                    past_key_values=None, use_cache=None, num_logits_to_keep=0):
            assert isinstance(num_logits_to_keep, int)
            return self._run(input_ids, attention_mask, position_ids, past_key_values, use_cache,
                             num_logits_to_keep)

    class Model_4_50(HFLikeModel):
        def forward(self, input_ids=None, attention_mask=None, position_ids=None,
                    past_key_values=None, use_cache=None, logits_to_keep=0):
            return self._run(input_ids, attention_mask, position_ids, past_key_values, use_cache,
                             logits_to_keep)

    class Model_no_position_ids(HFLikeModel):
        """OPT before transformers 4.43: positions from the attention mask's running count."""

        def forward(self, input_ids=None, attention_mask=None, past_key_values=None,
                    use_cache=None):
            L = input_ids.shape[1]
            pos = (torch.cumsum(attention_mask, dim=1) - 1).clamp(min=0)[:, -L:]
            return self._run(input_ids, attention_mask, pos, past_key_values, use_cache, None)

    return Model_4_44, Model_4_46, Model_4_50, Model_no_position_ids


class HFLikeTokenizer:
    """A transformers tokenizer as the backend uses it. From 5.0, calls return mappings
    (BatchEncoding) from apply_chat_template too. The chat template honours Qwen3's
    enable_thinking (False adds an empty think block, ids 7 8) and ignores other variables,
    as a Jinja template does."""

    def __init__(self, V, name, version="4.53.0", renamed=None):
        self.V = V
        self.name_or_path = name
        self.version = version
        self.eos_token_id = 1
        self.pad_token_id = None
        self.chat_template = "fake"
        self.renamed = renamed or {}

    def __len__(self):
        return self.V

    def get_vocab(self):
        return {self.renamed.get(i, f"t{i}"): i for i in range(self.V)}

    def _ids(self, text):
        return [9 + sum(map(ord, w)) % (self.V - 9) for w in text.split()]

    def __call__(self, text):
        return {"input_ids": [2] + self._ids(text), "attention_mask": [1] * (1 + len(text.split()))}

    def apply_chat_template(self, conversation, add_generation_prompt=False, tokenize=True,
                            **template_vars):
        assert tokenize is True and add_generation_prompt is True
        ids = [2]
        for m in conversation:
            ids += [4 if m["role"] == "user" else 5] + self._ids(m["content"])
        ids += [6]
        if template_vars.get("enable_thinking") is False:
            ids += [7, 8]
        if version_tuple(self.version) >= (5, 0):
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}
        return ids

    def convert_ids_to_tokens(self, ids):
        return [self.renamed.get(i, f"t{i}") for i in ids]


class FakeHub:
    """Local 'folders' by name for one transformers version; anything else fails as
    from_pretrained does offline. head_scale: see HFLikeModel."""

    def __init__(self, V, version="4.53.0", padding=3, head_scale=2.0, accelerate=True):
        import torch
        self.torch = torch
        self.V = V
        self.version = version
        self.calls = []
        self.options = []       # (kind, path, revision, trust_remote_code[, attn_implementation])
        self.accelerate = accelerate
        self.loaded = {}
        self.lms = {"fake/target": FakeLM(V, padding=padding, seed=1),
                    "fake/draft": FakeLM(V, padding=padding, seed=2),
                    "fake/draft2": FakeLM(V, padding=padding, seed=3),
                    "fake/other-tokenizer": FakeLM(V, padding=padding, seed=4)}
        self.toks = {name: HFLikeTokenizer(V, name, version) for name in self.lms}
        self.toks["fake/other-tokenizer"] = HFLikeTokenizer(V, "other", version, renamed={7: "seven"})
        old, mid, new, self.no_position_ids = _torch_module(torch, V + padding, head_scale)
        v = version_tuple(version)
        self.model_class = new if v >= (4, 50) else mid if v >= (4, 45) else old

    def modules(self):
        hub, torch = self, self.torch
        new_dtype = version_tuple(hub.version) >= (4, 56)

        def tokenizer(path, *, local_files_only=False, revision=None, trust_remote_code=False):
            hub.calls.append(("tokenizer", path, local_files_only))
            hub.options.append(("tokenizer", path, revision, trust_remote_code))
            if path not in hub.toks:
                raise OSError(f"{path} is not a local folder and not in the cache")
            return hub.toks[path]

        def model(path, *model_args, local_files_only=False, device_map=None, revision=None,
                  trust_remote_code=False, attn_implementation=None, **kwargs):
            assert not model_args
            if new_dtype and "torch_dtype" in kwargs:
                raise TypeError("torch_dtype is deprecated! Use dtype instead!")
            dtype = kwargs.pop("dtype" if new_dtype else "torch_dtype", None)
            # Any other keyword goes to the config and is ignored, as in transformers.
            hub.calls.append(("model", path, dtype, local_files_only, device_map))
            hub.options.append(("model", path, revision, trust_remote_code, attn_implementation))
            if device_map is not None and not hub.accelerate:
                raise ImportError("Using a `device_map` requires `accelerate`")
            if path not in hub.lms:
                raise OSError(f"{path} is not a local folder and not in the cache")
            m = hub.model_class(hub.lms[path], [1], hub.version, dtype or torch.float32)
            hub.loaded[path] = m
            return m

        transformers = types.ModuleType("transformers")
        transformers.__version__ = hub.version
        transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=tokenizer)
        transformers.AutoModelForCausalLM = types.SimpleNamespace(from_pretrained=model)
        return {"transformers": transformers}
