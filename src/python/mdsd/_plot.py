"""`mdsd plot` from Python, bound to the library's mdsd/plot.h so that Python and the CLI
select the same rows and draw the same figure: mdsd.plot (the gnuplot figure, returning
its path), mdsd.plot_series (the series that figure draws, as numpy arrays) and
mdsd.plot_matplotlib (those series drawn with matplotlib, for restyling)."""

import ctypes
import os
import warnings
from collections import namedtuple

import numpy as np

from . import _lib
from ._lib import lib

PlotFigure = namedtuple("PlotFigure", "kind title xlabel ylabel interval z lines")
PlotFigure.__doc__ = """The series of a figure (mdsd.plot_series): kind, title (title= or the
default: the fixed dump / n / T), the axis texts, the interval the error bars are at
("95% CI (±1.96 s.e.)"; half-width = z * s.e.) and lines, a list of PlotLine in the
order gnuplot draws them."""
PlotLine = namedtuple("PlotLine", "label style scheme method dump bound dash x y err se interval")
PlotLine.__doc__ = """One line of a figure: label (the legend text, labels= applied), style
(the style key of plots/styles.gp: the verifier, or the scheme of an alpha* line, 'other'
for a name outside the table), scheme, method, dump (the CSV's names; dump empty unless
overlaid; the draft cost 'c = C' of the block speed-up), bound (an alpha* line, drawn as a
band), dash (1-based dump or cost that sets the dash), x, y, err (the error half-width at
the interval), se (the CSV's standard error) as float64 arrays, interval (its name)."""


# The gnuplot scripts of an installed package: a wheel's (setup.py copies plots/ beside its
# program, mdsd/_bin/plots), or make install's PREFIX/share/mdsd/plots (the package in
# PREFIX/lib/python3.X/*-packages/mdsd). The library's own search (MDSD_PLOTS, beside the
# running program, ./plots) knows the program's place, not the package's.
_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE_PLOTS = [os.path.join(_HERE, "_bin", "plots"),
                  os.path.normpath(os.path.join(_HERE, "..", "..", "..", "..", "share", "mdsd",
                                                "plots"))]


def _list(x, what):
    """A CLI comma list: a str as given ("rrs" or "rrs,kseq"), or a list/tuple joined."""
    from . import MdsdTypeError, _cstr
    if x is None:
        return None
    if isinstance(x, (str, bytes, os.PathLike)):
        return _cstr(x, what)
    try:
        items = [os.fsdecode(v) if isinstance(v, (bytes, os.PathLike)) else str(v) for v in x]
    except TypeError:
        raise MdsdTypeError(1, f"{what}: expected a name or a list of names, got "
                            f"{type(x).__name__}") from None
    if not items or not all(items) or any("," in v for v in items):
        from . import MdsdError
        raise MdsdError(1, f"{what}: {x!r}: give names, none empty nor holding ','")
    return _cstr(",".join(items), what)


def _opts(kind, dump, dumps, n, temperature, scheme, method, title, labels, size, legend,
          terminal, scripts, keep):
    """The mdsd_plot_opts of the keywords; keep holds what the struct points at."""
    from . import MdsdError, MdsdTypeError, _cstr, _scalar, _uint
    o = _lib.init(_lib.PlotOpts)
    o.kind = None if kind is None else _cstr(kind, "kind")
    o.dump = None if dump is None else _cstr(dump, "dump")
    o.dumps = None if dumps is None else _list(dumps, "dumps")
    o.n = -1 if n is None else _uint(n, "n", 2**62)
    if temperature is not None:
        t = _scalar(temperature)
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)):
            raise MdsdTypeError(1, f"temperature: expected a number, got {type(t).__name__}")
        o.temperature = float(t)
    o.scheme = _list(scheme, "scheme")
    o.method = _list(method, "method")
    o.title = None if title is None else _cstr(title, "title")
    if labels:
        if not isinstance(labels, dict):
            raise MdsdTypeError(1, f"labels: expected a dict {{OLD: NEW}}, got {type(labels).__name__}")
        pairs = []
        for old, new in labels.items():
            old, new = str(old), str(new)
            if "=" in old:
                raise MdsdError(1, f"labels: OLD {old!r} holds '=' (the CSV's names do not)")
            pairs.append(_cstr(f"{old}={new}", "labels"))
        arr = (ctypes.c_char_p * len(pairs))(*pairs)
        keep.append(arr)
        o.n_labels, o.labels = len(pairs), arr
    o.paper_size = None if size is None else _cstr(size, "size")
    o.legend = None if legend is None else _cstr(legend, "legend")
    o.terminal = None if terminal is None else _cstr(terminal, "terminal")
    if scripts is None and not os.environ.get("MDSD_PLOTS"):
        scripts = next((d for d in _PACKAGE_PLOTS
                        if os.path.isfile(os.path.join(d, "styles.gp"))), None)
    o.scripts = None if scripts is None else _cstr(scripts, "scripts")
    # the notes `mdsd plot` prints on stderr, as warnings in Python words
    from . import _python_words
    note = _lib.PLOT_NOTE(lambda msg, _ctx: _warn(_python_words(msg)))
    keep.append(note)
    o.on_note = note
    return o


