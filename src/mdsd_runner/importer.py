"""`mdsd-runner import`: a logit dump (data/README.md) from arrays of target and draft
logits that were computed elsewhere - a serving engine, a notebook, another framework -
saved as NumPy .npy / .npz, .safetensors or PyTorch .pt (torch.save) files.

    mdsd-runner import --target t.npy --draft small=d.npy -o my.h5
    mdsd-runner import --target run.npz:target --draft d1=run.npz:draft \\
        --tokens run.npz:tokens --sample-ids run.npz:sample -o my.h5
    mdsd-runner import --target qwen7b.safetensors:logits --draft qwen05b=small.safetensors:logits \\
        --drop-padding -o qwen.h5

Arrays: logits [rows, V] (or [samples, positions, V]: one sample per first index), float16,
bfloat16, float32 or float64; -inf entries need --neg-inf zero (probability 0) or unseen
(a top-k row of log-probabilities: written truncated, with its missing mass). Rows of one sample must be
consecutive. --tokens gives the token generated at each row (default: the target's argmax,
recorded as such in runner_config); --sample-ids the sample of each row (default: the first
axis of 3-D arrays, else one sample for the whole 2-D array: standard errors then treat the
rows as independent).

Padded vocabularies: models of one family are often padded to different sizes (Qwen2.5-7B
152,064 columns, Qwen2.5-0.5B 151,936). --drop-padding keeps the first min(V) columns of
every array (--vocab-size V to choose V), records the dropped count per model in
`dropped_padding`, and reports the largest probability mass (at temperature 1) that the
dropped columns carried, so a real token is never dropped silently (--max-dropped-mass,
default 1e-6, refuses more).

The safetensors reader is ours (no download, no extra package): the format is an 8-byte
little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}}, then
the raw little-endian buffers.
"""

import json
import math
import os
import struct
import sys

import numpy as np

from .dump import DumpWriter, from_bfloat16_bits
from .errors import RunnerError

SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": "bf16",
                      "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
                      "U8": np.uint8, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64}


# ---- reading arrays ------------------------------------------------------------------

