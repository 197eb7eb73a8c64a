"""Checkpoint integrity of OUT.partial (dump.py's DumpWriter).

HDF5 is not crash-safe: a run killed between two flushes (kill -9, an out-of-memory kill,
a power cut) can leave a file whose metadata and chunks are from different moments - a torn
gzip chunk, a chunk index that points at space reused since - and libhdf5 may then fail,
return rows that are not the ones written, or loop inside H5Dset_extent (in C, where no
signal handler runs). So:

  * the writer records, per finished sample, the row where it ends (`runner_sample_rows`)
    and the SHA-256 of every row dataset's bytes over its rows (`runner_sample_sha256`,
    see sample_digest), and sets the attribute `runner_clean` to 1 only when it closes the
    file after a finished sample (0 while it writes);
  * a resume first inspects OUT.partial in a child process (python -m
    mdsd_runner.checkpoint), which reports a line per sample it reads; the parent kills
    it when it goes silent for CHECK_TIMEOUT seconds (a libhdf5 hang) or when the runner
    is interrupted (SIGTERM, Ctrl-C);
  * a file closed cleanly is resumed in place; any other is rebuilt by the child into
    OUT.partial.rebuild (created exclusively) from the samples whose digests verify, in
    order, up to the first that does not - the torn tail is dropped and said so - and
    renamed over OUT.partial; a file the child cannot read is refused with a message.

The digests and the flag are removed when the dump is finished."""

import hashlib
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import time

import numpy as np

SAMPLE_ROWS = "runner_sample_rows"
SAMPLE_SHA256 = "runner_sample_sha256"
CLEAN = "runner_clean"
PER_SAMPLE = (SAMPLE_ROWS, SAMPLE_SHA256)
# Seconds the inspection may go without reading a sample before it counts as hung.
CHECK_TIMEOUT = float(os.environ.get("MDSD_RUNNER_CHECKPOINT_TIMEOUT", "120"))


