"""Truncated top-k rows (data/README.md, "Truncated rows"): a dump that records them is
described by `mdsd info` and refused by every job, so that no job renormalises the missing
mass away (issue: top-20 rows of the KJV pair printed alpha* = 0.675 for 0.871, exit 0).
Malformed truncation records are refused naming the file, dataset, row and value."""

import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

from support import ROOT, mdsd_bin

SHIPPED = os.path.join(ROOT, "data", "kjv-ngram.h5")
ROWS, K = 64, 20


def logsumexp(a, axis=-1):
    m = np.max(a, axis=axis, keepdims=True)
    return (m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)))[..., 0]


def top_k_logprobs(logits, k):
    """Rows of log-probabilities of the full softmax, -inf outside each row's top k."""
    lp = logits.astype(np.float64)
    lp = lp - logsumexp(lp)[:, None]
    out = np.full(lp.shape, -np.inf)
    idx = np.argsort(-lp, axis=1, kind="stable")[:, :k]
    np.put_along_axis(out, idx, np.take_along_axis(lp, idx, axis=1), axis=1)
    missing = -np.expm1(logsumexp(np.where(np.isfinite(out), out, -np.inf)))
    return out.astype(np.float32), np.maximum(missing, 0.0)


def write(path, truncate=True, dtype=np.float32, edit=None):
    """The first ROWS rows of the shipped dump, float32, as top-K rows (or complete)."""
    with h5py.File(SHIPPED, "r") as src, h5py.File(path, "w") as f:
        for key, value in src.attrs.items():
            f.attrs[key] = value
        for name in ("tokens", "sample_id", "position"):
            f[name] = src[name][:ROWS]
        groups = ["target"] + [f"drafts/{d}" for d in src["drafts"]]
        for g in groups:
            logits = src[g + "/logits"][:ROWS].astype(np.float32)
            if truncate:
                values, missing = top_k_logprobs(logits, K)
                f[g + "/truncated"] = np.ones(ROWS, np.uint8)
                f[g + "/missing_mass"] = missing
            else:
                values = logits
            f.create_dataset(g + "/logits", data=values.astype(dtype))
            for key, value in src[g].attrs.items():
                f[g].attrs[key] = value
        if edit:
            edit(f)


