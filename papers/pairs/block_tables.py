#!/usr/bin/env python3
"""The block verifiers on both model pairs side by side (papers/pairs/block.sh; BLOCK.md).

    block_tables.py OUT_DIR

reads OUT_DIR/{ngram,neural}_seq.csv (E[tau] and its s.e. clustered by sample, one row per
verifier, K', L') and OUT_DIR/{ngram,neural}_paired.csv (differences paired by tree,
papers/block/verifiers.py) and writes
    OUT_DIR/stderr.csv        per pair and verifier, the largest s.e. over K' and L', and
                              whether it meets issue 30's target (<= 0.01)
    OUT_DIR/orderings.csv     every paired comparison on both pairs, and its verdict
    OUT_DIR/orderings_summary.csv   per comparison, the count of (K', L') cells per verdict
    OUT_DIR/side_by_side.md   the three as Markdown tables

Verdict of a comparison A - B at one (K', L'), with RESOLVED meaning |z| >= Z (two-sided
p < 0.01): "holds" (resolved on both pairs, the same sign), "reverses" (resolved on both,
opposite signs), "ngram only" / "neural only" (resolved on that pair alone), "neither";
"identical" where A and B are the same verifier there (bv and sd at L' = 1: both values 0 up
to rounding, below 1e-12).
Z is not corrected for the number of comparisons (about 130 per pair): at p < 0.01 about
one "resolved" cell in a hundred is expected by chance where A and B are equal in law."""
import csv
import math
import os
import sys

PAIRS = ("ngram", "neural")
NAMES = {"ngram": "n-gram", "neural": "neural"}
TARGET = 0.01  # issue 30: s.e. of E[tau] <= 0.01
Z = 2.5758293035489  # two-sided p = 0.01
VERIFIERS = ["sd", "bv", "rrs", "kseq", "is", "ot", "gbv", "traversal"]  # those present
VERDICTS = ["holds", "reverses", "ngram only", "neural only", "neither", "identical"]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, rows):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{x:.10g}" if isinstance(x, float) else x) for k, x in r.items()})
    os.replace(path + ".tmp", path)


def tau_table(out_dir):
    """{pair: {(verifier, K, L): (E[tau], s.e., trees, samples)}} from the cost-0 rows."""
    tau = {}
    for pair in PAIRS:
        t = {}
        for r in read_csv(os.path.join(out_dir, pair + "_seq.csv")):
            if float(r["cost"]) != 0:
                continue
            key = (r["verifier"], int(r["sequences"]), int(r["depth"]))
            if key in t:
                sys.exit(f"block_tables.py: {pair}_seq.csv: {key} twice")
            t[key] = (float(r["block_efficiency"]), float(r["stderr"]), int(r["trees"]),
                      int(r["samples"]))
        tau[pair] = t
    if set(tau["ngram"]) != set(tau["neural"]):
        sys.exit("block_tables.py: the two pairs' CSVs hold different cases")
    return tau


def verdict(za, zb, va, vb):
    if abs(va) < 1e-12 and abs(vb) < 1e-12:  # verifiers.py's z = 0 there
        return "identical"
    ra, rb = abs(za) >= Z, abs(zb) >= Z
    if ra and rb:
        return "holds" if (za > 0) == (zb > 0) else "reverses"
    return "ngram only" if ra else "neural only" if rb else "neither"


