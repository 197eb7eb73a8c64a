"""The command line's jobs that return results rather than write files, bound to the
library's functions so that Python and `mdsd` give the same numbers and files:
`mdsd bound --method all` (mdsd_alpha_all) and `mdsd toy` (mdsd_toy_dump)."""

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
        d["skipped" if r.status in _SKIPPED else "failed"] = r.why.decode("utf-8", "replace")
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
