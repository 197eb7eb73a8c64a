"""mdsd.toy against `mdsd toy`: the same options write the same dump (byte for byte, or
where HDF5 stamps differ, the same datasets and attributes through h5py) and the same
--json summary; bad options are refused with no file left. Run by tests/test_package.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd_toy`."""

import json
import os
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

import mdsd
from support import ROOT, mdsd_bin

CASES = [
    # (CLI arguments, Python keywords)
    (["--family", "zipf", "--vocab", 50, "--positions", 40, "--seed", 7],
     dict(family="zipf", vocab=50, positions=40, seed=7)),
    (["--family", "dirichlet", "--vocab", 12, "--positions", 30, "--drafts", "a,b",
      "--samples", 3, "--dtype", "float16", "--param", "alpha=0.5", "--chunk-rows", 8,
      "--gzip", 4, "--threads", 1],
     dict(family="dirichlet", vocab=12, positions=30, drafts=["a", "b"], samples=3,
          dtype="float16", param={"alpha": 0.5}, chunk_rows=8, gzip=4, threads=1)),
    (["--family", "bernoulli", "--vocab", 2, "--positions", 25, "--param", "grid=4",
      "--param", "a=0.25", "--dtype", "bfloat16"],
     dict(family="bernoulli", vocab=2, positions=25, param=["grid=4", "a=0.25"],
          dtype="bfloat16")),
    (["--family", "spechub-toy", "--vocab", 9, "--positions", 17, "--param",
      "T=0.5,lambda=0.3", "--drafts", "x"],
     dict(family="spechub-toy", vocab=9, positions=17, param="T=0.5,lambda=0.3", drafts="x")),
]


def h5_contents(path):
    out = {}

    def visit(name, obj):
        attrs = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in obj.attrs.items()
                 if not (name == "/" and k == "created")}  # the time of writing, in seconds
        data = obj[()].tobytes() if isinstance(obj, h5py.Dataset) else None
        dtype = str(obj.dtype) if isinstance(obj, h5py.Dataset) else None
        out[name] = (attrs, dtype, data)

    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return out


class ToyEqualsCli(unittest.TestCase):
    def setUp(self):
        if mdsd_bin() is None:
            self.fail("MDSD_BIN is not set to the mdsd binary")
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_same_dump_and_summary(self):
        for k, (args, kw) in enumerate(CASES):
            with self.subTest(family=kw["family"]):
                a = os.path.join(self.dir.name, f"cli{k}.h5")
                b = os.path.join(self.dir.name, f"py{k}.h5")
                out = subprocess.run([mdsd_bin(), "toy", *map(str, args), "-o", a, "--json"],
                                     capture_output=True, text=True, cwd=ROOT, timeout=120)
                self.assertEqual(out.returncode, 0, out.stderr)
                summary = mdsd.toy(b, **kw)
                want = json.loads(out.stdout)
                self.assertEqual({**summary, "file": a}, want)
                with open(a, "rb") as fa, open(b, "rb") as fb:
                    same = fa.read() == fb.read()
                if not same:  # written in another second: every dataset and attribute
                    self.assertEqual(h5_contents(a), h5_contents(b))
                self.assertEqual(os.listdir(self.dir.name).count(f"py{k}.h5"), 1)

    def test_threads_do_not_change_the_dump(self):
        a, b = (os.path.join(self.dir.name, n) for n in ("t1.h5", "t2.h5"))
        mdsd.toy(a, "zipf", 40, 70, threads=1, chunk_rows=16)
        mdsd.toy(b, "zipf", 40, 70, threads=2, chunk_rows=16)
        self.assertEqual(h5_contents(a), h5_contents(b))

    def test_bad_options_are_refused_and_leave_nothing(self):
        out = os.path.join(self.dir.name, "bad.h5")
        for kw, words in ((dict(family="nope"), "nope"),
                          (dict(gzip=10), "gzip"),
                          (dict(samples=99), "samples"),
                          (dict(vocab=0), "vocab"),
                          (dict(param="alpha=1,alpha=2"), "twice"),
                          (dict(param={"grid": 3}), "grid"),
                          (dict(dtype="int8"), "int8"),
                          (dict(drafts=""), "drafts"),
                          (dict(drafts=[f"d{k}" for k in range(65)]), "at most 64"),
                          (dict(positions=2.5), "positions")):
            args = dict(output=out, family="dirichlet", vocab=5, positions=10)
            args.update(kw)
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(mdsd.MdsdError) as cm:
                    mdsd.toy(**args)
                self.assertIn(words, str(cm.exception))
        with self.assertRaises(mdsd.MdsdError):
            mdsd.toy(self.dir.name, "dirichlet", 5, 10)  # a directory
        self.assertEqual(os.listdir(self.dir.name), [])


if __name__ == "__main__":
    unittest.main()
