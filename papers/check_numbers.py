#!/usr/bin/env python3
"""Ties the numbers quoted in papers/ prose to the committed results files they come from.

papers/numbers.tsv lists, one per line (tab-separated; '#' comments):

    FILE    PHRASE    EXPRESSION    FORMAT

FILE is a Markdown file under papers/; PHRASE is text of it with '{}' where the number
stands; EXPRESSION computes the number from results files under papers/ with
v(CSV, COLUMN, KEY=VALUE, ...) (the one row whose KEY columns equal the values; numbers
compared as numbers) and Python arithmetic; FORMAT is a format spec ('.4f', '.3g', 'd').
The check fails (exit 1) when a phrase with its computed number is missing from its file
(whitespace and line breaks count as one space): a number in prose that drifted from its
source. Parameters of a run (T = 0.1, n = 3) and numbers transcribed from a paper are not
listed: they are not our results.

    /usr/bin/python3 papers/check_numbers.py [--override CSV=PATH ...]

--override reads PATH for CSV (tests use it to plant a drift and see the check fail)."""
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    overrides = {}
    args = list(argv)
    while args and args[0] == "--override":
        key, _, path = args[1].partition("=")
        overrides[key] = path
        args = args[2:]
    tables = {}

    def table(name):
        if name not in tables:
            path = overrides.get(name, os.path.join(HERE, name))
            with open(path, newline="") as f:
                tables[name] = list(csv.DictReader(f))
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

    failures = checked = 0
    texts = {}
    with open(os.path.join(HERE, "numbers.tsv")) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            try:
                file, phrase, expr, fmt = line.split("\t")
            except ValueError:
                print(f"numbers.tsv:{lineno}: expected 4 tab-separated fields", file=sys.stderr)
                failures += 1
                continue
            if file not in texts:
                with open(os.path.join(HERE, file)) as g:
                    texts[file] = re.sub(r"\s+", " ", g.read())
            try:
                value = eval(expr, {"v": v, "rows": table, "abs": abs, "max": max, "min": min,
                                   "float": float})
            except Exception as e:  # a bad source is a failure, never a pass
                print(f"numbers.tsv:{lineno}: {expr}: {e}", file=sys.stderr)
                failures += 1
                continue
            if fmt == "d":
                value = int(round(value))
            want = phrase.replace("{}", format(value, fmt))
            checked += 1
            if want not in texts[file]:
                print(f"numbers.tsv:{lineno}: {file} does not say '{want}' ({expr} = {value!r})",
                      file=sys.stderr)
                failures += 1
    print(f"{checked} quoted numbers checked, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
