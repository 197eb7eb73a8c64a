"""mdsd: multi-draft speculative decoding, exactly -- Python bindings of libmdsd.

Notation: p = target distribution, q = draft distribution (numpy arrays [V], index =
token id), n = number of drafts. Every function calls the C library (ctypes; the GIL is
released during each call); errors raise MdsdError carrying the library's message.

    import numpy as np, mdsd
    p = np.array([0.5, 0.3, 0.2]); q = np.array([0.2, 0.3, 0.5])
    mdsd.alpha_star(p, q, n=2)                      # optimal acceptance, iid drafts
    mdsd.verifier_rate("rrs", p, q, n=2)            # (rate, per-draft rates)
    rng = mdsd.Rng(1)
    drafts = mdsd.sample_drafts(q, 2, rng=rng)       # drafts from the scheme
    y = mdsd.Verifier("rrs", n=2).verify(p, q, drafts, rng)   # the next token, y ~ p
"""

import ctypes
import math
import numbers
import os
from collections import namedtuple

import numpy as np

from . import _lib
from ._calls import Progress, interruptible
from ._lib import lib

__all__ = ["MdsdError", "MdsdTypeError", "version", "__version__", "Rng", "SCHEMES", "METHODS", "VERIFIERS",
           "AUDIT_VERIFIERS", "LIVE_VERIFIERS", "BLOCK_VERIFIERS", "BLOCK_OPTIMA", "POLICIES",
           "REGISTRY", "RegistryEntry", "alpha_star", "AlphaRoutes", "toy", "check", "check_list",
           "plot", "plot_series", "plot_matplotlib",
           "alpha_star_result", "verifier_rate", "Verifier", "Sampler", "sample_drafts", "subset_probability",
           "monte_carlo", "batch", "table", "block", "BlockMarkov", "merge", "softmax", "DumpReader", "DumpWriter", "validate_dump",
           "TreeDumpWriter",
           "lp_export", "truncate", "evaluate", "read_table", "Table", "report"]

METHODS = ("auto", "lp-full", "lp-reduced", "brute", "sort", "k2", "maxflow")

RegistryEntry = namedtuple("RegistryEntry", "name cls kind description jobs schemes scheme audit "
                           "exact")


def _read_registry():
    """The library's registry of names (mdsd/registry.h), the one list of verifiers, block
    verifiers and optima, schemes and policies: cls one of _lib.NAME_CLASSES, jobs a
    frozenset of _lib.JOBS, schemes the names of the schemes a verifier is defined on."""
    raw = [lib.mdsd_registry_at(i).contents for i in range(lib.mdsd_registry_count())]
    scheme_names = {e.kind: e.name.decode() for e in raw if _lib.NAME_CLASSES[e.cls] == "scheme"}
    out = []
    for e in raw:
        cls = _lib.NAME_CLASSES[e.cls]
        out.append(RegistryEntry(
            e.name.decode(), cls, e.kind, e.description.decode(),
            frozenset(j for b, j in enumerate(_lib.JOBS) if e.jobs >> b & 1),
            tuple(scheme_names[k] for k in sorted(scheme_names) if e.schemes >> k & 1),
            scheme_names[e.scheme] if cls == "verifier" else None, bool(e.audit), bool(e.exact)))
    return tuple(out)


def _by_kind(cls, keep=lambda e: True):
    """The names of class cls in kind order (the C enum's index is the position)."""
    return tuple(e.name for e in sorted(REGISTRY, key=lambda e: e.kind) if e.cls == cls and keep(e))


REGISTRY = _read_registry()
SCHEMES = _by_kind("scheme")
# The verifiers for use, then the audit variants (papers/FINDINGS.md: they reproduce
# behaviours that are not valid verifiers); together, in this order, the kinds of
# mdsd_verifier_kind (the audit ones past MDSD_VERIFIER_COUNT), which the library's index is.
VERIFIERS = _by_kind("verifier", lambda e: not e.audit)
AUDIT_VERIFIERS = _by_kind("verifier", lambda e: e.audit)
_ALL_VERIFIERS = VERIFIERS + AUDIT_VERIFIERS
# Token-level verifiers of live decoding (the runner's --tree-live), audit variants excepted.
LIVE_VERIFIERS = _by_kind("verifier", lambda e: "live" in e.jobs and not e.audit)
BLOCK_VERIFIERS = _by_kind("block-verifier")
BLOCK_OPTIMA = _by_kind("block-optimum")
POLICIES = _by_kind("policy")
# A name's position in these tuples is its C kind (the batch options and mdsd.Verifier pass
# it), which holds where each class's kinds run 0, 1, ..: checked here, not assumed.
if any(_ALL_VERIFIERS[e.kind] != e.name for e in REGISTRY if e.cls == "verifier") or \
        any(SCHEMES[e.kind] != e.name for e in REGISTRY if e.cls == "scheme"):
    raise ImportError("mdsd: the library's registry does not number its kinds 0, 1, ..")
_CODES = {1: "EINVAL", 2: "ENOMEM", 3: "ETOOBIG", 4: "EIO", 5: "EFORMAT", 6: "ESOLVER",
          7: "EUNSUPPORTED", 8: "EINTERRUPTED"}


class MdsdError(ValueError):
    """A failure reported by libmdsd, or bad input refused by the package: .code (the
    mdsd_status), .code_name, and the message (which names the input: file, dataset,
    row, index, value). A ValueError; MdsdTypeError (also a TypeError) for a wrong type."""

    def __init__(self, code, message, option=None):
        super().__init__(message)
        self.code = code
        self.code_name = _CODES.get(code, str(code))
        # the option the library said the error concerns (mdsd_err.option), by its C
        # name ("max_paths"); None when none
        self.option = option


class MdsdTypeError(MdsdError, TypeError):
    """An argument of the wrong type (a str for a count, a bool for n, integer logits)."""


