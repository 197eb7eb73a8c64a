#!/usr/bin/python3
"""Every published Table 1 cell (Hu et al.) where a verifier's acceptance is compared with
its scheme's alpha*, from the transcription published_table1.csv: RRS, K-SEQ and
alpha_K-SEQ against alpha* with replacement, RRS against alpha* without replacement, greedy
Verify against alpha*_greedy; four model pairs, three tasks.

For each cell: the difference verifier - alpha* (in points of %), the published gap column
next to it, and z = difference / sqrt(se_verifier^2 + se_bound^2), which treats the two
published standard errors as those of independent estimates (the table gives no paired
s.e.; both are measured on the same positions, and a positive correlation between them makes
the s.e. of the difference smaller and z larger). above = 1 where the verifier exceeds its
optimum, which no valid verifier can do in expectation.

    /usr/bin/python3 papers/hu/above_bound.py published_table1.csv > above_bound.csv
"""
import csv
import math
import sys

VERIFIERS = (("iid", "rrs"), ("iid", "kseq"), ("iid", "kseq-theory"), ("wor", "rrsw"),
             ("greedy", "greedy"))
PAIRS = ("OPT-125M/OPT-6.7B", "LLaMA-68M/LLaMA-7B", "Eagle-0.24B/Vicuna-7B", "Eagle-0.26B/Qwen2-7B")
TASKS = ("alpaca", "cnn", "wmt")


def main():
    with open(sys.argv[1]) as f:
        pub = {(r["pair"], r["scheme"], r["method"]): r
               for r in csv.DictReader(line for line in f if not line.startswith("#"))}
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["pair", "task", "scheme", "method", "alpha", "alpha_se", "bound", "bound_se",
                "difference", "published_gap", "z_independent", "above"])
    for pair in PAIRS:
        for task in TASKS:
            for scheme, method in VERIFIERS:
                v, b = pub[pair, scheme, method], pub[pair, scheme, "bound"]
                a, sa = float(v[task]), float(v[task + "_se"])
                o, so = float(b[task]), float(b[task + "_se"])
                d = round(a - o, 1)  # both are given to 0.1 points
                z = d / math.hypot(sa, so)
                w.writerow([pair, task, scheme, method, v[task], v[task + "_se"], b[task],
                            b[task + "_se"], f"{d:.1f}", v[task + "_gap"], f"{z:.3f}",
                            int(d > 0)])


if __name__ == "__main__":
    main()
