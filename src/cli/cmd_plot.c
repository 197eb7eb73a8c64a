/* mdsd plot: figures from a results CSV of `mdsd table`, drawn by the
 * gnuplot scripts in plots/. This file selects and reshapes the rows (one
 * data block per scheme/method series) and runs gnuplot on a temporary output
 * name, renaming it into place only when gnuplot succeeded. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"
#include "labels.h"
#include "plot.h"
#include "report.h"
#include "provenance.h"

static const char usage_text[] =
    "Usage: mdsd plot RESULTS.csv [--kind K] -o FILE.{png,svg,pdf}\n"
    "                 [--dump D] [--n N] [--temperature T] [--scheme LIST]\n"
    "                 [--method LIST] [--title TEXT] [--size PRESET] [--legend WHERE]\n"
    "                 [--terminal TERM] [--scripts DIR]\n"
    "Draws a figure from a results CSV (columns dump, temperature, n, scheme,\n"
    "method, alpha, stderr, gap, gap_stderr, per_draft_1.., as `mdsd table`\n"
    "writes them; method `bound` is the scheme's optimal alpha*) with the gnuplot\n"
    "script plots/KIND.gp. One line per (scheme, method) in the fixed style of\n"
    "plots/styles.gp (each verifier its colour and filled marker; alpha* black or\n"
    "grey, open marker, dashed).\n\n"
    "  -k, --kind K          vs-temperature  alpha against T (Hu et al. Fig. 1)\n"
    "                        vs-drafts       alpha against n (Hu et al. Fig. 2)\n"
    "                        per-draft       per-draft acceptance against the draft\n"
    "                                        index (SpecHub Fig. 9)\n"
    "                        gap             gap to alpha* against T, with its s.e.\n"
    "                        block-depth     E[tau] against the draft depth L, from a\n"
    "                                        block CSV (mdsd block -o; the default kind\n"
    "                                        for one): a line per verifier and policy,\n"
    "                                        seq at one K (--n K, else the largest)\n"
    "                        block-speedup   E[tau] / (1 + c L) against L, the cost c\n"
    "                                        sets the dash\n"
    "                        block-reach     P(at least d accepted) against the\n"
    "                                        position d, at the deepest L"
    "  -o, --output FILE     .png (pngcairo, else png), .svg or .pdf (pdfcairo)\n"
    "      --dump D          rows of this dump only\n"
    "      --dumps LIST|all  overlay several dumps or drafters (comma list, or all);\n"
    "                        each method keeps its style, the dump sets the dash\n"
    "      --n N             rows with this number of drafts only\n"
    "      --temperature T   rows at this temperature only\n"
    "      --scheme LIST     comma-separated schemes to draw (default all)\n"
    "      --method LIST     comma-separated methods to draw (default all)\n"
    "      --title TEXT      figure title (default: the fixed dump / n / T)\n"
    "      --label OLD=NEW   show the CSV's name OLD (a dump, dump:drafter, method,\n"
    "                        verifier or scheme; it ends at the first '=') as NEW\n"
    "                        in the legend and title (repeatable; recorded in the\n"
    "                        provenance; OLD must be in the figure)\n"
    "      --size PRESET     screen (default: 900x600 px, 6x4 in), column (one\n"
    "                        column of a two-column paper, 3.4x2.6 in) or full\n"
    "                        (full text width, 7x3 in)\n"
    "      --legend WHERE    outside (right), below, inside (bottom right),\n"
    "                        top-left, top-right, bottom-left, bottom-right or none\n"
    "                        (default: outside; below for --size column)\n"
    "      --terminal TERM   gnuplot terminal (default from the extension)\n"
    "      --scripts DIR     where KIND.gp lives (default: $MDSD_PLOTS, plots/\n"
    "                        beside the mdsd binary, PREFIX/share/mdsd/plots of\n"
    "                        an installed PREFIX/bin/mdsd, the repository's plots/,\n"
    "                        ./plots)\n"
    "  -h, --help            this help\n\n"
    "A column the figure holds fixed (dump and n for vs-temperature, dump and T\n"
    "for vs-drafts, all three for per-draft, dump and n for gap) that has several\n"
    "values and no option takes the first value in the file, with a note.\n"
    "Error bars and bands are 95% confidence intervals (1.96 s.e.), as the key's\n"
    "title says.\n"
    "The figure's provenance (command, source CSV and that CSV's own provenance)\n"
    "goes to FILE.provenance.json beside it.\n";

enum { OPT_DUMP = CLI_OPT_COMMAND, OPT_N, OPT_TEMP, OPT_SCHEME, OPT_METHOD, OPT_TITLE, OPT_TERM, OPT_SCRIPTS,
       OPT_SIZE, OPT_LEGEND, OPT_DUMPS, OPT_LABEL };



enum { X_TEMPERATURE, X_N, X_DRAFT };
enum { FIX_DUMP = 1, FIX_T = 2, FIX_N = 4 };

typedef struct {
    const char *name;
    int x;              /* X_* */
    int fixed;          /* FIX_* */
    const char *y, *e;  /* value and error columns (NULL for per-draft) */
    int bounds;         /* draw method = bound rows */
    int block;          /* PLOT_BLOCK_* (plot.h): a block CSV's figure, 0: a results CSV's */
    const char *script; /* plots/SCRIPT.gp when not plots/NAME.gp */
    const char *vars;   /* more `gnuplot -e` variables for the script */
} plot_kind;

