"""The command line's jobs that return results rather than write files, bound to the
library's functions so that Python and `mdsd` give the same numbers and files:
`mdsd bound --method all` (mdsd_alpha_all), `mdsd toy` (mdsd_toy_dump) and `mdsd check`
(mdsd_check_run, mdsd_check_list)."""

import ctypes
import os
from collections import namedtuple

import numpy as np

from . import _lib
from ._calls import interruptible
from ._lib import lib

AlphaRoutes = namedtuple("AlphaRoutes", "alpha methods max_disagreement")
AlphaRoutes.__doc__ = """alpha* by every method that applies (mdsd bound --method all).

alpha: auto's method's value (the first route's that ran where auto's did not);
methods: one dict per method that applies to the scheme, in the CLI's order, with the
keys of `mdsd bound --method all --json`: method, and either skipped (a size guard's
message) or alpha, seconds and, where they apply, subset (bool array [V];
want_subset=True), alpha_one, k2_margin, evaluations, maxflow_sets, certificate_gap,
lp_vars, exact_arith; max_disagreement: the largest |alpha_a - alpha_b|."""

_SKIPPED = (3, 7)  # MDSD_ETOOBIG, MDSD_EUNSUPPORTED: a size guard or not defined (skipped)


def _route(r, V, subset, exact_arith, methods):
    d = {"method": methods[r.method]}
    if r.status:
        from . import _python_words
        d["skipped" if r.status in _SKIPPED else "failed"] = _python_words(r.why)
        return d
    d["alpha"] = r.alpha
    d["seconds"] = r.seconds
    if r.has_subset:
        d["subset"] = subset.astype(bool)
    if r.alpha_one >= 0:
        d["alpha_one"] = r.alpha_one == 1
        d["k2_margin"] = r.k2_margin
    if r.evaluations:
        d["evaluations"] = r.evaluations
    if d["method"] == "maxflow":
        d["maxflow_sets"] = r.maxflow_sets
        d["certificate_gap"] = r.certificate_gap
    if r.lp_vars:
        d["lp_vars"] = r.lp_vars
        d["exact_arith"] = bool(exact_arith)
    return d


def alpha_all_one(pa, sa, opts, want_subset, methods, raise_):
    """mdsd_alpha_all at one position: AlphaRoutes, or MdsdError (its .routes holding the
    AlphaRoutes) when a method failed or two disagree beyond tolerance, as the CLI exits 1
    after printing them."""
    V = pa.shape[0]
    routes = _lib.init(_lib.AlphaRoutes)
    err = _lib.Err()
    subsets = np.zeros((len(routes.routes), V), dtype=np.uint8) if want_subset else None
    rc = lib.mdsd_alpha_all(pa.ctypes.data, ctypes.byref(sa.s), ctypes.byref(opts),
                            ctypes.byref(routes), subsets.ctypes.data if want_subset else None,
                            ctypes.byref(err))
    result = None
    if routes.ran:
        result = AlphaRoutes(routes.alpha, tuple(
            _route(r, V, subsets[k] if want_subset else None, opts.exact_arith, methods)
            for k, r in enumerate(routes.routes) if r.applies), routes.max_disagreement)
    try:
        raise_(rc, err)
    except Exception as e:
        e.routes = result
        raise
    return result


