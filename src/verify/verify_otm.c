/* verify_otm.c - the optimal verifier (`otm`): solve the full OTM LP of
 * MATH.md §2.1 (lp.h) for (p, D) and, given the draft tuple x, output
 * y ~ pi*(y | x) = pi*(y, x) / D(x). Its acceptance is alpha*(p, D), for any
 * draft scheme, but the LP has V * |supp D| variables: toy vocabularies only.
 *
 * Set-up per position: enumerate D, solve the LP with its plan, and build one
 * alias table (gsl_ran_discrete) per tuple over the tokens of positive plan
 * mass (a basic optimal plan has at most V + |supp D| - 1 of them).
 * Verification: binary search of the tuple, one alias draw.
 *
 * Rows are normalised by their own plan mass, so the output law is
 * sum_x D(x) pi(y, x) / pi(x), which is p up to the LP's tolerance.
 * Per-draft rates: the output counts for the lowest index j with
 * x_j = y ("draft j first occurring"); the exact rates sum the normalised
 * plan over those entries, so they sum to the sampler's exact acceptance. */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "dist.h"
#include "lp.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t V, n;
    mdsd_joint D;                 /* sorted for mdsd_joint_find */
    size_t *start;                /* [count + 1] row t's tokens: tok[start[t] .. start[t+1]) */
    int *tok;                     /* tokens of positive plan mass, row by row */
    gsl_ran_discrete_t **row;     /* [count] alias table over the row's tokens; NULL = empty */
    gsl_ran_discrete_t *target;   /* alias table of p, for an empty row or unknown tuple */
} otm_state;

static void otm_release(void *state)
{
    otm_state *st = state;
    if (!st)
        return;
    for (size_t t = 0; st->row && t < st->D.count; t++)
        if (st->row[t])
            gsl_ran_discrete_free(st->row[t]);
    if (st->target)
        gsl_ran_discrete_free(st->target);
    free(st->row);
    free(st->start);
    free(st->tok);
    mdsd_joint_free(&st->D);
    free(st);
}

/* Enumerates and sorts D, then solves the full LP with its plan. */
static int otm_solve(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                     mdsd_joint *D, mdsd_lp_result *lp, mdsd_err *err)
{
    size_t max = opts && opts->max_tuples ? opts->max_tuples : MDSD_JOINT_MAX_TUPLES;
    double tuples = mdsd_scheme_joint_size(s);
    if (tuples > (double)max)
        return mdsd_fail(err, MDSD_ETOOBIG,
                         "otm: the draft law has %.3g tuples (n = %zu, V = %zu), above the "
                         "enumeration limit of %zu; otm solves the full LP and is for toy "
                         "vocabularies", tuples, s->n, s->V, max);
    int rc = mdsd_scheme_joint(s, max, D, err);
    if (rc != MDSD_OK)
        return rc;
    if ((rc = mdsd_joint_sort(D, err)) != MDSD_OK) {
        mdsd_joint_free(D);
        return rc;
    }
    size_t vars = mdsd_lp_full_vars(s->V, D);
    if (vars > MDSD_LP_MAX_VARS) {
        size_t count = D->count; /* read before the joint is freed (it zeroes it) */
        mdsd_joint_free(D);
        return mdsd_fail(err, MDSD_ETOOBIG,
                         "otm: the full OTM LP needs %zu variables (V = %zu x %zu draft tuples), "
                         "above the limit of %zu; otm is for toy vocabularies",
                         vars, s->V, count, (size_t)MDSD_LP_MAX_VARS);
    }
    /* The rational simplex: the plan's rows then sum to D(x) to rounding, so
     * the sampler's acceptance is alpha* to ~1e-15 rather than to the
     * simplex's tolerance (~1e-7). Affordable at the sizes otm allows,
     * except on subnormal masses: then, after MDSD_LP_EXACT_SECONDS, the
     * floating simplex's plan (rows to ~1e-10). */
    mdsd_lp_opts lo = {.exact_arith = true, .want_plan = true, .exact_best_effort = true};
    if ((rc = mdsd_lp_full(p, s->V, D, &lo, lp, err)) != MDSD_OK)
        mdsd_joint_free(D);
    return rc;
}

