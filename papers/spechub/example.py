#!/usr/bin/python3
"""SpecHub (Sun et al., EMNLP 2024) section 3.2/4 example, exactly (rational arithmetic).

  example.py rrsw-plan P Q      Fig. 5(b): RRSw under the simplified LP - per draft pair
                                (x1, x2) the draft mass Q(x1, x2) and the accepted masses
                                pi(x1, x2, x1), pi(x1, x2, x2); per-token shortfall; cost
  example.py hub-plan P Q       Fig. 6: SpecHub's transport plan (App. B.1 formulas)
  example.py algorithm3 P Q     the output law of App. B.1's Algorithm 3 taken literally
                                (the hub draft law read as JSON from `mdsd draft --scheme
                                hub --json` on standard input), against p

P (target) and Q (draft) are comma-separated decimals. Notation: p = target, q = draft.
Standard library only; prints Markdown.
"""
import json
import sys
from fractions import Fraction as F

NAMES = "abcdefghijklmnopqrstuvwxyz"


def vec(text):
    v = [F(x) for x in text.split(",")]
    if sum(v) != 1 or min(v) < 0:
        sys.exit(f"example.py: {text} is not a probability vector (sum {float(sum(v))})")
    return v


def pos(x):
    return x if x > 0 else F(0)


def norm(v):
    s = sum(v)
    return [x / s for x in v] if s > 0 else v


def fmt(x):
    return f"{float(x):.4f}" if x else "0"


def rrsw_plan(p, q):
    """n = 2, sampling without replacement, recursive rejection sampling (MATH.md, rrsw)."""
    V = len(p)
    p1 = norm([pos(p[x] - q[x]) for x in range(V)])   # residual after the first draft
    acc = [F(0)] * V
    print("| x1 x2 | Q(x1,x2) | pi(x1,x2,x1) | pi(x1,x2,x2) |")
    print("|---|---:|---:|---:|")
    for x1 in range(V):
        for x2 in range(V):
            if x1 == x2 or q[x1] == 0 or q[x2] == 0:
                continue
            D = q[x1] * q[x2] / (1 - q[x1])
            a1 = min(F(1), p[x1] / q[x1])
            q2 = q[x2] / (1 - q[x1])                      # q with x1 removed, renormalised
            a2 = min(F(1), p1[x2] / q2)
            t1, t2 = D * a1, D * (1 - a1) * a2
            acc[x1] += t1
            acc[x2] += t2
            print(f"| {NAMES[x1]} {NAMES[x2]} | {fmt(D)} | {fmt(t1)} | {fmt(t2)} |")
    alpha = sum(acc)
    print()
    for y in range(V):
        short = p[y] - acc[y]
        print(f"- token {NAMES[y]}: p = {fmt(p[y])}, accepted {fmt(acc[y])}, "
              f"shortfall (served by the residual) {fmt(short)}")
    print(f"\nRRSw acceptance alpha = {alpha} = {float(alpha):.6f}; transport cost 1 - alpha = "
          f"{1 - alpha} = {float(1 - alpha):.6f}")


def hub(q):
    return max(range(len(q)), key=lambda x: (q[x], -x))   # ties to the lower index


def hub_plan(p, q):
    V = len(p)
    a = hub(q)
    Qxa = {x: q[x] for x in range(V) if x != a}                   # pair (x, a)
    Qax = {x: q[a] * q[x] / (1 - q[a]) for x in range(V) if x != a}  # pair (a, x)
    pxax = {x: min(p[x], q[x]) for x in Qxa}
    paxx = {x: min(p[x] - pxax[x], Qax[x]) for x in Qax}
    left_ax = sum(Qax[x] - paxx[x] for x in Qax)
    left_xa = sum(Qxa[x] - pxax[x] for x in Qxa)
    take1 = min(p[a], left_ax)
    take2 = min(p[a] - take1, left_xa)
    print(f"hub token a = {NAMES[a]} (argmax q)\n")
    print("| pair | Q(pair) | accepts x | accepts a |")
    print("|---|---:|---:|---:|")
    total = F(0)
    for x in Qxa:
        acc_a = take2 * (Qxa[x] - pxax[x]) / left_xa if left_xa else F(0)
        print(f"| ({NAMES[x]}, {NAMES[a]}) | {fmt(Qxa[x])} | {fmt(pxax[x])} | {fmt(acc_a)} |")
        total += pxax[x] + acc_a
    for x in Qax:
        acc_a = take1 * (Qax[x] - paxx[x]) / left_ax if left_ax else F(0)
        print(f"| ({NAMES[a]}, {NAMES[x]}) | {fmt(Qax[x])} | {fmt(paxx[x])} | {fmt(acc_a)} |")
        total += paxx[x] + acc_a
    print(f"\nSpecHub acceptance alpha = {total} = {float(total):.6f}; "
          f"closed form p(a) + sum_(x != a) min(p, q/(1 - q(a))) = "
          f"{float(p[a] + sum(min(p[x], q[x] / (1 - q[a])) for x in Qax)):.6f}")


