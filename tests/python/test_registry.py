"""The registry of names (mdsd/registry.h) is the only list of verifiers (tests/test_registry.c
runs this module; it checks the C side against the ops tables).

1. No copy elsewhere: no list literal in the source tree (src/, analysis/, papers/, tests/,
   plots/, the READMEs, MATH.md, the Makefile) names every valid verifier or every audit
   variant; in src/ (the library, the CLI, Python, the runner) no table of three or more
   names and no strcmp chain over them; a Markdown table of verifiers in the docs lists every
   valid one. Shown to catch planted copies (test_planted_copies_are_caught).
2. Every job takes exactly the names the registry gives it: mdsd table -v, mdsd block
   --markov -v (and --live), mdsd block DUMP --verifiers; Python's tuples are the registry's;
   the runner's --tree-live names are read from it.
"""

import os
import re
import subprocess
import tempfile
import unittest

import mdsd

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MDSD = os.environ.get("MDSD_BIN") or os.path.join(ROOT, "build", "release", "mdsd")
TOY = os.path.join(ROOT, "papers", "block", "toys", "toy3.txt")
DUMP = os.path.join(ROOT, "data", "kjv-ngram.h5")
TREES = os.path.join(ROOT, "data", "kjv-trees.h5")

REG = mdsd.REGISTRY
VALID = {e.name for e in REG if e.cls == "verifier" and not e.audit}
AUDIT = {e.name for e in REG if e.cls == "verifier" and e.audit}
SMALL = [{e.name for e in REG if e.cls == c} for c in ("block-verifier", "block-optimum")]
NAMES = VALID | AUDIT | set().union(*SMALL)

# The registry itself, and the files that check it.
OWNERS = {"src/core/registry.c", "tests/python/test_registry.py", "tests/test_registry.c"}
SCOPE = ("src", "analysis", "papers", "tests", "plots", "lp", "README.md", "data/README.md",
         "MATH.md", "Makefile")
TEXT = re.compile(r"(\.(c|h|py|sh|md|tex|txt|toml|cfg)|Makefile)$")

QUOTED_RUN = re.compile(r"""(?:(["'])[\w.+-]+\1\s*,\s*){2,}(["'])[\w.+-]+\2""")
QUOTED = re.compile(r"""(["'])([\w.+-]+)\1""")
JOINED = re.compile(r"(?<![\w.-])[\w-]+(?:,[\w-]+){2,}(?![\w-])")
STRCMP = re.compile(r"""strcmp\s*\([^;()]*?,\s*"([\w.+-]+)"\s*\)""")
# A Markdown table whose first column is headed "verifier", and its rows' first cells.
VERIFIER_TABLE = re.compile(r"^\|\s*verifier\s*\|.*\n(?:\|.*\n?)*", re.M)
TABLE_ROW = re.compile(r"^\|\s*`([\w.+-]+)`\s*\|", re.M)


def copies(path, text):
    """The lists in text (of the file path, relative to ROOT) that copy the registry: a list
    of [(line, why)]."""
    in_src = path.startswith("src/")
    found = []

    def line(pos):
        return text.count("\n", 0, pos) + 1

    lists = [(m.start(), [x.group(2) for x in QUOTED.finditer(m.group(0))], "quoted")
             for m in QUOTED_RUN.finditer(text)]
    lists += [(m.start(), m.group(0).split(","), "joined") for m in JOINED.finditer(text)]
    for pos, items, how in lists:
        names = {n for n in items if n in NAMES}
        if VALID <= names or AUDIT <= names:
            what = "valid verifier" if VALID <= names else "audit variant"
            found.append((line(pos), f"a {how} list of every {what}"))
        elif in_src and how == "quoted" and len(names) >= 3:
            found.append((line(pos), f"a table of names in src/: {sorted(names)}"))
        elif in_src and any(names == c for c in SMALL):
            found.append((line(pos), f"a list of every {sorted(names)} in src/"))
    if in_src and path.endswith((".c", ".h")):
        chain = [(m.start(), m.group(1)) for m in STRCMP.finditer(text) if m.group(1) in NAMES]
        if len(chain) >= 2:
            found.append((line(chain[0][0]), f"a strcmp chain over {[n for _, n in chain]}"))
    for m in VERIFIER_TABLE.finditer(text) if path.endswith(".md") else ():
        rows = {n for n in TABLE_ROW.findall(m.group(0)) if n in VALID | AUDIT}
        if len(rows) >= 3 and not VALID <= rows:
            found.append((line(m.start()), f"a table of verifiers without {sorted(VALID - rows)}"))
    return found


