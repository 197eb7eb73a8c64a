"""Corrupts an HDF5 logit dump for the malformed-input corpus (tests/corpus/).
Run by case setups under Debian's /usr/bin/python3 (python3-h5py).

    h5edit.py FILE attr OBJ NAME KIND VALUE   set attribute NAME of OBJ ('/' or a path);
                                              KIND: int, float, str, bytes (hex),
                                              ints (comma list), big-str (VALUE = length)
    h5edit.py FILE delattr OBJ NAME           remove an attribute
    h5edit.py FILE del PATH                   remove a dataset or group
    h5edit.py FILE set PATH ROW[,COL] VALUE   one element ('nan', 'inf', '-inf' allowed)
    h5edit.py FILE fill PATH ROW0:ROW1 VALUE  rows ROW0..ROW1-1 of a rank-1 dataset
    h5edit.py FILE retype PATH DTYPE          rewrite a dataset with a numpy dtype
    h5edit.py FILE reshape PATH ROWS          keep only the first ROWS rows of a dataset
    h5edit.py FILE group PATH                 replace a dataset by an empty group
"""
import sys

import h5py
import numpy as np


def number(text):
    return float(text) if text in ("nan", "inf", "-inf") or "." in text or "e" in text else int(text)


def rewrite(f, path, data, attrs):
    del f[path]
    f.create_dataset(path, data=data)
    for k, v in attrs.items():
        f[path].attrs[k] = v


def main(argv):
    path, op, args = argv[1], argv[2], argv[3:]
    with h5py.File(path, "r+") as f:
        if op == "attr":
            obj, name, kind, value = args
            target = f[obj]
            if name in target.attrs:
                del target.attrs[name]
            if kind == "int":
                target.attrs[name] = np.int64(int(value))
            elif kind == "float":
                target.attrs[name] = np.float64(float(value))
            elif kind == "str":
                target.attrs[name] = value
            elif kind == "bytes":
                target.attrs[name] = np.bytes_(bytes.fromhex(value))
            elif kind == "ints":
                target.attrs[name] = np.array([int(x) for x in value.split(",")], dtype=np.int64)
            elif kind == "big-str":
                target.attrs[name] = np.bytes_(b"x" * int(value))
            else:
                raise SystemExit("unknown kind " + kind)
        elif op == "delattr":
            del f[args[0]].attrs[args[1]]
        elif op == "del":
            del f[args[0]]
        elif op == "set":
            ds = f[args[0]]
            index = tuple(int(x) for x in args[1].split(","))
            ds[index] = number(args[2])
        elif op == "fill":
            ds = f[args[0]]
            a, b = (int(x) for x in args[1].split(":"))
            ds[a:b] = number(args[2])
        elif op == "retype":
            ds = f[args[0]]
            rewrite(f, args[0], ds[...].astype(np.dtype(args[1])), dict(ds.attrs))
        elif op == "reshape":
            ds = f[args[0]]
            rewrite(f, args[0], ds[: int(args[1])], dict(ds.attrs))
        elif op == "group":
            del f[args[0]]
            f.create_group(args[0])
        else:
            raise SystemExit("unknown operation " + op)


if __name__ == "__main__":
    main(sys.argv)
