#!/usr/bin/env python3
"""papers/resolution/tables.py - the tables of papers/resolution (run.sh calls it).

    tables.py trees MDSD PAIR OUT JOB...   E[tau] per verifier (OUT/trees_PAIR.csv, via
                                           papers/block/verifiers.py: mdsd merge, checked
                                           against the sample lines) and ot's paired
                                           differences (rows of PAIR in OUT/trees_paired.csv)
    tables.py acceptance OUT CSV...        the mdsd table CSVs acc-PAIR-kK-*.csv as one
                                           OUT/acceptance.csv (columns pair, top_k first)
    tables.py markdown OUT                 OUT/tables.md from the CSVs above, overhead.csv,
                                           markov_toys.csv and flat_toys.csv

Every file is written to FILE.tmp and renamed."""
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "block"))
import verifiers  # noqa: E402  (papers/block/verifiers.py: read_jobs, clustered, stars)

PAIRS = {"ngram": "n-gram pair (kn2 drafts)", "neural": "neural pair (tf1 drafts)"}


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def write_csv(path, rows, fields=None):
    fields = fields or list(rows[0])
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(path + ".tmp", path)


def trees(mdsd, pair, out, jobs):
    val = verifiers.read_jobs(mdsd, jobs, os.path.join(out, f"trees_{pair}.csv"))
    Ks = sorted({k[1] for k in val})
    Ls = sorted({k[2] for k in val})
    rows = []
    for L in Ls:
        for K in Ks:
            others = [("sd", 1)] if K == 1 else [("rrs", K), ("kseq", K), ("gbv", K), ("traversal", K)]
            others.append(("bv", 1))
            for b, Kb in others:
                a_key, b_key = ("ot", K, L), (b, Kb, L)
                if a_key not in val or b_key not in val:
                    continue
                d, se = verifiers.clustered(val[a_key], val[b_key])
                z = 0.0 if abs(d) < 1e-12 else d / se if se > 0 else math.inf
                rows.append({"pair": pair, "a": f"ot K={K} L={L}", "b": f"{b} K={Kb} L={L}",
                             "K": K, "L": L, "baseline": b, "difference": f"{d:.10g}",
                             "stderr": f"{se:.10g}", "z": f"{z:.10g}",
                             "significance": verifiers.stars(z),
                             "trees": sum(n for n, _ in val[a_key].values()),
                             "samples": len(val[a_key])})
    path = os.path.join(out, "trees_paired.csv")
    kept = [r for r in read_csv(path) if r["pair"] != pair] if os.path.exists(path) else []
    write_csv(path, kept + rows)


def acceptance(out, paths):
    rows = []
    for path in sorted(paths):
        m = re.search(r"acc-(\w+)-k(\d+)-\w\.csv$", path)
        if not m:
            sys.exit(f"tables.py: {path}: not an acc-PAIR-kK-X.csv")
        for r in read_csv(path):
            if r["method"] == "bound" and any(x["pair"] == m[1] and x["top_k"] == m[2]
                                              and x["n"] == r["n"] and x["scheme"] == r["scheme"]
                                              and x["method"] == "bound" for x in rows):
                continue  # the alpha* line of a scheme appears in two of the runs
            rows.append({"pair": m[1], "top_k": m[2], "n": r["n"], "scheme": r["scheme"],
                         "method": r["method"], "alpha": r["alpha"], "stderr": r["stderr"],
                         "gap": r["gap"], "gap_stderr": r["gap_stderr"],
                         "positions": r["positions"], "samples": r["samples"], "exact": r["exact"]})
    write_csv(os.path.join(out, "acceptance.csv"), rows)


def fmt(x, d=4):
    return f"{float(x):.{d}f}"


