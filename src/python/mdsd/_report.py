"""`mdsd report` from Python (mdsd.report): the C library's mdsd_report, the call the CLI
makes, so that both give the same bytes; and the layout names the table job, merge and
report share (mdsd_report_layout_parse)."""

import ctypes
import numbers
import os
import warnings

import numpy as np

from . import MdsdError, _call_words, _cstr, _lib, _option, _python_words, _scalar, _uint
from ._lib import lib

def _fail(rc, err):
    if rc:
        raise MdsdError(rc, _python_words(err.msg or lib.mdsd_strerror(rc)), _option(err.option))


def layout_code(layout, what="layout"):
    """None -> 0 (the default: both); "per-setting", "combined", "both" (or per_setting)
    -> the mdsd_report_layout; anything else refused naming the value."""
    if layout is None:
        return 0
    if not isinstance(layout, (str, bytes)):
        raise MdsdError(1, f"{what}: {layout!r} is not per-setting, combined or both")
    name = layout.decode() if isinstance(layout, bytes) else layout
    out = ctypes.c_int(0)
    err = _lib.Err()
    rc = lib.mdsd_report_layout_parse(_cstr(name.replace("_", "-"), what), ctypes.byref(out),
                                      ctypes.byref(err))
    if rc:
        raise MdsdError(rc, f"{what}: {err.msg.decode('utf-8', 'replace')}")
    return out.value


def _list(values, what, number=False):
    """None, the CLI's "a,b" text or a sequence (one name or number alone is a list of
    one) -> the comma list the library parses and checks; numbers as Python writes them
    (repr: 0.7, not 0.69999...), integers through _uint."""
    values = _scalar(values)
    if values is None:
        return None
    if isinstance(values, (str, bytes)):
        return _cstr(values, what)
    if isinstance(values, (numbers.Number, np.generic)):
        values = [values]
    out = []
    for v in values:
        v = _scalar(v)
        if isinstance(v, (bool, np.bool_)):
            raise MdsdError(1, f"{what}: {v!r} is not {'a number' if number else 'a name'}")
        if number and isinstance(v, (int, np.integer)):
            out.append(str(_uint(v, what)) if what == "drafts" else str(int(v)))
        elif number and isinstance(v, (float, np.floating)):
            out.append(repr(float(v)))
        elif isinstance(v, (str, bytes)):
            s = v.decode() if isinstance(v, bytes) else v
            if "," in s:
                raise MdsdError(1, f"{what}: {s!r} holds a comma (give the names one by one)")
            out.append(s)
        else:
            raise MdsdError(1, f"{what}: {v!r} is not {'a number' if number else 'a name'}")
    return _cstr(",".join(out), what)


def _labels(labels):
    """{OLD: NEW} or ["OLD=NEW", ...] -> the library's "OLD=NEW" strings (OLD ends at the
    first '=', so an OLD holding one is refused here)."""
    if labels is None:
        return []
    if isinstance(labels, dict):
        out = []
        for old, new in labels.items():
            if "=" in str(old):
                raise MdsdError(1, f"labels: {str(old)!r} holds '=', which ends a name in "
                                "OLD=NEW: it cannot be relabelled")
            out.append(f"{old}={new}")
        return out
    if isinstance(labels, (str, bytes)):
        labels = [labels]
    return [x.decode() if isinstance(x, bytes) else str(x) for x in labels]