def mdsd(*args):
    proc = subprocess.run([mdsd_bin(), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


@unittest.skipUnless(mdsd_bin(), "needs MDSD_BIN")
class TruncatedRows(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "top20.h5")

    def tearDown(self):
        self.dir.cleanup()

    def test_info_describes_truncated_rows(self):
        write(self.path)
        rc, out, err = mdsd("info", self.path)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"{ROWS} truncated top-k rows", out)
        rc, out, err = mdsd("info", self.path, "--json")
        self.assertEqual(rc, 0, err)
        import json
        info = json.loads(out)
        self.assertEqual(info["target"]["truncated_rows"], ROWS)
        self.assertGreater(info["target"]["max_missing_mass"], 0.05)
        for d in info["drafts"]:
            self.assertEqual(d["truncated_rows"], ROWS)

    def test_table_refuses_what_it_cannot_bound(self):
        """Verifiers, other schemes, other temperatures, decoding truncation and the
        per-position file have no certified interval: refused, nothing written."""
        write(self.path)
        out_csv = os.path.join(self.dir.name, "t.csv")
        base = ["table", self.path, "-d", "2", "-o", out_csv]
        cases = [(["-t", "1"], "a verifier's acceptance"),  # the default verifiers
                 (["-t", "1", "-v", "none", "-s", "iid,wor"], "wor scheme"),
                 (["-t", "0.7", "-v", "none", "-s", "iid"], "T = 0.7"),
                 (["-t", "1", "-v", "none", "-s", "iid", "--top-k", "5"], "--top-k"),
                 (["-t", "1", "-v", "none", "-s", "iid", "--per-position",
                   os.path.join(self.dir.name, "pp.csv")], "--per-position")]
        for extra, message in cases:
            with self.subTest(message=message):
                rc, out, err = mdsd(*base, *extra)
                self.assertEqual(rc, 1, out + err)
                self.assertIn("truncated top-k rows", err)
                self.assertIn(message, err)
                self.assertEqual(os.listdir(self.dir.name), ["top20.h5"])  # nothing half-written

    def table(self, path, *extra):
        csv = path + ".csv"
        rc, out, err = mdsd("table", path, "-t", "1", "-s", "iid", "-v", "none", "-d", "1,2,4",
                            "--draft-model", "kn2", "-o", csv, *extra)
        self.assertEqual(rc, 0, err)
        with open(csv) as f:
            header = f.readline().strip().split(",")
            return [dict(zip(header, line.strip().split(","))) for line in f]

    def test_intervals_contain_the_true_alpha_at_every_row(self):
        """On top-k rows of the KJV pair, every row's alpha* of the full rows lies in its
        certified interval, and so does the plug-in point; the means too."""
        full = os.path.join(self.dir.name, "full.h5")
        write(full, truncate=False)
        global K
        for k in (3, 20):
            K = k
            write(self.path)
            for row in range(0, ROWS, 4):
                span = f"{row}:{row + 1}"
                truth = self.table(full, "--positions", span)
                bounded = self.table(self.path, "--positions", span)
                for t, b in zip(truth, bounded):
                    lo, hi = float(b["alpha_low"]), float(b["alpha_high"])
                    true, point = float(t["alpha"]), float(b["alpha"])
                    self.assertLess(lo, hi, (k, row, b))
                    for x in (true, point):
                        self.assertTrue(lo - 1e-9 <= x <= hi + 1e-9, (k, row, t["n"], lo, x, hi))
            truth, bounded = self.table(full), self.table(self.path)
            for t, b in zip(truth, bounded):
                self.assertTrue(float(b["alpha_low"]) <= float(t["alpha"]) <= float(b["alpha_high"]))
                self.assertTrue(float(t["alpha_low"]) == float(t["alpha"]) == float(t["alpha_high"]))
        K = 20

    def test_shards_merge_to_the_same_intervals(self):
        """The interval ends travel through the shards' per-sample summaries: two shards
        merged give the one-process CSV byte for byte."""
        write(self.path)
        d = self.dir.name
        args = ["-t", "1", "-s", "iid", "-v", "none", "-d", "2,3", "--draft-model", "kn2"]
        rc, _, err = mdsd("table", self.path, *args, "-o", os.path.join(d, "one.csv"))
        self.assertEqual(rc, 0, err)
        for i in (1, 2):
            rc, _, err = mdsd("table", self.path, *args, "--shard", f"{i}/2", "-o", os.path.join(d, f"s{i}"))
            self.assertEqual(rc, 0, err)
        rc, _, err = mdsd("merge", "-o", os.path.join(d, "m.csv"), os.path.join(d, "s2"), os.path.join(d, "s1"))
        self.assertEqual(rc, 0, err)
        with open(os.path.join(d, "one.csv")) as a, open(os.path.join(d, "m.csv")) as b:
            one, merged = a.read(), b.read()
        self.assertEqual(one, merged)
        self.assertIn("alpha_low", one.splitlines()[0])

    def test_python_reader_refuses(self):
        write(self.path)
        sys.path.insert(0, os.path.join(ROOT, "src", "python"))
        import mdsd as lib
        with self.assertRaisesRegex(lib.MdsdError, "truncated top-k rows"):
            lib.DumpReader(self.path)

    def lib(self):
        sys.path.insert(0, os.path.join(ROOT, "src", "python"))
        import mdsd as lib
        return lib

    def test_python_dump_writer_asks_what_neg_inf_means(self):
        """mdsd.DumpWriter refuses -inf until told; neg_inf="unseen" writes the record the
        h5py fixture writes (the same missing masses, the same table), "zero" complete rows."""
        lib = self.lib()
        ref = os.path.join(self.dir.name, "ref.h5")
        write(ref)
        with h5py.File(ref, "r") as f:
            target = f["target/logits"][:]
            drafts = {d: f[f"drafts/{d}/logits"][:] for d in f["drafts"]}
            meta = [f[k][:] for k in ("tokens", "sample_id", "position")]
            masses = {g: f[g + "/missing_mass"][:] for g in ["target"] + [f"drafts/{d}" for d in drafts]}
        V = target.shape[1]
        asked = os.path.join(self.dir.name, "asked.h5")
        with self.assertRaisesRegex(lib.MdsdError, r"row 0 logit \d+ is -inf: say what -inf means"):
            with lib.DumpWriter(asked, V, list(drafts)) as w:
                w.write(target, list(drafts.values()), *meta)
        self.assertFalse(os.path.exists(asked))
        with self.assertRaisesRegex(lib.MdsdError, "neg_inf must be"):
            lib.DumpWriter(asked, V, list(drafts), neg_inf="unknown")
        with self.assertRaisesRegex(lib.MdsdError, "must be stored as float32"):
            lib.DumpWriter(asked, V, list(drafts), dtype="float16", neg_inf="unseen")
        with self.assertRaisesRegex(lib.MdsdError, r"row 2: the kept probabilities sum to"):
            with lib.DumpWriter(asked, V, list(drafts), neg_inf="unseen") as w:
                bad = target[:4].copy()
                bad[2, np.isfinite(bad[2])] += 0.5  # no longer log-probabilities
                w.write(bad, [d[:4] for d in drafts.values()], *[m[:4] for m in meta])
        self.assertFalse(os.path.exists(asked))
        mine = self.path
        with lib.DumpWriter(mine, V, list(drafts), neg_inf="unseen") as w:
            w.write(target, list(drafts.values()), *meta)
        with h5py.File(mine, "r") as f:
            for g, want in masses.items():
                self.assertTrue((f[g + "/truncated"][:] == 1).all())
                stored = f[g + "/logits"][:].astype(np.float64)  # the writer's own input
                kept = logsumexp(np.where(np.isfinite(stored), stored, -np.inf))
                np.testing.assert_allclose(f[g + "/missing_mass"][:], -np.expm1(kept),
                                           rtol=0, atol=1e-12)
                # the fixture's masses come from the float64 log-probabilities
                np.testing.assert_allclose(f[g + "/missing_mass"][:], want, rtol=0, atol=1e-6)
        tables = []
        for p in (ref, mine):
            csv = p + ".csv"
            rc, _, err = mdsd("table", p, "-t", "1", "-s", "iid", "-v", "none", "-d", "2",
                              "--draft-model", "kn2", "-o", csv)
            self.assertEqual(rc, 0, err)
            with open(csv) as f:
                tables.append([line.split(",")[1:] for line in f])
        for a, b in zip(tables[0][1:], tables[1][1:]):  # numbers within the masses' rounding
            for x, y in zip(a[4:6] + a[12:16], b[4:6] + b[12:16]):
                self.assertAlmostEqual(float(x), float(y), delta=1e-6)
        zero = os.path.join(self.dir.name, "zero.h5")
        with lib.DumpWriter(zero, V, list(drafts), neg_inf="zero") as w:
            w.write(target, list(drafts.values()), *meta)
        rc, out, err = mdsd("info", zero)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("truncated", out)

    def test_complete_record_reads_as_before(self):
        """A record that marks no row truncated changes nothing: the table's numbers are
        those of the same dump without it."""
        plain = os.path.join(self.dir.name, "plain.h5")
        write(plain, truncate=False)

        def all_complete(f):
            for g in ["target"] + [f"drafts/{d}" for d in f["drafts"]]:
                f[g + "/truncated"] = np.zeros(ROWS, np.uint8)
                f[g + "/missing_mass"] = np.zeros(ROWS)
        write(self.path, truncate=False, edit=all_complete)
        results = []
        for p in (plain, self.path):
            csv = p + ".csv"
            rc, out, err = mdsd("table", p, "-d", "2", "-t", "1", "-v", "rrs", "-o", csv)
            self.assertEqual(rc, 0, err)
            with open(csv) as f:
                results.append([line.split(",")[1:] for line in f])
        self.assertEqual(results[0], results[1])

    def test_malformed_records_are_refused_naming_dataset_and_row(self):
        def drop_mass(f):
            del f["target/missing_mass"]

        def bad_flag(f):
            f["target/truncated"][5] = 2

        def bad_mass(f):
            f["drafts/kn2/missing_mass"][7] = 1.5

        def nan_mass(f):
            f["target/missing_mass"][3] = np.nan

        def complete_with_mass(f):
            f["target/truncated"][9] = 0

        def short(f):
            del f["target/truncated"]
            f["target/truncated"] = np.ones(ROWS - 1, np.uint8)

        def float_flags(f):
            del f["target/truncated"]
            f["target/truncated"] = np.ones(ROWS, np.float32)

        cases = [(drop_mass, "/target/truncated without /target/missing_mass"),
                 (bad_flag, "/target/truncated, row 5: 2 is not 0"),
                 (bad_mass, "/drafts/kn2/missing_mass, row 7: 1.5 is not a probability"),
                 (nan_mass, "/target/missing_mass, row 3: nan"),
                 (complete_with_mass, "/target/missing_mass, row 9: missing mass"),
                 (short, "length mismatch: /target/truncated has 63 rows, /target/logits has 64"),
                 (float_flags, "/target/truncated has dtype float")]
        for edit, message in cases:
            with self.subTest(message=message):
                write(self.path, edit=edit)
                rc, out, err = mdsd("info", self.path)
                self.assertEqual(rc, 1, out + err)
                self.assertIn(self.path, err)
                self.assertIn(message, err)

    def test_truncated_rows_must_be_float32(self):
        write(self.path, dtype=np.float16)
        rc, out, err = mdsd("info", self.path)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("must be stored as float32", err)


if __name__ == "__main__":
    unittest.main()
