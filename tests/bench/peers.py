#!/usr/bin/python3
"""Reference peers for `make bench`: the same computations written the way a
researcher would in numpy / scipy, timed on the same inputs as mdsd.

Usage: peers.py TASK INPUT [--repeats R] [--n N] [--trials T] [--seed S]
  TASK  alpha-iid   sort-and-scan alpha*_iid (Hu et al. section 4), numpy
        lp-full     the full OTM LP (SpecTr eq. 4) with scipy.optimize.linprog (HiGHS)
        rrs-mc      Monte-Carlo of recursive rejection sampling, vectorised numpy
        rrs-loop    the same, one trial per Python iteration (the literal algorithm)
  INPUT a text file: line 1 the target p, line 2 the draft q (comma-separated);
        for alpha-iid with --logits, rows of "target logits" / "draft logits"
        pairs, one position per two lines, softmax at --temperature; or, with
        --f32 --vocab V, raw float32 logits [positions][2][V] (target, draft),
        as tests/bench/bench_driver.c writes them (softmax included).
Prints one JSON object: task, value, median_seconds, repeats (and per-position
figures and values for alpha-iid over many positions).
"""
import argparse
import itertools
import json
import sys
import time

import numpy as np
from scipy.optimize import linprog


def softmax(logits, temperature):
    z = logits / temperature
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


def alpha_iid_sort(p, q, n):
    """alpha* = 1 + min(0, min_i p(H_i) - q(H_i)^n), prefixes by q/p decreasing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(p > 0, q / p, np.inf)
    order = np.argsort(-key, kind="stable")
    ph = np.cumsum(p[order])
    qh = np.cumsum(q[order])
    return 1.0 + min(0.0, float(np.min(ph - qh ** n)))


def lp_full_iid(p, q, n):
    """Full OTM LP over all tuples of supp(q)^n, maximise accepted mass."""
    V = len(p)
    support = np.flatnonzero(q > 0)
    tuples = list(itertools.product(support, repeat=n))
    D = np.array([np.prod(q[list(t)]) for t in tuples])
    m = len(tuples)
    # variable index: y * m + t
    c = np.zeros(V * m)
    for t, x in enumerate(tuples):
        for y in set(x):
            c[y * m + t] = -1.0
    rows, cols = [], []
    for y in range(V):            # sum_t pi(y, t) = p(y)
        rows += [y] * m
        cols += list(range(y * m, y * m + m))
    for t in range(m):            # sum_y pi(y, t) = D(t)
        rows += [V + t] * V
        cols += [y * m + t for y in range(V)]
    from scipy.sparse import csr_matrix
    A = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(V + m, V * m))
    b = np.concatenate([p, D])
    # HiGHS's presolve (scipy 1.10) declares these instances infeasible once
    # D holds values near 1e-9 (V >= 20 with LLM-like q); they are not, and
    # the solver without presolve agrees with every other route.
    res = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs",
                  options={"presolve": False})
    if res.status != 0:
        raise RuntimeError(res.message)
    return -res.fun


def rrs_mc(p, q, n, trials, seed):
    """Vectorised RRS: residuals p_j do not depend on the drafts for iid drafts."""
    rng = np.random.default_rng(seed)
    residuals = [p]
    for _ in range(n - 1):
        r = np.maximum(residuals[-1] - q, 0.0)
        s = r.sum()
        residuals.append(r / s if s > 0 else r)
    drafts = rng.choice(len(q), size=(trials, n), p=q)
    u = rng.random((trials, n))
    accepted = np.zeros(trials, dtype=bool)
    for j in range(n):
        pj = residuals[j]
        ratio = np.minimum(1.0, pj[drafts[:, j]] / q[drafts[:, j]])
        accepted |= (~accepted) & (u[:, j] < ratio)
    return float(accepted.mean())


def rrs_mc_loop(p, q, n, trials, seed):
    """RRS written literally, one trial per Python iteration (numpy per step)."""
    rng = np.random.default_rng(seed)
    accepted = 0
    for _ in range(trials):
        pj = p
        for _ in range(n):
            x = rng.choice(len(q), p=q)
            if rng.random() < min(1.0, pj[x] / q[x]):
                accepted += 1
                break
            r = np.maximum(pj - q, 0.0)
            s = r.sum()
            pj = r / s if s > 0 else r
    return accepted / trials


def timed(fn, repeats):
    """The value, and the median wall and CPU seconds of repeats calls."""
    times, cpu, value = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        value = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return value, float(np.median(times)), float(np.median(cpu))


def read_f32(path, V):
    x = np.fromfile(path, dtype="<f4")
    if x.size % (2 * V):
        sys.exit(f"peers.py: {path}: size is not a multiple of 2 x {V} float32 values")
    x = x.reshape(-1, 2, V).astype(np.float64)
    return [(x[i, 0], x[i, 1]) for i in range(x.shape[0])]


def read_pairs(path):
    with open(path) as f:
        rows = [np.array([float(v) for v in line.split(",")]) for line in f if line.strip()]
    if len(rows) < 2 or len(rows) % 2:
        sys.exit(f"peers.py: {path}: expected pairs of lines (target, draft)")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["alpha-iid", "lp-full", "rrs-mc", "rrs-loop"])
    ap.add_argument("input")
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trials", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--logits", action="store_true")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--f32", action="store_true")
    ap.add_argument("--vocab", type=int, default=0)
    a = ap.parse_args()
    out = {"task": a.task, "repeats": a.repeats}
    if a.f32:
        pairs, a.logits = read_f32(a.input, a.vocab), True
    else:
        rows = read_pairs(a.input)
        pairs = [(rows[i], rows[i + 1]) for i in range(0, len(rows), 2)]
    if a.task == "alpha-iid":

        def run():
            values = []
            for lp, lq in pairs:
                p, q = (softmax(lp, a.temperature), softmax(lq, a.temperature)) if a.logits else (lp, lq)
                values.append(alpha_iid_sort(p, q, a.n))
            return values

        values, secs, cpu = timed(run, a.repeats)
        out.update(value=float(np.mean(values)), values=values, median_seconds=secs, cpu_seconds=cpu,
                   positions=len(pairs), positions_per_second=len(pairs) / secs)
    elif a.task == "lp-full":
        p, q = pairs[0]
        value, secs, _ = timed(lambda: lp_full_iid(p, q, a.n), a.repeats)
        out.update(value=value, median_seconds=secs)
    else:
        p, q = pairs[0]
        fn = rrs_mc if a.task == "rrs-mc" else rrs_mc_loop
        value, secs, _ = timed(lambda: fn(p, q, a.n, a.trials, a.seed), a.repeats)
        out.update(value=value, median_seconds=secs, trials=a.trials,
                   trials_per_second=a.trials / secs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
