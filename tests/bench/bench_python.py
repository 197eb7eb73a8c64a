"""Benchmark (not a test): the Python package's per-call overhead and batch throughput
beside the CLI. Run from the repository root after `make`:

    PYTHONPATH=src/python /usr/bin/python3 tests/bench/bench_python.py [--dump D] [--threads T]

Prints (1) microseconds per call of mdsd.alpha_star at V = 100 (iid, n = 2) beside the
bare C call through ctypes, and (2) positions per second of mdsd.batch (dump read through
mdsd.DumpReader included) and of `mdsd table` on the same dump rows with the same
settings (T = 0.7, n = 3, iid, alpha* and rrs), and checks their means agree."""

import argparse
import csv
import ctypes
import os
import subprocess
import tempfile
import time
import timeit

import numpy as np

import mdsd
from mdsd import _lib


def overhead():
    rng = np.random.default_rng(1)
    V = 100
    p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
    N = 20000
    t_py = min(timeit.repeat(lambda: mdsd.alpha_star(p, q, n=2), number=N, repeat=5)) / N
    s = _lib.Scheme(0, 2, V, q.ctypes.data, None)
    res, err = _lib.AlphaResult(), _lib.Err()
    f, pa, bs, br, be = (_lib.lib.mdsd_alpha, p.ctypes.data, ctypes.byref(s), ctypes.byref(res),
                         ctypes.byref(err))
    t_c = min(timeit.repeat(lambda: f(pa, bs, 0, None, br, None, be), number=N, repeat=5)) / N
    print(f"alpha_star(V = 100, iid, n = 2): {t_py * 1e6:.2f} us per call; bare ctypes call "
          f"{t_c * 1e6:.2f} us; Python layer {(t_py - t_c) * 1e6:.2f} us")


def throughput(dump, threads, mdsd_bin):
    t0 = time.perf_counter()
    with mdsd.DumpReader(dump) as r:
        t = r.logits("target")
        d = r.logits(r.draft_names[0])
        N = r.N
    res = mdsd.batch(t, d, temperature=0.7, n=3, scheme="iid", verifier="rrs", threads=threads)
    t_py = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.csv")
        t0 = time.perf_counter()
        subprocess.run([mdsd_bin, "table", dump, "-o", out, "-t", "0.7", "-d", "3", "-s", "iid",
                        "-v", "rrs", "--threads", str(threads)], check=True,
                       stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        t_cli = time.perf_counter() - t0
        with open(out) as f:
            rows = {r["method"]: float(r["alpha"]) for r in csv.DictReader(f)}
    print(f"{dump}: N = {N}, T = 0.7, n = 3, iid, alpha* + rrs, {threads} threads")
    print(f"  mdsd.batch (read included): {N / t_py:,.0f} positions/s ({t_py:.3f} s)")
    print(f"  mdsd table:                 {N / t_cli:,.0f} positions/s ({t_cli:.3f} s)")
    print(f"  means: batch alpha* {res.alpha_star.mean():.10f} rrs {res.rate.mean():.10f}; "
          f"table {rows['bound']:.10f} {rows['rrs']:.10f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", default="data/kjv-ngram.h5")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mdsd", default="./mdsd")
    a = ap.parse_args()
    overhead()
    throughput(a.dump, a.threads, a.mdsd)