static const plot_kind kinds[] = {
    {"vs-temperature", X_TEMPERATURE, FIX_DUMP | FIX_N, "alpha", "stderr", 1, 0, NULL, NULL},
    {"vs-drafts", X_N, FIX_DUMP | FIX_T, "alpha", "stderr", 1, 0, NULL, NULL},
    {"per-draft", X_DRAFT, FIX_DUMP | FIX_T | FIX_N, NULL, NULL, 0, 0, NULL, NULL},
    {"gap", X_TEMPERATURE, FIX_DUMP | FIX_N, "gap", "gap_stderr", 0, 0, NULL, NULL},
    {"block-depth", 0, FIX_DUMP, NULL, NULL, 0, PLOT_BLOCK_DEPTH, "block-depth",
     "xlabeltext='draft depth L (tokens drafted per step)'; ylabeltext='E[τ] (tokens per target call)'"},
    {"block-speedup", 0, FIX_DUMP, NULL, NULL, 0, PLOT_BLOCK_SPEEDUP, "block-depth",
     "xlabeltext='draft depth L (tokens drafted per step)'; ylabeltext='speed-up E[τ] / (1 + c L)'"},
    {"block-reach", 0, FIX_DUMP, NULL, NULL, 0, PLOT_BLOCK_REACH, "block-depth",
     "xlabeltext='draft position d'; ylabeltext='reach P(at least d accepted)'"},
};

typedef struct {
    const char *csv, *kind, *output, *dump, *scheme, *method, *title, *terminal, *scripts;
    const char *size, *legend;
    bool overlay;       /* --dump LIST or all: several dumps in one figure */
    const char *labels[CLI_MAX_LABELS]; /* --label OLD=NEW, as given (labels.h) */
    size_t n_labels;
    bool usage;         /* the error is a usage error (exit 2) */
    double temperature;
    long n;
} plot_opts;


/* ---- selecting rows -------------------------------------------------------- */

int plot_in_list(const char *list, const char *s)
{
    if (!list)
        return 1;
    size_t len = strlen(s);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (l == len && !strncmp(p, s, len))
            return 1;
        p += l + (comma != NULL);
    }
    return 0;
}

typedef struct {
    const mdsd_csv *t;
    int c_dump, c_T, c_n, c_scheme, c_method;
} columns;

/* Input validation: a value outside its range is refused, naming the file,
 * line and column (a figure drawn from it would be wrong). */
static int value_in_range(const columns *c, size_t r, const char *col, double x, double lo, double hi,
                          int integer, int missing_ok, mdsd_err *err)
{
    const mdsd_csv *t = c->t;
    if (isnan(x) && missing_ok)
        return MDSD_OK;
    if (!(x >= lo && x <= hi) || (integer && x != floor(x)))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu, column %s: %s is not %s in [%g, %g]", t->path,
                         t->line[r], col, isnan(x) ? "an empty value" : mdsd_csv_cell(t, r, mdsd_csv_col(t, col)),
                         integer ? "an integer" : "a number", lo, hi);
    return MDSD_OK;
}

static int row_keys(const columns *c, size_t r, double *T, double *n, mdsd_err *err)
{
    int rc = mdsd_csv_number(c->t, r, c->c_T, T, err);
    if (rc == MDSD_OK)
        rc = mdsd_csv_number(c->t, r, c->c_n, n, err);
    if (rc == MDSD_OK)
        rc = value_in_range(c, r, "temperature", *T, 0.0, 1e6, 0, 0, err);
    if (rc == MDSD_OK)
        rc = value_in_range(c, r, "n", *n, 1.0, 1e6, 1, 0, err);
    return rc;
}

/* Every entry of a selection list names something in the CSV: a typo
 * (--method RRS) is an error, not a figure without that series. */
int plot_check_list(const mdsd_csv *t, int col, const char *list, const char *opt, bool one,
                      mdsd_err *err)
{
    if (!list || (!one && !strcmp(list, "all")))
        return MDSD_OK;
    for (const char *p = list; *p;) {
        size_t l = one ? strlen(p) : strcspn(p, ",");
        bool found = false;
        for (size_t r = 0; r < t->n_rows && !found; r++) {
            const char *cell = mdsd_csv_cell(t, r, col);
            found = strlen(cell) == l && !strncmp(cell, p, l);
        }
        if (!found)
            return mdsd_fail(err, MDSD_EINVAL, "%s: '%.*s' matches no row of %s", opt, (int)l, p, t->path);
        p += l + (p[l] == ',');
    }
    return MDSD_OK;
}

