/* verify_rrs.c - recursive rejection sampling (SpecInfer's multi-candidate
 * speculative sampling), MATH.md §3.3:
 *   p_1 = p; for j = 1..n: accept x_j w.p. min(1, p_j(x_j)/q_j(x_j)),
 *   else p_{j+1} = norm((p_j - q_j)+); all rejected: output y ~ p_{n+1}.
 * q_j = q for iid drafts; q_j = the j-th drafter's q for the multi scheme.
 * A rejected x_j has p_{j+1}(x_j) = 0, so the output is a draft exactly when
 * a test accepted: alpha = sum_j beta_j prod_{l<j} (1 - beta_l) with
 * beta_j = sum_x min(p_j(x), q_j(x)). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t n, V;
    double *p;      /* [n * V]: row j = p_{j+1} (0-based), the target of test j */
    double *q;      /* [rows * V]: the draft rows */
    size_t q_step;  /* V for multi (row j = drafter j), 0 for iid */
    double *beta;   /* [n] */
    gsl_ran_discrete_t *residual; /* p_{n+1} */
} rrs_state;

static int rrs_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_IID && s->kind != MDSD_SCHEME_MULTI)
        return mdsd_vc_wrong_scheme("rrs", s, "iid or multi drafts", err);
    return MDSD_OK;
}

static void rrs_release(void *state)
{
    rrs_state *st = state;
    free(st->p);
    free(st->q);
    free(st->beta);
    if (st->residual)
        gsl_ran_discrete_free(st->residual);
    free(st);
}

/* Fills the chain p_1..p_n into st->p, the overlaps beta, and p_{n+1} into last. */
static void residual_chain(rrs_state *st, const double *p, double *last)
{
    size_t V = st->V;
    memcpy(st->p, p, V * sizeof *p);
    for (size_t j = 0; j < st->n; j++) {
        const double *pj = st->p + j * V, *qj = st->q + j * st->q_step;
        double *next = j + 1 < st->n ? st->p + (j + 1) * V : last;
        st->beta[j] = mdsd_vc_overlap(pj, qj, V);
        mdsd_vc_residual(pj, qj, V, next);
    }
}

static int rrs_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                       void **state, mdsd_err *err)
{
    (void)opts;
    size_t n = s->n, V = s->V, rows = s->kind == MDSD_SCHEME_MULTI ? n : 1;
    rrs_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "rrs: out of memory");
    *state = st;
    st->n = n;
    st->V = V;
    st->q_step = rows > 1 ? V : 0;
    st->p = mdsd_vc_malloc(n * V * sizeof *st->p, "rrs", err);
    st->q = mdsd_vc_malloc(rows * V * sizeof *st->q, "rrs", err);
    st->beta = mdsd_vc_malloc(n * sizeof *st->beta, "rrs", err);
    double *last = mdsd_vc_malloc(V * sizeof *last, "rrs", err);
    if (!st->p || !st->q || !st->beta || !last) {
        free(last);
        return MDSD_ENOMEM;
    }
    memcpy(st->q, s->q, rows * V * sizeof *st->q);
    residual_chain(st, p, last);
    st->residual = mdsd_vc_alias(last, p, V, "rrs", err);
    free(last);
    return st->residual ? MDSD_OK : MDSD_ENOMEM;
}

static int rrs_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const rrs_state *st = state;
    const double *pj = st->p, *qj = st->q;
    for (size_t j = 0; j < st->n; j++, pj += st->V, qj += st->q_step) {
        int x = drafts[j];
        if (gsl_rng_uniform(rng) * qj[x] < pj[x]) {
            *accepted_index = (int)j;
            return x;
        }
    }
    return (int)gsl_ran_discrete(rng, st->residual);
}

/* One step of the chain in one pass: with p_j = r inv (r the unnormalised
 * residual), returns beta_j = sum min(p_j, q) (Kahan, in lanes) and writes
 * next = (p_j - q)+ with *mass = its sum (Neumaier). */