def read_safetensors_header(path):
    """The header of a .safetensors file: ({name: (dtype, shape, begin, end)}, data offset)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) != 8:
                raise RunnerError(f"{path}: not a safetensors file (shorter than 8 bytes)")
            (n,) = struct.unpack("<Q", head)
            size = os.fstat(f.fileno()).st_size
            if n > min(size - 8, 100 << 20):
                raise RunnerError(f"{path}: not a safetensors file (header length {n} does not fit "
                                  f"the file's {size} bytes)")
            text = f.read(n)
    except OSError as e:
        raise RunnerError(f"cannot read {path}: {e}") from None
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunnerError(f"{path}: safetensors header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise RunnerError(f"{path}: safetensors header is not a JSON object")
    tensors = {}
    data_size = size - 8 - n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], list(info["shape"]), info["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise RunnerError(f"{path}: tensor {name!r}: header entry needs dtype, shape and "
                              "data_offsets") from None
        if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
            raise RunnerError(f"{path}: tensor {name!r}: dtype {dtype!r} is not supported")
        # JSON integers only (not true, 2.5 or "6"): Python's, so that no product wraps.
        if any(type(x) is not int or x < 0 for x in shape):
            raise RunnerError(f"{path}: tensor {name!r}: shape {info['shape']!r} is not a "
                              "list of non-negative integers")
        if any(type(x) is not int for x in (begin, end)):
            raise RunnerError(f"{path}: tensor {name!r}: data_offsets {info['data_offsets']!r} "
                              "are not two integers")
        item = 2 if dtype == "BF16" else np.dtype(SAFETENSORS_DTYPES[dtype]).itemsize
        count = math.prod(shape)
        if not (0 <= begin <= end <= data_size) or end - begin != count * item:
            raise RunnerError(f"{path}: tensor {name!r}: data_offsets [{begin}, {end}] do not hold "
                              f"{count} x {dtype} within the file's {data_size} data bytes")
        tensors[name] = (dtype, shape, begin, end)
    return tensors, 8 + n


def _load_safetensors(path, key):
    tensors, offset = read_safetensors_header(path)
    key = _pick(path, key, sorted(tensors))
    dtype, shape, begin, end = tensors[key]
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=offset + begin, shape=(end - begin,))
    if dtype == "BF16":
        return from_bfloat16_bits(raw.view("<u2")).reshape(shape)
    return raw.view(np.dtype(SAFETENSORS_DTYPES[dtype]).newbyteorder("<")).reshape(shape)


def _pick(path, key, names):
    if key is None:
        if len(names) != 1:
            raise RunnerError(f"{path} holds {len(names)} arrays ({', '.join(names) or 'none'}); "
                              "name one as FILE:KEY")
        return names[0]
    if key not in names:
        raise RunnerError(f"{path}: no array {key!r} (it has {', '.join(names) or 'none'})")
    return key


def _load_torch(path, key):
    """A .pt/.pth file of torch.save: one tensor, or a dict of tensors (name one as KEY),
    loaded with weights_only=True (no pickled code runs). bfloat16 becomes float32 exactly."""
    try:
        import torch
    except ImportError:
        raise RunnerError(f"{path}: reading a .pt file needs PyTorch (python3-torch), or save "
                          "the array with numpy.save as .npy") from None
    import pickle
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:  # not torch's advice (weights_only=False runs code)
        why = str(e).rsplit("WeightsUnpickler error:", 1)[-1].strip()
        raise RunnerError(f"{path}: torch.load(weights_only=True), which runs no code from the "
                          f"file, refused it ({why}); save a tensor or a dict of tensors "
                          "(torch.save(t, FILE))") from None
    if isinstance(obj, dict):
        names = sorted(k for k in obj if isinstance(k, str))
        obj = obj[_pick(path, key, names)]
    elif key is not None:
        raise RunnerError(f"{path}: the file holds one tensor; drop ':{key}'")
    if not isinstance(obj, torch.Tensor):
        raise RunnerError(f"{path}: holds a {type(obj).__name__}, not a tensor")
    if obj.dtype == torch.bfloat16:
        obj = obj.float()
    return obj.detach().numpy()


def load_array(spec):
    """FILE or FILE:KEY (.npy, .npz, .safetensors, .pt/.pth) -> a NumPy array."""
    path, key = spec, None
    if not os.path.exists(spec) and ":" in spec:
        path, key = spec.rsplit(":", 1)
    if not os.path.exists(path):
        raise RunnerError(f"no file {path}")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".safetensors":
            return _load_safetensors(path, key)
        if ext == ".npy":
            if key is not None:
                raise RunnerError(f"{path}: a .npy file holds one array; drop ':{key}'")
            return np.load(path, mmap_mode="r", allow_pickle=False)
        if ext == ".npz":
            with np.load(path, allow_pickle=False) as z:
                return np.asarray(z[_pick(path, key, sorted(z.files))])
        if ext in (".pt", ".pth"):
            return _load_torch(path, key)
    except RunnerError:
        raise
    except Exception as e:  # noqa: BLE001 - numpy's header parser raises SyntaxError,
        # tokenize.TokenError, ValueError...; zipfile BadZipFile: all say "not this format"
        raise RunnerError(f"cannot read {path}: {type(e).__name__}: {e}") from None
    raise RunnerError(f"{path}: unknown array format (use .npy, .npz, .safetensors or .pt)")


# ---- checking and shaping --------------------------------------------------------------

def _as_rows(name, a, sample_ids):
    """[rows, V] float32 view of a logits array, and the sample ids of its rows."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise RunnerError(f"{name}: logits must be floating point, got {a.dtype}")
    if a.ndim == 3:
        ids = np.repeat(np.arange(a.shape[0]), a.shape[1])
        a = a.reshape(-1, a.shape[2])
        if sample_ids is None:
            sample_ids = ids
    elif a.ndim != 2:
        raise RunnerError(f"{name}: logits must be [rows, V] or [samples, positions, V], got "
                          f"shape {a.shape}")
    return a, sample_ids


