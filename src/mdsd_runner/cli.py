"""The command line: `mdsd-runner ngram|hf|torch|validate ...` (src/bin/mdsd-runner, which picks
the Python; or, with PYTHONPATH=src, `python3 -m mdsd_runner ...`). Exit status 0 success,
1 bad input or failure (the message names the problem), 2 usage error, 130 interrupted
(rerun the command to resume)."""

import argparse
import json
import os
import signal
import sys
import threading

from . import __version__
from .errors import RunnerError

EPILOG = """Output: OUT is written as OUT.partial, one sample at a time, and renamed to OUT
when every sample is done. Rerunning an interrupted command (same options) resumes after the
last finished sample; after a kill -9 or a failed write, OUT.partial is first checked
(SHA-256 of each sample's rows) and rebuilt from the samples that verify. Sample i uses
prompt i mod (number of prompts) and a random stream seeded by (--seed, i). Dump format:
data/README.md."""


def _common(p, temperature):
    p.add_argument("--prompts", required=True, metavar="FILE",
                   help='JSONL prompts: {"prompt": TEXT} or {"messages": [...]} per line')
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5", help="the dump to write")
    p.add_argument("--num-samples", type=int, metavar="N",
                   help="samples to generate (default: one per prompt; prompts repeat cyclically)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--gen-temperature", type=float, default=temperature, metavar="T",
                   help=f"temperature the target generates at; 0 = greedy (default {temperature})")
    p.add_argument("--max-new-tokens", type=int, default=64, metavar="M",
                   help="response length limit (default 64)")
    p.add_argument("--batch-size", type=int, default=8, metavar="B",
                   help="samples per batch, at most (default 8)")
    p.add_argument("--max-batch-tokens", type=int, default=4096, metavar="T",
                   help="padded tokens per forward pass, at most: a batch is split so that rows "
                        "x longest row <= T (a longer sample runs alone); bounds activation, "
                        "cache and logits memory (default 4096)")
    p.add_argument("--logits-dtype", choices=("auto", "float32", "float16", "bfloat16"),
                   default="auto",
                   help="stored logits type (default auto: the model's type for hf, bf16 -> "
                        "bfloat16, fp16 -> float16, fp32 -> float32; float32 for ngram)")
    p.add_argument("--compression", choices=("gzip", "none"), default="gzip",
                   help="HDF5 filter for the datasets (default gzip with shuffle; none is "
                        "faster for large vocabularies)")
    p.add_argument("--dataset", metavar="NAME",
                   help="the dataset attribute (default: the prompt file's name)")
    p.add_argument("--stop-after", type=int, metavar="K",
                   help="write at most K more samples, then stop leaving OUT.partial to resume "
                        "(for time-limited machines)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _option(parse):
    """An argparse type from a parser that raises RunnerError (a usage error, exit 2)."""
    def convert(text):
        try:
            parse(text)
        except RunnerError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text
    convert.__name__ = parse.__name__
    return convert


def _parser():
    from .hf import parse_device_map, parse_template_kwargs

    top = argparse.ArgumentParser(
        prog="mdsd-runner",
        description="Dump target and drafter logits of language models to HDF5 for mdsd. "
                    "The wrapper src/bin/mdsd-runner runs the Python given by --python PATH "
                    "(the first argument) or MDSD_PYTHON, else the python3 on PATH if it "
                    "imports numpy and h5py, else /usr/bin/python3.",
        epilog=EPILOG)
    top.add_argument("--version", action="version", version=f"mdsd-runner {__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ng = sub.add_parser(
        "ngram", epilog=EPILOG,
        help="Kneser-Ney n-gram target and drafters trained on a corpus (numpy only)",
        description="Interpolated modified Kneser-Ney word n-gram models: the target "
                    "(--order) and one drafter per --draft-order, trained on the same corpus. "
                    "Logits are natural-log probabilities up to a constant per row.")
    _common(ng, 1.0)
    ng.add_argument("--corpus", default="kjv", metavar="kjv|FILE",
                    help="training text: 'kjv' (the King James Bible, Debian's bible-kjv) or a "
                         "file with one sentence per line (default kjv)")
    ng.add_argument("--order", type=int, default=4, help="target order, at least 4 (default 4)")
    ng.add_argument("--draft-order", type=int, action="append", metavar="K",
                    help="a drafter of order K (repeatable; default 2)")
    ng.add_argument("--vocab-size", type=int, default=8192, metavar="V",
                    help="at most V token ids: <unk>, </s>, <s> and the most frequent words "
                         "(default 8192)")

    hf = sub.add_parser(
        "hf", epilog=EPILOG,
        help="PyTorch + transformers models from local folders or the local cache",
        description="The target generates; target and drafters are teacher-forced on prompt + "
                    "response (local files only: nothing is downloaded). Needs torch and "
                    "transformers.")
    _common(hf, 0.7)
    hf.add_argument("--target", required=True, metavar="MODEL", help="target model folder or cached name")
    hf.add_argument("--draft", required=True, action="append", metavar="MODEL",
                    help="drafter model (repeatable); must share the target's tokenizer")
    hf.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="where the models run (default cuda); see --device-map")
    hf.add_argument("--device-map", type=_option(parse_device_map), metavar="MAP",
                    help="spread each model over devices with accelerate instead of --device: "
                         "auto, balanced, balanced_low_0, sequential, a device (cuda:1), or a "
                         "JSON object {module: device} (transformers' device_map)")
    hf.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), default="bf16",
                    help="model weights and compute type (default bf16)")
    hf.add_argument("--revision", action="append", metavar="[MODEL=]REV",
                    help="a branch, tag or commit of the models in the local cache (repeatable: "
                         "REV for every model, MODEL=REV for one of --target / --draft)")
    hf.add_argument("--trust-remote-code", action="store_true",
                    help="run the model folders' own Python code (transformers' "
                         "trust_remote_code; only for folders you trust)")
    hf.add_argument("--attn-implementation", metavar="NAME",
                    help="transformers' attn_implementation: eager, sdpa, flash_attention_2, ... "
                         "(default: transformers' choice)")
    hf.add_argument("--chat", action="store_true",
                    help='wrap {"prompt"} records as one user message for the chat template')
    hf.add_argument("--chat-template-kwargs", type=_option(parse_template_kwargs), metavar="JSON",
                    help='a JSON object of extra chat-template variables, e.g. '
                         '\'{"enable_thinking": false}\' for Qwen3')

    from .torch_backend import add_arguments as torch_arguments
    tp = sub.add_parser(
        "torch", epilog=EPILOG,
        help="small causal transformers in plain PyTorch (a config and a state dict per folder)",
        description="Models of src/mdsd_runner/tinylm.py (data/README.md, 'The neural pair'): "
                    "the target generates; target and drafters are teacher-forced on prompt + "
                    "response. Needs torch only (no transformers).")
    _common(tp, 1.0)
    torch_arguments(tp)

    from .trees import add_arguments as tree_arguments
    tree_arguments(ng)
    tree_arguments(hf)
    tree_arguments(tp)

    va = sub.add_parser("validate", help="check dumps against the format (data/README.md)",
                        description="Checks each FILE against dump format version 1; prints a "
                                    "summary or the problems found.")
    va.add_argument("files", nargs="+", metavar="FILE")
    from .importer import add_parser as add_import_parser
    add_import_parser(sub)
    return top


