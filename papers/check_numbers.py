#!/usr/bin/env python3
"""Every number in the prose of papers/FINDINGS.md, papers/README.md and papers/*/README.md
(and papers/pairs/BLOCK.md) is accounted for: tied to a committed results file, or classified with a reason.

The check finds every number of those files (decimals, percentages, integers with
thousands separators, scientific notation such as 2 × 10⁻¹⁶ or 1e-9, fractions' parts,
numbers in result tables and in code blocks that show output) and requires each to be
covered by a line of papers/numbers.tsv (tab-separated; '#' comments):

    FILE    PHRASE    EXPRESSION    FORMAT       a number tied to its results file
    FILE    PHRASE    CLASS         REASON       a number that is not our result

FILE is a file under papers/ ('*' for every checked file). PHRASE is text of the file
(whitespace and line breaks count as one space) with '{}' where a number stands.

Tied (type a): EXPRESSION computes the number(s) from results files under papers/ with
  v(CSV, COLUMN, KEY=VALUE, ...)   the one row whose KEY columns equal the values
                                   (numbers compared as numbers),
  rows(CSV)                        every row of a CSV (a list of dicts),
  t(FILE, REGEX)                   the number in group 1 of the one match of REGEX in a
                                   generated text file (.md, .txt),
  text(FILE), re                   a generated file's text and Python's re module,
  whole(x[, tol])                  x rounded when within tol (1e-6) of an integer,
  md(FILE, TITLE)                  the body rows (lists of cells) of the first Markdown
                                   table after the line containing TITLE in FILE,
and Python arithmetic; 'let NAME EXPRESSION' (3 fields) defines a shorthand for the
lines below it (e.g. a function of a CSV's keys). A phrase with k '{}' takes an expression
giving k values. FORMAT is a format spec ('.4f', '.3g', 'd', ',d'; 'p10' writes a power of
ten as 10⁻¹³), or several separated by '|', one per '{}'. The phrase with the computed
numbers must be in FILE: a number that drifted from its source fails. Every number that
changes when the results are regenerated must be tied. A claimed bound is tied with
within(x, BOUND), which gives BOUND when x <= BOUND and x otherwise (defined by a 'let').

An EXPRESSION written 'published: EXPRESSION' ties a published number the same way to the
file that transcribes it from the paper (e.g. hu/published_table1.csv).

Classified (type b): CLASS is one of
  published   quoted from a paper (REASON cites its table, figure or section),
  parameter   an input setting of a run; its value must appear in a command shown in the
              same file or in a script of the paper's folder (else the check fails),
  constant    a formula constant, section / theorem / table / figure number, year, count
              of things that are not results (REASON says which).
A classified PHRASE covers the numbers at its '{}' (which match any number), or every
number in it when it has no '{}'; 're:REGEX' instead of a phrase covers group 1 (or the
whole match) of every match: the rules for every file ('*') are such regexes (references
such as Thm 4 or §4.2.2, settings such as T = 0.7). A tie outranks a classification by
phrase, which outranks one by a regex. A classification that matches nothing fails
(stale), so an edited quote written out literally shows up as an unclassified number.

Skipped: shell commands (the command part of the lines of ```sh blocks and of '$ ' lines;
their '#' comments, which carry results, are checked), inline code spans (commands, file
and column names), link targets, and digits inside words (kn2, fig1.csv, OPT-6.7B).

The check also refuses a results CSV under papers/ whose rows do not all have the header's
number of fields (a ragged CSV).

    /usr/bin/python3 papers/check_numbers.py [--list] [--override FILE=PATH ...]

--list prints every number with its file, line and classification. --override FILE=PATH
reads PATH for FILE, a results file or a checked Markdown file (tests use it to plant a
drift, a ragged CSV or an unclassified number, and see the check fail).
Exit status 1 on any failure, each reported as FILE:LINE: ... on standard error."""
import csv
import glob
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES = ("published", "parameter", "constant")
SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
# A number: plain, with thousands separators, with an exponent (1e-9), times a power of ten
# written with superscripts (2 × 10⁻¹⁶), a bare power of ten (10⁶), or a percentage.
NUM = (r"(?<![\w\\])(?<!\w-)(?<!\w\.)"
       r"(?:\d{1,3}(?:,\d{3})+(?![\d])|\d+(?:\.\d+)?)"
       r"(?:[eE][-+]?\d+)?"
       r"(?:\s?×\s?10(?:[⁻⁺]?[" + SUP + r"]+)?|[⁻⁺]?[" + SUP + r"]+)?"
       r"%?(?![\w])")