def _warn(msg):
    """A warning at the caller's line (the first frame outside this module)."""
    import sys
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    warnings.warn(msg, stacklevel=level)


def _call(csv, f, *args):
    """f(*args, err), its failure raised in Python words, naming the CSV csv."""
    from . import MdsdError, _option, _python_words
    err = _lib.Err()
    rc = f(*args, ctypes.byref(err))
    if rc:
        msg = _python_words(err.msg or lib.mdsd_strerror(rc))
        name = os.fsdecode(csv)
        raise MdsdError(rc, msg if name in msg else f"{name}: {msg}", _option(err.option))


def _read(results, o):
    """The series handle of results (checked as the CLI checks it) and the CSV's name."""
    from . import _cstr
    csv = _cstr(results, "results")
    handle = ctypes.c_void_p()
    _call(csv, lib.mdsd_plot_series_read, csv, ctypes.byref(o), ctypes.byref(handle))
    try:
        _call(csv, lib.mdsd_plot_check_labels, handle, ctypes.byref(o))
    except BaseException:
        lib.mdsd_plot_series_free(handle)
        raise
    return handle, csv


_DOC_KEYWORDS = """results: a results CSV of `mdsd table` (mdsd.table's output) or a block CSV of
    `mdsd block -o` (mdsd.block's). kind: vs-temperature, vs-drafts, per-draft, gap,
    block-depth, block-speedup, block-reach (None: block-depth for a block CSV); dump: the
    rows of one dump; dumps: overlay several dumps or drafters (a list, a comma list or
    'all'); n, temperature: the rows with that number of drafts (a block CSV: K of the
    seq policies) or temperature; scheme, method: the schemes / methods (verifiers) drawn
    (a list or comma list); title; labels: {OLD: NEW} shows the CSV's name OLD (a dump,
    dump:drafter, method, verifier or scheme) as NEW (recorded in the provenance; each
    OLD must be in the figure); size: screen, column or full; legend: outside, below,
    inside, top-left, top-right, bottom-left, bottom-right or none; terminal: a gnuplot
    terminal; scripts: the directory of the gnuplot scripts (None: $MDSD_PLOTS, the installed
    package's, ./plots; mdsd plot --help)."""


def plot(results, output, *, kind=None, dump=None, dumps=None, n=None, temperature=None,
         scheme=None, method=None, title=None, labels=None, size=None, legend=None,
         terminal=None, scripts=None):
    """`mdsd plot RESULTS -o OUTPUT`: draws the figure with gnuplot into output (.png,
    .svg or .pdf, or terminal=), written atomically with its provenance sidecar
    OUTPUT.provenance.json, and returns output's path. The same checks as the CLI: an
    output that is an input (the CSV, its sidecar, the scripts) or a directory is
    refused before any work. """ + _DOC_KEYWORDS
    from . import _call_words, _cstr
    keep = []
    o = _opts(kind, dump, dumps, n, temperature, scheme, method, title, labels, size, legend,
              terminal, scripts, keep)
    settings = dict(results=results, output=output, kind=kind, dump=dump, dumps=dumps, n=n,
                    temperature=temperature, scheme=scheme, method=method, title=title,
                    labels=labels, size=size, legend=legend, terminal=terminal, scripts=scripts)
    n_words, words = _call_words("mdsd.plot", {k: v for k, v in settings.items() if v is not None})
    keep.append(words)
    o.tool, o.n_words, o.words = b"mdsd.plot", n_words, words
    csv = _cstr(results, "results")
    _call(csv, lib.mdsd_plot, csv, _cstr(output, "output"), ctypes.byref(o))
    return os.fsdecode(output)


