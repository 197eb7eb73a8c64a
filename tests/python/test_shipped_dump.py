"""The shipped dump data/kjv-ngram.h5: it follows the format, and `make dump` (its one
documented command) makes it again with the same values."""

import os
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

from support import ROOT
from mdsd_runner.prompts import load_prompts
from mdsd_runner.schema import validate

SHIPPED = os.path.join(ROOT, "data", "kjv-ngram.h5")


def contents(path):
    """Every dataset's values and every attribute but the creation time."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            for key, value in obj.attrs.items():
                if key != "created":
                    out[f"{name}@{key}"] = value
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        visit("/", f)
        f.visititems(visit)
    return out


class ShippedDump(unittest.TestCase):
    def test_follows_the_format(self):
        problems, summary = validate(SHIPPED)
        self.assertEqual(problems, [])
        self.assertEqual(summary["vocab_size"], 8192)
        self.assertEqual(summary["drafts"], ["kn2", "kn3"])
        self.assertEqual(summary["samples"], 40)
        self.assertTrue(300 <= summary["rows"] <= 3000, summary)
        self.assertLessEqual(os.path.getsize(SHIPPED), 20 << 20)

    def test_make_dump_reproduces_its_values(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "again.h5")
            env = {k: v for k, v in os.environ.items()
                   if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
            proc = subprocess.run(["make", "--no-print-directory", "-s", "dump", f"DUMP_OUT={out}"],
                                  cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            shipped, again = contents(SHIPPED), contents(out)
        self.assertEqual(sorted(shipped), sorted(again))
        for key in shipped:
            a, b = np.asarray(shipped[key]), np.asarray(again[key])
            self.assertTrue(a.dtype == b.dtype and np.array_equal(a, b), key)

    def test_prompt_sets_load(self):
        folder = os.path.join(ROOT, "data", "prompts")
        sizes = {name: len(load_prompts(os.path.join(folder, name)))
                 for name in sorted(os.listdir(folder))}
        self.assertEqual(sizes, {"kjv-held-out.jsonl": 1555, "kjv-openings.jsonl": 40,
                                 "questions.jsonl": 30})


if __name__ == "__main__":
    unittest.main()