NUM_RE = re.compile(NUM)
DOCS = ["FINDINGS.md", "README.md"] + sorted(
    os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "*", "README.md")))
# a README's section kept in a file of its own until merged into it (issue 30)
DOCS += [d for d in ["pairs/BLOCK.md"] if os.path.exists(os.path.join(HERE, d))]


def numeric(token):
    """The value of a number token (None for forms that have no single value)."""
    s = token.replace(",", "").rstrip("%")
    m = re.match(r"^([\d.]+(?:[eE][-+]?\d+)?)(?:\s?×\s?10([⁻⁺]?[" + SUP + r"]+))?$", s)
    if m:
        x = float(m.group(1))
        if m.group(2):
            e = m.group(2).translate(str.maketrans(SUP + "⁻⁺", "0123456789-+"))
            x *= 10.0 ** int(e)
        return x
    m = re.match(r"^(\d+)([⁻⁺]?[" + SUP + r"]+)$", s)
    if m:
        e = m.group(2).translate(str.maketrans(SUP + "⁻⁺", "0123456789-+"))
        return float(m.group(1)) ** int(e)
    return None


class Doc:
    """A Markdown file with its whitespace collapsed (phrases span line breaks) and a mask
    of the characters whose numbers are not checked (commands, code spans, link targets)."""

    def __init__(self, name, path):
        self.name = name
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        skip = [False] * len(raw)
        self.commands = []  # text of the commands shown (numbers a parameter may cite)
        pos = 0
        fence = None
        for line in raw.splitlines(keepends=True):
            start, end = pos, pos + len(line)
            pos = end
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = None if fence is not None else stripped[3:].strip()
                for i in range(start, end):
                    skip[i] = True
                continue
            cmd_end = start
            if fence is not None:
                body = line.rstrip("\n")
                if fence in ("sh", "bash", "console"):
                    m = re.search(r"(^|\s)#", body)
                    cmd_end = start + (m.start() if m else len(body))
                elif body.lstrip().startswith("$ "):
                    m = re.search(r"\s{3,}|\s#", body)
                    cmd_end = start + (m.start() if m else len(body))
            for i in range(start, cmd_end):
                skip[i] = True
            self.commands.append(raw[start:cmd_end])
            if fence is None:
                for m in re.finditer(r"\]\(([^)]*)\)", line):
                    for i in range(start + m.start(1), start + m.end(1)):
                        skip[i] = True
        # inline code spans (commands, file and column names), which may span lines
        for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", raw, re.S):
            if not any(skip[m.start():m.end()]):
                self.commands.append(m.group(2))
                for i in range(m.start(), m.end()):
                    skip[i] = True
        # collapse whitespace, keeping each character's original offset
        text, where = [], []
        last_space = False
        for i, ch in enumerate(raw):
            if ch.isspace():
                if last_space:
                    continue
                ch, last_space = " ", True
            else:
                last_space = False
            text.append(ch)
            where.append(i)
        self.text = "".join(text)
        self.where = where
        self.skip = [skip[i] for i in where]
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", raw)]
        self.numbers = [(m.start(), m.end(), m.group(0)) for m in NUM_RE.finditer(self.text)
                        if not any(self.skip[m.start():m.end()])]

    def line(self, offset):
        import bisect
        return bisect.bisect_right(self.line_starts, self.where[offset])


def phrase_regex(phrase, values=None):
    """A regex for PHRASE: literal text (any whitespace run = one space), '{}' as a group
    matching the given formatted value, or any number when values is None."""
    parts = phrase.split("{}")
    out = []
    for k, part in enumerate(parts):
        out.append(re.escape(re.sub(r"\s+", " ", part)))
        if k < len(parts) - 1:
            out.append("(" + (re.escape(values[k]) if values is not None else NUM) + ")")
    return re.compile("".join(out))


def command_numbers(doc):
    """Every numeric value in the commands shown by DOC and in its folder's scripts."""
    texts = list(doc.commands)
    folder = os.path.dirname(os.path.join(HERE, doc.name))
    # the top-level pages speak of every paper's runs
    folders = [folder] if folder != HERE else glob.glob(os.path.join(HERE, "*", ""))
    for folder in folders:
        for ext in ("sh", "py", "gp"):
            for path in glob.glob(os.path.join(folder, "*." + ext)):
                with open(path, encoding="utf-8") as f:
                    texts.append(f.read())
    values = set()
    for text in texts:
        for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text):
            values.add(float(m.group(0)))
    return values


