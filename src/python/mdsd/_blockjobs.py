"""The block job from Python (mdsd.block over tree dumps or a Markov toy pair) and
mdsd.merge: the C library's mdsd_block_run_recorded, mdsd_block_markov and mdsd_merge. Split
from __init__.py by topic; its names are the package's (mdsd.block, mdsd.merge,
mdsd.BlockMarkov)."""

import ctypes
import numbers
import os
from collections import namedtuple

import numpy as np

from . import (_INT_MAX, MdsdError, _call_words, _cstr, _inputs, _lib, _raise, _scalar,
               _uint)
from ._calls import Progress, interruptible
from ._lib import lib
from .tables import read_table


def _list(values):
    """None, a CLI list "a,b" or a sequence -> the CLI's comma list (bytes) or None."""
    if values is None:
        return None
    if not isinstance(values, (str, bytes)):
        values = ",".join(str(v) for v in values)
    return _cstr(values, "list")


def _uint_list(values, what, hi=_INT_MAX):
    """None, the CLI's "a,b" text (parsed by the library, strictly), one integer or a
    sequence of them, each through _uint: never str(True) or str(2.5) handed on."""
    values = _scalar(values)
    if values is None or isinstance(values, (str, bytes)):
        return _list(values)
    if isinstance(values, (numbers.Number, np.generic)):
        values = [values]
    return _list([_uint(v, what, hi) for v in values])


def _path(p, what="file name"):
    return None if p is None else _cstr(p, what)


BlockMarkov = namedtuple("BlockMarkov", "verifier route V depth tree_size block_efficiency "
                         "stderr trials per_depth reach mean_acceptance_length "
                         "per_position_acceptance_rate optimal_token_block_efficiency "
                         "live_horizon live_block_efficiency position_block_efficiency "
                         "live_calls", defaults=(None, None, None, None))


def _live_horizon(live):
    """live= as the CLI's --live N|inf: a whole number of tokens >= 1, or 'inf' /
    math.inf (the long run, horizon 0 in C)."""
    live = _scalar(live)
    if isinstance(live, (str, bytes)) and (live.decode() if isinstance(live, bytes)
                                           else live) == "inf":
        return 0
    if isinstance(live, (float, np.floating)) and np.isinf(live) and live > 0:
        return 0
    n = _uint(live, "live")
    if n == 0:
        raise MdsdError(1, "live: 0: a horizon of at least 1 token, or 'inf' (the long run)")
    return n


def _markov_arrays(pair):
    """markov=(P, Q): the target's and the draft's V x V transition matrices (numpy or
    torch; row i = the next-token law after token i), as C-contiguous float64 for the
    library, which checks every row as a row of a --markov file. Shapes are checked here;
    rows off 1 within their dtype's rounding are renormalised (mdsd._inputs.probs)."""
    if len(pair) != 2:
        raise MdsdError(1, f"block(markov=...): a pair (P, Q) of transition matrices, not "
                        f"{len(pair)} arrays")
    shapes = []
    for name, x in zip(("P", "Q"), pair):
        shape = _inputs._numpy(x, name)[0].shape
        if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
            raise MdsdError(1, f"block(markov=(P, Q)): {name} has shape {shape}, expected a "
                            "square V x V transition matrix")
        shapes.append(shape)
    if shapes[0] != shapes[1]:
        raise MdsdError(1, f"block(markov=(P, Q)): P is {shapes[0]}, Q {shapes[1]}: one V")
    return [_inputs.probs(x, f"block(markov=(P, Q)): {name}") for name, x in zip("PQ", pair)]


