#!/usr/bin/env python3
"""papers/ceilings/ceilings.py - ceilings for the 2025-26 tree / multi-draft claims (run.sh
calls it; README.md here says what each claim is and why its ceiling is the one below).

    ceilings.py toys MDSD OUT        E[tau] of every verifier on papers/block's Markov toys,
                                     exact (OUT/toys.csv; a verifier refused by mdsd's guards,
                                     e.g. optimal-block's LP cost guard, is a row with an
                                     empty block_efficiency and mdsd's message as note)
    ceilings.py random MDSD OUT      the same on 40 random Markov toys (OUT/random/*.txt,
                                     OUT/random.csv; settings RANDOM_SETTINGS below)
    ceilings.py pairs RES OUT        gains on the pairs' tree dumps from papers/resolution's
                                     results directory RES (OUT/pairs.csv)
    ceilings.py tables OUT           OUT/gains.csv (toys), OUT/claims.csv and OUT/tables.md

Relative gain = E[tau](ceiling) / E[tau](baseline) - 1. Every file is written to FILE.tmp
and renamed."""
import csv
import glob
import json
import os
import subprocess
import sys

TOYS = sorted(glob.glob(os.path.join("papers", "block", "toys", "*.txt")))   # from the root

# The claims (arXiv identifiers and abstracts' words: README.md here). low/high: the claimed
# relative gain in E[tau] (None: the abstract states none).
CLAIMS = [
    {"claim": "UniVer", "arxiv": "2605.04543", "low": 0.042, "high": 0.085,
     "baseline": "rrsw", "ceiling": "optimal-block",
     "class": "lossless verifiers that see the whole wor tree",
     "settings": "wor trees"},
    {"claim": "GLS", "arxiv": "2506.05632", "low": None, "high": None,
     "baseline": "rrs", "ceiling": "optimal-token",
     "class": "token-level verifiers of i.i.d. drafts",
     "settings": "i.i.d. sequences and trees"},
    {"claim": "HSD", "arxiv": "2601.05724", "low": 0.12, "high": 0.12,
     "baseline": "sd", "ceiling": "optimal-block",
     "class": "lossless verifiers that see the whole draft",
     "settings": "one sequence (K = 1), i.i.d. and greedy trees"},
]

# Toy settings: (policy arguments, label, scheme, baselines, verifiers beside them).
OPT = ["optimal-token", "otm-tiebreak", "optimal-block"]
SETTINGS = []
for w in ("2,2", "3,2", "3,3", "2,2,2"):
    SETTINGS.append((["--tree", w, "--scheme", "wor"], f"tree {w} wor", "wor",
                     ["rrsw"], OPT + ["traversal"]))
    SETTINGS.append((["--tree", w, "--scheme", "iid"], f"tree {w} iid", "iid",
                     ["rrs", "kseq"], OPT + ["traversal"]))
for w in ("2,2", "3,3", "2,2,2"):
    SETTINGS.append((["--tree", w, "--scheme", "greedy"], f"tree {w} greedy", "greedy",
                     ["greedy"], OPT))
for K in (2, 3, 4):
    for L in (2, 3):
        SETTINGS.append((["--sequences", str(K), "--depth", str(L)], f"seq K={K} L={L}", "seq",
                         ["rrs", "kseq"], OPT + ["gbv", "traversal"]))
for L in (1, 2, 3, 4, 5, 6, 7, 8):
    SETTINGS.append((["--sequences", "1", "--depth", str(L)], f"seq K=1 L={L}", "seq1",
                     ["sd"], ["bv", "optimal-token", "optimal-block"]))


def write_csv(path, rows, fields):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(path + ".tmp", path)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# Random Markov toys (the random subcommand): N_RANDOM pairs from a fixed seed, V = 4 or 5,
# target and drafter rows Dirichlet(a), a = 1, 0.3 or 0.1 (as papers/block/traversal_scan.py),
# on the settings below, where optimal-block's LP stays under a few seconds.
N_RANDOM, SEED = 40, 43
# (At K = 1 bv is the exact ceiling; its LP can take minutes on these toys: not run.)
RANDOM_SETTINGS = [s for s in SETTINGS if s[1] in (
    "tree 2,2 wor", "tree 3,2 wor", "tree 2,2 iid", "seq K=2 L=2", "seq K=3 L=2")]
