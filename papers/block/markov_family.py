#!/usr/bin/env python3
"""papers/block/markov_family.py - LLM-like Markov pairs of V = 256 (issue 41): where GBV's
"over 30 % relative to BV" (Thomas & Pal, arXiv 2602.16961) holds at the paper's block length
L = 8 and where it fails.

    papers/block/markov_family.py MDSD OUT_DIR [TRIALS]

The family (one pair per grid point, written to a temporary directory and evaluated there):
a first-order Markov target over V = 256 tokens (the context is the previous token, as
`mdsd block --markov` reads it) whose row c has logits

    z[c, t] = -s log(rank_c(t)) + 0.5 N(0, 1)      (rank_c: a random permutation of 1..V)

(a Zipf-like head of exponent s, as LLM next-token laws), and a drafter with logits
(z[c, t] + sigma N(0, 1)) / t_q: sigma is how much the drafter disagrees with the target,
t_q its temperature (t_q < 1: sharper than the target, t_q > 1: flatter). Grid:
sigma in {0.5, 1.5} x s in {1, 2} x t_q in {0.7, 1, 1.5}, 12 pairs, one seed each (the
pair's index + 1). Random numbers come from NumPy's PCG64 bit stream through
Generator.random only (normals by Box-Muller here), whose stream NumPy keeps fixed across
releases; the logits' exp and log are NumPy's, so the pairs' probabilities can differ across
machines in the last bits, which moves the sampled values far inside their s.e.

Each pair: E[tau] of bv (K = 1), gbv, kseq, traversal and ot at K = 1..4 sequences and
L in {1, 2, 4, 8}, by `mdsd block --markov PAIR --trials TRIALS --seed 1` (TRIALS sampled
draft trees, the verifier's randomness integrated out exactly on each; default 4,000).
Writes OUT_DIR/markov_family.csv (one row per pair, verifier, K, L) and
OUT_DIR/markov_family.md (gbv over bv per pair, the best gbv K, and the summary)."""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

V = 256
GRID = [(sigma, s, tq) for sigma in (0.5, 1.5) for s in (1.0, 2.0) for tq in (0.7, 1.0, 1.5)]
DEPTHS = (1, 2, 4, 8)
KS = (1, 2, 3, 4)
VERIFIERS = ("bv", "gbv", "kseq", "traversal", "ot")


def pair(sigma, s, tq, seed):
    """The pair's target and draft transition matrices, rows summing to 1."""
    rng = np.random.default_rng(seed)

    def normal(shape):
        u1, u2 = rng.random(shape), rng.random(shape)
        return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)

    rank = np.argsort(rng.random((V, V)), axis=1) + 1
    z = -s * np.log(rank) + 0.5 * normal((V, V))
    zq = (z + sigma * normal((V, V))) / tq

    def softmax(a):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return softmax(z), softmax(zq)


def write_pair(path, P, Q):
    with open(path, "w") as f:
        f.write(f"{V}\n")
        for M in (P, Q):
            for r in M:
                f.write(" ".join(repr(float(x)) for x in r) + "\n")
            f.write("\n" if M is P else "")


