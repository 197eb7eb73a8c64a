#!/usr/bin/python3
"""Side-by-side Markdown of the two KJV model pairs' results (papers/pairs/run.sh), and every
paired ordering of both pairs matched up with a verdict.

  side_by_side.py RESULTS ngram:SMALL,LARGE neural:SMALL,LARGE

RESULTS holds ngram/ and neural/ as run.sh writes them; the drafters are each pair's, the
smaller first (lib.sh pair_drafters), so that a row of one pair meets the row of the same
role (smaller or larger drafter) of the other. Writes RESULTS/{dumps, hu_table1, hu_fig1, spechub,
khisti, orderings}.md, RESULTS/orderings.csv and orderings_summary.csv (per ordering: how many
settings get each verdict, and the range of z on each pair) (each to a temporary file, then renamed).

Verdict of an ordering a > b (paired over the same positions, s.e. clustered by sample):
'holds on both' when both pairs have the same sign and |z| >= Z; 'reverses' when both have
|z| >= Z with opposite signs; 'only n-gram' / 'only neural' when one pair has |z| >= Z;
'tie on both' when neither does. Z = 3 (two-sided p < 0.003: a few dozen orderings are
compared, so a 5% level would call about one of them by chance).
"""
import csv
import os
import sys

Z = 3.0
ANALYSES = ("hu", "spechub", "khisti")
VERDICTS = ("holds on both", "reverses", "only n-gram", "only neural", "tie on both")
NAMES = {"ngram": "n-gram", "neural": "neural"}
HU_ROWS = (("iid", "rrs", "RRS (with replacement)"), ("iid", "kseq-mc", "K-SEQ (Monte Carlo)"),
           ("iid", "kseq", "α_K-SEQ (exact)"), ("iid", "bound", "α\\*_iid"),
           ("wor", "rrsw", "RRSw (without replacement)"), ("wor", "bound", "α\\*_wor"),
           ("cps", "bound", "α\\*_cps (Hu's Q(H))"), ("greedy", "greedy", "greedy Verify"),
           ("greedy", "bound", "α\\*_greedy"))
KHISTI_ROWS = (("bound", "Optimal (α\\*_iid)"), ("is-top5", "IS, truncated LP s = 5"),
               ("is-top50", "IS, truncated LP s = 50"), ("kseq", "SpecTr (k-Seq)"),
               ("rrs", "SpecInfer (RRS)"))


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def drafter(row):
    return row["dump"].rsplit(":", 1)[-1]


def index(rows, *keys):
    """rows keyed by (drafter, float temperature, int n, *keys); a repeated key is an error."""
    out = {}
    for r in rows:
        k = (drafter(r), float(r["temperature"]), int(r["n"])) + tuple(r[c] for c in keys)
        if k in out:
            sys.exit(f"side_by_side: row {k} twice")
        out[k] = r
    return out


def get(table, key, what):
    if key not in table:
        sys.exit(f"side_by_side: no row {key} ({what})")
    return table[key]


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def signed(x, digits):
    return ("+" if x > 0 else "−" if x < 0 else "") + f"{abs(x):.{digits}f}"


def num(x, sign=False):
    """x with 4 decimals, or 3 significant digits when below 0.001 (as mdsd report writes)."""
    text = f"{abs(x):.4f}" if abs(x) >= 0.001 or x == 0 else f"{abs(x):.3g}"
    return (("+" if x > 0 else "−" if x < 0 else "") if sign else "") + text


def summary(rows):
    """One row per ordering (analysis, a, b) over its settings: verdict counts, z range."""
    out = {}
    for r in rows:
        k = (r["analysis"], r["a"], r["b"])
        o = out.setdefault(k, {"analysis": k[0], "a": k[1], "b": k[2], "settings": 0,
                               **{v: 0 for v in VERDICTS}})
        o["settings"] += 1
        o[r["verdict"]] += 1
        for p in ("ngram", "neural"):
            z = float(r[p + "_z"])
            o[p + "_zmin"] = min(o.get(p + "_zmin", z), z)
            o[p + "_zmax"] = max(o.get(p + "_zmax", z), z)
    return list(out.values())


