"""Writing logit dumps (format version 1, data/README.md), resumably and atomically.

Rows go to OUT.partial, one sample at a time; after each sample the file is flushed and
its progress attributes (`runner_samples_done`, `runner_rows_done`) updated. A rerun with
the same options (attribute `runner_config`) resumes after the last finished sample,
dropping rows of an unfinished one. When every sample is written the progress attributes
are removed, `created` is set and the file is renamed to OUT: OUT never exists half-written.
"""

import datetime
import os
import sys

import h5py
import numpy as np

from . import checkpoint
from .errors import RunnerError, WriteFailed

FORMAT_VERSION = 1
LOGITS_DTYPES = ("float32", "float16", "bfloat16")
# Rows per logits chunk: 64, fewer where a chunk would pass 4 MiB (large vocabularies).
CHUNK_ROWS = 64
CHUNK_BYTES = 4 << 20
ROW_INDEX = ("tokens", "sample_id", "position")
# The truncation record of a model group (data/README.md, "Truncated rows").
TRUNCATION = ("truncated", "missing_mass")


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
    truncation: write each group's truncation record (`truncated`, `missing_mass`), given
    per sample to append(); such dumps hold float32 log-probabilities.
    """

    def __init__(self, out, *, vocab_size, logits_dtype, compression, root_attrs, groups,
                 config, vocab=None, truncation=False):
        if logits_dtype not in LOGITS_DTYPES:
            raise RunnerError(f"--logits-dtype must be one of {', '.join(LOGITS_DTYPES)}")
        if truncation and logits_dtype != "float32":
            # float16 rounds a log-probability of -10 by up to 0.005 in the kept mass,
            # more than the bounds on truncated rows may move (mdsd refuses such dumps)
            raise RunnerError(f"truncated top-k rows are stored as float32 log-probabilities: "
                              f"--logits-dtype {logits_dtype} cannot hold them")
        self.truncation = bool(truncation)
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
        self.finished_file = False  # OUT.partial is the finished dump, to rename
        self.failed = False  # a write failed: the file is not touched again
        self.handles = None  # {dataset path: open h5py dataset}, while writing

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
        # Laid out in memory and published whole (a temporary file renamed onto
        # OUT.partial): a run killed while creating it leaves no OUT.partial that libhdf5
        # cannot open (a kill during the layout did, 12 of 200 fault-injection runs).
        from .outputs import atomic_file
        with h5py.File(self.partial, "w", driver="core", backing_store=False) as f:
            self._layout(f)
            f.flush()
            image = f.id.get_file_image()
        try:
            with atomic_file(self.partial) as out:
                out.write(image)
            self.file = h5py.File(self.partial, "r+")
        except OSError as e:
            raise RunnerError(f"cannot write {self.partial}: {e}") from None

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
        f.attrs.create(checkpoint.CLEAN, 0, dtype=np.int64)  # set when closed after a sample
        f.create_dataset(checkpoint.SAMPLE_ROWS, shape=(0,), maxshape=(None,), dtype=np.int64,
                         chunks=(1024,))
        f.create_dataset(checkpoint.SAMPLE_SHA256, shape=(0, 32), maxshape=(None, 32),
                         dtype=np.uint8, chunks=(1024, 32))
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
            if self.truncation:
                for name, dtype in zip(TRUNCATION, (np.uint8, np.float64)):
                    g.create_dataset(name, shape=(0,), maxshape=(None,), dtype=dtype,
                                     chunks=(4096,), **self._filters())
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
        # Inspected (and rebuilt when it was not closed cleanly) by a child process that a
        # damaged file cannot hang (checkpoint.py); then opened here.
        result = checkpoint.check(self.partial, self.config)
        kind = result["kind"]
        if kind == "config":
            raise RunnerError(f"{self.partial} was started with other options; rerun with "
                              f"the same options or delete it (it has {result['config']}, "
                              f"this run has {self.config})")
        if kind == "legacy":
            raise RunnerError(f"{self.partial} has no checkpoint checksums (written by an older "
                              "mdsd-runner): finish it with that version, or delete it")
        if kind == "damaged":
            raise RunnerError(f"cannot resume from {self.partial}: it is damaged "
                              f"({result['why']}); delete it to start over")
        if kind == "rebuilt":
            os.replace(result["rebuild"], self.partial)
            dropped = result["had_samples"] - result["samples"]
            if dropped or result["extra_rows"]:
                kept = (f"dropped its torn tail ({dropped} recorded samples and "
                        f"{result['extra_rows']} rows past the last good one"
                        + (f"; {result['why']}" if result["why"] else "") + ")")
            else:
                kept = "every recorded sample verifies"
            print(f"mdsd-runner: {self.partial} was not closed cleanly (the run was killed, or a "
                  f"write failed?): "
                  f"rebuilt from the {result['samples']} samples ({result['rows']} rows) whose "
                  f"checksums verify; {kept}", file=sys.stderr)
        if kind == "finished":
            print(f"mdsd-runner: {self.partial} is the finished dump (the run stopped before "
                  f"renaming it; it validates): renaming it to {self.out}", file=sys.stderr)
            self.finished_file = True
            self.samples_done, self.rows_done = result["samples"], result["rows"]
            return
        try:
            f = h5py.File(self.partial, "r+")
        except OSError as e:
            raise RunnerError(f"cannot resume from {self.partial} ({e}); delete it to start "
                              "over") from None
        self.file = f
        try:
            self.samples_done = int(f.attrs["runner_samples_done"])
            self.rows_done = int(f.attrs["runner_rows_done"])
            self._mark_clean(0)
        except BaseException:
            f.close()
            self.file = None
            raise

    def _mark_clean(self, value):
        self.file.attrs[checkpoint.CLEAN] = np.int64(value)
        self.file.flush()

    def _row_paths(self):
        """Every dataset with one entry per row (checkpoint.row_datasets of this layout)."""
        names = ("logits",) + (TRUNCATION if self.truncation else ())
        return list(ROW_INDEX) + [f"{path}/{n}" for path, *_ in self.groups for n in names]

    # -- writing -----------------------------------------------------------------------

    def _encode(self, logits):
        if self.logits_dtype == "bfloat16":
            return to_bfloat16_bits(logits)
        return np.asarray(logits, dtype=self.logits_dtype)

    def append(self, sample_id, tokens, logits, truncation=None):
        """Writes one finished sample: its response tokens and, per group in order, its
        logits [len(tokens), V] (and, for a writer made with truncation=True, its
        truncation record (truncated uint8 [m], missing_mass float64 [m])); then records
        the progress. A write that fails (a full
        disk, `ulimit -f`) is refused naming OUT.partial; the file is then left alone (a
        resume verifies what it holds)."""
        try:
            self._append(sample_id, tokens, logits, truncation)
        except (OSError, RuntimeError) as e:  # h5py raises both for a failed write
            self.failed = True
            raise WriteFailed(f"cannot write {self.partial}: {e}; rerun the same command "
                              "to resume from the samples it holds",
                              keep=(e, e.__traceback__, self.file, self.handles)) from None

    def _truncation_rows(self, path, record, m):
        """The checked truncation record of one group's sample: what mdsd checks at open
        (flags 0/1, missing mass in [0, 1], 0 on complete rows), refused here before it
        is written."""
        flags, mass = (np.asarray(x).reshape(-1) for x in record)
        if flags.shape != (m,) or mass.shape != (m,):
            raise RunnerError(f"internal: {path} truncation record of {flags.shape[0]} and "
                              f"{mass.shape[0]} values for {m} rows")
        if not np.isin(flags, (0, 1)).all():
            raise RunnerError(f"internal: {path}/truncated holds {flags[~np.isin(flags, (0, 1))][0]}")
        mass = mass.astype(np.float64)
        bad = ~((mass >= 0) & (mass <= 1)) | ((flags == 0) & (mass != 0))
        if bad.any():
            r = int(np.argmax(bad))
            raise RunnerError(f"internal: {path}/missing_mass row {r}: {mass[r]} (truncated {flags[r]})")
        return flags.astype(np.uint8), mass

    def _append(self, sample_id, tokens, logits, truncation=None):
        m = len(tokens)
        if sample_id != self.samples_done:
            raise RunnerError(f"internal: sample {sample_id} written after {self.samples_done} samples")
        if (truncation is not None) != self.truncation or (
                truncation is not None and len(truncation) != len(self.groups)):
            raise RunnerError("internal: a truncation record per group is given exactly when "
                              "the writer was made with truncation=True")
        lo, hi = self.rows_done, self.rows_done + m
        index = {"tokens": np.asarray(tokens), "sample_id": np.full(m, sample_id),
                 "position": np.arange(m)}
        f = self.file
        stored = {name: index[name].astype(np.int32) for name in ROW_INDEX}
        for (path, *_), rows in zip(self.groups, logits):
            if rows.shape != (m, self.V):
                raise RunnerError(f"internal: {path} logits of shape {rows.shape}, expected {(m, self.V)}")
            stored[f"{path}/logits"] = self._encode(rows)
        for (path, *_), record in zip(self.groups, truncation or ()):
            stored[f"{path}/truncated"], stored[f"{path}/missing_mass"] = \
                self._truncation_rows(path, record, m)
        # The datasets stay open for the writer's life: closing one flushes its chunks,
        # and a flush that fails in a destructor cannot be reported (errors.WriteFailed).
        if self.handles is None:
            self.handles = {name: f[name] for name in [*stored, *checkpoint.PER_SAMPLE]}
        for name, rows in stored.items():
            d = self.handles[name]
            d.resize(hi, axis=0)
            d[lo:hi] = rows
        s = self.samples_done
        for name, value in ((checkpoint.SAMPLE_ROWS, hi),
                            (checkpoint.SAMPLE_SHA256, checkpoint.sample_digest(stored))):
            self.handles[name].resize(s + 1, axis=0)
            self.handles[name][s] = value
        self.samples_done += 1
        self.rows_done = hi
        f.attrs["runner_samples_done"] = self.samples_done
        f.attrs["runner_rows_done"] = self.rows_done
        f.flush()

    def close(self):
        """Closes the file; a run stopped mid-sample (an exception, Ctrl-C) first drops that
        sample's rows, and a file left consistent is marked clean (resumed in place)."""
        if self.file is None:
            return
        f, self.file = self.file, None
        handles, self.handles = self.handles, None
        if self.failed:  # not touched again (errors.WriteFailed)
            WriteFailed.kept.append((f, handles))
            return
        del handles
        try:
            if checkpoint.CLEAN in f.attrs:
                for n in self._row_paths():
                    f[n].resize(self.rows_done, axis=0)
                for n in checkpoint.PER_SAMPLE:
                    f[n].resize(self.samples_done, axis=0)
                f.flush()
                f.attrs[checkpoint.CLEAN] = np.int64(1)
        except Exception:  # noqa: BLE001 - left unclean: the next resume verifies it
            pass
        finally:
            f.close()

    def discard(self):
        """Removes OUT.partial (a run that failed before finishing any sample)."""
        self.close()
        if os.path.exists(self.partial):
            os.unlink(self.partial)

    def finalize(self):
        """Marks the dump complete and renames OUT.partial to OUT. In an order that a kill
        at any point leaves resumable: the checkpoint's bookkeeping stays until the file
        has validated (a resume then finalizes again), and a file stripped of it but not
        yet renamed is validated again by the next resume and renamed
        (checkpoint.inspect's "finished")."""
        if not self.finished_file:
            f = self.file
            f.attrs["created"] = _now_iso()
            f.attrs.create("num_samples", self.samples_done, dtype=np.int64)
            self.close()
            # One validator: the file is checked by libmdsd (the reader of `mdsd`) and the
            # runner's metadata checks before it appears under OUT.
            from .schema import validate
            problems, _ = validate(self.partial, truncated_ok=True)
            if problems:
                raise RunnerError(f"{self.partial}: the written dump does not validate "
                                  f"(kept for inspection): {'; '.join(problems)}")
        self.close()
        with h5py.File(self.partial, "r+") as f:
            # runner_samples_done first: without it a resume takes the file as finished.
            for name in ("runner_samples_done", "runner_rows_done", checkpoint.CLEAN):
                if name in f.attrs:
                    del f.attrs[name]
            for name in checkpoint.PER_SAMPLE:
                if name in f:
                    del f[name]
        try:
            with open(self.partial, "rb") as fd:
                os.fsync(fd.fileno())
            os.replace(self.partial, self.out)
        except OSError as e:
            raise RunnerError(f"cannot rename {self.partial} to {self.out}: {e}") from None
