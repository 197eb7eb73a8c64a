/* lp.h - the optimal-transport LPs of MATH.md §2.1-2.2, solved with GLPK.
 *
 * Full OTM LP (SpecTr eq. 4): variables pi(y, x) >= 0 for every token y and
 * every tuple x in supp D; sum_x pi(y,x) = p(y), sum_y pi(y,x) = D(x);
 * maximise sum_x sum_{y in S(x)} pi(y,x). V * |supp D| variables.
 *
 * Reduced LP (SpecHub 3.2, Hu eq. 9): only accepting entries s(y,S) for
 * y in S, tuples aggregated by their token set S (mass Dbar(S)):
 * sum_{y in S} s(y,S) <= Dbar(S), sum_{S ni y} s(y,S) <= p(y); maximise sum s.
 * Same optimum. */
#ifndef MDSD_LP_H
#define MDSD_LP_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "scheme.h"

/* Draft tuples aggregated by their token set S, with mass Dbar(S) (the set
 * law of MATH.md §2.2): the reduced LP's rows and the max-flow's set nodes. */
typedef struct {
    size_t count;   /* number of distinct sets K */
    size_t *start;  /* [K + 1]: set k is members[start[k] .. start[k+1]) */
    int *members;   /* sorted token ids */
    double *mass;   /* [K] Dbar(S_k) */
} mdsd_set_law;

/* Aggregates D by token set (masses multiplied by scale, compensated sums). */
int mdsd_set_law_build(const mdsd_joint *D, double scale, mdsd_set_law *S, mdsd_err *err);
void mdsd_set_law_free(mdsd_set_law *S);

/* Default guard: refuse LPs with more structural variables than this. */
#define MDSD_LP_MAX_VARS ((size_t)4000000)

typedef struct {
    bool exact_arith;  /* solve with glp_exact (rational simplex) after glp_simplex */
    size_t max_vars;   /* size guard; 0 = MDSD_LP_MAX_VARS */
    bool want_plan;    /* full LP only: return the optimal plan pi */
    /* exact_arith as a refinement only: when glp_exact runs past
     * MDSD_LP_EXACT_SECONDS (rationals of subnormal or widely scaled masses
     * grow huge), keep glp_simplex's solution instead of failing. */
    bool exact_best_effort;
    /* Cost guard: refuse an LP whose estimated simplex time (see
     * mdsd_lp_seconds_estimate) is above this; 0 = MDSD_LP_MAX_SECONDS,
     * INFINITY = no limit (--force). */
    double max_seconds;
} mdsd_lp_opts;

#define MDSD_LP_MAX_SECONDS 60.0

/* GLPK's simplex time on these LPs, measured on this project's machines:
 * about 2e-8 s per (variable x row) (full LP, iid n = 3: V = 16 2.7 s,
 * V = 20 12 s, V = 25 115 s; reduced LP V = 40 3.7 s, V = 60 45 s), an
 * overestimate for the smaller ones. */
double mdsd_lp_seconds_estimate(size_t vars, size_t rows);

#define MDSD_LP_EXACT_SECONDS 2

typedef struct {
    double alpha;      /* optimal acceptance rate alpha*, clamped to [0, 1] */
    size_t vars;       /* structural variables of the LP solved */
    size_t rows;       /* constraints */
    double *plan;      /* want_plan: [D->count * V], plan[t*V + y] = pi(y, x_t); else NULL.
                        * Entries are clipped at 0 (the simplex may return -1e-17);
                        * row t sums to D(x_t), column y to p(y), up to the simplex
                        * tolerance (tested to 1e-7). */
} mdsd_lp_result;

/* Solves the full OTM LP for target p[0..V) and draft law D. */
int mdsd_lp_full(const double *p, size_t V, const mdsd_joint *D, const mdsd_lp_opts *opts,
                 mdsd_lp_result *res, mdsd_err *err);

/* Solves the reduced LP (tuples aggregated by set). */
int mdsd_lp_reduced(const double *p, size_t V, const mdsd_joint *D, const mdsd_lp_opts *opts,
                    mdsd_lp_result *res, mdsd_err *err);

void mdsd_lp_result_free(mdsd_lp_result *res);

/* Size of the full LP, V * |supp D| (SIZE_MAX on overflow): to choose a
 * method before solving. The full LP passes V + |supp D| - 1 rows to GLPK:
 * the draft row of the heaviest tuple is implied by the others (both
 * marginals sum to 1) and is left out, so that rounding in the totals cannot
 * make glp_exact report infeasibility. */
size_t mdsd_lp_full_vars(size_t V, const mdsd_joint *D);

/* Size of the reduced LP: vars = sum over distinct token sets S of |S|,
 * sets = number of distinct sets (it aggregates D, O(|supp D| n log)). */
int mdsd_lp_reduced_size(const mdsd_joint *D, size_t *vars, size_t *sets, mdsd_err *err);

#endif
