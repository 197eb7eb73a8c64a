"""What the package takes as numpy and torch users write it: probability rows within a
tolerance that scales with their dtype and V, arrays of positions [..., V], a random
stream as mdsd.Rng, a numpy Generator or an int seed, one name where a list of names is
expected, and logit rows (refused when they are probabilities or integers). Private: the
functions of the mdsd package use these."""

import math

import numpy as np

from . import MdsdError, MdsdTypeError

# The library's own tolerance on a probability row's sum (src/core/dist.h), the floor of
# prob_tolerance: float64 rows are held to it as the command line holds them.
LIBRARY_SUM_TOL = 1e-6
_UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11,
                  "bfloat16": 2.0**-9}


def prob_tolerance(dtype, V):
    """How far from 1 the sum of a probability row of `dtype` and length V may be:
    max(1e-6, 2 u + 8 sqrt(V) u_acc), u the dtype's unit roundoff (the rounding of each
    entry and of the normaliser: at most u of the total each), u_acc that of the
    accumulation a softmax of that dtype sums in (float32 for 16- and 32-bit rows,
    float64 for float64), whose error over V terms grows as sqrt(V) for the blocked and
    pairwise sums of numpy and torch. float32 at V = 152,064: 1.9e-4 (torch's and
    numpy's float32 softmax measured up to 1.9e-5 off); bfloat16 4.1e-3 and float16
    1.2e-3 there (16-bit rows round by that much); float64: 1e-6, the library's."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    u = _UNIT_ROUNDOFF.get(name, _UNIT_ROUNDOFF["float64"])
    acc = _UNIT_ROUNDOFF["float64" if u == _UNIT_ROUNDOFF["float64"] else "float32"]
    return max(LIBRARY_SUM_TOL, 2 * u + 8 * math.sqrt(V) * acc)


def _numpy(x, what):
    """x as a numpy array and the name of its dtype: torch tensors (any device; bfloat16
    and float16 widened exactly to float32, their tolerance kept) and nested lists too."""
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach"):
        import torch
        x = x.detach()
        if x.device.type != "cpu":
            x = x.cpu()
        name = str(x.dtype).replace("torch.", "")
        if x.dtype in (torch.bfloat16, torch.float16):
            x = x.float()
        return x.numpy(), name
    a = np.asarray(x)
    return a, a.dtype.name


def probs(x, what):
    """Probability rows [..., V] as C-contiguous float64. A row whose sum is off 1 by more
    than the library's 1e-6 but within prob_tolerance(dtype, V) is divided by its sum
    here (the library then finds it within 1e-6 and uses it); further off, refused with
    the sum, the row and the tolerance. Rows within 1e-6 go to the library untouched (it
    renormalises them as the command line does), and so do rows with a NaN, an infinity
    or a negative entry (the library refuses them, naming the index)."""
    a, dtype = _numpy(x, what)
    if a.dtype.kind not in "fiu":
        raise MdsdTypeError(1, f"{what}: probabilities must be a float array (numpy or torch), "
                            f"not {a.dtype}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] == 0 or not np.isfinite(a).all() or (a < 0).any():
        return a
    V = a.shape[-1]
    sums = a.sum(axis=-1, keepdims=True)
    off = np.abs(sums - 1.0)
    if not (off > LIBRARY_SUM_TOL).any():
        return a
    tol = prob_tolerance(dtype, V)
    if (off > tol).any():
        where = np.unravel_index(int(np.argmax(off)), off.shape)[:-1]
        row = f", row {where if len(where) > 1 else where[0]}" if where else ""
        raise MdsdError(1, f"{what}{row}: probabilities sum to {float(sums[where]):.9g}, not 1 "
                        f"(tolerance {tol:.3g} for {dtype} at V = {V}); pass "
                        "mdsd.softmax(logits) if these are logits")
    return np.where(off > LIBRARY_SUM_TOL, a / sums, a)


def rng(x, what="rng"):
    """A random stream of the library: an mdsd.Rng as it is, an int seed (mdsd.Rng(seed)),
    or a numpy Generator (a seed drawn from it: reproducible from the Generator's state)."""
    from . import Rng, _uint
    if isinstance(x, Rng):
        return x
    if isinstance(x, np.random.Generator):
        return Rng(int(x.integers(0, 2**63, dtype=np.uint64)))
    if isinstance(x, np.random.RandomState):
        return Rng(int(x.randint(0, 2**63, dtype=np.uint64)))
    if isinstance(x, (bool, np.bool_)) or not (isinstance(x, (int, np.integer)) or
                                                 hasattr(x, "__index__")):
        raise MdsdTypeError(1, f"{what}: pass an mdsd.Rng, a numpy Generator "
                            f"(np.random.default_rng(seed)) or an int seed, not {x!r}")
    return Rng(_uint(x, f"{what} (a seed)"))


def names(x):
    """A list of names as given (a sequence), or one name as a str (the command line's
    comma list "a,b" too): never a string iterated letter by letter."""
    if x is None:
        return []
    if isinstance(x, bytes):
        x = x.decode()
    if isinstance(x, str):
        return [s for s in x.split(",") if s] if x else []
    return list(x)


def numbers(x):
    """A scalar or a sequence of numbers as a list (temperatures=0.7 is [0.7])."""
    if isinstance(x, (str, bytes)):
        return names(x)
    a = np.asarray(x)
    return [x] if a.ndim == 0 else list(x)


def positions(p, q, multi):
    """The leading shape of positions [...] shared by p [..., V] and q ([..., V]; multi:
    [..., n, V]; None: no q), broadcast as numpy does, and p, q broadcast to it."""
    lp = p.shape[:-1]
    if q is None:
        return lp, p, None
    lq = q.shape[:-2] if multi else q.shape[:-1]
    try:
        lead = np.broadcast_shapes(lp, lq)
    except ValueError:
        raise MdsdError(1, f"p {p.shape} and q {q.shape}: their leading axes (positions) do "
                        "not broadcast") from None
    return lead, np.broadcast_to(p, lead + p.shape[-1:]), \
        np.broadcast_to(q, lead + q.shape[len(lq):])


def stack(results, lead):
    """Per-position results (scalars or arrays) as one array of shape lead + their own."""
    return np.array(results).reshape(lead + np.shape(results[0]))


_LOGIT_TYPES = "float16, bfloat16, float32 or float64"


def _from_torch(x, what):
    """A torch tensor (any device) as numpy: bf16 and fp16 widened to float32 (exact)."""
    import torch  # only when given a tensor: torch is optional
    x = x.detach()
    if x.is_complex() or x.dtype == torch.bool or not x.is_floating_point():
        raise MdsdTypeError(1, f"{what}: logits must be {_LOGIT_TYPES}, not the tensor type "
                            f"{x.dtype}")
    if x.device.type != "cpu":
        x = x.cpu()
    if x.dtype in (torch.bfloat16, torch.float16):
        x = x.float()
    return x.numpy()


def _logit_rows(x, what, allow_probabilities=False):
    """Logits as numpy: float32 for 16- and 32-bit floating inputs (the widening is exact,
    and float32 is how `mdsd table` reads a dump's float16 / bfloat16 / float32 rows),
    float64 for float64; numpy arrays (bfloat16 from ml_dtypes too), torch tensors or
    nested lists of floats. Anything else (integers too: token ids or counts are not
    logits) is a TypeError naming the argument; rows that are all probability
    distributions are refused unless allow_probabilities (_refuse_probabilities)."""
    dtype = None
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach"):
        dtype = str(x.dtype).replace("torch.", "")
        x = _from_torch(x, what)
    a = np.asarray(x)
    dtype = dtype or a.dtype.name
    if a.dtype.name == "bfloat16" or a.dtype == np.float16:
        a = a.astype(np.float32)
    elif a.dtype not in (np.float32, np.float64):
        hint = (f"; pass {what}.astype(np.float32) if these are logits"
                if a.dtype.kind in "iu" else "")
        raise MdsdTypeError(1, f"{what}: logits must be {_LOGIT_TYPES} (numpy or torch), not "
                            f"{a.dtype}{hint}")
    if not allow_probabilities:
        _refuse_probabilities(a, what, dtype)
    return a


def _refuse_probabilities(a, what, dtype):
    """Refuses logit rows that are every one a probability distribution (non-negative,
    summing to 1 within the tolerance of their dtype and V): softmax(p) of probabilities
    is nearly uniform, so alpha* came out near 1 with nothing said. Logits are almost
    never all >= 0, so the row sums are only taken when the minimum is (one pass)."""
    if a.ndim < 1 or a.size == 0 or a.shape[-1] == 0 or not a.min() >= 0:
        return
    V = a.shape[-1]
    off = np.abs(a.sum(axis=-1, dtype=np.float64) - 1.0)
    tol = prob_tolerance(dtype, V)
    if (off <= tol).all():
        raise MdsdError(1, f"{what}: every row is a probability distribution (non-negative, "
                        f"sums to 1 within {tol:.3g}), not logits; pass np.log(p) (softmax "
                        "of log p is p), or allow_probabilities=True if these are logits")


def shard(shard):
    """shard=(I, N) (or the CLI's "I/N") as the 1-based shard I of N, 1 <= I <= N."""
    if isinstance(shard, (str, bytes)):
        text = shard.decode() if isinstance(shard, bytes) else shard
        parts = text.split("/")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise MdsdError(1, f"shard: {shard!r} is not I/N (shard I of N, 1 <= I <= N)")
        shard = tuple(int(p) for p in parts)
    try:
        i, n = shard
    except (TypeError, ValueError):
        raise MdsdError(1, f"shard: {shard!r} is not a pair (I, N): shard I of N") from None
    from . import _uint
    i, n = _uint(i, "shard[0]"), _uint(n, "shard[1]")
    if not 1 <= i <= n:
        raise MdsdError(1, f"shard: ({i}, {n}): I must be in 1..N (shard I of N)")
    return i, n
