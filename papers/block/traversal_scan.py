#!/usr/bin/env python3
"""Traversal verification against token-level verification on the same drafts, on random
Markov toys (issue 41, papers/block/README.md "Traversal verification").

    traversal_scan.py MDSD OUT_DIR [N_TOYS [SEED]]

N_TOYS (default 500) random Markov toy pairs from a fixed seed (default 41): V = 2, 3 or 4,
the target's and the drafter's rows Dirichlet(a), a = 1, 0.3 or 0.1 (numpy's default_rng).
On each toy and drafting policy, the exact E[tau] (`mdsd block --markov TOY ... --exact
--json`, every draft enumerated: no standard errors) of `traversal` (Weng et al.) and of the
token-level verifier of the same drafts: `rrs` for i.i.d. drafts (seq, iid trees), `rrsw`
for wor trees. Policies: seq K = 2, 3 at L = 1, 2 (and K = 2, L = 3); iid and wor trees of
widths 2, 3, (2,1), (1,2), (3,1), (2,2), and wor (3,2), (2,2,2); a wor policy is skipped on
a toy whose V is below its widest level (no draft without replacement), and (2,2,2) at
V = 4 (above the enumeration guard).

Writes OUT_DIR/traversal_scan.csv (one row per toy and policy: traversal, token_level and
diff = traversal - token_level), OUT_DIR/traversal_summary.csv (one row per policy: toys,
below / equal / above counts, |diff| <= 1e-12 counting as equal, the smallest and largest
diff and the toy of the smallest) and, as `mdsd block --markov` files, the toys of the
smallest diff at seq K = 2, L = 1 and on iid (2,2) trees:
OUT_DIR/traversal_below_seq-K2-L1.txt, OUT_DIR/traversal_below_tree-22-iid.txt."""
WORST = ("seq-K2-L1", "tree-22-iid")
import csv
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verifiers import write_toy  # noqa: E402  (papers/block/verifiers.py)

# (label, drafts, policy arguments, widest level)
POLICIES = [
    ("seq-K2-L1", "iid", "--sequences 2 --depth 1", 1),
    ("seq-K3-L1", "iid", "--sequences 3 --depth 1", 1),
    ("seq-K2-L2", "iid", "--sequences 2 --depth 2", 1),
    ("seq-K3-L2", "iid", "--sequences 3 --depth 2", 1),
    ("seq-K2-L3", "iid", "--sequences 2 --depth 3", 1),
    ("tree-21-iid", "iid", "--tree 2,1", 1),
    ("tree-12-iid", "iid", "--tree 1,2", 1),
    ("tree-31-iid", "iid", "--tree 3,1", 1),
    ("tree-22-iid", "iid", "--tree 2,2", 1),
    ("tree-2-wor", "wor", "--tree 2 --scheme wor", 2),
    ("tree-3-wor", "wor", "--tree 3 --scheme wor", 3),
    ("tree-21-wor", "wor", "--tree 2,1 --scheme wor", 2),
    ("tree-12-wor", "wor", "--tree 1,2 --scheme wor", 2),
    ("tree-31-wor", "wor", "--tree 3,1 --scheme wor", 3),
    ("tree-22-wor", "wor", "--tree 2,2 --scheme wor", 2),
    ("tree-32-wor", "wor", "--tree 3,2 --scheme wor", 3),
    ("tree-222-wor", "wor", "--tree 2,2,2 --scheme wor", 2),  # V <= 3 (enumeration guard)
]
TOKEN_LEVEL = {"iid": "rrs", "wor": "rrsw"}
EQUAL = 1e-12


def tau(mdsd, path, args, verifier):
    cmd = [mdsd, "block", "--markov", path, *args.split(), "-v", verifier, "--exact", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"traversal_scan.py: {' '.join(cmd)}: {out.stderr.strip()}")
    return json.loads(out.stdout)["block_efficiency"]


def main():
    if len(sys.argv) not in (3, 4, 5):
        sys.exit(__doc__)
    mdsd, out_dir = sys.argv[1], sys.argv[2]
    n_toys = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 41
    rng = np.random.default_rng(seed)
    jobs, texts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n_toys):
            V, a = int(rng.choice([2, 3, 4])), float(rng.choice([1.0, 0.3, 0.1]))
            P, Q = rng.dirichlet([a] * V, V), rng.dirichlet([a] * V, V)
            path = os.path.join(tmp, f"toy{i}.txt")
            write_toy(path, V, P, Q)
            with open(path) as f:
                texts.append(f.read())
            for label, drafts, args, widest in POLICIES:
                if (drafts == "wor" and V < widest) or (label == "tree-222-wor" and V > 3):
                    continue
                jobs.append((i, V, a, label, drafts, args, path))

        def run(job):
            i, V, a, label, drafts, args, path = job
            t = tau(mdsd, path, args, "traversal")
            k = tau(mdsd, path, args, TOKEN_LEVEL[drafts])
            return {"toy": i, "V": V, "dirichlet": a, "policy": label, "drafts": drafts,
                    "token_level_verifier": TOKEN_LEVEL[drafts], "traversal": t,
                    "token_level": k, "diff": t - k}
        with ThreadPoolExecutor(max_workers=2) as pool:
            rows = list(pool.map(run, jobs))
    with open(os.path.join(out_dir, "traversal_scan.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{x:.17g}" if isinstance(x, float) else x) for k, x in r.items()})
    summary = []
    for label, drafts, _, _ in POLICIES:
        rs = [r for r in rows if r["policy"] == label]
        low = min(rs, key=lambda r: r["diff"])
        summary.append({
            "policy": label, "drafts": drafts, "token_level_verifier": TOKEN_LEVEL[drafts],
            "toys": len(rs), "below": sum(r["diff"] < -EQUAL for r in rs),
            "equal": sum(abs(r["diff"]) <= EQUAL for r in rs),
            "above": sum(r["diff"] > EQUAL for r in rs), "min_diff": low["diff"],
            "min_diff_toy": low["toy"], "min_diff_V": low["V"],
            "min_diff_traversal": low["traversal"], "min_diff_token_level": low["token_level"],
            "max_diff": max(r["diff"] for r in rs)})
        if label in WORST:
            with open(os.path.join(out_dir, f"traversal_below_{label}.txt"), "w") as f:
                f.write(texts[low["toy"]])
    with open(os.path.join(out_dir, "traversal_summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, list(summary[0]), lineterminator="\n")
        w.writeheader()
        for r in summary:
            w.writerow({k: (f"{x:.17g}" if isinstance(x, float) else x) for k, x in r.items()})


if __name__ == "__main__":
    main()
