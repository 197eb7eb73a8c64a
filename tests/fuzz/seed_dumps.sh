#!/bin/sh
# Small valid dumps as seeds for fuzz_dump: tests/fuzz/seed_dumps.sh DIR [MDSD]
set -e
dir=$1
mdsd=${2:-./mdsd}
mkdir -p "$dir"
"$mdsd" toy --family zipf --vocab 4 --positions 6 --samples 2 --seed 1 -o "$dir/f32.h5" >/dev/null
"$mdsd" toy --family uniform --vocab 3 --positions 5 --samples 1 --seed 2 --dtype float16 --chunk-rows 2 -o "$dir/f16.h5" >/dev/null
"$mdsd" toy --family dirichlet --vocab 5 --positions 4 --samples 2 --seed 3 --dtype bfloat16 --drafts a,b -o "$dir/bf16.h5" >/dev/null
"$mdsd" toy --family zipf --vocab 6 --positions 8 --samples 2 --seed 4 --gzip 1 --chunk-rows 4 -o "$dir/gzip.h5" >/dev/null
# a truncation record (data/README.md, "Truncated rows"): top-2 rows of the float32 toy with
# their missing masses, so the fuzzer starts from the record's datasets too
/usr/bin/python3 - "$dir/f32.h5" "$dir/trunc.h5" <<'PY'
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r") as src, h5py.File(sys.argv[2], "w") as f:
    for key, value in src.attrs.items():
        f.attrs[key] = value
    for name in ("tokens", "sample_id", "position"):
        f[name] = src[name][:]
    for g in ["target"] + [f"drafts/{d}" for d in src["drafts"]]:
        z = src[g + "/logits"][:].astype(np.float64)
        lp = z - np.log(np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True)) - z.max(1, keepdims=True)
        keep = np.argsort(-lp, axis=1)[:, :2]
        out = np.full(lp.shape, -np.inf)
        np.put_along_axis(out, keep, np.take_along_axis(lp, keep, axis=1), axis=1)
        out = out.astype(np.float32)
        # the unseen mass as -expm1(log kept mass), never 1 - kept (cancellation)
        log_kept = np.logaddexp.reduce(out.astype(np.float64), axis=1)
        f[g + "/logits"] = out
        f[g + "/truncated"] = np.ones(len(out), np.uint8)
        f[g + "/missing_mass"] = np.maximum(-np.expm1(log_kept), 0.0)
        for key, value in src[g].attrs.items():
            f[g].attrs[key] = value
PY
