/* plot_block.c - the series of the block CSV's figures (`mdsd block -o`,
 * data/README.md): one series per (verifier, policy). A seq policy is drawn
 * at one number of sequences K (--n K, else each verifier's largest: the
 * others are the same curve lower down), a tree policy per scheme; E[tau]
 * and the reaches do not depend on the draft cost, so those figures read the
 * rows of the first cost, the speed-up figure every cost (its dash). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

typedef struct {
    const mdsd_csv *t;
    int dump, verifier, policy, scheme, sequences, depth, cost, tau, se, speedup, reach, reach_se;
} block_cols;

static int need(const mdsd_csv *t, const char *name, int *col, mdsd_err *err)
{
    *col = mdsd_csv_col(t, name);
    return *col >= 0 ? MDSD_OK
                     : mdsd_fail(err, MDSD_EFORMAT, "%s: no column '%s' (the block job's `output` CSV "
                                 "has it)", t->path, name);
}

/* A number of the row in [lo, hi] (an integer when asked), else an error
 * naming file, line, column and value. */
static int number(const block_cols *c, size_t r, int col, double lo, double hi, bool integer, double *x,
                  mdsd_err *err)
{
    int rc = mdsd_csv_number(c->t, r, col, x, err);
    if (rc)
        return rc;
    if (!(*x >= lo && *x <= hi) || (integer && *x != floor(*x)))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu, column %s: '%s' is not %s in [%g, %g]", c->t->path,
                         c->t->line[r], c->t->header[col], mdsd_csv_cell(c->t, r, col),
                         integer ? "an integer" : "a number", lo, hi);
    return MDSD_OK;
}

/* The d-th (1-based) number of a ';' list cell, checked in [0, 1] (an empty
 * standard error: 0). */
static int list_item(const block_cols *c, size_t r, int col, size_t d, double *x, mdsd_err *err)
{
    const char *cell = mdsd_csv_cell(c->t, r, col), *p = cell;
    for (size_t k = 1; k < d && p; k++)
        p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL;
    char *end = NULL;
    *x = p ? strtod(p, &end) : NAN;
    if (!p || end == p || (*end && *end != ';') || !(*x >= 0.0 && *x <= 1.0))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu, column %s: '%s' has no number in [0, 1] at "
                         "position %zu", c->t->path, c->t->line[r], c->t->header[col], cell, d);
    return MDSD_OK;
}

/* "K = 4" of a seq row, "tree (wor)" of a tree row: the series' scheme part. */
/* One point per (series, x): two rows drawing the same point (a repeated
 * row, two tree shapes of one scheme at one L) are refused, naming the line. */
static int add_unique(const block_cols *c, size_t r, point **pts, size_t *n, size_t *cap, point p,
                      mdsd_err *err)
{
    for (size_t i = 0; i < *n; i++)
        if ((*pts)[i].series == p.series && (*pts)[i].x == p.x)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu: a second row for the point of verifier %s, "
                             "%s %s at depth %s", c->t->path, c->t->line[r], mdsd_csv_cell(c->t, r, c->verifier),
                             mdsd_csv_cell(c->t, r, c->policy), mdsd_csv_cell(c->t, r, c->policy)[0] == 's'
                             ? mdsd_csv_cell(c->t, r, c->sequences) : mdsd_csv_cell(c->t, r, c->scheme),
                             mdsd_csv_cell(c->t, r, c->depth));
    return plot_add_point(pts, n, cap, p) ? mdsd_fail(err, MDSD_ENOMEM, "out of memory") : MDSD_OK;
}

static void policy_label(const block_cols *c, size_t r, char *buf, size_t size)
{
    const mdsd_csv *t = c->t;
    if (!strcmp(mdsd_csv_cell(t, r, c->policy), "seq"))
        snprintf(buf, size, "K = %s", mdsd_csv_cell(t, r, c->sequences));
    else
        snprintf(buf, size, "tree, %s", mdsd_csv_cell(t, r, c->scheme));
}