def hu_table1(res, pairs):
    cols = [(p, d) for p in pairs for d in pairs[p]]
    t = {p: index(read(f"{res}/{p}/hu_table1.csv"), "scheme", "method") for p in pairs}
    out = ["# Hu et al. Table 1 layout on both pairs (T = 0.7, n = 3; papers/pairs/run.sh)", "",
           "α in %, ± s.e. clustered by sample; in parentheses the gap to the scheme's α\\* with "
           "its paired significance (* p < 0.05, ** p < 0.01, *** p < 0.001; = equal to 10⁻⁹, "
           "rounding). Each pair's dump of responses generated at T = 0.7.", "",
           "| draft sampling | method | " + " | ".join(f"{NAMES[p]} {d}" for p, d in cols) + " |",
           "|---|---|" + "---:|" * len(cols)]
    for s, m, label in HU_ROWS:
        cells = []
        for p, d in cols:
            r = get(t[p], (d, 0.7, 3, s, m), f"{p} hu_table1")
            c = f"{100 * float(r['alpha']):.1f} ± {100 * float(r['stderr']):.1f}"
            if m != "bound":
                gap = float(r["gap"])
                c += " (=)" if abs(gap) < 1e-9 else f" ({signed(100 * gap, 1)}{r['significance']})"
            cells.append(c)
        out.append(f"| {s} | {label} | " + " | ".join(cells) + " |")
    r0 = {p: get(t[p], (pairs[p][0], 0.7, 3, "iid", "bound"), p) for p in pairs}
    out += ["", "Positions (samples): " + ", ".join(
        f"{NAMES[p]} {r0[p]['positions']} ({r0[p]['samples']})" for p in pairs) + ".", ""]
    return "\n".join(out)


def hu_fig1(res, pairs):
    t = {p: index(read(f"{res}/{p}/hu_fig1.csv"), "scheme", "method") for p in pairs}
    temps = {p: sorted({k[1] for k in t[p]}) for p in pairs}
    out = ["# Hu et al. Fig. 1 on both pairs (α against T, n = 3, the smaller drafter; papers/pairs/run.sh)",
           "", "Each T from the pair's dump generated at T. Positions (samples) per T: " + "; ".join(
               NAMES[p] + " " + ", ".join(
                   f"{get(t[p], (pairs[p][0], T, 3, 'iid', 'bound'), 'fig1')['positions']} "
                   f"({get(t[p], (pairs[p][0], T, 3, 'iid', 'bound'), 'fig1')['samples']})"
                   for T in temps[p]) for p in pairs) + ".", "",
           "| method | " + " | ".join(f"{NAMES[p]} {pairs[p][0]} T = {T:g}" for p in pairs for T in temps[p]) + " |",
           "|---|" + "---:|" * sum(len(v) for v in temps.values())]
    for s, m, label in HU_ROWS:
        out.append(f"| {label} | " + " | ".join(
            "%.3f" % float(get(t[p], (pairs[p][0], T, 3, s, m), f"{p} fig1")["alpha"])
            for p in pairs for T in temps[p]) + " |")
    out.append("")
    return "\n".join(out)


def spechub(res, pairs):
    t = {p: index(read(f"{res}/{p}/spechub_dump.csv"), "scheme", "method") for p in pairs}
    temps = sorted({k[1] for k in t["ngram"]})
    ver = (("iid", "rrs", "RRS"), ("wor", "rrsw", "RRSw"), ("hub", "spechub", "SpecHub"))
    head = lambda what: ("| temperature | drafter | " + " | ".join(f"{NAMES[p]} {v}" for p in pairs for _, _, v in what)
                         + " |\n|---|---|" + "---:|" * (len(pairs) * len(what)))
    val = lambda p, role, T, s, m, c: float(get(t[p], (pairs[p][role], T, 2, s, m), f"{p} spechub")[c])
    out = ["# SpecHub Tables 1-3 on both pairs (n = 2; papers/pairs/run.sh)", "",
           "Each T from the pair's dump generated at T; drafter: the smaller (kn2, tf1) or the "
           "larger (kn3, tf2) of each pair. Per-pair tables beside the published values: "
           "`ngram/spechub_dump.md`, `neural/spechub_dump.md`.", "",
           "**Second-draft acceptance (Tables 1 and 2)**", "", head(ver)]
    for T in temps:
        for role, name in enumerate(("smaller", "larger")):
            out.append(f"| T = {T:g} | {name} | " + " | ".join(
                "%.4f" % val(p, role, T, s, m, "per_draft_2") for p in pairs for s, m, _ in ver) + " |")
    out += ["", "**First-draft acceptance (Table 3; RRS = RRSw = Σ min(p, q))**", "",
            head((("", "", "RRSw"), ("", "", "SpecHub")))]
    for T in temps:
        for role, name in enumerate(("smaller", "larger")):
            out.append(f"| T = {T:g} | {name} | " + " | ".join(
                "%.4f" % val(p, role, T, s, m, "per_draft_1") for p in pairs for s, m, _ in ver[1:]) + " |")
    tot = ver + (("wor", "bound", "α\\*_wor"), ("hub", "bound", "α\\*_hub"))
    out += ["", "**Total acceptance (n = 2)**", "", head(tot)]
    for T in temps:
        for role, name in enumerate(("smaller", "larger")):
            out.append(f"| T = {T:g} | {name} | " + " | ".join(
                "%.4f" % val(p, role, T, s, m, "alpha") for p in pairs for s, m, _ in tot) + " |")
    out.append("")
    return "\n".join(out)


