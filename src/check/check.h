/* check.h - the theorem regression suite (`mdsd check`): a registry of named
 * checks, each a published result (theorem, lemma, closed form, empirical
 * claim) evaluated on random instances of the toy families (toy.h).
 *
 * A check is either
 *   must-hold  a theorem or an exact identity: status pass, or fail when its
 *              worst deviation exceeds the tolerance (or a solver errs);
 *   finding    a published formula or empirical claim under test: status
 *              finding, with the worst instance and the count of
 *              counterexamples, never a failure.
 *
 * The solvers and verifiers a check calls come from an mdsd_check_env of
 * function pointers (defaults: mdsd_bound_alpha, mdsd_verifier_exact, the
 * built-in verifier ops, mdsd_cps_Q, mdsd_wor_Q), so that tests can plant an
 * error in one of them and assert that the check fails. The references a
 * check compares against (brute-force enumeration of D, the closed forms being
 * tested, SpecTr's upper bound) are computed in the check itself.
 *
 * Reproducibility: instance i of check C draws from its own taus2 stream
 * seeded with mdsd_seed_mix(seed, mdsd_seed_name(C), i); Monte-Carlo runs are
 * seeded from the same coordinates. Results depend on (check, seed, count,
 * family, trials) only. */
#ifndef MDSD_CHECK_H
#define MDSD_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdsd/check.h> /* mdsd_check_status */

#include "bound.h"
#include "err.h"
#include "toy.h"
#include "verifier.h"

/* Draft rows generated per instance (the multi scheme uses up to this many). */
#define MDSD_CHECK_MAX_NQ 4

/* A check's run returns this for an instance outside its hypothesis. */
#define MDSD_CHECK_NA (-1)

typedef enum { MDSD_CHECK_QUICK, MDSD_CHECK_THOROUGH } mdsd_check_profile;

/* The solvers and verifiers under test. */
typedef struct {
    int (*bound)(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                 const mdsd_bound_opts *opts, mdsd_bound_workspace *ws, mdsd_bound_result *res,
                 mdsd_err *err);
    int (*exact)(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                 const mdsd_verifier_opts *opts, double *alpha, double *per_draft, mdsd_err *err);
    /* Simulated (Monte Carlo) through mdsd_verifier_alloc_ops. */
    const mdsd_verifier_ops *verifiers[MDSD_VERIFIER_KINDS];
    /* Hu et al.'s generating-function Q(H) and the exact wor Q(H). */
    int (*cps_Q)(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
                 mdsd_err *err);
    int (*wor_Q)(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
                 mdsd_err *err);
} mdsd_check_env;

typedef struct {
    size_t count;     /* instances per check (a theorem with a hypothesis draws
                         until `count` instances satisfy it, at most 20 * count) */
    uint64_t seed;
    uint64_t trials;  /* Monte-Carlo trials per (instance, verifier) */
    int family;       /* an mdsd_toy_family, or -1 = every family the check uses */
    int threads;      /* OpenMP threads of the Monte-Carlo runs (0 = default) */
} mdsd_check_cfg;

/* The state of one instance while a check evaluates it (check_impl.h). */
typedef struct mdsd_check_ctx mdsd_check_ctx;

/* A registered check. `worst` is a deviation (larger is worse; must-hold
 * checks fail above tol), except for pvalue checks, where it is the smallest
 * p-value times the number of tests (Bonferroni; fail below tol). */
typedef struct mdsd_check mdsd_check;
struct mdsd_check {
    const char *name;
    const char *source;   /* paper, theorem / equation */
    const char *claim;    /* what is asserted, in this project's notation */
    const char *measure;  /* what `worst` measures */
    bool must_hold;       /* false: a finding */
    bool pvalue;
    double tol;
    unsigned families;    /* bit f = toy family f */
    size_t V_min, V_max;  /* vocabulary sizes drawn (bernoulli: 2) */
    /* Optional: the family parameters of draw i (default: randomised). */
    void (*configure)(mdsd_toy *t, size_t draw, gsl_rng *r);
    /* Evaluates one instance: MDSD_OK, MDSD_CHECK_NA when the instance misses
     * the claim's hypothesis, or an error code (a solver failed). */
    int (*run)(mdsd_check_ctx *c, mdsd_err *err);
    /* Optional: the check's totals as one line (res->summary). */
    void (*summarize)(const mdsd_check_ctx *c, char *buf, size_t size);
};

typedef struct {
    const mdsd_check *check;
    mdsd_check_status status;
    size_t instances;        /* instances the claim was evaluated on */
    size_t draws;            /* instances drawn (some may miss a hypothesis) */
    size_t cases;            /* comparisons made (instances x schemes x n x ...) */
    size_t counterexamples;  /* cases beyond the tolerance (a finding's counterexamples) */
    size_t errors;           /* instances on which a solver failed (the check fails; the
                                first is the reported instance, worst = inf, or 0 for
                                p-value checks) */
    double worst;            /* see mdsd_check; NaN when nothing was evaluated */
    /* The worst instance (has_worst): draw index, family, V, drafter rows,
     * the n of the worst case, p[V], q[n_q * V], and what was compared. */
    bool has_worst;
    size_t worst_draw;
    mdsd_toy_family worst_family;
    size_t worst_V, worst_nq, worst_n;
    double *worst_p, *worst_q;
    char worst_note[384];
    char summary[1024];      /* check-specific totals (findings: the claim's verdict) */
    char error[600];         /* a solver failed: status fail; the count and the first message */
} mdsd_check_result;

/* The registry, in a fixed order. */
size_t mdsd_check_count(void);
const mdsd_check *mdsd_check_get(size_t i);
/* NULL (and MDSD_EINVAL naming the checks) if there is no such check. */
const mdsd_check *mdsd_check_find(const char *name, mdsd_err *err);
/* Whether check c draws from family f (-1: any family). */
bool mdsd_check_uses_family(const mdsd_check *c, int family);

const char *mdsd_check_status_name(mdsd_check_status s);
int mdsd_check_profile_parse(const char *name, mdsd_check_profile *out, mdsd_err *err);

/* The real solvers and verifiers. */
void mdsd_check_env_default(mdsd_check_env *env);
/* quick: 25 instances, 3000 trials; thorough: 10^4 instances, 10^4 trials.
 * seed 1, every family, threads 1. */
void mdsd_check_cfg_init(mdsd_check_cfg *o, mdsd_check_profile profile);

/* Runs check c. A failing solver makes the result fail (res->errors,
 * res->error) and the run goes on with the next instance; it is not an error
 * of this call, which fails only on bad options or memory. res
 * must be freed with mdsd_check_result_free. */
int mdsd_check_run_one(const mdsd_check *c, const mdsd_check_env *env, const mdsd_check_cfg *o,
                   mdsd_check_result *res, mdsd_err *err);
void mdsd_check_result_free(mdsd_check_result *res);

/* The tolerance as text: "<= 1e-09" or ">= 1e-06" (p-value checks). */
void mdsd_check_bound_text(const mdsd_check *c, char *buf, size_t size);

#endif
