"""The package's own file writes under the library's output-safety mechanism (issue 36,
src/python/mdsd/_paths.py over mdsd/output.h): mdsd.evaluate(output=OUT) writes through a
new temporary file beside OUT (O_EXCL) renamed onto it - a user's OUT.tmp is left alone,
a symlink at a temporary name or at OUT itself is never followed - under OUT.lock, with
the provenance sidecar OUT.provenance.json of `mdsd table`'s keys (mdsd.table and
mdsd.block write theirs too); the library's own writers (DumpWriter, lp_export) past a
file or symlink at their temporary names; and the check itself
(same file by name, symlink and hard link, refused naming both). Run by
tests/test_package.c: `PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest
test_mdsd_outputs`."""

import json
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

import mdsd
from mdsd import _paths
from support import ROOT, mdsd_bin

SHIPPED = os.path.join(ROOT, "data", "kjv-ngram.h5")
TREES = os.path.join(ROOT, "data", "kjv-trees.h5")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def logits(seed=1, N=30, V=6):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, V)), rng.normal(size=(N, V))


class Evaluate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.out = os.path.join(self.d, "r.csv")
        self.victim = os.path.join(self.d, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("precious\n")

    def tearDown(self):
        self.tmp.cleanup()

    def evaluate(self, **kw):
        t, q = logits()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return mdsd.evaluate(t, q, samples=np.repeat(np.arange(3), 10), output=self.out,
                                 pandas=False, **kw)

    def test_a_users_out_tmp_is_left_alone(self):
        with open(self.out + ".tmp", "w") as f:
            f.write("the user's own file\n")
        self.evaluate()
        self.assertEqual(read(self.out + ".tmp"), b"the user's own file\n")
        self.assertTrue(read(self.out).startswith(b"dump,"))

    def test_symlinks_at_temporary_names_and_at_out_are_not_followed(self):
        for name in (self.out + ".tmp", f"{self.out}.tmp.{os.getpid()}",
                     f"{self.out}.provenance.json.tmp.{os.getpid()}"):
            os.symlink(self.victim, name)
        self.evaluate()
        self.assertEqual(read(self.victim), b"precious\n")
        # a symlink at OUT is replaced by the results, as `mdsd table -o` replaces it
        os.unlink(self.out)
        os.symlink(self.victim, self.out)
        self.evaluate()
        self.assertEqual(read(self.victim), b"precious\n")
        self.assertFalse(os.path.islink(self.out))
        self.assertTrue(read(self.out).startswith(b"dump,"))

    def test_provenance_sidecar(self):
        self.evaluate(seed=7, trials=0, top_k=3)
        with open(self.out + ".provenance.json") as f:
            text = f.read()
        self.assertEqual(text.count("\n"), 1)  # one line, as mdsd_provenance_read takes it
        doc = json.loads(text)
        self.assertEqual(doc["tool"], "mdsd.evaluate")
        self.assertEqual(doc["version"], mdsd.version())
        self.assertEqual(doc["output"], "r.csv")
        self.assertEqual((doc["seed"], doc["trials"], doc["top_k"], doc["top_p"]), (7, 0, 3, 1.0))
        self.assertEqual(len(doc["dumps"]), 1)
        # the rows were in memory: named by their label, no file digest (hashing them
        # would cost as much as the job), their shape and drafters
        entry = doc["dumps"][0]
        self.assertEqual((entry["path"], entry["in_memory"]), ("arrays", True))
        self.assertEqual((entry["rows"], entry["vocab_size"], entry["drafters"]),
                         (30, 6, ["draft"]))
        self.assertNotIn("sha256", entry)
        bin_ = mdsd_bin()
        if bin_:  # mdsd report reads it as its own
            proc = subprocess.run([bin_, "report", self.out], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(os.listdir(self.d)),
                         ["r.csv", "r.csv.provenance.json", "victim.txt"])

    def test_refused_before_any_work(self):
        folder = os.path.join(self.d, "folder")
        os.mkdir(folder)
        calls = []
        t, q = logits()
        for out, phrase in ((folder, "is a directory"),
                            (os.path.join(self.d, "none", "r.csv"), "does not exist")):
            with self.subTest(out=out):
                with self.assertRaises(mdsd.MdsdError) as e:
                    mdsd.evaluate(t, q, output=out, progress=lambda *a: calls.append(a))
                self.assertIn(phrase, str(e.exception))
        self.assertEqual(calls, [])  # no pass over the rows started

    def test_another_writer_holds_the_lock(self):
        with _paths.locked(self.out + ".lock", f"output {self.out}"):
            with self.assertRaises(mdsd.MdsdError) as e:
                self.evaluate()
        self.assertIn(self.out + ".lock", str(e.exception))
        self.assertFalse(os.path.exists(self.out))
        self.assertEqual(sorted(os.listdir(self.d)), ["victim.txt"])


class JobProvenance(unittest.TestCase):
    """mdsd.table and mdsd.block write the sidecar OUT.provenance.json of `mdsd table` and
    `mdsd block` (mdsd_table_run_recorded, mdsd_block_run_recorded): before, none was
    written, and an earlier run's sidecar stayed beside the new results, describing
    another run (its seed, trials and is_top, which `mdsd report` reads)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_table_and_block(self):
        import hashlib
        for name, call, tool, dump, keys in (
                ("t.csv", lambda out: mdsd.table(SHIPPED, out, rows=(0, 10), seed=5, top_k=7,
                                                 pandas=False),
                 "mdsd.table", SHIPPED, {"seed": 5, "top_k": 7, "positions": [0, 10]}),
                ("b.csv", lambda out: mdsd.block(TREES, out, depths=[1], sequences=[1],
                                                 is_top=0, pandas=False),
                 "mdsd.block", TREES, {"is_top": 0})):
            with self.subTest(tool=tool):
                out = os.path.join(self.tmp.name, name)
                with open(out + ".provenance.json", "w") as f:
                    f.write('{"tool":"mdsd table","seed":99,"trials":1000,"is_top":3}\n')
                call(out)
                with open(out + ".provenance.json") as f:
                    doc = json.loads(f.read())
                self.assertEqual(doc["tool"], tool)
                self.assertEqual(doc["output"], name)
                self.assertEqual(doc["command"][:2], ["mdsd", tool])
                self.assertEqual({k: doc[k] for k in keys}, keys)
                self.assertEqual(doc["dumps"][0]["path"], dump)
                self.assertEqual(doc["dumps"][0]["sha256"],
                                 hashlib.sha256(read(dump)).hexdigest())
        bin_ = mdsd_bin()
        if bin_:
            t = os.path.join(self.tmp.name, "t.csv")
            proc = subprocess.run([bin_, "report", t], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)


class LibraryWriters(unittest.TestCase):
    """The package's writers that are the library's (mdsd.DumpWriter: HDF5; mdsd.lp_export:
    GLPK's .lp / .mps, the library's .dat): a file or symlink already at the temporary name
    beside the output is left alone, never truncated or followed."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.victim = os.path.join(self.d, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("precious\n")

    def tearDown(self):
        self.tmp.cleanup()

    def plant(self, out):
        os.symlink(self.victim, f"{out}.tmp.{os.getpid()}")
        with open(f"{out}.tmp.{os.getpid()}.1", "w") as f:
            f.write("a crashed run's\n")

    def kept(self, out):
        self.assertEqual(read(self.victim), b"precious\n")
        self.assertFalse(os.path.islink(out))
        self.assertEqual(read(f"{out}.tmp.{os.getpid()}.1"), b"a crashed run's\n")

    def test_dump_writer(self):
        out = os.path.join(self.d, "d.h5")
        self.plant(out)
        with mdsd.DumpWriter(out, 4, ["small"]) as w:
            w.write(np.zeros((2, 4)), [np.zeros((2, 4))], [0, 1], [0, 0], [0, 1])
        self.kept(out)
        mdsd.validate_dump(out)

    def test_lp_export(self):
        for name in ("lp.lp", "lp.mps", "lp.dat"):
            with self.subTest(file=name):
                out = os.path.join(self.d, name)
                self.plant(out)
                mdsd.lp_export(out, [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], n=2)
                self.kept(out)
                self.assertGreater(os.path.getsize(out), 0)


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.src = os.path.join(self.d, "in.txt")
        with open(self.src, "w") as f:
            f.write("input\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_same_file_by_name_symlink_and_hard_link(self):
        link, hard = os.path.join(self.d, "link"), os.path.join(self.d, "hard")
        os.symlink(self.src, link)
        os.link(self.src, hard)
        for out in (self.src, link, hard):
            with self.subTest(out=out):
                with self.assertRaises(mdsd.MdsdError) as e:
                    _paths.check([(self.src, "--prompts")], [(out, "-o")])
                msg = str(e.exception)
                self.assertIn(self.src, msg)
                self.assertIn(out, msg)
                self.assertIn("--prompts", msg)
        # two outputs that are one file, one not yet created (a dangling symlink to it)
        dangling = os.path.join(self.d, "dangling")
        os.symlink(os.path.join(self.d, "new.csv"), dangling)
        with self.assertRaises(mdsd.MdsdError) as e:
            _paths.check([], [(os.path.join(self.d, "new.csv"), "-o"), (dangling, "--latex")])
        self.assertIn("are the same file", str(e.exception))
        _paths.check([(self.src, "--prompts")], [(os.path.join(self.d, "out.h5"), "-o")])

    def test_write_files_all_or_none(self):
        a, b = os.path.join(self.d, "a"), os.path.join(self.d, "no-dir", "b")
        with self.assertRaises(mdsd.MdsdError):
            _paths.write_files([(a, b"A"), (b, b"B")])
        self.assertEqual(sorted(os.listdir(self.d)), ["in.txt"])
        with self.assertRaises(ZeroDivisionError):
            with _paths.temporaries([a]) as (f,):
                f.write(b"half")
                1 / 0
        self.assertEqual(sorted(os.listdir(self.d)), ["in.txt"])
        _paths.write_files([(a, b"A")])
        self.assertEqual(read(a), b"A")


if __name__ == "__main__":
    unittest.main()