def toy(output, family, vocab, positions, seed=1, drafts="draft", samples=0, dtype="float32",
        param=None, chunk_rows=0, gzip=0, threads=0):
    """`mdsd toy`: writes the HDF5 logit dump `output` (it appears only when complete) whose
    rows are random instances of a toy family; every row depends on (seed, row) only, so
    the file is the CLI's with the same options, whatever threads= is. family: bernoulli
    (vocab = 2), uniform, spechub-toy, dirichlet, zipf or degenerate; vocab, positions:
    V and the rows (--vocab, --positions); drafts: drafter names (a list or "a,b");
    samples: consecutive-row samples (0: ceil(positions / 128)); dtype: float32, float16
    or bfloat16; param: the family's parameters as {name: value}, "name=value,..." or a
    list of such strings (--param, repeatable; a name given twice is refused); chunk_rows
    (0: 64), gzip (0..9), threads (0: all). Returns the CLI's --json summary as a dict:
    file, family, params, V, rows, samples, drafts, dtype, seed."""
    from . import MdsdError, _cstr, _raise, _uint
    from . import _paths
    names = [drafts] if isinstance(drafts, (str, bytes)) else list(drafts)
    names = [n for x in names for n in (x.decode() if isinstance(x, bytes) else str(x)).split(",")]
    if not names or not all(names):
        raise MdsdError(1, f"toy: drafts {drafts!r}: give at least one name, none empty")
    if param is None:
        items = []
    elif isinstance(param, dict):
        items = [f"{k}={float(v)!r}" for k, v in param.items()]
    else:
        items = [x for p in ([param] if isinstance(param, str) else list(param))
                 for x in str(p).split(",") if x]
    seen = {}
    for item in items:
        name = item.split("=", 1)[0]
        if name in seen:
            raise MdsdError(1, f"toy: param: {name} is given twice ({seen[name]} and {item})")
        seen[name] = item
    o = _lib.init(_lib.ToyOpts)
    o.family = _cstr(family, "family")
    o.V = _uint(vocab, "vocab")
    o.positions = _uint(positions, "positions")
    o.seed = _uint(seed, "seed")
    o.drafts = _cstr(",".join(names), "drafts")
    o.samples = _uint(samples, "samples")
    o.dtype = _cstr(dtype, "dtype")
    o.params = _cstr(",".join(items), "param") if items else None
    o.chunk_rows = _uint(chunk_rows, "chunk_rows")
    o.gzip = _uint(gzip, "gzip", 9)
    o.threads = _uint(threads, "threads", 2**31 - 1)
    path = _cstr(output, "output")
    _paths.check([], [(output, "output")])  # a directory or unwritable place: before any work
    got = ctypes.c_size_t(0)
    params = ctypes.create_string_buffer(512)
    err = _lib.Err()
    # in a worker thread: Ctrl-C stops it between blocks of rows, its temporary file removed
    _raise(interruptible(lib.mdsd_toy_dump, path, ctypes.byref(o), ctypes.byref(got), params,
                         len(params), ctypes.byref(err)), err)
    return {"file": os.fsdecode(path), "family": o.family.decode(), "params": params.value.decode(),
            "V": o.V, "rows": o.positions, "samples": got.value, "drafts": names,
            "dtype": o.dtype.decode(), "seed": o.seed}


# ---- mdsd check (mdsd_check_run, mdsd_check_list) ----

# The keys of `mdsd check --json` (checks[]) and of `mdsd check --list --json`, in order.
CHECK_COLUMNS = ("name", "source", "claim", "measure", "must_hold", "instances", "draws",
                 "cases", "counterexamples", "errors", "worst", "tol", "bound", "status",
                 "summary", "error", "detail")
CHECK_LIST_COLUMNS = ("name", "source", "claim", "measure", "must_hold", "tol", "bound",
                      "families", "V_min", "V_max")
_CHECK_INTS = frozenset(("instances", "draws", "cases", "counterexamples", "errors", "V_min",
                         "V_max"))


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _outcome(o, columns):
    """One outcome as the CLI's JSON object (error and detail None where the CLI leaves
    the key out)."""
    d = {"name": _text(o.name), "source": _text(o.source), "claim": _text(o.claim),
         "measure": _text(o.measure), "must_hold": bool(o.must_hold), "instances": o.instances,
         "draws": o.draws, "cases": o.cases, "counterexamples": o.counterexamples,
         "errors": o.errors, "worst": o.worst, "tol": o.tol, "bound": _text(o.bound),
         "status": _text(o.status_name), "summary": _text(o.summary),
         "error": _text(o.error) or None, "detail": None, "families": _text(o.families),
         "V_min": o.V_min, "V_max": o.V_max}
    if o.has_worst and d["status"] in ("finding", "fail"):
        V, nq = o.worst_V, o.worst_nq
        d["detail"] = {"draw": o.worst_draw, "family": _text(o.worst_family), "V": V,
                       "n": o.worst_n, "p": np.ctypeslib.as_array(o.worst_p, (V,)).copy(),
                       "q": np.ctypeslib.as_array(o.worst_q, (nq * V,)).reshape(nq, V).copy(),
                       "note": _text(o.worst_note)}
    return {k: d[k] for k in columns}


def _check_table(rows, columns, attrs, pandas):
    from .tables import Table, _want_pandas
    t = Table()
    for c in columns:
        vals = [r[c] for r in rows]
        if c in _CHECK_INTS:
            t[c] = np.array(vals, dtype=np.int64)
        elif c in ("worst", "tol"):
            t[c] = np.array(vals, dtype=np.float64)
        elif c == "must_hold":
            t[c] = np.array(vals, dtype=bool)
        else:
            t[c] = np.empty(len(vals), dtype=object)
            t[c][:] = vals
    if _want_pandas(pandas):
        df = t.to_pandas()
        df.attrs.update(attrs)
        return df
    t.attrs = attrs
    return t