def report(results, output=None, *, markdown=False, latex=False, format=None,
           standalone=False, layout=None, label_prefix=None, labels=None, temperatures=None,
           drafts=None, schemes=None, methods=None, dumps=None, is_top=None, paired=None,
           csv=False):
    """`mdsd report RESULTS.csv`: the results CSV of `mdsd table` (mdsd.table) as tables -
    rows scheme x method with each scheme's alpha*, columns dumps - without recomputing,
    the CLI's bytes. Returns the text, or, with output=PATH, writes it there atomically
    with PATH.provenance.json beside it (the CSV's own carried forward) and returns PATH.

    markdown=True (the default) or latex=True, or format="markdown" / "latex" / "csv";
    standalone: LaTeX as a whole document; layout: "per-setting", "combined" or "both"
    (None: both); label_prefix: LaTeX \\label prefix (None: tab:mdsd); labels: {OLD: NEW}
    shows the CSV's dump, scheme or method OLD as NEW (each OLD must be in the table
    kept; recorded in the provenance). temperatures, drafts, schemes, methods, dumps:
    keep these, in this order (a list, or the CLI's "a,b"); is_top: mark the is cells as
    truncated at S (None: from the CSV's provenance). paired="A:B,..." (or [(A, B), ...]):
    results is the per-position CSV of mdsd.table(per_position=...) instead, and the
    output the paired differences A - B (s.e. clustered by sample), Markdown or csv=True.
    A dump of one sample is told as a warning, as the CLI tells it on stderr."""
    if format is not None:
        if format not in ("markdown", "latex", "csv"):
            raise MdsdError(1, f"format: {format!r} is not markdown, latex or csv")
        if (markdown and format != "markdown") or (latex and format != "latex") or \
                (csv and format != "csv"):
            raise MdsdError(1, f"format={format!r} and markdown=, latex=, csv= disagree")
        markdown, latex, csv = format == "markdown", format == "latex", format == "csv"
    if markdown and latex:
        raise MdsdError(1, "markdown=True and latex=True: give one format")
    if paired is not None and not isinstance(paired, (str, bytes)):
        pairs = []
        for pair in paired:
            if isinstance(pair, (str, bytes)):
                pairs.append(pair.decode() if isinstance(pair, bytes) else pair)
            elif len(pair) == 2:
                pairs.append(f"{pair[0]}:{pair[1]}")
            else:
                raise MdsdError(1, f"paired: {pair!r} is not a pair (A, B) of column names")
        paired = ",".join(pairs)
    o = _lib.init(_lib.ReportOpts)
    o.latex, o.standalone, o.csv = 1 if latex else 0, 1 if standalone else 0, 1 if csv else 0
    o.layout = layout_code(layout)
    o.label_prefix = None if label_prefix is None else _cstr(label_prefix, "label_prefix")
    from .dump import _strings
    label_list = _labels(labels)
    lab = _strings(label_list, "labels")
    o.n_labels, o.labels = len(label_list), ctypes.cast(lab, ctypes.POINTER(ctypes.c_char_p))
    o.temperatures = _list(temperatures, "temperatures", number=True)
    o.drafts = _list(drafts, "drafts", number=True)
    o.schemes, o.methods = _list(schemes, "schemes"), _list(methods, "methods")
    o.dumps = _list(dumps, "dumps")
    o.is_top = -1 if is_top is None else _uint(is_top, "is_top", 2**63 - 1)
    o.paired = None if paired is None else _cstr(paired, "paired")
    settings = dict(results=results, output=output, markdown=markdown, latex=latex,
                    standalone=standalone, layout=layout, label_prefix=label_prefix,
                    labels=labels, temperatures=temperatures, drafts=drafts, schemes=schemes,
                    methods=methods, dumps=dumps, is_top=is_top, paired=paired, csv=csv)
    n_words, words = _call_words("mdsd.report", {k: v for k, v in settings.items()
                                                 if v is not None and v is not False})
    o.tool, o.n_words = b"mdsd.report", n_words
    o.words = ctypes.cast(words, ctypes.POINTER(ctypes.c_char_p))
    notes = []
    o.on_note = _lib.REPORT_NOTE(lambda msg, _ctx: notes.append(_python_words(msg)))
    text = ctypes.c_void_p()
    usage = ctypes.c_int(0)
    err = _lib.Err()
    path = None if output is None else _cstr(output, "output")
    rc = lib.mdsd_report(_cstr(results, "results"), path, ctypes.byref(o), ctypes.byref(text),
                         ctypes.byref(usage), ctypes.byref(err))
    try:
        _fail(rc, err)
        out = ctypes.string_at(text.value).decode("utf-8") if text.value else ""
    finally:
        lib.mdsd_report_free(text)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return os.fsdecode(path) if output is not None else out
