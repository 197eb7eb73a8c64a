"""mdsd.check and mdsd.check_list against `mdsd check --json` and `mdsd check --list --json`:
the same options give the same results, key for key and number for number (the CLI's
JSON has 17 significant digits); bad options are refused naming the option; progress is
reported per check and an exception raised by the callback stops the run. And the block
job's options bound with them: live= against `mdsd block --markov ... --live --json`,
shard= against `--shard I/N` (the same shard files; mdsd.merge of them = one run's CSV),
engine_metrics= against `--engine-metrics` (the same CSV); and mdsd.table's shard=,
discard_partial=, checkpoint_seconds= against `mdsd table --shard/--discard-partial/
--checkpoint-seconds`. Run by
tests/test_package.c: `PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest
test_mdsd_check`."""

import json
import math
import os
import subprocess
import tempfile
import time
import unittest

import numpy as np

import mdsd
from support import ROOT, mdsd_bin, mdsd_cli as cli

CASES = [
    # (CLI arguments, Python keywords)
    (["--count", 3, "--trials", 200, "--seed", 5,
      "--only", "hu-Q-cps,hu-Q-wor,wor-ge-iid,k2-closed-form,verifier-exact-mc"],
     dict(count=3, trials=200, seed=5,
          only=["hu-Q-cps", "hu-Q-wor", "wor-ge-iid", "k2-closed-form", "verifier-exact-mc"])),
    # a must-hold failure (no instance meets spechub-thm4's hypothesis) and skips
    (["--count", 2, "--trials", 100, "--family", "uniform", "--seed", 7],
     dict(count=2, trials=100, family="uniform", seed=7)),
    (["--count", 2, "--only", "spechub-ge-rrs,spechub-thm3-draft2", "--only", "hu-alpha-wor",
      "--threads", 2, "--trials", 50],
     dict(count=2, only="spechub-ge-rrs,spechub-thm3-draft2,hu-alpha-wor", threads=2,
          trials=50)),
    (["--profile", "thorough", "--count", 2, "--only", "uniform-closed-form"],
     dict(profile="thorough", count=2, only="uniform-closed-form")),
]


