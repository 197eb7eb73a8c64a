"""Writing logit dumps (format version 1, data/README.md), resumably and atomically.

Rows go to OUT.partial, one sample at a time; after each sample the file is flushed and
its progress attributes (`runner_samples_done`, `runner_rows_done`) updated. A rerun with
the same options (attribute `runner_config`) resumes after the last finished sample,
dropping rows of an unfinished one. When every sample is written the progress attributes
are removed, `created` is set and the file is renamed to OUT: OUT never exists half-written.
"""

import datetime
import os

import h5py
import numpy as np

from .errors import RunnerError

FORMAT_VERSION = 1
LOGITS_DTYPES = ("float32", "float16", "bfloat16")
# Rows per logits chunk: 64, fewer where a chunk would pass 4 MiB (large vocabularies).
CHUNK_ROWS = 64
CHUNK_BYTES = 4 << 20
ROW_INDEX = ("tokens", "sample_id", "position")


def to_bfloat16_bits(x):
    """Raw bfloat16 bits (uint16) of x, rounded to nearest even through float32."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(f)
    rounded[nan] = 0x7FC0
    return rounded.astype(np.uint16)


def from_bfloat16_bits(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def _now_iso():
    # SOURCE_DATE_EPOCH (reproducible-builds convention) pins the timestamp.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
         else datetime.datetime.now(datetime.timezone.utc))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class DumpWriter:
    """One dump under construction.

    root_attrs: creator, dataset, tokenizer, generation_temperature and any extra
    attributes; groups: [(path, model name, model vocab_size, dropped_padding)] with the
    target first ("target", then "drafts/<name>"); vocab: token strings (length V) or None.
    """

    def __init__(self, out, *, vocab_size, logits_dtype, compression, root_attrs, groups,
                 config, vocab=None):
        if logits_dtype not in LOGITS_DTYPES:
            raise RunnerError(f"--logits-dtype must be one of {', '.join(LOGITS_DTYPES)}")
        self.out = out
        self.partial = out + ".partial"
        self.V = int(vocab_size)
        self.logits_dtype = logits_dtype
        self.compression = compression
        self.root_attrs = root_attrs
        self.groups = groups
        self.config = config
        self.vocab = vocab
        self.file = None
        self.samples_done = 0
        self.rows_done = 0

    # -- opening -----------------------------------------------------------------------

    def open(self):
        """Opens OUT.partial, resuming it when it exists; returns the samples done."""
        folder = os.path.dirname(os.path.abspath(self.out))
        if not os.path.isdir(folder):
            raise RunnerError(f"cannot write {self.out}: folder {folder} does not exist "
                              "(or is not a folder)")
        if os.path.isdir(self.out):
            raise RunnerError(f"cannot write {self.out}: it is a folder")
        try:  # the validator run before the rename: fail now, not after the models ran
            from . import schema  # noqa: F401
        except ImportError as e:
            raise RunnerError(f"cannot validate dumps: {e} (build it with `make`)") from None
        if os.path.exists(self.partial):
            self._resume()
        else:
            self._create()
        return self.samples_done

    def _create(self):
        try:
            f = h5py.File(self.partial, "w")
        except OSError as e:
            raise RunnerError(f"cannot write {self.partial}: {e}") from None
        self.file = f
        try:
            self._layout(f)
        except BaseException:
            f.close()
            os.unlink(self.partial)
            raise

    def _layout(self, f):
        f.attrs.create("mdsd_format", FORMAT_VERSION, dtype=np.int32)
        for key, value in self.root_attrs.items():
            if isinstance(value, float):
                f.attrs.create(key, value, dtype=np.float64)
            elif isinstance(value, (int, np.integer)):
                f.attrs.create(key, value, dtype=np.int64)
            else:
                f.attrs[key] = str(value)
        f.attrs.create("vocab_size", self.V, dtype=np.int64)
        f.attrs["created"] = ""
        f.attrs["runner_config"] = self.config
        f.attrs.create("runner_samples_done", 0, dtype=np.int64)
        f.attrs.create("runner_rows_done", 0, dtype=np.int64)
        for name in ROW_INDEX:
            f.create_dataset(name, shape=(0,), maxshape=(None,), dtype=np.int32,
                             chunks=(4096,), **self._filters())
        stored = np.uint16 if self.logits_dtype == "bfloat16" else np.dtype(self.logits_dtype)
        rows = max(1, min(CHUNK_ROWS, CHUNK_BYTES // (self.V * np.dtype(stored).itemsize)))
        for path, model, model_vocab, dropped in self.groups:
            g = f.create_group(path)
            g.attrs["model"] = model
            g.attrs.create("vocab_size", model_vocab, dtype=np.int64)
            g.attrs.create("dropped_padding", dropped, dtype=np.int64)
            d = g.create_dataset("logits", shape=(0, self.V), maxshape=(None, self.V),
                                 dtype=stored, chunks=(rows, self.V), **self._filters())
            if self.logits_dtype == "bfloat16":
                d.attrs["dtype"] = "bfloat16"
        if self.vocab is not None:
            if len(self.vocab) != self.V:
                raise RunnerError(f"internal: {len(self.vocab)} token strings for V = {self.V}")
            f.create_dataset("vocab", data=np.array(self.vocab, dtype=object),
                             dtype=h5py.string_dtype())
        f.flush()

    def _filters(self):
        if self.compression == "gzip":
            return {"compression": "gzip", "compression_opts": 4, "shuffle": True}
        return {}

    def _resume(self):
        try:
            f = h5py.File(self.partial, "r+")
        except OSError as e:
            raise RunnerError(f"cannot resume from {self.partial} ({e}); delete it to start "
                              "over") from None
        self.file = f
        try:
            config = f.attrs.get("runner_config")
            if config != self.config:
                raise RunnerError(f"{self.partial} was started with other options; rerun with "
                                  f"the same options or delete it (it has {config}, this run "
                                  f"has {self.config})")
            if "runner_samples_done" not in f.attrs or "runner_rows_done" not in f.attrs:
                raise RunnerError(f"{self.partial} is damaged: its progress attributes are "
                                  "missing; delete it")
            self.samples_done = int(f.attrs["runner_samples_done"])
            self.rows_done = int(f.attrs["runner_rows_done"])
            # Rows of a sample that was being written when the run stopped.
            for d in self._datasets():
                if d.shape[0] < self.rows_done:
                    raise RunnerError(f"{self.partial} is damaged: {d.name} has {d.shape[0]} "
                                      f"rows, its progress says {self.rows_done}; delete it")
                d.resize(self.rows_done, axis=0)
        except BaseException:
            f.close()
            self.file = None
            raise

    def _datasets(self):
        f = self.file
        return [f[n] for n in ROW_INDEX] + [f[path]["logits"] for path, *_ in self.groups]

    # -- writing -----------------------------------------------------------------------

    def _encode(self, logits):
        if self.logits_dtype == "bfloat16":
            return to_bfloat16_bits(logits)
        return np.asarray(logits, dtype=self.logits_dtype)

    def append(self, sample_id, tokens, logits):
        """Writes one finished sample: its response tokens and, per group in order, its
        logits [len(tokens), V]; then records the progress."""
        m = len(tokens)
        if sample_id != self.samples_done:
            raise RunnerError(f"internal: sample {sample_id} written after {self.samples_done} samples")
        lo, hi = self.rows_done, self.rows_done + m
        index = {"tokens": np.asarray(tokens), "sample_id": np.full(m, sample_id),
                 "position": np.arange(m)}
        f = self.file
        for name in ROW_INDEX:
            f[name].resize(hi, axis=0)
            f[name][lo:hi] = index[name].astype(np.int32)
        for (path, *_), rows in zip(self.groups, logits):
            if rows.shape != (m, self.V):
                raise RunnerError(f"internal: {path} logits of shape {rows.shape}, expected {(m, self.V)}")
            d = f[path]["logits"]
            d.resize(hi, axis=0)
            d[lo:hi] = self._encode(rows)
        self.samples_done += 1
        self.rows_done = hi
        f.attrs["runner_samples_done"] = self.samples_done
        f.attrs["runner_rows_done"] = self.rows_done
        f.flush()

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None

    def discard(self):
        """Removes OUT.partial (a run that failed before finishing any sample)."""
        self.close()
        if os.path.exists(self.partial):
            os.unlink(self.partial)

    def finalize(self):
        """Marks the dump complete and renames OUT.partial to OUT."""
        f = self.file
        del f.attrs["runner_samples_done"]
        del f.attrs["runner_rows_done"]
        f.attrs["created"] = _now_iso()
        f.attrs.create("num_samples", self.samples_done, dtype=np.int64)
        self.close()
        # One validator: the file is checked by libmdsd (the reader of `mdsd`) and the
        # runner's metadata checks before it appears under OUT.
        from .schema import validate
        problems, _ = validate(self.partial)
        if problems:
            raise RunnerError(f"{self.partial}: the written dump does not validate "
                              f"(kept for inspection): {'; '.join(problems)}")
        try:
            with open(self.partial, "rb") as fd:
                os.fsync(fd.fileno())
            os.replace(self.partial, self.out)
        except OSError as e:
            raise RunnerError(f"cannot rename {self.partial} to {self.out}: {e}") from None
