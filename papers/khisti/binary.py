#!/usr/bin/env python3
"""Khisti et al., Example 1 (binary alphabet): with K = 2 i.i.d. drafts the optimal
acceptance is 1 on a whole range of targets, with K = 1 only at p = q.

For a binary alphabet Thm 2's condition p(S) >= q(S)^2 for every S reduces to
q1^2 <= p1 <= 1 - (1 - q1)^2. The example's numbers were lost in the text extraction we
have, so we sweep three drafts q1 in {0.2, 1/3, 0.5} and targets p1 on a grid of 181 points
(plus the predicted endpoints), compute alpha* with n = 2 and n = 1 (`mdsd.alpha_star`,
the same routes as `mdsd bound`), and compare where alpha* = 1 (within 1e-12) with the
prediction. Writes binary.csv (every point) and binary.md (the summary). Run from the
repository root after `make`:

    PYTHONPATH=src/python /usr/bin/python3 papers/khisti/binary.py
"""
import csv
import os

import numpy as np

import mdsd

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rows, summary = [], []
    for q1 in (0.2, 1.0 / 3.0, 0.5):
        lo, hi = q1 * q1, 1.0 - (1.0 - q1) ** 2
        grid = sorted(set([i / 180.0 for i in range(181)] + [lo, hi, q1]))
        ones = {1: [], 2: []}
        for p1 in grid:
            p, q = np.array([p1, 1.0 - p1]), np.array([q1, 1.0 - q1])
            for n in (1, 2):
                a = mdsd.alpha_star(p, q, n=n, scheme="iid")
                rows.append((q1, n, p1, a))
                if abs(a - 1.0) <= 1e-12:
                    ones[n].append(p1)
        inside = [p1 for p1 in grid if lo - 1e-12 <= p1 <= hi + 1e-12]
        summary.append((q1, lo, hi, min(ones[2]), max(ones[2]), ones[2] == inside,
                        ones[1] == [q1], len(grid)))
    with open(os.path.join(HERE, "binary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["q1", "n", "p1", "alpha_star"])
        for q1, n, p1, a in rows:
            w.writerow([repr(q1), n, repr(p1), repr(a)])
    with open(os.path.join(HERE, "binary.md"), "w") as f:
        f.write("| q1 | predicted alpha* = 1 for n = 2 | observed (grid) | n = 2 set = prediction "
                "| n = 1: alpha* = 1 only at p1 = q1 | points |\n|---|---|---|---|---|---|\n")
        for q1, lo, hi, a, b, same, single, npts in summary:
            f.write(f"| {q1:.4f} | [{lo:.4f}, {hi:.4f}] | [{a:.4f}, {b:.4f}] | "
                    f"{'yes' if same else 'NO'} | {'yes' if single else 'NO'} | {npts} |\n")
    print(open(os.path.join(HERE, "binary.md")).read())


if __name__ == "__main__":
    main()
