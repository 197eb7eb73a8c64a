#!/usr/bin/python3
"""Markdown for SpecHub Table 4 (App. D): published numbers next to ours.

  table4.py table4.csv      (columns construction,pairs,T,lambda,scheme,method,alpha,stderr)
"""
import csv
import sys

# Transcribed from the seed text (App. C.2, Table 4): RRS, RRSw, OTM, OTMw, SpecHub.
PUBLISHED = {
    ("0.1", "0.7"): (0.6273, 0.7120, 0.6380, 0.7345, 0.7402),
    ("0.1", "0.5"): (0.3323, 0.4057, 0.3346, 0.4125, 0.4123),
    ("0.25", "0.7"): (0.7354, 0.7653, 0.7846, 0.8321, 0.8113),
    ("0.25", "0.5"): (0.4564, 0.4978, 0.4743, 0.5245, 0.4968),
    ("0.5", "0.7"): (0.8090, 0.8122, 0.9037, 0.9150, 0.8500),
    ("0.5", "0.5"): (0.6456, 0.6593, 0.7052, 0.7206, 0.6403),
}
# column -> (scheme, method) rows of `mdsd table`
COLUMNS = (("RRS", "iid", "rrs"), ("RRSw", "wor", "rrsw"), ("OTM", "iid", "bound"),
           ("OTMw", "wor", "bound"), ("SpecHub", "hub", "spechub"))


def main():
    rows = {}
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            key = (r["construction"], r["pairs"], r["T"], r["lambda"], r["scheme"], r["method"])
            rows[key] = (float(r["alpha"]), float(r["stderr"]))
    head = "| T | λ | " + " | ".join(c[0] for c in COLUMNS) + " |"
    rule = "|---|---|" + "---:|" * len(COLUMNS)

    def table(title, cell):
        print(f"**{title}**\n\n{head}\n{rule}")
        for (T, L), pub in PUBLISHED.items():
            print(f"| {T} | {L} | " + " | ".join(cell(T, L, i, c) for i, c in enumerate(COLUMNS)) + " |")
        print()

    table("Published (SpecHub Table 4)", lambda T, L, i, c: f"{PUBLISHED[T, L][i]:.4f}")
    for cons, pairs, what in (("uniform", "100", "App. D as stated: u ~ U(0,1), 100 pairs"),
                              ("normal", "100", "u ~ N(0,1), 100 pairs"),
                              ("normal", "1000", "u ~ N(0,1), 1000 pairs")):
        table(f"Ours, {what} (mean ± s.e. over pairs)",
              lambda T, L, i, c: "%.4f ± %.4f" % rows[cons, pairs, T, L, c[1], c[2]])
    table("Ours (N(0,1), 1000 pairs) minus published, in units of the published value's "
          "s.e. (100 pairs, estimated as √10 × our 1000-pair s.e.)",
          lambda T, L, i, c: "%+.1f" % ((rows["normal", "1000", T, L, c[1], c[2]][0] - PUBLISHED[T, L][i])
                                        / (10 ** 0.5 * rows["normal", "1000", T, L, c[1], c[2]][1])))
    # Which method wins, per row (the paper bolds the best three)
    print("**Ranking per row** (best first; published vs ours with N(0,1) logits, 1000 pairs; "
          "App. D as stated)\n")
    print("| T | λ | published | ours, N(0,1) | ours, U(0,1) as stated |\n|---|---|---|---|---|")
    for (T, L), pub in PUBLISHED.items():
        def rank(vals):
            return " > ".join(n for _, n in sorted(zip(vals, (c[0] for c in COLUMNS)), reverse=True))
        ours_n = [rows["normal", "1000", T, L, c[1], c[2]][0] for c in COLUMNS]
        ours_u = [rows["uniform", "100", T, L, c[1], c[2]][0] for c in COLUMNS]
        print(f"| {T} | {L} | {rank(pub)} | {rank(ours_n)} | {rank(ours_u)} |")
    print()


if __name__ == "__main__":
    main()
