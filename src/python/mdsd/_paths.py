"""The library's output-safety mechanism (mdsd/output.h), for the files the package and the
model runner write themselves: the check of outputs against inputs and each other (same file
by device and inode, hard links and symlinks included, refused naming both), new temporary
files beside an output (O_EXCL: never through a file or symlink already there) published by
rename, and the lock file of one writer per output. Private: mdsd_runner and the package use
it; the C command line runs the same code."""

import contextlib
import ctypes
import os
from ctypes import c_char_p, c_int, c_size_t

from . import MdsdError, _cstr, _lib, _raise
from ._lib import lib

_lib._sig("mdsd_output_check", c_int, c_size_t, ctypes.POINTER(c_char_p),
          ctypes.POINTER(c_char_p), c_size_t, ctypes.POINTER(c_char_p),
          ctypes.POINTER(c_char_p), _lib.E)
_lib._sig("mdsd_output_temp", c_int, c_char_p, ctypes.c_void_p, c_size_t, _lib.E)
_lib._sig("mdsd_output_publish", c_int, c_char_p, c_char_p, _lib.E)
_lib._sig("mdsd_output_discard", None, c_char_p)
_lib._sig("mdsd_output_lock", c_int, c_char_p, c_char_p, _lib.E)
_lib._sig("mdsd_output_unlock", None, c_int, c_char_p)

# The sidecars of a results file, as the command line's jobs name them.
JOB_SIDECARS = (".partial", ".lock", ".provenance.json")
_SIDECAR_WORDS = {".partial": "checkpoint", ".lock": "lock file",
                  ".provenance.json": "provenance"}


def family(path, what, suffixes):
    """[(path, what)] and [(path + suffix, 'the <word> of WHAT PATH')] for each suffix: an
    output and the sidecars written with it, as the command line lists them."""
    path = os.fsdecode(path)
    return [(path, what)] + [(path + s, f"the {_SIDECAR_WORDS.get(s, s)} of {what} {path}")
                             for s in suffixes]


def _array(values):
    arr = (c_char_p * max(1, len(values)))()
    for i, v in enumerate(values):
        arr[i] = v
    return arr


def check(inputs, outputs):
    """inputs, outputs: [(path, role)]. Raises MdsdError when an output is an input or
    another output (naming both and their roles), or cannot be written (a directory, not a
    regular file, no such folder, a folder not writable)."""
    ins = [(_cstr(p, "path"), _cstr(r, "role")) for p, r in inputs if p is not None]
    outs = [(_cstr(p, "path"), _cstr(r, "role")) for p, r in outputs if p is not None]
    keep = [_array([p for p, _ in ins]), _array([r for _, r in ins]),
            _array([p for p, _ in outs]), _array([r for _, r in outs])]
    err = _lib.Err()
    _raise(lib.mdsd_output_check(len(ins), keep[0], keep[1], len(outs), keep[2], keep[3],
                                 ctypes.byref(err)), err)


class _Temp:
    """A new temporary file beside `path`: .name, .file (binary, open for writing)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        buf = ctypes.create_string_buffer(4200)
        err = _lib.Err()
        fd = lib.mdsd_output_temp(_cstr(path, "output"), buf, len(buf), ctypes.byref(err))
        if fd < 0:
            _raise(err.code or 4, err)
        self.name = os.fsdecode(buf.value)
        self.file = os.fdopen(fd, "wb")

    def finish(self):
        """Flushes, syncs and closes (the file stays under its temporary name)."""
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
        except OSError as e:
            self.discard()
            raise MdsdError(4, f"error writing '{self.path}': {e.strerror}") from None
        finally:
            self.file.close()

    def publish(self):
        err = _lib.Err()
        _raise(lib.mdsd_output_publish(_cstr(self.name, "temporary file"),
                                       _cstr(self.path, "output"), ctypes.byref(err)), err)
        self.name = None

    def discard(self):
        if not self.file.closed:
            self.file.close()
        if self.name is not None:
            lib.mdsd_output_discard(_cstr(self.name, "temporary file"))
            self.name = None


@contextlib.contextmanager
def temporaries(paths):
    """Writes several outputs that appear together: yields [binary file per path], each a
    new temporary file beside its path; leaving the block without an exception syncs
    every one and renames each onto its path in order; an exception removes them all and
    leaves every path as it was."""
    temps = []
    try:
        for p in paths:
            temps.append(_Temp(p))
        yield [t.file for t in temps]
        for t in temps:
            t.finish()
        for t in temps:
            t.publish()
    finally:
        for t in temps:
            t.discard()


def write_files(contents):
    """contents: [(path, bytes)], written through temporaries(): all or none appear."""
    with temporaries([p for p, _ in contents]) as files:
        for f, (_, data) in zip(files, contents):
            f.write(data)


@contextlib.contextmanager
def locked(lock_path, what):
    """Holds the lock file `lock_path` (e.g. OUT.lock) for the block; refused with
    MdsdError, naming it, when another process holds it. The file is removed after."""
    err = _lib.Err()
    name = _cstr(lock_path, "lock file")
    fd = lib.mdsd_output_lock(name, _cstr(what, "output"), ctypes.byref(err))
    if fd < 0:
        _raise(err.code or 4, err)
    try:
        yield
    finally:
        lib.mdsd_output_unlock(fd, name)