def _check_rows(name, a, lo, hi):
    bad = np.isnan(a) | (a == np.inf)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise RunnerError(f"{name}: row {lo + r}, column {c}: {a[r, c]} (NaN and +inf are not "
                          "logits; -inf means probability 0)")
    empty = ~np.isfinite(a).any(axis=1)
    if empty.any():
        raise RunnerError(f"{name}: row {lo + int(np.argmax(empty))} has no finite logit")


def _check_neg_inf(name, a, lo, V, neg_inf):
    """-inf means a true zero or an unseen token of a top-k trace; the two give different
    numbers (a top-k row read as complete renormalises the missing mass away), so the user
    says which (--neg-inf), never the importer."""
    if neg_inf == "zero":
        return
    hit = np.isneginf(a[:, :V]).any(axis=1)
    if not hit.any():
        return
    r = int(np.argmax(hit))
    c = int(np.argmax(np.isneginf(a[r, :V])))
    if neg_inf is None:
        raise RunnerError(f"{name}: row {lo + r}, column {c} is -inf: say what -inf means with "
                          "--neg-inf zero (true zeros, e.g. after top-k sampling: rows are complete) "
                          "or --neg-inf unseen (tokens a top-k trace did not report)")


# A kept mass above 1 by at most this is rounding (float32 log-softmax of an engine, the
# float32 storage of the row: ~1e-7 per entry) and reads as missing mass 0; more is refused.
KEPT_MASS_SLACK = 1e-5


def truncation_record(name, rows, lo, labels=None):
    """The truncation record (data/README.md, "Truncated rows") of float32 rows [m, V]
    whose finite entries are natural-log probabilities of the full distribution and whose
    -inf entries are unseen tokens: (truncated uint8 [m]: 1 where a row has an -inf entry,
    missing_mass float64 [m]: -expm1(logsumexp(kept)) on those rows, 0 elsewhere). It is
    computed in float64 from the values as stored. A row whose kept probabilities sum to
    more than 1 + KEPT_MASS_SLACK is not a top-k row of log-probabilities and is refused,
    naming `name` and the row (lo + index), or labels[index] when given."""
    x = np.asarray(rows, dtype=np.float64)
    flags = np.isneginf(x).any(axis=1)
    top = np.max(x, axis=1, keepdims=True)  # finite: every row has a finite entry (checked)
    kept = top[:, 0] + np.log(np.sum(np.exp(x - top), axis=1))
    missing = -np.expm1(kept)
    over = flags & ~(missing >= -KEPT_MASS_SLACK)
    if over.any():
        r = int(np.argmax(over))
        at = f"row {lo + r}" if labels is None else labels[r]
        raise RunnerError(f"{name}: {at}: its kept entries carry probability "
                          f"{float(np.exp(kept[r])):.9g} > 1 (largest entry {float(top[r, 0]):.6g}): "
                          "under --neg-inf unseen the finite entries must be log-probabilities "
                          "of the full distribution (log-softmax at T = 1), not logits")
    missing = np.where(flags, np.clip(missing, 0.0, 1.0), 0.0)
    return flags.astype(np.uint8), missing


def dropped_mass(a, V):
    """Largest softmax (T = 1) mass over the rows of `a` in columns >= V."""
    if a.shape[1] <= V:
        return 0.0
    x = np.asarray(a, dtype=np.float64)
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    kept, cut = e[:, :V].sum(axis=1), e[:, V:].sum(axis=1)
    return float(np.max(cut / (kept + cut)))