def tree_files():
    for top in SCOPE:
        full = os.path.join(ROOT, top)
        if os.path.isfile(full):
            yield top
            continue
        for d, dirs, files in os.walk(full):
            dirs[:] = [x for x in dirs if x not in ("__pycache__", "build")]
            for f in files:
                rel = os.path.relpath(os.path.join(d, f), ROOT)
                if TEXT.search(f) and rel not in OWNERS:
                    yield rel


class NoCopies(unittest.TestCase):
    def test_no_list_of_names_outside_the_registry(self):
        bad = []
        for rel in tree_files():
            try:
                with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                    text = f.read()
            except UnicodeDecodeError:
                continue
            bad += [f"{rel}:{n}: {why}" for n, why in copies(rel, text)]
        self.assertEqual(bad, [], "names kept outside the registry (src/core/registry.c); read "
                         "them from it (mdsd_registry_at, mdsd.REGISTRY):\n" + "\n".join(bad))

    def test_planted_copies_are_caught(self):
        valid = ", ".join(f'"{n}"' for n in sorted(VALID))
        self.assertTrue(copies("src/mdsd_runner/x.py", f"VERIFIERS = ({valid})\n"))
        self.assertTrue(copies("papers/x/y.py", f"V = [{valid}]\n"))
        self.assertTrue(copies("analysis/x.sh", "mdsd table d.h5 -v " + ",".join(sorted(VALID))))
        self.assertTrue(copies("tests/x.c", ",".join(f'"{n}"' for n in sorted(AUDIT))))
        self.assertTrue(copies("src/block/x.c", '{"bv", "gbv", "rrs"}'))
        self.assertTrue(copies("src/block/x.c", 'if (!strcmp(v, "bv") || !strcmp(v, "gbv"))'))
        self.assertTrue(copies("src/cli/x.c", '"bv,gbv,traversal"'))
        table = "| verifier | x |\n| --- | --- |\n| `sd` | a |\n| `rrs` | b |\n| `kseq` | c |\n"
        self.assertTrue(copies("MATH.md", table))
        self.assertFalse(copies("MATH.md", table.replace("verifier", "method")))  # a style table
        # a selection is not a copy
        self.assertFalse(copies("analysis/x.sh", "-v rrs,kseq,greedy"))
        self.assertFalse(copies("papers/x/y.py", 'V = ["sd", "bv", "rrs", "kseq"]'))


class PythonAndRunner(unittest.TestCase):
    def test_python_names_are_the_registry(self):
        by_kind = sorted((e for e in REG if e.cls == "verifier"), key=lambda e: e.kind)
        self.assertEqual(mdsd.VERIFIERS, tuple(e.name for e in by_kind if not e.audit))
        self.assertEqual(mdsd.AUDIT_VERIFIERS, tuple(e.name for e in by_kind if e.audit))
        self.assertFalse(set(mdsd.VERIFIERS) & set(mdsd.AUDIT_VERIFIERS))
        schemes = sorted((e for e in REG if e.cls == "scheme"), key=lambda e: e.kind)
        self.assertEqual(mdsd.SCHEMES, tuple(e.name for e in schemes))
        self.assertEqual(set(mdsd.BLOCK_VERIFIERS), SMALL[0])
        self.assertEqual(set(mdsd.BLOCK_OPTIMA), SMALL[1])
        p, q = [0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]
        for e in by_kind:  # every name reaches its verifier through the library
            v = mdsd.Verifier(e.name, n=drafts_of(e))
            self.assertEqual((v.name, v.scheme), (e.name, e.scheme))
            v.prepare(p, q)
            if e.exact:
                rate, _ = mdsd.verifier_rate(e.name, p, q, n=drafts_of(e))
                self.assertTrue(0.0 < rate <= 1.0, (e.name, rate))
        with self.assertRaises(mdsd.MdsdError):
            mdsd.Verifier("bv", n=2)

    def test_runner_reads_its_names_from_the_registry(self):
        from mdsd_runner import live
        self.assertFalse(hasattr(live, "VERIFIERS"))
        self.assertEqual(live.live_verifiers(), tuple(
            e.name for e in sorted(REG, key=lambda e: e.kind)
            if e.cls == "verifier" and "live" in e.jobs and not e.audit))


