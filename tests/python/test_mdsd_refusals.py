"""Bad input refused by the package, never half-used (issue 36): mdsd.read_table on a
whole number or a number beyond range (an uncaught OverflowError before), naming the file,
row, column and value; Verifier.verify on a draft tuple the scheme cannot produce (a draft
of q = 0, a repeated token under wor or cps, greedy's top tokens or spechub's hub out of
place, a tuple absent from a custom joint: probability 0 under D, which the verifiers would
count as accepted), while every tuple the scheme's own sampler draws is verified. Run by
tests/test_package.c."""

import os
import tempfile
import unittest

import numpy as np

import mdsd


class ReadTable(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def csv(self, text):
        path = os.path.join(self.tmp.name, "r.csv")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_huge_numbers_are_refused_naming_file_row_column_value(self):
        huge = "9" * 30
        for text, column, value in (
                (f"dump,n,alpha\na,2,0.5\nb,{huge},0.5\n", "n", huge),
                (f"dump,n,alpha\na,2,0.5\nb,3,{'1' * 400}\n", "alpha", "1" * 400),
                ("dump,positions\na,-9223372036854775809\n", "positions",
                 "-9223372036854775809")):
            with self.subTest(column=column):
                path = self.csv(text)
                with self.assertRaises(mdsd.MdsdError) as e:
                    mdsd.read_table(path, pandas=False)
                msg = str(e.exception)
                for part in (path, f"row {text.count(chr(10))}", f"column {column}", value):
                    self.assertIn(part, msg)

    def test_edges_still_read(self):
        t = mdsd.read_table(self.csv("dump,n,alpha,se\na,9223372036854775807,inf,-inf\n"),
                            pandas=False)
        self.assertEqual(int(t["n"][0]), 2**63 - 1)
        self.assertTrue(np.isposinf(t["alpha"][0]) and np.isneginf(t["se"][0]))


P = np.array([0.4, 0.3, 0.2, 0.1, 0.0])
Q = np.array([0.1, 0.2, 0.3, 0.4, 0.0])


class ImpossibleDrafts(unittest.TestCase):
    def refused(self, verifier, scheme, drafts, phrase, n=2, q=Q, joint=None):
        v = mdsd.Verifier(verifier, n=n, scheme=scheme)
        with self.assertRaises(mdsd.MdsdError) as e:
            v.verify(P, q, drafts, mdsd.Rng(1), joint=joint)
        self.assertIn(phrase, str(e.exception))

    def test_tuples_of_probability_zero_are_refused(self):
        self.refused("rrs", "iid", [4, 0], "draft 1 (token 4)")          # q(4) = 0
        self.refused("rrs", "iid", [0, 4], "q is 0")
        self.refused("rrsw", "wor", [3, 3], "repeats draft 1")
        self.refused("otm", "cps", [2, 2], "repeats draft 1")
        self.refused("rrs", "multi", [0, 1], "draft 2 (token 1)",
                     q=np.array([Q, [0.5, 0.0, 0.5, 0.0, 0.0]]))
        # greedy, n = 3: drafts 1, 2 are the top two of q (3, then 2), draft 3 off them
        self.refused("greedy", "greedy", [2, 3, 0], "most likely", n=3)
        self.refused("greedy", "greedy", [3, 2, 2], "off the fixed top tokens", n=3)
        # spechub: exactly one draft is the hub, argmax q = 3
        self.refused("spechub", "hub", [0, 1], "hub token 3")
        self.refused("spechub", "hub", [3, 3], "hub token 3")
        joint = (np.array([[0, 1], [1, 0]]), np.array([0.5, 0.5]))
        self.refused("otm", "custom", [0, 0], "not a tuple of the custom joint", q=None,
                     joint=joint)

    def test_every_tuple_the_scheme_draws_is_verified(self):
        joint = (np.array([[0, 1], [1, 0], [2, 2]]), np.array([0.5, 0.3, 0.2]))
        rng = mdsd.Rng(5)
        for verifier, scheme, n, q in (("rrs", "iid", 3, Q), ("rrsw", "wor", 3, Q),
                                       ("otm", "cps", 2, Q), ("greedy", "greedy", 3, Q),
                                       ("spechub", "hub", 2, Q),
                                       ("rrs", "multi", 2, np.array([Q, Q[::-1]])),
                                       ("otm", "custom", 2, None)):
            with self.subTest(scheme=scheme):
                v = mdsd.Verifier(verifier, n=n, scheme=scheme)
                prep = v.prepare(P, q, joint=joint if scheme == "custom" else None)
                sampler = mdsd.Sampler(q, n, scheme, joint=joint, V=5)
                for drafts in sampler.draw(rng, 500):
                    y = prep.verify(drafts, rng)
                    self.assertTrue(0 <= y < 5 and P[y] > 0)
                prep.close()


if __name__ == "__main__":
    unittest.main()
