#!/usr/bin/python3
"""Independent check of the Table 4 numbers: recompute, per pair of an App. D dump, RRS
(exact), alpha*_iid and alpha*_wor for n = 2 (sort-and-scan with the closed-form Q(H)),
and SpecHub (closed form) in numpy, average them, and compare with `mdsd table`'s CSV.

  crosscheck.py DUMP.h5 TABLE.csv      prints the largest absolute difference
"""
import csv
import sys

import h5py
import numpy as np


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def rrs2(p, q):
    b1 = np.minimum(p, q).sum()
    r = np.maximum(p - q, 0)
    if r.sum() <= 0:
        return b1
    return b1 + (1 - b1) * np.minimum(r / r.sum(), q).sum()


def scan(p, q, Q):
    key = np.where(p > 0, q / np.where(p > 0, p, 1), np.inf)
    order = np.argsort(-key, kind="stable")
    return 1 + min(0.0, min(p[order[:i]].sum() - Q(q, order[:i]) for i in range(1, len(p) + 1)))


def q_iid(q, H):
    return q[H].sum() ** 2


def q_wor(q, H):
    s = q[H].sum()
    return (q[H] * (s - q[H]) / (1 - q[H])).sum()


def hub(p, q):
    a = np.argmax(q)
    rest = np.arange(len(q)) != a
    return p[a] + np.minimum(p[rest], q[rest] / (1 - q[a])).sum()


def main():
    with h5py.File(sys.argv[1], "r") as f:
        target = f["target/logits"][:].astype(np.float64)
        draft = f["drafts"][list(f["drafts"])[0]]["logits"][:].astype(np.float64)
    vals = {("iid", "rrs"): [], ("iid", "bound"): [], ("wor", "bound"): [], ("hub", "spechub"): []}
    for lp, lq in zip(target, draft):
        p, q = softmax(lp), softmax(lq)
        vals["iid", "rrs"].append(rrs2(p, q))
        vals["iid", "bound"].append(scan(p, q, q_iid))
        vals["wor", "bound"].append(scan(p, q, q_wor))
        vals["hub", "spechub"].append(hub(p, q))
    worst = 0.0
    with open(sys.argv[2]) as f:
        for r in csv.DictReader(f):
            key = (r["scheme"], r["method"])
            if key in vals and r["n"] == "2":
                worst = max(worst, abs(float(r["alpha"]) - np.mean(vals[key])))
    print(f"{sys.argv[1].rsplit('/', 1)[-1]}: largest |mdsd - numpy| over RRS, OTM, OTMw, "
          f"SpecHub means = {worst:.2e}")


if __name__ == "__main__":
    main()
