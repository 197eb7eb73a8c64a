/* stats.h - goodness-of-fit tests used to prove that samplers and verifiers
 * follow the distribution they claim (Pearson chi-square via GSL's chi-square
 * tail), and Welford running moments for Monte-Carlo estimates. */
#ifndef MDSD_STATS_H
#define MDSD_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double statistic; /* Pearson X^2 */
    size_t dof;       /* degrees of freedom after pooling */
    double p_value;   /* P(chi2_dof >= statistic) */
    size_t trials;    /* total count */
} mdsd_gof;

/* Pearson chi-square test of counts[0..k) against probabilities prob[0..k)
 * (which should sum to 1). The least likely cells are pooled, smallest first,
 * until the pool and every remaining cell expect at least min_expected
 * observations, so the chi-square approximation holds. Observations in a cell
 * of probability 0 give p_value = 0 (an impossible outcome was seen). */
mdsd_gof mdsd_chisq_gof(const uint64_t *counts, const double *prob, size_t k,
                        double min_expected);

/* Welford's online mean and variance. */
typedef struct {
    uint64_t count;
    double mean;
    double m2;
} mdsd_welford;

void mdsd_welford_init(mdsd_welford *w);
void mdsd_welford_add(mdsd_welford *w, double x);
/* Merges b into a (Chan et al.'s parallel update). */
void mdsd_welford_merge(mdsd_welford *a, const mdsd_welford *b);
double mdsd_welford_variance(const mdsd_welford *w); /* sample variance (n-1) */
double mdsd_welford_stderr(const mdsd_welford *w);   /* sqrt(var / n) */

#endif