/* Marks the rows the figure uses in keep[]; fills in the fixed values. */
static int select_rows(const columns *c, const plot_kind *k, plot_opts *o, unsigned char *keep,
                       mdsd_err *err)
{
    const mdsd_csv *t = c->t;
    const char *fixed_dump = o->dump;
    double fixed_T = o->temperature, fixed_n = o->n >= 0 ? (double)o->n : NAN;
    int several_dump = 0, several_T = 0, several_n = 0;
    int checked = plot_check_list(t, c->c_scheme, o->scheme, "--scheme", false, err);
    if (!checked)
        checked = plot_check_list(t, c->c_method, o->method, "--method", false, err);
    if (!checked)
        checked = plot_check_list(t, c->c_dump, o->dump, o->overlay ? "--dumps" : "--dump", !o->overlay, err);
    if (checked)
        return checked;
    for (size_t r = 0; r < t->n_rows; r++) {
        double T, n;
        int rc = row_keys(c, r, &T, &n, err);
        if (rc)
            return rc;
        const char *dump = mdsd_csv_cell(t, r, c->c_dump), *method = mdsd_csv_cell(t, r, c->c_method);
        keep[r] = plot_in_list(o->scheme, mdsd_csv_cell(t, r, c->c_scheme)) && plot_in_list(o->method, method) &&
                  (k->bounds || strcmp(method, "bound"));
        if (!keep[r])
            continue;
        if (o->overlay) {
            keep[r] &= !strcmp(o->dump, "all") || plot_in_list(o->dump, dump);
        } else if (k->fixed & FIX_DUMP) {
            if (!fixed_dump)
                fixed_dump = dump;
            several_dump |= strcmp(dump, fixed_dump) != 0 && !o->dump;
            keep[r] &= !strcmp(dump, fixed_dump);
        } else if (o->dump) {
            keep[r] &= !strcmp(dump, o->dump);
        }
        if (!keep[r]) /* fixed values come from rows that pass the filters before */
            continue;
        if ((k->fixed & FIX_T) || !isnan(o->temperature)) {
            if (isnan(fixed_T))
                fixed_T = T;
            several_T |= fabs(T - fixed_T) > 1e-9 && isnan(o->temperature);
            keep[r] &= fabs(T - fixed_T) <= 1e-9;
        }
        if (!keep[r])
            continue;
        if ((k->fixed & FIX_N) || o->n >= 0) {
            if (isnan(fixed_n))
                fixed_n = n;
            several_n |= n != fixed_n && o->n < 0;
            keep[r] &= n == fixed_n;
        }
    }
    if (several_dump)
        fprintf(stderr, "mdsd plot: %s has several dumps; plotting %s (choose with --dump)\n", t->path, fixed_dump);
    if (several_T)
        fprintf(stderr, "mdsd plot: %s has several temperatures; plotting T = %g (choose with --temperature)\n",
                t->path, fixed_T);
    if (several_n)
        fprintf(stderr, "mdsd plot: %s has several n; plotting n = %g (choose with --n)\n", t->path, fixed_n);
    if (!o->overlay)
        o->dump = fixed_dump;
    o->temperature = fixed_T;
    o->n = isnan(fixed_n) ? -1 : (long)fixed_n;
    return MDSD_OK;
}

long plot_series_index(series_list *s, const char *scheme, const char *method, const char *dump)
{
    size_t len = strlen(scheme) + strlen(method) + strlen(dump) + 3;
    char *key = malloc(len);
    if (!key)
        return -1;
    snprintf(key, len, "%s\t%s\t%s", scheme, method, dump);
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->keys[i], key)) {
            free(key);
            return (long)i;
        }
    char **g = realloc(s->keys, (s->n + 1) * sizeof *g);
    if (!g) {
        free(key);
        return -1;
    }
    s->keys = g;
    s->keys[s->n] = key;
    return (long)s->n++;
}

int plot_add_point(point **pts, size_t *n, size_t *cap, point p)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        point *g = realloc(*pts, c * sizeof *g);
        if (!g)
            return MDSD_ENOMEM;
        *pts = g;
        *cap = c;
    }
    (*pts)[(*n)++] = p;
    return MDSD_OK;
}

/* The points of one kept row: one (x, y, e), or per-draft rates j = 1..n. */
static int row_points(const columns *c, const plot_kind *k, size_t r, long series, point **pts,
                      size_t *n, size_t *cap, mdsd_err *err)
{
    double T, nd;
    int rc = row_keys(c, r, &T, &nd, err);
    if (rc)
        return rc;
    if (k->x == X_DRAFT) {
        for (int j = 1;; j++) {
            char name[32];
            snprintf(name, sizeof name, "per_draft_%d", j);
            int col = mdsd_csv_col(c->t, name);
            double y;
            if (col < 0)
                break;
            if ((rc = mdsd_csv_number(c->t, r, col, &y, err)) ||
                (rc = value_in_range(c, r, name, y, 0.0, 1.0, 0, 1, err)))
                return rc;
            if (!isnan(y) && plot_add_point(pts, n, cap, (point){(size_t)series, j, y, 0.0}))
                return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        }
        return MDSD_OK;
    }
    double y, e;
    /* alpha in [0, 1], a gap in [-1, 1], standard errors >= 0 (empty = missing) */
    if ((rc = mdsd_csv_number(c->t, r, mdsd_csv_col(c->t, k->y), &y, err)) ||
        (rc = mdsd_csv_number(c->t, r, mdsd_csv_col(c->t, k->e), &e, err)) ||
        (rc = value_in_range(c, r, k->y, y, strcmp(k->y, "gap") ? 0.0 : -1.0, 1.0, 0, 1, err)) ||
        (rc = value_in_range(c, r, k->e, e, 0.0, 1.0, 0, 1, err)))
        return rc;
    if (isnan(y))
        return MDSD_OK;
    point p = {(size_t)series, k->x == X_N ? nd : T, y, isnan(e) ? 0.0 : e};
    return plot_add_point(pts, n, cap, p) ? mdsd_fail(err, MDSD_ENOMEM, "out of memory") : MDSD_OK;
}

static int cmp_point(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->series != y->series)
        return x->series < y->series ? -1 : 1;
    return (x->x > y->x) - (x->x < y->x);
}

/* --label: the legend text of a name of the CSV (a dump, a dump:drafter, a
 * method or verifier, a scheme or block policy), the name itself when none. */
