"""Paths and the command-line runner shared by the Python tests (run from the repository
root by tests/test_runner.c: `PYTHONPATH=src:src/python:tests/python /usr/bin/python3 -m unittest`)."""

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "src", "python"))  # the mdsd package the runner imports
RUNNER = os.path.join(ROOT, "src", "bin", "mdsd-runner")


def run_cli(*args, env=None):
    """(exit status, stdout, stderr) of `mdsd-runner ARGS`."""
    proc = subprocess.run([RUNNER, *map(str, args)], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), cwd=ROOT, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def mdsd_cli(*args, ok=(0,)):
    """stdout of `mdsd ARGS` (the binary under test), asserting its exit status is in ok."""
    out = subprocess.run([mdsd_bin(), *map(str, args)], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    assert out.returncode in ok, (args, out.returncode, out.stderr)
    return out.stdout


def csvlist(x):
    """A vector as the command line takes it: comma-separated, every digit kept."""
    return ",".join(repr(float(v)) for v in x)


def mdsd_bin():
    """The mdsd binary under test (MDSD_BIN, as for the C tests), or None without one."""
    path = os.environ.get("MDSD_BIN", "mdsd")
    path = path if os.path.isabs(path) else os.path.join(ROOT, path)
    return path if os.access(path, os.X_OK) else None


def run_main(*args):
    """(exit status, stdout, stderr) of the same command run in this process (faster)."""
    import contextlib
    import io

    from mdsd_runner.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def replay_sampler(test, response, rows, rng, temperature, tol, where):
    """Checks that each token of `response` is what pipeline.sample_token draws with the
    sample's stream `rng` from logits within `tol` of `rows` (float64 [len, V]); returns
    (tokens checked, tokens). Greedy (temperature 0): the argmax, where the top two logits
    are more than 2 tol apart. Sampled: the inverse-CDF draw u lies in the token's CDF
    interval widened by expm1(2 tol / T) (logits within tol move each weight by a factor
    within exp(+-tol / T), so the normalised CDF by less than that)."""
    import math

    import numpy as np
    checked = 0
    for j, t in enumerate(response):
        z = rows[j]
        if temperature == 0:
            top = np.sort(z)[-2:]
            if top[1] - top[0] > 2 * tol:
                checked += 1
                test.assertEqual(t, int(np.argmax(z)), (where, j))
            continue
        w = np.exp((z - z.max()) / temperature)
        cdf = np.cumsum(w) / w.sum()
        u = rng.random()
        lo, hi = (cdf[t - 1] if t else 0.0), cdf[t]
        slack = math.expm1(2 * tol / temperature)
        test.assertTrue(lo - slack <= u <= hi + slack, (where, j, t, u, lo, hi))
        checked += 1
    return checked, len(response)