MDSD_SIMD_CLONES static double rrs_step(const double *r, double inv, const double *q, size_t V,
                                        double *next, double *mass)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0}, m[MDSD_LANES] = {0}, mc[MDSD_LANES] = {0};
    size_t x = 0;
    for (; x + MDSD_LANES <= V; x += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double a = r[x + j] * inv, b = q[x + j], d = a - b, pos = 0.5 * (d + fabs(d));
            MDSD_KAHAN_ADD(s[j], c[j], (a < b ? a : b));
            MDSD_NEUMAIER_ADD(m[j], mc[j], pos);
            next[x + j] = pos;
        }
    }
    for (size_t j = 0; x < V; x++, j++) {
        double a = r[x] * inv, b = q[x], d = a - b, pos = 0.5 * (d + fabs(d));
        MDSD_KAHAN_ADD(s[j], c[j], (a < b ? a : b));
        MDSD_NEUMAIER_ADD(m[j], mc[j], pos);
        next[x] = pos;
    }
    double total = 0.0, comp = 0.0, mt = 0.0, mcomp = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(total, comp, s[j]);
        comp -= c[j];
        MDSD_NEUMAIER_ADD(mt, mcomp, m[j]);
        mcomp += mc[j];
    }
    *mass = mt + mcomp;
    return total + comp;
}

/* The chain of rrs_prepare, one fused pass per draft and without the alias
 * table: only the overlaps beta_j enter alpha. */
static int rrs_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                     double *alpha, double *per_draft, mdsd_err *err)
{
    (void)opts;
    size_t n = s->n, V = s->V, q_step = s->kind == MDSD_SCHEME_MULTI ? V : 0;
    double *buf = mdsd_vc_malloc(2 * V * sizeof *buf, "rrs", err);
    if (!buf)
        return MDSD_ENOMEM;
    const double *r = p, *qj = s->q;
    double inv = 1.0, reach = 1.0, a = 0.0;
    for (size_t j = 0; j < n; j++, qj += q_step) {
        double *next = buf + (j % 2) * V, mass; /* the last step's residual is unused */
        double beta = rrs_step(r, inv, qj, V, next, &mass);
        per_draft[j] = reach * beta;
        a += per_draft[j];
        reach *= 1.0 - beta;
        if (mass >= DBL_MIN) {
            r = next, inv = 1.0 / mass;
        } else if (mass > 0.0) { /* 1 / mass would overflow */
            mdsd_vc_normalise(next, V, mass);
            r = next, inv = 1.0;
        } else { /* p_j = q: never reached again; p keeps the chain defined */
            r = p, inv = 1.0;
        }
    }
    *alpha = a;
    free(buf);
    return MDSD_OK;
}

/* The law of rrs_verify given the drafts: test j passes with
 * min(1, p_j(x_j)/q_j(x_j)) once tests 1..j-1 failed; then the residual. */
static void rrs_law(const void *state, const int *drafts, double *py)
{
    const rrs_state *st = state;
    double step[MDSD_LAW_MAX_DRAFTS] = {0}, reach = 1.0;
    const double *pj = st->p, *qj = st->q;
    for (size_t j = 0; j < st->n; j++, pj += st->V, qj += st->q_step) {
        double a = mdsd_vc_pass(pj[drafts[j]], qj[drafts[j]]);
        step[j] = reach * a;
        reach *= 1.0 - a;
    }
    mdsd_vc_law_collect(drafts, st->n, step, py);
    if (reach > 0.0)
        for (size_t j = 0; j < st->n; j++)
            py[j] += reach * mdsd_vc_alias_pdf(st->residual, drafts[j]);
}

const mdsd_verifier_ops mdsd_verify_rrs_ops = {
    .name = "rrs",
    .scheme = MDSD_SCHEME_IID,
    .check = rrs_check,
    .prepare = rrs_prepare,
    .verify = rrs_verify,
    .release = rrs_release,
    .exact = rrs_exact,
};

const mdsd_verifier_law_fn mdsd_verify_rrs_law = rrs_law;
