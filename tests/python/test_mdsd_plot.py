"""mdsd.plot, mdsd.plot_series and mdsd.plot_matplotlib against `mdsd plot`: on a results
CSV of `mdsd table` and a block CSV of `mdsd block`, the same options give the CLI's figure
byte for byte and the same gnuplot data, bounds and variables (a fake gnuplot first on PATH
keeps what it was given); plot_series holds the CSV's rows and exactly the numbers written
for gnuplot; plot_matplotlib draws as many lines with the same values; bad inputs are
refused naming the CSV, with no file left. Run by tests/test_package.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd_plot`."""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np

import mdsd
from support import ROOT, mdsd_bin

# (CLI arguments, Python keywords) over r.csv (results) or b.csv (block)
CASES = [
    ("r.csv", ["--kind", "vs-drafts", "--dump", "toy.h5:b", "--temperature", "1"],
     dict(kind="vs-drafts", dump="toy.h5:b", temperature=1)),
    ("r.csv", ["--kind", "vs-temperature", "--dumps", "all", "--n", "2", "--label", "toy.h5:a=A",
               "--label", "rrs=RRS", "--title", "my 't'", "--size", "column", "--legend", "below"],
     dict(kind="vs-temperature", dumps="all", n=2, labels={"toy.h5:a": "A", "rrs": "RRS"},
          title="my 't'", size="column", legend="below")),
    ("r.csv", ["--kind", "per-draft", "--dump", "toy.h5:a", "--temperature", "0.5", "--n", "3",
               "--scheme", "iid", "--method", "rrs,kseq"],
     dict(kind="per-draft", dump="toy.h5:a", temperature=0.5, n=3, scheme="iid",
          method=["rrs", "kseq"])),
    ("r.csv", ["--kind", "gap", "--dump", "toy.h5:a", "--n", "3", "--terminal", "svg size 400,300",
               "--scripts", "plots"],
     dict(kind="gap", dump="toy.h5:a", n=3, terminal="svg size 400,300", scripts="plots")),
    ("b.csv", [], dict()),
    ("b.csv", ["--kind", "block-speedup", "--label", "kseq=K-seq", "--legend", "top-left"],
     dict(kind="block-speedup", labels={"kseq": "K-seq"}, legend="top-left")),
    ("b.csv", ["--kind", "block-reach", "--method", "kseq", "--n", "1"],
     dict(kind="block-reach", method="kseq", n=1)),
]