def import_logits(out, target, drafts, *, tokens=None, sample_ids=None, vocab_size=None,
                  drop_padding=False, max_dropped_mass=1e-6, logits_dtype="float32",
                  compression="gzip", dataset="imported", target_model="target",
                  chunk_rows=4096, neg_inf=None, log=print):
    """Writes dump `out` from arrays. target: array; drafts: [(name, array)]. Returns a
    summary dict. The documented function of the Python package behind `import`."""
    if not drafts:
        raise RunnerError("give at least one --draft NAME=FILE")
    if neg_inf not in (None, "zero", "unseen"):
        raise RunnerError(f"--neg-inf must be zero or unseen, not {neg_inf!r}")
    if not 0 <= max_dropped_mass <= 1:  # NaN too: it would turn the check off
        raise RunnerError(f"--max-dropped-mass must be in [0, 1], not {max_dropped_mass}")
    names = [n for n, _ in drafts]
    for n in names:
        if not n or "/" in n or names.count(n) > 1:
            raise RunnerError(f"draft name {n!r} is empty, has a '/' or is given twice")
    t, sample_ids = _as_rows("target", target, None if sample_ids is None else np.asarray(sample_ids))
    ds = []
    for n, a in drafts:
        d, _ = _as_rows(f"draft {n}", a, None)
        if d.shape[0] != t.shape[0]:
            raise RunnerError(f"draft {n}: {d.shape[0]} rows, the target has {t.shape[0]}")
        ds.append((n, d))
    N = t.shape[0]
    widths = [t.shape[1]] + [d.shape[1] for _, d in ds]
    if vocab_size is not None:
        V = int(vocab_size)
        if V < 1:
            raise RunnerError(f"--vocab-size must be at least 1, not {V}")
        if V > min(widths):
            raise RunnerError(f"--vocab-size {V}: the arrays have {min(widths)} columns at most")
    elif drop_padding:
        V = min(widths)
    else:
        V = widths[0]
        if any(w != V for w in widths):
            raise RunnerError("vocabulary mismatch: target has %d columns, drafts %s; if the models "
                              "share a tokenizer and only their padding differs (e.g. Qwen 152,064 "
                              "vs 151,936), pass --drop-padding" %
                              (V, ", ".join(f"{n} {d.shape[1]}" for n, d in ds)))
    if sample_ids is None:
        sample_ids = np.zeros(N, dtype=np.int64)
    sample_ids = np.asarray(sample_ids).reshape(-1)
    if sample_ids.shape[0] != N:
        raise RunnerError(f"--sample-ids: {sample_ids.shape[0]} values for {N} rows")
    starts = np.flatnonzero(np.r_[True, sample_ids[1:] != sample_ids[:-1]])
    if len(np.unique(sample_ids)) != len(starts):
        raise RunnerError("--sample-ids: the rows of each sample must be consecutive")
    bounds = list(starts) + [N]
    argmax_tokens = tokens is None
    if tokens is not None:
        tokens = np.asarray(tokens).reshape(-1)
        if tokens.shape[0] != N or tokens.dtype.kind not in "iu":
            raise RunnerError(f"--tokens: need {N} integers, got {tokens.shape[0]} of {tokens.dtype}")
        if N and (tokens.min() < 0 or tokens.max() >= V):
            raise RunnerError(f"--tokens: values must lie in [0, {V}) (found {tokens.min()}..{tokens.max()})")
    groups = [("target", target_model, widths[0], widths[0] - V)] + \
             [(f"drafts/{n}", n, d.shape[1], d.shape[1] - V) for n, d in ds]
    config = {"backend": "import", "vocab_size": V, "columns": widths, "drop_padding": drop_padding,
              "tokens": "argmax of the target (not given)" if argmax_tokens else "given",
              "samples": len(starts)}
    unseen = neg_inf == "unseen"
    if unseen:
        config["neg_inf"] = "unseen"
    writer = DumpWriter(out, vocab_size=V, logits_dtype=logits_dtype, compression=compression,
                        root_attrs={"creator": "mdsd-runner import", "dataset": dataset,
                                    "tokenizer": "unknown (imported)",
                                    "generation_temperature": float("nan")},
                        groups=groups, config=json.dumps(config, sort_keys=True),
                        truncation=unseen)
    if os.path.exists(writer.partial):
        os.unlink(writer.partial)  # an import is quick: always start over
    writer.open()
    worst = {name: 0.0 for name, *_ in groups}
    try:
        for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            rows, records = [], []
            for (path, *_), a in zip(groups, [t] + [d for _, d in ds]):
                block = np.asarray(a[lo:hi], dtype=np.float32)
                _check_rows(path, block, lo, hi)
                _check_neg_inf(path, block, lo, V, neg_inf)
                worst[path] = max(worst[path], dropped_mass(block, V))
                if worst[path] > max_dropped_mass:
                    raise RunnerError(f"{path}: columns >= {V} carry probability mass "
                                      f"{worst[path]:.3g} in some row of sample {k} (more than "
                                      f"--max-dropped-mass {max_dropped_mass:g}): they are not "
                                      "padding")
                rows.append(block[:, :V])
                if unseen:
                    records.append(truncation_record(path, rows[-1], lo))
            tok = np.argmax(rows[0], axis=1) if argmax_tokens else tokens[lo:hi]
            writer.append(k, tok, rows, records if unseen else None)
        writer.finalize()
    except BaseException:
        writer.discard()
        raise
    if V < max(widths):
        log("dropped padding columns >= %d: %s; largest dropped mass %s" % (
            V, ", ".join(f"{p} {w - V}" for (p, *_), w in zip(groups, widths)),
            ", ".join(f"{p} {worst[p]:.2g}" for p, *_ in groups)))
    return {"output": out, "rows": N, "samples": len(starts), "vocab_size": V,
            "drafts": names, "tokens": config["tokens"]}