def _validate(files):
    from .schema import validate
    status = 0
    for path in files:
        problems, summary = validate(path, truncated_ok=True)
        if problems:
            status = 1
            for p in problems:
                print(f"mdsd-runner: {path}: {p}", file=sys.stderr)
        else:
            print(f"{path}: ok: {json.dumps(summary, sort_keys=True)}")
    return status


def _dump(args):
    from .pipeline import run
    from .prompts import load_prompts

    prompts = load_prompts(args.prompts)
    dataset = args.dataset or os.path.splitext(os.path.basename(args.prompts))[0]
    if args.command == "ngram":
        from . import ngram
        orders = args.draft_order or [2]
        tokenizer, target, drafts, info = ngram.build(args.corpus, args.vocab_size, args.order, orders)
        config = dict(info, order=args.order, draft_orders=orders, vocab_size=args.vocab_size)
        logits_dtype = "float32" if args.logits_dtype == "auto" else args.logits_dtype
    elif args.command == "torch":
        from . import torch_backend
        tokenizer, target, drafts, config, logits_dtype = torch_backend.setup(args)
    else:
        from . import hf
        device_map = hf.parse_device_map(args.device_map)
        template_kwargs = hf.parse_template_kwargs(args.chat_template_kwargs)
        revisions = hf.parse_revisions(args.revision, [args.target, *args.draft])
        tokenizer, target, drafts = hf.load(args.target, args.draft, args.device, args.dtype,
                                            args.chat, device_map, template_kwargs, revisions,
                                            args.trust_remote_code, args.attn_implementation)
        config = dict(target=args.target, drafts=args.draft, dtype=args.dtype, chat=args.chat,
                      **hf.versions())
        for key, value in (("revisions", revisions), ("attn_implementation",
                           args.attn_implementation), ("trust_remote_code", args.trust_remote_code)):
            if value:
                config[key] = value
        # The placement the run used: one device, or a device map.
        if device_map is None:
            config["device"] = args.device
        else:
            config["device_map"] = device_map
        if template_kwargs:
            config["chat_template_kwargs"] = template_kwargs
        logits_dtype = (hf.DTYPES[args.dtype] if args.logits_dtype == "auto"
                        else args.logits_dtype)
    if args.tree_policy:
        from .trees import run_trees
        args.logits_dtype = logits_dtype  # 'auto' resolved as for a flat dump
        s = run_trees(args, tokenizer, target, drafts, prompts, config, args.command, dataset)
        print(f"wrote {s['output']}: {s['trees']} trees, {s['rows']} rows, "
              f"V = {s['vocab_size']}, {s['seconds']:.1f} s")
        return 0
    summary = run(tokenizer, target, drafts, prompts, out=args.output, backend=args.command,
                  dataset=dataset, num_samples=args.num_samples, seed=args.seed,
                  temperature=args.gen_temperature, max_new_tokens=args.max_new_tokens,
                  batch_size=args.batch_size, max_batch_tokens=args.max_batch_tokens,
                  logits_dtype=logits_dtype,
                  compression=args.compression, stop_after=args.stop_after, config=config,
                  progress=False if args.quiet else None)
    state = "wrote" if summary["finished"] else "stopped; resume from"
    print(f"{state} {summary['output']}: {summary['samples']} of {summary['num_samples']} samples, "
          f"{summary['rows']} rows, V = {summary['vocab_size']}, {summary['seconds']:.1f} s")
    return 0


