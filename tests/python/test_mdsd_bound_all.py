"""mdsd.alpha_star_result(..., method="all") against `mdsd bound --method all --json
--show-subset`: on random instances of every scheme, the same methods in the same order,
the same values bit for bit (every key but seconds), the same largest disagreement and
the same skipped methods; a failure or disagreement raises MdsdError carrying the routes.
Run by tests/test_package.c: `PYTHONPATH=src/python:tests/python /usr/bin/python3 -m
unittest test_mdsd_bound_all`."""

import ctypes
import json
import re
import os
import subprocess
import tempfile
import unittest
from unittest import mock

import numpy as np

import mdsd
from mdsd import _cli_jobs
from support import ROOT, mdsd_bin, csvlist


def cli_all(args, env=None):
    out = subprocess.run([mdsd_bin(), "bound", "--method", "all", "--json", "--show-subset",
                          *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300, env=env)
    return out.returncode, json.loads(out.stdout) if out.stdout else None, out.stderr


def as_json(routes, V):
    """The Python result in the CLI's JSON terms (subset: token ids; no times)."""
    methods = []
    for d in routes.methods:
        d = {k: v for k, v in d.items() if k != "seconds"}
        if "subset" in d:
            d["subset"] = [int(x) for x in np.flatnonzero(d["subset"])]
        methods.append(d)
    return {"alpha": routes.alpha, "methods": methods,
            "max_disagreement": routes.max_disagreement}


def cli_terms(j):
    return {"alpha": j["alpha"], "max_disagreement": j["max_disagreement"],
            "methods": [{k: v for k, v in d.items() if k != "seconds"} for d in j["methods"]]}


def same_message(terms):
    """A skipped (failed) route's message as its numbers: the CLI says it in flags
    ("--method sort"), Python in keywords ("method=sort"), from one library message."""
    for d in terms["methods"]:
        for k in ("skipped", "failed"):
            if k in d:
                d[k] = re.findall(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", d[k])
    return terms


class BoundAllAgreesWithCli(unittest.TestCase):
    def setUp(self):
        if mdsd_bin() is None:
            self.fail("MDSD_BIN is not set to the mdsd binary")

    def check(self, args, py_args, py_kw, V):
        rc, j, err = cli_all(args)
        self.assertEqual(rc, 0, err)
        self.assertFalse(j["failures"])
        r = mdsd.alpha_star_result(*py_args, method="all", want_subset=True, **py_kw)
        self.assertIsInstance(r, mdsd.AlphaRoutes)
        py, cli = as_json(r, V), cli_terms(j)
        for d in py["methods"]:
            for k in ("skipped", "failed"):
                self.assertNotIn("--", d.get(k, ""))  # Python's words
        for d in cli["methods"]:
            for k in ("skipped", "failed"):
                self.assertNotIn("`", d.get(k, ""))  # the CLI's words
        self.assertEqual(same_message(py), same_message(cli))
        for d in r.methods:
            if "alpha" in d:
                self.assertGreaterEqual(d["seconds"], 0.0)
        return r

    def test_random_instances_of_every_scheme(self):
        rng = np.random.default_rng(40)
        seen = set()
        for trial in range(24):
            scheme = ("iid", "wor", "greedy", "hub", "cps", "multi")[trial % 6]
            V = int(rng.integers(2, 9))
            n = int(rng.integers(2, 4))
            p = rng.dirichlet(np.full(V, 0.5))
            with self.subTest(scheme=scheme, V=V, n=n):
                if scheme == "multi":
                    q = rng.dirichlet(np.full(V, 0.5), size=n)
                    args = ["-p", csvlist(p), "-n", n, "-s", "multi"]
                    for row in q:
                        args += ["-q", csvlist(row)]
                else:
                    q = rng.dirichlet(np.full(V, 0.5))
                    args = ["-p", csvlist(p), "-q", csvlist(q), "-n", n, "-s", scheme]
                r = self.check(args, (p, q, n, scheme), {}, V)
                seen.update(d["method"] for d in r.methods)
        self.assertEqual(seen, {"sort", "k2", "maxflow", "brute", "lp-reduced", "lp-full"})

    def test_custom_joint_and_guards(self):
        """A custom law (--custom FILE, joint=), and a method skipped by a size guard
        (--max-vars, max_vars=) reported alike."""
        rng = np.random.default_rng(7)
        V = 4
        p = rng.dirichlet(np.ones(V))
        tokens = np.array([[0, 1], [1, 1], [2, 3], [3, 0]])
        prob = rng.dirichlet(np.ones(4))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "joint.txt")
            with open(path, "w") as f:
                for t, w in zip(tokens, prob):
                    f.write(f"{t[0]} {t[1]} {w!r}\n")
            self.check(["-p", csvlist(p), "-n", 2, "-s", "custom", "--custom", path],
                       (p, None, None, "custom"), {"joint": (tokens, prob)}, V)
        q = rng.dirichlet(np.ones(6))
        p6 = rng.dirichlet(np.ones(6))
        r = self.check(["-p", csvlist(p6), "-q", csvlist(q), "-n", 3, "-s", "iid",
                        "--max-vars", 100], (p6, q, 3, "iid"), {"max_vars": 100}, 6)
        self.assertTrue(any("skipped" in d for d in r.methods), r.methods)

    def test_alpha_star_all_and_leading_axes(self):
        rng = np.random.default_rng(3)
        P, Q = rng.dirichlet(np.ones(5), size=(2, 3)), rng.dirichlet(np.ones(5), size=(2, 3))
        a = mdsd.alpha_star(P, Q, 2, "wor", method="all")
        self.assertEqual(a.shape, (2, 3))
        self.assertTrue(np.array_equal(a, mdsd.alpha_star(P, Q, 2, "wor")))
        r = mdsd.alpha_star_result(P, Q, 2, "wor", method="all")
        self.assertEqual(r.shape, (2, 3))
        self.assertEqual(r[1, 2].alpha, a[1, 2])

    def test_disagreement_raises_with_the_routes(self):
        """The CLI's planted disagreement (its test hook) exits 1 naming the pair; the
        library reads no environment, so Python's path is shown by a library call whose
        route values are moved after it returns, as the hook does, and MDSD_ESOLVER."""
        p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
        env = dict(os.environ, MDSD_TEST_BOUND_OFFSET="brute:1e-6")
        rc, j, err = cli_all(["-p", csvlist(p), "-q", csvlist(q), "-n", 2, "-s", "iid"], env)
        self.assertEqual(rc, 1)
        self.assertTrue(j["failures"])
        self.assertIn("routes disagree", err)
        real = _cli_jobs.lib.mdsd_alpha_all

        def planted(pp, s, opts, routes, subsets, e):
            rc = real(pp, s, opts, routes, subsets, e)
            r = ctypes.cast(routes, ctypes.POINTER(mdsd._lib.AlphaRoutes)).contents
            r.routes[3].alpha += 1e-6
            msg = b"routes disagree: sort gives x, brute gives y"
            ctypes.cast(e, ctypes.POINTER(mdsd._lib.Err)).contents.msg = msg
            return 6 if rc == 0 else rc  # MDSD_ESOLVER

        with mock.patch.object(_cli_jobs, "lib", mock.Mock(mdsd_alpha_all=planted)):
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.alpha_star_result(p, q, 2, method="all")
        self.assertIn("routes disagree", str(cm.exception))
        routes = cm.exception.routes
        self.assertIsInstance(routes, mdsd.AlphaRoutes)
        self.assertEqual([d["method"] for d in routes.methods],
                         [d["method"] for d in j["methods"]])
        self.assertAlmostEqual(routes.methods[3]["alpha"], j["methods"][3]["alpha"], 15)

    def test_unknown_method_names_all(self):
        with self.assertRaises(mdsd.MdsdError) as cm:
            mdsd.alpha_star_result([0.5, 0.5], [0.5, 0.5], 2, method="every")
        self.assertIn("all", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
