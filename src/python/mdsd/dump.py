"""HDF5 logit dumps (format version 1, data/README.md) through libmdsd: the reader, the
validator and the writer that `mdsd`, `mdsd info --validate` and the model runner share."""

import ctypes
import math

import numpy as np

from . import _INT_MAX, MdsdError, _cstr, _int_array, _lib, _raise, _uint
from ._lib import lib

DTYPES = ("float32", "float16", "bfloat16")
TARGET = -1  # `which` naming the target's logits


class DumpReader:
    """An open dump: .N, .V, .n_samples, .draft_names, .dtype, .format,
    .generation_temperature; logits(which, row0, rows) -> float32 [rows, V] (which =
    TARGET or a drafter's index or name); rows(row0, rows) -> (tokens, sample_id,
    position); validate() raises MdsdError naming the first bad row."""

    def __init__(self, path, truncated_ok=False):
        # truncated_ok: open a dump with truncated top-k rows (to validate or describe
        # it) instead of refusing it; its logits are then log-probabilities with -inf
        # for unseen tokens, which no job may read as complete rows.
        self.path = str(path)
        err = _lib.Err()
        opener = lib.mdsd_dump_reader_open_truncated if truncated_ok else lib.mdsd_dump_reader_open
        self._h = opener(_cstr(path, "dump"), ctypes.byref(err))
        if not self._h:
            _raise(err.code or 2, err)
        info = _lib.DumpInfo()
        lib.mdsd_dump_reader_info(self._h, ctypes.byref(info))
        self.format, self.N, self.V = info.format, info.N, info.V
        self.n_samples = info.n_samples
        self.generation_temperature = info.generation_temperature
        self.dtype = DTYPES[info.dtype]
        self.draft_names = [lib.mdsd_dump_reader_draft_name(self._h, j).decode()
                            for j in range(info.n_drafts)]

    def _which(self, which):
        if isinstance(which, str):
            if which == "target":
                return TARGET
            if which not in self.draft_names:
                raise MdsdError(1, f"{self.path}: no drafter named '{which}' "
                                f"(drafters: {', '.join(self.draft_names)})")
            return self.draft_names.index(which)
        if isinstance(which, (int, np.integer)) and not isinstance(which, bool) and which == TARGET:
            return TARGET
        return _uint(which, "which", _INT_MAX)

    def _rest(self, row0):
        if row0 > self.N:
            raise MdsdError(1, f"{self.path}: row0 {row0} is beyond the dump's {self.N} rows")
        return self.N - row0

    def logits(self, which=TARGET, row0=0, rows=None):
        row0 = _uint(row0, "row0")
        rows = self._rest(row0) if rows is None else _uint(rows, "rows")
        out = np.empty((rows, self.V), dtype=np.float32)
        err = _lib.Err()
        _raise(lib.mdsd_dump_reader_logits(self._h, self._which(which), row0, rows,
                                           out.ctypes.data, ctypes.byref(err)), err)
        return out

    def rows(self, row0=0, rows=None):
        row0 = _uint(row0, "row0")
        rows = self._rest(row0) if rows is None else _uint(rows, "rows")
        tok, sid, pos = (np.empty(rows, dtype=np.int32) for _ in range(3))
        err = _lib.Err()
        _raise(lib.mdsd_dump_reader_rows(self._h, row0, rows, tok.ctypes.data, sid.ctypes.data,
                                         pos.ctypes.data, ctypes.byref(err)), err)
        return tok, sid, pos

    def validate(self):
        err = _lib.Err()
        _raise(lib.mdsd_dump_reader_validate(self._h, ctypes.byref(err)), err)

    def close(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.mdsd_dump_reader_free(h)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def validate_dump(path):
    """Checks a dump's structure and every row (the validator of `mdsd info --validate`);
    raises MdsdError naming the file, dataset, row and value."""
    err = _lib.Err()
    _raise(lib.mdsd_dump_validate_file(_cstr(path, "dump"), ctypes.byref(err)), err)


def _strings(values, what="name"):
    arr = (ctypes.c_char_p * max(1, len(values)))()
    for i, v in enumerate(values):
        arr[i] = _cstr(v, what)
    return arr


NEG_INF = ("zero", "unseen")  # mdsd_dump_neg_inf 0, 1; None = ask (2)


def _layout(path, V, draft_names, dtype, draft_models, target_model, target_vocab_size,
            chunk_rows, gzip, creator, dataset, tokenizer, generation_temperature, attrs,
            neg_inf=None):
    """The mdsd_dump_layout of DumpWriter and TreeDumpWriter, and the ctypes arrays it
    points into (keep them alive as long as the layout)."""
    lay = _lib.init(_lib.DumpLayout)
    names = _strings(draft_names)
    models = _strings(draft_models) if draft_models is not None else None
    extra = dict(attrs or {})
    en, ev = _strings(list(extra)), _strings(list(extra.values()))
    lay.V, lay.dtype = V, DTYPES.index(dtype) if dtype in DTYPES else -1
    if lay.dtype < 0:
        raise MdsdError(1, f"{path}: unknown logits dtype '{dtype}' "
                        f"(one of {', '.join(DTYPES)})")
    lay.chunk_rows, lay.gzip = _uint(chunk_rows, "chunk_rows"), _uint(gzip, "gzip", _INT_MAX)
    lay.creator, lay.dataset, lay.tokenizer = (_cstr(creator, "creator"), _cstr(dataset, "dataset"),
                                               _cstr(tokenizer, "tokenizer"))
    gt = float(generation_temperature) if generation_temperature is not None else math.nan
    lay.generation_temperature = gt
    lay.target_model = _cstr(target_model, "target_model")
    lay.target_vocab_size = _uint(target_vocab_size, "target_vocab_size", 2**63 - 1)
    lay.n_drafts = len(draft_names)
    lay.draft_names = ctypes.cast(names, ctypes.POINTER(ctypes.c_char_p))
    if models is not None:
        lay.draft_models = ctypes.cast(models, ctypes.POINTER(ctypes.c_char_p))
    lay.n_extra = len(extra)
    lay.extra_names = ctypes.cast(en, ctypes.POINTER(ctypes.c_char_p))
    lay.extra_values = ctypes.cast(ev, ctypes.POINTER(ctypes.c_char_p))
    if neg_inf is not None and neg_inf not in NEG_INF:
        raise MdsdError(2, f"{path}: neg_inf must be 'zero' (probability 0), 'unseen' (tokens "
                        f"a top-k trace did not report) or None (refuse -inf), not {neg_inf!r}")
    lay.neg_inf = 2 if neg_inf is None else NEG_INF.index(neg_inf)
    return lay, [names, models, en, ev]


class _NativeWriter:
    """What every writer over a C handle (self._h) shares: finish (the C writer checks,
    syncs and renames onto self.path), abort (the temporary file is removed) and the
    context manager (finish on success, abort on an exception). A subclass names its C
    finish and free functions in _finish and _free."""
    _finish = _free = None

    def finish(self):
        """Closes, checks, syncs and renames onto the path."""
        h, self._h = self._h, None
        if not h:
            raise MdsdError(1, f"{self.path}: the writer is already closed")
        err = _lib.Err()
        _raise(getattr(lib, self._finish)(h, ctypes.byref(err)), err)

    def abort(self):
        """Abandons the file (the temporary file is removed)."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            getattr(lib, self._free)(h)

    __del__ = abort

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.finish()
        else:
            self.abort()


class DumpWriter(_NativeWriter):
    """Writes a dump atomically: nothing appears at `path` until finish().

        with mdsd.DumpWriter(path, V, draft_names=["small"]) as w:
            w.write(target [rows, V], [draft [rows, V]], tokens, sample_id, position)
        # leaving the block calls finish(); an exception abandons the file instead

    neg_inf says what a -inf logit means, and the writer does not guess: None (default)
    refuses one, naming the row and index; "zero": probability 0 (e.g. after top-k
    sampling), complete rows; "unseen": the row's finite entries are log-probabilities
    at T = 1 of the full distribution for a top-k set and -inf the tokens a trace did not
    report, recorded as a truncated row with its missing mass (float32 only;
    data/README.md, "Truncated rows")."""
    _finish, _free = "mdsd_dump_writer_finish", "mdsd_dump_writer_free"

    def __init__(self, path, V, draft_names, dtype="float32", draft_models=None,
                 target_model="", target_vocab_size=0, chunk_rows=0, gzip=0, creator="",
                 dataset="", tokenizer="", generation_temperature=1.0, attrs=None,
                 neg_inf=None):
        self.path = str(path)
        self.V = _uint(V, "V")
        self.n_drafts = len(draft_names)
        lay, self._keep = _layout(self.path, self.V, draft_names, dtype, draft_models,
                                  target_model, target_vocab_size, chunk_rows, gzip, creator,
                                  dataset, tokenizer, generation_temperature, attrs, neg_inf)
        err = _lib.Err()
        self._h = lib.mdsd_dump_writer_new(_cstr(path, "path"), ctypes.byref(lay),
                                           ctypes.byref(err))
        if not self._h:
            _raise(err.code or 2, err)

    def write(self, target, drafts, tokens, sample_id, position):
        """Appends rows: target [rows, V], drafts = one [rows, V] per drafter, and the
        per-row tokens, sample_id, position [rows]."""
        t = np.ascontiguousarray(target, dtype=np.float32)
        if t.ndim != 2 or t.shape[1] != self.V:
            raise MdsdError(1, f"{self.path}: target logits of shape {t.shape}, expected "
                            f"[rows, {self.V}]")
        rows = t.shape[0]
        ds = [np.ascontiguousarray(d, dtype=np.float32) for d in drafts]
        if len(ds) != self.n_drafts or any(d.shape != t.shape for d in ds):
            raise MdsdError(1, f"{self.path}: expected {self.n_drafts} draft arrays of shape "
                            f"{t.shape}")
        meta = [_int_array(m, f"{self.path}: {name}", -2**31, _INT_MAX, np.int32)
                for m, name in ((tokens, "tokens"), (sample_id, "sample_id"), (position, "position"))]
        if any(m.shape != (rows,) for m in meta):
            raise MdsdError(1, f"{self.path}: tokens, sample_id, position must have {rows} rows")
        ptrs = (ctypes.c_void_p * self.n_drafts)(*[d.ctypes.data for d in ds])
        err = _lib.Err()
        _raise(lib.mdsd_dump_writer_write(self._h, rows, t.ctypes.data, ptrs,
                                          meta[0].ctypes.data, meta[1].ctypes.data,
                                          meta[2].ctypes.data, ctypes.byref(err)), err)