def _write(args):
    if args.command == "import":
        from .importer import run as run_import
        return run_import(args)
    return _dump(args)


def _terminate(signum, frame):
    raise KeyboardInterrupt


def _say(text):
    """A message on stderr; a stderr that cannot be written to leaves the exit status."""
    try:
        print(text, file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class StdoutError(RunnerError):
    """Standard output cannot be written (a full device, a closed pipe)."""


class _Stdout:
    """sys.stdout during main: a write error names standard output (the OSError alone
    says only "No space left on device")."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except OSError as e:
            raise StdoutError(f"cannot write to standard output: {e}") from None

    def flush(self):
        try:
            self.stream.flush()
        except OSError as e:
            raise StdoutError(f"cannot write to standard output: {e}") from None

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _flush_stdout():
    """Writes out what is buffered for stdout (a full device fails here, not at exit);
    returns the error, or None. After a failure stdout points at /dev/null, so that the
    interpreter's own flush at exit neither prints a traceback nor changes the status."""
    try:
        sys.stdout.flush()
        return None
    except (OSError, ValueError, StdoutError) as e:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        except (OSError, ValueError, AttributeError):  # not a real file (tests' StringIO)
            pass
        return e if isinstance(e, StdoutError) else StdoutError(
            f"cannot write to standard output: {e}")


def _run(argv):
    args = _parser().parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        # A timeout's SIGTERM stops as cleanly as Ctrl-C: OUT.partial stays resumable.
        signal.signal(signal.SIGTERM, _terminate)
    try:
        if args.command == "validate":
            return _validate(args.files)
        from .outputs import writing
        with writing(args):  # -o against every input, and its lock, before any work
            return _write(args)
    except KeyboardInterrupt:
        output = getattr(args, "output", None)
        if args.command in ("validate", "import") or not output:
            _say("\nmdsd-runner: interrupted")
        else:
            _say(f"\nmdsd-runner: interrupted; rerun the same command to resume from "
                 f"{output}.partial")
        return 130


def main(argv=None):
    """The one place where every failure becomes a message and an exit status: 1 for bad
    input, a library refusal, a write error (stdout on a full device included) or an
    internal error; 2 for usage; 130 interrupted. No traceback reaches the user
    (MDSD_RUNNER_TRACEBACK=1 shows one for an internal error)."""
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    told = False  # a stdout write error already reported
    try:
        status = _run(argv)
    except SystemExit as e:  # argparse: --help, --version (0) and usage errors (2)
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except RunnerError as e:
        _say(f"mdsd-runner: error: {e}")
        status, told = 1, isinstance(e, StdoutError)
    except KeyboardInterrupt:
        _say("\nmdsd-runner: interrupted")
        status = 130
    except Exception as e:  # noqa: BLE001 - the top-level handler, by design
        status = 1
        mdsd = sys.modules.get("mdsd")  # libmdsd's refusals, through the mdsd package
        if isinstance(e, OSError) or (mdsd is not None and isinstance(e, mdsd.MdsdError)):
            _say(f"mdsd-runner: error: {e}")
        else:
            if os.environ.get("MDSD_RUNNER_TRACEBACK"):
                sys.stdout = stdout
                raise
            _say(f"mdsd-runner: error: internal error ({type(e).__name__}: {e}); please "
                 "report it with the command line (MDSD_RUNNER_TRACEBACK=1 shows where)")
    failed = _flush_stdout()
    sys.stdout = stdout
    if failed is not None:
        if not told:
            _say(f"mdsd-runner: error: {failed}")
        status = 1
    return status
