#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

typedef struct {
    double prob;
    uint64_t count;
} gof_cell;

static int by_prob_ascending(const void *a, const void *b)
{
    double x = ((const gof_cell *)a)->prob, y = ((const gof_cell *)b)->prob;
    return (x > y) - (x < y);
}

/* Pools the least likely cells, smallest first, until the pool expects at
 * least min_expected and every remaining cell does too: a pool that still
 * expects far less than one observation would turn a single rare outcome
 * into a false alarm. */
mdsd_gof mdsd_chisq_gof(const uint64_t *counts, const double *prob, size_t k,
                        double min_expected)
{
    mdsd_gof g = {0.0, 0, 1.0, 0};
    gof_cell *cell = malloc((k ? k : 1) * sizeof *cell);
    if (!cell) {
        g.p_value = NAN; /* never a silent pass */
        return g;
    }
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        g.trials += counts[i];
        if (prob[i] > 0.0)
            cell[m++] = (gof_cell){prob[i], counts[i]};
        else if (counts[i] > 0)
            g.statistic = INFINITY; /* an impossible outcome was seen */
    }
    if (isinf(g.statistic)) {
        g.p_value = 0.0;
        free(cell);
        return g;
    }
    double n = (double)g.trials;
    qsort(cell, m, sizeof *cell, by_prob_ascending);
    size_t i = 0, cells = 0;
    double pool_p = 0.0, pool_obs = 0.0;
    for (; i < m; i++) {
        bool pool_short = pool_p > 0.0 && pool_p * n < min_expected;
        if (cell[i].prob * n >= min_expected && !pool_short)
            break;
        pool_p += cell[i].prob;
        pool_obs += (double)cell[i].count;
    }
    if (i > 0) {
        double e = n * pool_p, d = pool_obs - e;
        g.statistic += d * d / e;
        cells++;
    }
    for (; i < m; i++) {
        double e = n * cell[i].prob, d = (double)cell[i].count - e;
        g.statistic += d * d / e;
        cells++;
    }
    free(cell);
    g.dof = cells > 1 ? cells - 1 : 0;
    g.p_value = g.dof ? gsl_cdf_chisq_Q(g.statistic, (double)g.dof) : 1.0;
    return g;
}

void mdsd_welford_init(mdsd_welford *w)
{
    w->count = 0;
    w->mean = 0.0;
    w->m2 = 0.0;
}

void mdsd_welford_add(mdsd_welford *w, double x)
{
    w->count++;
    double d = x - w->mean;
    w->mean += d / (double)w->count;
    w->m2 += d * (x - w->mean);
}

void mdsd_welford_merge(mdsd_welford *a, const mdsd_welford *b)
{
    if (b->count == 0)
        return;
    uint64_t n = a->count + b->count;
    double d = b->mean - a->mean;
    a->mean += d * (double)b->count / (double)n;
    a->m2 += b->m2 + d * d * (double)a->count * (double)b->count / (double)n;
    a->count = n;
}

double mdsd_welford_variance(const mdsd_welford *w)
{
    return w->count > 1 ? w->m2 / (double)(w->count - 1) : 0.0;
}

double mdsd_welford_stderr(const mdsd_welford *w)
{
    return w->count > 1 ? sqrt(mdsd_welford_variance(w) / (double)w->count) : 0.0;
}