def sample_digest(rows):
    """SHA-256 of one sample's rows: rows = {dataset path: array as stored}, hashed in path
    order with each path, dtype and shape, so that no two layouts hash alike."""
    h = hashlib.sha256()
    for path in sorted(rows):
        a = np.ascontiguousarray(rows[path])
        h.update(f"{path}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8)


def row_datasets(f):
    """Paths of the datasets with one entry per row: the row index, every logits and
    every truncation record (data/README.md, "Truncated rows")."""
    groups = ["target"]
    drafts = f.get("drafts")
    if drafts is not None:
        groups += [f"drafts/{name}" for name in sorted(drafts.keys())]
    paths = ["tokens", "sample_id", "position"]
    for g in groups:
        paths += [f"{g}/{n}" for n in ("logits", "truncated", "missing_mass")
                  if n == "logits" or f"{g}/{n}" in f]
    return paths


# ---- the child: inspect, verify, rebuild ---------------------------------------------------

class Damaged(Exception):
    pass


def _say(kind, **fields):
    sys.stdout.write(json.dumps(dict(fields, kind=kind)) + "\n")
    sys.stdout.flush()


def _copy_attrs(src, dst):
    for name in src.attrs:
        dst.attrs.create(name, src.attrs[name], dtype=src.attrs.get_id(name).dtype)


def _like(src, dst_file, path, n):
    """An empty copy of dataset src at path in dst_file, n entries along axis 0."""
    d = dst_file.create_dataset(path, shape=(n,) + src.shape[1:], maxshape=src.maxshape,
                                dtype=src.dtype, chunks=src.chunks, compression=src.compression,
                                compression_opts=src.compression_opts, shuffle=src.shuffle)
    _copy_attrs(src, d)
    return d


def inspect(partial, rebuild, config):
    """Reports (as JSON lines on stdout) a heartbeat per sample and one result:
    clean (resume in place), rebuilt (samples that verify written to REBUILD), finished
    (the finished dump, validated, to rename), config (other options), legacy (no digests)
    or damaged (with the reason)."""
    size = os.path.getsize(partial)
    try:
        return _inspect(partial, rebuild, config, size)
    finally:
        if os.path.exists(partial) and os.path.getsize(partial) != size:
            os.truncate(partial, size)  # as it was (see _open)


def _open(partial, size):
    """partial opened read-only. A write cut off by a full disk or `ulimit -f` leaves a
    file shorter than its superblock says ("truncated file"), which libhdf5 refuses to
    open: it is then lengthened with zeros to that size, for the samples written before to
    be verified (rows in the missing tail fail their checksums); inspect() cuts it back."""
    import h5py
    try:
        return h5py.File(partial, "r", rdcc_nbytes=64 << 20, rdcc_nslots=100003), False
    except OSError as e:
        found = re.search(r"truncated file: eof = (\d+).*stored_eof = (\d+)", str(e))
        if not found or int(found.group(1)) != size or int(found.group(2)) > 2 * size + (1 << 20):
            raise Damaged(f"libhdf5 cannot open it: {e}") from None
        os.truncate(partial, int(found.group(2)))
        try:
            return h5py.File(partial, "r", rdcc_nbytes=64 << 20, rdcc_nslots=100003), True
        except OSError as again:
            raise Damaged(f"libhdf5 cannot open it: {again}") from None


def _inspect(partial, rebuild, config, size):
    import h5py
    f, lengthened = _open(partial, size)
    with f:
        try:
            found = f.attrs.get("runner_config")
            found = found.decode() if isinstance(found, bytes) else found
            if found != config:
                return _say("config", config=found if isinstance(found, str) else repr(found))
            if "runner_samples_done" not in f.attrs and "num_samples" in f.attrs:
                finished = (int(f.attrs["num_samples"]), int(f["tokens"].shape[0]))
            elif SAMPLE_ROWS not in f or SAMPLE_SHA256 not in f or CLEAN not in f.attrs:
                return _say("legacy")
            else:
                finished = None
                done = int(f.attrs["runner_samples_done"])
                rows_done = int(f.attrs["runner_rows_done"])
                paths = row_datasets(f)
                sets = {p: f[p] for p in paths}
                ends, digests = f[SAMPLE_ROWS], f[SAMPLE_SHA256]
        except (OSError, KeyError, ValueError, TypeError) as e:
            raise Damaged(f"its layout cannot be read: {e}") from None
        if finished:  # stripped by DumpWriter.finalize, not yet renamed
            if lengthened:  # cut short: it has no checksums left to verify it against
                raise Damaged("the run stopped while finishing it, and it is shorter than "
                              "libhdf5 recorded")
            f.close()
            from .schema import validate
            problems, _ = validate(partial, truncated_ok=True)
            if problems:
                raise Damaged("the run stopped while finishing it, and it does not validate: "
                              + "; ".join(problems))
            return _say("finished", samples=finished[0], rows=finished[1])
        if not 0 <= done <= min(ends.shape[0], digests.shape[0]):
            raise Damaged(f"progress says {done} samples, {ends.shape[0]} are recorded")
        extents = {p: d.shape[0] for p, d in sets.items()}
        if (not lengthened and int(f.attrs[CLEAN]) == 1
                and ends.shape[0] == done and digests.shape[0] == done
                and all(n == rows_done for n in extents.values())
                and (done == 0 or int(ends[done - 1]) == rows_done)):
            return _say("clean", samples=done, rows=rows_done)
        try:
            out = h5py.File(rebuild, "x")
        except OSError as e:
            raise Damaged(f"cannot create {rebuild} to rebuild it in ({e}); if that file is "
                          "left from an earlier resume, delete it") from None
        if os.environ.get("MDSD_RUNNER_CHECKPOINT_STALL") == "rebuild":  # tests
            time.sleep(3600)
        try:
            with out:
                _copy_attrs(f, out)
                for name in ("target", "drafts"):
                    if name in f:
                        out.create_group(name)
                for p in paths:
                    group = p.rsplit("/", 1)[0] if "/" in p else None
                    if group and group not in out:
                        out.create_group(group)
                    if group:
                        _copy_attrs(f[group], out[group])
                    _like(sets[p], out, p, 0)
                for p in PER_SAMPLE:
                    _like(f[p], out, p, 0)
                if "vocab" in f:
                    out.create_dataset("vocab", data=f["vocab"][()], dtype=f["vocab"].dtype)
                kept, lo, why = 0, 0, None
                for s in range(done):
                    try:
                        hi = int(ends[s])
                        if not lo < hi <= min(extents.values()):
                            why = f"sample {s} would end at row {hi}"
                            break
                        rows = {p: sets[p][lo:hi] for p in paths}
                        good = np.array_equal(sample_digest(rows), digests[s])
                    except (OSError, ValueError, TypeError) as e:
                        why = f"sample {s} (rows {lo}..) cannot be read: {e}"
                        break
                    if not good:
                        why = f"sample {s} (rows {lo}..{hi - 1}) does not match its checksum"
                        break
                    for p in paths:
                        d = out[p]
                        d.resize(hi, axis=0)
                        d[lo:hi] = rows[p]
                    for p, value in ((SAMPLE_ROWS, hi), (SAMPLE_SHA256, digests[s])):
                        out[p].resize(s + 1, axis=0)
                        out[p][s] = value
                    kept, lo = s + 1, hi
                    _say("sample", sample=s)
                out.attrs["runner_samples_done"] = np.int64(kept)
                out.attrs["runner_rows_done"] = np.int64(lo)
                out.attrs[CLEAN] = np.int64(1)
        except BaseException:
            os.unlink(rebuild)
            raise
        _say("rebuilt", samples=kept, rows=lo, had_samples=done, had_rows=rows_done,
             extra_rows=max(extents.values()) - lo, why=why)


def _reaper(runner, rebuild, existed):
    """Forked by the child before it opens anything: when the runner that started the child
    is gone (kill -9) while the child still runs, kills the child - with SIGKILL, as a
    child looping inside libhdf5 runs no Python code - and removes the rebuild file if the
    child made it (it did not exist before; the runner's OUT.lock keeps other runs away).
    Ends with the child."""
    child = os.getppid()
    while os.getppid() == child:
        try:
            os.kill(runner, 0)
        except ProcessLookupError:
            os.kill(child, signal.SIGKILL)
            if not existed and os.path.lexists(rebuild):
                os.unlink(rebuild)
            break
        time.sleep(0.2)
    os._exit(0)


def _child_main(argv):
    partial, rebuild = argv
    runner, existed = os.getppid(), os.path.lexists(rebuild)
    if os.fork() == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the runner reads the child's stdout to its end
                os.dup2(null, fd)
            _reaper(runner, rebuild, existed)
        finally:
            os._exit(0)
    config = sys.stdin.read()
    if os.environ.get("MDSD_RUNNER_CHECKPOINT_STALL") == "1":  # tests: a child that hangs
        time.sleep(3600)
    try:
        inspect(partial, rebuild, config)
    except Damaged as e:
        _say("damaged", why=str(e))
    except Exception as e:  # noqa: BLE001 - whatever libhdf5 raises on a torn file
        _say("damaged", why=f"{type(e).__name__}: {e}")
    return 0


# ---- the parent: run the child under a watchdog --------------------------------------------

def check(partial, config):
    """Inspects OUT.partial in a child process (module docstring); returns its result dict
    (kind clean, rebuilt, finished, config, legacy or damaged). The rebuilt file is REBUILD."""
    from .errors import RunnerError
    try:
        mode = os.stat(partial).st_mode
    except OSError as e:
        raise RunnerError(f"cannot resume from {partial}: {e}") from None
    if not stat.S_ISREG(mode):
        raise RunnerError(f"cannot resume from {partial}: not a regular file; delete it to "
                          "start over")
    rebuild = partial + ".rebuild"
    ours = not os.path.lexists(rebuild)  # else the child refuses, and it is left alone
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    child = subprocess.Popen([sys.executable, "-m", "mdsd_runner.checkpoint", partial, rebuild],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    result = None
    try:
        child.stdin.write(config.encode())
        child.stdin.close()
        buf = b""
        last = time.monotonic()
        while result is None:
            wait = CHECK_TIMEOUT - (time.monotonic() - last)
            ready = select.select([child.stdout], [], [], max(0.0, wait))[0] if wait > 0 else []
            if not ready:
                raise RunnerError(f"cannot resume from {partial}: libhdf5 read no sample of it "
                                  f"for {CHECK_TIMEOUT:g} s (a damaged file can make it loop); "
                                  "delete it to start over")
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                err = child.stderr.read().decode(errors="replace").strip().splitlines()
                raise RunnerError(f"cannot resume from {partial}: its inspection stopped "
                                  f"({err[-1] if err else 'no message'}); delete it to start "
                                  "over")
            buf += chunk
            last = time.monotonic()
            while b"\n" in buf and result is None:
                line, buf = buf.split(b"\n", 1)
                message = json.loads(line)
                if message["kind"] != "sample":
                    result = message
        child.wait()
    except BaseException:
        child.kill()
        child.wait()
        if ours and result is None and os.path.lexists(rebuild):
            os.unlink(rebuild)  # the killed child made it, exclusively
        raise
    finally:
        child.stdout.close()
        child.stderr.close()
    result["rebuild"] = rebuild
    return result


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