/* Compresses the plan to its positive entries and builds the alias tables. */
static int otm_tables(otm_state *st, const double *plan, mdsd_err *err)
{
    size_t V = st->V, T = st->D.count, nz = 0;
    for (size_t k = 0; k < T * V; k++)
        nz += plan[k] > 0.0;
    st->start = malloc((T + 1) * sizeof *st->start);
    st->tok = malloc((nz ? nz : 1) * sizeof *st->tok);
    st->row = calloc(T, sizeof *st->row);
    double *w = malloc(V * sizeof *w);
    int rc = MDSD_OK;
    if (!st->start || !st->tok || !st->row || !w)
        rc = mdsd_fail(err, MDSD_ENOMEM, "otm: out of memory for %zu plan entries", nz);
    for (size_t t = 0, k = 0; rc == MDSD_OK && t < T; t++) {
        st->start[t] = k;
        size_t m = 0;
        for (size_t y = 0; y < V; y++)
            if (plan[t * V + y] > 0.0)
                w[m] = plan[t * V + y], st->tok[k + m++] = (int)y;
        k += m;
        st->start[t + 1] = k;
        if (m && !(st->row[t] = gsl_ran_discrete_preproc(m, w)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "otm: could not build the alias table of tuple %zu", t);
    }
    free(w);
    return rc;
}

static int otm_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                       void **state, mdsd_err *err)
{
    otm_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "otm: out of memory");
    st->V = s->V, st->n = s->n;
    mdsd_lp_result lp;
    int rc = otm_solve(p, s, opts, &st->D, &lp, err);
    if (rc != MDSD_OK) {
        free(st);
        return rc;
    }
    rc = otm_tables(st, lp.plan, err);
    mdsd_lp_result_free(&lp);
    if (rc == MDSD_OK && !(st->target = mdsd_vc_alias(p, p, s->V, "otm", err)))
        rc = MDSD_ENOMEM;
    if (rc != MDSD_OK) {
        otm_release(st);
        return rc;
    }
    *state = st;
    return MDSD_OK;
}

static int otm_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const otm_state *st = state;
    long t = mdsd_joint_find(&st->D, drafts);
    int y;
    if (t < 0 || !st->row[t]) /* a tuple outside supp D, or no plan mass: p itself */
        y = (int)gsl_ran_discrete(rng, st->target);
    else
        y = st->tok[st->start[t] + gsl_ran_discrete(rng, st->row[t])];
    *accepted_index = mdsd_vc_first_match(drafts, st->n, y);
    return y;
}

static int otm_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                     double *alpha, double *per_draft, mdsd_err *err)
{
    mdsd_joint D;
    mdsd_lp_result lp;
    int rc = otm_solve(p, s, opts, &D, &lp, err);
    if (rc != MDSD_OK)
        return rc;
    size_t V = s->V, n = s->n;
    memset(per_draft, 0, n * sizeof *per_draft);
    for (size_t t = 0; t < D.count; t++) {
        const double *row = lp.plan + t * V;
        const int *x = D.tokens + t * n;
        double mass = mdsd_sum(row, V);
        for (size_t j = 0; j < n; j++) {
            int first = 1;
            for (size_t l = 0; l < j; l++)
                first &= x[l] != x[j];
            if (first) /* an empty row samples p (see otm_verify) */
                per_draft[j] += D.prob[t] * (mass > 0.0 ? row[x[j]] / mass : p[x[j]]);
        }
    }
    *alpha = mdsd_sum(per_draft, n);
    mdsd_lp_result_free(&lp);
    mdsd_joint_free(&D);
    return MDSD_OK;
}

/* The law of otm_verify given the drafts: the plan's row normalised (the
 * alias table's own probabilities), or p for an unknown tuple / empty row. */
static void otm_law(const void *state, const int *drafts, double *py)
{
    const otm_state *st = state;
    long t = mdsd_joint_find(&st->D, drafts);
    for (size_t j = 0; j < st->n; j++) {
        if (t < 0 || !st->row[t]) {
            py[j] = mdsd_vc_alias_pdf(st->target, drafts[j]);
            continue;
        }
        py[j] = 0.0;
        for (size_t k = st->start[t]; k < st->start[t + 1]; k++)
            if (st->tok[k] == drafts[j])
                py[j] = mdsd_vc_alias_pdf(st->row[t], (int)(k - st->start[t]));
    }
}

const mdsd_verifier_ops mdsd_verify_otm_ops = {
    .name = "otm",
    .scheme = MDSD_SCHEME_IID,
    .check = NULL,
    .prepare = otm_prepare,
    .verify = otm_verify,
    .release = otm_release,
    .exact = otm_exact,
};

const mdsd_verifier_law_fn mdsd_verify_otm_law = otm_law;
