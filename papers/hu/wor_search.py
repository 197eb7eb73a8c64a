#!/usr/bin/python3
"""A falsification search for exact `wor` alpha* by sort-and-scan (MATH.md §2.4).

Sort-and-scan takes the best prefix of the q/p order; it is exact when Q, the set law of
sequential sampling without replacement, is q-convex (MATH.md §2.4 has the proof). This
script tries to break that claim and its implementation. Random restarts (seeded) pick V
in 3..12 and n in 2..min(6, V) (a third of them with tokens of p = 0 or q = 0); each
restart climbs from a random pair of logits (p, q), perturbing them and keeping a move
when it lowers one of two margins:

  prefix margin  min over the sets H that are NOT prefixes of the order of f(H), minus
                 the best prefix's f, f(H) = p(H) - Q(H): negative = a set beats every
                 prefix, sort-and-scan is wrong for this (p, q) (0 = an exact tie, which
                 tokens with p = 0 make: reported apart from the p, q > 0 instances);
  q-convexity    min over H and distinct x, y outside H (q > 0) of
                 [Q(H+x+y) - Q(H+x)]/q(y) - [Q(H+x) - Q(H)]/q(x), relative to the sum
                 of the two terms: negative = Q is not q-convex.

(Even restarts climb the first margin, odd ones the second.) Q is computed here for all
2^V sets independently of the C library: the set law by the recursion
D(S) = sum_{x in S} D(S - x) q(x) / q(tokens not in S - x), in long double, then zeta
transforms (the gains Q(H+x) - Q(H) are summed from positive terms, so no cancellation can
fake a violation). Every instance visited is also given to the C library
(`mdsd.alpha_star`, the library behind `mdsd bound`) with method sort (the route under
test) and brute (its own enumeration of all 2^V sets), and the largest differences to this
script's brute force are recorded. The instances with the smallest margins are redone in
exact rational arithmetic (fractions.Fraction; up to --exact-max-V tokens).

    PYTHONPATH=src/python /usr/bin/python3 papers/hu/wor_search.py [--seed S]
        [--restarts R] [--steps K] [--exact-max-V V] [-o CSV] [--plant]

Writes one row per quantity to CSV (papers/hu/wor_search.csv by default; '-' for none)
and exits 1 when any instance breaks the claim (a margin below -1e-12, a negative exact
margin, or the C library's sort-and-scan off this brute force by more than 1e-12).
--plant replaces the wor law in the margins by one whose Q is not q-convex (each set's
probability times the product of 1/q over it), to show that the search then reports a
counterexample. Same output for the same arguments."""
import argparse
import csv
import os
import sys
from fractions import Fraction

import numpy as np

import mdsd

HERE = os.path.dirname(os.path.abspath(__file__))
LD = np.longdouble
TOL = 1e-12


class Lattice:
    """Bit masks of the 2^V sets of V tokens, grouped by size."""

    def __init__(self, V):
        self.V = V
        self.N = 1 << V
        masks = np.arange(self.N)
        self.size = np.array([bin(m).count("1") for m in range(self.N)])
        self.by_size = [masks[self.size == k] for k in range(V + 1)]
        self.has = [(masks >> x) & 1 == 1 for x in range(V)]

    def subset_sums(self, w):
        """w(H) for every mask, each a sum of positive terms (never 1 - something)."""
        s = np.zeros(self.N, dtype=LD)
        for x in range(self.V):
            s.reshape(-1, 2, 1 << x)[:, 1, :] = s.reshape(-1, 2, 1 << x)[:, 0, :] + w[x]
        return s

    def zeta(self, d):
        """Q(H) = sum of d(S) over S subset of H."""
        Q = d.copy()
        for x in range(self.V):
            Q.reshape(-1, 2, 1 << x)[:, 1, :] += Q.reshape(-1, 2, 1 << x)[:, 0, :]
        return Q


def wor_Q(L, q, n):
    """Q(H) for every H: P(all n draws without replacement lie in H), long double."""
    qs = L.subset_sums(q)
    full = L.N - 1
    f = np.zeros(L.N, dtype=LD)
    f[0] = 1
    for k in range(1, n + 1):
        S = L.by_size[k]
        for x in range(L.V):
            m = S[L.has[x][S]]
            prev = m ^ (1 << x)
            f[m] += f[prev] * q[x] / qs[full ^ prev]  # rest summed over the tokens left
    d = np.where(L.size == n, f, 0)
    return L.zeta(d), d


def planted_Q(L, q, n):
    """A set law whose Q is not q-convex (for --plant): the wor law of the sets of n
    tokens reweighted by the product of 1/q over the set (small tokens favoured)."""
    Q, d = wor_Q(L, q, n)
    w = np.ones(L.N, dtype=LD)
    for x in range(L.V):
        if q[x] > 0:
            w[L.has[x]] /= q[x]
    d = d * w
    d /= d.sum()
    return L.zeta(d), d


