"""mdsd.report against `mdsd report`, and mdsd.table(markdown=, latex=, layout=,
per_position=) and mdsd.merge(layout=) against `mdsd table` / `mdsd merge`: the same
inputs give the same bytes (tables, paired differences, CSV, per-position file), the
provenance of -o/output= records the labels; bad inputs (a label naming nothing, a bad
layout, a bad path, a list entry given twice) are refused naming the input, with no file
left. Run by tests/test_package.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd_report`."""

import json
import os
import subprocess
import tempfile
import unittest
import warnings

import mdsd
from support import mdsd_bin

# (CLI arguments after RESULTS, Python keywords): the same report both ways.
REPORTS = [
    ([], {}),
    (["--latex"], dict(latex=True)),
    (["--latex", "--standalone", "--layout", "combined", "--label-prefix", "tab:x"],
     dict(format="latex", standalone=True, layout="combined", label_prefix="tab:x")),
    (["--layout", "per-setting", "-t", "1,0.7", "-d", "3", "-s", "wor,iid", "-m", "kseq,rrs",
      "--dumps", "e.h5,d.h5"],
     dict(layout="per-setting", temperatures=[1, 0.7], drafts=3, schemes="wor,iid",
          methods=["kseq", "rrs"], dumps=("e.h5", "d.h5"))),
    (["--label", "d.h5=Zipf", "--label", "rrs=RRS", "--latex"],
     dict(labels={"d.h5": "Zipf", "rrs": "RRS"}, latex=True)),
    (["--is-top", "3", "--markdown"], dict(is_top=3, markdown=True)),
]

PAIRED = [
    (["--paired", "rate_rrs:rate_kseq,alpha_star_wor:alpha_star_iid"],
     dict(paired=[("rate_rrs", "rate_kseq"), "alpha_star_wor:alpha_star_iid"])),
    (["--paired", "rate_rrs_n2:rate_kseq_n2", "--csv"],
     dict(paired="rate_rrs_n2:rate_kseq_n2", csv=True)),
    (["--paired", "rate_rrs:rate_kseq", "--csv"], dict(paired="rate_rrs:rate_kseq",
                                                     format="csv")),
]

TABLE = ["-t", "0.7,1", "-d", "2,3", "-s", "iid,wor", "-v", "rrs,kseq,is", "--is-top", "8"]
TABLE_KW = dict(temperatures=[0.7, 1], draft_counts=[2, 3], schemes=["iid", "wor"],
                verifiers=["rrs", "kseq", "is"], is_top=8, progress=False)


def layout_of(markdown):
    """(tables, whether the combined one is among them) of a Markdown text."""
    text = markdown.decode() if isinstance(markdown, bytes) else markdown
    return text.count("| scheme | method"), "**All settings**" in text


def read(path):
    with open(path, "rb") as f:
        return f.read()


class ReportEqualsCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if mdsd_bin() is None:
            raise AssertionError("MDSD_BIN is not set to the mdsd binary")
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.d = cls.tmp.name
        cls.cli("toy", "--family", "zipf", "--vocab", "64", "--positions", "60", "--samples",
                "4", "--seed", "1", "-o", "d.h5")
        cls.cli("toy", "--family", "dirichlet", "--vocab", "32", "--positions", "40",
                "--seed", "2", "-o", "e.h5")
        # the CLI's table job with every rendered output (the reference bytes)
        cls.cli("table", "d.h5", "e.h5", "-o", "r.csv", *TABLE, "--markdown=t.md",
                "--latex=t.tex", "--layout", "combined", "--per-position", "pp.csv")
        cls.results, cls.perpos = os.path.join(d, "r.csv"), os.path.join(d, "pp.csv")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def cli(cls, *args, check=True):
        proc = subprocess.run([mdsd_bin(), *args], capture_output=True, cwd=cls.d, timeout=300)
        if check and proc.returncode:
            raise AssertionError(f"mdsd {' '.join(args)}: {proc.stderr.decode()}")
        return proc

    def path(self, name):
        return os.path.join(self.d, name)

    def py_report(self, results, **kw):
        """mdsd.report run from the CLI's directory (the CSV named as the CLI names it)."""
        here = os.getcwd()
        os.chdir(self.d)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = mdsd.report(results, **kw)
            return out, [str(w.message) for w in caught]
        finally:
            os.chdir(here)

    def test_report_text_is_the_cli_stdout(self):
        for args, kw in REPORTS:
            with self.subTest(args=args):
                want = self.cli("report", "r.csv", *args)
                got, notes = self.py_report("r.csv", **kw)
                self.assertEqual(got.encode(), want.stdout)
                if not kw:  # the default layout: both (4 settings, then all of them)
                    self.assertEqual(layout_of(got), (5, True))
                # the one-sample note of e.h5: stderr there, a warning here
                self.assertEqual([f"mdsd report: {n}\n" for n in notes],
                                 want.stderr.decode().splitlines(keepends=True))

    def test_paired_output_is_the_cli_output(self):
        for args, kw in PAIRED:
            with self.subTest(args=args):
                want = self.cli("report", "pp.csv", *args).stdout
                self.assertEqual(self.py_report("pp.csv", **kw)[0].encode(), want)

    def test_output_file_and_its_provenance(self):
        self.cli("report", "r.csv", "--latex", "--label", "d.h5=Zipf", "-o", "cli.tex")
        got, _ = self.py_report("r.csv", latex=True, labels={"d.h5": "Zipf"},
                                output="py.tex")
        self.assertEqual(got, "py.tex")
        self.assertEqual(read(self.path("py.tex")), read(self.path("cli.tex")))
        with open(self.path("py.tex.provenance.json")) as f:
            prov = json.load(f)
        self.assertEqual(prov["tool"], "mdsd.report")
        self.assertEqual(prov["labels"], {"d.h5": "Zipf"})
        self.assertEqual(prov["source"], "r.csv")
        self.assertEqual(prov["source_provenance"]["tool"], "mdsd table")
        self.assertIn("labels={'d.h5': 'Zipf'}", prov["command"])

    def test_bad_inputs_are_refused_naming_them(self):
        cases = [
            (dict(labels={"kn3": "X"}), "'kn3' names no dump, scheme or method"),
            (dict(labels=["d.h5"]), "labels='d.h5': expected OLD=NEW"),
            (dict(layout="sideways"), "layout: 'sideways' is not per-setting, combined or both"),
            (dict(layout=3), "layout: 3 is not per-setting"),
            (dict(methods="rrs,rrs"), "methods: 'rrs' is given twice"),
            (dict(temperatures=[0.7, 0.8]), "temperatures: '0.8' matches no row of r.csv"),
            (dict(temperatures="x"), "temperatures: 'x' is not a number"),
            (dict(drafts=[True]), "drafts: True is not a number"),
            (dict(standalone=True), "standalone=True needs latex="),
            (dict(csv=True), "csv=True needs paired="),
            (dict(paired="rate_rrs"), "paired: 'rate_rrs' is not A:B"),
            (dict(paired="a:b", latex=True), "paired= takes only output=, markdown= and csv=True"),
            (dict(markdown=True, latex=True), "give one format"),
            (dict(format="html"), "format: 'html' is not markdown, latex or csv"),
            (dict(is_top=-2), "is_top: '-2' must be a non-negative integer"),
            (dict(output="/nonexistent-dir/x.md"), "directory '/nonexistent-dir' does not exist"),
            (dict(output="r.csv"), "output 'r.csv' is the input 'r.csv'"),
            (dict(output="r.csv.provenance.json"), "is the input 'r.csv.provenance.json'"),
        ]
        before = sorted(os.listdir(self.d))
        for kw, message in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(mdsd.MdsdError) as e:
                    self.py_report("r.csv", **kw)
                self.assertIn(message, str(e.exception))
                self.assertNotIn("--", str(e.exception))  # the keywords, not the CLI's flags
        with self.assertRaises(mdsd.MdsdError) as e:
            self.py_report("pp.csv", paired="x:y")
        self.assertIn("pp.csv: no columns x and y", str(e.exception))
        with self.assertRaises(mdsd.MdsdError) as e:
            self.py_report("d.h5")
        self.assertIn("d.h5, line 1: not a results CSV", str(e.exception))
        with self.assertRaises(mdsd.MdsdError) as e:
            self.py_report("missing.csv")
        self.assertIn("cannot read 'missing.csv'", str(e.exception))
        self.assertEqual(sorted(os.listdir(self.d)), before)  # nothing left behind

    def test_table_renders_what_the_cli_renders(self):
        out = self.path("py")
        os.mkdir(out)
        here = os.getcwd()
        os.chdir(self.d)  # the dumps named as the CLI names them (the tables' columns)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mdsd.table(["d.h5", "e.h5"], "py/r.csv", markdown="py/t.md", latex="py/t.tex",
                           layout="combined", per_position="py/pp.csv", **TABLE_KW)
        finally:
            os.chdir(here)
        self.assertEqual(layout_of(read(os.path.join(out, "t.md"))), (1, True))  # combined
        for name in ("r.csv", "t.md", "t.tex", "pp.csv"):
            with self.subTest(name=name):
                self.assertEqual(read(os.path.join(out, name)), read(self.path(name)))
        # the per-position file is the one mdsd.report(paired=) reads (the first line
        # names the file read)
        ours = self.py_report("py/pp.csv", paired="rate_rrs:rate_kseq")[0].split("\n", 1)
        cli = self.py_report("pp.csv", paired="rate_rrs:rate_kseq")[0].split("\n", 1)
        self.assertEqual(ours[1], cli[1])
        self.assertEqual(ours[0].replace("py/pp.csv", "pp.csv"), cli[0])

    def test_table_refuses_bad_outputs_before_any_work(self):
        d, x = self.path("d.h5"), self.path("x.md")
        cases = [(dict(layout="rows"), "layout: 'rows' is not per-setting"),
                 (dict(layout="both", markdown=x, latex=x), "are the same file"),
                 (dict(markdown="/nonexistent-dir/t.md"), "'/nonexistent-dir' does not exist"),
                 (dict(latex=d), f"output '{d}' is the input '{d}'"),
                 (dict(per_position=d), f"'{d}' is the input '{d}'")]
        for kw, message in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(mdsd.MdsdError) as e:
                    mdsd.table(self.path("d.h5"), self.path("bad.csv"), **dict(TABLE_KW, **kw))
                self.assertIn(message, str(e.exception))
                self.assertFalse(os.path.exists(self.path("bad.csv")))
                self.assertFalse(os.path.exists(self.path("x.md")))

    def test_merge_layout_is_the_cli_layout(self):
        for i in (1, 2):
            self.cli("table", "d.h5", "-o", f"s{i}.agg", "-t", "0.7", "-d", "2", "-s", "iid",
                     "-v", "rrs", "--shard", f"{i}/2")
        for layout in ("per-setting", "combined", "both"):
            with self.subTest(layout=layout):
                self.cli("merge", "-o", "m.csv", "s1.agg", "s2.agg", "--markdown=m.md",
                         "--latex=m.tex", "--layout", layout)
                here = os.getcwd()
                os.chdir(self.d)  # where the shards' dumps are (as for the CLI)
                try:
                    mdsd.merge(["s1.agg", "s2.agg"], "pm.csv", markdown="pm.md",
                               latex="pm.tex", layout=layout)
                finally:
                    os.chdir(here)
                for a, b in (("m.csv", "pm.csv"), ("m.md", "pm.md"), ("m.tex", "pm.tex")):
                    self.assertEqual(read(self.path(b)), read(self.path(a)))
                # one setting (T = 0.7, n = 2): its table, or the combined one (both,
                # with one setting, is the setting's table alone)
                self.assertEqual(layout_of(read(self.path("pm.md"))),
                                 {"per-setting": (1, False), "combined": (1, True),
                                  "both": (1, False)}[layout])
        with self.assertRaises(mdsd.MdsdError) as e:
            mdsd.merge([self.path("s1.agg"), self.path("s2.agg")], self.path("pm.csv"),
                       markdown=self.path("pm.md"), layout="diagonal")
        self.assertIn("layout: 'diagonal' is not per-setting", str(e.exception))


if __name__ == "__main__":
    unittest.main()
