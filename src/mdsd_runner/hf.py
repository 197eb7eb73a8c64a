"""The `hf` backend: PyTorch + transformers causal language models from local folders or
the local Hugging Face cache (never downloads: local_files_only and HF_HUB_OFFLINE).
torch and transformers are imported only when the backend runs, so that the rest of the
runner works without them.

What it relies on of transformers (tests/python/fakes.py mirrors each, per version):
  AutoTokenizer.from_pretrained(path, local_files_only=True[, revision=, trust_remote_code=])
  AutoModelForCausalLM.from_pretrained(path, dtype= (>= 4.56) or torch_dtype= (before),
      local_files_only=True[, device_map=, revision=, trust_remote_code=,
      attn_implementation=])
  model(input_ids, attention_mask, position_ids, past_key_values, use_cache
      [, logits_to_keep= (>= 4.50: int or index tensor) or num_logits_to_keep= (int)]).logits
  model.get_output_embeddings() (a module: the lm head), get_input_embeddings(), dtype
  tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, **kw)
      -> ids, or (5.x) a mapping with "input_ids"
Logits are computed only at the positions the pipeline stores: through logits_to_keep or
num_logits_to_keep where the model's forward takes one, else by a pre-hook on the lm head
that keeps only those hidden states (the model's own code still applies whatever follows
the head: soft-capping, scaling)."""

import inspect
import json
import os
import re
import sys

import numpy as np

from .errors import RunnerError, install_hint

# --dtype: the torch dtype the weights are loaded in, and the stored logits type that
# --logits-dtype auto picks for it (the dump format has all three).
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
# Keys of apply_chat_template that the runner sets itself.
RESERVED_TEMPLATE_KEYS = ("conversation", "messages", "add_generation_prompt", "tokenize",
                          "return_dict", "return_tensors")


def _import():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        import transformers
    except ImportError as e:
        raise RunnerError(f"the hf backend needs PyTorch and transformers ({e}).\n"
                          + install_hint(["torch", "transformers"])) from None
    return torch, transformers