static const char *relabel(const plot_opts *o, const char *name)
{
    return mdsd_report_relabel(o->labels, o->n_labels, name);
}

/* Every --label names something the figure shows (a typo is an error, not a
 * legend left unchanged): a part of a series key, or the title's dump. */
static int check_labels(plot_opts *o, const series_list *ms, const series_list *bs, mdsd_err *err)
{
    for (size_t i = 0; i < o->n_labels; i++) {
        size_t len = cli_label_old_length(o->labels[i]);
        bool found = o->dump && strlen(o->dump) == len && !strncmp(o->dump, o->labels[i], len);
        const series_list *lists[2] = {ms, bs};
        for (int l = 0; l < 2 && !found; l++)
            for (size_t k = 0; k < lists[l]->n && !found; k++)
                for (const char *p = lists[l]->keys[k]; p && !found; p = strchr(p, '\t') ? strchr(p, '\t') + 1 : NULL)
                    found = strcspn(p, "\t") == len && !strncmp(p, o->labels[i], len);
        if (!found) {
            o->usage = true;
            return mdsd_fail(err, MDSD_EINVAL, "--label '%s': '%.*s' names no dump, drafter, method, scheme "
                             "or policy of this figure", o->labels[i], (int)len, o->labels[i]);
        }
    }
    return MDSD_OK;
}

/* The parts of a series key "scheme\tmethod\tdump". */
static void key_parts(const char *key, char *scheme, char *method, char *dump, size_t size)
{
    const char *t1 = strchr(key, '\t'), *t2 = strchr(t1 + 1, '\t');
    snprintf(scheme, size, "%.*s", (int)(t1 - key), key);
    snprintf(method, size, "%.*s", (int)(t2 - t1 - 1), t1 + 1);
    snprintf(dump, size, "%s", t2 + 1);
}

/* Writes one gnuplot data block per series: a quoted title line (the legend
 * entry: "α* iid", "rrs (iid)", prefixed "DUMP: " when overlaid), then the
 * points; blocks separated by two blank lines (gnuplot's `index`). With
 * dash_key (the block speed-up's costs) the dash has a key of its own and
 * only the first cost's series are titled, without it: a key of verifiers +
 * costs entries, not their product. */
static int write_blocks(FILE *f, const plot_opts *o, const series_list *s, const point *pts, size_t n, int bound,
                        bool dash_key)
{
    size_t i = 0;
    char first[512] = "";
    for (size_t k = 0; k < s->n; k++) {
        char raw[3][512], title[1600];
        key_parts(s->keys[k], raw[0], raw[1], raw[2], sizeof raw[0]);
        if (k == 0)
            snprintf(first, sizeof first, "%s", raw[2]);
        bool later = dash_key && strcmp(raw[2], first);
        /* the legend shows the --label names, the keys keep the CSV's */
        const char *scheme = relabel(o, raw[0]), *method = relabel(o, raw[1]), *dump = relabel(o, raw[2]);
        if (later)
            title[0] = '\0';
        else if (dash_key)
            snprintf(title, sizeof title, "%s (%s)", method, scheme);
        else if (bound)
            snprintf(title, sizeof title, "%s%sα* %s", dump, *dump ? ": " : "", scheme);
        else
            snprintf(title, sizeof title, "%s%s%s (%s)", dump, *dump ? ": " : "", method, scheme);
        fputc('"', f);
        for (const char *c = title; *c; c++)
            if (*c != '"' && *c != '\\')
                fputc(*c, f);
        fputs("\"\n", f);
        while (i < n && pts[i].series == k) {
            fprintf(f, "%.17g %.17g %.17g\n", pts[i].x, pts[i].y, pts[i].e);
            i++;
        }
        fprintf(f, "\n\n");
    }
    return ferror(f) ? MDSD_EIO : MDSD_OK;
}

static void default_title(const plot_kind *k, const plot_opts *o, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s", o->overlay && !k->block ? "dumps overlaid (line dash = dump)"
                                                    : o->dump ? relabel(o, o->dump) : "all dumps");
    if ((k->fixed & FIX_N) && o->n >= 0 && used < size)
        used += (size_t)snprintf(buf + used, size - used, ", n = %ld", o->n);
    if ((k->fixed & FIX_T) && !isnan(o->temperature) && used < size)
        snprintf(buf + used, size - used, ", T = %g", o->temperature);
}

typedef struct {
    char data[64], bounds[64], log[64];
} temp_files;

/* "; othermethods='W1 W2 ..'": the distinct words of `methods` in order, so that
 * styles.gp gives each method outside its table a style of its own. */
static size_t other_methods(char *v, size_t cap, const char *methods)
{
    char copy[65536], *save = NULL;
    snprintf(copy, sizeof copy, "%s", methods);
    const char *seen[256];
    size_t n = 0, len = (size_t)snprintf(v, cap, "; othermethods='");
    for (char *w = strtok_r(copy, " ", &save); w && n < 256; w = strtok_r(NULL, " ", &save)) {
        size_t k = 0;
        while (k < n && strcmp(seen[k], w))
            k++;
        if (k == n && len < cap) {
            len += (size_t)snprintf(v + len, cap - len, "%s%s", n ? " " : "", w);
            seen[n++] = w;
        }
    }
    if (len < cap)
        len += (size_t)snprintf(v + len, cap - len, "'");
    return len < cap ? len : cap;
}