def cli_json(args, ok=(0,)):
    out = subprocess.run([mdsd_bin(), "check", *map(str, args), "--json"], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    assert out.returncode in ok, (args, out.returncode, out.stderr)
    return json.loads(out.stdout), out.returncode


def as_json(value):
    """A Python result's value as the CLI's JSON writes it (non-finite numbers: null)."""
    if isinstance(value, np.ndarray):
        return [as_json(x) for x in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [as_json(x) for x in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def rows_as_json(table):
    """Rows with the keys the CLI leaves out where it has nothing (error, detail) dropped."""
    return [{k: as_json(v) for k, v in row.items()
             if not (k in ("error", "detail") and v is None)} for row in table.rows()]


class CheckAgainstCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if mdsd_bin() is None:
            raise AssertionError("MDSD_BIN is not set to the mdsd binary")

    def test_results_equal_the_cli_json(self):
        for args, kw in CASES:
            with self.subTest(args=args):
                want, rc = cli_json(args, ok=(0, 1))
                got = mdsd.check(pandas=False, progress=False, **kw)
                self.assertEqual(rows_as_json(got), want["checks"])
                settings = {k: want[k] for k in ("profile", "seed", "count", "trials", "family",
                                                 "failed")}
                self.assertEqual(got.attrs, settings)
                self.assertEqual(rc, 1 if settings["failed"] else 0)
                self.assertGreater(len(got), 0)

    def test_a_failure_and_a_finding_carry_their_detail(self):
        got = mdsd.check(pandas=False, progress=False, **CASES[1][1])
        rows = {r["name"]: r for r in got.rows()}
        self.assertEqual(rows["spechub-thm4"]["status"], "fail")
        self.assertIn("no instance met the hypothesis", rows["spechub-thm4"]["error"])
        self.assertEqual(rows["bernoulli-closed-form"]["status"], "skip")
        self.assertEqual(got.attrs["failed"], 1)
        d = rows["spechub-thm3-draft2"]["detail"]
        self.assertEqual(d["family"], "uniform")
        self.assertEqual(d["p"].shape, (d["V"],))
        self.assertEqual(d["q"].shape[1], d["V"])
        self.assertAlmostEqual(float(d["p"].sum()), 1.0, places=12)

    def test_list_equals_the_cli_list(self):
        for args, kw in ((["--list"], {}), (["--list", "--family", "zipf"], dict(family="zipf")),
                         (["--list", "--only", "k2-closed-form,spechub-ge-rrs"],
                          dict(only=("k2-closed-form", "spechub-ge-rrs")))):
            with self.subTest(args=args):
                want, _ = cli_json(args)
                got = mdsd.check_list(pandas=False, **kw)
                self.assertEqual(rows_as_json(got), want["checks"])
        self.assertLess(len(mdsd.check_list(family="bernoulli", pandas=False)),
                        len(mdsd.check_list(pandas=False)))

    def test_bad_options_are_refused_naming_the_option(self):
        cases = [
            (dict(family="nope"), mdsd.MdsdError, "family: unknown toy family 'nope'"),
            (dict(only="k2-closed-form,nope"), mdsd.MdsdError, "only: unknown check 'nope'"),
            (dict(only=["k2-closed-form", ""]), mdsd.MdsdError, "only"),
            (dict(profile="slow"), mdsd.MdsdError, "profile: unknown profile 'slow'"),
            (dict(count=0), mdsd.MdsdError, "count must be at least 1"),
            (dict(trials=0), mdsd.MdsdError, "trials must be at least 1"),
            (dict(trials=10**8 + 1), mdsd.MdsdError, "trials"),
            (dict(count=-1), mdsd.MdsdError, "count"),
            (dict(count=2.5), mdsd.MdsdError, "count"),
            (dict(seed="x"), TypeError, "seed"),
            (dict(threads=-1), mdsd.MdsdError, "threads"),
            (dict(progress=3), TypeError, "progress"),
        ]
        for kw, exc, msg in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(exc) as cm:
                    mdsd.check(**kw)
                self.assertIn(msg, str(cm.exception))
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.check_list(family="nope")
        self.assertIn("family: unknown toy family 'nope'", str(cm.exception))
        with self.assertRaises(TypeError):
            mdsd.check(frobnicate=1)

    def test_progress_and_a_callback_that_stops_the_run(self):
        seen = []
        only = ["k2-closed-form", "hu-Q-cps", "wor-Q-exact"]
        mdsd.check(count=2, only=only, pandas=False, progress=lambda d, t: seen.append((d, t)))
        self.assertEqual(seen, [(1, 3), (2, 3), (3, 3)])

        class Stop(Exception):
            pass

        def stop(done, total):
            raise Stop

        # uninterrupted, these take about 12 s (the two Monte-Carlo checks, 20 ms an
        # instance); the exception, raised once k2-closed-form (0.1 s) is done, stops the
        # run within an instance of the next (mdsd_interrupt), and the next call runs
        # (the flag is cleared)
        t0 = time.monotonic()
        with self.assertRaises(Stop):
            mdsd.check(profile="thorough", count=300, pandas=False, progress=stop,
                       only=["k2-closed-form", "verifier-exact-mc", "verifier-outputs-p"])
        self.assertLess(time.monotonic() - t0, 3)
        self.assertEqual(len(mdsd.check(count=1, only="k2-closed-form", pandas=False)), 1)


TREES = os.path.join(ROOT, "data", "kjv-trees.h5")
TOY = os.path.join(ROOT, "papers", "block", "toys", "toy3.txt")
ENGINE = ('{"engine": "vllm", "verifier": "rejection_sampler", "sequences": 1, "depth": 4, '
          '"mean_acceptance_length": 2.31, "per_position_acceptance_rate": '
          '[0.62, 0.38, 0.19, 0.12], "steps": 5000}\n')


def read(path):
    with open(path, "rb") as f:
        return f.read()


class BlockOptionsAgainstCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if mdsd_bin() is None:
            raise AssertionError("MDSD_BIN is not set to the mdsd binary")

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.work = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def j(self, name):
        return os.path.join(self.work, name)

    def test_live_equals_the_cli(self):
        for live, flag in ((20, "20"), (1, "1"), ("inf", "inf"), (math.inf, "inf")):
            for verifier, k in (("rrs", 2), ("kseq", 3), ("sd", 1)):
                with self.subTest(live=live, verifier=verifier):
                    want = json.loads(cli("block", "--markov", TOY, "-v", verifier,
                                          "--sequences", k, "--depth", 2, "--live", flag,
                                          "--json"))
                    got = mdsd.block(markov=TOY, verifier=verifier, sequences=k, depths=2,
                                     live=live)
                    for key in ("live_horizon", "live_block_efficiency",
                                "position_block_efficiency", "live_calls",
                                "block_efficiency"):
                        self.assertEqual(getattr(got, key), want[key], key)
        # without live the fields are None, and the rest is unchanged
        plain = mdsd.block(markov=TOY, verifier="rrs", sequences=2, depths=2)
        with_live = mdsd.block(markov=TOY, verifier="rrs", sequences=2, depths=2, live=5)
        self.assertIsNone(plain.live_block_efficiency)
        self.assertEqual(plain[:8], with_live[:8])
        np.testing.assert_array_equal(plain.reach, with_live.reach)

    def test_live_refusals_name_the_option(self):
        base = dict(markov=TOY, verifier="rrs", sequences=2, depths=2)
        cases = [
            (dict(live=0), mdsd.MdsdError, "live: 0"),
            (dict(live=-1), mdsd.MdsdError, "live"),
            (dict(live="forever"), TypeError, "live"),
            (dict(live=2.5), mdsd.MdsdError, "live"),
            (dict(live=5, trials=100), mdsd.MdsdError, "live decoding is exact: drop trials"),
            (dict(live=5, verifier="gbv"), mdsd.MdsdError, "token-level verifiers only"),
        ]
        for kw, exc, msg in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(exc) as cm:
                    mdsd.block(**{**base, **kw})
                self.assertIn(msg, str(cm.exception))
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.block(TREES, self.j("x.csv"), live=5)
        self.assertIn("live= is for markov=", str(cm.exception))
        for name in ("shard", "engine_metrics"):
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.block(**base, **{name: (1, 2) if name == "shard" else self.j("e.json")})
            self.assertIn(f"{name}= is for tree dumps", str(cm.exception))

    def test_shards_equal_the_cli_shards_and_merge_to_one_run(self):
        opts = dict(verifiers=["rrs", "kseq"], sequences=[1, 4], costs=[0, 0.05])
        flags = ["--verifiers", "rrs,kseq", "--sequences", "1,4", "--cost", "0,0.05"]
        cli("block", TREES, "-o", self.j("one.csv"), *flags)
        for n in (2, 3):
            mine = []
            for i in range(1, n + 1):
                got = mdsd.block(TREES, self.j(f"p{i}of{n}"), shard=(i, n), **opts)
                self.assertEqual(got, self.j(f"p{i}of{n}"))
                cli("block", TREES, "-o", self.j(f"c{i}of{n}"), *flags, "--shard", f"{i}/{n}")
                self.assertEqual(read(self.j(f"p{i}of{n}")), read(self.j(f"c{i}of{n}")))
                mine.append(self.j(f"p{i}of{n}"))
            mdsd.merge(mine[::-1], self.j(f"m{n}.csv"))
            self.assertEqual(read(self.j(f"m{n}.csv")), read(self.j("one.csv")))
        # the CLI's "I/N" text is taken too
        mdsd.block(TREES, self.j("t1"), shard="1/2", **opts)
        self.assertEqual(read(self.j("t1")), read(self.j("c1of2")))

    def test_shard_refusals_name_the_option(self):
        out = self.j("s")
        cases = [((0, 2), "shard: (0, 2): I must be in 1..N"), ((3, 2), "I must be in 1..N"),
                 ("1/x", "shard: '1/x' is not I/N"), ((1,), "is not a pair"),
                 ((1, -2), "shard[1]")]
        for shard, msg in cases:
            with self.subTest(shard=shard):
                with self.assertRaises(mdsd.MdsdError) as cm:
                    mdsd.block(TREES, out, shard=shard)
                self.assertIn(msg, str(cm.exception))
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.block(TREES, out, shard=(1, 2), markdown=self.j("s.md"))
        self.assertIn("shard= writes partial aggregates", str(cm.exception))
        self.assertFalse(os.path.exists(out))

    def test_engine_metrics_equal_the_cli(self):
        with open(self.j("e.json"), "w") as f:
            f.write(ENGINE)
        cli("block", TREES, "-o", self.j("c.csv"), "--depth", 4, "--engine-metrics",
            self.j("e.json"))
        t = mdsd.block(TREES, self.j("p.csv"), depths=4, engine_metrics=self.j("e.json"),
                       pandas=False)
        self.assertEqual(read(self.j("p.csv")), read(self.j("c.csv")))
        self.assertIn("engine_gap", t.columns)
        self.assertTrue(any("same" in r for r in t["engine_role"]), t["engine_role"])
        # malformed counters: refused naming the file and the place; no CSV
        with open(self.j("bad.json"), "w") as f:
            f.write('{"engine": "vllm", "verifier": "rejection_sampler", "sequences": 1,}')
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.block(TREES, self.j("q.csv"), depths=4, engine_metrics=self.j("bad.json"))
        self.assertIn("bad.json", str(cm.exception))
        self.assertIn("line 1", str(cm.exception))
        self.assertFalse(os.path.exists(self.j("q.csv")))
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.block(TREES, self.j("r"), depths=4, engine_metrics=self.j("e.json"),
                       shard=(1, 2))
        self.assertIn("engine_metrics", str(cm.exception))


NGRAM = os.path.join(ROOT, "data", "kjv-ngram.h5")
TABLE_KW = dict(temperatures=[0.5, 1.0], draft_counts=[2], verifiers=["rrs"], rows=(0, 60),
                top_k=30, progress=False)
TABLE_FLAGS = ["-t", "0.5,1", "-d", "2", "-s", "iid", "-v", "rrs", "--positions", "0:60", "--top-k", "30"]


class TableOptionsAgainstCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if mdsd_bin() is None:
            raise AssertionError("MDSD_BIN is not set to the mdsd binary")

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.work = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def j(self, name):
        return os.path.join(self.work, name)

    def test_shards_equal_the_cli_shards_and_merge_to_one_run(self):
        cli("table", NGRAM, "-o", self.j("one.csv"), *TABLE_FLAGS)
        mine = []
        for i in (1, 2, 3):
            got = mdsd.table(NGRAM, self.j(f"p{i}"), shard=(i, 3), **TABLE_KW)
            self.assertEqual(got, self.j(f"p{i}"))
            cli("table", NGRAM, "-o", self.j(f"c{i}"), *TABLE_FLAGS, "--shard", f"{i}/3")
            self.assertEqual(read(self.j(f"p{i}")), read(self.j(f"c{i}")))
            mine.append(self.j(f"p{i}"))
        mdsd.merge(mine[::-1], self.j("m.csv"))
        self.assertEqual(read(self.j("m.csv")), read(self.j("one.csv")))
        mdsd.table(NGRAM, self.j("q.csv"), **TABLE_KW)
        self.assertEqual(read(self.j("q.csv")), read(self.j("one.csv")))

    def test_discard_partial_and_checkpoint_seconds(self):
        cli("table", NGRAM, "-o", self.j("one.csv"), *TABLE_FLAGS)
        out = self.j("t.csv")
        with open(out + ".partial", "w") as f:
            f.write("left over\n")
        with self.assertRaises(mdsd.MdsdError) as cm:  # never dropped silently
            mdsd.table(NGRAM, out, **TABLE_KW)
        self.assertIn(".partial", str(cm.exception))
        self.assertFalse(os.path.exists(out))
        mdsd.table(NGRAM, out, discard_partial=True, **TABLE_KW)
        self.assertEqual(read(out), read(self.j("one.csv")))
        for secs in (0, 0.5, 3600):
            with self.subTest(checkpoint_seconds=secs):
                os.unlink(out)
                mdsd.table(NGRAM, out, checkpoint_seconds=secs, **TABLE_KW)
                self.assertEqual(read(out), read(self.j("one.csv")))

    def test_refusals_name_the_option(self):
        out = self.j("r.csv")
        cases = [(dict(shard=(0, 3)), "I must be in 1..N"), (dict(shard="2/1"), "1..N"),
                 (dict(shard="x"), "is not I/N"), (dict(checkpoint_seconds=-1), "checkpoint_seconds"),
                 (dict(checkpoint_seconds=math.nan), "checkpoint_seconds"),
                 (dict(checkpoint_seconds="5"), "checkpoint_seconds"),
                 (dict(resume=True, discard_partial=True), "discard")]
        for kw, msg in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(mdsd.MdsdError) as cm:
                    mdsd.table(NGRAM, out, **{**TABLE_KW, **kw})
                self.assertIn(msg, str(cm.exception))
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