def _block_markov(markov, verifier, sequences, depth, tree, scheme, trials, simulate, seed,
                  threads, optimal, force, live=None):
    o = _lib.init(_lib.BlockMarkovOpts)
    if isinstance(markov, (tuple, list)):
        P, Q = _markov_arrays(markov)  # kept alive until the call returns
        o.V, o.p, o.q = P.shape[0], P.ctypes.data, Q.ctypes.data
        markov = None
    o.markov, o.verifier = _path(markov), None if verifier is None else str(verifier).encode()
    o.sequences = _uint(sequences or 0, "sequences", _INT_MAX)
    o.depth = _uint(depth or 0, "depths", _INT_MAX)
    o.tree, o.scheme = _uint_list(tree, "tree"), None if scheme is None else str(scheme).encode()
    o.trials, o.simulate = _uint(trials, "trials"), 1 if simulate else 0
    o.seed = _uint(seed, "seed")
    o.threads = _uint(threads, "threads", _INT_MAX)
    o.optimal, o.force = 1 if optimal else 0, 1 if force else 0
    r = _lib.BlockMarkovResult()
    err = _lib.Err()
    lr = None
    if live is None:
        _raise(interruptible(lib.mdsd_block_markov, ctypes.byref(o), ctypes.byref(r),
                             ctypes.byref(err)), err)
    else:
        lr = _lib.BlockMarkovLiveResult()
        _raise(interruptible(lib.mdsd_block_markov_live, ctypes.byref(o), _live_horizon(live),
                             ctypes.byref(r), ctypes.byref(lr), ctypes.byref(err)), err)
    L = r.depth
    reach = np.array(r.reach[:L + 1])
    live_fields = () if lr is None else (lr.horizon, lr.live_block_efficiency,
                                         lr.position_block_efficiency, lr.live_calls)
    return BlockMarkov(r.verifier.decode(), r.route.decode(), r.V, L, r.tree_size,
                       r.block_efficiency, r.se, r.trials, np.array(r.per_depth[1:L + 1]), reach,
                       r.block_efficiency, reach[1:].copy(),
                       r.optimal_token if optimal else None, *live_fields)


