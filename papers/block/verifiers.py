#!/usr/bin/env python3
"""Block verifiers against the optima (issue 24, papers/block/README.md "Block verification").

    verifiers.py toys MDSD OUT_DIR
        every verifier's exact E[tau] on the Markov toys (papers/block/toys/*.txt; sun.txt is
        Sun et al.'s binary example) beside optimal-token (the best token-level verifier) and
        optimal-block (the best lossless verifier that sees the whole draft: an LP), from
        `mdsd block --markov ... --exact --json`: OUT_DIR/verifiers_toys.csv and .md.
    verifiers.py scan MDSD OUT_DIR
        100 random Markov toys (fixed seed): gbv against bv, kseq and optimal-token at seq
        K = 2, 3, L = 3, exact: OUT_DIR/gbv_scan.csv.
    verifiers.py kjv MDSD PART OUT_DIR
        PART is `mdsd block DUMP --shard 1/1 -o PART` over the KJV tree dump: its sample lines
        carry each case's mean and count of E[tau | tree] per sample, so differences between
        verifiers are paired by tree and their standard errors clustered by sample (as the
        dump's own standard errors). `mdsd merge` renders PART's CSV (OUT_DIR/kjv_seq.csv);
        every case's mean and s.e. recomputed here from the sample lines must equal the CSV's
        (1e-9), which checks the reading of the sample lines. Writes OUT_DIR/kjv_paired.csv
        and OUT_DIR/kjv_verifiers.md.
    verifiers.py pair MDSD NAME LABEL OUT_DIR PART...
        the same over another tree dump evaluated in shards (`mdsd block DUMP --shard I/N -o
        PART`, whole samples each), or one job per part of a split dump (`mdsd block
        DIR/part-k.h5 --shard 1/1`; papers/pairs/block.sh): OUT_DIR/NAME_seq.csv,
        NAME_paired.csv and NAME_verifiers.md, LABEL naming the pair in the Markdown, and the
        comparison of more drafts with one ("rrs vs sd") besides.

Vocabulary: E[tau] is vLLM's mean acceptance length (1 + accepted tokens / drafts), the
tokens one target call yields. Differences: A - B, z = difference / s.e., two-sided normal
p: * p < 0.05, ** p < 0.01, *** p < 0.001 (as mdsd report --paired)."""
import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- toys -----------------------------------------------------------------------------------

# (label, policy arguments, verifiers). The optima are columns. Toy sizes within the
# optimal-block LP's cost guard (`mdsd block --help`): seq K <= 3, L <= 3, V <= 5 where it
# solves, trees 2,2.
SEQ1 = "sd,otm,otm-tiebreak,bv,gbv,traversal"
SEQK = "rrs,kseq,is,otm,otm-tiebreak,gbv,traversal"
POLICIES = {
    "seq-K1-L2": ("--sequences 1 --depth 2", SEQ1),
    "seq-K1-L3": ("--sequences 1 --depth 3", SEQ1),
    "seq-K2-L1": ("--sequences 2 --depth 1", SEQK),
    "seq-K2-L3": ("--sequences 2 --depth 3", SEQK),
    "seq-K3-L3": ("--sequences 3 --depth 3", SEQK),
    "tree-22-iid": ("--tree 2,2", "rrs,kseq,otm,otm-tiebreak,traversal"),
    "tree-22-wor": ("--tree 2,2 --scheme wor", "rrsw,otm,otm-tiebreak,traversal"),
    "tree-22-hub": ("--tree 2,2 --scheme hub", "spechub,otm,otm-tiebreak"),
    "tree-22-greedy": ("--tree 2,2 --scheme greedy", "greedy,otm,otm-tiebreak"),
}
TREES = ["tree-22-iid", "tree-22-wor", "tree-22-hub", "tree-22-greedy"]
TOYS = {
    "sun": ["seq-K1-L2", "seq-K1-L3", "seq-K2-L1", "seq-K2-L3", "seq-K3-L3"],
    "toy3": ["seq-K1-L3", "seq-K2-L1", "seq-K2-L3", "seq-K3-L3"] + TREES,
    "toy4": ["seq-K1-L3", "seq-K2-L1", "seq-K2-L3"] + TREES,
    "toy5": ["seq-K1-L3", "seq-K2-L1", "seq-K2-L3"] + TREES,
}