int plot_block_series(const mdsd_csv *t, int what, plot_block_sel *sel, series_list *s, point **pts,
                      size_t *n, size_t *cap, mdsd_err *err)
{
    block_cols c = {.t = t};
    int rc = MDSD_OK;
    struct { const char *name; int *col; } cols[] = {
        {"dump", &c.dump}, {"verifier", &c.verifier}, {"policy", &c.policy}, {"scheme", &c.scheme},
        {"sequences", &c.sequences}, {"depth", &c.depth}, {"cost", &c.cost},
        {"block_efficiency", &c.tau}, {"stderr", &c.se}, {"speedup", &c.speedup},
        {"per_position_acceptance_rate", &c.reach},
        {"per_position_acceptance_rate_stderr", &c.reach_se}};
    for (size_t i = 0; rc == MDSD_OK && i < sizeof cols / sizeof *cols; i++)
        rc = need(t, cols[i].name, cols[i].col, err);
    if (rc == MDSD_OK)
        rc = plot_check_list(t, c.verifier, sel->method, "`method`", false, err);
    if (rc == MDSD_OK)
        rc = plot_check_list(t, c.dump, sel->dump, "`dump`", true, err);
    if (rc || t->n_rows == 0)
        return rc ? rc : mdsd_fail(err, MDSD_EINVAL, "%s: no rows", t->path);
    /* the dump, the first cost, each series' K (seq) and deepest L */
    const char *dump = sel->dump ? sel->dump : mdsd_csv_cell(t, 0, c.dump);
    bool several_dumps = false, several_costs = false;
    double first_cost = NAN;
    size_t rows = t->n_rows;
    double *best_k = malloc(rows * sizeof *best_k), *best_l = malloc(rows * sizeof *best_l);
    long *key = malloc(rows * sizeof *key);
    series_list verifiers = {0}; /* one entry per (verifier, policy kind, scheme) */
    if (!best_k || !best_l || !key)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t r = 0; rc == MDSD_OK && r < rows; r++) {
        double k = 0, l, cost, x;
        key[r] = -1;
        bool seq = !strcmp(mdsd_csv_cell(t, r, c.policy), "seq");
        if ((rc = number(&c, r, c.depth, 1, 64, true, &l, err)) || (rc = number(&c, r, c.cost, 0, 1e6, false, &cost, err)) ||
            (seq && (rc = number(&c, r, c.sequences, 1, 1e6, true, &k, err))) ||
            (rc = number(&c, r, c.tau, 1, l + 1, false, &x, err)))
            break;
        if (strcmp(mdsd_csv_cell(t, r, c.dump), dump)) {
            several_dumps = true;
            continue;
        }
        if (!plot_in_list(sel->method, mdsd_csv_cell(t, r, c.verifier)) ||
            (seq && sel->sequences >= 0 && k != (double)sel->sequences))
            continue;
        if (isnan(first_cost))
            first_cost = cost;
        several_costs |= cost != first_cost;
        if (what != PLOT_BLOCK_SPEEDUP && cost != first_cost)
            continue;
        size_t before = verifiers.n;
        long v = plot_series_index(&verifiers, seq ? "seq" : "tree", mdsd_csv_cell(t, r, c.verifier),
                                   seq ? "" : mdsd_csv_cell(t, r, c.scheme));
        if (v < 0) {
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            break;
        }
        key[r] = v;
        if (verifiers.n > before)
            best_k[v] = k, best_l[v] = l;
        best_k[v] = k > best_k[v] ? k : best_k[v];
        best_l[v] = l > best_l[v] ? l : best_l[v];
    }
    if (rc == MDSD_OK && sel->sequences >= 0 && verifiers.n == 0)
        rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_N,
                              "`n`: no seq rows with %ld sequences in %s", sel->sequences, t->path);
    if (rc == MDSD_OK && several_dumps && !sel->dump)
        plot_note(sel->note, sel->note_ctx, "%s has several dumps; plotting %s (choose with `dump`)", t->path, dump);
    for (size_t r = 0; rc == MDSD_OK && r < rows; r++) {
        if (key[r] < 0)
            continue;
        bool seq = !strcmp(mdsd_csv_cell(t, r, c.policy), "seq");
        double k = seq ? strtod(mdsd_csv_cell(t, r, c.sequences), NULL) : 0;
        double l = strtod(mdsd_csv_cell(t, r, c.depth), NULL), cost = strtod(mdsd_csv_cell(t, r, c.cost), NULL);
        if (k != best_k[key[r]] || (what == PLOT_BLOCK_REACH && l != best_l[key[r]]))
            continue;
        char pol[256], costs[64] = "";
        policy_label(&c, r, pol, sizeof pol);
        if (what == PLOT_BLOCK_SPEEDUP && several_costs)
            snprintf(costs, sizeof costs, "c = %g", cost);
        long si = plot_series_index(s, pol, mdsd_csv_cell(t, r, c.verifier), costs);
        if (si < 0) {
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            break;
        }
        double y, e;
        if (what == PLOT_BLOCK_REACH) {
            for (size_t d = 1; rc == MDSD_OK && d <= (size_t)l; d++) {
                if ((rc = list_item(&c, r, c.reach, d, &y, err)) || (rc = list_item(&c, r, c.reach_se, d, &e, err)))
                    break;
                rc = add_unique(&c, r, pts, n, cap, (point){(size_t)si, (double)d, y, e}, err);
            }
            continue;
        }
        /* the speed-up's s.e.: E[tau]'s over the same constant 1 + c L */
        if ((rc = number(&c, r, what == PLOT_BLOCK_SPEEDUP ? c.speedup : c.tau, 0, l + 1, false, &y, err)) ||
            (rc = number(&c, r, c.se, 0, l + 1, false, &e, err)))
            break;
        if (what == PLOT_BLOCK_SPEEDUP)
            e /= 1.0 + cost * l;
        rc = add_unique(&c, r, pts, n, cap, (point){(size_t)si, l, y, e}, err);
    }
    for (size_t i = 0; i < verifiers.n; i++)
        free(verifiers.keys[i]);
    free(verifiers.keys);
    free(best_k), free(best_l), free(key);
    if (rc == MDSD_OK && *n == 0)
        rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_N,
                              "%s: no rows to plot with the chosen dump, verifiers and `n`", t->path);
    sel->dump = dump;
    sel->overlay = what == PLOT_BLOCK_SPEEDUP && several_costs;
    return rc;
}