def _check_opts(what, profile, count, seed, trials, family, only, threads):
    from . import MdsdError, _cstr, _uint
    o = _lib.init(_lib.CheckOpts)
    if profile is not None:
        o.profile = _cstr(profile, "profile")
    # None: the profile's; 0 would mean that too in C, so it is refused here as the CLI does
    for name, v in (("count", count), ("trials", trials)):
        if v is not None:
            v = _uint(v, name, 100000000 if name == "trials" else 2**64 - 1)
            if v == 0:
                raise MdsdError(1, f"{what}: {name} must be at least 1")
            setattr(o, name, v)
    o.seed = _uint(seed, "seed")
    if family is not None:
        o.family = _cstr(family, "family")
    if only is not None:
        names = [only] if isinstance(only, (str, bytes)) else list(only)
        names = [x.decode() if isinstance(x, bytes) else str(x) for x in names]
        if not names or not all(n.strip(",") for n in names):
            raise MdsdError(1, f"{what}: only {only!r}: give check names, none empty")
        o.only = _cstr(",".join(names), "only")
    o.threads = _uint(threads, "threads", 2**31 - 1)
    return o


def _report(fn, o, tick):
    """Calls fn (mdsd_check_run or _list) and reads the report: (settings, outcomes)."""
    from . import _raise
    from ._calls import interruptible
    rep = ctypes.POINTER(_lib.CheckReport)()
    err = _lib.Err()
    _raise(interruptible(fn, ctypes.byref(o), ctypes.byref(rep), ctypes.byref(err), tick=tick),
           err)
    try:
        r = rep.contents
        settings = {"profile": _text(r.profile), "seed": r.seed, "count": r.count,
                    "trials": r.trials, "family": _text(r.family), "failed": r.failed}
        return settings, [r.checks[i].contents for i in range(r.n_checks)], rep
    except BaseException:
        lib.mdsd_check_report_free(rep)
        raise


def check(profile="quick", count=None, seed=1, family=None, only=None, trials=None,
          threads=1, progress=None, pandas=None):
    """`mdsd check`: runs the theorem regression suite (each check evaluates a published
    result on random instances of the toy families) and returns one row per check, with
    the keys of `mdsd check --json`'s checks: name, source, claim, measure, must_hold,
    instances, draws, cases, counterexamples, errors, worst, tol, bound, status (pass,
    fail, finding, skip), summary, error (None if none), detail (findings and failures:
    the worst instance as {draw, family, V, n, p [V], q [drafters, V], note}; else None).
    As a pandas DataFrame when pandas is installed (pandas=None) or asked for, else an
    mdsd.Table; .attrs holds the settings used and the number of must-hold checks that
    failed (profile, seed, count, trials, family, failed). A failing check is a row with
    status 'fail', not an exception (the CLI exits 1 on one). profile: quick (25
    instances, 3000 trials) or thorough (10^4, 10^4), the defaults of count (instances
    per check) and trials (Monte-Carlo trials per verifier and instance, <= 10^8);
    family: one toy family (checks not using it are skipped); only: check names (a list,
    or "a,b"); threads: OpenMP threads (the results do not depend on it). Results are
    the CLI's for the same seed. progress: as mdsd.table's (checks done, checks run);
    Ctrl-C stops within one instance (KeyboardInterrupt)."""
    from ._calls import Progress
    o = _check_opts("check", profile, count, seed, trials, family, only, threads)
    bar = Progress(progress, "mdsd.check", unit="check")
    if bar.on:
        o.on_progress = _lib.PROGRESS(lambda done, total, _ctx: bar.record(done, total))
    with bar:
        settings, outcomes, rep = _report(lib.mdsd_check_run, o, bar.tick)
    try:
        rows = [_outcome(x, CHECK_COLUMNS) for x in outcomes]
    finally:
        lib.mdsd_check_report_free(rep)
    return _check_table(rows, CHECK_COLUMNS, settings, pandas)


def check_list(family=None, only=None, pandas=None):
    """`mdsd check --list`: the registered checks (with family, those drawing from it;
    with only, those named), one row each with the keys of `mdsd check --list --json`:
    name, source, claim, measure, must_hold, tol, bound, families ("all" or the names),
    V_min, V_max. A DataFrame or mdsd.Table as mdsd.check returns."""
    o = _check_opts("check_list", None, None, 1, None, family, only, 1)
    _, outcomes, rep = _report(lib.mdsd_check_list, o, None)
    try:
        rows = [_outcome(x, CHECK_LIST_COLUMNS) for x in outcomes]
    finally:
        lib.mdsd_check_report_free(rep)
    return _check_table(rows, CHECK_LIST_COLUMNS, {"family": family}, pandas)
