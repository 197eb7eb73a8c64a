"""The output check of every runner command that writes (ngram, hf, torch, import; tree dumps
too), before any work: -o OUT and its checkpoint OUT.partial are compared with every file the
command reads (--prompts, --corpus, the import arrays, each model folder's files: config,
vocabulary, weights) by libmdsd's own check (mdsd/output.h, the one `mdsd` runs: same file
by device and inode, so symlinks and hard links too), and refused naming both files; an OUT
that is a folder, or in no folder, is refused there too. Then OUT.lock is held while the
command runs (libmdsd's lock file, as `mdsd table -o` holds one): a second run on the same
-o is refused instead of writing the first one's OUT.partial."""

import contextlib
import os

from .errors import RunnerError

# Files of a model folder deeper than this are not compared (a folder's own files and one
# level of subfolders: transformers' and tinylm's layouts).
_MODEL_DEPTH = 1


def _array_file(spec):
    """The file of an import array FILE[:KEY], as importer.load_array reads it."""
    if not os.path.exists(spec) and ":" in spec:
        return spec.rsplit(":", 1)[0]
    return spec


def _model_files(folder, role):
    """[(path, role)] of the files a model folder holds (none for a cached model name)."""
    if not os.path.isdir(folder):
        return []
    found = []
    top = os.path.normpath(folder).count(os.sep)
    for here, dirs, files in os.walk(folder):
        if os.path.normpath(here).count(os.sep) - top >= _MODEL_DEPTH:
            dirs[:] = []
        found += [(os.path.join(here, f), f"a file of {role} {folder}") for f in sorted(files)]
    return found


def inputs_of(args):
    """[(path, role)]: every file the command `args.command` reads."""
    found = []
    if args.command == "import":
        trace = getattr(args, "openai_logprobs", None)  # JSONL files: no FILE:KEY
        if trace is not None:
            found.append((trace, "--openai-logprobs"))
        elif args.target is not None:
            found.append((_array_file(args.target), "--target"))
        for spec in args.draft or []:
            name, sep, path = spec.partition("=")
            if sep:
                found.append((path if trace is not None else _array_file(path), f"--draft {name}"))
        if getattr(args, "vocab", None):
            found.append((args.vocab, "--vocab"))
        for option in ("tokens", "sample_ids"):
            spec = getattr(args, option, None)
            if spec:
                found.append((_array_file(spec), "--" + option.replace("_", "-")))
        return found
    found.append((args.prompts, "--prompts"))
    if args.command == "ngram" and args.corpus != "kjv":
        found.append((args.corpus, "--corpus"))
    if args.command in ("hf", "torch"):
        found += _model_files(args.target, "--target")
        for d in args.draft or []:
            found += _model_files(d, "--draft")
    return found


def _mdsd():
    try:
        from .schema import mdsd  # the mdsd package beside the runner (schema.py finds it)
        from mdsd import _paths
    except ImportError as e:
        raise RunnerError(f"cannot check the output against the inputs: {e} (build libmdsd "
                          "with `make`, or set MDSD_LIBRARY)") from None
    return mdsd, _paths


@contextlib.contextmanager
def atomic_file(path):
    """A binary file for the block that appears at `path` only when the block ends without
    an exception: libmdsd's new temporary file beside it (O_EXCL: never a user's PATH.tmp,
    nor through a symlink), synced and renamed onto path; removed on an exception."""
    mdsd, _paths = _mdsd()
    try:
        with _paths.temporaries([path]) as (f,):
            yield f
    except mdsd.MdsdError as e:
        raise RunnerError(str(e)) from None


@contextlib.contextmanager
def writing(args):
    """The command's outputs checked, then held: refuses (RunnerError) an -o that is one of
    the command's inputs or cannot be written, before any model is loaded or any file
    touched; then holds OUT.lock (as `mdsd table -o` does: one writer per output, so that
    two runs cannot write one OUT.partial) until the block ends, and removes it."""
    mdsd, _paths = _mdsd()
    out = args.output
    outputs = [(out, "-o"), (out + ".partial", f"the checkpoint of -o {out}"),
               (out + ".partial.rebuild", f"the rebuilt checkpoint of -o {out}"),
               (out + ".lock", f"the lock file of -o {out}")]
    try:
        _paths.check(inputs_of(args), outputs)
        lock = _paths.locked(out + ".lock", f"-o {out}")
        lock.__enter__()
    except mdsd.MdsdError as e:
        raise RunnerError(str(e)) from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)