def scan_order(p, q):
    """The order of src/core/qporder.h: p = 0 < q by index, then q/p decreasing (ties by
    index); q = 0 tokens are not scanned."""
    V = len(p)
    zero = [x for x in range(V) if p[x] == 0 and q[x] > 0]
    rest = sorted((x for x in range(V) if p[x] > 0 and q[x] > 0), key=lambda x: (-(q[x] / p[x]), x))
    return zero + rest


def prefixes(order):
    masks, m = [0], 0
    for x in order:
        m |= 1 << x
        masks.append(m)
    return masks


def non_prefix(N, pre, p, q):
    """The masks that are not a prefix, up to tokens with p = q = 0 (which change
    neither p(H) nor Q(H), so a prefix plus some of them ties it exactly)."""
    null = sum(1 << x for x in range(len(p)) if p[x] == 0 and q[x] == 0)
    is_prefix = np.zeros(N, dtype=bool)
    is_prefix[pre] = True
    return ~is_prefix[np.arange(N) & ~null]


def margins(L, p, q, n, Qfun):
    """(prefix margin, q-convexity margin, its triple (H, x, y), brute alpha, prefix alpha),
    long double. The gains Q(H + x) - Q(H) are summed from positive terms (the set law of
    the sets of H + x that hold x), so no cancellation can fake a violation."""
    Q, d = Qfun(L, q, n)
    f = L.subset_sums(p) - Q
    pre = prefixes(scan_order(p, q))
    best_prefix = f[pre].min()
    others = non_prefix(L.N, pre, p, q)
    prefix_margin = f[others].min() - best_prefix if others.any() else LD(np.inf)
    # gain[x][m] = (Q(m) - Q(m - x)) / q(x) for every m that holds x
    drawn = [x for x in range(L.V) if q[x] > 0]  # q-convexity speaks of q > 0 tokens
    gain = {x: L.zeta(np.where(L.has[x], d, 0)) / q[x] for x in drawn}
    qconv, triple = LD(np.inf), None
    for x in drawn:
        for y in drawn:
            if y == x:
                continue
            H = np.nonzero(~L.has[x] & ~L.has[y])[0]
            lhs = gain[x][H | (1 << x)]
            rhs = gain[y][H | (1 << x) | (1 << y)]
            tot = lhs + rhs
            keep = np.nonzero(tot > 0)[0]
            if keep.size:
                rel = (rhs[keep] - lhs[keep]) / tot[keep]
                k = rel.argmin()
                if rel[k] < qconv:
                    qconv, triple = rel[k], (int(H[keep[k]]), x, y)
    fmin = min(LD(0), f.min())
    return prefix_margin, qconv, triple, 1 + fmin, 1 + min(LD(0), best_prefix)


def exact_Q(P, Qd, n):
    """The exact Q(H) for every H (lists of Fractions)."""
    V = len(P)
    N = 1 << V
    qs = [Fraction(0)] * N
    for m in range(1, N):
        qs[m] = qs[m & (m - 1)] + Qd[(m & -m).bit_length() - 1]
    size = [bin(m).count("1") for m in range(N)]
    f = [Fraction(0)] * N
    f[0] = Fraction(1)
    for m in sorted(range(1, N), key=lambda m: size[m]):
        if size[m] <= n:
            f[m] = sum((f[m ^ (1 << x)] * Qd[x] / qs[(N - 1) ^ m ^ (1 << x)]
                        for x in range(V) if m >> x & 1), Fraction(0))
    Q = [f[m] if size[m] == n else Fraction(0) for m in range(N)]
    for x in range(V):
        for m in range(N):
            if m >> x & 1:
                Q[m] += Q[m ^ (1 << x)]
    return Q


def exact_margins(p, q, n, triple):
    """The prefix margin over every set, and the q-convexity margin of TRIPLE (the float
    search's worst), in exact rational arithmetic (p, q as the exact binary fractions of
    their doubles, renormalised exactly)."""
    P = [Fraction(float(x)) for x in p]
    Qd = [Fraction(float(x)) for x in q]
    sp, sq = sum(P), sum(Qd)
    P = [x / sp for x in P]
    Qd = [x / sq for x in Qd]
    N = 1 << len(P)
    Q = exact_Q(P, Qd, n)
    ps = [Fraction(0)] * N
    for m in range(1, N):
        ps[m] = ps[m & (m - 1)] + P[(m & -m).bit_length() - 1]
    fv = [ps[m] - Q[m] for m in range(N)]
    pre = prefixes(scan_order(P, Qd))
    best = min(fv[m] for m in pre)
    prefix_margin = min(fv[m] - best for m in np.nonzero(non_prefix(N, pre, P, Qd))[0])
    H, x, y = triple
    lhs = (Q[H | 1 << x] - Q[H]) / Qd[x]
    rhs = (Q[H | 1 << x | 1 << y] - Q[H | 1 << x]) / Qd[y]
    return prefix_margin, (rhs - lhs) / (rhs + lhs) if rhs + lhs > 0 else Fraction(0)


def draw(rng, V):
    scale = rng.choice([0.5, 2.0, 6.0])
    return rng.normal(0, scale, V), rng.normal(0, scale, V)


