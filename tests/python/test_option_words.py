"""Errors in the API's words (issue 39, item 4; tests/test_option.c runs this module).

1. No string literal of the library (src/ but the CLI, src/bin, the runner and the Python
   package) names a command-line flag ("--max-paths", " -o"): the library names options by
   their C names in backquotes (mdsd/option.h), and each front end phrases them from the one
   table of src/core/option.c. Shown to catch planted flags (test_planted_flags_are_caught).
2. Every Python spelling of the table is a keyword of a function of the package.
3. Errors end to end in Python: the keyword in the message, the option in MdsdError.option.
"""

import inspect
import os
import re
import tempfile
import unittest

import numpy as np

import mdsd
from mdsd import _lib
from mdsd._lib import lib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DUMP = os.path.join(ROOT, "data", "kjv-ngram.h5")

# The front ends, which speak their own words, and the table itself.
NOT_LIBRARY = ("src/cli/", "src/bin/", "src/mdsd_runner/", "src/python/")
OWNERS = {"src/core/option.c"}
# Literals that name another program's flags, never the mdsd command line's:
# (path, the flag, why).
ALLOWED = {
    ("src/io/dump_format.c", "--drop-padding"):
        "the command of the model runner (mdsd-runner import) that remakes such a dump",
    ("src/plot/plot_draw.c", "-e"): "gnuplot's own argument vector",
    ("src/plot/plot_gnuplot.c", "-e"): "gnuplot's own argument vector",
}

# C tokens: comments, character literals, string literals (group 1 the contents).
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|\'(?:\\.|[^\\\'\n])*\'|"((?:\\.|[^\\"\n])*)"', re.S)
# A long flag "--max-paths", or a short one standing alone: " -o", "(-v", "-o/".
FLAG = re.compile(r"(?<![\w-])(--[a-z][\w-]*|-[a-zA-Z](?=[\s,;:)/.\]`]|$))")


def literals(text):
    """(line, contents) of each string literal of C source text, adjacent literals (only
    white space between) joined as the compiler joins them."""
    run, start, end = None, 0, 0
    for m in TOKEN.finditer(text):
        if m.group(1) is None:
            continue
        if run is not None and not text[end:m.start()].strip():
            run += m.group(1)
        else:
            if run is not None:
                yield text.count("\n", 0, start) + 1, run
            run, start = m.group(1), m.start()
        end = m.end()
    if run is not None:
        yield text.count("\n", 0, start) + 1, run


def flags_in(path, text):
    """[(line, flag)] of the flags the literals of text (the file path) name, less ALLOWED."""
    return [(line, f) for line, lit in literals(text) for f in FLAG.findall(lit)
            if (path, f) not in ALLOWED]


def library_sources():
    for d, _, files in os.walk(os.path.join(ROOT, "src")):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(d, f), ROOT)
            if f.endswith((".c", ".h")) and not rel.startswith(NOT_LIBRARY) and rel not in OWNERS:
                yield rel


def options():
    """[(C, CLI, Python)] of every option of the table (mdsd_option_name)."""
    out, k = [], 1
    while lib.mdsd_option_name(k, _lib.SPELL_C):
        out.append(tuple(lib.mdsd_option_name(k, s).decode()
                         for s in (_lib.SPELL_C, _lib.SPELL_CLI, _lib.SPELL_PYTHON)))
        k += 1
    return out


def python_keywords():
    """{function name: its keywords} over the package's public functions, and the keywords
    that **opts passes to the verifier options (mdsd._vopts: is_top, max_paths, ...)."""
    out = {}
    for name in dir(mdsd):
        f = getattr(mdsd, name)
        if (name.startswith("_") and name != "_vopts") or not callable(f) or inspect.isclass(f):
            continue
        try:
            out[name] = set(inspect.signature(f).parameters)
        except (TypeError, ValueError):
            pass
    return out


def keyword_of(spelling):
    """The function (None: any) and keyword a Python spelling names: "max_paths=",
    "resume=True" -> (None, kw); "mdsd.softmax(logits)" -> ("softmax", "logits")."""
    m = re.fullmatch(r"mdsd\.(\w+)\((\w+)\)", spelling)
    if m:
        return m.group(1), m.group(2)
    m = re.fullmatch(r"(\w+)=(True)?", spelling)
    return (None, m.group(1)) if m else (None, None)


