"""mdsd.evaluate over numpy logits against `mdsd table` on a dump of the same rows: the
same rows (dump label aside) and every number within 1e-12. Used by test_mdsd_tables and,
after `pip install .`, by tests/test_package.c (python table_check.py MDSD_BIN WORKDIR).
Prints "table matches: R rows, C numeric columns, max difference D" and exits 0, or
raises."""

import csv
import os
import subprocess
import sys

import numpy as np

import mdsd

NUMERIC = ("temperature", "n", "alpha", "stderr", "gap", "gap_stderr", "positions", "samples",
           "exact")


def logits(seed=3, N=240, V=64, samples=12):
    """Target and two drafters' logits [N, V] (float32) and contiguous sample ids."""
    rng = np.random.default_rng(seed)
    target = rng.normal(scale=2.0, size=(N, V)).astype(np.float32)
    near = (target + rng.normal(scale=0.7, size=(N, V))).astype(np.float32)
    far = (target + rng.normal(scale=2.0, size=(N, V))).astype(np.float32)
    return target, {"near": near, "far": far}, np.repeat(np.arange(samples), N // samples)


def cli_table(mdsd_bin, dump, out, draft_models, job):
    cmd = [mdsd_bin, "table", dump, "-o", out,
           "-t", ",".join(map(str, job["temperatures"])),
           "-d", ",".join(map(str, job["draft_counts"])),
           "-s", ",".join(job["schemes"]), "-v", ",".join(job["verifiers"]),
           "--draft-model", ",".join(draft_models)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def compare(table, rows, label, dump_label):
    """Max difference over the numeric columns (NaN = NaN), after checking the rows."""
    cols = list(table.keys()) if isinstance(table, dict) else list(table.columns)
    assert cols == list(rows[0].keys()), (cols, list(rows[0].keys()))
    assert len(table["alpha"]) == len(rows), (len(table["alpha"]), len(rows))
    worst = 0.0
    for i, r in enumerate(rows):
        assert str(table["dump"][i]).replace(label, dump_label, 1) == r["dump"], (i, r["dump"])
        for c in ("scheme", "method", "significance"):
            assert str(table[c][i]) == r[c], (i, c, table[c][i], r[c])
        for c in [*NUMERIC, *(k for k in cols if k.startswith("per_draft_"))]:
            want = float(r[c]) if r[c] != "" else float("nan")
            got = float(table[c][i])
            if np.isnan(want) or np.isnan(got):
                assert np.isnan(want) and np.isnan(got), (i, c, got, want)
            else:
                worst = max(worst, abs(got - want))
    assert worst <= 1e-12, worst
    return worst


def main(mdsd_bin, work):
    target, drafts, samples = logits()
    job = dict(temperatures=(0.7, 1.0), draft_counts=(2, 3), schemes=("iid", "wor", "greedy"),
               verifiers=("rrs", "kseq", "greedy"))
    table = mdsd.evaluate(target, drafts, samples=samples, label="mine", pandas=False, **job)
    dump = os.path.join(work, "same-rows.h5")
    with mdsd.DumpWriter(dump, target.shape[1], list(drafts)) as w:
        w.write(target, list(drafts.values()), np.zeros(len(target), np.int32), samples,
                np.tile(np.arange(len(target) // 12), 12))
    rows = cli_table(mdsd_bin, dump, os.path.join(work, "cli.csv"), list(drafts), job)
    worst = compare(table, rows, "mine", "same-rows.h5")
    print(f"table matches: {len(rows)} rows, {len(NUMERIC)} numeric columns and the per-draft "
          f"rates, max difference {worst:.3g}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