def tau(mdsd, path, verifier, K, L, trials):
    cmd = [mdsd, "block", "--markov", path, "--sequences", str(K), "--depth", str(L), "-v", verifier,
           "--trials", str(trials), "--seed", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"markov_family.py: {' '.join(cmd)}: {out.stderr.strip()}")
    d = json.loads(out.stdout)
    return d["block_efficiency"], d["stderr"]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    mdsd, out_dir = sys.argv[1], sys.argv[2]
    trials = int(sys.argv[3]) if len(sys.argv) == 4 else 4000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (sigma, s, tq) in enumerate(GRID):
            path = os.path.join(tmp, f"pair{i}.txt")
            P, Q = pair(sigma, s, tq, i + 1)
            write_pair(path, P, Q)
            # collisions of the K paths at their first token (from context 0): the expected
            # number of distinct tokens among K = 4 draws, and P(all 4 equal)
            distinct4 = float(np.sum(1.0 - (1.0 - Q[0]) ** 4))
            equal4 = float(np.sum(Q[0] ** 4))
            for v in VERIFIERS:
                for K in KS:
                    if v == "bv" and K > 1:
                        continue  # bv verifies one path
                    for L in DEPTHS:
                        m, se = tau(mdsd, path, v, K, L, trials)
                        rows.append({"pair": i, "sigma": sigma, "s": s, "t_q": tq, "seed": i + 1,
                                     "distinct4": distinct4, "equal4": equal4,
                                     "verifier": v, "sequences": K, "depth": L, "trials": trials,
                                     "block_efficiency": m, "stderr": se})
            print(f"markov_family.py: pair {i} (sigma {sigma}, s {s}, t_q {tq}) done", file=sys.stderr)
    tmp_csv = os.path.join(out_dir, "markov_family.csv.tmp")
    with open(tmp_csv, "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{x:.17g}" if isinstance(x, float) else x) for k, x in r.items()})
    os.replace(tmp_csv, os.path.join(out_dir, "markov_family.csv"))
    write_md(rows, os.path.join(out_dir, "markov_family.md"))


def write_md(rows, path):
    val = {(r["pair"], r["verifier"], r["sequences"], r["depth"]): (r["block_efficiency"], r["stderr"])
           for r in rows}
    pairs = sorted({(r["pair"], r["sigma"], r["s"], r["t_q"]) for r in rows})
    distinct = {r["pair"]: (r["distinct4"], r["equal4"]) for r in rows}
    trials = rows[0]["trials"]
    lines = [f"LLM-like Markov pairs, V = {V} (`papers/block/markov_family.py`): E[tau] at L = 8 "
             f"(s.e.; {trials} sampled trees per cell, `mdsd block --markov --trials`), and gbv's "
             "gain over bv (K = 1) at each K. sigma: the drafter's logit noise, s: the target's "
             "Zipf exponent, t_q: the drafter's temperature. Collisions of the K paths at their "
             "first token (context 0): the expected number of distinct tokens among 4 draws of "
             "the drafter, and the probability that all 4 are equal.", "",
             "| pair | sigma | s | t_q | bv | gbv K=2 | gbv K=3 | gbv K=4 | gain K=2 | gain K=3 | "
             "gain K=4 | best K | kseq K=4 | traversal K=4 | ot K=4 | distinct of 4 | all 4 equal |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, sigma, s, tq in pairs:
        bv = val[(i, "bv", 1, 8)]
        g = [val[(i, "gbv", K, 8)] for K in (2, 3, 4)]
        gains = [x[0] / bv[0] - 1.0 for x in g]
        best = 2 + max(range(3), key=lambda j: g[j][0])
        cell = lambda x: f"{x[0]:.3f} ({x[1]:.3f})"
        lines.append(f"| {i} | {sigma:g} | {s:g} | {tq:g} | {cell(bv)} | " +
                     " | ".join(cell(x) for x in g) + " | " +
                     " | ".join(f"{100 * x:+.1f} %" for x in gains) + f" | {best} | " +
                     " | ".join(cell(val[(i, v, 4, 8)]) for v in ("kseq", "traversal", "ot")) +
                     f" | {distinct[i][0]:.2f} | {distinct[i][1]:.3f} |")
    over30 = [(i, K) for i, *_ in pairs for K in (2, 3, 4)
              if val[(i, "gbv", K, 8)][0] / val[(i, "bv", 1, 8)][0] - 1.0 > 0.30]
    falls = [i for i, *_ in pairs if val[(i, "gbv", 4, 8)][0] < val[(i, "gbv", 2, 8)][0]]
    lines += ["", f"gbv above bv by more than 30 % at L = 8: {len(over30)} of {3 * len(pairs)} "
              f"(pair, K) cells ({', '.join(f'pair {i} K={K}' for i, K in over30) or 'none'}). "
              f"gbv at K = 4 below gbv at K = 2: {len(falls)} of {len(pairs)} pairs "
              f"({', '.join(f'pair {i}' for i in falls) or 'none'}).", ""]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