def algorithm3(p, q, joint):
    """Algorithm 3 of App. B.1, line by line, as printed (GetResidual = Algorithm 2)."""
    V = len(p)
    a = hub(q)
    D = {tuple(t["tokens"]): F(t["prob"]) for t in joint["tuples"]}
    Qxa = [q[x] if x != a else F(0) for x in range(V)]                     # Q(*, a)
    Qax = [q[a] * q[x] / (1 - q[a]) if x != a else F(0) for x in range(V)]  # Q(a, *)
    # exactness: the toolkit's D is Algorithm 3's Q
    err = max(abs(float(D.get((x, a), 0) - Qxa[x])) + abs(float(D.get((a, x), 0) - Qax[x]))
              for x in range(V))
    # p', Q'(*, a) = GetResidual(p, Q(*, a), a)
    p1 = [pos(p[x] - Qxa[x]) for x in range(V)]
    p1[a] = p[a]
    L1 = sum(pos(Qxa[x] - p[x]) for x in range(V) if x != a)           # sum_x Q'(x, a)
    # p'', Q'(a, *) = GetResidual(p', Q(a, *), a)
    p2 = [pos(p1[x] - Qax[x]) for x in range(V)]
    p2[a] = p1[a]
    L2 = sum(pos(Qax[x] - p1[x]) for x in range(V) if x != a)          # sum_x Q'(a, x)
    out = [F(0)] * V
    for (x1, x2), mass in D.items():
        if x2 == a:                                   # draft pair (x1, a)
            t = min(F(1), p[x1] / Qxa[x1])
            out[x1] += mass * t
            mass *= 1 - t
            # "if x1 = a" blocks skipped: p'(a) keeps the value GetResidual gave it, p(a)
            t = min(F(1), p1[a] / L1) if L1 else F(0)
            out[a] += mass * t
            mass *= 1 - t
            res = p2[:]
            res[a] = pos(p1[a] - L1)                  # p''(a) = max(p'(a) - sum Q'(x, a), 0)
        else:                                         # draft pair (a, x2)
            t = min(F(1), p1[x2] / Qax[x2])
            out[x2] += mass * t
            mass *= 1 - t
            t = min(F(1), p[a] / L2) if L2 else F(0)
            out[a] += mass * t
            mass *= 1 - t
            res = p2[:]                               # p''(a) = p'(a) = p(a): never lowered
        for y, r in enumerate(norm(res)):
            out[y] += mass * r
    print(f"hub token a = {NAMES[a]}; |D(mdsd draft) - Q(Algorithm 3)| <= {err:.1e}\n")
    print("| token | p (target) | P(output) by Algorithm 3 as printed | difference |")
    print("|---|---:|---:|---:|")
    for y in range(V):
        print(f"| {NAMES[y]} | {fmt(p[y])} | {fmt(out[y])} | {round(float(out[y] - p[y]), 12) + 0.0:+.4f} |")
    tv = sum(abs(out[y] - p[y]) for y in range(V)) / 2
    print(f"\ntotal variation to p: {float(tv):.4f} (0 for a valid verifier)")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("rrsw-plan", "hub-plan", "algorithm3"):
        sys.exit(__doc__)
    p, q = vec(sys.argv[2]), vec(sys.argv[3])
    if len(p) != len(q):
        sys.exit("example.py: p and q have different lengths")
    if sys.argv[1] == "rrsw-plan":
        rrsw_plan(p, q)
    elif sys.argv[1] == "hub-plan":
        hub_plan(p, q)
    else:
        algorithm3(p, q, json.load(sys.stdin))


if __name__ == "__main__":
    main()
