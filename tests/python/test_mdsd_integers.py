"""Every integer argument of every public function of the package through the one strict
converter (mdsd._uint; issue 36): the public functions, classes and methods are enumerated
from mdsd.__all__ and their signatures, each integer parameter found (an int default, a
name of a count, or the verifier options of **opts), and each is fed 2**64 + 1, -1, 2.5
and True: a clean refusal (MdsdError, TypeError or ValueError) every time, never a wrap
(`mdsd.truncate(p, top_k=2**64 + 1)` kept the top 1 token), a truncation or a crash. A
new integer parameter without a case here fails the enumeration test. Run by
tests/test_package.c."""

import inspect
import os
import tempfile
import unittest

import numpy as np

import mdsd
from support import ROOT

SHIPPED = os.path.join(ROOT, "data", "kjv-ngram.h5")
TREES = os.path.join(ROOT, "data", "kjv-trees.h5")
TOY = os.path.join(ROOT, "papers", "block", "toys", "toy3.txt")

BAD = (2**64 + 1, -1, 2.5, True)
# Parameters that are integers (or lists of them) without an int default.
INTEGER_NAMES = {"n", "V", "size", "rows", "sequences", "depths", "draft_counts", "tree"}
# The verifier options every **opts takes (mdsd._vopts).
OPTS_INTEGERS = ("is_top", "max_tuples")

P, Q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
RNG = np.random.default_rng(3)
T, D = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3))
JOINT = (np.array([[0, 1], [1, 0]]), np.array([0.5, 0.5]))
WORK = tempfile.mkdtemp(prefix="mdsd-test-integers-")
OUT = os.path.join(WORK, "r.csv")


def reader():
    return mdsd.DumpReader(SHIPPED)


def writer(**kw):
    args = dict(V=3, draft_names=["d"])
    args.update(kw)
    w = mdsd.DumpWriter(os.path.join(WORK, "w.h5"), **args)
    w.abort()


def tree_writer(live=False, **kw):
    args = dict(V=5, draft_names=["d"], sequences=2, depth=2)
    if live:
        args["live_verifier"] = "rrs"
    args.update(kw)
    return mdsd.TreeDumpWriter(os.path.join(WORK, "t.h5"), **args)


def tree_written(tau):
    w = tree_writer(live=True)
    try:
        w.write_tree(T[:3, :2].repeat(3, axis=1)[:, :5], [D[:3, :2].repeat(3, axis=1)[:, :5]],
                     [0, 2, 4], [-1, 0, 0], [-1, 1, 3], [[1, 3], [2, -1], [-1, 0]], sample=0,
                     position=0, tau=tau)
    finally:
        w.abort()


