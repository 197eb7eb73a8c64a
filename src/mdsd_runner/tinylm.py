"""A small causal transformer language model in plain PyTorch (no transformers library):
the model the `torch` backend runs and `mdsd_runner.train` trains (data/README.md,
"The neural pair").

A model is a folder holding
    config.json   {"format": "mdsd-tinylm", "version": 1, "name", "vocab_size" (V),
                   "n_ctx" (positions), "d_model", "n_layer", "n_head", "d_ff",
                   "tokenizer" (its name), "training" (how it was made; optional)}
    vocab.txt     the V token strings, one a line (id = line number - 1): a word tokenizer
                  (ngram.WordVocab: <unk>, </s>, <s>, then words; lower-cased words and
                  punctuation marks, as the ngram backend splits text)
    model.pt      a state dict (torch.save; loaded with weights_only=True)
Architecture (GPT-2's, pre-LayerNorm): token and learned position embeddings; n_layer blocks
of causal multi-head self-attention and a GELU MLP (d_model -> d_ff -> d_model), each behind a
LayerNorm and added to the residual stream; a final LayerNorm; the output layer is the token
embedding (tied). Attention runs in float32 whatever the weights' type."""

import json
import math
import os

import torch
from torch import nn
from torch.nn import functional as F

from .errors import RunnerError

FORMAT = "mdsd-tinylm"
SHAPE_KEYS = ("vocab_size", "n_ctx", "d_model", "n_layer", "n_head", "d_ff")


def check_config(config, where):
    """Refuses a config whose shape fields are missing or inconsistent (names the file)."""
    if not isinstance(config, dict) or config.get("format") != FORMAT or config.get("version") != 1:
        raise RunnerError(f"{where}: not an {FORMAT} version 1 config (\"format\": \"{FORMAT}\", "
                          "\"version\": 1)")
    for key in SHAPE_KEYS:
        v = config.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1 << 20:
            raise RunnerError(f"{where}: \"{key}\" must be a positive integer, not {v!r}")
    if config["d_model"] % config["n_head"]:
        raise RunnerError(f"{where}: d_model {config['d_model']} is not a multiple of n_head "
                          f"{config['n_head']}")
    for key in ("name", "tokenizer"):
        if not isinstance(config.get(key), str) or not config[key]:
            raise RunnerError(f"{where}: \"{key}\" must be a non-empty string")
    return config