def _python_words(msg):
    """A library message (bytes) in Python's words: each option's marker `C_NAME`
    as its keyword (mdsd_option_words over the library's one table, mdsd/option.h;
    tests/python/test_option_words.py)."""
    n = lib.mdsd_option_words(msg, _lib.SPELL_PYTHON, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.mdsd_option_words(msg, _lib.SPELL_PYTHON, buf, n + 1)
    return buf.value.decode("utf-8", "replace")


def _option(code):
    name = lib.mdsd_option_name(code, _lib.SPELL_C)
    return name.decode() if name else None


def _raise(rc, err):
    if rc:
        raise MdsdError(rc, _python_words(err.msg or lib.mdsd_strerror(rc)), _option(err.option))


def _check(rc, err):
    _raise(rc, err)
    return rc


def version():
    """The C library's version string."""
    return lib.mdsd_version().decode()


# The package is the library's bindings: one version, the Makefile's VERSION (compiled into
# the library, and the wheel's version through setup.py).
__version__ = version()


def _verifier(name):
    """A verifier's index in the C enum: a name of VERIFIERS or AUDIT_VERIFIERS, or the
    index itself."""
    if isinstance(name, str) and name not in _ALL_VERIFIERS:
        raise MdsdError(1, f"unknown verifier '{name}' (one of {', '.join(VERIFIERS)}; audit "
                        f"variants, not for use: {', '.join(AUDIT_VERIFIERS)})")
    return _enum(_ALL_VERIFIERS, name, "verifier")


def _enum(names, name, what):
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool) and 0 <= name < len(names):
        return int(name)
    try:
        return names.index(name)
    except ValueError:
        raise MdsdError(1, f"unknown {what} '{name}' (one of {', '.join(names)})") from None


_U64_MAX = 2**64 - 1
_INT_MAX = 2**31 - 1


def _not_integer(what, x):
    wrong_type = isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real)
    return (MdsdTypeError if wrong_type else MdsdError)(
        1, f"{what}: '{x}' is not a non-negative integer")


