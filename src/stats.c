#include "stats.h"

#include <math.h>

#include <gsl/gsl_cdf.h>

mdsd_gof mdsd_chisq_gof(const uint64_t *counts, const double *prob, size_t k,
                        double min_expected)
{
    mdsd_gof g = {0.0, 0, 1.0, 0};
    for (size_t i = 0; i < k; i++)
        g.trials += counts[i];
    double n = (double)g.trials;
    double pooled_obs = 0.0, pooled_exp = 0.0;
    size_t cells = 0;
    for (size_t i = 0; i < k; i++) {
        double e = n * prob[i];
        if (prob[i] <= 0.0) {
            if (counts[i] > 0) {
                g.statistic = INFINITY;
                g.p_value = 0.0;
                return g;
            }
            continue;
        }
        if (e < min_expected) {
            pooled_obs += (double)counts[i];
            pooled_exp += e;
            continue;
        }
        double d = (double)counts[i] - e;
        g.statistic += d * d / e;
        cells++;
    }
    if (pooled_exp > 0.0) {
        double d = pooled_obs - pooled_exp;
        g.statistic += d * d / pooled_exp;
        cells++;
    }
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
