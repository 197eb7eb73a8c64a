/* montecarlo.h - Monte-Carlo estimate of a prepared verifier's acceptance at
 * one position: T trials of (draw the drafts from the scheme's exact
 * sampler, verify), with Welford statistics, per-draft acceptance counts, the
 * output-token histogram, Wilson confidence intervals, and the output-validity
 * check (chi-square of the histogram against p).
 *
 * Reproducibility: the trials are cut into blocks of MDSD_MC_BLOCK; block b
 * draws from its own GSL taus2 stream seeded with
 *   base = mdsd_seed_mix(seed, position, mdsd_seed_name(verifier name)),
 *   block 0: base, block b > 0: mdsd_seed_mix(base, b, 0),
 * and the blocks are merged in order, so every result is a function of
 * (seed, position, verifier, trials) only, never of the thread count. */
#ifndef MDSD_MONTECARLO_H
#define MDSD_MONTECARLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "stats.h"
#include "verifier.h"

#define MDSD_MC_BLOCK 65536
/* Trials per run: ~10^12 is days on one machine; above it a typo is likelier. */
#define MDSD_MC_MAX_TRIALS 1000000000000ULL

typedef struct {
    uint64_t trials;
    uint64_t seed;
    uint64_t position;  /* stream coordinate (0 for a single position) */
    int threads;        /* OpenMP threads; 0 = the OpenMP default, 1 = serial */
    bool histogram;     /* count output tokens (needed for the validity check) */
} mdsd_mc_opts;

typedef struct {
    size_t n, V;
    uint64_t trials;
    mdsd_welford accept;   /* of the 0/1 acceptance indicator */
    double alpha;          /* accept.mean */
    double se;             /* standard error sqrt(var / T) */
    double ci_low, ci_high;/* 95% Wilson score interval */
    uint64_t *per_draft;   /* [n]: trials whose j-th draft was accepted */
    uint64_t *histogram;   /* [V] output-token counts, or NULL */
} mdsd_mc_result;

void mdsd_mc_opts_init(mdsd_mc_opts *opts); /* trials 10^6, seed 1, position 0, histogram on */

/* Runs the trials. res must be freed with mdsd_mc_result_free. */
int mdsd_mc_run(const mdsd_verifier *v, const mdsd_mc_opts *opts, mdsd_mc_result *res,
                mdsd_err *err);
void mdsd_mc_result_free(mdsd_mc_result *res);

/* Wilson score interval for `successes` out of `trials` at confidence level
 * (e.g. 0.95). */
void mdsd_mc_wilson(uint64_t successes, uint64_t trials, double level, double *low,
                    double *high);

/* Output validity: Pearson chi-square of the histogram against p[0..V)
 * (cells with expected count < 5 pooled; an output of probability 0 gives
 * p_value = 0). Requires opts.histogram. */
mdsd_gof mdsd_mc_check_output(const mdsd_mc_result *res, const double *p);

#endif
