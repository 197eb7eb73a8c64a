/* mdsd/plot.h - the figures of `mdsd plot`: from a results CSV of `mdsd table`
 * (vs-temperature, vs-drafts, per-draft, gap) or a block CSV of `mdsd block -o`
 * (block-depth, block-speedup, block-reach), drawn by the gnuplot scripts
 * plots/KIND.gp, or returned as the series those scripts draw (per line: its
 * legend text, style key, x, y and the error half-width at the stated
 * interval) for callers that draw them themselves. One selection of rows feeds
 * both: the gnuplot route writes the series this header returns. The CLI is
 * these calls in order (mdsd_plot_default_kind when no kind is given,
 * mdsd_plot_check_opts, mdsd_plot_check_paths, mdsd_plot_series_read,
 * mdsd_plot_check_labels, mdsd_plot_draw); mdsd_plot makes them all. */
#ifndef MDSD_PUBLIC_PLOT_H
#define MDSD_PUBLIC_PLOT_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The options of `mdsd plot` (mdsd plot --help), NULL/NaN/-1 = not given. */
typedef struct {
    size_t size;               /* set by the _init below; checked by the library (mdsd/common.h) */
    const char *kind;          /* --kind (NULL: block-depth for a block CSV, refused for others) */
    const char *dump;          /* --dump D: rows of this dump only */
    const char *dumps;         /* --dumps LIST|all: overlay dumps (not with dump) */
    int64_t n;                 /* --n N (a block CSV: K of the seq policies); _init: -1, any */
    double temperature;        /* --temperature T; _init: NaN, any */
    const char *scheme;        /* --scheme LIST */
    const char *method;        /* --method LIST (a block CSV: verifiers) */
    const char *title;         /* --title (NULL: the fixed dump / n / T) */
    size_t n_labels;           /* --label OLD=NEW, each "OLD=NEW" (OLD ends at the first '=') */
    const char *const *labels;
    const char *paper_size;    /* --size: screen (NULL), column or full */
    const char *legend;        /* --legend (NULL: outside; below for column) */
    const char *terminal;      /* --terminal (NULL: from the output's extension) */
    const char *scripts;       /* --scripts DIR (NULL: $MDSD_PLOTS, beside the binary, ...) */
    /* the figure's provenance sidecar: "tool" and "command" ("mdsd" then
     * words[0..n_words)); NULL tool: "mdsd plot" with no words */
    const char *tool;
    size_t n_words;
    const char *const *words;
    /* the notes `mdsd plot` prints on stderr ("r.csv has several dumps;
     * plotting ..."), without the "mdsd plot: " prefix; NULL: printed on
     * stderr with it */
    void (*on_note)(const char *note, void *ctx);
    void *note_ctx;
} mdsd_plot_opts;

/* Writes the defaults (n = -1, temperature = NaN, the rest 0/NULL) and size. */
MDSD_API void mdsd_plot_opts_init(mdsd_plot_opts *opts, size_t size);
#define mdsd_plot_opts_init(opts) mdsd_plot_opts_init((opts), sizeof *(opts))

/* The kind drawn when none is given: "block-depth" for a block CSV (its
 * block_efficiency column) into *kind (static), else *kind = NULL (a results
 * CSV has no default: the caller must choose). Errors: the CSV unreadable. */
MDSD_API mdsd_status mdsd_plot_default_kind(const char *csv, const char **kind, mdsd_err *err);

/* The options on their own (no file read): size, legend, labels' form
 * (OLD=NEW, none twice, at most 64), dump with dumps, n, temperature, the
 * kind's name and the options a block CSV's kinds do not take (a NULL kind:
 * those two not checked). MDSD_EINVAL with the CLI's message (a usage error
 * there). */
MDSD_API mdsd_status mdsd_plot_check_opts(const mdsd_plot_opts *opts, mdsd_err *err);

/* The output-safety check of `mdsd plot` before any work (mdsd/output.h): the
 * figure and its sidecar FILE.provenance.json must not be the CSV, its
 * sidecar, the gnuplot script or styles.gp, nor a directory; and the script
 * must exist. */
MDSD_API mdsd_status mdsd_plot_check_paths(const char *csv, const char *output, const mdsd_plot_opts *opts,
                                           mdsd_err *err);

/* The series of a figure: read and select the CSV's rows (malformed values
 * refused naming file, line, column and value). Labels are applied to the
 * legend texts but not checked (mdsd_plot_check_labels). */
typedef struct mdsd_plot_series mdsd_plot_series;
MDSD_API mdsd_status mdsd_plot_series_read(const char *csv, const mdsd_plot_opts *opts,
                                           mdsd_plot_series **out, mdsd_err *err);
MDSD_API void mdsd_plot_series_free(mdsd_plot_series *s);

/* Every label's OLD names something the figure shows (a dump, drafter,
 * method, scheme or policy): else MDSD_EINVAL (a usage error of the CLI). */
MDSD_API mdsd_status mdsd_plot_check_labels(const mdsd_plot_series *s, const mdsd_plot_opts *opts,
                                            mdsd_err *err);

/* The figure: kind, title (--title or the default), axis texts, and the
 * interval the error half-widths are at ("95% CI (±1.96 s.e.)"); strings
 * owned by s. */
typedef struct {
    const char *kind, *title, *xlabel, *ylabel, *interval;
    double z;                  /* half-width = z * s.e. (1.96) */
    size_t lines;              /* mdsd_plot_series_line's i < lines */
} mdsd_plot_figure;
MDSD_API void mdsd_plot_series_figure(const mdsd_plot_series *s, mdsd_plot_figure *fig);

/* Line i: the points gnuplot draws, in its order (the verifiers' lines, then
 * the alpha* lines, bound = 1, that gnuplot shades as a band). label is the
 * legend text (relabelled); style the style key of plots/styles.gp (a
 * verifier's name for a line, the scheme for alpha*, "other" for a name
 * outside the table); dash the 1-based dump (overlays, or the draft cost of
 * the block speed-up) that sets the dash; scheme, method, dump the CSV's
 * names (dump empty unless overlaid). x, y, se, half (= z se) hold points
 * values each, owned by s. NULL for i out of range. */
typedef struct {
    const char *label, *style, *scheme, *method, *dump;
    int bound;
    size_t dash;
    size_t points;
    const double *x, *y, *se, *half;
} mdsd_plot_line;
MDSD_API const mdsd_plot_line *mdsd_plot_series_line(const mdsd_plot_series *s, size_t i);

/* Draws s with gnuplot into output (.png, .svg, .pdf, or opts->terminal's):
 * written to a temporary name, checked whole, its provenance sidecar put in
 * place first, then renamed onto output; nothing left on failure. */
MDSD_API mdsd_status mdsd_plot_draw(const mdsd_plot_series *s, const char *csv, const char *output,
                                    const mdsd_plot_opts *opts, mdsd_err *err);

/* The form of labels[0..n) of `mdsd plot` and `mdsd report` --label: each
 * "OLD=NEW" (OLD ends at the first '=', neither side empty), no OLD twice, at
 * most 64; else MDSD_EINVAL naming the label. */
MDSD_API mdsd_status mdsd_labels_check(size_t n, const char *const *labels, mdsd_err *err);

/* `mdsd plot CSV -o OUTPUT` with opts: every step above. */
MDSD_API mdsd_status mdsd_plot(const char *csv, const char *output, const mdsd_plot_opts *opts,
                               mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
