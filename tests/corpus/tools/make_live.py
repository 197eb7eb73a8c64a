"""Makes a tree dump claim the contexts of live decoding, for the malformed-input corpus
(tests/corpus/): tree_contexts = live, tree_live_verifier = VERIFIER, and /tree_position,
/tree_tau rewritten consistently (tree i of the dump yields tau = 1 + i mod (L + 1) tokens; each
sample's first tree at position 0, every next one where the one before stopped), as
src/mdsd_runner/live.py writes them. Cases then corrupt one field with h5edit.py.

    make_live.py FILE VERIFIER
"""
import sys

import h5py
import numpy as np


def main(argv):
    path, verifier = argv[1], argv[2]
    with h5py.File(path, "r+") as f:
        parent, sample = f["parent"][:], f["tree_sample"][:]
        L = int(f.attrs["tree_depth"])
        roots = np.flatnonzero(parent == -1)
        tree = np.cumsum(parent == -1) - 1
        tau = 1 + np.arange(len(roots)) % (L + 1)
        pos = np.zeros(len(roots), np.int64)
        for i in range(1, len(roots)):
            if sample[roots[i]] == sample[roots[i - 1]]:
                pos[i] = pos[i - 1] + tau[i - 1]
        for name, per_tree in (("tree_position", pos), ("tree_tau", tau)):
            if name in f:
                del f[name]
            f.create_dataset(name, data=per_tree[tree].astype(np.int32))
        f.attrs["tree_contexts"] = "live"
        f.attrs["tree_live_verifier"] = verifier


if __name__ == "__main__":
    main(sys.argv)
