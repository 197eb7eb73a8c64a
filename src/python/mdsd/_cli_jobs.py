"""The command line's jobs that return results rather than write files, bound to the
library's functions so that Python and `mdsd` give the same numbers:
`mdsd bound --method all` (mdsd_alpha_all)."""

import ctypes
from collections import namedtuple

import numpy as np

from . import _lib
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