RANDOM_SETTINGS.append((["--sequences", "1", "--depth", "4"], "seq K=1 L=4", "seq1", ["sd"], ["bv"]))


def write_toy(path, P, Q):
    with open(path, "w") as f:
        f.write(f"{len(P)}\n")
        for M in (P, Q):
            f.write("".join(" ".join(repr(float(x)) for x in row) + "\n" for row in M))
            if M is P:
                f.write("\n")


def random_toys(mdsd, out):
    """The random toys, written to OUT/random/random-NN.txt (mdsd block --markov files, so
    that every row of OUT/random.csv can be rerun), and their E[tau] (OUT/random.csv)."""
    import numpy as np
    rng = np.random.default_rng(SEED)
    os.makedirs(os.path.join(out, "random"), exist_ok=True)
    toys = []
    for i in range(N_RANDOM):
        V, a = (4, 5)[i % 2], (1.0, 0.3, 0.1)[i % 3]
        P, Q = rng.dirichlet([a] * V, V), rng.dirichlet([a] * V, V)
        path = os.path.join(out, "random", f"random-{i:02d}.txt")
        write_toy(path + ".tmp", P, Q)
        os.replace(path + ".tmp", path)
        toys.append((path, {"dirichlet": a}))
    # wor (3,2) only at V = 4: at V = 5 its LP takes half a minute.
    rows = evaluate(mdsd, toys, RANDOM_SETTINGS, lambda V, label: label != "tree 3,2 wor" or V == 4)
    write_csv(os.path.join(out, "random.csv"), rows,
              ["toy", "V", "dirichlet", "setting", "scheme", "verifier", "block_efficiency", "note"])


def toys(mdsd, out):
    rows = evaluate(mdsd, [(t, {}) for t in TOYS], SETTINGS, lambda V, label: True)
    write_csv(os.path.join(out, "toys.csv"), rows,
              ["toy", "V", "setting", "scheme", "verifier", "block_efficiency", "note"])


def evaluate(mdsd, toy_list, settings, wanted):
    rows = []
    for toy, extra in toy_list:
        name = os.path.basename(toy)[:-4]
        V = int(open(toy).readline())
        for args, label, scheme, bases, others in settings:
            if not wanted(V, label):
                continue
            widths = [int(x) for x in args[1].split(",")] if args[0] == "--tree" else []
            if scheme in ("wor", "greedy") and max(widths) >= V:
                continue   # distinct children that cover the vocabulary: nothing to verify
            for v in bases + others:
                cmd = [mdsd, "block", "--markov", toy, *args, "-v", v, "--exact", "--json",
                       "--threads", "1"]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode == 0:
                    be, note = repr(json.loads(r.stdout)["block_efficiency"]), ""
                elif r.returncode == 1 and ("guard" in r.stderr or "--force" in r.stderr or (
                        v == "optimal-block" and "GLPK failed" in r.stderr)):
                    # Refused (too big) or optimal-block's LP failed: no number, the message
                    # kept (a GLPK failure on a feasible LP: reported, issue 41).
                    be, note = "", r.stderr.strip().splitlines()[-1].replace("mdsd block: ", "")
                else:
                    sys.exit(f"ceilings: {' '.join(cmd)} failed: {r.stderr.strip()}")
                rows.append({"toy": name, "V": V, **extra, "setting": label, "scheme": scheme,
                             "verifier": v, "block_efficiency": be, "note": note})
            print(f"ceilings: {name} {label}", file=sys.stderr)
    return rows


