"""An independent check of a dump against data/README.md (format version 1), through
h5py: `mdsd-runner validate FILE`. Reads the logits chunk by chunk."""

import datetime

import h5py
import numpy as np

STRING_ATTRS = ("creator", "created", "dataset", "tokenizer")


def _is_string(v):
    return isinstance(v, (str, bytes))


def _int_attr(obj, name, dtype, problems, where):
    if name not in obj.attrs:
        problems.append(f"{where}: attribute {name} is missing")
        return None
    v = obj.attrs[name]
    if np.ndim(v) != 0 or np.asarray(v).dtype != dtype:
        problems.append(f"{where}: attribute {name} must be a {np.dtype(dtype).name} scalar, "
                        f"is {np.asarray(v).dtype} of shape {np.shape(v)}")
        return None
    return int(v)


def _check_model_group(g, V, N, problems):
    where = g.name
    if not _is_string(g.attrs.get("model")):
        problems.append(f"{where}: string attribute model is missing")
    mv = _int_attr(g, "vocab_size", np.int64, problems, where)
    if mv is not None and mv < V:
        problems.append(f"{where}: vocab_size {mv} is less than V = {V}")
    if "dropped_padding" in g.attrs:
        dp = _int_attr(g, "dropped_padding", np.int64, problems, where)
        if dp is not None and mv is not None and mv - dp != V:
            problems.append(f"{where}: vocab_size {mv} - dropped_padding {dp} != V = {V}")
    if "logits" not in g or not isinstance(g["logits"], h5py.Dataset):
        problems.append(f"{where}/logits is missing")
        return
    d = g["logits"]
    if d.shape != (N, V):
        problems.append(f"{d.name}: shape {d.shape}, expected {(N, V)}")
        return
    bf16 = d.attrs.get("dtype") in ("bfloat16", b"bfloat16")
    if bf16 and d.dtype != np.uint16:
        problems.append(f"{d.name}: dtype attribute bfloat16 on a {d.dtype} dataset (needs uint16)")
        return
    if not bf16 and d.dtype not in (np.float16, np.float32):
        problems.append(f"{d.name}: dtype {d.dtype}, expected float16, float32 or bfloat16 bits")
        return
    if d.chunks is None:
        problems.append(f"{d.name}: not chunked")
        return
    step = d.chunks[0]
    for lo in range(0, N, step):
        block = d[lo:lo + step]
        if bf16:
            block = (block.astype(np.uint32) << 16).view(np.float32)
        bad = np.isnan(block) | np.isposinf(block)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            problems.append(f"{d.name}: row {lo + r} column {c} is {block[r, c]}")
            return
        if (np.isneginf(block).all(axis=1)).any():
            problems.append(f"{d.name}: a row in {lo}..{lo + step} is all -inf")
            return


def validate(path):
    """(problems, summary): a list of messages naming what is wrong (empty when the file
    follows the format) and a dict with N, V, samples, drafts, logits dtype."""
    problems = []
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        return [f"cannot open {path} as HDF5: {e}"], {}
    with f:
        version = _int_attr(f, "mdsd_format", np.int32, problems, "/")
        if version is not None and version != 1:
            problems.append(f"/: mdsd_format is {version}, expected 1")
        for name in STRING_ATTRS:
            if not _is_string(f.attrs.get(name)):
                problems.append(f"/: string attribute {name} is missing")
        created = f.attrs.get("created")
        if _is_string(created):
            created = created.decode() if isinstance(created, bytes) else created
            try:
                datetime.datetime.fromisoformat(created.replace("Z", "+00:00"))
            except ValueError:
                problems.append(f"/: created {created!r} is not ISO-8601")
        gt = f.attrs.get("generation_temperature")
        if gt is None or np.asarray(gt).dtype != np.float64 or np.ndim(gt) != 0:
            problems.append("/: attribute generation_temperature must be a float64 scalar")
        V = _int_attr(f, "vocab_size", np.int64, problems, "/")
        index = {}
        for name in ("tokens", "sample_id", "position"):
            d = f.get(name)
            if not isinstance(d, h5py.Dataset) or d.ndim != 1 or d.dtype != np.int32:
                problems.append(f"/{name} must be a 1-D int32 dataset")
            else:
                index[name] = d[()]
        if V is None or len(index) < 3:
            return problems, {}
        N = index["tokens"].size
        if index["sample_id"].size != N or index["position"].size != N:
            problems.append(f"/tokens, /sample_id and /position differ in length")
            return problems, {}
        tok, sid, pos = index["tokens"], index["sample_id"], index["position"]
        if N and (tok.min() < 0 or tok.max() >= V):
            problems.append(f"/tokens: row {int(np.flatnonzero((tok < 0) | (tok >= V))[0])} "
                            f"is outside [0, {V})")
        # Rows of one sample are contiguous and in position order 0, 1, 2, ...
        starts = np.flatnonzero(np.diff(sid, prepend=sid[:1] - 1) != 0) if N else np.array([], int)
        if np.unique(sid).size != starts.size:
            problems.append("/sample_id: the rows of a sample are not contiguous")
        expected = np.arange(N) - np.repeat(starts, np.diff(np.append(starts, N)))
        if N and not np.array_equal(pos, expected):
            r = int(np.flatnonzero(pos != expected)[0])
            problems.append(f"/position: row {r} is {pos[r]}, expected {expected[r]}")
        if "target" not in f:
            problems.append("/target is missing")
        else:
            _check_model_group(f["target"], V, N, problems)
        drafts = sorted(f["drafts"].keys()) if "drafts" in f else []
        for name in drafts:
            _check_model_group(f["drafts"][name], V, N, problems)
        dtype = None
        if "target" in f and "logits" in f["target"]:
            d = f["target"]["logits"]
            dtype = "bfloat16" if d.attrs.get("dtype") in ("bfloat16", b"bfloat16") else str(d.dtype)
        summary = {"rows": int(N), "vocab_size": int(V), "samples": int(starts.size),
                   "drafts": drafts, "logits_dtype": dtype}
        return problems, summary