def block_json(mdsd, toy, args, verifier):
    cmd = [mdsd, "block", "--markov", os.path.join(HERE, "toys", toy + ".txt"), *args.split(),
           "-v", verifier, "--exact", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"verifiers.py: {' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def toys(mdsd, out_dir):
    rows = []
    for toy, policies in TOYS.items():
        for label in policies:
            args, verifiers = POLICIES[label]
            opt_tok = block_json(mdsd, toy, args, "optimal-token")["block_efficiency"]
            opt_blk = block_json(mdsd, toy, args, "optimal-block")["block_efficiency"]
            for v in verifiers.split(",") + ["optimal-token", "optimal-block"]:
                tau = {"optimal-token": opt_tok, "optimal-block": opt_blk}.get(v)
                if tau is None:
                    j = block_json(mdsd, toy, args, v)
                    tau = j["block_efficiency"]
                    V = j["V"]
                rows.append({"toy": toy, "V": V, "policy": label, "verifier": v,
                             "block_efficiency": tau, "optimal_token": opt_tok,
                             "optimal_block": opt_blk, "gap_token": opt_tok - tau,
                             "gap_block": opt_blk - tau})
            print(f"toys: {toy} {label}", file=sys.stderr)
    cols = list(rows[0])
    with open(os.path.join(out_dir, "verifiers_toys.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{x:.17g}" if isinstance(x, float) else x) for k, x in r.items()})

    def g(x):  # a gap: 0 up to rounding (1e-9, the LP tolerance 1e-7 aside) shown as 0
        return "0" if abs(x) < 1e-9 else f"{x:+.6f}"
    with open(os.path.join(out_dir, "verifiers_toys.md"), "w") as f:
        f.write("Exact E[tau] (mean acceptance length: tokens per target call) of every verifier on the "
                "Markov toys, and its gap to optimal-token (the best token-level verifier) and to "
                "optimal-block (the best lossless verifier that sees the whole draft). Gap = "
                "optimum - E[tau]; negative: above that optimum. Exact (enumeration of every draft "
                "outcome; LPs to 1e-7): no standard errors.\n\n")
        f.write("| toy | policy | verifier | E[tau] | gap to optimal-token | gap to optimal-block |\n")
        f.write("|---|---|---|---:|---:|---:|\n")
        for r in rows:
            f.write(f"| {r['toy']} | {r['policy']} | {r['verifier']} | {r['block_efficiency']:.6f} | "
                    f"{g(r['gap_token'])} | {g(r['gap_block'])} |\n")


def write_toy(path, V, P, Q):
    """A Markov toy file (mdsd block --markov): V, the target's rows, a blank line, the
    draft's rows, each row renormalised."""
    with open(path, "w") as f:
        f.write(f"{V}\n")
        for M in (P, Q):
            for r in M:
                f.write(" ".join(repr(float(x)) for x in r / r.sum()) + "\n")
            f.write("\n" if M is P else "")


def scan(mdsd, out_dir, n_toys=100, seed=24):
    """Random Markov toys (rows Dirichlet(a), a = 1 or 0.3, V = 3 or 4, from a fixed seed):
    exact E[tau] of bv (seq K = 1, L = 3), and of gbv, kseq and optimal-token at K = 2, 3:
    OUT_DIR/gbv_scan.csv, the gain of gbv over bv per toy."""
    import numpy as np
    import tempfile
    rng = np.random.default_rng(seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n_toys):
            V, a = int(rng.choice([3, 4])), float(rng.choice([1.0, 0.3]))
            P, Q = rng.dirichlet([a] * V, V), rng.dirichlet([a] * V, V)
            path = os.path.join(tmp, f"scan{i}.txt")
            write_toy(path, V, P, Q)
            def tau(args, v):
                cmd = [mdsd, "block", "--markov", path, *args.split(), "-v", v, "--exact", "--json"]
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"verifiers.py: {' '.join(cmd)}: {out.stderr.strip()}")
                return json.loads(out.stdout)["block_efficiency"]
            bv = tau("--sequences 1 --depth 3", "bv")
            for K in (2, 3):
                args = f"--sequences {K} --depth 3"
                g, k, o = tau(args, "gbv"), tau(args, "kseq"), tau(args, "optimal-token")
                rows.append({"toy": i, "V": V, "dirichlet": a, "sequences": K, "depth": 3, "bv": bv,
                             "gbv": g, "kseq": k, "optimal_token": o, "gbv_over_bv": g / bv - 1.0})
    with open(os.path.join(out_dir, "gbv_scan.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{x:.17g}" if isinstance(x, float) else x) for k, x in r.items()})