def plot_series(results, *, kind=None, dump=None, dumps=None, n=None, temperature=None,
                scheme=None, method=None, title=None, labels=None):
    """The series the figure of `mdsd plot` draws (the same rows, the same selection: the
    gnuplot route writes these), as a PlotFigure whose lines are PlotLine tuples of
    float64 arrays (x, y, err = the error half-width at the figure's interval, se).
    """ + _DOC_KEYWORDS
    keep = []
    o = _opts(kind, dump, dumps, n, temperature, scheme, method, title, labels, None, None,
              None, None, keep)
    handle, _ = _read(results, o)
    try:
        fig = _lib.PlotFigure()
        lib.mdsd_plot_series_figure(handle, ctypes.byref(fig))
        interval = fig.interval.decode()
        lines = []
        for i in range(fig.lines):
            ln = lib.mdsd_plot_series_line(handle, i).contents
            k = ln.points

            def arr(p):
                return np.ctypeslib.as_array(p, shape=(k,)).copy() if k else np.empty(0)
            lines.append(PlotLine(ln.label.decode(), ln.style.decode(), ln.scheme.decode(),
                                  ln.method.decode(), ln.dump.decode(), bool(ln.bound), ln.dash,
                                  arr(ln.x), arr(ln.y), arr(ln.half), arr(ln.se), interval))
        return PlotFigure(fig.kind.decode(), fig.title.decode(), fig.xlabel.decode(),
                          fig.ylabel.decode(), interval, fig.z, lines)
    finally:
        lib.mdsd_plot_series_free(handle)


# plots/styles.gp's colours, markers and dashes of the verifiers and alpha* lines, for the
# matplotlib route (other names: matplotlib's colour cycle)
_COLOURS = {"sd": "#4d4d4d", "rrs": "#0072b2", "rrsw": "#6a3d9a", "kseq": "#d55e00",
            "spechub": "#8c510a", "greedy": "#007a5e", "is": "#b3006b", "otm": "#666600"}
_MARKERS = {"sd": "D", "rrs": "o", "rrsw": "s", "kseq": "^", "spechub": "v", "greedy": "p",
            "is": "*", "otm": "x"}
_BOUNDS = {"iid": ("black", "--", "o"), "wor": ("black", "-.", "s"), "greedy": ("black", ":", "p"),
           "hub": ("#595959", "--", "v"), "cps": ("#595959", "-.", "^")}
_DASHES = ["-", "--", ":", "-."]


def plot_matplotlib(results, *, kind=None, ax=None, dump=None, dumps=None, n=None,
                    temperature=None, scheme=None, method=None, title=None, labels=None):
    """The figure of `mdsd plot` drawn with matplotlib on ax (None: a new figure's axes),
    from mdsd.plot_series (the same lines, values and interval): each verifier's line
    with error bars, each alpha* line dashed black over a grey band, the dump (or cost)
    setting the dash; the legend's title states the interval. Returns the Axes, to
    restyle as you like. Needs matplotlib (Debian: python3-matplotlib).
    """ + _DOC_KEYWORDS
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("mdsd.plot_matplotlib needs matplotlib (pip install matplotlib, or "
                          "the Debian package python3-matplotlib); mdsd.plot draws the same "
                          "figure with gnuplot and mdsd.plot_series returns its data") from e
    fig = plot_series(results, kind=kind, dump=dump, dumps=dumps, n=n, temperature=temperature,
                      scheme=scheme, method=method, title=title, labels=labels)
    if ax is None:
        _, ax = plt.subplots()
    for ln in fig.lines:
        dash = _DASHES[(ln.dash - 1) % len(_DASHES)]
        if ln.bound:
            colour, bdash, marker = _BOUNDS.get(ln.style, ("black", "--", "o"))
            ax.fill_between(ln.x, ln.y - ln.err, ln.y + ln.err, color="0.85", linewidth=0)
            ax.plot(ln.x, ln.y, linestyle=bdash if ln.dash == 1 else dash, color=colour,
                    marker=marker, markerfacecolor="none", label=ln.label)
        else:
            ax.errorbar(ln.x, ln.y, yerr=ln.err, linestyle=dash, marker=_MARKERS.get(ln.style, "o"),
                        capsize=2, color=_COLOURS.get(ln.style), label=ln.label)
    ax.set_xlabel(fig.xlabel)
    ax.set_ylabel(fig.ylabel)
    ax.set_title(fig.title)
    ax.legend(title=f"bars, bands: {fig.interval}")
    return ax