def block(dumps=None, output=None, verifiers=None, sequences=None, depths=None, costs=None,
          is_top=0, threads=0, markdown=None, latex=None, resume=False, discard_partial=False,
          pandas=None, markov=None, verifier=None, tree=None, scheme=None, trials=0,
          simulate=False, seed=1, optimal=False, force=False, progress=None, live=None,
          engine_metrics=None, shard=None):
    """Block efficiency E[tau] (expected tokens per target call), as `mdsd block`.

    Tree dumps: mdsd.block(DUMPS, OUTPUT, ...) runs the job over tree dumps - E[tau] per
    (dump, verifier, policy, depth) - writes the results CSV `output` (the CLI's bytes),
    optionally Markdown and LaTeX tables, and returns it as a tidy table
    (mdsd.read_table). verifiers, sequences, depths, costs: lists (or the CLI's "a,b"
    text); None = the CLI's defaults. Resumable from OUTPUT.partial (resume=True).
    progress: as mdsd.table's, counting the trees of the dump being evaluated (each dump
    starts again from 0); Ctrl-C stops the job within a tree, OUTPUT.partial keeping the
    finished dumps. engine_metrics: a serving engine's counters (FILE.json, data/README.md
    "Engine counters") set beside the toolkit's E[tau]: the engine_* columns of the table
    (--engine-metrics). shard=(I, N): evaluate shard I of N only and write its partial
    aggregate to output (returns output's path; mdsd.merge of the N shards writes the
    job's CSV, the bytes of one run; --shard I/N).

    A Markov toy pair: mdsd.block(markov=FILE, verifier=V, sequences=K, depths=L) (seq
    policy) or tree=(W1, ..., WL) with scheme= (tree policy), exactly, or from `trials`
    sampled draft trees (simulate=True: plain speculative steps), optimal=True for the
    best token-level verifier's E[tau] beside it. markov=(P, Q) takes the pair as arrays
    instead of a file: the target's and the draft's V x V transition matrices (numpy or
    torch; row i = the law after token i, context token 0), each row checked as a row of
    the file. Returns BlockMarkov(verifier, route, V,
    depth, tree_size, block_efficiency, stderr, trials, per_depth [L] (conditional
    rates), reach [L + 1], mean_acceptance_length (vLLM's name; = block_efficiency),
    per_position_acceptance_rate [L] (vLLM's: unconditional, reach[1:]),
    optimal_token_block_efficiency (None without optimal), and with live=N (tokens) or
    live='inf' (the long run; --live, exact, token-level verifiers): live decoding from
    token 0, live_horizon (N, 0 = inf), live_block_efficiency (live tokens per target
    call), position_block_efficiency (the position mean of E[tau | context]), live_calls
    (E[calls] in N tokens; inf: per token); None without live)."""
    if markov is not None:
        if dumps is not None or output is not None:
            raise MdsdError(1, "block: give tree dumps (dumps, output) or markov=FILE, not both")
        depths, sequences = _scalar(depths), _scalar(sequences)  # torch.tensor(3) is 3
        for name, value in (("depths", depths), ("sequences", sequences)):
            if value is not None and not isinstance(value, (int, np.integer)):
                raise MdsdError(1, f"block(markov=...): {name} is one whole number, not "
                                f"{value!r}")
        for name, value in (("engine_metrics", engine_metrics), ("shard", shard)):
            if value is not None:
                raise MdsdError(1, f"block: {name}= is for tree dumps, not markov=")
        return _block_markov(markov, verifier, sequences, depths, tree, scheme, trials,
                             simulate, seed, threads, optimal, force, live)
    if dumps is None or output is None:
        raise MdsdError(1, "block: give tree dumps and output=CSV, or markov=FILE")
    for name, value in (("verifier", verifier), ("tree", tree), ("scheme", scheme),
                        ("live", live)):
        if value is not None:
            raise MdsdError(1, f"block: {name}= is for markov=FILE; tree dumps take "
                            "verifiers=, sequences=, depths=")
    dumps = [dumps] if isinstance(dumps, (str, bytes, os.PathLike)) else list(dumps)
    from .dump import _strings
    dl = _strings(dumps, "dump")
    o = _lib.init(_lib.BlockJobOpts)
    o.n_dumps, o.dumps = len(dumps), ctypes.cast(dl, ctypes.POINTER(ctypes.c_char_p))
    o.verifiers, o.sequences = _list(verifiers), _uint_list(sequences, "sequences")
    o.depths, o.costs = _uint_list(depths, "depths"), _list(costs)
    o.is_top, o.threads = _uint(is_top, "is_top"), _uint(threads, "threads", _INT_MAX)
    o.output, o.markdown, o.latex = _path(output), _path(markdown), _path(latex)
    o.resume, o.discard_partial = 1 if resume else 0, 1 if discard_partial else 0
    o.engine_metrics = _path(engine_metrics, "engine_metrics")
    if shard is not None:
        o.shard, o.shards = _inputs.shard(shard)
    # OUTPUT.provenance.json as `mdsd block` writes it, published with the results
    n_words, words = _call_words("mdsd.block", dict(
        dumps=dumps, output=output, verifiers=verifiers, sequences=sequences, depths=depths,
        costs=costs, is_top=is_top, threads=threads, markdown=markdown, latex=latex,
        resume=resume, discard_partial=discard_partial,
        **({} if engine_metrics is None else {"engine_metrics": engine_metrics}),
        **({} if shard is None else {"shard": shard})))
    bar = Progress(progress, "mdsd.block", unit="tree")
    if bar.on:  # from the job's thread; bar.tick() hands it on in this one
        o.on_progress = _lib.TABLE_PROGRESS(lambda done, total, _ctx: bar.record(done, total))
    err = _lib.Err()
    with bar:
        _raise(interruptible(lib.mdsd_block_run_recorded, ctypes.byref(o), b"mdsd.block",
                             n_words, words, ctypes.byref(err), tick=bar.tick), err)
    if shard is not None:  # a partial aggregate, not a results table
        return os.fspath(output)
    return read_table(output, pandas=pandas)


def merge(shards, output, markdown=None, latex=None, layout=None):
    """`mdsd merge`: the aggregates of `mdsd table/block ... --shard I/N -o SHARD` (all N
    shards of one job, any order) folded into the job's results CSV `output`, the same
    bytes as one process writes; optionally the Markdown and LaTeX tables, a table job's
    in layout "per-setting", "combined" or "both" (None: both)."""
    from ._report import layout_code
    shards = [shards] if isinstance(shards, (str, bytes, os.PathLike)) else list(shards)
    from .dump import _strings
    sl = _strings(shards, "shard")
    o = _lib.init(_lib.MergeJobOpts)
    o.markdown, o.latex, o.layout = _path(markdown), _path(latex), layout_code(layout)
    err = _lib.Err()
    _raise(lib.mdsd_merge_run(ctypes.cast(sl, ctypes.POINTER(ctypes.c_char_p)), len(shards),
                              _path(output), ctypes.byref(o), ctypes.byref(err)), err)