def khisti(res, pairs):
    t = {p: index(read(f"{res}/{p}/khisti_dump.csv"), "method") for p in pairs}
    cols = [(p, d) for p in pairs for d in pairs[p]]
    out = ["# Khisti et al. Table 3 analogue on both pairs (T = 0.7, n = 2 / 3 / 4; papers/pairs/run.sh)", "",
           "| scheme | " + " | ".join(f"{NAMES[p]} {d}" for p, d in cols) + " |", "|---|" + "---|" * len(cols)]
    for m, label in KHISTI_ROWS:
        out.append(f"| {label} | " + " | ".join(" / ".join(
            "%.4f" % float(get(t[p], (d, 0.7, n, m), f"{p} khisti")["alpha"]) for n in (2, 3, 4))
            for p, d in cols) + " |")
    se = [float(r["stderr"]) for p in pairs for r in t[p].values()]
    r0 = {p: get(t[p], (pairs[p][0], 0.7, 2, "bound"), p) for p in pairs}
    out += ["", f"Standard errors (clustered by sample) {min(se):.4f}–{max(se):.4f}. Positions "
            "(samples): " + ", ".join(f"{NAMES[p]} {r0[p]['positions']} ({r0[p]['samples']})"
                                      for p in pairs) + ".", ""]
    return "\n".join(out)


def dumps(res, pairs):
    """Positions and samples of every dump read, from the results' own counts."""
    seen = {}
    for p in pairs:
        for name in ("hu_fig1", "spechub_dump", "hu_table1"):
            for r in read(f"{res}/{p}/{name}.csv"):
                T = float(r["temperature"])
                if seen.setdefault((p, T), (r["positions"], r["samples"])) != (r["positions"], r["samples"]):
                    sys.exit(f"side_by_side: {p} T = {T:g}: rows of one dump with different counts")
    temps = sorted({T for _, T in seen})
    out = ["# The dumps read (papers/pairs/run.sh): positions (samples) per temperature", "",
           "| temperature | " + " | ".join(f"{NAMES[p]} positions (samples)" for p in pairs) + " |",
           "|---|" + "---:|" * len(pairs)]
    for T in temps:
        out.append(f"| T = {T:g} | " + " | ".join(
            "%s (%s)" % seen[p, T] if (p, T) in seen else "" for p in pairs) + " |")
    out.append("")
    return "\n".join(out)


def verdict(za, zb):
    sa, sb = abs(za) >= Z, abs(zb) >= Z
    if sa and sb:
        return "holds on both" if (za > 0) == (zb > 0) else "reverses"
    return "only n-gram" if sa else "only neural" if sb else "tie on both"