/* The style variables the scripts read: stylefile (plots/styles.gp beside
 * the script), seriesmethods / boundschemes (one word per block, the key of
 * the style table), seriesdumps / bounddumps (1-based dump of each block when
 * overlaid, else 1), othermethods (their distinct methods), overlay, keyspec,
 * pointscale (markers: smaller for the PDF presets). */
static char *style_vars(const char *script, const series_list *ms, const series_list *bs, const plot_opts *o)
{
    size_t cap = 1024 + strlen(script) + 900 * (ms->n + bs->n);
    char *v = malloc(cap);
    if (!v)
        return NULL;
    char dir[4096], q_style[4200];
    snprintf(dir, sizeof dir, "%s", script);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    char style_path[4200];
    snprintf(style_path, sizeof style_path, "%s/styles.gp", dir);
    plot_gp_string(q_style, sizeof q_style, style_path);
    const char *dot = strrchr(o->output, '.');
    bool vector = (o->terminal && !strncmp(o->terminal, "pdf", 3)) ||
                  (!o->terminal && dot && !strcmp(dot, ".pdf"));
    /* A key below the plot gets the bottom margin its rows need: a fixed one let
     * the key of overlaid drafters (6 rows) cover the x label and tics. Rows:
     * the key's title (the interval, styles.gp's ci_key), then the entries (each
     * series, the alpha* band) in as many columns (at most 3) as a column-wide
     * figure's width holds of the longest entry (about 100 characters across). */
    char key[256];
    const char *spec = plot_legend_spec(o->legend, o->size), *fixed = strstr(spec, "set bmargin at screen ");
    snprintf(key, sizeof key, "%s", spec);
    if (fixed) {
        size_t longest = 0, entries = ms->n + bs->n + (bs->n > 0);
        const series_list *both[2] = {ms, bs};
        for (int l = 0; l < 2; l++)
            for (size_t k = 0; k < both[l]->n; k++)
                longest = strlen(both[l]->keys[k]) > longest ? strlen(both[l]->keys[k]) : longest;
        size_t cols = 100 / (longest + 16);
        cols = cols < 1 ? 1 : cols > 3 ? 3 : cols;
        size_t rows = 1 + (entries + cols - 1) / cols;
        double margin = 0.13 + 0.035 * (double)rows;
        snprintf(key + (fixed - spec), sizeof key - (size_t)(fixed - spec), "set bmargin at screen %.3f",
                 margin < 0.25 ? 0.25 : margin > 0.5 ? 0.5 : margin);
    }
    size_t len = (size_t)snprintf(v, cap, "stylefile=%s; overlay=%d; keyspec='%s'; pointscale=%g", q_style,
                                  o->overlay ? 1 : 0, key, vector ? plot_find_preset(o->size)->pdf_pointscale : 1.0);
    /* distinct dumps in order of first appearance over both lists */
    const char *dumps[64];
    size_t nd = 0;
    const series_list *lists[2] = {ms, bs};
    const char *names[2][2] = {{"seriesmethods", "seriesdumps"}, {"boundschemes", "bounddumps"}};
    for (int l = 0; l < 2; l++) {
        char words[2][65536];
        size_t wl[2] = {0, 0};
        words[0][0] = words[1][0] = '\0';
        for (size_t k = 0; k < lists[l]->n; k++) {
            char scheme[512], method[512], dump[512];
            key_parts(lists[l]->keys[k], scheme, method, dump, sizeof scheme);
            size_t d = 0;
            while (d < nd && strcmp(dumps[d], strchr(strchr(lists[l]->keys[k], '\t') + 1, '\t') + 1))
                d++;
            if (d == nd && nd < 64)
                dumps[nd++] = strchr(strchr(lists[l]->keys[k], '\t') + 1, '\t') + 1;
            const char *word = l == 0 ? method : scheme;
            wl[0] += (size_t)snprintf(words[0] + wl[0], sizeof words[0] - wl[0], "%s%s", k ? " " : "",
                                      strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(word) ? word : "other");
            wl[1] += (size_t)snprintf(words[1] + wl[1], sizeof words[1] - wl[1], "%s%zu", k ? " " : "", d + 1);
            if (wl[0] >= sizeof words[0] || wl[1] >= sizeof words[1])
                break;
        }
        len += (size_t)snprintf(v + len, cap - len, "; %s='%s'; %s='%s'", names[l][0], words[0], names[l][1], words[1]);
        if (l == 0)
            len += other_methods(v + len, cap - len, words[0]);
    }
    (void)len;
    return v;
}

