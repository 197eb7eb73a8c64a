"""CLI options bound as Python keywords, against the CLI's --json on the same inputs:
mdsd.monte_carlo(..., check_output=True) against `mdsd accept --trials T --seed S
--check-output --json` (the chi-square statistic, dof and p-value of the output histogram,
number for number: both call the library's chi-square test, mdsd_output_chisq in Python);
mdsd.subset_probability(q, n, scheme, subset, max_tuples=) against `mdsd draft --subset
LIST --max-tuples M --json`'s Q; bad values refused naming the keyword. Run by tests/test_package.c: `PYTHONPATH=src/python:tests/python
/usr/bin/python3 -m unittest test_mdsd_binds`."""

import json
import unittest

import numpy as np

import mdsd
from support import mdsd_cli as cli, csvlist


def pair(seed, V):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
    return p, q


class CheckOutput(unittest.TestCase):
    CASES = [  # (verifier, n, V, trials, seed, distribution seed)
        ("rrs", 2, 5, 20000, 3, 1),
        ("kseq", 3, 12, 5000, 11, 2),  # small cells pooled
        ("sd", 1, 40, 3000, 7, 3),
    ]

    def test_equals_the_cli(self):
        for verifier, n, V, trials, seed, dseed in self.CASES:
            p, q = pair(dseed, V)
            want = json.loads(cli("accept", "-p", csvlist(p), "-q", csvlist(q), "-n", n, "-v",
                                  verifier, "--trials", trials, "--seed", seed,
                                  "--check-output", "--json"))
            mc = mdsd.monte_carlo(verifier, p, q, n=n, trials=trials, seed=seed,
                                  check_output=True)
            check = mc.output_check
            w = want["output_check"]
            self.assertEqual(check.dof, w["dof"], verifier)
            self.assertEqual(check.statistic, w["statistic"], verifier)
            self.assertEqual(check.p_value, w["p_value"], verifier)
            self.assertEqual(list(want["ci95"]), [mc.ci_low, mc.ci_high], verifier)
            self.assertEqual(int(mc.histogram.sum()), trials)
            self.assertGreater(check.dof, 0)

    def test_over_positions(self):
        p = np.stack([pair(s, 6)[0] for s in (1, 2)])
        q = np.stack([pair(s, 6)[1] for s in (1, 2)])
        check = mdsd.monte_carlo("rrs", p, q, n=2, trials=4000, seed=5,
                                 check_output=True).output_check
        self.assertEqual(check.statistic.shape, (2,))
        for k in range(2):
            one = mdsd.monte_carlo("rrs", p[k], q[k], n=2, trials=4000, seed=5, position=k,
                                   check_output=True).output_check
            self.assertEqual(check.statistic[k], one.statistic)
            self.assertEqual(check.dof[k], one.dof)

    def test_off_by_default(self):
        p, q = pair(1, 5)
        mc = mdsd.monte_carlo("rrs", p, q, n=2, trials=100, seed=1)
        self.assertIsInstance(mc, mdsd.MonteCarlo)
        self.assertIsNone(mc.histogram)
        self.assertIsNone(mc.output_check)

    def test_bad_value_named(self):
        p, q = pair(1, 5)
        for bad in ("yes", 1, None):
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.monte_carlo("rrs", p, q, n=2, trials=100, check_output=bad)
            self.assertIn("check_output", str(cm.exception))


class Subset(unittest.TestCase):
    CASES = [  # (scheme, n, V, subset, distribution seed)
        ("iid", 2, 5, [0, 2], 1),
        ("wor", 3, 7, [1, 3, 4, 6, 3], 2),  # a repeated id counts once
        ("hub", 2, 6, [5], 3),
        ("cps", 2, 6, [0, 1, 2], 4),
    ]

    def test_equals_the_cli(self):
        for scheme, n, V, H, dseed in self.CASES:
            q = pair(dseed, V)[1]
            want = json.loads(cli("draft", "-q", csvlist(q), "-n", n, "--scheme", scheme,
                                  "--subset", ",".join(map(str, H)), "--json"))
            got = mdsd.subset_probability(q, n, scheme, H)
            self.assertEqual(got, want["Q"], scheme)
            self.assertEqual(mdsd.subset_probability(q, n, scheme, np.array(H)), got)

    def test_whole_and_empty(self):
        q = pair(1, 5)[1]
        self.assertAlmostEqual(mdsd.subset_probability(q, 2, "iid", range(5)), 1.0, delta=1e-12)
        self.assertEqual(mdsd.subset_probability(q, 2, "iid", []), 0.0)

    def test_max_tuples_guard(self):
        q = pair(1, 20)[1]
        with self.assertRaises(mdsd.MdsdError):
            mdsd.subset_probability(q, 3, "iid", [0], max_tuples=100)
        self.assertGreater(mdsd.subset_probability(q, 3, "iid", [0, 1], max_tuples=8000), 0)

    def test_bad_values_named(self):
        q = pair(1, 5)[1]
        for bad, name in (([5], "subset"), ([-1], "subset"), ([1.5], "subset"), ("0,1", "subset"),
                          ([[0, 1]], "subset")):
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.subset_probability(q, 2, "iid", bad)
            self.assertIn(name, str(cm.exception), bad)
        self.assertEqual(mdsd.subset_probability(q, 2, "iid", [0], max_tuples=0),  # the default
                         mdsd.subset_probability(q, 2, "iid", [0]))
        for bad in (-1, 2.5):
            with self.assertRaises(mdsd.MdsdError) as cm:
                mdsd.subset_probability(q, 2, "iid", [0], max_tuples=bad)
            self.assertIn("max_tuples", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
