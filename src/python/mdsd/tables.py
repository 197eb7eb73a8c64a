"""Tidy results tables: the results CSV of the table and block jobs as columns of numpy
arrays (a pandas DataFrame when pandas is installed), and the table job over logits held
in memory (mdsd.evaluate)."""

import csv
import ctypes
import math
import os
import shutil
import tempfile

import numpy as np

from . import MdsdError, _paths

# Columns of whole numbers in the jobs' CSVs (mdsd table: n, positions, samples, exact;
# mdsd block: sequences, depth, trees, samples). Empty fields (a block row's sequences on
# a tree policy) make a column float with NaN.
_INTEGER_COLUMNS = frozenset(("n", "positions", "samples", "exact", "sequences", "depth",
                              "trees"))


class Table(dict):
    """A tidy table: {column name: numpy array}, every array of the same length, in the
    results CSV's column order. Numbers are float64 (NaN for an empty field) or int64;
    text (dump, scheme, method, significance) is an object array of str; the CSV's ';'
    lists (per_depth, per_depth_stderr, per_position_acceptance_rate and its _stderr:
    float64; widths: int64) an object array holding one numpy array per row (empty for
    an empty field).
    t["alpha"], t.columns, len(t) (rows), t.rows() (one dict per row), t.to_pandas()."""

    @property
    def columns(self):
        return list(self.keys())

    def __len__(self):
        return len(next(iter(self.values()))) if dict.__len__(self) else 0

    def rows(self):
        cols = self.columns
        return [{c: self[c][i] for c in cols} for i in range(len(self))]

    def to_pandas(self):
        import pandas  # only when asked for
        return pandas.DataFrame(dict(self))

    def __repr__(self):
        return f"<mdsd.Table: {len(self)} rows; {', '.join(self.columns)}>"


# Text columns, even when every field is empty or looks like a number.
_TEXT_COLUMNS = frozenset(("dump", "scheme", "method", "significance", "verifier", "policy"))
# Columns of ';' lists (one value per depth, or the tree's widths) and their element type.
_LIST_COLUMNS = {"per_depth": np.float64, "per_depth_stderr": np.float64,
                 "per_position_acceptance_rate": np.float64,
                 "per_position_acceptance_rate_stderr": np.float64, "widths": np.int64}


_INT64 = np.iinfo(np.int64)


def _list_cell(name, text, row, path, dtype):
    try:
        return np.array([dtype(v) for v in text.split(";")] if text.strip() else [],
                        dtype=dtype)
    except (ValueError, OverflowError):
        raise MdsdError(5, f"{path}: row {row}, column {name}: '{text}' is not a ';' list of "
                        "numbers") from None


def _column(name, values, path):
    if name in _LIST_COLUMNS:
        cells = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            cells[i] = _list_cell(name, v, i + 2, path, _LIST_COLUMNS[name])
        return cells
    if name in _TEXT_COLUMNS:
        return np.array(values, dtype=object)
    if name in _INTEGER_COLUMNS and all(v.strip().lstrip("-").isdigit() for v in values):
        ints = [int(v) for v in values]
        for i, v in enumerate(ints):  # numpy's int64 would raise a bare OverflowError
            if not _INT64.min <= v <= _INT64.max:
                raise MdsdError(5, f"{path}: row {i + 2}, column {name}: '{values[i]}' is "
                                "out of range for a whole-number column (at most "
                                f"{_INT64.max})")
        return np.array(ints, dtype=np.int64)
    try:
        numbers = np.array([float(v) if v.strip() else math.nan for v in values],
                           dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=object)
    for i in np.flatnonzero(np.isinf(numbers)):  # a finite text beyond the doubles
        if values[i].strip().lstrip("+-").lower() not in ("inf", "infinity"):
            raise MdsdError(5, f"{path}: row {i + 2}, column {name}: '{values[i]}' is out of "
                            "range for a number (beyond the doubles)")
    return numbers