def markdown(out):
    lines = []
    acc = read_csv(os.path.join(out, "acceptance.csv"))

    def cell(pair, k, n, scheme, method):
        r = [x for x in acc if (x["pair"], x["top_k"], x["n"], x["scheme"], x["method"])
             == (pair, k, n, scheme, method)]
        return r[0] if r else None

    lines.append("## Acceptance at T = 0.7 (mean over positions, s.e. clustered by sample)\n")
    lines.append("| pair | top-k | n | α\\*(iid) | ot | \\|ot − α\\*\\| | rrs | kseq | rrsw | spechub "
                 "| α\\*(wor) | α\\*(wor) − α\\*(iid) |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pair in PAIRS:
        for k in ("0", "50", "10"):
            for n in ("2", "3", "4", "8"):
                b = cell(pair, k, n, "iid", "bound")
                if b is None:
                    continue
                ot = cell(pair, k, n, "iid", "ot")
                w = cell(pair, k, n, "wor", "bound")
                c = [fmt(b["alpha"]), fmt(ot["alpha"]), f"{abs(float(ot['gap'])):.1e}"]
                for scheme, v in (("iid", "rrs"), ("iid", "kseq"), ("wor", "rrsw"), ("hub", "spechub")):
                    r = cell(pair, k, n, scheme, v)
                    c.append(fmt(r["alpha"]) if r else "–")
                c += [fmt(w["alpha"]), f"{float(w['alpha']) - float(b['alpha']):+.4f}"]
                lines.append(f"| {pair} | {'none' if k == '0' else k} | {n} | " + " | ".join(c) + " |")
    lines.append("\n|ot − α\\*|: the mean over positions of ot's paired gap to the α\\* line (mdsd table "
                 "also checks ot against α\\* at every position and fails past 1e-9).\n")

    lines.append("## ot's overhead (one core, CPU; softmax excluded)\n")
    lines.append("| V | n | ot set-up / position | per verified tuple | set-up + tuple = per token "
                 "| α\\* sort-and-scan | rrs set-up | kseq set-up | max \\|α(ot) − α\\*\\| |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in read_csv(os.path.join(out, "overhead.csv")):
        ms = lambda x: f"{1e3 * float(x):.3f} ms"  # noqa: E731
        us = f"{1e6 * float(r['ot_verify_seconds']):.2f} µs"
        tok = float(r["ot_setup_seconds"]) + float(r["ot_verify_seconds"])
        lines.append(f"| {int(r['V']):,} | {r['n']} | {ms(r['ot_setup_seconds'])} | {us} | "
                     f"{1e3 * tok:.3f} ms | {ms(r['alpha_seconds'])} | {ms(r['rrs_setup_seconds'])} | "
                     f"{ms(r['kseq_setup_seconds'])} | {float(r['worst_gap']):.1e} |")

    for pair, label in PAIRS.items():
        path = os.path.join(out, f"trees_{pair}.csv")
        if not os.path.exists(path):
            continue
        t = read_csv(path)
        Ls = sorted({int(r["depth"]) for r in t})
        lines.append(f"\n## E[τ] on the {label} tree dump ({t[0]['samples']} samples, "
                     f"{t[0]['trees']} trees; s.e. clustered by sample)\n")
        lines.append("| verifier | K' | " + " | ".join(f"L' = {L}" for L in Ls) + " |")
        lines.append("|---|---:|" + "---:|" * len(Ls))
        for v in ("sd", "bv", "rrs", "kseq", "ot", "gbv", "traversal"):
            for K in (1, 2, 3, 4):
                if v not in ("sd", "bv") and K == 1:
                    continue
                cells = []
                for L in Ls:
                    r = [x for x in t if (x["verifier"], int(x["sequences"]), int(x["depth"])) == (v, K, L)]
                    if r:
                        cells.append(f"{fmt(r[0]['block_efficiency'])} ({fmt(r[0]['stderr'])})")
                if cells:
                    lines.append(f"| {v} | {K} | " + " | ".join(cells) + " |")
        lines.append(f"\nPaired by tree, ot − baseline (s.e.; * p < 0.05, ** p < 0.01, *** p < 0.001):\n")
        p = [r for r in read_csv(os.path.join(out, "trees_paired.csv")) if r["pair"] == pair]
        lines.append("| K' | L' | " + " | ".join(f"− {b}" for b in ("rrs", "kseq", "gbv", "traversal", "bv (K' = 1)")) + " |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for K in (2, 3, 4):
            for L in Ls:
                c = []
                for b in ("rrs", "kseq", "gbv", "traversal", "bv"):
                    r = [x for x in p if int(x["K"]) == K and int(x["L"]) == L and x["baseline"] == b]
                    c.append(f"{float(r[0]['difference']):+.4f} ({float(r[0]['stderr']):.4f}) "
                             f"{r[0]['significance']}" if r else "–")
                lines.append(f"| {K} | {L} | " + " | ".join(c) + " |")

    lines.append("\n## Markov toys (papers/block/toys; seq, L = 2; exact)\n")
    lines.append("| toy | K | ot | otm | rrs | kseq | otm-tiebreak | optimal-token |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    mt = read_csv(os.path.join(out, "markov_toys.csv"))
    for toy in sorted({r["toy"] for r in mt}):
        for K in sorted({r["sequences"] for r in mt}):
            c = [fmt([r for r in mt if (r["toy"], r["sequences"], r["verifier"]) == (toy, K, v)][0]
                     ["block_efficiency"])
                 for v in ("ot", "otm", "rrs", "kseq", "otm-tiebreak", "optimal-token")]
            lines.append(f"| {toy} | {K} | " + " | ".join(c) + " |")

    lines.append("\n## Dirichlet rows (V = 6, 200 rows; acceptance)\n")
    lines.append("| T | n | α\\* | ot | otm | rrs | kseq | \\|ot − α\\*\\| | \\|otm − α\\*\\| |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ft = read_csv(os.path.join(out, "flat_toys.csv"))
    for T in sorted({r["temperature"] for r in ft}, key=float):
        for n in sorted({r["n"] for r in ft}, key=int):
            g = {r["method"]: r for r in ft if r["temperature"] == T and r["n"] == n}
            lines.append(f"| {T} | {n} | " + " | ".join(fmt(g[m]["alpha"]) for m in
                                                      ("bound", "ot", "otm", "rrs", "kseq"))
                         + f" | {abs(float(g['ot']['gap'])):.1e} | {abs(float(g['otm']['gap'])):.1e} |")
    with open(os.path.join(out, "tables.md.tmp"), "w") as f:
        f.write("# papers/resolution: generated tables (run.sh; do not edit)\n\n" + "\n".join(lines) + "\n")
    os.replace(os.path.join(out, "tables.md.tmp"), os.path.join(out, "tables.md"))


def main():
    a = sys.argv[1:]
    if len(a) >= 5 and a[0] == "trees":
        trees(a[1], a[2], a[3], a[4:])
    elif len(a) >= 3 and a[0] == "acceptance":
        acceptance(a[1], a[2:])
    elif len(a) == 2 and a[0] == "markdown":
        markdown(a[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
