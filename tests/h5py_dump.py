"""Dump format version 1 (data/README.md) from Python with h5py, as the model
runner writes it; used by tests/test_dump_cli.c to check that mdsd and h5py
agree in both directions.

    h5py_dump.py write PATH N V   write a dump whose values follow value()
    h5py_dump.py read PATH        print, per logits dataset, the row count,
                                  the number of -inf and the sum of the
                                  finite values (bfloat16 widened by hand)
"""
import sys

import h5py
import numpy as np


def value(model, n, v):
    """Values exactly representable in float16 and bfloat16, some -inf."""
    r = np.arange(n)[:, None]
    c = np.arange(v)[None, :]
    x = ((r * 31 + c * 17 + model * 5) % 97) / 8.0 - 6.0
    x = x.astype(np.float64)
    x[(r + c + model) % 13 == 0] = -np.inf
    return x


def write(path, n, v):
    with h5py.File(path, "w") as f:
        f.attrs["mdsd_format"] = np.int32(1)
        f.attrs["creator"] = "h5py_dump.py"
        f.attrs["created"] = "2025-01-01T00:00:00Z"
        f.attrs["dataset"] = "unit"
        f.attrs["tokenizer"] = np.bytes_("none")  # a fixed-length string
        f.attrs["generation_temperature"] = 0.7
        f.attrs["vocab_size"] = np.int64(v)
        rows = np.arange(n)
        f["tokens"] = (rows * 3 % v).astype(np.int32)
        f["sample_id"] = (rows // 4).astype(np.int32)
        f["position"] = (rows % 4).astype(np.int32)
        f.create_dataset("target/logits", data=value(0, n, v).astype(np.float16),
                         chunks=(8, v), compression="gzip")
        f["target"].attrs["model"] = "py-target"
        f["target"].attrs["vocab_size"] = np.int64(v + 3)
        f["target"].attrs["dropped_padding"] = np.int64(3)
        # bfloat16: the upper 16 bits of float32, stored as uint16
        bits = (value(1, n, v).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        d = f.create_dataset("drafts/bf/logits", data=bits, chunks=(8, v))
        d.attrs["dtype"] = "bfloat16"
        f["drafts/bf"].attrs["model"] = "py-draft-bf16"
        f["drafts/bf"].attrs["vocab_size"] = np.int64(v)
        f["drafts/f32/logits"] = value(2, n, v).astype(np.float32)  # contiguous
        f["drafts/f32"].attrs["model"] = "py-draft-f32"
        f["drafts/f32"].attrs["vocab_size"] = np.int64(v)


def logits(ds):
    """A logits dataset as float32, whatever its stored dtype."""
    x = ds[...]
    if ds.attrs.get("dtype") in ("bfloat16", b"bfloat16"):
        return (x.astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float32)


def read(path):
    with h5py.File(path, "r") as f:
        assert int(f.attrs["mdsd_format"]) == 1
        names = ["target"] + ["drafts/" + k for k in sorted(f["drafts"])]
        for name in names:
            x = logits(f[name + "/logits"]).astype(np.float64)
            finite = np.isfinite(x)
            print("%s %d %d %.17g" % (name, x.shape[0], int((x == -np.inf).sum()), x[finite].sum()))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        read(sys.argv[2])