def orderings(res, pairs):
    keyed = {}
    for p in pairs:
        for analysis in ANALYSES:
            for r in read(f"{res}/{p}/{analysis}_paired.csv"):
                role = pairs[p].index(drafter(r))
                k = (analysis, float(r["temperature"]), role, r["a"], r["b"])
                if (p,) + k in keyed:
                    sys.exit(f"side_by_side: {p}: ordering {k} twice")
                keyed[(p,) + k] = r
    keys = sorted({k[1:] for k in keyed}, key=lambda k: (("hu", "spechub", "khisti").index(k[0]),) + k[1:])
    rows = []
    for k in keys:
        r = {p: keyed.get((p,) + k) for p in pairs}
        missing = [p for p in pairs if r[p] is None]
        if missing:
            sys.exit(f"side_by_side: ordering {k} missing from {missing}")
        analysis, T, role, a, b = k
        row = {"analysis": analysis, "temperature": "%g" % T, "n": a.rsplit("_n", 1)[1],
               "role": ("smaller", "larger")[role], "a": a.rsplit("_n", 1)[0], "b": b.rsplit("_n", 1)[0]}
        for p in pairs:
            row[f"{p}_drafter"] = drafter(r[p])
            for c in ("difference", "stderr", "z", "positions", "samples"):
                row[f"{p}_{c}"] = r[p][c]
        row["verdict"] = verdict(float(r["ngram"]["z"]), float(r["neural"]["z"]))
        rows.append(row)
    return rows


def summary_md(rows):
    out = ["# Orderings on both pairs, summed over their settings (papers/pairs/run.sh)", "",
           f"Per ordering a − b of an analysis: the number of settings (T, n, drafter role), how many "
           f"get each verdict (|z| ≥ {Z:g}; side_by_side.py), and the range of z on each pair.", "",
           "| analysis | a | b | settings | " + " | ".join(VERDICTS) + " | n-gram z | neural z |",
           "|---|---|---|---:|" + "---:|" * len(VERDICTS) + "---|---|"]
    for r in rows:
        rng = lambda p: f"{signed(r[p + '_zmin'], 1)} to {signed(r[p + '_zmax'], 1)}"
        out.append(f"| {r['analysis']} | {r['a']} | {r['b']} | {r['settings']} | " +
                   " | ".join(str(r[v]) for v in VERDICTS) + f" | {rng('ngram')} | {rng('neural')} |")
    out += ["", ""]
    return "\n".join(out)


def orderings_md(rows):
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    out = ["## Every paired ordering on both pairs", "",
           f"a − b over the same positions, mean ± s.e. clustered by sample, z; verdict at |z| ≥ {Z:g} "
           "(side_by_side.py). " + ", ".join(f"{v}: {c}" for v, c in sorted(counts.items())) + ".", "",
           "| analysis | T | n | drafter | a | b | n-gram a − b (z) | neural a − b (z) | verdict |",
           "|---|---:|---:|---|---|---|---:|---:|---|"]
    for r in rows:
        cell = lambda p: (f"{num(float(r[p + '_difference']), True)} ± {num(float(r[p + '_stderr']))} "
                          f"({signed(float(r[p + '_z']), 1)})")
        out.append(f"| {r['analysis']} | {r['temperature']} | {r['n']} | {r['ngram_drafter']} / "
                   f"{r['neural_drafter']} | {r['a']} | {r['b']} | {cell('ngram')} | {cell('neural')} | {r['verdict']} |")
    out.append("")
    return "\n".join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    res = sys.argv[1]
    pairs = {}
    for arg in sys.argv[2:]:
        name, _, ds = arg.partition(":")
        pairs[name] = tuple(ds.split(","))
    if sorted(pairs) != ["neural", "ngram"] or any(len(d) != 2 for d in pairs.values()):
        sys.exit(__doc__)
    pairs = {"ngram": pairs["ngram"], "neural": pairs["neural"]}
    write(f"{res}/hu_table1.md", hu_table1(res, pairs))
    write(f"{res}/hu_fig1.md", hu_fig1(res, pairs))
    write(f"{res}/spechub.md", spechub(res, pairs))
    global ANALYSES
    if all(os.path.exists(f"{res}/{p}/khisti_dump.csv") for p in pairs):
        write(f"{res}/khisti.md", khisti(res, pairs))
    else:  # a run still going; run.sh makes every analysis
        print("side_by_side: no Khisti results on both pairs: left out", file=sys.stderr)
        ANALYSES = ("hu", "spechub")
    write(f"{res}/dumps.md", dumps(res, pairs))
    rows = orderings(res, pairs)
    with open(f"{res}/orderings.csv.tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(f"{res}/orderings.csv.tmp", f"{res}/orderings.csv")
    rows = summary(rows), rows
    write(f"{res}/orderings.md", summary_md(rows[0]) + orderings_md(rows[1]))
    rows = rows[0]
    with open(f"{res}/orderings_summary.csv.tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(f"{res}/orderings_summary.csv.tmp", f"{res}/orderings_summary.csv")


if __name__ == "__main__":
    main()
