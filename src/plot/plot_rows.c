/* plot_rows.c - the series of a results CSV's figures (`mdsd table`'s
 * columns dump, temperature, n, scheme, method, alpha, stderr, gap,
 * gap_stderr, per_draft_1..): the rows selected by the options and the values
 * the figure holds fixed, one series per (scheme, method[, dump]), every value
 * checked in its range; and the kinds of figure (plot.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

/* The block kinds' axis texts go to their script as variables (plot_draw.c);
 * those of the results CSV's kinds are their scripts' own, repeated here for
 * the series route (mdsd_plot_series_figure). */
static const plot_kind kinds[] = {
    {"vs-temperature", X_TEMPERATURE, FIX_DUMP | FIX_N, "alpha", "stderr", 1, 0, NULL, "temperature T",
     "acceptance rate α"},
    {"vs-drafts", X_N, FIX_DUMP | FIX_T, "alpha", "stderr", 1, 0, NULL, "number of drafts n", "acceptance rate α"},
    {"per-draft", X_DRAFT, FIX_DUMP | FIX_T | FIX_N, NULL, NULL, 0, 0, NULL, "draft j",
     "P(draft j is the accepted one)"},
    {"gap", X_TEMPERATURE, FIX_DUMP | FIX_N, "gap", "gap_stderr", 0, 0, NULL, "temperature T",
     "gap α − α* of the scheme"},
    {"block-depth", 0, FIX_DUMP, NULL, NULL, 0, PLOT_BLOCK_DEPTH, "block-depth",
     "draft depth L (tokens drafted per step)", "E[τ] (tokens per target call)"},
    {"block-speedup", 0, FIX_DUMP, NULL, NULL, 0, PLOT_BLOCK_SPEEDUP, "block-depth",
     "draft depth L (tokens drafted per step)", "speed-up E[τ] / (1 + c L)"},
    {"block-reach", 0, FIX_DUMP, NULL, NULL, 0, PLOT_BLOCK_REACH, "block-depth", "draft position d",
     "reach P(at least d accepted)"},
};

const plot_kind *plot_find_kind(const char *name)
{
    for (size_t i = 0; name && i < sizeof kinds / sizeof *kinds; i++)
        if (!strcmp(name, kinds[i].name))
            return &kinds[i];
    return NULL;
}

void plot_note(void (*note)(const char *, void *), void *ctx, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (note)
        note(msg, ctx);
    else
        fprintf(stderr, "mdsd plot: %s\n", msg);
}

void plot_key_parts(const char *key, char *scheme, char *method, char *dump, size_t size)
{
    const char *t1 = strchr(key, '\t'), *t2 = strchr(t1 + 1, '\t');
    snprintf(scheme, size, "%.*s", (int)(t1 - key), key);
    snprintf(method, size, "%.*s", (int)(t2 - t1 - 1), t1 + 1);
    snprintf(dump, size, "%s", t2 + 1);
}

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
static int select_rows(const columns *c, const plot_kind *k, plot_sel *o, unsigned char *keep,
                       mdsd_err *err)
{
    const mdsd_csv *t = c->t;
    const char *fixed_dump = o->dump;
    double fixed_T = o->temperature, fixed_n = o->n >= 0 ? (double)o->n : NAN;
    int several_dump = 0, several_T = 0, several_n = 0;
    int checked = plot_check_list(t, c->c_scheme, o->scheme, "`scheme`", false, err);
    if (!checked)
        checked = plot_check_list(t, c->c_method, o->method, "`method`", false, err);
    if (!checked)
        checked = plot_check_list(t, c->c_dump, o->dump, o->overlay ? "`dumps`" : "`dump`", !o->overlay, err);
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
        plot_note(o->note, o->note_ctx, "%s has several dumps; plotting %s (choose with `dump`)", t->path, fixed_dump);
    if (several_T)
        plot_note(o->note, o->note_ctx, "%s has several temperatures; plotting T = %g (choose with `temperature`)",
                  t->path, fixed_T);
    if (several_n)
        plot_note(o->note, o->note_ctx, "%s has several n; plotting n = %g (choose with `n`)", t->path, fixed_n);
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

static int check_columns(const mdsd_csv *t, const plot_kind *k, columns *c, mdsd_err *err)
{
    const char *need[] = {"dump", "temperature", "n", "scheme", "method", k->y, k->e};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i] && mdsd_csv_col(t, need[i]) < 0)
            return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_KIND,
                                    "%s: no column '%s' (needed for `kind %s`)", t->path, need[i], k->name);
    if (k->x == X_DRAFT && mdsd_csv_col(t, "per_draft_1") < 0)
        return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_KIND,
                                "%s: no column 'per_draft_1' (needed for `kind per-draft`)", t->path);
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

void plot_free_series(series_list *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
}

int plot_results_series(const mdsd_csv *t, const plot_kind *k, plot_sel *sel, series_list *ms, point **mp,
                        size_t *mn, series_list *bs, point **bp, size_t *bn, mdsd_err *err)
{
    columns c = {0};
    unsigned char *keep = malloc(t->n_rows + 1);
    size_t mcap = 0, bcap = 0;
    int rc = keep ? check_columns(t, k, &c, err) : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK)
        rc = select_rows(&c, k, sel, keep, err);
    for (size_t r = 0; rc == MDSD_OK && r < t->n_rows; r++) {
        if (!keep[r])
            continue;
        const char *method = mdsd_csv_cell(t, r, c.c_method);
        int bound = !strcmp(method, "bound");
        long s = plot_series_index(bound ? bs : ms, mdsd_csv_cell(t, r, c.c_scheme), method,
                                   sel->overlay ? mdsd_csv_cell(t, r, c.c_dump) : "");
        if (s < 0)
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else
            rc = row_points(&c, k, r, s, bound ? bp : mp, bound ? bn : mn, bound ? &bcap : &mcap, err);
    }
    if (rc == MDSD_OK)
        rc = check_duplicate_rows(&c, keep, err);
    free(keep);
    return rc;
}

void plot_sort_points(point *p, size_t n)
{
    if (n)
        qsort(p, n, sizeof *p, cmp_point);
}
