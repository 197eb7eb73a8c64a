/* plot.h - the parts of `mdsd plot` shared by its files: cmd_plot.c (the
 * command, the results CSV's kinds, the data blocks gnuplot reads),
 * plot_block.c (the block CSV's kinds) and plot_gnuplot.c (running gnuplot). */
#ifndef MDSD_CLI_PLOT_H
#define MDSD_CLI_PLOT_H
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

/* Runs gnuplot with argv, its stderr to the file log: the exit status, or -1. */
int plot_run_gnuplot(char *const argv[], const char *log);
const size_preset *plot_find_preset(const char *name); /* NULL: "screen" */
/* gnuplot `set key` arguments for --legend (NULL: outside, or below for a column). */
const char *plot_legend_spec(const char *legend, const char *size);
int plot_choose_terminal(const char *output, const char *size_name, const char *log, char *term,
                         size_t size, mdsd_err *err);
void plot_gp_string(char *out, size_t size, const char *s); /* 'text', quotes doubled */
int plot_find_script(const char *dir_opt, const char *kind, char *path, size_t size, mdsd_err *err);
void plot_log_tail(const char *log, char *buf, size_t size);
int plot_make_temp(char *path, size_t size, const char *what, mdsd_err *err);
bool plot_figure_complete(const char *path, const char *output);
#endif