static int draw(const plot_kind *k, const plot_opts *o, const series_list *ms, const point *mp,
                size_t mn, const series_list *bs, const point *bp, size_t bn, temp_files *tf,
                mdsd_err *err)
{
    char script[4096], term[128], tmp[4096];
    int rc = plot_find_script(o->scripts, k->script ? k->script : k->name, script, sizeof script, err);
    if (rc == MDSD_OK)
        rc = plot_make_temp(tf->log, sizeof tf->log, "log", err);
    if (rc == MDSD_OK) {
        if (o->terminal)
            snprintf(term, sizeof term, "%s", o->terminal);
        else
            rc = plot_choose_terminal(o->output, o->size, tf->log, term, sizeof term, err);
    }
    if (rc == MDSD_OK)
        rc = plot_make_temp(tf->data, sizeof tf->data, "data", err);
    if (rc == MDSD_OK)
        rc = plot_make_temp(tf->bounds, sizeof tf->bounds, "bounds", err);
    if (rc == MDSD_OK)
        rc = mdsd_tmpname(o->output, tmp, sizeof tmp, err);
    if (rc)
        return rc;
    FILE *f = fopen(tf->data, "w"), *g = fopen(tf->bounds, "w");
    int wrc = (!f || !g) ? MDSD_EIO : write_blocks(f, o, ms, mp, mn, 0, o->overlay && k->block) |
                                         write_blocks(g, o, bs, bp, bn, 1, false);
    if (f && fclose(f))
        wrc = MDSD_EIO;
    if (g && fclose(g))
        wrc = MDSD_EIO;
    if (wrc)
        return mdsd_fail(err, MDSD_EIO, "cannot write the temporary data files");
    char title[600], q_data[200], q_bounds[200], q_out[8200], q_term[300], q_title[1300];
    if (o->title)
        snprintf(title, sizeof title, "%s", o->title);
    else
        default_title(k, o, title, sizeof title);
    plot_gp_string(q_data, sizeof q_data, tf->data);
    plot_gp_string(q_bounds, sizeof q_bounds, tf->bounds);
    plot_gp_string(q_out, sizeof q_out, tmp);
    plot_gp_string(q_term, sizeof q_term, term);
    plot_gp_string(q_title, sizeof q_title, title);
    char *style = style_vars(script, ms, bs, o), dashes[2048] = "";
    /* the block speed-up's costs in order ("c = 0.1" keys): the dash key's entries */
    for (size_t i = 0, at = 0; o->overlay && k->block && i < ms->n && at + 600 < sizeof dashes; i++) {
        char scheme[512], method[512], dump[512];
        key_parts(ms->keys[i], scheme, method, dump, sizeof scheme);
        char padded[2100], word[520];
        snprintf(padded, sizeof padded, " %s ", dashes);
        snprintf(word, sizeof word, " %s ", strlen(dump) > 4 ? dump + 4 : dump);
        if (!strstr(padded, word))
            at += (size_t)snprintf(dashes + at, sizeof dashes - at, "%s%s", at ? " " : "", word + 1),
            dashes[--at] = '\0';
    }
    size_t vlen = strlen(q_data) + strlen(q_bounds) + strlen(q_out) + strlen(q_term) + strlen(q_title) +
                  (style ? strlen(style) : 0) + (k->vars ? strlen(k->vars) : 0) + strlen(dashes) + 200;
    char *vars = style ? malloc(vlen) : NULL;
    if (!vars) {
        free(style);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    snprintf(vars, vlen, "datafile=%s; boundfile=%s; nseries=%zu; nbounds=%zu; outfile=%s; term=%s; "
             "plottitle=%s; %s%s%s; costlist='%s'", q_data, q_bounds, ms->n, bs->n, q_out, q_term, q_title,
             style, k->vars ? "; " : "", k->vars ? k->vars : "", dashes);
    free(style);
    char *argv[] = {"gnuplot", "-e", vars, script, NULL};
    int status = plot_run_gnuplot(argv, tf->log);
    free(vars);
    struct stat st;
    if (status != 0 || stat(tmp, &st) != 0 || st.st_size == 0) {
        char why[400];
        plot_log_tail(tf->log, why, sizeof why);
        unlink(tmp);
        mdsd_cleanup_unregister(tmp);
        if (status == 127 || status < 0)
            return mdsd_fail(err, MDSD_EIO, "cannot run gnuplot (install the Debian package gnuplot-nox)");
        return mdsd_fail(err, MDSD_EIO, "gnuplot failed on %s (exit %d)%s%s", script, status,
                         why[0] ? ": " : "", why);
    }
    if (!plot_figure_complete(tmp, o->output)) {
        unlink(tmp);
        mdsd_cleanup_unregister(tmp);
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': gnuplot's figure came out incomplete (a full "
                         "disk?)", o->output);
    }
    /* the sidecar first, finished and in place before the figure is: a
     * failure leaves the old figure with its old sidecar */
    mdsd_outfile side;
    mdsd_provenance pv = {.tool = "mdsd plot", .argc = cli_argc(), .argv = cli_argv(), .output = o->output,
                          .source = o->csv, .n_labels = o->n_labels, .labels = o->labels};
    rc = mdsd_provenance_prepare(&pv, &side, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&side, err);
    mdsd_outfile_abort(&side);
    if (rc) {
        unlink(tmp);
        mdsd_cleanup_unregister(tmp);
        return rc;
    }
    return mdsd_publish(tmp, o->output, err);
}

/* ---- the command ----------------------------------------------------------- */

static int parse_args(int argc, char **argv, plot_opts *o)
{
    static const struct option longopts[] = {
        {"kind", required_argument, NULL, 'k'},       {"output", required_argument, NULL, 'o'},
        {"dump", required_argument, NULL, OPT_DUMP},  {"n", required_argument, NULL, OPT_N},
        {"temperature", required_argument, NULL, OPT_TEMP}, {"scheme", required_argument, NULL, OPT_SCHEME},
        {"method", required_argument, NULL, OPT_METHOD}, {"title", required_argument, NULL, OPT_TITLE},
        {"terminal", required_argument, NULL, OPT_TERM}, {"scripts", required_argument, NULL, OPT_SCRIPTS},
        {"size", required_argument, NULL, OPT_SIZE},  {"dumps", required_argument, NULL, OPT_DUMPS},  {"legend", required_argument, NULL, OPT_LEGEND},
        {"label", required_argument, NULL, OPT_LABEL},
        {"help", no_argument, NULL, 'h'},             {0, 0, 0, 0}};
    int opt;
    size_t n;
    while ((opt = getopt_long(argc, argv, "k:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k': o->kind = optarg; break;
        case 'o': o->output = optarg; break;
        case OPT_DUMP: o->dump = optarg; break;
        case OPT_N:
            if (cli_parse_size(optarg, "--n", "plot", &n))
                return -1;
            o->n = (long)n;
            break;
        case OPT_TEMP: if (cli_parse_double(optarg, "--temperature", "plot", &o->temperature)) return -1; break;
        case OPT_SCHEME: o->scheme = optarg; break;
        case OPT_METHOD: o->method = optarg; break;
        case OPT_TITLE: o->title = optarg; break;
        case OPT_TERM: o->terminal = optarg; break;
        case OPT_SCRIPTS: o->scripts = optarg; break;
        case OPT_SIZE: o->size = optarg; break;
        case OPT_DUMPS: o->dump = optarg; o->overlay = true; break;
        case OPT_LEGEND: o->legend = optarg; break;
        case OPT_LABEL:
            if (cli_label_add("plot", optarg, o->labels, &o->n_labels))
                return -1;
            break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: cli_usage_error("plot", "unrecognised option"); return -1;
        }
    }
    if (optind + 1 != argc) {
        cli_usage_error("plot", optind == argc ? "missing RESULTS.csv" : "give exactly one RESULTS.csv");
        return -1;
    }
    o->csv = argv[optind];
    if (!plot_find_preset(o->size)) {
        cli_usage_error("plot", "--size: '%s' is not screen, column or full", o->size);
        return -1;
    }
    if (!plot_legend_spec(o->legend, o->size)) {
        cli_usage_error("plot", "--legend: '%s' is not outside, below, inside, top-left, top-right, "
                        "bottom-left, bottom-right or none", o->legend);
        return -1;
    }
    if (!o->output) {
        cli_usage_error("plot", "missing -o/--output");
        return -1;
    }
    return 0;
}

static int check_columns(const mdsd_csv *t, const plot_kind *k, columns *c, mdsd_err *err)
{
    const char *need[] = {"dump", "temperature", "n", "scheme", "method", k->y, k->e};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i] && mdsd_csv_col(t, need[i]) < 0)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: no column '%s' (needed for --kind %s)", t->path, need[i], k->name);
    if (k->x == X_DRAFT && mdsd_csv_col(t, "per_draft_1") < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: no column 'per_draft_1' (needed for --kind per-draft)", t->path);
    *c = (columns){t, mdsd_csv_col(t, "dump"), mdsd_csv_col(t, "temperature"), mdsd_csv_col(t, "n"),
                   mdsd_csv_col(t, "scheme"), mdsd_csv_col(t, "method")};
    return MDSD_OK;
}

/* Two rows with one (dump, temperature, n, scheme, method) would draw two
 * points where the table has one value: refused, naming both lines. */
static const columns *dup_cols;

static int cmp_row_key(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const mdsd_csv *t = dup_cols->t;
    int d = strcmp(mdsd_csv_cell(t, x, dup_cols->c_dump), mdsd_csv_cell(t, y, dup_cols->c_dump));
    if (!d)
        d = strcmp(mdsd_csv_cell(t, x, dup_cols->c_scheme), mdsd_csv_cell(t, y, dup_cols->c_scheme));
    if (!d)
        d = strcmp(mdsd_csv_cell(t, x, dup_cols->c_method), mdsd_csv_cell(t, y, dup_cols->c_method));
    for (int k = 0; k < 2 && !d; k++) {
        int col = k == 0 ? dup_cols->c_T : dup_cols->c_n;
        double u = strtod(mdsd_csv_cell(t, x, col), NULL), v = strtod(mdsd_csv_cell(t, y, col), NULL);
        d = (u > v) - (u < v);
    }
    return d ? d : (x > y) - (x < y);
}

static int check_duplicate_rows(const columns *c, const unsigned char *keep, mdsd_err *err)
{
    const mdsd_csv *t = c->t;
    size_t *idx = malloc((t->n_rows + 1) * sizeof *idx), m = 0;
    if (!idx)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t r = 0; r < t->n_rows; r++)
        if (keep[r])
            idx[m++] = r;
    dup_cols = c;
    qsort(idx, m, sizeof *idx, cmp_row_key);
    int rc = MDSD_OK;
    for (size_t i = 1; i < m && rc == MDSD_OK; i++) {
        size_t a = idx[i - 1], b = idx[i];
        size_t lo = a < b ? a : b, hi = a < b ? b : a;
        if (!strcmp(mdsd_csv_cell(t, a, c->c_dump), mdsd_csv_cell(t, b, c->c_dump)) &&
            !strcmp(mdsd_csv_cell(t, a, c->c_scheme), mdsd_csv_cell(t, b, c->c_scheme)) &&
            !strcmp(mdsd_csv_cell(t, a, c->c_method), mdsd_csv_cell(t, b, c->c_method)) &&
            strtod(mdsd_csv_cell(t, a, c->c_T), NULL) == strtod(mdsd_csv_cell(t, b, c->c_T), NULL) &&
            strtod(mdsd_csv_cell(t, a, c->c_n), NULL) == strtod(mdsd_csv_cell(t, b, c->c_n), NULL))
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: lines %zu and %zu have the same dump, temperature, n, "
                           "scheme and method", t->path, t->line[lo], t->line[hi]);
    }
    free(idx);
    return rc;
}