def _scalar(x):
    """A one-element numpy array or torch tensor of zero dimensions as its Python
    number (torch.tensor(3) -> 3, torch.tensor(True) -> True), anything else as it is."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x.item()
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "dim") and x.dim() == 0:
        return x.item()
    return x


def _uint(x, what, hi=_U64_MAX):
    """x as the non-negative integer the C library takes (a count, n, seed, top-k, index),
    refused with the command line's words when negative, not integral or above hi: never
    truncated (2.7 -> 2) nor wrapped (2**64 + 2 -> 2). numpy and torch scalars are
    taken as their numbers (np.int64(3), torch.tensor(3))."""
    x = _scalar(x)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer, float, np.floating)):
        raise _not_integer(what, x)
    if isinstance(x, (float, np.floating)) and not (math.isfinite(x) and float(x).is_integer()):
        raise _not_integer(what, x)
    v = int(x)
    if v < 0:
        raise MdsdError(1, f"{what}: '{x}' must be a non-negative integer")
    if v > hi:
        raise MdsdError(1, f"{what}: '{x}' is out of range (at most {hi})")
    return v


def _int_array(x, what, lo, hi, dtype):
    """An array of integers in [lo, hi] as dtype, refused (naming the first bad entry and
    its index) when an entry is not integral or out of range: never truncated nor wrapped."""
    a = np.asarray(x)
    if a.dtype.kind in "iu" and a.size:
        bad = np.flatnonzero((a.ravel() < lo) | (a.ravel() > hi))
    elif a.dtype.kind in "iu" or a.size == 0:
        bad = np.array([], dtype=np.intp)
    else:
        flat = a.ravel()
        ok = []
        for v in flat.tolist():
            good = (isinstance(v, int) and not isinstance(v, bool)) or \
                (isinstance(v, float) and math.isfinite(v) and v.is_integer())
            ok.append(good and lo <= int(v) <= hi)
        bad = np.flatnonzero(~np.array(ok, dtype=bool))
    if bad.size:
        v = a.ravel()[bad[0]]
        if isinstance(v, (bool, np.bool_)):
            raise MdsdError(1, f"{what}[{bad[0]}]: '{v}' is not an integer")
        try:
            iv = int(v) if float(v).is_integer() else None
        except (TypeError, ValueError, OverflowError):
            iv = None
        if iv is None:
            raise MdsdError(1, f"{what}[{bad[0]}]: '{v}' is not an integer")
        if lo == 0 and iv < 0:
            raise MdsdError(1, f"{what}[{bad[0]}]: '{v}' must be a non-negative integer")
        raise MdsdError(1, f"{what}[{bad[0]}]: '{v}' is out of range ({lo} to {hi})")
    return np.ascontiguousarray(a.astype(dtype) if a.size else a, dtype=dtype)


def _cstr(x, what):
    """Text or a file name (str, bytes, os.PathLike) as the C string the library takes:
    a name as the OS spells it (os.fsencode, never str(b'...')), refused when it holds a
    NUL byte, which would cut it short in C (Python's open() refuses it too)."""
    b = os.fsencode(x) if isinstance(x, (str, bytes, os.PathLike)) else str(x).encode()
    if b"\0" in b:
        raise MdsdError(1, f"{what}: {x!r} contains a NUL byte")
    return b


def _f64(x, what, ndim=None):
    a = np.ascontiguousarray(x, dtype=np.float64)  # no copy when already contiguous float64
    if ndim is not None and a.ndim != ndim:
        raise MdsdError(1, f"{what}: expected a {ndim}-d array, got shape {a.shape}")
    return a


class Rng:
    """A random stream of the library (GSL taus2), seeded: every random result is a
    function of the seed."""

    def __init__(self, seed=1):
        err = _lib.Err()
        self._h = lib.mdsd_rng_new(_uint(seed, "seed"), ctypes.byref(err))
        if not self._h:
            _raise(err.code or 2, err)

    def seed(self, seed):
        lib.mdsd_rng_seed(self._h, _uint(seed, "seed"))

    def uniform(self):
        return lib.mdsd_rng_uniform(self._h)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.mdsd_rng_free(h)


class _SchemeArgs:
    """The C mdsd_scheme of (q, n, scheme) or a custom joint at one position; keeps its
    arrays alive."""

    def __init__(self, q, n, scheme, V=None, joint=None):
        kind = _enum(SCHEMES, scheme, "scheme")
        self.s = _lib.Scheme()
        self.s.kind = kind
        self.keep = []
        if kind == SCHEMES.index("custom"):
            if joint is None:
                raise MdsdError(1, "the custom scheme needs joint=(tokens [count, n], prob [count])")
            tokens = _int_array(joint[0], "custom joint tokens", 0, _INT_MAX, np.int32)
            prob = _f64(joint[1], "joint probabilities", 1)
            if tokens.ndim != 2 or tokens.shape[0] != prob.shape[0]:
                raise MdsdError(1, f"custom joint: tokens shape {tokens.shape} does not match "
                                f"{prob.shape[0]} probabilities")
            self.j = _lib.Joint(tokens.shape[1], tokens.shape[0], tokens.ctypes.data,
                                prob.ctypes.data)
            self.keep += [tokens, prob]
            self.s.n = tokens.shape[1]
            self.s.V = _uint(V, "V") if V is not None else (int(tokens.max()) + 1 if tokens.size else 0)
            self.s.custom = ctypes.pointer(self.j)
            return
        qa = np.ascontiguousarray(_inputs.probs(q, "draft q"))
        if kind == SCHEMES.index("multi"):
            if qa.ndim != 2:
                raise MdsdError(1, f"multi scheme: q must be [n, V], got shape {qa.shape}")
            n = qa.shape[0] if n is None else n
            if qa.shape[0] != n:
                raise MdsdError(1, f"multi scheme: q has {qa.shape[0]} rows for n = {n}")
        elif qa.ndim != 1:
            raise MdsdError(1, f"draft q: expected a 1-d array, got shape {qa.shape}")
        if n is None:
            raise MdsdError(1, "the number of drafts n is required")
        self.keep.append(qa)
        self.s.n = _uint(n, "n")
        self.s.V = qa.shape[-1]
        self.s.q = qa.ctypes.data


def _per_position(one, p, q, scheme, joint):
    """one(p_row, q_row) at every position of p [..., V] and q ([..., V]; multi: [..., n,
    V]; custom: the one joint at every position), broadcast as numpy does: (leading shape,
    [results in C order]). The leading shape is () for one position."""
    pa = _inputs.probs(p, "target p")
    if pa.ndim == 0:
        raise MdsdError(1, "target p: expected an array [..., V], got a scalar")
    kind = _enum(SCHEMES, scheme, "scheme")
    qa = None
    if kind != SCHEMES.index("custom") and q is not None:
        qa = _inputs.probs(q, "draft q")
        if qa.ndim == 0:
            raise MdsdError(1, "draft q: expected an array [..., V], got a scalar")
    lead, pb, qb = _inputs.positions(pa, qa, kind == SCHEMES.index("multi"))
    out = []
    for i in np.ndindex(*lead):
        out.append(one(np.ascontiguousarray(pb[i]), None if qb is None else qb[i]))
    return lead, out


AlphaResult = namedtuple("AlphaResult", "alpha method subset alpha_one k2_margin lp_vars")


def _alpha_one(pa, q, n, scheme, m, joint, exact_arith, want_subset, guards):
    sa = _SchemeArgs(q, n, scheme, V=pa.shape[0], joint=joint)
    if sa.s.V != pa.shape[0]:
        raise MdsdError(1, f"p has V = {pa.shape[0]} entries, q has {sa.s.V}")
    opts = _lib.init(_lib.AlphaOpts)
    opts.exact_arith = 1 if exact_arith else 0
    opts.max_tuples = _uint(guards[0], "max_tuples")
    opts.max_vars = _uint(guards[1], "max_vars")
    opts.force = 1 if guards[2] else 0
    if m == "all":  # every method, as `mdsd bound --method all` (mdsd_alpha_all)
        return _cli_jobs.alpha_all_one(pa, sa, opts, want_subset, METHODS, _raise)
    res = _lib.AlphaResult()
    err = _lib.Err()
    subset = np.zeros(pa.shape[0], dtype=np.uint8) if want_subset else None
    rc = lib.mdsd_alpha(pa.ctypes.data, ctypes.byref(sa.s), m, ctypes.byref(opts),
                        ctypes.byref(res), subset.ctypes.data if want_subset else None,
                        ctypes.byref(err))
    _raise(rc, err)
    return AlphaResult(res.alpha, METHODS[res.method],
                       subset.astype(bool) if want_subset and res.has_subset else None,
                       res.alpha_one, res.k2_margin, res.lp_vars)


def alpha_star_result(p, q=None, n=None, scheme="iid", method="auto", joint=None,
                      exact_arith=False, want_subset=False, max_tuples=0, max_vars=0,
                      force=False):
    """alpha*(p, D) with details: AlphaResult(alpha, method run, optimal subset H as a
    bool array or None, alpha_one (k2: 1/0, else -1), k2_margin, lp_vars). p [..., V]
    and q [..., V] (multi: [..., n, V]) give each field as an array over the leading
    axes (method: str; subset [..., V], None unless every position has one).
    max_tuples, max_vars (0: the defaults, 2^22 and 4e6) and force (solve an LP estimated
    past a minute) are `mdsd bound`'s --max-tuples, --max-vars and --force.

    method="all" is `mdsd bound --method all`: every method that applies, timed, in an
    AlphaRoutes(alpha, methods, max_disagreement) (a numpy object array of them over
    leading axes); MdsdError, as the CLI's exit status 1, when a method fails or two
    disagree by more than 1e-9 (1e-7 where an LP is one), naming the pair, with the
    AlphaRoutes in the exception's .routes."""
    m = _enum(METHODS + ("all",), method, "alpha* method")
    m = "all" if m == len(METHODS) else m
    guards = (max_tuples, max_vars, force)
    lead, res = _per_position(lambda pa, qa: _alpha_one(pa, qa, n, scheme, m, joint,
                                                        exact_arith, want_subset, guards),
                              p, q, scheme, joint)
    if lead == ():
        return res[0]
    if m == "all":
        out = np.empty(lead, dtype=object)
        for i, r in zip(np.ndindex(*lead), res):
            out[i] = r
        return out
    subset = None
    if want_subset and all(r.subset is not None for r in res):
        subset = _inputs.stack([r.subset for r in res], lead)
    return AlphaResult(*(_inputs.stack([r[k] for r in res], lead) for k in (0, 1)), subset,
                       *(_inputs.stack([r[k] for r in res], lead) for k in (3, 4, 5)))


def alpha_star(p, q=None, n=None, scheme="iid", method="auto", joint=None, exact_arith=False,
               max_tuples=0, max_vars=0, force=False):
    """The optimal acceptance rate alpha*(p, D(q, n, scheme)): a float for p [V], an array
    [...] for p [..., V] and q [..., V] (broadcast; multi: q [..., n, V]). scheme: iid,
    wor, greedy, hub, cps, multi (q [n, V]) or custom (joint=(tokens, prob)); method:
    auto, lp-full, lp-reduced, brute, sort, k2, maxflow, or all (every method, checked
    against each other: alpha_star_result). The other keywords: alpha_star_result."""
    r = alpha_star_result(p, q, n, scheme, method, joint, exact_arith, False, max_tuples,
                          max_vars, force)
    if isinstance(r, np.ndarray) and r.dtype == object:
        return np.vectorize(lambda x: x.alpha, otypes=[float])(r)
    return r.alpha


def _vopts(is_top=0, max_paths=0.0, max_tuples=0):
    mp = float(max_paths)
    if mp != 0.0 and not (math.isfinite(mp) and mp >= 1.0):  # 0: the default; as --max-paths
        raise MdsdError(1, f"max_paths: {max_paths} is not a number >= 1")
    o = _lib.init(_lib.VerifierOpts)
    o.is_top, o.max_paths, o.max_tuples = _uint(is_top, "is_top"), mp, _uint(max_tuples, "max_tuples")
    return o


def verifier_rate(verifier, p, q=None, n=None, scheme=None, joint=None, **opts):
    """A verifier's exact acceptance rate: (alpha, per_draft[n]) where per_draft[j] =
    P(draft j is the one accepted); p [..., V], q [..., V]: (alpha [...], per_draft
    [..., n]). scheme defaults to the verifier's own (sd: iid, n = 1). Raises MdsdError
    (code_name EUNSUPPORTED / ETOOBIG) where no exact form applies: use monte_carlo."""
    kind = _verifier(verifier)
    if scheme is None:
        scheme = lib.mdsd_verifier_scheme(kind)
    if n is None and kind == 0:
        n = 1
    vo = _vopts(**opts)

    def one(pa, qa):
        sa = _SchemeArgs(qa, n, scheme, V=pa.shape[0], joint=joint)
        alpha = ctypes.c_double()
        per = np.zeros(sa.s.n, dtype=np.float64)
        err = _lib.Err()
        rc = lib.mdsd_verifier_rate(kind, pa.ctypes.data, ctypes.byref(sa.s), ctypes.byref(vo),
                                    ctypes.byref(alpha), per.ctypes.data, ctypes.byref(err))
        _raise(rc, err)
        return alpha.value, per
    lead, res = _per_position(one, p, q, scheme, joint)
    if lead == ():
        return res[0]
    return _inputs.stack([r[0] for r in res], lead), _inputs.stack([r[1] for r in res], lead)


class _Prepared:
    """A C verifier prepared for one (p, scheme): verify(drafts, rng) -> the output token
    (an int), the accepted draft's index in .last_accepted (-1: none), as Verifier.verify."""

    def __init__(self, kind, p, sa, vo):
        pa = _inputs.probs(p, "target p")
        if pa.ndim != 1:
            raise MdsdError(1, f"target p: expected a 1-d array (one position), got shape "
                            f"{pa.shape}")
        if sa.s.V != pa.shape[0]:
            raise MdsdError(1, f"p has V = {pa.shape[0]} entries, q has {sa.s.V}")
        err = _lib.Err()
        self.n = sa.s.n
        self.last_accepted = -1
        self._h = lib.mdsd_verifier_new(kind, pa.ctypes.data, ctypes.byref(sa.s),
                                        ctypes.byref(vo), ctypes.byref(err))
        if not self._h:
            _raise(err.code or 2, err)

    def verify(self, drafts, rng):
        d = _int_array(drafts, "drafts", 0, _INT_MAX, np.int32)
        if d.shape != (self.n,):
            raise MdsdError(1, f"verify: expected {self.n} drafts, got shape {d.shape}")
        rng = _inputs.rng(rng)
        acc = ctypes.c_int(-1)
        err = _lib.Err()
        y = lib.mdsd_verify(self._h, d.ctypes.data, rng._h, ctypes.byref(acc), ctypes.byref(err))
        if y < 0:
            _raise(err.code or 1, err)
        self.last_accepted = acc.value
        return int(y)

    def close(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.mdsd_verifier_free(h)

    __del__ = close


class Verifier:
    """A multi-draft verifier for decoding loops.

        v = mdsd.Verifier("rrs", n=3)           # scheme: the verifier's own (rrs: iid)
        y = v.verify(p, q, drafts, rng)         # the output token, y ~ p exactly
        v.last_accepted                          # index of the accepted draft, or -1

    verify() prepares the verifier for this position (O(V)) and verifies once.
    To verify many draft tuples at one position, use prepare(p, q).verify(drafts, rng):
    the same int, with the accepted index in its .last_accepted. rng: an mdsd.Rng, a
    numpy Generator or an int seed."""

    def __init__(self, verifier, n=None, scheme=None, **opts):
        self.kind = _verifier(verifier)
        self.name = _ALL_VERIFIERS[self.kind]
        self.scheme = scheme if scheme is not None else SCHEMES[lib.mdsd_verifier_scheme(self.kind)]
        self.n = 1 if n is None and self.kind == 0 else n
        self._vo = _vopts(**opts)
        self.last_accepted = -1

    def prepare(self, p, q=None, joint=None):
        sa = _SchemeArgs(q, self.n, self.scheme, V=np.shape(p)[-1], joint=joint)
        return _Prepared(self.kind, p, sa, self._vo)

    def verify(self, p, q, drafts, rng, joint=None):
        """The output token (an int; .last_accepted the accepted draft's index or -1).
        p [..., V], q [..., V] and drafts [..., n]: tokens [...] (int64) and
        .last_accepted [...], the positions verified in C order on the one stream rng."""
        rng = _inputs.rng(rng)
        if np.ndim(p) <= 1:
            return self._verify_one(p, q, drafts, rng, joint)
        d = np.asarray(drafts)
        multi = self.scheme in ("multi", SCHEMES.index("multi"))
        lq = () if q is None else np.shape(q)[:-2] if multi else np.shape(q)[:-1]
        try:
            lead = np.broadcast_shapes(np.shape(p)[:-1], lq)
        except ValueError:
            lead = None
        if d.ndim < 1 or d.shape[:-1] != lead:  # before any draw from rng
            raise MdsdError(1, f"verify: drafts {d.shape} do not match the positions of p "
                            f"{np.shape(p)} and q {np.shape(q)}: expected [..., n] over "
                            "their leading axes")
        rows = iter(d.reshape(-1, d.shape[-1]))
        accepted = []

        def one(pa, qa):
            y = self._verify_one(pa, qa, next(rows), rng, joint)
            accepted.append(self.last_accepted)
            return y
        lead, ys = _per_position(one, p, q, self.scheme, joint)
        self.last_accepted = _inputs.stack(accepted, lead)
        return _inputs.stack(ys, lead).astype(np.int64)

    def _verify_one(self, p, q, drafts, rng, joint):
        prep = self.prepare(p, q, joint)
        try:
            y = prep.verify(drafts, rng)
            self.last_accepted = prep.last_accepted
        finally:
            prep.close()
        return y

    def rate(self, p, q=None, joint=None):
        """The exact acceptance rate and per-draft rates (verifier_rate)."""
        return verifier_rate(self.kind, p, q, self.n, self.scheme, joint,
                             is_top=self._vo.is_top, max_paths=self._vo.max_paths,
                             max_tuples=self._vo.max_tuples)


class Sampler:
    """Exact sampler of a draft scheme's joint law D: draw(rng) -> int32 [n];
    draw(rng, size) -> int32 [size, n]. rng: an mdsd.Rng, a numpy Generator or a seed."""

    def __init__(self, q=None, n=None, scheme="iid", joint=None, V=None):
        sa = _SchemeArgs(q, n, scheme, V=V, joint=joint)
        err = _lib.Err()
        self.n = sa.s.n
        self._h = lib.mdsd_sampler_new(ctypes.byref(sa.s), ctypes.byref(err))
        if not self._h:
            _raise(err.code or 2, err)

    def draw(self, rng, size=None):
        rng = _inputs.rng(rng)
        out = np.empty((1 if size is None else _uint(size, "size"), self.n), dtype=np.int32)
        for i in range(out.shape[0]):
            lib.mdsd_sampler_draw_drafts(self._h, rng._h, out[i].ctypes.data)
        return out[0] if size is None else out

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.mdsd_sampler_free(h)


def subset_probability(q, n, scheme, subset, joint=None, max_tuples=1000000):
    """Q(H) = P(all n drafts lie in H), `mdsd draft --subset LIST`: subset the token ids
    of H (ints in [0, V); repeats allowed), q [V] (multi: [n, V]; custom: joint=). The
    library enumerates D, refused past max_tuples tuples (`--max-tuples`; 0: the default
    10^6, as everywhere max_tuples is taken)."""
    if isinstance(subset, (str, bytes)):
        raise MdsdTypeError(1, f"subset: expected token ids (ints), got {subset!r}")
    ids = _int_array(subset, "subset", 0, np.iinfo(np.uint64).max, np.uint64)
    if ids.ndim != 1:
        raise MdsdError(1, f"subset: expected a 1-d list of token ids, got shape {ids.shape}")
    mt = _uint(max_tuples, "max_tuples")
    sa = _SchemeArgs(q, n, scheme, joint=joint)
    ids = np.ascontiguousarray(ids.astype(np.uintp))
    Q = ctypes.c_double()
    err = _lib.Err()
    _raise(lib.mdsd_subset_probability(ctypes.byref(sa.s), ids.ctypes.data if ids.size else None,
                                       ids.size, mt, ctypes.byref(Q), ctypes.byref(err)), err)
    return Q.value


def sample_drafts(q, n, scheme="iid", rng=None, size=None, joint=None):
    """Draft tokens from the scheme: int32 [n] (or [size, n]); q [..., V] (multi: [...,
    n, V]): [..., n] (or [..., size, n]), the positions drawn in C order on the one
    stream. rng: an mdsd.Rng, a numpy Generator or an int seed (None: seed 1)."""
    rng = _inputs.rng(rng if rng is not None else 1)
    multi = scheme in ("multi", SCHEMES.index("multi"))
    if joint is None and np.ndim(q) > (2 if multi else 1):
        qa = _inputs.probs(q, "draft q")
        lead = qa.shape[:-2] if multi else qa.shape[:-1]
        return _inputs.stack([Sampler(qa[i], n, scheme).draw(rng, size)
                              for i in np.ndindex(*lead)], lead)
    return Sampler(q, n, scheme, joint).draw(rng, size)


# output_check: an OutputCheck with check_output=True, else None (one return type either way)
MonteCarlo = namedtuple("MonteCarlo", "alpha se ci_low ci_high trials per_draft histogram "
                        "output_check", defaults=(None,))
OutputCheck = namedtuple("OutputCheck", "statistic dof p_value")


def monte_carlo(verifier, p, q=None, n=None, scheme=None, trials=1000000, seed=1, position=0,
                threads=0, histogram=False, joint=None, check_output=False, **opts):
    """Monte-Carlo acceptance of a verifier: `trials` draws of the drafts from the scheme,
    each verified. Streams depend on (seed, position, verifier) only, not on threads.
    p [..., V], q [..., V]: every field an array over the leading axes, position k (in C
    order) on the stream of position + k, as mdsd.batch keys rows by row0 + row.
    check_output=True (`accept --check-output`): also the chi-square test of the output
    histogram against p, as result.output_check = OutputCheck(statistic, dof, p_value)
    (None without it); the histogram is then filled in the result too."""
    if not isinstance(check_output, (bool, np.bool_)):
        raise MdsdError(1, f"check_output: expected True or False, got {check_output!r}")
    check_output = bool(check_output)
    histogram = histogram or check_output
    v = Verifier(verifier, n, scheme, **opts)
    mo = _lib.init(_lib.MonteCarloOpts)
    mo.trials, mo.seed = _uint(trials, "trials"), _uint(seed, "seed")
    mo.position, mo.threads = _uint(position, "position"), _uint(threads, "threads", _INT_MAX)
    first = mo.position
    count = [0]

    def one(pa, qa):
        prep = v.prepare(pa, qa, joint)
        try:
            mo.position = first + count[0]
            count[0] += 1
            res = _lib.MonteCarloResult()
            per = np.zeros(prep.n, dtype=np.float64)
            hist = np.zeros(pa.shape[0], dtype=np.uint64) if histogram else None
            err = _lib.Err()
            rc = interruptible(lib.mdsd_montecarlo, prep._h, ctypes.byref(mo),
                               ctypes.byref(res), per.ctypes.data,
                               hist.ctypes.data if histogram else None, ctypes.byref(err))
            _raise(rc, err)
            if check_output:
                stat, dof, pv = ctypes.c_double(), ctypes.c_size_t(), ctypes.c_double()
                _raise(lib.mdsd_output_chisq(hist.ctypes.data, pa.ctypes.data, pa.shape[0],
                                             ctypes.byref(stat), ctypes.byref(dof),
                                             ctypes.byref(pv), ctypes.byref(err)), err)
                checks.append((stat.value, dof.value, pv.value))
        finally:
            prep.close()
        return MonteCarlo(res.alpha, res.se, res.ci_low, res.ci_high, res.trials, per, hist)
    checks = []
    lead, res = _per_position(one, p, q, v.scheme, joint)
    if lead == ():
        out = res[0]
    else:
        out = MonteCarlo(*(_inputs.stack([r[k] for r in res], lead) for k in range(6)),
                         _inputs.stack([r.histogram for r in res], lead) if histogram else None)
    if not check_output:
        return out
    if lead == ():
        return out._replace(output_check=OutputCheck(*checks[0]))
    return out._replace(output_check=OutputCheck(
        *(_inputs.stack([c[k] for c in checks], lead) for k in range(3))))


def softmax(logits, temperature=1.0):
    """p = softmax(logits / T) as the library computes it (T = 0: argmax one-hot), over
    the last axis of logits [..., V] (numpy or torch, any float dtype): float64 [..., V]."""
    la, _ = _inputs._numpy(logits, "logits")
    la = np.ascontiguousarray(la, dtype=np.float64)
    if la.ndim == 0:
        raise MdsdError(1, "logits: expected an array [..., V], got a scalar")
    out = np.empty_like(la)
    err = _lib.Err()
    T = float(temperature)
    for i in np.ndindex(*la.shape[:-1]):
        row, dst = la[i], out[i]
        _raise(lib.mdsd_softmax(row.ctypes.data, la.shape[-1], T, dst.ctypes.data, b"logits",
                                ctypes.byref(err)), err)
    return out


def truncate(p, top_k=0, top_p=1.0):
    """Decoding truncation of a distribution as `--top-k`/`--top-p` apply it (MATH.md §0.3):
    the top_k most likely tokens (0 = all) renormalised, then the smallest most-likely set of
    mass >= top_p (in (0, 1], 1 = all) renormalised; p is validated first as the CLI does.
    p [..., V]: each row. Returns a new array."""
    top_p = _top_p(top_p)
    top_k = _uint(top_k, "top_k")  # 2**64 + 1 wrapped to top-1 through size_t
    out = np.array(_inputs.probs(p, "p"), dtype=np.float64)
    if out.ndim == 0:
        raise MdsdError(1, "p: expected an array [..., V], got a scalar")
    err = _lib.Err()
    V = out.shape[-1]
    for i in np.ndindex(*out.shape[:-1]):
        row = out[i]
        _raise(lib.mdsd_probs_validate(row.ctypes.data, V, b"p", ctypes.byref(err)), err)
        _raise(lib.mdsd_truncate(row.ctypes.data, V, top_k, top_p, ctypes.byref(err)), err)
    return out


def _top_p(x):
    """top_p as `--top-p` takes it: a real number in (0, 1] (1 = no cut; 0 is refused, it
    does not mean none), refused with the CLI's words when not a number, NaN, <= 0 or > 1."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise MdsdError(1, f"top_p: '{x}' is not a number")
    try:
        v = float(x)
    except OverflowError:  # an int or Fraction beyond the doubles
        v = float("inf")
    if v != v:
        raise MdsdError(1, f"top_p: '{x}' is not a number")
    if not 0.0 < v <= 1.0:
        raise MdsdError(1, f"top_p: {x} is not in (0, 1]")
    return v


Batch = namedtuple("Batch", "alpha_star rate per_draft exact")

def batch(target_logits, draft_logits, temperature=1.0, n=2, scheme="iid", verifier=None,
          top_k=0, top_p=1.0, trials=0, simulate=False, seed=1, row0=0, threads=0,
          progress=None, allow_probabilities=False, **opts):
    """Per-position evaluation of logit rows [N, V]: softmax at `temperature`, top-k /
    top-p truncation of both models (top_k 0 = none; top_p in (0, 1], 1 = none, as
    `--top-p`; MATH.md §0.3), alpha* of the scheme and, with `verifier`, its
    acceptance (exact where a closed form exists, else Monte Carlo with `trials`). The
    pipeline of `mdsd table`: a dump's rows give the same per-position numbers.
    Logits: numpy arrays or torch tensors (any device) of float16, bfloat16, float32 or
    float64. 16- and 32-bit inputs are evaluated in float32, as `mdsd table` reads a dump
    (C-contiguous float32 is not copied); float64 if either input is float64.
    progress: a callable progress(done_rows, N), called as blocks of rows finish (the
    results do not depend on it: random streams are keyed by row0 + row); None: a tqdm bar
    when tqdm is installed, once the call has run a second; False: none. Ctrl-C stops the
    call within a row (KeyboardInterrupt).
    Integer arrays are a TypeError; inputs whose rows are all probability distributions
    (non-negative, summing to 1) are refused as not logits, unless allow_probabilities
    =True says they are logits all the same.
    Returns Batch(alpha_star [N], rate [N] or None, per_draft [N, n] or None, exact [N]
    bool or None)."""
    top_p = _top_p(top_p)
    t = _logit_rows(target_logits, "target_logits", allow_probabilities)
    d = _logit_rows(draft_logits, "draft_logits", allow_probabilities)
    dtype = np.float32 if t.dtype == np.float32 and d.dtype == np.float32 else np.float64
    t = np.ascontiguousarray(t, dtype=dtype)
    d = np.ascontiguousarray(d, dtype=dtype)
    if t.ndim != 2 or t.shape != d.shape:
        raise MdsdError(1, f"batch: target_logits {t.shape} and draft_logits {d.shape} must "
                        "both be [N, V]")
    N, V = t.shape
    o = _lib.init(_lib.BatchEvalOpts)
    o.temperature, o.top_k, o.top_p = float(temperature), _uint(top_k, "top_k"), float(top_p)
    o.scheme, o.n = _enum(SCHEMES, scheme, "scheme"), _uint(n, "n")
    o.verifier = -1 if verifier is None else _verifier(verifier)
    o.verifier_opts = _vopts(**opts)
    o.trials, o.simulate, o.seed = _uint(trials, "trials"), 1 if simulate else 0, _uint(seed, "seed")
    o.row0, o.threads = _uint(row0, "row0"), _uint(threads, "threads", _INT_MAX)
    alpha = np.empty(N)
    rate = per = exact = None
    if verifier is not None:
        rate, per, exact = np.empty(N), np.empty((N, int(n))), np.empty(N, dtype=np.uint8)
    fn = lib.mdsd_batch_eval if dtype == np.float32 else lib.mdsd_batch_eval_double
    with Progress(progress, "mdsd.batch") as bar:
        # With a progress callback, blocks of about 1% of the rows (at least 64) each
        # (row0 advances with them, so the rows' random streams stay where they were).
        step = max(N, 1) if not bar.on else max(64, math.ceil(N / 100))
        first_row = o.row0
        for b in range(0, max(N, 1), step):
            m = min(step, N - b)
            o.row0 = first_row + b
            err = _lib.Err()

            def at(a, width=1):
                return None if a is None else a.ctypes.data + b * width * a.itemsize
            rc = interruptible(fn, at(t, V), at(d, V), m, V, ctypes.byref(o), at(alpha),
                               at(rate), at(per, int(n)), at(exact), ctypes.byref(err))
            _raise(rc, err)
            bar.record(b + m, N)
            bar.tick()
    return Batch(alpha, rate, per, None if exact is None else exact.astype(bool))


def _call_words(name, settings):
    """How a job was called, for its provenance sidecar's "command" (after "mdsd"): the
    function's name, then NAME=VALUE (Python's repr) per argument."""
    from .dump import _strings
    words = [name] + [f"{k}={v!r}" for k, v in settings.items()]
    return len(words), _strings(words, "provenance")


def _one_sample_note(result, stacklevel):
    """The i.i.d. fallback told in Python words, as `mdsd table` tells it on stderr."""
    import warnings
    samples = np.asarray(result["samples"])
    if samples.size and (samples == 1).any():
        warnings.warn("rows with samples = 1: their standard errors treat positions as "
                      "independent (not clustered by sample) and carry no significance "
                      "stars; pass samples= (mdsd.evaluate) or dumps of several samples for "
                      "clustered ones", stacklevel=stacklevel)


def table(dumps, output, temperatures=(1.0,), draft_counts=(2,), schemes=("iid",),
          verifiers=(), draft_models=(), rows=None, top_k=0, top_p=1.0, trials=0,
          simulate=False, seed=1, threads=0, resume=False, progress=None, pandas=None,
          discard_partial=False, checkpoint_seconds=None, shard=None,
          markdown=None, latex=None, layout=None, per_position=None,
          _stacklevel=3, _provenance_tool="mdsd.table", _arrays=None, _settings=None, **opts):
    """The `mdsd table` job over HDF5 logit dumps: writes the tidy results CSV `output`
    (mean acceptance per dump, temperature, n, scheme / verifier, with standard errors
    clustered by sample) and returns it as a tidy table (mdsd.read_table: a pandas
    DataFrame when pandas is present, else an mdsd.Table of numpy columns). rows =
    (begin, end) limits the rows of every dump. progress: a callable
    progress(done_rows, total_rows), called in this thread as blocks of rows finish (an
    exception it raises stops the job as Ctrl-C does, and is raised); None: a tqdm bar
    when tqdm is installed, once the job has run a second; False: none. Ctrl-C stops the
    job within a row (KeyboardInterrupt): OUTPUT.partial keeps the finished work, which
    resume=True goes on from. discard_partial=True deletes an OUTPUT.partial and starts
    over; checkpoint_seconds=S saves the finished samples of a unit every S seconds (0:
    after every block of rows; None: every 60 s). shard=(I, N) (or "I/N") evaluates
    shard I of N only and writes its partial aggregates to output, whose path is
    returned: mdsd.merge of the N shards writes the CSV of one run, byte for byte.
    markdown=PATH, latex=PATH: also the tables of `mdsd table
    --markdown/--latex` (mdsd.report's, marked as the job ran), in layout "per-setting",
    "combined" or "both" (None: both), written before the CSV appears; per_position=PATH:
    the per-row CSV of `--per-position` (mdsd.report(PATH, paired=...) reads it)."""
    bar = Progress(progress, _provenance_tool)
    top_p = _top_p(top_p)
    dumps = [dumps] if isinstance(dumps, (str, bytes, os.PathLike)) else list(dumps)
    # one name (or the command line's "a,b") where a list is expected, never its letters
    # (the provenance keeps the arguments as given)
    vlist, slist, mlist = (_inputs.names(x) for x in (verifiers, schemes, draft_models))
    tlist, clist = _inputs.numbers(temperatures), _inputs.numbers(draft_counts)
    o = _lib.init(_lib.TableOpts)
    from .dump import _strings
    dl, ml = _strings(dumps, "dump"), _strings(mlist, "draft_models")
    temps = np.ascontiguousarray(tlist, dtype=np.float64)
    counts = _int_array(clist, "draft_counts", 0, _U64_MAX, np.uintp)
    sch = np.array([_enum(SCHEMES, s, "scheme") for s in slist], dtype=np.intc)
    ver = np.array([_verifier(v) for v in vlist], dtype=np.intc)
    o.n_dumps, o.dumps = len(dumps), ctypes.cast(dl, ctypes.POINTER(ctypes.c_char_p))
    if _arrays:  # mdsd.evaluate: rows in memory, columns after the dumps
        o.n_arrays, o.arrays = len(_arrays), (_lib.RowArrays * len(_arrays))(*_arrays)
    o.n_temperatures, o.temperatures = temps.size, temps.ctypes.data
    o.n_counts, o.draft_counts = counts.size, counts.ctypes.data
    o.n_schemes, o.schemes = sch.size, sch.ctypes.data if sch.size else None
    o.n_verifiers, o.verifiers = ver.size, ver.ctypes.data if ver.size else None
    o.n_draft_models = len(mlist)
    o.draft_models = ctypes.cast(ml, ctypes.POINTER(ctypes.c_char_p))
    if rows is not None:
        o.row_begin, o.row_end = _uint(rows[0], "rows[0]"), _uint(rows[1], "rows[1]")
    o.top_k, o.top_p, o.trials = _uint(top_k, "top_k"), float(top_p), _uint(trials, "trials")
    o.simulate, o.seed = 1 if simulate else 0, _uint(seed, "seed")
    o.threads = _uint(threads, "threads", _INT_MAX)
    o.verifier_opts = _vopts(**opts)
    o.output, o.resume = _cstr(output, "output"), 1 if resume else 0
    o.discard_partial = 1 if discard_partial else 0
    if checkpoint_seconds is not None:  # the CLI's --checkpoint-seconds S (0: every block)
        secs = _scalar(checkpoint_seconds)
        if isinstance(secs, (bool, np.bool_)) or not isinstance(secs, numbers.Real) or \
                not (math.isfinite(secs) and secs >= 0):
            raise MdsdError(1, f"checkpoint_seconds: {checkpoint_seconds!r} is not a number "
                            ">= 0")
        o.checkpoint_seconds = float(secs) if secs > 0 else -1.0
    if shard is not None:
        o.shard, o.shards = _inputs.shard(shard)
    o.markdown = None if markdown is None else _cstr(markdown, "markdown")
    o.latex = None if latex is None else _cstr(latex, "latex")
    o.per_position = None if per_position is None else _cstr(per_position, "per_position")
    o.layout = _report.layout_code(layout)
    if bar.on:  # from the job's thread; bar.tick() hands it on in this one
        o.on_progress = _lib.TABLE_PROGRESS(lambda done, total, _ctx: bar.record(done, total))
    # OUTPUT.provenance.json as `mdsd table` writes it: this call's settings, each dump's
    # size and SHA-256, in place before the CSV (never an earlier run's left beside it)
    n_words, words = _call_words(_provenance_tool, _settings or dict(
        dumps=dumps, output=output, temperatures=temperatures, draft_counts=draft_counts,
        schemes=schemes, verifiers=verifiers, draft_models=draft_models, rows=rows,
        top_k=top_k, top_p=top_p, trials=trials, simulate=simulate, seed=seed,
        threads=threads, resume=resume,
        **{k: v for k, v in (("discard_partial", discard_partial),
                             ("checkpoint_seconds", checkpoint_seconds), ("shard", shard))
           if v not in (None, False)}, **opts, **{k: v for k, v in dict(
            markdown=markdown, latex=latex, layout=layout,
            per_position=per_position).items() if v is not None}))
    err = _lib.Err()
    with bar:
        _raise(interruptible(lib.mdsd_table_run_recorded, ctypes.byref(o),
                             _provenance_tool.encode(), n_words, words, ctypes.byref(err),
                             tick=bar.tick), err)
    if shard is not None:  # a shard's partial aggregates, not a results table
        return os.fspath(output)
    result = read_table(output, pandas=False)
    _one_sample_note(result, _stacklevel)
    return result.to_pandas() if _want_pandas(pandas) else result


def lp_export(path, p, q=None, n=None, scheme="iid", reduced=False, joint=None):
    """Writes the full (or reduced) LP of (p, D) to path (.dat, .lp or .mps)."""
    pa = _inputs.probs(p, "target p")
    if pa.ndim != 1:
        raise MdsdError(1, f"target p: expected a 1-d array (one position), got shape "
                        f"{pa.shape}")
    sa = _SchemeArgs(q, n, scheme, V=pa.shape[0], joint=joint)
    err = _lib.Err()
    _raise(lib.mdsd_lp_export(pa.ctypes.data, ctypes.byref(sa.s), 1 if reduced else 0,
                              _cstr(path, "path"), ctypes.byref(err)), err)


from . import _cli_jobs, _inputs  # noqa: E402
from ._cli_jobs import AlphaRoutes, check, check_list, toy  # noqa: E402
from ._plot import plot, plot_series, plot_matplotlib  # noqa: E402
from ._inputs import _logit_rows  # noqa: E402,F401 (mdsd.tables uses it)
from .dump import DumpReader, DumpWriter, validate_dump  # noqa: E402
from .treedump import TreeDumpWriter  # noqa: E402
from .tables import Table, _want_pandas, evaluate, read_table  # noqa: E402
from ._blockjobs import BlockMarkov, block, merge  # noqa: E402
from . import _report  # noqa: E402
from ._report import report  # noqa: E402