class NoFlagInTheLibrary(unittest.TestCase):
    def test_no_library_literal_names_a_flag(self):
        found = []
        for rel in library_sources():
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                found += [f"{rel}:{line}: {flag}" for line, flag in flags_in(rel, f.read())]
        self.assertEqual(found, [], "library strings that name CLI flags (write the option's C "
                         "name in backquotes, mdsd/option.h):\n" + "\n".join(found))

    def test_every_allowance_is_still_needed(self):
        for (rel, flag), why in ALLOWED.items():
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                names = [x for _, lit in literals(f.read()) for x in FLAG.findall(lit)]
            self.assertIn(flag, names, f"{rel} no longer names {flag} ({why}): drop the allowance")

    def test_planted_flags_are_caught(self):
        planted = {
            'return mdsd_fail(err, MDSD_EINVAL, "pass --discard-partial to start over");': "--discard-partial",
            'mdsd_fail(err, 1, "%s", "no output file (-o)");': "-o",
            'x = "a split " /* c */ "literal";\n y = "rerun with " "--resume";': "--resume",
            'f("-v rrs is exact");': "-v",
            'f("a CSV of `mdsd block -o`");': "-o",
        }
        for text, flag in planted.items():
            with self.subTest(text=text):
                self.assertEqual([f for _, f in flags_in("src/job/x.c", text)], [flag])
        # comments, markers and non-flags pass
        for text in ('/* "--resume" */ f("`resume`");', '// "-o"\n', 'f("a-b, x - y, %-8s, -1");',
                     "c = '-';"):
            with self.subTest(text=text):
                self.assertEqual(flags_in("src/job/x.c", text), [])


class OneTable(unittest.TestCase):
    def test_every_python_spelling_is_a_keyword(self):
        keywords = python_keywords()
        every = set().union(*keywords.values())
        table = options()
        self.assertGreater(len(table), 40)
        for c, cli, py in table:
            with self.subTest(option=c):
                self.assertRegex(c, r"^[a-z][a-z0-9_]*$")
                self.assertRegex(cli, r"^--?[a-z][a-z0-9-]*$")
                func, kw = keyword_of(py)
                self.assertIsNotNone(kw, f"{c}: Python spelling {py!r} is not kw=, kw=True or "
                                     "mdsd.f(kw)")
                if func:
                    self.assertIn(kw, keywords.get(func, ()), f"{c}: mdsd.{func} takes no {kw}")
                else:
                    self.assertIn(kw, every, f"{c}: no mdsd function takes {kw}= ({py})")
                self.assertEqual(lib.mdsd_option_lookup(c.encode()), table.index((c, cli, py)) + 1)

    def test_planted_spellings_are_caught(self):
        every = set().union(*python_keywords().values())
        self.assertNotIn(keyword_of("max_path=")[1], every)
        self.assertEqual(keyword_of("--max-paths"), (None, None))
        self.assertNotIn("nosuch", python_keywords()["softmax"])


class ErrorsInPythonWords(unittest.TestCase):
    def assert_words(self, call, option, *words):
        with self.assertRaises(mdsd.MdsdError) as cm:
            call()
        msg = str(cm.exception)
        for w in words:
            self.assertIn(w, msg)
        self.assertNotIn("`", msg)
        self.assertIsNone(FLAG.search(msg.replace("-1", "")), msg)
        self.assertEqual(cm.exception.option, option, msg)

    def test_library_errors_name_keywords(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.csv")
            self.assert_words(lambda: mdsd.verifier_rate("rrsw", [0.5, 0.3, 0.2], [0.2, 0.3, 0.5],
                                                         n=3, scheme="wor", max_paths=1),
                              "max_paths", "(max_paths=)", "(trials=)")
            self.assert_words(lambda: mdsd.table(DUMP, out, resume=True, discard_partial=True),
                              "resume", "resume=True and discard_partial=True exclude each other")
            self.assert_words(lambda: mdsd.table(DUMP, out, simulate=True),
                              "simulate", "simulate=True needs trials=K")
            self.assert_words(lambda: mdsd.plot(DUMP, os.path.join(d, "f.png"), kind="gap",
                                                size="huge"),
                              "paper_size", "size: 'huge' is not screen, column or full")
            self.assertFalse(os.listdir(d))

    def test_markers_in_python_spelling(self):
        def words(msg):
            return mdsd._python_words(msg.encode())
        self.assertEqual(words("use `method sort` or `method brute`"), "use method=sort or method=brute")
        self.assertEqual(words("`tree` excludes `sequences` and `depth`"),
                         "tree= excludes sequences= and depths=")
        self.assertEqual(words("`is` has `no_such` marker"), "`is` has `no_such` marker")
        self.assertEqual(words("pass `logits` if these are logits"),
                         "pass mdsd.softmax(logits) if these are logits")
        self.assertEqual(words("`verifiers rrs,x`: unknown"), "verifiers=rrs,x: unknown")


if __name__ == "__main__":
    unittest.main()