def probs(z, zero):
    """softmax(z) with the tokens of ZERO at exactly 0."""
    e = np.where(zero, 0.0, np.exp(z - z[~zero].max()))
    return e / e.sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--restarts", type=int, default=300)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--exact-max-V", type=int, default=12,
                    help="redo the worst instances in rationals up to this V (0: never)")
    ap.add_argument("-o", default=os.path.join(HERE, "wor_search.csv"))
    ap.add_argument("--plant", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    Qfun = planted_Q if a.plant else wor_Q
    lattices = {}
    evals = 0
    worst = {k: (np.inf, None) for k in ("prefix", "prefix_pos", "qconv")}
    c_sort_gap = c_sort_abs = c_brute_gap = 0.0
    by_V = {}
    for r in range(a.restarts):
        V = int(rng.integers(3, 13))
        # a third of the restarts hold tokens with p = 0 or q = 0 (kept at 0 while climbing)
        zero_p = rng.random(V) < 0.15 if r % 3 == 2 else np.zeros(V, dtype=bool)
        zero_q = rng.random(V) < 0.15 if r % 3 == 2 else np.zeros(V, dtype=bool)
        zero_p[rng.integers(V)] = False
        zero_q[rng.integers(V)] = False
        support = int(V - zero_q.sum())
        n = int(rng.integers(2, max(2, min(6, support)) + 1))
        if n > support:
            continue
        L = lattices.setdefault(V, Lattice(V))
        which = "prefix" if r % 2 == 0 else "qconv"
        zp, zq = draw(rng, V)
        step = 1.0
        cur = None
        for k in range(a.steps):
            if cur is None:
                cp, cq = zp, zq
            else:
                cp = zp + (rng.normal(0, step, V) if which == "prefix" else 0)
                cq = zq + rng.normal(0, step, V)
            p, q = probs(cp, zero_p), probs(cq, zero_q)
            m_prefix, m_qconv, triple, brute, prefix = margins(L, p, q, n, Qfun)
            evals += 1
            by_V[V] = by_V.get(V, 0) + 1
            if not a.plant:
                cs = mdsd.alpha_star(p, q, n=n, scheme="wor", method="sort")
                cb = mdsd.alpha_star(p, q, n=n, scheme="wor", method="brute")
                c_sort_gap = max(c_sort_gap, cs - float(brute))
                c_sort_abs = max(c_sort_abs, abs(cs - float(brute)))
                c_brute_gap = max(c_brute_gap, abs(cb - float(brute)))
            positive = bool(p.min() > 0 and q.min() > 0)
            for key, val in (("prefix", m_prefix), ("qconv", m_qconv),
                             ("prefix_pos", m_prefix if positive else LD(np.inf))):
                if val < worst[key][0]:
                    worst[key] = (val, (p.copy(), q.copy(), n, triple))
            val = m_prefix if which == "prefix" else m_qconv
            if cur is None or val < cur:
                cur, zp, zq = val, cp, cq
                step = min(step * 1.5, 4.0)
            else:
                step = max(step * 0.7, 1e-3)
        print(f"restart {r + 1}/{a.restarts}: V = {V}, n = {n}, {which} margin {float(cur):.3g}",
              file=sys.stderr)
    # the most adversarial instances found, again in exact rational arithmetic
    exact_prefix = exact_qconv = None
    for key in ("prefix_pos", "qconv") + (("prefix",) if worst["prefix"][0] < 0 else ()):
        val, inst = worst[key]
        if inst is None or len(inst[0]) > a.exact_max_V or inst[3] is None:
            continue
        ep, eq = exact_margins(*inst)
        exact_prefix = ep if exact_prefix is None else min(exact_prefix, ep)
        exact_qconv = eq if exact_qconv is None else min(exact_qconv, eq)
    broken = (worst["prefix"][0] < -TOL or worst["qconv"][0] < -TOL or c_sort_abs > TOL
              or (exact_prefix is not None and exact_prefix < 0)
              or (exact_qconv is not None and exact_qconv < 0))
    rows = [("seed", a.seed), ("restarts", a.restarts), ("steps", a.steps),
            ("instances", evals), ("largest_V", max(by_V)),
            ("instances_V12", by_V.get(12, 0)),
            ("min_prefix_margin", float(worst["prefix"][0])),
            ("min_prefix_margin_positive_pq", float(worst["prefix_pos"][0])),
            ("min_qconvexity_margin", float(worst["qconv"][0])),
            ("exact_min_prefix_margin", float(exact_prefix) if exact_prefix is not None else ""),
            ("exact_min_qconvexity_margin", float(exact_qconv) if exact_qconv is not None else ""),
            ("largest_c_sort_minus_brute", c_sort_gap),
            ("largest_c_sort_brute_difference", c_sort_abs),
            ("largest_c_brute_brute_difference", c_brute_gap),
            ("counterexample", int(broken))]
    if a.o != "-":
        with open(a.o + ".tmp", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["quantity", "value"])
            for k, v in rows:
                w.writerow([k, repr(v) if isinstance(v, float) else v])
        os.replace(a.o + ".tmp", a.o)
    for k, v in rows:
        print(k, v)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
