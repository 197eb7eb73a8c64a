#!/usr/bin/env python3
"""How wide the certified interval of alpha* (MATH.md §2.9) is on top-k rows of the KJV
pair, against k: each model's rows of data/kjv-ngram.h5 cut to their top k
log-probabilities at T = 1 (the rest unseen, the missing mass recorded), read by
`mdsd table -t 1 -s iid -v none`, beside the same table on the full rows.

    /usr/bin/python3 papers/truncation/widths.py [--mdsd PATH] [--ks 5,20,...]

Writes papers/truncation/results/widths.csv: drafter,k,n,alpha_full,alpha_point,
alpha_low,alpha_low_stderr,alpha_high,alpha_high_stderr,width,contains (1 when the full
rows' alpha* lies in [alpha_low, alpha_high]). Each row is over all 723 positions."""

import argparse
import csv
import os
import subprocess
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "data", "kjv-ngram.h5")
DRAFTERS = ("kn2", "kn3")
N = 2


def logsumexp(a):
    m = np.max(a, axis=1, keepdims=True)
    return (m + np.log(np.sum(np.exp(a - m), axis=1, keepdims=True)))[:, 0]


def top_k(logits, k):
    """log-probabilities of the full rows at T = 1, -inf outside each row's top k, and the
    missing mass -expm1(logsumexp(kept)) (never 1 - kept)."""
    lp = logits.astype(np.float64)
    lp -= logsumexp(lp)[:, None]
    idx = np.argsort(-lp, axis=1, kind="stable")[:, :k]
    out = np.full(lp.shape, -np.inf)
    np.put_along_axis(out, idx, np.take_along_axis(lp, idx, axis=1), axis=1)
    return out.astype(np.float32), np.maximum(-np.expm1(logsumexp(out)), 0.0)


def write(path, k):
    with h5py.File(SOURCE, "r") as src, h5py.File(path, "w") as f:
        for key, value in src.attrs.items():
            f.attrs[key] = value
        for name in ("tokens", "sample_id", "position"):
            f[name] = src[name][:]
        for g in ["target"] + [f"drafts/{d}" for d in src["drafts"]]:
            logits = src[g + "/logits"][:].astype(np.float32)
            if k:
                logits, missing = top_k(logits, k)
                f[g + "/truncated"] = np.ones(len(logits), np.uint8)
                f[g + "/missing_mass"] = missing
            f.create_dataset(g + "/logits", data=logits)
            for key, value in src[g].attrs.items():
                f[g].attrs[key] = value


def table(mdsd, path, out):
    subprocess.run([mdsd, "table", path, "-t", "1", "-s", "iid", "-v", "none", "-d", str(N),
                    "--draft-model", ",".join(DRAFTERS), "-o", out], check=True,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        return {r["dump"].split(":")[1]: r for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mdsd", default=os.path.join(ROOT, "build", "release", "mdsd"))
    ap.add_argument("--ks", default="5,10,20,50,100,200,500,1000")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full.h5")
        write(full, 0)
        truth = table(a.mdsd, full, os.path.join(tmp, "full.csv"))
        for k in map(int, a.ks.split(",")):
            path = os.path.join(tmp, f"top{k}.h5")
            write(path, k)
            got = table(a.mdsd, path, os.path.join(tmp, f"top{k}.csv"))
            for d in DRAFTERS:
                t, g = truth[d], got[d]
                lo, hi, true = float(g["alpha_low"]), float(g["alpha_high"]), float(t["alpha"])
                rows.append({"drafter": d, "k": k, "n": N, "alpha_full": t["alpha"],
                             "alpha_point": g["alpha"], "alpha_low": g["alpha_low"],
                             "alpha_low_stderr": g["alpha_low_stderr"],
                             "alpha_high": g["alpha_high"],
                             "alpha_high_stderr": g["alpha_high_stderr"],
                             "width": f"{hi - lo:.10g}", "contains": int(lo <= true <= hi)})
            print(f"k = {k}: done", flush=True)
    out = os.path.join(HERE, "results", "widths.csv")
    with open(out + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
