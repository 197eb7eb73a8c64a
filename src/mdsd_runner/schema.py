"""`mdsd-runner validate FILE`: a dump against data/README.md (format version 1).

One validator: the structure and every value (logits, tokens, positions, samples) are
checked by libmdsd's own reader through the mdsd package (mdsd.DumpReader.validate, the
same code as `mdsd info --validate`), so that the runner and mdsd never disagree on a
file. On top, the metadata this runner promises to write (data/README.md's table: string
attributes, ISO-8601 `created`, attribute types, model groups, chunked logits) is checked
here through h5py; a file that passes mdsd's checks but lacks such metadata is readable
by mdsd and reported here as not conforming."""

import datetime

import h5py
import numpy as np

try:
    import mdsd  # on the path as any package: the wheel, make install, src/bin/mdsd-runner
except ImportError as e:
    raise ImportError(f"the mdsd Python package is not importable ({e}): run the runner as "
                      "src/bin/mdsd-runner or the installed mdsd-runner, install the wheel "
                      "(pip install .), or add src/python to PYTHONPATH") from None

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


def _check_model_group(g, V, problems):
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
    d = g.get("logits")
    if isinstance(d, h5py.Dataset) and d.chunks is None:
        problems.append(f"{d.name}: not chunked")
    if (isinstance(d, h5py.Dataset) and d.attrs.get("dtype") in ("bfloat16", b"bfloat16")
            and d.dtype != np.uint16):
        problems.append(f"{d.name}: dtype attribute bfloat16 on a {d.dtype} dataset (needs uint16)")


def _metadata(path, V, problems):
    with h5py.File(path, "r") as f:
        _int_attr(f, "mdsd_format", np.int32, problems, "/")
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
        _int_attr(f, "vocab_size", np.int64, problems, "/")
        for name in ("tokens", "sample_id", "position"):
            if f[name].dtype != np.int32:
                problems.append(f"/{name} must be a 1-D int32 dataset, is {f[name].dtype}")
        _check_model_group(f["target"], V, problems)
        for name in sorted(f["drafts"].keys()):
            _check_model_group(f["drafts"][name], V, problems)


def validate(path, truncated_ok=False):
    """(problems, summary): a list of messages naming what is wrong (empty when the file
    follows the format) and a dict with rows, vocab_size, samples, drafts, logits_dtype.
    truncated_ok: a dump with truncated top-k rows validates (DumpWriter wrote the
    record); otherwise libmdsd refuses it as every job does."""
    path = str(path)
    try:
        reader = mdsd.DumpReader(path, truncated_ok=truncated_ok)
    except mdsd.MdsdError as e:
        return [str(e)], {}
    problems = []
    with reader:
        try:
            reader.validate()
        except mdsd.MdsdError as e:
            problems.append(str(e))
        summary = {"rows": reader.N, "vocab_size": reader.V, "samples": reader.n_samples,
                   "drafts": sorted(reader.draft_names), "logits_dtype": reader.dtype}
    _metadata(path, summary["vocab_size"], problems)
    return problems, summary