# (qualified name, parameter) -> a call with that parameter set to v, every other
# argument valid (the call with a valid value runs: test_valid_values_run).
CASES = {
    ("Rng", "seed"): lambda v: mdsd.Rng(v),
    ("Rng.seed", "seed"): lambda v: mdsd.Rng(1).seed(v),
    ("alpha_star", "n"): lambda v: mdsd.alpha_star(P, Q, n=v),
    ("alpha_star_result", "n"): lambda v: mdsd.alpha_star_result(P, Q, n=v),
    ("alpha_star", "max_tuples"): lambda v: mdsd.alpha_star(P, Q, n=2, max_tuples=v),
    ("alpha_star", "max_vars"): lambda v: mdsd.alpha_star(P, Q, n=2, method="all", max_vars=v),
    ("alpha_star_result", "max_tuples"): lambda v: mdsd.alpha_star_result(P, Q, n=2,
                                                                          max_tuples=v),
    ("alpha_star_result", "max_vars"): lambda v: mdsd.alpha_star_result(P, Q, n=2,
                                                                        method="lp-full",
                                                                        max_vars=v),
    ("verifier_rate", "n"): lambda v: mdsd.verifier_rate("rrs", P, Q, n=v),
    ("verifier_rate", "is_top"): lambda v: mdsd.verifier_rate("is", P, Q, n=2, is_top=v),
    ("verifier_rate", "max_tuples"): lambda v: mdsd.verifier_rate("rrs", P, Q, n=2, max_tuples=v),
    ("Verifier", "n"): lambda v: mdsd.Verifier("rrs", n=v).verify(P, Q, [0, 1], mdsd.Rng(1)),
    ("Verifier", "is_top"): lambda v: mdsd.Verifier("is", n=2, is_top=v),
    ("Verifier", "max_tuples"): lambda v: mdsd.Verifier("rrs", n=2, max_tuples=v),
    ("Sampler", "n"): lambda v: mdsd.Sampler(Q, n=v),
    ("Sampler", "V"): lambda v: mdsd.Sampler(scheme="custom", joint=JOINT, V=v),
    ("Sampler.draw", "size"): lambda v: mdsd.Sampler(Q, 2).draw(mdsd.Rng(1), size=v),
    ("sample_drafts", "n"): lambda v: mdsd.sample_drafts(Q, v),
    ("sample_drafts", "size"): lambda v: mdsd.sample_drafts(Q, 2, size=v),
    ("monte_carlo", "n"): lambda v: mdsd.monte_carlo("rrs", P, Q, n=v, trials=10),
    ("monte_carlo", "trials"): lambda v: mdsd.monte_carlo("rrs", P, Q, n=2, trials=v),
    ("monte_carlo", "seed"): lambda v: mdsd.monte_carlo("rrs", P, Q, n=2, trials=10, seed=v),
    ("monte_carlo", "position"): lambda v: mdsd.monte_carlo("rrs", P, Q, n=2, trials=10,
                                                            position=v),
    ("monte_carlo", "threads"): lambda v: mdsd.monte_carlo("rrs", P, Q, n=2, trials=10,
                                                           threads=v),
    ("monte_carlo", "is_top"): lambda v: mdsd.monte_carlo("is", P, Q, n=2, trials=10, is_top=v),
    ("monte_carlo", "max_tuples"): lambda v: mdsd.monte_carlo("rrs", P, Q, n=2, trials=10,
                                                              max_tuples=v),
    ("truncate", "top_k"): lambda v: mdsd.truncate(P, top_k=v),
    ("lp_export", "n"): lambda v: mdsd.lp_export(os.path.join(WORK, "x.dat"), P, Q, n=v),
    ("DumpReader.logits", "which"): lambda v: reader().logits(v, 0, 1),
    ("DumpReader.logits", "row0"): lambda v: reader().logits(-1, v, 1),
    ("DumpReader.logits", "rows"): lambda v: reader().logits(-1, 0, v),
    ("DumpReader.rows", "row0"): lambda v: reader().rows(v, 1),
    ("DumpReader.rows", "rows"): lambda v: reader().rows(0, v),
    ("DumpWriter", "V"): lambda v: writer(V=v),
    ("DumpWriter", "chunk_rows"): lambda v: writer(chunk_rows=v),
    ("DumpWriter", "gzip"): lambda v: writer(gzip=v),
    ("DumpWriter", "target_vocab_size"): lambda v: writer(target_vocab_size=v),
    ("TreeDumpWriter", "V"): lambda v: tree_writer(V=v).abort(),
    ("TreeDumpWriter", "chunk_rows"): lambda v: tree_writer(chunk_rows=v).abort(),
    ("TreeDumpWriter", "gzip"): lambda v: tree_writer(gzip=v).abort(),
    ("TreeDumpWriter", "sequences"): lambda v: tree_writer(sequences=v).abort(),
    ("TreeDumpWriter", "target_vocab_size"): lambda v: tree_writer(target_vocab_size=v).abort(),
    ("TreeDumpWriter.write_tree", "tau"): tree_written,
}
for _name in ("n", "top_k", "trials", "seed", "row0", "threads", "is_top", "max_tuples"):
    CASES[("batch", _name)] = (lambda name: lambda v: mdsd.batch(
        T, D, verifier="is", **{"n": 2, **{name: v}}))(_name)
for _name in ("top_k", "trials", "seed", "threads", "is_top", "max_tuples"):
    CASES[("table", _name)] = (lambda name: lambda v: mdsd.table(
        SHIPPED, OUT, rows=(0, 8), pandas=False, **{name: v}))(_name)
    CASES[("evaluate", _name)] = (lambda name: lambda v: mdsd.evaluate(
        T, D, pandas=False, **{name: v}))(_name)
# (vocab and positions too, though the enumeration cannot tell them from evaluate's arrays)
for _name in ("vocab", "positions", "seed", "samples", "chunk_rows", "gzip", "threads"):
    CASES[("toy", _name)] = (lambda name: lambda v: mdsd.toy(
        os.path.join(WORK, "toy.h5"), **{"family": "dirichlet", "vocab": 3, "positions": 4,
                                         name: v}))(_name)
for _name in ("count", "seed", "trials", "threads"):
    CASES[("check", _name)] = (lambda name: lambda v: mdsd.check(
        only="k2-closed-form", pandas=False, progress=False, **{"count": 1, name: v}))(_name)
for _name in ("n", "max_tuples"):
    CASES[("subset_probability", _name)] = (lambda name: lambda v: mdsd.subset_probability(
        **{"q": Q, "n": 2, "scheme": "iid", "subset": [0, 2], name: v}))(_name)
# mdsd.plot and its data routes: n picks the rows of a results CSV (made once, below)
PLOT_CSV = os.path.join(WORK, "plot.csv")
for _fn in ("plot", "plot_series", "plot_matplotlib"):
    CASES[(_fn, "n")] = (lambda fn: lambda v: getattr(mdsd, fn)(
        PLOT_CSV, *([os.path.join(WORK, "f.png")] if fn == "plot" else []),
        kind="vs-temperature", n=v,
        **({"scripts": os.path.join(ROOT, "plots")} if fn == "plot" else {})))(_fn)