def main(out_dir):
    tau = tau_table(out_dir)
    keys = sorted(tau["ngram"], key=lambda k: (VERIFIERS.index(k[0]), k[1], k[2]))
    verifiers = [v for v in VERIFIERS if any(k[0] == v for k in keys)]
    Ls = sorted({k[2] for k in keys})

    se_rows = []
    for v in verifiers:
        row = {"verifier": v}
        for pair in PAIRS:
            cells = [(tau[pair][k][1], k) for k in keys if k[0] == v and (v in ("sd", "bv") or k[1] > 1)]
            se, k = max(cells)
            row.update({f"{pair}_max_stderr": se, f"{pair}_at_K": k[1], f"{pair}_at_L": k[2],
                        f"{pair}_meets_target": "yes" if se <= TARGET else "no"})
        se_rows.append(row)
    write_csv(os.path.join(out_dir, "stderr.csv"), se_rows)

    paired = {pair: read_csv(os.path.join(out_dir, pair + "_paired.csv")) for pair in PAIRS}
    if [(r["comparison"], r["a"], r["b"]) for r in paired["ngram"]] != \
       [(r["comparison"], r["a"], r["b"]) for r in paired["neural"]]:
        sys.exit("block_tables.py: the two pairs' paired CSVs hold different comparisons")
    ord_rows = []
    for rn, rr in zip(paired["ngram"], paired["neural"]):
        zn, zr = float(rn["z"]), float(rr["z"])
        ord_rows.append({"comparison": rn["comparison"], "a": rn["a"], "b": rn["b"],
                         "K": int(rn["K"]), "L": int(rn["L"]), "measure": rn["measure"],
                         "ngram_value": float(rn["value"]), "ngram_stderr": float(rn["stderr"]),
                         "ngram_z": zn, "neural_value": float(rr["value"]),
                         "neural_stderr": float(rr["stderr"]), "neural_z": zr,
                         "verdict": verdict(zn, zr, float(rn["value"]), float(rr["value"]))})
    write_csv(os.path.join(out_dir, "orderings.csv"), ord_rows)

    summary = {}
    for r in ord_rows:
        s = summary.setdefault(r["comparison"], {"comparison": r["comparison"], "cells": 0,
                                                 **{v: 0 for v in VERDICTS}})
        s["cells"] += 1
        s[r["verdict"]] += 1
    write_csv(os.path.join(out_dir, "orderings_summary.csv"), list(summary.values()))

    with open(os.path.join(out_dir, "side_by_side.md") + ".tmp", "w") as f:
        t0 = tau["ngram"][keys[0]]
        t1 = tau["neural"][keys[0]]
        f.write(f"E[tau] (s.e. clustered by sample) of every verifier on the two pairs' tree dumps "
                f"(seq trees, K' sequences of depth L', T = 1): n-gram {t0[3]:,} samples, "
                f"{t0[2]:,} trees; neural {t1[3]:,} samples, {t1[2]:,} trees. At K' = 1 the "
                "token-level verifier is sd"
                + ("; is is the LP truncated to the top 32 tokens" if "is" in verifiers else "")
                + ("; ot: alpha* at every node" if "ot" in verifiers else "") + ".\n\n")
        f.write("| verifier | K' | " + " | ".join(f"n-gram L' = {L}" for L in Ls) + " | "
                + " | ".join(f"neural L' = {L}" for L in Ls) + " |\n")
        f.write("|---|---:|" + "---:|" * (2 * len(Ls)) + "\n")
        for v in verifiers:
            for K in sorted({k[1] for k in keys if k[0] == v}):
                if v not in ("sd", "bv") and K == 1:
                    continue
                cells = [f"{tau[p][(v, K, L)][0]:.4f} ({tau[p][(v, K, L)][1]:.4f})"
                         for p in PAIRS for L in Ls]
                f.write(f"| {v} | {K} | " + " | ".join(cells) + " |\n")
        f.write(f"\nLargest s.e. of E[tau] per verifier (over K' and L'; at K' = 1 only sd and bv) "
                f"against issue 30's target {TARGET}:\n\n")
        f.write("| verifier | n-gram max s.e. | at K', L' | meets | neural max s.e. | at K', L' | meets |\n")
        f.write("|---|---:|---|---|---:|---|---|\n")
        for r in se_rows:
            f.write(f"| {r['verifier']} | " + " | ".join(
                f"{r[p + '_max_stderr']:.4f} | {r[p + '_at_K']}, {r[p + '_at_L']} | {r[p + '_meets_target']}"
                for p in PAIRS) + " |\n")
        f.write(f"\nPaired comparisons (A - B, or A / B - 1 when relative; s.e. clustered by "
                f"sample; z = value / s.e.) on both pairs, and the verdict at |z| >= {Z:.2f} "
                "(two-sided p < 0.01): holds (resolved on both, same sign), reverses (resolved "
                "on both, opposite signs), ngram only / neural only (resolved on one), neither; "
                "identical: A and B are the same verifier there (both differences 0).\n\n")
        f.write("| comparison | cells | " + " | ".join(VERDICTS) + " |\n|---|---:|" + "---:|" * len(VERDICTS) + "\n")
        for s in summary.values():
            f.write(f"| {s['comparison']} | {s['cells']} | " + " | ".join(str(s[v]) for v in VERDICTS) + " |\n")
        f.write("\n| comparison | A | B | n-gram value (z) | neural value (z) | verdict |\n"
                "|---|---|---|---:|---:|---|\n")
        for r in ord_rows:
            def cell(p):
                x, z = r[p + "_value"], r[p + "_z"]
                return (f"{100 * x:+.2f} % ({z:.1f})" if r["measure"] == "relative"
                        else f"{x:+.4f} ({z:.1f})")
            f.write(f"| {r['comparison']} | {r['a']} | {r['b']} | {cell('ngram')} | "
                    f"{cell('neural')} | {r['verdict']} |\n")
    os.replace(os.path.join(out_dir, "side_by_side.md") + ".tmp",
               os.path.join(out_dir, "side_by_side.md"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
