"""Two dumps compared by content (datasets, attributes), not bytes: a resumed or rebuilt
file may lay its chunks out differently from an uninterrupted run's."""

import h5py
import numpy as np

# Attributes that differ between two runs of the same command by design.
VOLATILE = ("created",)


def dump_items(path):
    """{object path: value} for every dataset (its values) and every attribute."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = (str(obj.dtype), obj[()])
            for k, v in obj.attrs.items():
                out[f"{name}@{k}"] = v
        for k, v in f.attrs.items():
            if k not in VOLATILE:
                out[f"@{k}"] = v
        f.visititems(visit)
    return out


def differences(a, b):
    """Names of the datasets and attributes where dumps A and B differ (empty: same)."""
    x, y = dump_items(a), dump_items(b)
    bad = sorted(set(x) ^ set(y))
    for k in sorted(set(x) & set(y)):
        u, v = x[k], y[k]
        if isinstance(u, tuple):
            same = u[0] == v[0] and np.array_equal(u[1], v[1])
        else:
            same = np.asarray(u).dtype == np.asarray(v).dtype and np.array_equal(u, v)
        if not same:
            bad.append(k)
    return bad


def assert_same_dump(test, a, b):
    test.assertEqual(differences(a, b), [], f"{a} and {b} differ")