CASES[("table", "rows")] = lambda v: mdsd.table(SHIPPED, OUT, rows=(0, v), pandas=False)
CASES[("table", "draft_counts")] = lambda v: mdsd.table(SHIPPED, OUT, rows=(0, 8),
                                                        draft_counts=[v], pandas=False)
CASES[("evaluate", "draft_counts")] = lambda v: mdsd.evaluate(T, D, draft_counts=[v],
                                                              pandas=False)
for _name in ("sequences", "depths"):
    CASES[("block", _name)] = (lambda name: lambda v: mdsd.block(
        TREES, os.path.join(WORK, "b.csv"), pandas=False, **{name: [v]}))(_name)
CASES[("block", "is_top")] = lambda v: mdsd.block(TREES, os.path.join(WORK, "b.csv"),
                                                  verifiers="is", is_top=v, pandas=False)
CASES[("block", "threads")] = lambda v: mdsd.block(TREES, os.path.join(WORK, "b.csv"),
                                                   threads=v, pandas=False)
CASES[("block", "tree")] = lambda v: mdsd.block(markov=TOY, verifier="rrs", tree=(2, v),
                                                scheme="iid")
CASES[("block", "trials")] = lambda v: mdsd.block(markov=TOY, verifier="rrs", sequences=2,
                                                  depths=2, trials=v, simulate=True)
CASES[("block", "seed")] = lambda v: mdsd.block(markov=TOY, verifier="rrs", sequences=2,
                                                depths=2, trials=10, simulate=True, seed=v)
CASES[("block", "markov sequences")] = lambda v: mdsd.block(markov=TOY, verifier="rrs",
                                                            sequences=v, depths=2)
CASES[("block", "markov depths")] = lambda v: mdsd.block(markov=TOY, verifier="rrs",
                                                         sequences=2, depths=v)

# A valid value per parameter (the call runs with it): the cases exercise the argument,
# not a failure elsewhere.
VALID = {"which": -1, "rows": 1, "V": 3, "max_tuples": 0, "max_vars": 0, "is_top": 0, "trials": 10,
         "threads": 1, "position": 0, "seed": 1, "row0": 0, "top_k": 0, "size": 2,
         "chunk_rows": 0, "gzip": 0, "target_vocab_size": 0, "samples": 0, "vocab": 3,
         "positions": 4}


def public_callables():
    """(qualified name, function) of every public function, class (its __init__) and
    public method of mdsd.__all__."""
    for name in mdsd.__all__:
        obj = getattr(mdsd, name)
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue
            if "__init__" in vars(obj):
                yield name, obj.__init__
            for m, f in vars(obj).items():
                if not m.startswith("_") and inspect.isfunction(f):
                    yield f"{name}.{m}", f
        elif inspect.isfunction(obj):
            yield name, obj


def integer_parameters(f):
    for p in inspect.signature(f).parameters.values():
        if p.name.startswith("_"):
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD and p.name == "opts":
            yield from OPTS_INTEGERS
        elif (type(p.default) is int) or p.name in INTEGER_NAMES:
            yield p.name


# Parameters the enumeration takes for integers by name that are not: why.
NOT_INTEGERS = {("plot", "size"): "the figure's size preset: screen, column or full"}


def setUpModule():
    mdsd.table(SHIPPED, PLOT_CSV, rows=(0, 8), pandas=False)


class Integers(unittest.TestCase):
    def test_every_integer_parameter_has_a_case(self):
        found = {(q, p) for q, f in public_callables() for p in integer_parameters(f)}
        found -= set(NOT_INTEGERS)
        self.assertGreater(len(found), 40)
        missing = sorted(found - set(CASES))
        self.assertEqual(missing, [], "integer parameters without a case in CASES")

    def test_bad_values_are_refused(self):
        for (qual, param), call in sorted(CASES.items()):
            for v in BAD:
                if param == "which" and v == -1:
                    continue  # -1 is mdsd.dump.TARGET, the target's logits
                with self.subTest(function=qual, parameter=param, value=v):
                    with self.assertRaises((mdsd.MdsdError, TypeError, ValueError)):
                        call(v)

    def test_valid_values_run(self):
        for (qual, param), call in sorted(CASES.items()):
            name = param.split()[-1]
            v = 4 if (qual, param) == ("block", "is_top") else VALID.get(name, 2)
            with self.subTest(function=qual, parameter=param, value=v):
                call(v)

    def test_truncate_keeps_every_token_for_a_huge_valid_top_k(self):
        self.assertTrue(np.array_equal(mdsd.truncate(P, top_k=2**64 - 1), P))
        with self.assertRaises(mdsd.MdsdError) as e:
            mdsd.truncate(P, top_k=2**64 + 1)
        self.assertIn("out of range", str(e.exception))


def tearDownModule():
    import shutil
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