# ---- the KJV pair ---------------------------------------------------------------------------

def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def read_part(part, cases, per=None):
    """Per case, {sample: (trees, sum of E[tau | tree])} from the shard's sample lines (added
    to per, the dicts of the shards read before: a sample in two shards is refused)."""
    per = per if per is not None else [dict() for _ in cases]
    with open(part) as f:
        lines = f.read().split("\n")
    end = lines.index("end")
    for no, line in enumerate(lines[end + 1:], end + 2):
        if not line or line.startswith("#"):
            continue
        tok = line.split()
        if tok[0] != "g":
            sys.exit(f"verifiers.py: {part}:{no}: not a sample line: {line[:40]}")
        sample, n, k0, k1 = int(tok[1]), int(tok[2]), int(tok[3]), int(tok[4])
        i = 5
        for c, case in enumerate(cases):
            mean = float.fromhex(tok[i])
            i += 2 + (k1 - k0) * (case["depth"] + 1)
            if sample in per[c]:
                sys.exit(f"verifiers.py: {part}:{no}: sample {sample} repeated")
            per[c][sample] = (n, n * mean)
        if i != len(tok):
            sys.exit(f"verifiers.py: {part}:{no}: {len(tok)} fields, the cases need {i}")
    return per


def clustered(a, b=None, ratio=False):
    """Mean of a (or a - b, or sum a / sum b - 1 when ratio) over trees, with its CR1 standard
    error clustered by sample (mdsd_cluster_stderr's formula)."""
    samples = sorted(a)
    if b is not None and sorted(b) != samples:
        sys.exit("verifiers.py: the two cases cover different samples")
    N = sum(a[s][0] for s in samples)
    C = len(samples)
    SA = math.fsum(a[s][1] for s in samples)
    if b is None:
        m = SA / N
        ss = math.fsum((a[s][1] - m * a[s][0]) ** 2 for s in samples)
        return m, math.sqrt(C / (C - 1) * ss) / N
    SB = math.fsum(b[s][1] for s in samples)
    if ratio:
        R = SA / SB
        ss = math.fsum((a[s][1] - R * b[s][1]) ** 2 for s in samples)
        return R - 1.0, math.sqrt(C / (C - 1) * ss) / SB
    d = (SA - SB) / N
    ss = math.fsum((a[s][1] - b[s][1] - d * a[s][0]) ** 2 for s in samples)
    return d, math.sqrt(C / (C - 1) * ss) / N


def stars(z):
    p = math.erfc(abs(z) / math.sqrt(2.0))
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "n.s."


def read_job(mdsd, parts, table):
    """`mdsd merge -o TABLE PARTS` (the shards of one job) and {case key: {sample: (trees, sum
    of E[tau | tree])}} from the sample lines, whose every case's mean and s.e. must equal
    the CSV's (1e-9)."""
    out = subprocess.run([mdsd, "merge", "-o", table, *parts], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"verifiers.py: mdsd merge: {out.stderr.strip()}")
    rows = read_csv(table)
    cases, seen = [], set()
    for r in rows:
        key = (r["verifier"], int(r["sequences"]), int(r["depth"]))
        if key not in seen:
            seen.add(key)
            cases.append({"key": key, "depth": key[2], "row": r})
    per = None
    for part in parts:
        per = read_part(part, cases, per)
    val = {}
    for c, case in enumerate(cases):
        m, se = clustered(per[c])
        r = case["row"]
        if abs(m - float(r["block_efficiency"])) > 1e-9 or abs(se - float(r["stderr"])) > 1e-9:
            sys.exit(f"verifiers.py: {case['key']}: sample lines give {m!r} ({se!r}), the CSV "
                     f"{r['block_efficiency']} ({r['stderr']})")
        val[case["key"]] = per[c]
    return val


