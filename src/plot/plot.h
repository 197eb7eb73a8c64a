/* plot.h - the parts of the figures of `mdsd plot` (mdsd/plot.h) shared by
 * its files: plot_rows.c (the results CSV's kinds: selecting rows into
 * series), plot_block.c (the block CSV's kinds), plot_draw.c (the data
 * blocks and variables gnuplot reads), plot_gnuplot.c (running gnuplot) and
 * plot_api.c (the public calls). */
#ifndef MDSD_PLOT_H
#define MDSD_PLOT_H
#include <mdsd/plot.h>

#include <stdbool.h>
#include <stddef.h>

#include "csv.h"
#include "err.h"

/* One point of a series (x, y and its standard error e). */
typedef struct {
    size_t series;
    double x, y, e;
} point;

/* The series of a figure, keyed "scheme\tmethod\tdump" (dump empty unless
 * overlaid): the legend entry is "DUMP: method (scheme)". */
typedef struct {
    char **keys;
    size_t n;
} series_list;

long plot_series_index(series_list *s, const char *scheme, const char *method, const char *dump);
int plot_add_point(point **pts, size_t *n, size_t *cap, point p);
/* Every entry of the comma list names a value of column col (one: the whole
 * string is one name; "all" passes unless one); else an error naming opt. */
int plot_check_list(const mdsd_csv *t, int col, const char *list, const char *opt, bool one,
                    mdsd_err *err);
int plot_in_list(const char *list, const char *s);

/* The block CSV's figures (`mdsd block -o`): E[tau] against the depth L, the
 * speed-up against L (one dash per draft cost), the per-position reach
 * P(at least d accepted) against d at the deepest L. */
enum { PLOT_BLOCK_DEPTH = 1, PLOT_BLOCK_SPEEDUP, PLOT_BLOCK_REACH };

typedef struct {
    const char *dump;     /* in: --dump or NULL; out: the dump drawn */
    const char *method;   /* --method: verifiers (comma list) or NULL */
    long sequences;       /* --n: sequences K of the seq policies, or -1 (the largest) */
    bool overlay;         /* out: several costs (speed-up), the "dump" of a key is the cost */
    void (*note)(const char *msg, void *ctx);
    void *note_ctx;
} plot_block_sel;

int plot_block_series(const mdsd_csv *t, int what, plot_block_sel *sel, series_list *s, point **pts,
                      size_t *n, size_t *cap, mdsd_err *err);

/* ---- gnuplot (plot_gnuplot.c) ---- */

/* Paper-size presets: terminal size and font for vector (inches) and
 * raster/SVG (pixels) output, and the marker scale (styles.gp's pointscale) of
 * the vector one: pdfcairo's point unit is large against a figure of a few
 * inches, and full-size markers would hide the error bars. */
typedef struct {
    const char *name, *inches, *pixels, *font_pt, *font_px;
    double pdf_pointscale;
} size_preset;

/* The kinds of figure: x axis, the columns held fixed, the value and error
 * columns, whether alpha* (method bound) rows are drawn, the block CSV's
 * figure, the script and the axis texts (gnuplot's are in the scripts of the
 * results CSV's kinds; the block kinds pass theirs as variables). */
enum { X_TEMPERATURE, X_N, X_DRAFT };
enum { FIX_DUMP = 1, FIX_T = 2, FIX_N = 4 };

typedef struct {
    const char *name;
    int x;              /* X_* */
    int fixed;          /* FIX_* */
    const char *y, *e;  /* value and error columns (NULL for per-draft) */
    int bounds;         /* draw method = bound rows */
    int block;          /* PLOT_BLOCK_*: a block CSV's figure, 0: a results CSV's */
    const char *script; /* plots/SCRIPT.gp when not plots/NAME.gp */
    const char *xlabel, *ylabel;
} plot_kind;

const plot_kind *plot_find_kind(const char *name); /* NULL: none of that name */

/* What selects the rows of a results CSV's figure; select fills in the
 * values the figure holds fixed (dump, temperature, n) from the first row
 * that passes when the caller gave none. */
typedef struct {
    const char *dump;     /* --dump D, or the --dumps list when overlay */
    const char *scheme, *method;
    bool overlay;
    double temperature;   /* NaN: any */
    long n;               /* -1: any */
    void (*note)(const char *msg, void *ctx);
    void *note_ctx;
} plot_sel;

/* The rows of a results CSV into series ms (verifiers) and bs (alpha*),
 * their points sorted by series then x. */
int plot_results_series(const mdsd_csv *t, const plot_kind *k, plot_sel *sel, series_list *ms, point **mp,
                        size_t *mn, series_list *bs, point **bp, size_t *bn, mdsd_err *err);
void plot_free_series(series_list *s);
void plot_sort_points(point *p, size_t n); /* by series, then x */
/* A note for the caller (NULL note: stderr, "mdsd plot: " first). */
void plot_note(void (*note)(const char *, void *), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The parts of a series key "scheme\tmethod\tdump". */
void plot_key_parts(const char *key, char *scheme, char *method, char *dump, size_t size);

/* The series object of mdsd/plot.h. */
struct mdsd_plot_series {
    const plot_kind *kind;
    char *csv;                    /* the CSV read (the provenance's source) */
    series_list ms, bs;           /* keys of the verifiers' and alpha*'s lines */
    point *mp, *bp;
    size_t mn, bn;
    char *dump;                   /* the dump drawn (fixed), or the overlay list; may be NULL */
    bool overlay;                 /* several dumps (a results CSV) or costs (block speed-up) */
    double temperature;
    long n;
    char *title, *interval;
    size_t n_lines;
    mdsd_plot_line *lines;        /* ms's lines then bs's */
    char **strings;               /* what lines[] point at, n_strings of them */
    size_t n_strings;
    double *values;
    size_t n_labels;
    char **labels;                /* "OLD=NEW", copied from the options */
};

/* --label's text of a CSV name (the name itself when none), and the legend
 * entry of the series `key` ("DUMP: method (scheme)", "DUMP: α* scheme";
 * dash_key: "method (scheme)", the block speed-up's key of its own). */
const char *plot_relabel(const mdsd_plot_series *s, const char *name);
void plot_line_title(const mdsd_plot_series *s, const char *key, int bound, int dash_key, char *title,
                     size_t size);

/* Draws s (plot_draw.c) with the output-side options of o. */
int plot_draw(const mdsd_plot_series *s, const char *csv, const char *output, const mdsd_plot_opts *o,
              mdsd_err *err);

/* Runs gnuplot with argv, its stderr to the file log: the exit status, or -1. */
int plot_run_gnuplot(char *const argv[], const char *log);
const size_preset *plot_find_preset(const char *name); /* NULL: "screen" */
/* gnuplot `set key` arguments for --legend (NULL: outside, or below for a column). */
const char *plot_legend_spec(const char *legend, const char *size);
int plot_choose_terminal(const char *output, const char *size_name, const char *log, char *term,
                         size_t size, const mdsd_plot_opts *o, mdsd_err *err);
void plot_gp_string(char *out, size_t size, const char *s); /* 'text', quotes doubled */
int plot_find_script(const char *dir_opt, const char *kind, char *path, size_t size, mdsd_err *err);
void plot_log_tail(const char *log, char *buf, size_t size);
int plot_make_temp(char *path, size_t size, const char *what, mdsd_err *err);
bool plot_figure_complete(const char *path, const char *output);
#endif
