"""Splits a tree dump (data/README.md, 'Tree dumps') into files by whole
samples, as a runner sharded by prompts would write them: a split dump for
`mdsd block DIR` (tests/test_scale.c, tests/corpus/split/). Run under
Debian's /usr/bin/python3 (python3-h5py).

    split_trees.py IN OUTDIR K [D]   OUTDIR/part-1.h5 .. part-K.h5, about
                                     equal numbers of samples each, in sample
                                     order; D: the last file's trees cut to
                                     depth D (a file of another tree shape)

Each file renumbers its /tree_sample from the previous file's last number
(so the last sample of one file and the first of the next carry the same
number: only the directory reading tells them apart); /parent is made
file-local. Every other row dataset is sliced, attributes are copied.
"""
import os
import sys

import h5py
import numpy as np


def copy_attrs(src, dst):
    for k, v in src.attrs.items():
        dst.attrs[k] = v


def main():
    src, outdir, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cut = int(sys.argv[4]) if len(sys.argv) > 4 else None
    os.makedirs(outdir, exist_ok=True)
    with h5py.File(src, "r") as f:
        n = f["parent"].shape[0]
        sample = f["tree_sample"][:]
        starts = [0] + [u for u in range(1, n) if sample[u] != sample[u - 1]]
        bounds = [starts[len(starts) * i // k] for i in range(k)] + [n]
        number = 0
        for i in range(k):
            r0, r1 = bounds[i], bounds[i + 1]
            keep = np.ones(r1 - r0, dtype=bool)
            if cut is not None and i == k - 1:
                keep = f["depth"][r0:r1] < cut
            new_row = np.cumsum(keep) - 1  # file-local row after the cut
            with h5py.File(os.path.join(outdir, "part-%d.h5" % (i + 1)), "w") as g:
                copy_attrs(f, g)

                def visit(name, obj):
                    if isinstance(obj, h5py.Group):
                        copy_attrs(obj, g.require_group(name))
                        return
                    rows = obj.shape and obj.shape[0] == n
                    data = obj[r0:r1][keep] if rows else obj[()]
                    if name == "parent":
                        data = np.where(data < 0, data, new_row[np.maximum(data - r0, 0)])
                    elif name == "tree_sample":
                        local = np.concatenate(([0], np.cumsum(data[1:] != data[:-1])))
                        data = (local + number).astype(data.dtype)
                    g.create_dataset(name, data=data)
                    copy_attrs(obj, g[name])

                f.visititems(visit)
                if cut is not None and i == k - 1:
                    g.attrs["tree_depth"] = cut
                number = int(g["tree_sample"][-1])


if __name__ == "__main__":
    main()