class Block(nn.Module):
    def __init__(self, d_model, n_head, d_ff):
        super().__init__()
        self.n_head = n_head
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, d_ff)
        self.out = nn.Linear(d_ff, d_model)

    def forward(self, x, bias, past=None):
        """x [B, L, D]; bias [B or 1, 1, L, C+L] (0 or -inf); past (k, v) [B, H, C, D/H] or
        None. Returns x and this layer's (k, v) over the C+L positions."""
        B, L, D = x.shape
        q, k, v = (t.view(B, L, self.n_head, D // self.n_head).transpose(1, 2)
                   for t in self.qkv(self.ln1(x)).chunk(3, dim=-1))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(D // self.n_head) + bias
        a = (torch.softmax(scores, dim=-1) @ v.float()).to(x.dtype)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return x, (k, v)


class TinyLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = config
        self.n_ctx = c["n_ctx"]
        self.embed = nn.Embedding(c["vocab_size"], c["d_model"])
        self.positions = nn.Embedding(c["n_ctx"], c["d_model"])
        self.blocks = nn.ModuleList(Block(c["d_model"], c["n_head"], c["d_ff"])
                                    for _ in range(c["n_layer"]))
        self.ln_f = nn.LayerNorm(c["d_model"])

    def init_weights(self, generator):
        """GPT-2's initialisation: N(0, 0.02), residual projections scaled by
        1/sqrt(2 n_layer), biases 0, LayerNorms 1."""
        scale = 0.02 / math.sqrt(2 * len(self.blocks))
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif ".ln" in name or name.startswith("ln_"):
                    p.fill_(1.0)
                else:
                    std = scale if name.endswith(("proj.weight", "out.weight")) else 0.02
                    p.copy_(torch.randn(p.shape, generator=generator) * std)

    def hidden(self, ids, pos, bias, cache=None):
        """Final-LayerNorm hidden states [B, L, D] and the new cache (one (k, v) a layer)."""
        x = self.embed(ids) + self.positions(pos)
        new = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, bias, None if cache is None else cache[i])
            new.append(kv)
        return self.ln_f(x), new

    def head(self, h):
        return h @ self.embed.weight.t()

    def forward(self, ids):
        """Logits [B, L, V] of right-padded sequences starting at position 0 (training)."""
        L = ids.shape[1]
        causal = torch.ones(L, L, dtype=torch.bool, device=ids.device).tril()
        bias = torch.zeros(L, L, device=ids.device).masked_fill(~causal, float("-inf"))
        pos = torch.arange(L, device=ids.device)[None].expand_as(ids)
        return self.head(self.hidden(ids, pos, bias[None, None])[0])


def read_vocab(path):
    try:
        with open(path, encoding="utf-8") as f:
            tokens = f.read().split("\n")
    except FileNotFoundError:
        raise RunnerError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunnerError(f"cannot read {path}: {e}") from None
    if tokens and tokens[-1] == "":
        tokens.pop()
    for i, t in enumerate(tokens):
        if not t or t != t.strip() or any(c.isspace() for c in t):
            raise RunnerError(f"{path} line {i + 1}: a token must be non-empty without spaces, "
                              f"not {t!r}")
    if len(set(tokens)) != len(tokens):
        raise RunnerError(f"{path}: tokens repeat")
    return tokens


def load_folder(folder, device="cpu", dtype=torch.float32):
    """(config, vocab tokens, TinyLM in eval mode on device in dtype) from a model folder."""
    cpath = os.path.join(folder, "config.json")
    try:
        with open(cpath, encoding="utf-8") as f:
            config = json.load(f)
    except FileNotFoundError:
        raise RunnerError(f"{folder} is not a model folder: {cpath} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunnerError(f"cannot read {cpath}: {e}") from None
    check_config(config, cpath)
    vocab = read_vocab(os.path.join(folder, "vocab.txt"))
    if len(vocab) != config["vocab_size"]:
        raise RunnerError(f"{folder}: vocab.txt has {len(vocab)} tokens, config.json says "
                          f"vocab_size {config['vocab_size']}")
    wpath = os.path.join(folder, "model.pt")
    model = TinyLM(config)
    try:
        state = torch.load(wpath, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise RunnerError(f"{wpath} does not exist") from None
    except Exception as e:  # a corrupt zip or pickle: torch raises many kinds
        raise RunnerError(f"cannot load {wpath}: {type(e).__name__}: {e}") from None
    want = model.state_dict()
    if not isinstance(state, dict) or set(state) != set(want):
        got = set(state) if isinstance(state, dict) else set()
        raise RunnerError(f"{wpath}: the state dict does not fit config.json (missing "
                          f"{sorted(set(want) - got)[:3]}, unexpected {sorted(got - set(want))[:3]})")
    for key, t in state.items():
        if not torch.is_tensor(t) or tuple(t.shape) != tuple(want[key].shape) or \
                not t.is_floating_point():
            raise RunnerError(f"{wpath}: {key} has shape {tuple(getattr(t, 'shape', ()))}, "
                              f"config.json needs {tuple(want[key].shape)} (floating point)")
        if not torch.isfinite(t).all():
            raise RunnerError(f"{wpath}: {key} holds NaN or infinite weights")
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()})
    return config, vocab, model.to(device=device, dtype=dtype).eval()


def save_folder(folder, config, vocab, model, dtype=torch.float16):
    """Writes config.json, vocab.txt and model.pt (weights in dtype), each atomically."""
    os.makedirs(folder, exist_ok=True)
    check_config(config, "config")

    def atomic(name, write):
        from .outputs import atomic_file
        with atomic_file(os.path.join(folder, name)) as f:
            write(f)
    atomic("config.json", lambda f: f.write((json.dumps(config, indent=1, sort_keys=True)
                                              + "\n").encode()))
    atomic("vocab.txt", lambda f: f.write("".join(t + "\n" for t in vocab).encode()))
    state = {k: v.detach().to("cpu", dtype).contiguous() for k, v in model.state_dict().items()}
    atomic("model.pt", lambda f: torch.save(state, f))
