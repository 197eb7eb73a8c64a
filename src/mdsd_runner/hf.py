"""The `hf` backend: PyTorch + transformers causal language models from local folders or
the local Hugging Face cache (never downloads: local_files_only and HF_HUB_OFFLINE).
torch and transformers are imported only when the backend runs, so that the rest of the
runner works without them."""

import os
import re

import numpy as np

from .errors import RunnerError

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def _import():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        import transformers
    except ImportError as e:
        raise RunnerError(f"the hf backend needs PyTorch and transformers ({e}); install "
                          "them, e.g. `pip install torch transformers`") from None
    return torch, transformers


def check_same_vocab(ref_name, ref_tok, name, tok):
    """Refuses a drafter whose tokenizer maps any token id differently from the target's."""
    a, b = ref_tok.get_vocab(), tok.get_vocab()
    if a == b:
        return
    if len(a) != len(b):
        raise RunnerError(f"tokenizers differ: {ref_name} has {len(a)} tokens, {name} has "
                          f"{len(b)}; every drafter must share the target's tokenizer")
    ia = {i: t for t, i in a.items()}
    ib = {i: t for t, i in b.items()}
    i = min(k for k in set(ia) | set(ib) if ia.get(k) != ib.get(k))
    raise RunnerError(f"tokenizers differ: token id {i} is {ia.get(i)!r} in {ref_name} but "
                      f"{ib.get(i)!r} in {name}; every drafter must share the target's tokenizer")


def draft_names(paths):
    """Group names under /drafts: the folder's base name, made unique."""
    names = []
    for p in paths:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(os.path.normpath(p))) or "draft"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


def eos_ids_of(tok, generation_config):
    ids = set()
    for v in (getattr(tok, "eos_token_id", None),
              getattr(generation_config, "eos_token_id", None) if generation_config else None):
        if isinstance(v, int):
            ids.add(v)
        elif isinstance(v, (list, tuple)):
            ids.update(int(x) for x in v)
    return ids


class HFTokenizer:
    """The runner's tokenizer interface over a transformers tokenizer. {"messages"} records,
    and with chat=True also {"prompt"} ones (as one user message), use the chat template."""

    def __init__(self, tok, name, eos_ids, chat=False):
        self.tok = tok
        self.name = name
        self.vocab_size = len(tok)
        self.eos_ids = frozenset(eos_ids)
        pad = getattr(tok, "pad_token_id", None)
        self.pad_id = pad if pad is not None else (min(eos_ids) if eos_ids else 0)
        self.chat = chat

    def encode(self, record, where):
        if "messages" in record or self.chat:
            messages = record.get("messages") or [{"role": "user", "content": record["prompt"]}]
            if not getattr(self.tok, "chat_template", None):
                raise RunnerError(f"{where}: a chat prompt, but the tokenizer of {self.name} has "
                                  "no chat template")
            ids = self.tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
            if hasattr(ids, "keys"):
                ids = ids["input_ids"]
        else:
            ids = self.tok(record["prompt"])["input_ids"]
        return [int(i) for i in ids]

    def tokens(self):
        return [str(t) for t in self.tok.convert_ids_to_tokens(list(range(self.vocab_size)))]


class HFModel:
    """The runner's model interface (pipeline.py) over a transformers causal LM."""

    def __init__(self, model, name, torch, device):
        self.model = model
        self.name = name
        self.torch = torch
        self.device = device
        emb = model.get_output_embeddings()
        self.model_vocab_size = int(emb.weight.shape[0] if emb is not None else model.config.vocab_size)

    def forward(self, ids, mask, pos, select, cache=None, keep_cache=False):
        torch = self.torch

        def t(a):
            return torch.as_tensor(np.asarray(a, dtype=np.int64), device=self.device)

        with torch.inference_mode():
            out = self.model(input_ids=t(ids), attention_mask=t(mask), position_ids=t(pos),
                             past_key_values=cache, use_cache=keep_cache)
            logits = out.logits[t(select[0]), t(select[1])].float().cpu().numpy()
        return logits, (out.past_key_values if keep_cache else None)


def load(target, drafts, device="cuda", dtype="bf16", chat=False):
    """(tokenizer, target HFModel, [(name, HFModel)]) from local files."""
    torch, transformers = _import()
    if device == "cuda" and not torch.cuda.is_available():
        raise RunnerError("--device cuda, but PyTorch finds no CUDA device; use --device cpu")

    def tokenizer(path):
        try:
            return transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as e:
            raise RunnerError(f"cannot load the tokenizer of {path} from local files: {e}") from None

    def model(path):
        try:
            m = transformers.AutoModelForCausalLM.from_pretrained(
                path, torch_dtype=getattr(torch, DTYPES[dtype]), local_files_only=True)
        except (OSError, ValueError) as e:
            raise RunnerError(f"cannot load the model {path} from local files: {e}") from None
        return m.to(device).eval()

    tok = tokenizer(target)
    for d in drafts:
        check_same_vocab(target, tok, d, tokenizer(d))
    target_model = model(target)
    eos = eos_ids_of(tok, getattr(target_model, "generation_config", None))
    wrapped = HFModel(target_model, target, torch, device)
    draft_models = [(name, HFModel(model(path), path, torch, device))
                    for name, path in zip(draft_names(drafts), drafts)]
    return HFTokenizer(tok, getattr(tok, "name_or_path", target) or target, eos, chat), \
        wrapped, draft_models
