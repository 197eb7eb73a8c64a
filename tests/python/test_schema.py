"""The validator (mdsd-runner validate: libmdsd's validator plus the runner's metadata
checks) accepts a good dump and names each planted fault, and agrees with `mdsd info
--validate` on the files they used to disagree on; the bfloat16 encoding rounds to nearest
even."""

import os
import shutil
import tempfile
import unittest

import h5py
import numpy as np

from fakes import FakeLM, FakeTokenizer
from mdsd_runner import pipeline
from mdsd_runner.dump import from_bfloat16_bits, to_bfloat16_bits
from mdsd_runner.prompts import Prompt
from mdsd_runner.schema import validate
from support import mdsd_bin, run_cli

V = 16


def set_attr(name, value, dtype=None):
    def fault(f):
        f.attrs.create(name, value, dtype=dtype) if dtype else f.attrs.__setitem__(name, value)
    return fault


def replace(path, data, **kw):
    def fault(f):
        del f[path]
        f.create_dataset(path, data=data, **kw)
    return fault


class Validator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.good = os.path.join(cls.tmp.name, "good.h5")
        prompts = [Prompt({"prompt": w}, f"line {i}") for i, w in enumerate(["a b", "c", "d e f"])]
        pipeline.run(FakeTokenizer(V), FakeLM(V, padding=2), [("d", FakeLM(V, padding=2, seed=5))],
                     prompts, out=cls.good, backend="fake", dataset="toy", num_samples=4,
                     max_new_tokens=5, progress=False)
        with h5py.File(cls.good, "r") as f:
            cls.N = f["tokens"].shape[0]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_good_dump(self):
        problems, summary = validate(self.good)
        self.assertEqual(problems, [])
        self.assertEqual(summary, {"rows": self.N, "vocab_size": V, "samples": 4, "drafts": ["d"],
                                   "logits_dtype": "float32"})

    def test_each_fault_is_named(self):
        N = self.N
        logits = np.zeros((N, V), np.float32)
        nan = logits.copy()
        nan[2, 3] = np.nan
        faults = {
            "dump format version 2": set_attr("mdsd_format", 2, np.int32),
            "mdsd_format must be a int32": set_attr("mdsd_format", 1, np.int64),
            "string attribute tokenizer is missing": lambda f: f.attrs.__delitem__("tokenizer"),
            "not ISO-8601": set_attr("created", "yesterday"),
            "generation_temperature must be a float64": set_attr("generation_temperature", 1, np.int32),
            "row 1 of /position: position -1": replace("position", np.array([0, -1] + list(range(2, N)), np.int32)),
            "of the same sample": replace("sample_id", np.array([0, 1, 0] + [3] * (N - 3), np.int32)),
            "row 0 of /tokens: token 16 is outside": replace("tokens", np.array([V] + [0] * (N - 1), np.int32)),
            "/tokens must be a 1-D int32": replace("tokens", np.zeros(N, np.int64)),
            "row 2 of /drafts/d/logits: logit 3 is NaN": replace("drafts/d/logits", nan, chunks=(4, V)),
            "/target/logits has 15 columns": replace("target/logits", logits[:, :V - 1], chunks=(4, V - 1)),
            "/target/logits: not chunked": replace("target/logits", logits),
            "dtype attribute bfloat16 on a float32": lambda f: f["target/logits"].attrs.__setitem__(
                "dtype", "bfloat16"),
            "vocab_size 18 - dropped_padding 1": lambda f: f["target"].attrs.create(
                "dropped_padding", 1, dtype=np.int64),
            "missing dataset /target/logits": lambda f: f.__delitem__("target"),
        }
        for i, (phrase, fault) in enumerate(faults.items()):
            path = os.path.join(self.tmp.name, f"fault{i}.h5")
            shutil.copy(self.good, path)
            with h5py.File(path, "r+") as f:
                fault(f)
            problems, _ = validate(path)
            with self.subTest(fault=phrase):
                self.assertTrue(any(phrase in p for p in problems), problems)

    def test_agrees_with_mdsd_info(self):
        # The files on which `mdsd-runner validate` and `mdsd info --validate` used to
        # disagree: no drafter (the runner said ok, mdsd refused) and positions with gaps
        # (mdsd's documented rule accepts increasing positions; the runner refused).
        import subprocess
        self.assertIsNotNone(mdsd_bin(), "MDSD_BIN is needed")
        for name, want in (("nodrafts", 1), ("gaps", 0)):
            path = os.path.join(self.tmp.name, f"agree-{name}.h5")
            shutil.copy(self.good, path)
            with h5py.File(path, "r+") as f:
                if name == "gaps":
                    sid = f["sample_id"][()]
                    del f["position"]
                    starts = np.searchsorted(sid, sid)  # rows of a sample are contiguous
                    f["position"] = ((np.arange(self.N) - starts) * 2).astype(np.int32)
                else:
                    del f["drafts"]
            rc_runner = run_cli("validate", path)[0]
            rc_mdsd = subprocess.run([mdsd_bin(), "info", path, "--validate"],
                                     capture_output=True).returncode
            with self.subTest(file=name):
                self.assertEqual((rc_runner, rc_mdsd), (want, want))


class Bfloat16(unittest.TestCase):
    def test_round_to_nearest_even(self):
        rng = np.random.default_rng(3)
        x = np.concatenate([rng.normal(0, 10, 5000), [0.0, -0.0, 1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8,
                                                      65504.0, -3.0e38]]).astype(np.float32)
        got = from_bfloat16_bits(to_bfloat16_bits(x)).astype(np.float64)
        # Reference: the two bfloat16 neighbours of each value, the nearer (ties: even bits).
        bits = x.view(np.uint32)
        low = (bits & 0xFFFF0000).view(np.float32).astype(np.float64)
        high = ((bits & 0xFFFF0000) + 0x10000).astype(np.uint32).view(np.float32).astype(np.float64)
        xd = x.astype(np.float64)
        tie_even = np.where(((bits >> 16) & 1) == 0, low, high)
        want = np.where(np.abs(xd - low) < np.abs(high - xd), low,
                        np.where(np.abs(xd - low) > np.abs(high - xd), high, tie_even))
        np.testing.assert_array_equal(got, want)
        self.assertEqual(from_bfloat16_bits(to_bfloat16_bits(np.float32(1 + 2 ** -8)))[()], 1.0)
        self.assertEqual(from_bfloat16_bits(to_bfloat16_bits(np.float32(1 + 3 * 2 ** -8)))[()],
                         1 + 2 ** -6)


if __name__ == "__main__":
    unittest.main()