# ---- command line ------------------------------------------------------------------------

def add_parser(sub):
    p = sub.add_parser(
        "import", help="make a dump from .npy/.npz/.safetensors arrays of target and draft logits",
        description="Writes a logit dump from arrays of logits saved elsewhere (a serving engine, "
                    "a notebook). FILE:KEY names an array inside an .npz or .safetensors file. "
                    "Top-k logprobs from a serving engine: store dense rows with -inf outside "
                    "the k returned tokens and --neg-inf unseen, or read the server's JSON "
                    "responses with --openai-logprobs (data/README.md: Truncated rows, "
                    "OpenAI-compatible traces).")
    p.add_argument("--target", metavar="FILE[:KEY]",
                   help="target logits [rows, V] or [samples, positions, V]")
    p.add_argument("--openai-logprobs", metavar="FILE.jsonl",
                   help="instead of --target: the target's responses of an OpenAI-compatible "
                        "server (completions API with echo + logprobs, or chat API with "
                        "top_logprobs), one JSON response per line; --draft NAME=FILE.jsonl "
                        "then gives each drafter's responses over the same texts. Rows are "
                        "truncated top-k rows (data/README.md, \"OpenAI-compatible traces\")")
    p.add_argument("--vocab", metavar="FILE.json",
                   help="with --openai-logprobs: token strings to ids, a JSON list (id = index) "
                        "or object {token: id}; not needed for tokens spelled token_id:N "
                        "(vLLM --return-tokens-as-token-ids)")
    p.add_argument("--prompt-only", action="store_true",
                   help="with --openai-logprobs (completions API): rows for the echoed prompt "
                        "only, its first usage.prompt_tokens tokens (vLLM generates at least one "
                        "token after it, max_tokens >= 1, and that token differs between models)")
    p.add_argument("--draft", action="append", required=True, metavar="NAME=FILE[:KEY]",
                   help="a drafter's logits, same rows (repeat for several drafters)")
    p.add_argument("--tokens", metavar="FILE[:KEY]",
                   help="the generated token at each row (default: the target's argmax)")
    p.add_argument("--sample-ids", metavar="FILE[:KEY]",
                   help="the sample of each row, rows of a sample consecutive (default: the first "
                        "axis of [samples, positions, V] arrays, else one sample)")
    p.add_argument("--drop-padding", action="store_true",
                   help="keep the first min(V) columns of every array (vocabularies padded to "
                        "different sizes, e.g. Qwen 152,064 vs 151,936)")
    p.add_argument("--vocab-size", type=int, metavar="V",
                   help="keep the first V columns (with --openai-logprobs: the tokenizer's "
                        "vocabulary size V)")
    p.add_argument("--max-dropped-mass", type=float, default=1e-6, metavar="M",
                   help="refuse when dropped columns carry more probability than M in some row "
                        "(default 1e-6)")
    p.add_argument("--target-model", default="target", metavar="NAME",
                   help="the target's model name attribute")
    p.add_argument("--dataset", default="imported", help="the dataset attribute")
    p.add_argument("--logits-dtype", choices=("float32", "float16", "bfloat16"), default="float32",
                   help="stored logits type (default float32)")
    p.add_argument("--compression", choices=("gzip", "none"), default="gzip")
    p.add_argument("--neg-inf", choices=("zero", "unseen"),
                   help="what -inf entries mean, required when there are any: zero = true zeros "
                        "(e.g. after top-k sampling; rows are complete), unseen = tokens a top-k "
                        "trace did not report: rows with -inf entries are written as truncated, "
                        "their finite entries must be log-probabilities, stored float32 "
                        "(data/README.md, \"Truncated rows\")")
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5", help="the dump to write")
    return p


