#!/usr/bin/env python3
"""SpecHub (Sun et al., EMNLP 2024) Cor. 1 and Thms 3-4 checked on random instances.

  Cor. 1  SpecHub outputs the hub token a = argmax q with probability p(a): Monte Carlo
          (200,000 trials, seed 1) on 40 instances, |frequency - p(a)| within 5 binomial s.e.
  Thm 3   if q(a)/(1 - q(a)) > 1 - alpha_1 (alpha_1 = sum min(p, q), the first draft's rate),
          SpecHub's second-draft acceptance is at least RRS's: the per-draft exact rates of
          `spechub` (hub drafts) and `rrs` (iid drafts), n = 2.
  Thm 4   if q(a) > 1/2, SpecHub's acceptance is at least alpha*_iid(n = 2).
Instances: V = 3..8, p and q Dirichlet with concentration in [0.2, 2], seed 2026; for
Thm 4 q is tilted so that q(a) > 1/2 holds on about half of them. Writes theorems.csv
(statement, instances where the premise holds, instances where the conclusion fails,
largest violation) and prints it. Run from the repository root after `make`:

    PYTHONPATH=src/python /usr/bin/python3 papers/spechub/theorems.py
"""
import csv
import os

import numpy as np

import mdsd

HERE = os.path.dirname(os.path.abspath(__file__))


def instance(rng, tilt=False):
    V = int(rng.integers(3, 9))
    p = rng.dirichlet(np.ones(V) * rng.uniform(0.2, 2))
    q = rng.dirichlet(np.ones(V) * rng.uniform(0.2, 2))
    if tilt:
        q[int(np.argmax(q))] += rng.uniform(0, 2)
        q /= q.sum()
    return p, q


def main():
    rng = np.random.default_rng(2026)
    rows = []
    # Cor. 1
    held = fails = 0
    worst = 0.0
    for i in range(40):
        p, q = instance(rng)
        a = int(np.argmax(q))
        T = 200000
        mc = mdsd.monte_carlo("spechub", p, q, n=2, scheme="hub", trials=T, seed=1,
                              position=i, histogram=True)
        freq = mc.histogram[a] / T
        se = max(np.sqrt(p[a] * (1 - p[a]) / T), 1.0 / T)
        held += 1
        fails += abs(freq - p[a]) > 5 * se
        worst = max(worst, abs(freq - p[a]) / se)
    rows.append(("cor1_hub_output_is_p_a", held, fails, worst))
    # Thm 3
    held = fails = 0
    worst = 0.0
    for _ in range(5000):
        p, q = instance(rng)
        a = int(np.argmax(q))
        alpha1 = float(np.minimum(p, q).sum())
        if not q[a] / q[np.arange(len(q)) != a].sum() > 1 - alpha1:
            continue
        held += 1
        hub = mdsd.verifier_rate("spechub", p, q, n=2, scheme="hub")[1]
        rrs = mdsd.verifier_rate("rrs", p, q, n=2, scheme="iid")[1]
        gap = rrs[1] - hub[1]
        fails += gap > 1e-12
        worst = max(worst, gap)
    rows.append(("thm3_second_draft_beats_rrs", held, fails, worst))
    # Thm 4
    held = fails = 0
    worst = 0.0
    for _ in range(5000):
        p, q = instance(rng, tilt=True)
        if not q.max() > 0.5:
            continue
        held += 1
        hub = mdsd.verifier_rate("spechub", p, q, n=2, scheme="hub")[0]
        star = mdsd.alpha_star(p, q, n=2, scheme="iid")
        fails += star - hub > 1e-12
        worst = max(worst, star - hub)
    rows.append(("thm4_beats_alpha_star_iid", held, fails, worst))
    with open(os.path.join(HERE, "theorems.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["statement", "premise_holds", "conclusion_fails", "largest_violation"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], repr(float(r[3]))])
    for r in rows:
        print(*r)


if __name__ == "__main__":
    main()
