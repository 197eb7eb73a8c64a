"""The `torch` backend: causal transformers of tinylm.py (a config, a vocabulary and a state
dict in a folder; plain PyTorch, no transformers library), on CPU or CUDA, through the same
pipeline as `hf` (pipeline.py: prompts, per-sample random streams, generation with a cache,
teacher forcing, logits only at the stored positions; trees.py for tree dumps).

The tokenizer is the models' word vocabulary (vocab.txt) with the ngram backend's rules
(ngram.NgramTokenizer: `<s>` + lower-cased words and punctuation marks, `</s>` ends a
response); every drafter must have the target's vocabulary and tokenizer name."""

import hashlib
import os
import re
import sys

import numpy as np

from .errors import RunnerError, install_hint

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def add_arguments(p):
    """The torch command's own options (the shared ones come from cli._common)."""
    p.add_argument("--target", required=True, metavar="DIR",
                   help="target model folder (config.json, vocab.txt, model.pt)")
    p.add_argument("--draft", required=True, action="append", metavar="DIR",
                   help="drafter model folder (repeatable); must have the target's vocabulary")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where the models run (default cpu)")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="fp32",
                   help="compute type of the weights (default fp32; fp16 needs --device cuda)")
    p.add_argument("--threads", type=int, metavar="N",
                   help="CPU threads for torch (default: torch's own choice)")


def _import():
    try:
        import torch
    except ImportError as e:
        raise RunnerError(f"the torch backend needs PyTorch ({e}).\n"
                          + install_hint(["torch"])) from None
    return torch


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class TorchModel:
    """The runner's model interface (pipeline.py) over a tinylm.TinyLM. The cache is the
    per-layer keys and values of the rows so far; a query sees the real keys up to its own
    position (and itself, so that a padding row's softmax has one finite entry)."""

    def __init__(self, model, name, n_ctx, torch):
        self.model = model
        self.name = name
        self.n_ctx = n_ctx
        self.torch = torch
        self.device = model.embed.weight.device
        self.model_vocab_size = int(model.embed.weight.shape[0])

    def forward(self, ids, mask, pos, select, cache=None, keep_cache=False):
        torch = self.torch
        ids, mask, pos = (np.asarray(a, dtype=np.int64) for a in (ids, mask, pos))
        rows, cols = (np.asarray(a, dtype=np.int64) for a in select)
        B, L = ids.shape
        C = mask.shape[1] - L
        if pos.size and int(pos.max()) >= self.n_ctx:
            raise RunnerError(f"model {self.name} has {self.n_ctx} positions; a sequence needs "
                              f"position {int(pos.max())} (shorten the prompts or "
                              "--max-new-tokens)")

        def t(a):
            return torch.as_tensor(a, device=self.device)
        with torch.inference_mode():
            key = torch.arange(C + L, device=self.device)[None, :]
            query = torch.arange(C, C + L, device=self.device)[:, None]
            allowed = ((key <= query)[None] & t(mask)[:, None, :].bool()) | (key == query)[None]
            bias = torch.zeros(allowed.shape, device=self.device).masked_fill(
                ~allowed, float("-inf"))[:, None]                     # [B, 1, L, C+L]
            h, new = self.model.hidden(t(ids), t(pos), bias, cache)
            logits = self.model.head(h[t(rows), t(cols)]).float().to("cpu").numpy()
        return logits, (new if keep_cache else None)


def _unique_names(names):
    out = []
    for n in names:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", n) or "draft"
        name, k = base, 2
        while name in out:
            name, k = f"{base}-{k}", k + 1
        out.append(name)
    return out


def setup(args):
    """(tokenizer, target TorchModel, [(name, TorchModel)], runner config, logits dtype)."""
    torch = _import()
    from . import ngram, tinylm
    if args.device == "cuda" and not torch.cuda.is_available():
        raise RunnerError("--device cuda, but PyTorch finds no CUDA device; use --device cpu")
    if args.dtype == "fp16" and args.device == "cpu":
        raise RunnerError("--dtype fp16 needs --device cuda (PyTorch's CPU matrix products "
                          "have no float16); use fp32 or bf16 on the CPU")
    if args.threads is not None:
        if args.threads < 1:
            raise RunnerError(f"--threads must be at least 1, not {args.threads}")
        torch.set_num_threads(args.threads)
    dtype = getattr(torch, DTYPES[args.dtype])
    loaded = [tinylm.load_folder(path, args.device, dtype) for path in [args.target] + args.draft]
    (tconfig, vocab, _), drafts = loaded[0], loaded[1:]
    for path, (config, dvocab, _) in zip(args.draft, drafts):
        if dvocab != vocab or config["tokenizer"] != tconfig["tokenizer"]:
            i = next((i for i, (a, b) in enumerate(zip(vocab, dvocab)) if a != b),
                     min(len(vocab), len(dvocab)))
            raise RunnerError(f"{path}: its tokenizer differs from the target's ({args.target}): "
                              f"{config['tokenizer']!r} vs {tconfig['tokenizer']!r}, first "
                              f"differing token id {i}; every drafter must share the target's "
                              "tokenizer")
    if tuple(vocab[:3]) != ngram.SPECIALS:
        raise RunnerError(f"{args.target}/vocab.txt must start with {', '.join(ngram.SPECIALS)} "
                          f"(the word tokenizer's specials), not {vocab[:3]}")
    tokenizer = ngram.NgramTokenizer(ngram.WordVocab(vocab[3:]), tconfig["tokenizer"])
    names = _unique_names([c["name"] for c, _, _ in drafts])
    target = TorchModel(loaded[0][2], tconfig["name"], tconfig["n_ctx"], torch)
    draft_models = [(name, TorchModel(m, c["name"], c["n_ctx"], torch))
                    for name, (c, _, m) in zip(names, drafts)]
    weights = {path: sha256(os.path.join(path, "model.pt")) for path in [args.target] + args.draft}
    config = dict(target=args.target, drafts=args.draft, dtype=args.dtype, device=args.device,
                  weights_sha256=weights, python=sys.version.split()[0],
                  torch=str(torch.__version__))
    logits_dtype = DTYPES[args.dtype] if args.logits_dtype == "auto" else args.logits_dtype
    return tokenizer, target, draft_models, config, logits_dtype