def run(args):
    r = subprocess.run([MDSD] + args, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def drafts_of(e):
    """A draft count the verifier is defined for (registry.h: sd 1, spechub 2, is-face 3)."""
    return 1 if e.name == "sd" else 3 if e.name == "is-face" else 2


def unknown(out, name):
    return f"unknown verifier '{name}'" in out or f"unknown block verifier '{name}'" in out


def taken(rc, out):
    """Run, or refused only for its size at this V (is, otm and is-face on a real dump)."""
    return rc == 0 or (rc == 1 and ("guard" in out or "above the limit" in out))


def refused(rc, out, name):
    """Refused as a name the job does not take: unknown, no output law, not --live (or, on
    the shipped seq dump, for its scheme first: spechub-hubaccept, rrsw-f32)."""
    return rc != 0 and (unknown(out, name) or "no conditional output law" in out or
                        "--live: token-level verifiers only" in out or
                        "apply to none of its policies" in out)


class Jobs(unittest.TestCase):
    """Each name of a verifier class is taken by the jobs the registry marks and refused by
    the others; the scheme flags hold on the Markov job's trees."""

    entries = [e for e in REG if e.cls in ("verifier", "block-verifier", "block-optimum")]

    def test_table(self):
        with tempfile.TemporaryDirectory() as d:
            for e in self.entries:
                rc, out = run(["table", DUMP, "-o", os.path.join(d, "t.csv"), "--positions", "0:2",
                               "-t", "1", "-d", str(drafts_of(e)), "-s", e.scheme or "iid",
                               "-v", e.name])
                if "table" in e.jobs:  # taken (it may then fail on this V: is, otm's guards)
                    self.assertFalse(unknown(out, e.name), out)
                    self.assertNotEqual(rc, 2, out)
                else:
                    self.assertEqual(rc, 2, out)
                    self.assertTrue(unknown(out, e.name), out)

    def markov(self, e, scheme, extra=()):
        """mdsd block --markov with e on scheme: token-level verifiers on one level of a
        tree of n drafts (every node then has n), the others on seq drafts."""
        n = drafts_of(e)
        if e.cls != "verifier":
            pol = ["--sequences", "1" if e.name == "bv" else str(n), "--depth", "2"]
        else:
            pol = ["--tree", str(n), "--scheme", scheme]
        return run(["block", "--markov", TOY, "-v", e.name] + pol + list(extra))

    def test_markov_and_its_schemes(self):
        for e in self.entries:
            rc, out = self.markov(e, e.scheme or "iid")
            if "markov" not in e.jobs:
                self.assertTrue(refused(rc, out, e.name), f"{e.name}: {out}")
                continue
            self.assertEqual(rc, 0, out)
            if e.cls != "verifier":
                continue
            for s in ("iid", "wor", "greedy", "hub"):  # the schemes a tree policy draws with
                if s == e.scheme or (s == "hub" and drafts_of(e) != 2):
                    continue
                rc, out = self.markov(e, s)
                self.assertEqual(rc == 0, s in e.schemes, f"{e.name} on {s}: {out}")

    def test_live(self):
        for e in self.entries:
            rc, out = self.markov(e, e.scheme or "iid", ["--live", "20"])
            if "live" in e.jobs:
                self.assertEqual(rc, 0, f"{e.name}: {out}")
            else:
                self.assertTrue(refused(rc, out, e.name), f"{e.name}: {out}")

    def test_tree_dumps(self):
        for e in self.entries:  # a seq dump: iid drafts
            k = 1 if e.name in ("sd", "bv") else drafts_of(e)
            rc, out = run(["block", TREES, "--verifiers", e.name, "--depth", "1", "--sequences",
                           str(k)])
            if "trees" not in e.jobs:
                self.assertTrue(refused(rc, out, e.name), f"{e.name}: {out}")
            elif e.cls != "verifier" or "iid" in e.schemes:
                self.assertTrue(taken(rc, out), f"{e.name}: {out}")
            else:  # taken, then none of the dump's policies is its scheme
                self.assertEqual(rc, 2, out)
                self.assertIn("apply to none of its policies", out)

if __name__ == "__main__":
    unittest.main()
