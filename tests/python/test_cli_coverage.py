"""Every long option of every `mdsd COMMAND --help` has a Python keyword in the function(s)
that do the command's job, or a reason in the one table below (issue 40 item 3: "a test
fails if a CLI option has no Python keyword"). A new CLI option without either fails
here; so does a reason left in the table once the keyword exists, and a command listed
as not yet bound once mdsd has a function of its name. Run by tests/test_package.c:
`PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_cli_coverage`."""

import inspect
import re
import subprocess
import unittest

import mdsd
from support import ROOT, mdsd_bin

# command -> the Python functions whose keywords together take its options.
BINDINGS = {
    "bound": ("alpha_star_result", "alpha_star"),
    "lp": ("alpha_star_result", "lp_export"),
    "accept": ("verifier_rate", "monte_carlo"),
    "draft": ("sample_drafts", "subset_probability"),
    "dist": ("softmax", "truncate"),
    "info": ("DumpReader",),
    "table": ("table",),
    "merge": ("merge",),
    "block": ("block",),
    "toy": ("toy",),
    "plot": ("plot", "plot_series", "plot_matplotlib"),
    "check": ("check", "check_list"),
    "report": ("report",),
}

# Jobs with no Python function yet: each of their options is reported as such.
NOT_YET_BOUND = ()

# The keyword where its name is not the option's (- as _): (command or None, option).
KEYWORDS = {
    (None, "--target"): "p",
    (None, "--draft"): "q",
    (None, "--drafts"): "n",
    (None, "--custom"): "joint",
    ("bound", "--show-subset"): "want_subset",
    ("lp", "--write"): "path",
    ("draft", "--sample"): "size",
    ("draft", "--seed"): "rng",
    ("dist", "--target"): "p",  # truncate(p); softmax(logits) is --logits
    ("table", "--drafts"): "draft_counts",
    ("table", "--draft-model"): "draft_models",
    ("table", "--positions"): "rows",
    ("block", "--depth"): "depths",
    ("block", "--cost"): "costs",
    ("toy", "--drafts"): "drafts",
    ("plot", "--label"): "labels",
    ("report", "--drafts"): "drafts",
    ("report", "--label"): "labels",
}

_PREPARE = ("mdsd.softmax(logits, temperature) and mdsd.truncate(p, top_k, top_p) prepare p "
            "and q before the call, as the CLI does before its job")
# (command or None for every command, option) -> why Python has no keyword for it.
REASONS = {
    (None, "--help"): "help() and the docstrings",
    (None, "--json"): "Python returns objects (named tuples, dicts, arrays, DataFrames)",
    **{(c, o): _PREPARE for c in ("bound", "lp", "accept", "draft")
       for o in ("--logits", "--temperature", "--top-k", "--top-p")},
    ("dist", "--draft"): "the same functions on q: one distribution per call",
    ("lp", "--plan"): "not yet bound (the optimal plan pi(y, x))",
    ("lp", "--write-data"): "not yet bound (MathProg data export)",
    ("accept", "--exact"): "verifier_rate is the exact route, monte_carlo the sampled one",
    ("draft", "--target"): "draft reads p only to print it; q gives V",
    ("info", "--validate"): "mdsd.validate_dump(path) is the call",
    ("check", "--list"): "mdsd.check_list(family, only) is the call",
    ("block", "--exact"): "the default without trials= (trials=0)",
}

# The verifier options every **opts takes (mdsd._vopts).
OPTS = tuple(inspect.signature(mdsd._vopts).parameters)

OPTION = re.compile(r"--[a-z][a-z0-9-]*")


def long_options(command):
    """The long options of `mdsd COMMAND --help`: lines indented at most 8 spaces that
    begin with an option (deeper lines continue a description), every option before the
    description (block: `--markdown FILE, --latex FILE`)."""
    out = subprocess.run([mdsd_bin(), command, "--help"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    found = set()
    for line in out.stdout.splitlines():
        m = re.match(r"( {1,8})(-\S.*)$", line)
        if not m:
            continue
        head = re.split(r" {2,}", m.group(2))[0]
        found.update(OPTION.findall(head))
    return found


def keywords(names):
    """The keywords of the functions (classes: __init__), **opts as the verifier options."""
    out = set()
    for name in names:
        f = getattr(mdsd, name)
        for p in inspect.signature(f).parameters.values():
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                out.update(OPTS)
            elif not p.name.startswith("_"):
                out.add(p.name)
    return out


def lookup(table, command, option):
    return table.get((command, option), table.get((None, option)))


def uncovered(options_of, bindings=BINDINGS):
    """(command, option, what is wrong) for every option without a keyword or reason, and
    every reason that names a keyword the function now has."""
    problems = []
    for command, names in sorted(bindings.items()):
        have = keywords(names)
        for option in sorted(options_of(command)):
            keyword = lookup(KEYWORDS, command, option) or option[2:].replace("-", "_")
            reason = lookup(REASONS, command, option)
            if keyword in have and reason is not None and (command, option) in REASONS:
                problems.append((command, option, f"has keyword {keyword}= but a reason"))
            elif keyword not in have and reason is None:
                problems.append((command, option, f"no keyword {keyword}= in "
                                 f"{', '.join(names)} and no reason"))
    return problems


class CliCoverage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if mdsd_bin() is None:
            raise AssertionError("MDSD_BIN is not set to the mdsd binary")
        listing = subprocess.run([mdsd_bin(), "--help"], capture_output=True, text=True,
                                 timeout=60).stdout
        cls.commands = re.findall(r"^  ([a-z]+) {2,}", listing.split("Commands:")[1], re.M)
        cls.options = {c: long_options(c) for c in cls.commands}

    def test_every_command_is_bound_or_listed(self):
        self.assertGreaterEqual(len(self.commands), 13)
        self.assertEqual(sorted(self.commands), sorted((*BINDINGS, *NOT_YET_BOUND)))
        for command in NOT_YET_BOUND:
            self.assertFalse(hasattr(mdsd, command),
                             f"mdsd.{command} exists: move '{command}' to BINDINGS")

    def test_every_option_has_a_keyword_or_a_reason(self):
        self.assertIn("--show-subset", self.options["bound"])
        self.assertIn("--latex", self.options["block"])  # `--markdown FILE, --latex FILE`
        self.assertNotIn("--resume", self.options["report"])  # prose, not an option
        self.assertEqual(uncovered(self.options.get), [])

    def test_every_reason_names_an_option_of_its_command(self):
        for (command, option) in REASONS:
            commands = [command] if command else list(BINDINGS)
            self.assertTrue(any(option in self.options[c] for c in commands),
                            f"REASONS has ({command}, {option}), which no --help lists")

    def test_a_missing_keyword_fails(self):
        """A planted gap: alpha_star_result without force= (lp's --force; bound's is
        alpha_star's too)."""
        real = mdsd.alpha_star_result

        def without_force(p, q=None, n=None, scheme="iid", method="auto", joint=None,
                          exact_arith=False, want_subset=False, max_tuples=0, max_vars=0):
            return real(p, q, n, scheme, method, joint, exact_arith, want_subset, max_tuples,
                        max_vars)

        mdsd.alpha_star_result = without_force
        try:
            problems = uncovered(self.options.get)
        finally:
            mdsd.alpha_star_result = real
        self.assertIn(("lp", "--force"), [(c, o) for c, o, _ in problems])


if __name__ == "__main__":
    unittest.main()