def read_table(path, pandas=None):
    """A results CSV of `mdsd table`, `mdsd block` or `mdsd report` as a tidy table:
    a pandas DataFrame when pandas is importable (pandas=None) or asked for (True), else
    (or with pandas=False) an mdsd.Table of numpy columns."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            head = next(reader)
        except StopIteration:
            raise MdsdError(5, f"{path}: empty, not a results CSV") from None
        body = list(reader)
    for i, row in enumerate(body):
        if len(row) != len(head):
            raise MdsdError(5, f"{path}: row {i + 2} has {len(row)} fields, the header "
                            f"{len(head)}")
    table = Table((name, _column(name, [r[k] for r in body], path))
                  for k, name in enumerate(head))
    return table.to_pandas() if _want_pandas(pandas) else table


def _want_pandas(pandas):
    if pandas is None:
        try:
            import pandas as _  # noqa: F401
            return True
        except ImportError:
            return False
    return bool(pandas)


def _drafters(draft_logits):
    """{name: array} from one array (named "draft") or a mapping of drafter names."""
    if isinstance(draft_logits, dict):
        if not draft_logits:
            raise MdsdError(1, "evaluate: draft_logits is an empty dict (give one drafter at "
                            "least)")
        return {str(k): v for k, v in draft_logits.items()}
    return {"draft": draft_logits}


def _row_labels(samples, positions, N):
    """sample_id and position [N] as int32: samples None = one sample; positions None =
    0, 1, ... within each sample."""
    sid = np.zeros(N, dtype=np.int64) if samples is None else np.asarray(samples)
    if sid.shape != (N,) or sid.dtype.kind not in "iu":
        raise MdsdError(1, f"evaluate: samples must be {N} integer sample ids (one per row), "
                        f"got shape {sid.shape} of {sid.dtype}")
    if positions is None:
        pos = np.zeros(N, dtype=np.int64)
        for i in range(1, N):
            pos[i] = pos[i - 1] + 1 if sid[i] == sid[i - 1] else 0
    else:
        pos = np.asarray(positions)
        if pos.shape != (N,) or pos.dtype.kind not in "iu":
            raise MdsdError(1, f"evaluate: positions must be {N} integers, got shape "
                            f"{pos.shape} of {pos.dtype}")
    starts = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]])
    first = {}
    for row in starts:
        s = int(sid[row])
        if s in first:
            raise MdsdError(1, f"evaluate: samples: row {row}: sample {s} starts again (a "
                            f"sample's rows must be contiguous; first seen at row {first[s]})")
        first[s] = int(row)
    for what, a in (("samples", sid), ("positions", pos)):
        if N and (a.min() < 0 or a.max() > np.iinfo(np.int32).max):
            raise MdsdError(1, f"evaluate: {what} must lie in [0, 2^31 - 1] (got "
                            f"{a.min()} .. {a.max()})")
    return sid.astype(np.int32), pos.astype(np.int32)


def evaluate(target_logits, draft_logits, temperatures=(1.0,), draft_counts=(2,),
             schemes=("iid",), verifiers=(), samples=None, positions=None, label="arrays",
             top_k=0, top_p=1.0, trials=0, simulate=False, seed=1, threads=0, progress=None,
             output=None, pandas=None, allow_probabilities=False, **opts):
    """The `mdsd table` job over logits in memory, every scheme and verifier in one pass
    over the rows: per (temperature, n, scheme, method) the mean acceptance, its standard
    error clustered by sample, the gap to alpha* and per-draft rates, as a tidy table
    (read_table: a pandas DataFrame when pandas is present, else an mdsd.Table of numpy
    columns), the columns and numbers of `mdsd table`'s results CSV.

    target_logits [N, V]; draft_logits [N, V], or {name: [N, V]} for several drafters
    (each a column LABEL:NAME). numpy arrays or torch tensors (any device) of float16,
    bfloat16, float32 or float64, or nested lists of floats. The job reads logits in
    float32, as it reads a dump: 16-bit inputs widen exactly, float64 rounds to float32
    (mdsd.batch evaluates float64 rows in float64). samples: [N] sample ids (the clusters of the
    standard errors; a sample's rows contiguous), None = one sample, whose standard errors
    fall back to i.i.d. rows with a note and no significance stars, as in `mdsd table`;
    positions: [N], None = 0, 1, ... within each sample. label: the table's dump column.
    progress: a callable progress(done_rows, total_rows) over every (drafter, temperature)
    pass, called as blocks of rows finish (an exception it raises stops the job, as Ctrl-C
    does, and is raised); None: a tqdm bar when tqdm is installed; False: none. output:
    the job writes its results CSV there, with the provenance sidecar (the arrays as
    a dump entry with "in_memory": true, their rows, V and drafters). The rows go to the
    job in memory (mdsd_row_arrays: read as a one-file float32 dump is read, so the
    numbers are the dump route's bit for bit): no temporary dump; without output= the
    results CSV alone passes through a temporary directory, removed afterwards, also
    when Ctrl-C stops the job (KeyboardInterrupt, within a row). Integer arrays are a
    TypeError; rows that are all probability distributions are refused as not logits
    unless allow_probabilities=True (as mdsd.batch)."""
    from . import _lib, _logit_rows, table
    t = _logit_rows(target_logits, "target_logits", allow_probabilities)
    drafts = {k: _logit_rows(v, f"draft_logits['{k}']" if isinstance(draft_logits, dict)
                             else "draft_logits", allow_probabilities)
              for k, v in _drafters(draft_logits).items()}
    if t.ndim != 2:
        raise MdsdError(1, f"evaluate: target_logits must be [N, V], got shape {t.shape}")
    for k, d in drafts.items():
        if d.shape != t.shape:
            raise MdsdError(1, f"evaluate: draft_logits{'' if k == 'draft' else f'[{k!r}]'} "
                            f"has shape {d.shape}, target_logits {t.shape}")
    N, V = t.shape
    if N == 0:
        raise MdsdError(1, "evaluate: no rows (target_logits has N = 0)")
    sid, pos = _row_labels(samples, positions, N)
    label = str(label)
    if not label or "/" in label or label.startswith("."):
        raise MdsdError(1, f"evaluate: label {label!r} must be a plain name (no '/')")
    settings = dict(temperatures=temperatures, draft_counts=draft_counts, schemes=schemes,
                    verifiers=verifiers, top_k=top_k, top_p=top_p, trials=trials,
                    simulate=simulate, seed=seed, threads=threads, **opts)
    if output is not None:  # before any work, as the command line checks -o
        _paths.check([], _paths.family(output, "output", (".lock", ".provenance.json")))
    # The rows go to the job in memory, read as a one-file float32 dump is read (the
    # same numbers, bit for bit): no temporary dump.
    t = np.ascontiguousarray(t, dtype=np.float32)
    drafts = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in drafts.items()}
    sid = np.ascontiguousarray(sid, dtype=np.intc)
    pos = np.ascontiguousarray(pos, dtype=np.intc)
    from .dump import _strings
    names = _strings(list(drafts), "draft_logits")
    planes = (ctypes.c_void_p * len(drafts))(*[d.ctypes.data for d in drafts.values()])
    a = _lib.init(_lib.RowArrays)
    a.label, a.N, a.V = label.encode(), N, V
    a.target, a.n_drafters = t.ctypes.data, len(drafts)
    a.drafter_names = ctypes.cast(names, ctypes.POINTER(ctypes.c_char_p))
    a.drafts = ctypes.cast(planes, ctypes.POINTER(ctypes.c_void_p))
    a.sample_id, a.position = sid.ctypes.data, pos.ctypes.data
    run = dict(temperatures=temperatures, draft_counts=draft_counts, schemes=schemes,
               verifiers=verifiers, draft_models=list(drafts), top_k=top_k, top_p=top_p,
               trials=trials, simulate=simulate, seed=seed, threads=threads,
               progress=progress, pandas=pandas, _stacklevel=4,
               _provenance_tool="mdsd.evaluate", _arrays=[a], _settings=settings, **opts)
    if output is not None:  # the job writes OUTPUT and its provenance itself
        return table([], output, **run)
    work = tempfile.mkdtemp(prefix="mdsd-evaluate-")  # the results CSV only (a few KB)
    try:
        return table([], os.path.join(work, "results.csv"), **run)
    finally:
        shutil.rmtree(work, ignore_errors=True)
