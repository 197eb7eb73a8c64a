"""mdsd-runner import: arrays of logits (.npy, .npz, .safetensors, .pt) into a dump that the C
reader takes; padded vocabularies dropped on request and never silently; top-k rows with
-inf elsewhere; bad inputs refused with a message."""

import json
import os
import struct
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

from support import mdsd_bin, run_cli, run_main
from mdsd_runner.importer import load_array, read_safetensors_header


def write_safetensors(path, tensors):
    """Our own writer, from the format's definition: u64 header length, JSON, buffers."""
    header, blobs, offset = {"__metadata__": {"by": "test"}}, [], 0
    for name, (dtype, raw, shape) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def bf16_bits(x):
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype("<u2")


class ImportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        rng = np.random.default_rng(7)
        self.V = 12
        self.target = rng.normal(0, 2, size=(3, 5, self.V)).astype(np.float32)
        # the drafter is padded to 16 columns that carry (almost) nothing
        draft = self.target + rng.normal(0, 1, size=self.target.shape).astype(np.float32)
        self.draft = np.concatenate([draft, np.full((3, 5, 4), -60, np.float32)], axis=2)

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_safetensors_reader_matches_the_arrays(self):
        a = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
        h = (np.arange(6, dtype=np.float16) - 2.5)
        b = np.array([[1.5, -2.25, 2.0 ** 34, -np.inf]], dtype=np.float32)  # exact in bfloat16
        p = self.path("x.safetensors")
        write_safetensors(p, {"a": ("F32", a.astype("<f4").tobytes(), a.shape),
                              "h": ("F16", h.astype("<f2").tobytes(), h.shape),
                              "b": ("BF16", bf16_bits(b).tobytes(), b.shape)})
        tensors, offset = read_safetensors_header(p)
        self.assertEqual(sorted(tensors), ["a", "b", "h"])
        np.testing.assert_array_equal(load_array(p + ":a"), a)
        np.testing.assert_array_equal(load_array(p + ":h"), h)
        np.testing.assert_array_equal(load_array(p + ":b"), b)
        with self.assertRaisesRegex(Exception, "holds 3 arrays"):
            load_array(p)
        with self.assertRaisesRegex(Exception, "no array 'c'"):
            load_array(p + ":c")
        bad = self.path("bad.safetensors")
        with open(bad, "wb") as f:
            f.write(struct.pack("<Q", 10**9) + b"{}")
        with self.assertRaisesRegex(Exception, "header length"):
            load_array(bad)
        write_safetensors(bad, {"a": ("F32", b"\0" * 8, (4,))})
        with self.assertRaisesRegex(Exception, "data_offsets"):
            load_array(bad)

    def test_pt_tensor_and_dict_read_as_torch_wrote_them(self):
        import torch
        a = torch.tensor(self.target)
        b = torch.tensor([[1.5, -2.25, 2.0 ** 34, -float("inf")]]).to(torch.bfloat16)
        torch.save(a, self.path("a.pt"))
        torch.save({"logits": a, "b": b, "n": 3}, self.path("d.pth"))
        np.testing.assert_array_equal(load_array(self.path("a.pt")), self.target)
        np.testing.assert_array_equal(load_array(self.path("d.pth") + ":logits"), self.target)
        got = load_array(self.path("d.pth") + ":b")
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_array_equal(got, b.float().numpy())
        with self.assertRaisesRegex(Exception, "holds 3 arrays"):
            load_array(self.path("d.pth"))
        with self.assertRaisesRegex(Exception, "one tensor; drop ':x'"):
            load_array(self.path("a.pt") + ":x")
        with self.assertRaisesRegex(Exception, "holds a int, not a tensor"):
            load_array(self.path("d.pth") + ":n")
        # the import command end to end: .pt rows equal to the .npy route's dump
        np.save(self.path("t.npy"), self.target)
        torch.save(torch.tensor(self.draft), self.path("d.pt"))
        np.save(self.path("d.npy"), self.draft)
        outs = []
        for target, draft in ((self.path("a.pt"), self.path("d.pt")),
                              (self.path("t.npy"), self.path("d.npy"))):
            out = self.path(os.path.basename(draft) + ".h5")
            rc, _, err = run_main("import", "--target", target, "--draft", "small=" + draft,
                                  "--drop-padding", "-o", out)
            self.assertEqual(rc, 0, err)
            with h5py.File(out, "r") as f:
                outs.append((f["target/logits"][:], f["drafts/small/logits"][:]))
        for x, y in zip(*outs):
            np.testing.assert_array_equal(x, y)

    def test_npy_with_padding_dropped_reads_back_in_c(self):
        np.save(self.path("t.npy"), self.target)
        np.save(self.path("d.npy"), self.draft)
        out = self.path("imp.h5")
        rc, _, err = run_main("import", "--target", self.path("t.npy"), "--draft",
                              "small=" + self.path("d.npy"), "-o", out)
        self.assertEqual(rc, 1)
        self.assertIn("--drop-padding", err)
        self.assertFalse(os.path.exists(out))
        rc, so, err = run_main("import", "--target", self.path("t.npy"), "--draft",
                               "small=" + self.path("d.npy"), "--drop-padding", "-o", out)
        self.assertEqual(rc, 0, err)
        with h5py.File(out, "r") as f:
            self.assertEqual(f["target/logits"].shape, (15, self.V))
            np.testing.assert_array_equal(f["target/logits"][:], self.target.reshape(15, self.V))
            np.testing.assert_array_equal(f["drafts/small/logits"][:],
                                          self.draft[:, :, :self.V].reshape(15, self.V))
            self.assertEqual(int(f["drafts/small"].attrs["dropped_padding"]), 4)
            self.assertEqual(list(f["sample_id"][:]), [0] * 5 + [1] * 5 + [2] * 5)
            self.assertEqual(list(f["position"][:5]), [0, 1, 2, 3, 4])
            np.testing.assert_array_equal(f["tokens"][:], np.argmax(self.target.reshape(15, -1), axis=1))
        binary = mdsd_bin()
        if binary:
            info = json.loads(subprocess.run([binary, "info", out, "--json"], capture_output=True,
                                             text=True, check=True).stdout)
            self.assertEqual((info["rows"], info["samples"], info["V"]), (15, 3, self.V))
            subprocess.run([binary, "info", out, "--validate"], capture_output=True, check=True)

    def test_padding_with_mass_is_refused(self):
        draft = self.draft.copy()
        draft[1, 2, 14] = 5.0  # a real token beyond column 12
        np.save(self.path("t.npy"), self.target)
        np.save(self.path("d.npy"), draft)
        rc, _, err = run_main("import", "--target", self.path("t.npy"), "--draft",
                              "small=" + self.path("d.npy"), "--drop-padding", "-o", self.path("x.h5"))
        self.assertEqual(rc, 1)
        self.assertIn("not padding", err)
        self.assertFalse(os.path.exists(self.path("x.h5")))
        self.assertFalse(os.path.exists(self.path("x.h5.partial")))

    def test_npz_topk_rows_tokens_and_samples(self):
        t = self.target.reshape(15, self.V).copy()
        # top-3 logprobs of a serving engine: dense rows, -inf elsewhere
        top = np.argsort(-t, axis=1)[:, :3]
        sparse = np.full_like(t, -np.inf)
        np.put_along_axis(sparse, top, np.take_along_axis(t, top, axis=1), axis=1)
        tokens = top[:, 0].astype(np.int64)
        samples = np.repeat([4, 9, 2], 5)
        np.savez(self.path("run.npz"), target=sparse, draft=self.draft.reshape(15, -1)[:, :self.V],
                 tokens=tokens, sample=samples)
        out = self.path("topk.h5")

        def import_topk(*extra):
            run = self.path("run.npz")
            return run_cli("import", "--target", run + ":target", "--draft", "d=" + run + ":draft",
                           "--tokens", run + ":tokens", "--sample-ids", run + ":sample", *extra,
                           "-o", out)
        rc, so, err = import_topk()
        # -inf entries: the importer asks what they mean and refuses to guess
        self.assertEqual(rc, 1, so + err)
        self.assertIn("target: row 0, column", err)
        self.assertIn("--neg-inf zero", err)
        self.assertFalse(os.path.exists(out))
        rc, so, err = import_topk("--neg-inf", "unseen")
        # the kept entries are logits, not log-probabilities: their mass passes 1
        self.assertEqual(rc, 1, so + err)
        self.assertIn("must be log-probabilities", err)
        self.assertFalse(os.path.exists(out))
        rc, so, err = import_topk("--neg-inf", "zero")
        self.assertEqual(rc, 0, err)
        self.assertIn("tokens: given", so)
        with h5py.File(out, "r") as f:
            self.assertTrue(np.isneginf(f["target/logits"][:]).sum() == 15 * (self.V - 3))
            self.assertEqual(list(f["tokens"][:]), list(tokens))
        binary = mdsd_bin()
        if binary:
            res = self.path("topk.csv")
            subprocess.run([binary, "table", out, "-o", res, "-d", "2", "-v", "rrs"],
                           capture_output=True, check=True)
        # samples out of order are refused
        np.savez(self.path("bad.npz"), target=t, draft=t, sample=np.array([0] * 5 + [1] * 5 + [0] * 5))
        rc, _, err = run_main("import", "--target", self.path("bad.npz") + ":target", "--draft",
                              "d=" + self.path("bad.npz") + ":draft", "--sample-ids",
                              self.path("bad.npz") + ":sample", "-o", self.path("b.h5"))
        self.assertEqual(rc, 1)
        self.assertIn("consecutive", err)
        bad = t.copy()
        bad[3, 4] = np.nan
        np.save(self.path("nan.npy"), bad)
        rc, _, err = run_main("import", "--target", self.path("nan.npy"), "--draft",
                              "d=" + self.path("nan.npy"), "-o", self.path("n.h5"))
        self.assertEqual(rc, 1)
        self.assertIn("row 3, column 4", err)

    def test_c_reader_suggests_drop_padding(self):
        binary = mdsd_bin()
        if not binary:
            self.skipTest("no mdsd binary")
        np.save(self.path("t.npy"), self.target)
        np.save(self.path("d.npy"), self.draft[:, :, :self.V])
        out = self.path("m.h5")
        self.assertEqual(run_main("import", "--target", self.path("t.npy"), "--draft",
                                  "small=" + self.path("d.npy"), "-o", out)[0], 0)
        with h5py.File(out, "r+") as f:  # a draft of another width, as a hand-made dump would have
            del f["drafts/small/logits"]
            f["drafts/small"].create_dataset("logits", data=self.draft.reshape(15, -1))
        proc = subprocess.run([binary, "info", out], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("vocab mismatch", proc.stderr)
        self.assertIn("mdsd-runner import --drop-padding", proc.stderr)


if __name__ == "__main__":
    unittest.main()
