#!/usr/bin/env python3
"""Khisti et al., Remark 4 (successive pairing, the IS scheme for K > 2) on its optimal face.

Stage 1 of the pairing solves an LP whose optimum is often not unique. `is` uses the optimum
GLPK returns; `is-face` maximises the final acceptance over stage 1's optimal set (a second LP
with stage 1's objective held at its optimum). A claim that pairing is suboptimal must hold
for every stage-1 optimum, so this script measures both, on the two published
counterexamples of papers/FINDINGS.md and on random instances (V = 3..6, n = 3, Dirichlet p
and q, seed 2026), and writes remark4.csv (one row per quantity, read by
papers/check_numbers.py for the prose). Run from the repository root after `make`:

    PYTHONPATH=src/python /usr/bin/python3 papers/khisti/remark4.py [N]
"""
import csv
import os
import sys

import numpy as np

import mdsd

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rows = []
    examples = [("example1", [0.05, 0.3, 0.65], [0.3, 0.4, 0.3]),
                ("example2", [0.1, 0.3, 0.3, 0.3], [0.5, 0.2, 0.1, 0.2])]
    for name, p, q in examples:
        p, q = np.array(p), np.array(q)
        rows.append((name, "alpha_star", mdsd.alpha_star(p, q, n=3, scheme="iid")))
        rows.append((name, "is", mdsd.verifier_rate("is", p, q, n=3)[0]))
        rows.append((name, "is_face", mdsd.verifier_rate("is-face", p, q, n=3)[0]))
    rng = np.random.default_rng(2026)
    short_is = short_face = failures = 0
    gap_is = gap_face = 0.0
    for _ in range(N):
        V = int(rng.integers(3, 7))
        p = rng.dirichlet(np.ones(V) * rng.uniform(0.3, 2))
        q = rng.dirichlet(np.ones(V) * rng.uniform(0.3, 2))
        a = mdsd.alpha_star(p, q, n=3, scheme="iid")
        r = mdsd.verifier_rate("is", p, q, n=3)[0]
        try:
            f = mdsd.verifier_rate("is-face", p, q, n=3)[0]
        except mdsd.MdsdError:
            failures += 1
            continue
        short_is += r < a - 1e-9
        short_face += f < a - 1e-7
        gap_is = max(gap_is, a - r)
        gap_face = max(gap_face, a - f)
    rows += [("random", "instances", N), ("random", "is_short", short_is),
             ("random", "is_largest_gap", gap_is), ("random", "face_short", short_face),
             ("random", "face_largest_gap", gap_face), ("random", "face_failures", failures)]
    with open(os.path.join(HERE, "remark4.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "quantity", "value"])
        for case, quantity, value in rows:
            w.writerow([case, quantity, repr(float(value)) if isinstance(value, float) else value])
    for r in rows:
        print(*r)


if __name__ == "__main__":
    main()