def version_tuple(version):
    """(major, minor) of a version string such as '4.56.2' or '5.0.0rc1'; None if not one."""
    m = re.match(r"\s*(\d+)\.(\d+)", str(version or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def dtype_keyword(transformers):
    """The from_pretrained keyword for the weights' type: `dtype` from transformers 4.56 on
    (where `torch_dtype` is deprecated), `torch_dtype` before (where `dtype` would be
    passed on to the config and silently ignored)."""
    v = version_tuple(getattr(transformers, "__version__", None))
    if v is not None:
        return "dtype" if v >= (4, 56) else "torch_dtype"
    try:
        params = inspect.signature(transformers.PreTrainedModel.from_pretrained).parameters
    except (AttributeError, TypeError, ValueError):
        return "dtype"
    return "torch_dtype" if "torch_dtype" in params and "dtype" not in params else "dtype"


def takes(model, name):
    """Whether model.forward takes keyword NAME (or any keyword; True when unknown)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (AttributeError, TypeError, ValueError):
        return True
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def keep_keyword(model):
    """`logits_to_keep` or `num_logits_to_keep` if the model's forward names it, else None."""
    try:
        params = inspect.signature(model.forward).parameters
    except (AttributeError, TypeError, ValueError):
        return None
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return name
    return None


def parse_device_map(text):
    """--device-map: a name accelerate knows (auto, balanced, balanced_low_0, sequential), a
    device (cpu, cuda, cuda:1), or a JSON object {module name: device}."""
    if text is None:
        return None
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise RunnerError(f"--device-map: malformed JSON ({e.msg} at column {e.colno})") from None
        if not value or not all(isinstance(k, str) and isinstance(v, (str, int)) and
                                not isinstance(v, bool) for k, v in value.items()):
            raise RunnerError("--device-map: a JSON object must map module names to devices "
                              "(a string or a GPU number)")
        return value
    if not re.fullmatch(r"auto|balanced|balanced_low_0|sequential|cpu|cuda(:\d+)?|\d+", text):
        raise RunnerError(f"--device-map {text!r}: expected auto, balanced, balanced_low_0, "
                          "sequential, a device (cpu, cuda:N) or a JSON object")
    return int(text) if text.isdigit() else text


def parse_revisions(values, models):
    """--revision [MODEL=]REV (repeatable): {model: revision}. A plain REV is every model's
    (those named by MODEL= excepted); MODEL must be the --target or a --draft."""
    common, named = None, {}
    for value in values or ():
        model, eq, rev = value.rpartition("=") if "=" in value else ("", "", value)
        if eq and model not in models:
            raise RunnerError(f"--revision {value}: {model!r} is not the --target or a --draft "
                              f"({', '.join(models)})")
        if not rev.strip():
            raise RunnerError(f"--revision {value!r}: an empty revision")
        if not eq:
            if common is not None:
                raise RunnerError(f"--revision given twice without a model ({common}, {rev})")
            common = rev
        elif model in named:
            raise RunnerError(f"--revision: {model} given twice ({named[model]}, {rev})")
        else:
            named[model] = rev
    return {m: named.get(m, common) for m in models if named.get(m, common) is not None}


def parse_template_kwargs(text):
    """--chat-template-kwargs: a JSON object passed to the chat template."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise RunnerError(f"--chat-template-kwargs: malformed JSON ({e.msg} at column "
                          f"{e.colno})") from None
    if not isinstance(value, dict):
        raise RunnerError(f"--chat-template-kwargs must be a JSON object, not {text}")
    clash = sorted(set(value) & set(RESERVED_TEMPLATE_KEYS))
    if clash:
        raise RunnerError(f"--chat-template-kwargs: {', '.join(clash)} is set by the runner")
    return value


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

    def __init__(self, tok, name, eos_ids, chat=False, template_kwargs=None):
        self.tok = tok
        self.template_kwargs = dict(template_kwargs or {})
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
            try:
                ids = self.tok.apply_chat_template(messages, add_generation_prompt=True,
                                                   tokenize=True, **self.template_kwargs)
            except Exception as e:  # jinja2's errors, a template's raise_exception, ...
                raise RunnerError(f"{where}: the chat template of {self.name} failed: "
                                  f"{type(e).__name__}: {e}") from None
            if hasattr(ids, "keys"):        # transformers 5: a BatchEncoding
                ids = ids["input_ids"]
            if hasattr(ids, "tolist"):
                ids = ids.tolist()
            if len(ids) == 1 and isinstance(ids[0], (list, tuple)):
                ids = ids[0]                # a batch of one conversation
        else:
            ids = self.tok(record["prompt"])["input_ids"]
        return [int(i) for i in ids]

    def tokens(self):
        return [str(t) for t in self.tok.convert_ids_to_tokens(list(range(self.vocab_size)))]


class HFModel:
    """The runner's model interface (pipeline.py) over a transformers causal LM. Logits are
    computed only at the selected positions (module docstring) and come back as float32
    numpy arrays [K, model_vocab_size]; a bf16 or fp16 model's logits convert exactly."""

    def __init__(self, model, name, torch):
        self.model = model
        self.name = name
        self.torch = torch
        emb = model.get_input_embeddings()
        self.device = emb.weight.device      # where the inputs go (first device of a map)
        self.head = model.get_output_embeddings()
        self.model_vocab_size = int(self.head.weight.shape[0] if self.head is not None
                                    else model.config.vocab_size)
        self.keep = keep_keyword(model)
        # Models without position_ids (OPT before 4.43) count positions from the attention
        # mask, as the pipeline does: the first real token of a row is position 0.
        self.position_ids = takes(model, "position_ids")

    def _tensor(self, a):
        return self.torch.as_tensor(np.asarray(a, dtype=np.int64), device=self.device)

    def forward(self, ids, mask, pos, select, cache=None, keep_cache=False):
        torch = self.torch
        ids, mask, pos = (np.asarray(a) for a in (ids, mask, pos))
        rows, cols = (np.asarray(a, dtype=np.int64) for a in select)
        B, L = ids.shape
        kwargs = dict(input_ids=self._tensor(ids), attention_mask=self._tensor(mask),
                      position_ids=self._tensor(pos), past_key_values=cache, use_cache=keep_cache)
        if not self.position_ids:
            del kwargs["position_ids"]
        kept = np.unique(cols) if cols.size else np.array([L - 1])
        hook, self._hooked = None, False
        if self.keep == "logits_to_keep":
            # An int keeps the last positions; an index tensor any set of them.
            contiguous_tail = kept[0] == L - kept.size
            # (A host tensor indexes hidden states on any device, the last one of a map too.)
            kwargs["logits_to_keep"] = (int(kept.size) if contiguous_tail
                                        else torch.as_tensor(kept, dtype=torch.int64))
        elif self.keep == "num_logits_to_keep":
            kept = np.arange(int(kept[0]), L)       # an int only: the last L - min(cols)
            kwargs["num_logits_to_keep"] = int(kept.size)
        elif self.head is not None:
            hook = self.head.register_forward_pre_hook(self._slice_hook(B, L, rows, cols))
        try:
            with torch.inference_mode():
                out = self.model(**kwargs)
                logits = out.logits
                shape = tuple(logits.shape)

                def at(a):      # indices on the logits' device (the last one of a map)
                    return torch.as_tensor(a, dtype=torch.int64, device=logits.device)
                if self._hooked and shape[:2] == (1, rows.size):
                    picked = logits[0]                  # the hook kept exactly the selection
                elif shape[:2] == (B, L):
                    picked = logits[at(rows), at(cols)]
                elif self.keep is not None and shape[:2] == (B, kept.size):
                    picked = logits[at(rows), at(np.searchsorted(kept, cols))]
                else:
                    raise RunnerError(f"model {self.name} returned logits of shape {shape} for "
                                      f"{B} rows of {L} tokens ({self.keep or 'lm head hook'})")
                # To the host in the model's type, then to float32 (exact from bf16 / fp16).
                picked = picked.to("cpu").float().numpy()
        finally:
            if hook is not None:
                hook.remove()
        return picked, (out.past_key_values if keep_cache else None)

    def _slice_hook(self, B, L, rows, cols):
        r, c = (self.torch.as_tensor(a, dtype=self.torch.int64) for a in (rows, cols))

        def hook(module, args):
            h = args[0]
            if self._hooked or h.dim() != 3 or tuple(h.shape[:2]) != (B, L):
                return None                     # not the layout we know: leave it whole
            self._hooked = True
            return (h[r.to(h.device), c.to(h.device)].unsqueeze(0),) + tuple(args[1:])
        return hook


def load(target, drafts, device="cuda", dtype="bf16", chat=False, device_map=None,
         template_kwargs=None, revisions=None, trust_remote_code=False, attn_implementation=None):
    """(tokenizer, target HFModel, [(name, HFModel)]) from local files. device_map (see
    parse_device_map) spreads each model over devices with accelerate instead of `device`;
    without it a model loads straight onto `device` (device_map=device: no full copy in
    host memory first), or, without accelerate, on the CPU and is then moved. revisions:
    {model: revision} (parse_revisions); trust_remote_code and attn_implementation are
    passed to from_pretrained as given (attn_implementation to the models only)."""
    torch, transformers = _import()
    if device_map is None and device == "cuda" and not torch.cuda.is_available():
        raise RunnerError("--device cuda, but PyTorch finds no CUDA device; use --device cpu")
    wanted = getattr(torch, DTYPES[dtype])
    dtype_kw = dtype_keyword(transformers)

    def options(path):
        kw = {"local_files_only": True}
        if (revisions or {}).get(path) is not None:
            kw["revision"] = revisions[path]
        if trust_remote_code:
            kw["trust_remote_code"] = True
        return kw

    def tokenizer(path):
        try:
            return transformers.AutoTokenizer.from_pretrained(path, **options(path))
        except (OSError, ValueError) as e:
            raise RunnerError(f"cannot load the tokenizer of {path} from local files: {e}") from None

    def from_pretrained(path, **extra):
        kwargs = {dtype_kw: wanted, **options(path), **extra}
        if attn_implementation is not None:
            kwargs["attn_implementation"] = attn_implementation
        try:
            return transformers.AutoModelForCausalLM.from_pretrained(path, **kwargs)
        except (OSError, ValueError, RuntimeError, TypeError) as e:
            raise RunnerError(f"cannot load the model {path} from local files with transformers "
                              f"{getattr(transformers, '__version__', '?')}: "
                              f"{type(e).__name__}: {e}") from None

    def model(path):
        # A CPU model loads where it runs; a GPU one goes straight there (device_map places
        # each weight as it is read) rather than through a full copy in host memory.
        placement = device_map if device_map is not None else (None if device == "cpu" else device)
        moved = False
        try:
            m = (from_pretrained(path, device_map=placement) if placement is not None
                 else from_pretrained(path))
        except ImportError as e:    # a device_map without accelerate
            if device_map is not None:
                raise RunnerError(f"cannot load the model {path}: {e}\n"
                                  + install_hint(["accelerate"])) from None
            print(f"mdsd-runner: note: without accelerate ({e}), {path} loads into host memory "
                  f"and then moves to {device} (host memory the size of the model); "
                  "pip install accelerate to load it straight onto the device", file=sys.stderr)
            m, moved = from_pretrained(path), True
        got = getattr(m, "dtype", wanted)
        if got != wanted:
            raise RunnerError(f"the model {path} loaded as {got}, not the {wanted} asked for "
                              f"with {dtype_kw}= (transformers {transformers.__version__})")
        if moved:
            m = m.to(device)
        return m.eval()

    tok = tokenizer(target)
    for d in drafts:
        check_same_vocab(target, tok, d, tokenizer(d))
    target_model = model(target)
    eos = eos_ids_of(tok, getattr(target_model, "generation_config", None))
    wrapped = HFModel(target_model, target, torch)
    draft_models = [(name, HFModel(model(path), path, torch))
                    for name, path in zip(draft_names(drafts), drafts)]
    return HFTokenizer(tok, getattr(tok, "name_or_path", target) or target, eos, chat,
                       template_kwargs), wrapped, draft_models


def versions():
    """Versions recorded in the dump's runner_config."""
    torch, transformers = _import()
    return {"python": sys.version.split()[0], "torch": str(torch.__version__),
            "transformers": str(getattr(transformers, "__version__", "unknown"))}