FAKE = """#!/bin/sh
if [ "$1" = "-e" ] && [ -n "$3" ]; then
  a="$2"; d=${a#*datafile=\\'}; d=${d%%\\'*}; b=${a#*boundfile=\\'}; b=${b%%\\'*}
  cp "$d" "$PLOT_KEEP/data"; cp "$b" "$PLOT_KEEP/bounds"; printf '%s\\n%s\\n' "$a" "$4" > "$PLOT_KEEP/args"
fi
exec REAL "$@"
"""


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def blocks(text):
    """The data blocks gnuplot was given: [(title, [(x, y, se), ...]), ...]."""
    out = []
    for block in text.split("\n\n\n"):
        rows = [r for r in block.split("\n") if r]
        if rows:
            out.append((rows[0].strip('"'), [tuple(map(float, r.split())) for r in rows[1:]]))
    return out


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = mdsd_bin()
        if cls.bin is None:
            raise unittest.SkipTest("no mdsd binary (MDSD_BIN)")
        cls.dir = tempfile.mkdtemp(prefix="mdsd-pyplot-")
        cls.keep = os.path.join(cls.dir, "keep")
        os.mkdir(cls.keep)
        os.mkdir(os.path.join(cls.dir, "bin"))
        fake = os.path.join(cls.dir, "bin", "gnuplot")
        with open(fake, "w") as f:
            f.write(FAKE.replace("REAL", shutil.which("gnuplot")))
        os.chmod(fake, 0o700)
        cls.env = dict(os.environ)
        os.environ["PATH"] = os.path.join(cls.dir, "bin") + os.pathsep + os.environ["PATH"]
        os.environ["PLOT_KEEP"] = cls.keep
        os.environ["MDSD_PLOTS"] = os.path.join(ROOT, "plots")
        run = lambda *a: subprocess.run([cls.bin, *map(str, a)], cwd=cls.dir, check=True,
                                        capture_output=True)
        run("toy", "-o", "toy.h5", "--family", "zipf", "--vocab", 40, "--positions", 160,
            "--drafts", "a,b")
        run("table", "toy.h5", "-o", "r.csv", "-t", "0.5,1", "-d", "1,2,3", "-v", "rrs,kseq,greedy",
            "--draft-model", "a,b")
        run("block", os.path.join(ROOT, "data", "kjv-trees.h5"), "--verifiers", "sd,kseq",
            "--sequences", "1,2", "--depth", "1,2", "--cost", "0,0.5", "-o", "b.csv")
        os.symlink(os.path.join(ROOT, "plots"), os.path.join(cls.dir, "plots"))  # scripts="plots"
        cls.r = os.path.join(cls.dir, "r.csv")
        cls.b = os.path.join(cls.dir, "b.csv")

    @classmethod
    def tearDownClass(cls):
        os.environ.clear()
        os.environ.update(cls.env)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def kept(self):
        got = {}
        for name in ("data", "bounds", "args"):
            with open(os.path.join(self.keep, name)) as f:
                got[name] = f.read()
            os.unlink(os.path.join(self.keep, name))
        # the temporary names differ from run to run
        got["args"] = re.sub(r"/tmp/mdsd-plot-[a-z]+-\w+|outfile='[^']*'", "X", got["args"])
        return got

    def cli(self, source, args, output):
        proc = subprocess.run([self.bin, "plot", source, *args, "-o", output], cwd=self.dir,
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return self.kept(), proc.stderr

    def test_the_cli_figure_and_gnuplot_input(self):
        for i, (source, args, kw) in enumerate(CASES):
            ext = "svg" if "svg" in str(kw.get("terminal", "")) else "png"
            a, b = os.path.join(self.dir, f"cli{i}.{ext}"), os.path.join(self.dir, f"py{i}.{ext}")
            want, _ = self.cli(source, args, a)
            cwd = os.getcwd()
            os.chdir(self.dir)  # scripts="plots" and the CSV are relative, as for the CLI
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.assertEqual(mdsd.plot(source, b, **kw), b)
            finally:
                os.chdir(cwd)
            got = self.kept()
            self.assertEqual(got, want, f"case {i}: {args}")
            with open(a, "rb") as fa, open(b, "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), f"case {i}: the figures differ")
            with open(b + ".provenance.json") as f:
                prov = json.load(f)
            self.assertEqual(prov["tool"], "mdsd.plot")
            self.assertEqual(prov["source"], source)
            self.assertEqual(prov.get("labels", {}), kw.get("labels", {}))

    def test_series_are_the_csv_rows_and_the_gnuplot_data(self):
        rows = read_csv(self.r)
        fig = mdsd.plot_series(self.r, kind="vs-drafts", dump="toy.h5:a", temperature=0.5)
        self.assertEqual((fig.kind, fig.title, fig.z), ("vs-drafts", "toy.h5:a, T = 0.5", 1.96))
        self.assertEqual(fig.interval, "95% CI (±1.96 s.e.)")
        # every (scheme, method) of the CSV at that dump and T, the bounds after the verifiers
        want = {(r["scheme"], r["method"]) for r in rows
                if r["dump"] == "toy.h5:a" and float(r["temperature"]) == 0.5}
        self.assertEqual({(ln.scheme, ln.method if not ln.bound else "bound") for ln in fig.lines},
                         want)
        self.assertEqual([ln.bound for ln in fig.lines], sorted(ln.bound for ln in fig.lines))
        for ln in fig.lines:
            sel = sorted((int(r["n"]), float(r["alpha"]), float(r["stderr"])) for r in rows
                         if r["dump"] == "toy.h5:a" and float(r["temperature"]) == 0.5
                         and r["scheme"] == ln.scheme and r["method"] == ln.method)
            self.assertEqual(ln.x.tolist(), [s[0] for s in sel], ln.label)
            self.assertEqual(ln.y.tolist(), [s[1] for s in sel], ln.label)
            self.assertEqual(ln.se.tolist(), [s[2] for s in sel], ln.label)
            np.testing.assert_array_equal(ln.err, 1.96 * ln.se)
            self.assertEqual(ln.style, ln.scheme if ln.bound else ln.method)
            self.assertEqual(ln.label, f"α* {ln.scheme}" if ln.bound else f"{ln.method} ({ln.scheme})")
        # the gnuplot route writes these very numbers
        self.cli("r.csv", ["--kind", "vs-drafts", "--dump", "toy.h5:a", "--temperature", "0.5"],
                 os.path.join(self.dir, "s.png"))
        # (self.cli consumed the kept files: run again to read them raw)
        subprocess.run([self.bin, "plot", "r.csv", "--kind", "vs-drafts", "--dump", "toy.h5:a",
                        "--temperature", "0.5", "-o", "s.png"], cwd=self.dir, check=True,
                       capture_output=True)
        with open(os.path.join(self.keep, "data")) as f:
            data = blocks(f.read())
        with open(os.path.join(self.keep, "bounds")) as f:
            data += blocks(f.read())
        self.assertEqual(len(data), len(fig.lines))
        for (title, pts), ln in zip(data, fig.lines):
            self.assertEqual(title, ln.label)
            self.assertEqual(pts, list(zip(ln.x.tolist(), ln.y.tolist(), ln.se.tolist())))

    def test_block_series_are_the_block_csv_rows(self):
        rows = read_csv(self.b)
        fig = mdsd.plot_series(self.b)  # a block CSV's default kind
        self.assertEqual(fig.kind, "block-depth")
        labels = [ln.label for ln in fig.lines]
        self.assertIn("kseq (K = 2)", labels)
        self.assertNotIn("kseq (K = 1)", labels)  # seq at each verifier's largest K
        kseq = fig.lines[labels.index("kseq (K = 2)")]
        sel = [r for r in rows if r["verifier"] == "kseq" and r["sequences"] == "2"
               and float(r["cost"]) == 0]
        self.assertEqual(kseq.x.tolist(), [float(r["depth"]) for r in sel])
        self.assertEqual(kseq.y.tolist(), [float(r["block_efficiency"]) for r in sel])
        self.assertEqual(kseq.se.tolist(), [float(r["stderr"]) for r in sel])
        fig = mdsd.plot_series(self.b, kind="block-speedup", labels={"kseq": "K-seq"})
        two = [ln for ln in fig.lines if ln.method == "kseq" and ln.dump == "c = 0.5"]
        self.assertEqual(len(two), 1)
        self.assertEqual(two[0].label, "c = 0.5: K-seq (K = 2)")
        self.assertEqual(two[0].dash, 2)
        sel = [r for r in rows if r["verifier"] == "kseq" and r["sequences"] == "2"
               and float(r["cost"]) == 0.5]
        self.assertEqual(two[0].y.tolist(), [float(r["speedup"]) for r in sel])
        np.testing.assert_array_equal(
            two[0].se, [float(r["stderr"]) / (1 + 0.5 * float(r["depth"])) for r in sel])

    def test_matplotlib_draws_the_same_lines(self):
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.container import ErrorbarContainer
        for source, kw in (("r.csv", dict(kind="vs-temperature", dump="toy.h5:b", n=2)),
                           ("b.csv", dict(kind="block-speedup"))):
            path = os.path.join(self.dir, source)
            fig = mdsd.plot_series(path, **kw)
            ax = mdsd.plot_matplotlib(path, **kw)
            bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
            lines = [ln for ln in fig.lines if not ln.bound]
            bounds = [ln for ln in fig.lines if ln.bound]
            self.assertEqual(len(bars), len(lines), source)
            for c, ln in zip(bars, lines):
                np.testing.assert_array_equal(c.lines[0].get_ydata(), ln.y)
                self.assertEqual(c.get_label(), ln.label)
            parts = [x for c in bars for x in (c.lines[0], *c.lines[1])]  # the line, its caps
            plain = [x for x in ax.get_lines() if x not in parts]
            self.assertEqual(len(plain), len(bounds), source)
            for drawn, ln in zip(plain, bounds):
                np.testing.assert_array_equal(drawn.get_ydata(), ln.y)
            self.assertEqual(ax.get_xlabel(), fig.xlabel)
            self.assertEqual(ax.get_title(), fig.title)
            self.assertIn(fig.interval, ax.get_legend().get_title().get_text())
            import matplotlib.pyplot as plt
            plt.close("all")

    def test_matplotlib_missing_is_a_clear_import_error(self):
        saved = {k: sys.modules.get(k) for k in ("matplotlib", "matplotlib.pyplot")}
        sys.modules["matplotlib"] = None
        sys.modules["matplotlib.pyplot"] = None
        try:
            with self.assertRaises(ImportError) as cm:
                mdsd.plot_matplotlib(self.b)
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertIn("python3-matplotlib", str(cm.exception))
        self.assertIn("mdsd.plot_series", str(cm.exception))

    def test_notes_are_warnings_in_python_words(self):
        with self.assertWarnsRegex(UserWarning, r"r\.csv has several dumps; plotting toy\.h5:a "
                                   r"\(choose with dump=\)"):
            mdsd.plot_series(self.r, kind="vs-drafts", temperature=1)

    def test_bad_inputs_are_refused_naming_the_csv(self):
        out = os.path.join(self.dir, "bad.png")
        nocol = os.path.join(self.dir, "nocol.csv")
        with open(nocol, "w") as f:
            f.write("dump,temperature,n,scheme,method,stderr\nd,1,2,iid,rrs,0.1\n")
        bad_value = os.path.join(self.dir, "badvalue.csv")
        with open(bad_value, "w") as f:
            f.write("dump,temperature,n,scheme,method,alpha,stderr\nd,1,2,iid,rrs,1.5,0.1\n")
        cases = [
            (self.r, dict(kind="histogram"), r"r\.csv: kind: 'histogram' is not vs-temperature"),
            (self.r, dict(), r"r\.csv: missing kind= \(only a block CSV has a default"),
            (nocol, dict(kind="vs-drafts"), r"nocol\.csv: no column 'alpha' \(needed for kind=vs-drafts\)"),
            (bad_value, dict(kind="vs-drafts"), r"badvalue\.csv: line 2, column alpha: 1\.5 is not a number in \[0, 1\]"),
            (self.r, dict(kind="vs-drafts", labels={"zz": "y"}),
             r"r\.csv: labels='zz=y': 'zz' names no dump, drafter, method, scheme or policy"),
            (self.r, dict(kind="vs-drafts", method="RRS"), r"method: 'RRS' matches no row of .*r\.csv"),
            (self.b, dict(kind="block-depth", temperature=1), r"b\.csv: kind=block-depth: temperature=, "
             r"scheme= and dumps= are not for a block CSV"),
            (self.r, dict(kind="vs-drafts", dump="toy.h5:a", dumps="all"), r"r\.csv: dump='toy.h5:a' and dumps="),
            (self.r, dict(kind="vs-drafts", size="poster"), r"r\.csv: size: 'poster' is not screen"),
            (os.path.join(self.dir, "none.csv"), dict(kind="gap"), r"none\.csv"),
            (self.r, dict(kind="gap", scripts=self.dir + "/nowhere"), r"r\.csv: no gnuplot script .*nowhere/gap\.gp"),
        ]
        for source, kw, pattern in cases:
            calls = [lambda: mdsd.plot(source, out, **kw)]
            if not {"size", "scripts"} & set(kw):  # options of the figure file only
                calls.append(lambda: mdsd.plot_series(source, **kw))
            for call in calls:
                with self.assertRaisesRegex(mdsd.MdsdError, pattern, msg=str(kw)):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        call()
            self.assertFalse(os.path.exists(out), kw)
            self.assertFalse(os.path.exists(out + ".provenance.json"), kw)
        with self.assertRaises(mdsd.MdsdTypeError):
            mdsd.plot_series(self.r, kind="vs-drafts", labels=["rrs=A"])
        with self.assertRaisesRegex(mdsd.MdsdError, "labels: OLD 'a=b' holds '='"):
            mdsd.plot_series(self.r, kind="vs-drafts", labels={"a=b": "c"})
        # the output may not be the CSV (nor its sidecar): refused before any work
        with open(self.r, "rb") as f:
            before = f.read()
        for target in (self.r, self.r + ".provenance.json"):
            with self.assertRaisesRegex(mdsd.MdsdError, r"is the input .*r\.csv.*refusing to overwrite"):
                mdsd.plot(self.r, target, kind="vs-drafts")
        with open(self.r, "rb") as f:
            self.assertEqual(f.read(), before)


if __name__ == "__main__":
    unittest.main()