def main(argv):
    overrides = {}
    listing = False
    args = list(argv)
    while args:
        if args[0] == "--list":
            listing, args = True, args[1:]
        elif args[0] == "--override" and len(args) > 1:
            key, _, path = args[1].partition("=")
            overrides[key] = path
            args = args[2:]
        else:
            print(__doc__.split("\n\n")[-2], file=sys.stderr)
            return 2
    failures = []

    def fail(msg):
        failures.append(msg)
        print(msg, file=sys.stderr)

    # every results CSV must be rectangular (a ragged one is misread by csv.DictReader)
    tables = {}

    def read_csv(name):
        path = overrides.get(name, os.path.join(HERE, name))
        with open(path, newline="", encoding="utf-8") as f:
            data = list(csv.reader(f))
        while data and data[0] and data[0][0].startswith("#"):  # leading comment lines
            data.pop(0)
        header = data[0] if data else []
        for k, row in enumerate(data[1:], 2):
            if len(row) != len(header):
                raise ValueError(f"{name}:{k}: {len(row)} fields, the header has "
                                 f"{len(header)} (a ragged CSV)")
        return [dict(zip(header, row)) for row in data[1:]]

    for path in sorted(glob.glob(os.path.join(HERE, "**", "*.csv"), recursive=True)):
        name = os.path.relpath(path, HERE)
        try:
            tables[name] = read_csv(name)
        except ValueError as e:
            fail(str(e))

    def table(name):
        if name not in tables:
            tables[name] = read_csv(name)
        return tables[name]

    def same(cell, want):
        if isinstance(want, str):
            return cell == want
        try:
            return float(cell) == float(want)
        except ValueError:
            return False

    def v(name, column, **where):
        rows = [r for r in table(name) if all(same(r[k], w) for k, w in where.items())]
        if len(rows) != 1:
            raise ValueError(f"{name}: {len(rows)} rows match {where}")
        return float(rows[0][column])

    texts = {}

    def t(name, regex):
        if name not in texts:
            with open(overrides.get(name, os.path.join(HERE, name)), encoding="utf-8") as f:
                texts[name] = f.read()
        found = re.findall(regex, texts[name], re.M)
        if len(found) != 1:
            raise ValueError(f"{name}: {len(found)} matches of {regex!r}")
        return float(found[0] if isinstance(found[0], str) else found[0][0])

    def md(name, title):
        """The body rows (lists of cells) of the first Markdown table after the line of
        generated file NAME that contains TITLE."""
        if name not in texts:
            with open(overrides.get(name, os.path.join(HERE, name)), encoding="utf-8") as f:
                texts[name] = f.read()
        lines = texts[name].splitlines()
        at = next(k for k, line in enumerate(lines) if title in line)
        out = []
        for line in lines[at:]:
            if line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not all(set(c) <= set("-: ") for c in cells):
                    out.append(cells)
            elif out:
                break
        return out[1:]  # without the header row

    def text(name):
        if name not in texts:
            with open(overrides.get(name, os.path.join(HERE, name)), encoding="utf-8") as f:
                texts[name] = f.read()
        return texts[name]

    def whole(x, tol=1e-6):
        """X rounded when it is within TOL of an integer (1/9 written as a fraction)."""
        return round(x) if abs(x - round(x)) < tol else x

    env = {"md": md, "text": text, "re": re, "whole": whole, "v": v, "rows": table, "t": t, "abs": abs, "max": max, "min": min,
           "float": float, "sum": sum, "len": len, "round": round}
    docs = {name: Doc(name, overrides.get(name, os.path.join(HERE, name))) for name in DOCS}
    # covered[doc][k] = (kind, entry line) for the doc's k-th number
    covered = {name: {} for name in docs}

    def cover(doc, span, kind, lineno, what, rank):
        """Marks the numbers starting in SPAN (2.4 of 2.4 × 10⁻¹⁵) as KIND; a tie (rank 3)
        outranks a classification by phrase (2), which outranks one by a regex rule (1)."""
        n = 0
        for k, (a, b, _) in enumerate(doc.numbers):
            if span[0] <= a < span[1]:
                if k not in covered[doc.name] or covered[doc.name][k][3] < rank:
                    covered[doc.name][k] = (kind, lineno, what, rank)
                n += 1
        return n

    with open(os.path.join(HERE, "numbers.tsv"), encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if fields[0] == "let" and len(fields) == 3:
                try:
                    env[fields[1]] = eval(fields[2], env)
                except Exception as e:
                    fail(f"numbers.tsv:{lineno}: let {fields[1]}: {e}")
                continue
            if len(fields) != 4:
                fail(f"numbers.tsv:{lineno}: expected 4 tab-separated fields")
                continue
            file, phrase, expr, fmt = fields
            names = list(docs) if file == "*" else [file]
            if any(n not in docs for n in names):
                fail(f"numbers.tsv:{lineno}: {file} is not a checked file")
                continue
            if expr in CLASSES:
                if not fmt.strip():
                    fail(f"numbers.tsv:{lineno}: a {expr} number needs a reason")
                    continue
                if phrase.startswith("re:"):
                    rx = re.compile(phrase[3:])
                else:
                    rx = phrase_regex(phrase)
                hits = 0
                for name in names:
                    doc = docs[name]
                    for m in rx.finditer(doc.text):
                        spans = [m.span(g) for g in range(1, (m.lastindex or 0) + 1)
                                 if m.span(g)[0] >= 0] or [m.span()]
                        for span in spans:
                            hits += 1
                            cover(doc, span, expr, lineno, fmt,
                                  1 if phrase.startswith("re:") else 2)
                if not hits:
                    fail(f"numbers.tsv:{lineno}: {file} no longer says '{phrase}' "
                         f"(a stale {expr} entry)")
                continue
            kind = "tied"
            if expr.startswith("published:"):  # a published number tied to its transcription
                kind, expr = "published", expr[len("published:"):].strip()
            try:
                value = eval(expr, dict(env))
            except Exception as e:  # a bad source is a failure, never a pass
                fail(f"numbers.tsv:{lineno}: {expr}: {e}")
                continue
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            fmts = fmt.split("|")
            if len(fmts) == 1:
                fmts = fmts * len(values)
            if len(values) != phrase.count("{}") or len(fmts) != len(values):
                fail(f"numbers.tsv:{lineno}: {len(values)} values, {phrase.count('{}')} "
                     f"'{{}}' and {len(fmts)} formats")
                continue
            shown = []
            for x, spec in zip(values, fmts):
                if spec == "p10":  # a power of ten written 10⁻¹³
                    e = round(math.log10(x)) if x > 0 else 0
                    shown.append("10" + str(e).translate(str.maketrans("-0123456789", "⁻" + SUP))
                                 if x > 0 and abs(x / 10.0 ** e - 1) < 1e-9 else repr(x))
                    continue
                if spec.endswith("d"):
                    x = int(round(x))
                shown.append(format(x, spec).replace("-", "−"))
            rx = phrase_regex(phrase, shown)
            hits = 0
            for name in names:
                doc = docs[name]
                for m in rx.finditer(doc.text):
                    hits += 1
                    for g in range(1, len(shown) + 1):
                        cover(doc, m.span(g), kind, lineno, expr, 3)
            if not hits:
                want = phrase
                for s in shown:
                    want = want.replace("{}", s, 1)
                fail(f"numbers.tsv:{lineno}: {file} does not say '{want}' ({expr} = "
                     f"{values!r})")

    counts = dict.fromkeys(("tied",) + CLASSES, 0)
    transcribed = 0
    have = {}
    for name, doc in docs.items():
        for k, (a, b, tok) in enumerate(doc.numbers):
            if k in covered[name]:
                kind, lineno, what, rank = covered[name][k]
                counts[kind] += 1
                transcribed += kind == "published" and rank == 3
                if kind == "parameter":
                    if name not in have:
                        have[name] = command_numbers(doc)
                    if numeric(tok) not in have[name]:
                        fail(f"{name}:{doc.line(a)}: parameter {tok} (numbers.tsv:{lineno}) is "
                             f"in no command shown in {name} or its folder's scripts")
                if listing:
                    print(f"{name}:{doc.line(a)}: {tok}\t{kind}\tnumbers.tsv:{lineno}\t{what}")
            else:
                ctx = doc.text[max(0, a - 40):b + 20]
                fail(f"{name}:{doc.line(a)}: the number {tok} is neither tied to a results "
                     f"file nor classified in numbers.tsv (…{ctx}…)")
    total = sum(counts.values()) + sum(len(d.numbers) - len(covered[n])
                                       for n, d in docs.items())
    print(f"{total} numbers in papers/ prose: {counts['tied']} tied to results files, "
          f"{counts['published']} published ({transcribed} checked against their transcription), "
          f"{counts['parameter']} parameters, "
          f"{counts['constant']} constants; {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
