/* check_impl.h - what the check files (check_alpha.c, check_verify.c,
 * check_formula.c) share with the runner (check.c): the state of one
 * instance, the calls into the injected solvers, and the bookkeeping of
 * deviations. Internal to the library; see check.h for the public API. */
#ifndef MDSD_CHECK_IMPL_H
#define MDSD_CHECK_IMPL_H

#include <stdarg.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "check.h"
#include "scheme.h"
#include "stats.h"

#define CHECK_ACC 48 /* per-check accumulators for the summary */

/* Bit masks of toy families. */
#define FAM(f) (1u << (f))
#define FAM_ALL ((1u << MDSD_TOY_FAMILIES) - 1u)
#define FAM_NOT_BERNOULLI (FAM_ALL & ~FAM(MDSD_TOY_BERNOULLI))

struct mdsd_check_ctx {
    const mdsd_check *def;
    const mdsd_check_env *env;
    const mdsd_check_cfg *opts;
    mdsd_check_result *res;
    gsl_rng *rng;       /* the instance's stream, positioned after the toy draw */
    size_t draw;        /* instance index */
    mdsd_toy toy;       /* family and parameters of this instance */
    size_t V;
    double *p;          /* [V] */
    double *q;          /* [MDSD_CHECK_MAX_NQ * V], row j = drafter j */
    mdsd_bound_workspace *ws; /* sort / k2 workspace for V <= def->V_max */
    size_t case_index;  /* stream coordinate of the next Monte-Carlo run */
    /* p-value checks: every p-value recorded, Bonferroni at the end */
    double *pvalues;
    size_t n_pvalues, cap_pvalues;
    /* check-specific totals for the summary */
    double acc[CHECK_ACC];
    size_t cnt[CHECK_ACC];
};

/* Uniform integer in [lo, hi]. */
size_t chk_int(mdsd_check_ctx *c, size_t lo, size_t hi);

/* Builds scheme `kind` with n drafts on the instance's q (multi: rows
 * 0..n-1). Returns 1 if it is well defined (mdsd_scheme_check), else 0. */
int chk_scheme(const mdsd_check_ctx *c, mdsd_scheme_kind kind, size_t n, mdsd_scheme *s);

/* alpha* through the injected solver. */
int chk_alpha(mdsd_check_ctx *c, const mdsd_scheme *s, mdsd_bound_method m, double *alpha,
              mdsd_err *err);
/* The same, returning the whole result (k2's Thm 2 flag). */
int chk_alpha_res(mdsd_check_ctx *c, const mdsd_scheme *s, mdsd_bound_method m,
                  mdsd_bound_result *res, mdsd_err *err);
/* A verifier's exact acceptance through the injected exact (per_draft may be NULL). */
int chk_exact(mdsd_check_ctx *c, mdsd_verifier_kind kind, const mdsd_scheme *s,
              const mdsd_verifier_opts *vo, double *alpha, double *per_draft, mdsd_err *err);

/* Records one comparison of the instance: deviation dev (larger is worse) of
 * the case with n drafts; a new worst captures the instance and the note. */
void chk_record(mdsd_check_ctx *c, size_t n, double dev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records one p-value (p-value checks). */
int chk_record_p(mdsd_check_ctx *c, size_t n, double pvalue, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Pearson chi-square of counts[0..V) against prob[0..V), pooling the
 * least likely cells until the pool expects at least 5 (stats.h's test pools
 * the cells under 5 but leaves a pool that may expect far less, where one
 * observation gives p ~ 1e-17). An observation of probability 0: p = 0. */
mdsd_gof chk_gof(const uint64_t *counts, const double *prob, size_t V);

/* Two-sided exact binomial test of k successes in T trials at probability prob. */
double chk_binomial_p(uint64_t k, uint64_t T, double prob);

/* p(S) for the token set of bit mask S (V <= 30). */
double chk_mass(const double *x, size_t V, unsigned long S);

/* SpecTr Lemma 3's upper bound (MATH.md notation): min over Omega0 of
 *   sum_{y in Omega0} min(p(y), 1 - (1 - q(y))^n)
 *   + sum_{x in Sigma^n} min(prod_j q(x_j), p(S(x) minus Omega0)),
 * by enumeration (V^n tuples, 2^V sets). */
int chk_spectr_upper(const double *p, const double *q, size_t V, size_t n, double *ub,
                     mdsd_err *err);

/* The registered checks of each file. */
extern const mdsd_check mdsd_checks_alpha[];
extern const size_t mdsd_checks_alpha_count;
extern const mdsd_check mdsd_checks_verify[];
extern const size_t mdsd_checks_verify_count;
extern const mdsd_check mdsd_checks_formula[];
extern const size_t mdsd_checks_formula_count;

#endif
