#!/usr/bin/python3
"""Markdown for the Khisti Table 3 analogue: acceptance against the number of drafts on the
shipped dump (alpha*_iid, IS with truncated LP s = 5 and s = 50, k-Seq, RRS).

  dump_table.py [--drafters SMALL,LARGE] dump.csv     (default kn2,kn3: the shipped dump's)
"""
import csv
import sys

# Transcribed from the seed text (App. H.1, Table 3): XSum and Dolly, three values of K each
# (the K values were lost in the extraction; the text implies K = 2, 3, 4).
PUBLISHED = {"Optimal": ((0.5009, 0.5226, 0.5419), (0.6384, 0.6731, 0.6962)),
             "IS": ((0.4933, 0.5145, 0.5333), (0.6348, 0.6691, 0.6919)),
             "SpecTr": ((0.4889, 0.5083, 0.5263), (0.6246, 0.6560, 0.6800)),
             "SpecInfer": ((0.4875, 0.5058, 0.5227), (0.6202, 0.6489, 0.6722))}
OURS = {"Optimal": ("bound",), "IS": ("is-top5", "is-top50"), "SpecTr": ("kseq",),
        "SpecInfer": ("rrs",)}


def main():
    args = sys.argv[1:]
    drafters = ("kn2", "kn3")
    if args[:1] == ["--drafters"]:
        drafters = tuple(args[1].split(","))
        args = args[2:]
    if len(args) != 1 or len(drafters) != 2:
        sys.exit("usage: dump_table.py [--drafters SMALL,LARGE] dump.csv")
    rows = {}
    with open(args[0]) as f:
        for r in csv.DictReader(f):
            rows[r["dump"].rsplit(":", 1)[-1], r["n"], r["method"]] = r
    print("| scheme | XSum (pub.) K = 2, 3, 4 | Dolly (pub.) K = 2, 3, 4 | ours %s, n = 2, 3, 4 | ours %s, n = 2, 3, 4 |" % drafters)
    print("|---|---|---|---|---|")
    for name, pub in PUBLISHED.items():
        for i, m in enumerate(OURS[name]):
            label = name + ("" if len(OURS[name]) == 1 else f" ({m.replace('is-top', 's = ')})")
            cells = [" / ".join("%.4f" % v for v in pub[0]), " / ".join("%.4f" % v for v in pub[1])]
            if i:
                cells = ["", ""]
            for d in drafters:
                cells.append(" / ".join("%.4f" % float(rows[d, n, m]["alpha"]) for n in ("2", "3", "4")))
            print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("Standard errors (clustered by sample) of ours: " + ", ".join(
        f"{d} {m} n = {n}: {float(rows[d, n, m]['stderr']):.4f}"
        for d in drafters for m in ("bound",) for n in ("2", "4")) + "; the gaps between "
        "methods are paired and far more precise (`gap_stderr` in dump.csv).")
    print()


if __name__ == "__main__":
    main()