static void free_series(series_list *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
}

static int plot(plot_opts *o, const plot_kind *k, mdsd_err *err)
{
    mdsd_csv *t;
    int rc = mdsd_csv_read(o->csv, &t, err);
    if (rc)
        return rc;
    columns c = {0};
    unsigned char *keep = malloc(t->n_rows + 1);
    series_list ms = {0}, bs = {0};
    point *mp = NULL, *bp = NULL;
    size_t mn = 0, mcap = 0, bn = 0, bcap = 0;
    temp_files tf = {"", "", ""};
    if (k->block) { /* plot_block.c: its own columns and selection */
        plot_block_sel sel = {o->dump, o->method, o->n, false};
        rc = plot_block_series(t, k->block, &sel, &ms, &mp, &mn, &mcap, err);
        o->dump = sel.dump, o->overlay = sel.overlay;
    } else {
        rc = keep ? check_columns(t, k, &c, err) : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        if (rc == MDSD_OK)
            rc = select_rows(&c, k, o, keep, err);
    }

    for (size_t r = 0; rc == MDSD_OK && !k->block && r < t->n_rows; r++) {
        if (!keep[r])
            continue;
        const char *method = mdsd_csv_cell(t, r, c.c_method);
        int bound = !strcmp(method, "bound");
        long s = plot_series_index(bound ? &bs : &ms, mdsd_csv_cell(t, r, c.c_scheme), method,
                              o->overlay ? mdsd_csv_cell(t, r, c.c_dump) : "");
        if (s < 0)
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else
            rc = row_points(&c, k, r, s, bound ? &bp : &mp, bound ? &bn : &mn, bound ? &bcap : &mcap, err);
    }
    if (rc == MDSD_OK && !k->block)
        rc = check_duplicate_rows(&c, keep, err);
    if (rc == MDSD_OK)
        rc = check_labels(o, &ms, &bs, err);
    if (rc == MDSD_OK && mn + bn == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: no rows to plot for --kind %s with the chosen dump, n, T, schemes and methods",
                       t->path, k->name);
    if (rc == MDSD_OK) {
        if (mn)
            qsort(mp, mn, sizeof *mp, cmp_point);
        if (bn)
            qsort(bp, bn, sizeof *bp, cmp_point);
        rc = draw(k, o, &ms, mp, mn, &bs, bp, bn, &tf, err);
    }
    const char *temps[] = {tf.data, tf.bounds, tf.log};
    for (size_t i = 0; i < 3; i++)
        if (temps[i][0]) {
            unlink(temps[i]);
            mdsd_cleanup_unregister(temps[i]);
        }
    free_series(&ms);
    free_series(&bs);
    free(mp);
    free(bp);
    free(keep);
    mdsd_csv_free(t);
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    plot_opts o;
    memset(&o, 0, sizeof o);
    o.temperature = NAN;
    o.n = -1;
    int r = parse_args(argc, argv, &o);
    if (r)
        return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (!o.kind) { /* a block CSV (its block_efficiency column) has a default figure */
        mdsd_csv *t;
        if (mdsd_csv_read(o.csv, &t, &err))
            return cli_report("plot", &err);
        bool block = mdsd_csv_col(t, "block_efficiency") >= 0;
        mdsd_csv_free(t);
        if (!block)
            return cli_usage_error("plot", "missing --kind (only a block CSV has a default, block-depth)");
        o.kind = "block-depth";
    }
    const plot_kind *k = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (!strcmp(o.kind, kinds[i].name))
            k = &kinds[i];
    if (!k)
        return cli_usage_error("plot", "--kind: '%s' is not vs-temperature, vs-drafts, per-draft, gap, "
                               "block-depth, block-speedup or block-reach", o.kind);
    if (k->block && (!isnan(o.temperature) || o.scheme || o.overlay))
        return cli_usage_error("plot", "--kind %s: --temperature, --scheme and --dumps are not for a block "
                               "CSV (--dump, --method VERIFIERS and --n K are)", k->name);
    /* the figure and its provenance must not replace the CSV it is drawn
     * from, its provenance, the gnuplot scripts, nor a directory */
    char script[4096], side[4200], styles[4200];
    if (plot_find_script(o.scripts, k->script ? k->script : k->name, script, sizeof script, &err))
        return cli_report("plot", &err);
    mdsd_provenance_path(o.csv, side, sizeof side);
    const char *slash = strrchr(script, '/'); /* styles.gp lives beside the script */
    if (slash)
        snprintf(styles, sizeof styles, "%.*s/styles.gp", (int)(slash - script), script);
    else
        snprintf(styles, sizeof styles, "styles.gp");
    mdsd_pathset_input(cli_paths(), o.csv, "the results CSV");
    mdsd_pathset_input(cli_paths(), side, "the provenance of %s", o.csv);
    mdsd_pathset_input(cli_paths(), script, "the gnuplot script");
    mdsd_pathset_input(cli_paths(), styles, "the gnuplot styles");
    mdsd_pathset_output_family(cli_paths(), o.output, "-o", mdsd_suffixes_provenance);
    if (cli_check_paths(NULL, NULL, &err))
        return cli_report("plot", &err);
    mdsd_cleanup_signals("mdsd plot", NULL);
    int rc = plot(&o, k, &err);
    if (rc && o.usage)
        return cli_usage_error("plot", "%s", err.msg);
    return rc ? cli_report("plot", &err) : CLI_EXIT_OK;
}