def read_jobs(mdsd, parts, table):
    """PARTS: the shards of one job (TABLE: its CSV from mdsd merge), or of several jobs with
    the same options over different dumps (one per part of a split dump: their samples are
    distinct), told apart by their job lines; then each job is checked as read_job does, its
    samples keyed (job, sample), and TABLE holds the cases' mean and s.e. over all (the
    dump column lists the jobs' dumps)."""
    jobs = {}
    for part in parts:
        with open(part) as f:
            head = [f.readline() for _ in range(3)]
        if not head[2].startswith("job "):
            sys.exit(f"verifiers.py: {part}:3: not a job line")
        jobs.setdefault(head[2], []).append(part)
    if len(jobs) == 1:
        return read_job(mdsd, parts, table)
    import tempfile
    val, dumps = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for j, (line, group) in enumerate(jobs.items()):
            if line.split("[")[0] != next(iter(jobs)).split("[")[0]:
                sys.exit(f"verifiers.py: {group[0]}: other options than {parts[0]}")
            one = read_job(mdsd, group, os.path.join(tmp, "job.csv"))
            if j and set(one) != set(val):
                sys.exit(f"verifiers.py: {group[0]}: other cases than {parts[0]}")
            for key, per in one.items():
                val.setdefault(key, {}).update({(j, sample): x for sample, x in per.items()})
            dumps.append(read_csv(os.path.join(tmp, "job.csv"))[0]["dump"])
    rows = []
    for key, per in val.items():
        m, se = clustered(per)
        rows.append({"dump": ";".join(dumps), "verifier": key[0], "policy": "seq",
                     "sequences": key[1], "depth": key[2], "trees": sum(n for n, _ in per.values()),
                     "samples": len(per), "block_efficiency": f"{m:.17g}", "stderr": f"{se:.17g}",
                     "cost": 0})
    with open(table + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(table + ".tmp", table)
    return val


# the tables' order of the verifiers (those the job evaluated)
ORDER = ["sd", "bv", "rrs", "kseq", "is", "ot", "gbv", "traversal"]


def kjv(mdsd, parts, out_dir, name="kjv", label="KJV pair", more=False):
    """PARTS: the shards of one `mdsd block DUMP` job or of one job per part of a split dump
    (read_jobs); NAME: the output files' prefix; LABEL: the pair in the Markdown; more: also
    rrs with K' drafts against sd with one."""
    val = read_jobs(mdsd, parts, os.path.join(out_dir, name + "_seq.csv"))
    Ks = sorted({k[1] for k in val})
    Ls = sorted({k[2] for k in val})

    pairs = []  # (claim, A, B, ratio)
    for L in Ls:
        pairs.append(("bv vs token-level (Sun et al.)", ("bv", 1, L), ("sd", 1, L), False))
        pairs.append(("bv vs token-level (Sun et al.), relative", ("bv", 1, L), ("sd", 1, L), True))
        for K in Ks[1:]:
            pairs.append(("gbv over bv (Thomas & Pal: +30 %)", ("gbv", K, L), ("bv", 1, L), True))
            pairs.append(("gbv vs K", ("gbv", K, L), ("gbv", K - 1, L) if K - 1 > 1 else ("bv", 1, L), False))
            pairs.append(("gbv vs kseq", ("gbv", K, L), ("kseq", K, L), False))
            pairs.append(("traversal vs rrs (Weng et al.)", ("traversal", K, L), ("rrs", K, L), False))
            pairs.append(("traversal vs kseq", ("traversal", K, L), ("kseq", K, L), False))
            pairs.append(("traversal vs gbv", ("traversal", K, L), ("gbv", K, L), False))
            # the best token-level verifier measured (kseq) stands in for optimal-token,
            # which cannot be computed at V = 2,048
            pairs.append(("rrs vs kseq", ("rrs", K, L), ("kseq", K, L), False))
            pairs.append(("is vs kseq", ("is", K, L), ("kseq", K, L), False))
            # ot: alpha* at every node (the L = 8 dumps, issue 41)
            pairs.append(("gbv vs ot", ("gbv", K, L), ("ot", K, L), False))
            pairs.append(("ot vs kseq", ("ot", K, L), ("kseq", K, L), False))
            if more:
                pairs.append(("rrs vs sd (K' drafts vs one)", ("rrs", K, L), ("sd", 1, L), False))
    outrows = []
    for claim, a, b, ratio in pairs:
        if a not in val or b not in val:
            continue
        d, se = clustered(val[a], val[b], ratio)
        z = 0.0 if abs(d) < 1e-12 else d / se if se > 0 else math.inf
        outrows.append({"comparison": claim, "a": f"{a[0]} K={a[1]} L={a[2]}",
                        "b": f"{b[0]} K={b[1]} L={b[2]}", "L": a[2], "K": a[1],
                        "measure": "relative" if ratio else "difference",
                        "value": d, "stderr": se, "z": z, "significance": stars(z),
                        "trees": sum(n for n, _ in val[a].values()), "samples": len(val[a])})
    with open(os.path.join(out_dir, name + "_paired.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, list(outrows[0]), lineterminator="\n")
        w.writeheader()
        for r in outrows:
            w.writerow({k: (f"{x:.10g}" if isinstance(x, float) else x) for k, x in r.items()})

    verifiers = [v for v in ORDER if any(k[0] == v for k in val)]
    with open(os.path.join(out_dir, name + "_verifiers.md"), "w") as f:
        f.write(f"{label}, {len(next(iter(val.values())))} samples, "
                f"{sum(n for n, _ in next(iter(val.values())).values())} trees (seq, K <= "
                f"{max(Ks)}, L <= {max(Ls)}): E[tau] (s.e. clustered by sample) of every verifier "
                "at K' sequences and depth L'. At K' = 1 the token-level verifiers are sd"
                + ("; is is the LP truncated to the top 32 tokens" if "is" in verifiers else "")
                + (("; ot is the optimal token-level transport at every node (alpha* of "
                    "the node's drafts)") if "ot" in verifiers else "") + ".\n\n")
        f.write("| verifier | K' | " + " | ".join(f"L' = {L}" for L in Ls) + " |\n")
        f.write("|---|---:|" + "---:|" * len(Ls) + "\n")
        for v in verifiers:
            for K in Ks:
                if (v, K, Ls[0]) not in val or (v not in ("sd", "bv") and K == 1):
                    continue
                cells = []
                for L in Ls:
                    m, se = clustered(val[(v, K, L)])
                    cells.append(f"{m:.4f} ({se:.4f})")
                f.write(f"| {v} | {K} | " + " | ".join(cells) + " |\n")
        f.write("\nPaired by tree (the same trees for every verifier): A - B, or A / B - 1 "
                "(relative), s.e. clustered by sample; z = value / s.e.; * p < 0.05, ** p < 0.01, "
                "*** p < 0.001, n.s. otherwise (two-sided).\n\n")
        f.write("| comparison | A | B | value | s.e. | z | |\n|---|---|---|---:|---:|---:|---|\n")
        for r in outrows:
            v = (f"{100 * r['value']:+.2f} %" if r["measure"] == "relative"
                 else f"{r['value']:+.4f}")
            s = (f"{100 * r['stderr']:.2f} %" if r["measure"] == "relative"
                 else f"{r['stderr']:.4f}")
            f.write(f"| {r['comparison']} | {r['a']} | {r['b']} | {v} | {s} | {r['z']:.1f} | "
                    f"{r['significance']} |\n")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "toys":
        toys(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "scan":
        scan(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "kjv":
        kjv(sys.argv[2], [sys.argv[3]], sys.argv[4])
    elif len(sys.argv) >= 7 and sys.argv[1] == "pair":
        kjv(sys.argv[2], sys.argv[6:], sys.argv[5], sys.argv[3], sys.argv[4], more=True)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