def pairs(res, out):
    """Gains on the pairs' seq dumps (i.i.d. drafts, K <= 4, L <= 4). ot per node against rrs
    and kseq (a lower bound on the token-level ceiling: alpha* at every node, not the
    backward induction of optimal-token); bv against sd at K = 1 (the block ceiling there);
    the best block verifier measured (gbv, traversal) and ot against rrs at K >= 2 (a lower
    bound on the block ceiling)."""
    paired = read_csv(os.path.join(res, "trees_paired.csv"))
    rows = []
    for pair in ("ngram", "neural"):
        be = {(r["verifier"], int(r["sequences"]), int(r["depth"])): float(r["block_efficiency"])
              for r in read_csv(os.path.join(res, f"trees_{pair}.csv")) if r["cost"] == "0"}
        diff = {(r["baseline"], int(r["K"]), int(r["L"])): (float(r["difference"]), float(r["stderr"]))
                for r in paired if r["pair"] == pair}
        for L in range(1, 5):
            for K in range(1, 5):
                cases = []
                if K == 1:
                    # At K = 1 ot is sd (difference 0 in trees_paired.csv), so bv - sd = -(ot - bv).
                    d, se = diff[("bv", 1, L)]
                    cases.append(("HSD", "sd", "bv", "exact ceiling (BV is optimal at K = 1)", -d, se))
                else:
                    for b in ("rrs", "kseq"):
                        d, se = diff[(b, K, L)]
                        cases.append(("GLS", b, "ot", "lower bound on optimal-token", d, se))
                    # Only ot's differences are paired in trees_paired.csv: no s.e. otherwise.
                    best = max(("ot", "gbv", "traversal"), key=lambda v: be[(v, K, L)])
                    cases.append(("HSD", "rrs", best, "lower bound on optimal-block",
                                  be[(best, K, L)] - be[("rrs", K, L)],
                                  diff[("rrs", K, L)][1] if best == "ot" else float("nan")))
                for claim, b, c, bound, d, se in cases:
                    base = be[(b, K, L)]
                    if abs(be[(c, K, L)] - base - d) > 1e-9:
                        sys.exit(f"ceilings: {pair} K={K} L={L}: {c} - {b} is "
                                 f"{be[(c, K, L)] - base!r} in trees_{pair}.csv, {d!r} paired")
                    rows.append({"pair": pair, "claim": claim, "K": K, "L": L, "baseline": b,
                                 "ceiling": c, "bound": bound, "baseline_E": f"{base:.10g}",
                                 "ceiling_E": f"{be[(c, K, L)]:.10g}", "gain": f"{0.0 if abs(d) < 1e-12 else d / base:.10g}",
                                 "gain_stderr": "" if se != se else f"{se / base:.10g}"})
    write_csv(os.path.join(out, "pairs.csv"), rows,
              ["pair", "claim", "K", "L", "baseline", "ceiling", "bound", "baseline_E",
               "ceiling_E", "gain", "gain_stderr"])


def verdict(claim, gain, exact):
    """Where a claimed gain fits under a ceiling gain: 'fits' when the ceiling reaches the
    claim's top, 'low end only' between its ends, 'cannot' below its low end (only where the
    ceiling is exact; a lower bound below the claim decides nothing)."""
    if claim["low"] is None:
        return "no gain claimed"
    if gain >= claim["high"]:
        return "fits"
    if gain >= claim["low"]:
        return "low end only"
    return "cannot" if exact else "undecided (lower bound)"


# Each claim's baselines per toy scheme (seq1: one sequence, K = 1).
BASELINES = {"UniVer": {"wor": ["rrsw"]},
             "GLS": {"iid": ["rrs", "kseq"], "seq": ["rrs", "kseq"]},
             "HSD": {"seq1": ["sd"], "iid": ["rrs"], "seq": ["rrs"], "greedy": ["greedy"]}}


# The ceilings, then the block verifiers the toolkit runs (traversal: Weng et al., UniVer's
# first author's earlier whole-tree verifier), each as a gain over the baseline.
GAIN_COLUMNS = ("optimal-token", "otm-tiebreak", "optimal-block", "bv", "gbv", "traversal")
TOKEN_LEVEL = ("sd", "rrs", "rrsw", "kseq", "greedy", "otm-tiebreak")