def _usage(message):
    """A usage error of `import`: the message, exit status 2 (as argparse's)."""
    print(f"mdsd-runner import: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _run_traces(args):
    from .openai_trace import import_traces
    given = [flag for flag, value, default in (
        ("--tokens", args.tokens, None), ("--sample-ids", args.sample_ids, None),
        ("--drop-padding", args.drop_padding, False), ("--neg-inf", args.neg_inf, None),
        ("--max-dropped-mass", args.max_dropped_mass, 1e-6),
        ("--logits-dtype", args.logits_dtype, "float32")) if value != default]
    if given:
        _usage(f"{', '.join(given)}: not an option of --openai-logprobs (a trace gives its "
               "tokens, one sample per line, top-k rows in float32)")
    if args.vocab is None and args.vocab_size is None:
        _usage("--openai-logprobs needs --vocab-size V (the tokenizer's vocabulary size: the "
               "unseen tokens of a top-k row are all the others) or --vocab FILE")
    drafts = []
    for spec in args.draft:
        name, sep, path = spec.partition("=")
        if not sep:
            _usage(f"--draft {spec}: give NAME=FILE.jsonl")
        drafts.append((name, path))
    summary = import_traces(args.output, args.openai_logprobs, drafts, vocab=args.vocab,
                            vocab_size=args.vocab_size, prompt_only=args.prompt_only,
                            compression=args.compression,
                            dataset="openai-trace" if args.dataset == "imported" else args.dataset,
                            target_model=args.target_model)
    print(f"wrote {summary['output']}: {summary['rows']} truncated top-{summary['top_k']} rows, "
          f"{summary['samples']} samples, V = {summary['vocab_size']}, drafts "
          f"{', '.join(summary['drafts'])}")
    return 0


def run(args):
    if (args.target is None) == (args.openai_logprobs is None):
        _usage("give exactly one of --target FILE[:KEY] (arrays) and --openai-logprobs "
               "FILE.jsonl (a trace)")
    if args.openai_logprobs is not None:
        return _run_traces(args)
    if args.vocab is not None or args.prompt_only:
        _usage(f"{'--vocab' if args.vocab is not None else '--prompt-only'}: an option of "
               "--openai-logprobs only")
    drafts = []
    for spec in args.draft:
        name, sep, path = spec.partition("=")
        if not sep:
            raise RunnerError(f"--draft {spec}: give NAME=FILE[:KEY]")
        drafts.append((name, load_array(path)))
    summary = import_logits(
        args.output, load_array(args.target), drafts,
        tokens=load_array(args.tokens) if args.tokens else None,
        sample_ids=load_array(args.sample_ids) if args.sample_ids else None,
        vocab_size=args.vocab_size, drop_padding=args.drop_padding,
        max_dropped_mass=args.max_dropped_mass, logits_dtype=args.logits_dtype,
        compression=args.compression, dataset=args.dataset, target_model=args.target_model,
        neg_inf=args.neg_inf)
    print(f"wrote {summary['output']}: {summary['rows']} rows, {summary['samples']} samples, "
          f"V = {summary['vocab_size']}, drafts {', '.join(summary['drafts'])}; tokens: "
          f"{summary['tokens']}")
    return 0
