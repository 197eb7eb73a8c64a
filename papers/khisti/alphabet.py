#!/usr/bin/python3
"""Khisti App. F analogue: the effective alphabet (tokens of nonzero probability) of the
target and of each drafter after top-p at temperature T, on every row of a dump, with the
library's softmax and truncation (mdsd.softmax, mdsd.truncate: `--top-p` of `mdsd table`).

    PYTHONPATH=src/python /usr/bin/python3 papers/khisti/alphabet.py DUMP T P > alphabet.csv
"""
import sys

import numpy as np

import mdsd


def main():
    dump, T, P = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    print("model,temperature,top_p,positions,median,mean,share_le_5,share_le_50,max")
    with mdsd.DumpReader(dump) as r:
        for name in ["target"] + list(r.draft_names):
            logits = r.logits(name, 0, r.N)
            sizes = np.array([np.count_nonzero(mdsd.truncate(mdsd.softmax(row.astype(np.float64), T),
                                                             top_p=P)) for row in logits])
            print(f"{name},{T:g},{P:g},{sizes.size},{np.median(sizes):g},{sizes.mean():.2f},"
                  f"{np.mean(sizes <= 5):.4f},{np.mean(sizes <= 50):.4f},{sizes.max()}")


if __name__ == "__main__":
    main()