def tables(out):
    toy_rows = read_csv(os.path.join(out, "toys.csv"))
    if os.path.exists(os.path.join(out, "random.csv")):
        toy_rows += read_csv(os.path.join(out, "random.csv"))
    be = {(r["toy"], r["setting"], r["verifier"]): r["block_efficiency"] for r in toy_rows}
    # The ceilings are ceilings: no verifier above optimal-block, no token-level one above
    # optimal-token (1e-9: the LPs' tolerance).
    for (toy, label, v), e in be.items():
        for c, below in (("optimal-block", None), ("optimal-token", TOKEN_LEVEL)):
            top = be.get((toy, label, c), "")
            if e and top and (below is None or v in below) and float(e) > float(top) + 1e-9:
                sys.exit(f"ceilings: {toy} {label}: {v} {e} is above {c} {top}")
    order = [x[1] for x in SETTINGS]
    settings = sorted({(r["toy"], r["setting"], r["scheme"]) for r in toy_rows},
                      key=lambda s: (s[0].startswith("random"), s[0], order.index(s[1])))
    gains = []
    for claim in CLAIMS:
        for toy, label, scheme in settings:
            for base in BASELINES[claim["claim"]].get(scheme, []):
                b = float(be[(toy, label, base)])
                row = {"claim": claim["claim"], "toy": toy, "setting": label, "baseline": base,
                       "baseline_E": f"{b:.10g}"}
                for c in GAIN_COLUMNS:
                    e = be.get((toy, label, c), "")
                    row[f"{c}_gain"] = f"{float(e) / b - 1:.10g}" if e else ""
                c = claim["ceiling"]
                exact = row[f"{c}_gain"] != ""
                g = row[f"{c}_gain"] if exact else row["optimal-token_gain"]
                g = float(g) if g else None
                how = "yes" if exact else "no (optimal-token, a lower bound)"
                if scheme == "seq1" and c == "optimal-block":
                    # One sequence: BV is the best lossless verifier (Sun et al.; papers/block
                    # checks it), so bv is the exact ceiling where the LP is refused.
                    bv = float(be[(toy, label, "bv")])
                    if exact and abs(bv - (1 + g) * b) > 1e-9:
                        sys.exit(f"ceilings: {toy} {label}: bv {bv!r} is not optimal-block "
                                 f"{(1 + g) * b!r}")
                    if not exact:
                        exact, g, how = True, bv / b - 1, "yes (bv, optimal at K = 1)"
                if g is None:
                    sys.exit(f"ceilings: {toy} {label}: neither {c} nor optimal-token")
                row["ceiling_gain"] = f"{g:.10g}"
                row["ceiling_exact"] = how
                row["verdict"] = verdict(claim, g, exact)
                gains.append(row)
    write_csv(os.path.join(out, "gains.csv"), gains,
              ["claim", "toy", "setting", "baseline", "baseline_E"] +
              [f"{c}_gain" for c in GAIN_COLUMNS] + ["ceiling_gain", "ceiling_exact", "verdict"])

    pair_rows = read_csv(os.path.join(out, "pairs.csv"))
    claims = []
    for claim in CLAIMS:
        bases = sorted({b for bs in BASELINES[claim["claim"]].values() for b in bs},
                       key=["rrsw", "rrs", "kseq", "sd", "greedy"].index)
        for base in bases:
            mine = [g for g in gains if g["claim"] == claim["claim"] and g["baseline"] == base]
            top = max(mine, key=lambda g: float(g["ceiling_gain"]))
            exact = [g for g in mine if g["ceiling_exact"].startswith("yes")]
            low = min(exact, key=lambda g: float(g["ceiling_gain"])) if exact else None
            counts = {v.split(" ")[0]: sum(g["verdict"] == v for g in mine) for v in
                      ("fits", "low end only", "cannot", "undecided (lower bound)")}
            pr = [r for r in pair_rows if r["claim"] == claim["claim"] and r["baseline"] == base]
            ptop = max(pr, key=lambda r: float(r["gain"])) if pr else None
            claims.append({
                "claim": claim["claim"], "arxiv": claim["arxiv"],
                "claimed_low": "" if claim["low"] is None else claim["low"],
                "claimed_high": "" if claim["high"] is None else claim["high"],
                "baseline": base, "ceiling": claim["ceiling"], "class": claim["class"],
                "toy_cases": len(mine), "toy_max_gain": top["ceiling_gain"],
                "toy_max_where": f"{top['toy']} {top['setting']}",
                "toy_min_exact_gain": low["ceiling_gain"] if low else "",
                "toy_min_exact_where": f"{low['toy']} {low['setting']}" if low else "",
                **{f"toy_{k}": n for k, n in counts.items()},
                "pairs_max_gain": ptop["gain"] if ptop else "",
                "pairs_max_gain_stderr": ptop["gain_stderr"] if ptop else "",
                "pairs_max_where": (f"{ptop['pair']} K={ptop['K']} L={ptop['L']} {ptop['ceiling']} "
                                    f"({ptop['bound']})") if ptop else
                                   f"not run: the pairs' dumps are i.i.d. seq trees, no {dict(rrsw='wor').get(base, base)} trees",
                "pairs_verdict": verdict(claim, float(ptop["gain"]), "exact" in ptop["bound"])
                                 if ptop else "",
            })
    write_csv(os.path.join(out, "claims.csv"), claims, list(claims[0]))

    pct = lambda x: "" if x == "" else f"{100 * float(x):+.1f} %"
    md = ["# Ceilings for the 2025-26 claims (generated by papers/ceilings/ceilings.py)", "",
          "Relative gain = E[tau](ceiling) / E[tau](baseline) - 1. See README.md for each "
          "claim's class.", "", "## Claims", "",
          "| claim | arXiv | claimed | baseline | ceiling | toys: largest gain (where) | "
          "toys: smallest exact gain (where) | fits / low end / cannot / undecided | "
          "pairs: largest gain (where) | pairs verdict |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in claims:
        claimed = ("none stated" if c["claimed_low"] == "" else
                   f"{pct(c['claimed_low'])}" + ("" if c["claimed_low"] == c["claimed_high"]
                                                  else f" to {pct(c['claimed_high'])}"))
        pg = (f"{pct(c['pairs_max_gain'])} ± {100 * float(c['pairs_max_gain_stderr']):.1f} % "
              if c["pairs_max_gain_stderr"] else f"{pct(c['pairs_max_gain'])} ")
        md.append(f"| {c['claim']} | {c['arxiv']} | {claimed} | {c['baseline']} | {c['ceiling']} | "
                  f"{pct(c['toy_max_gain'])} ({c['toy_max_where']}) | "
                  f"{pct(c['toy_min_exact_gain'])} ({c['toy_min_exact_where']}) | "
                  f"{c['toy_fits']} / {c['toy_low']} / {c['toy_cannot']} / {c['toy_undecided']} | "
                  f"{pg}({c['pairs_max_where']}) | {c['pairs_verdict']} |")
    md += ["", "## Toys (exact; papers/block/toys, then the random toys of results/random/)", "",
           "| claim | toy | setting | baseline | E[tau] | optimal-token | otm-tiebreak | "
           "optimal-block | bv | gbv | traversal | ceiling exact | verdict |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g in gains:
        md.append(f"| {g['claim']} | {g['toy']} | {g['setting']} | {g['baseline']} | "
                  f"{float(g['baseline_E']):.4f} | {pct(g['optimal-token_gain'])} | "
                  f"{pct(g['otm-tiebreak_gain'])} | {pct(g['optimal-block_gain']) or 'LP refused'} | "
                  f"{pct(g['bv_gain'])} | {pct(g['gbv_gain'])} | {pct(g['traversal_gain'])} | "
                  f"{g['ceiling_exact']} | {g['verdict']} |")
    md += ["", "## Pairs' tree dumps (seq, i.i.d. drafts; 1,000 samples)", "",
           "| pair | claim | K | L | baseline | E[tau] | ceiling | gain | s.e. | bound |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in pair_rows:
        se = "" if r["gain_stderr"] == "" else f"{100 * float(r['gain_stderr']):.1f} %"
        md.append(f"| {r['pair']} | {r['claim']} | {r['K']} | {r['L']} | {r['baseline']} | "
                  f"{float(r['baseline_E']):.4f} | {r['ceiling']} | {pct(r['gain'])} | "
                  f"{se} | "
                  f"{r['bound']} |")
    path = os.path.join(out, "tables.md")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(md) + "\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    cmd = sys.argv[1:2]
    if cmd == ["toys"] and len(sys.argv) == 4:
        toys(sys.argv[2], sys.argv[3])
    elif cmd == ["random"] and len(sys.argv) == 4:
        random_toys(sys.argv[2], sys.argv[3])
    elif cmd == ["pairs"] and len(sys.argv) == 4:
        pairs(sys.argv[2], sys.argv[3])
    elif cmd == ["tables"] and len(sys.argv) == 3:
        tables(sys.argv[2])
    else:
        sys.exit(__doc__)
