/* verify_kseq.c - SpecTr's k-Seq verifier (MATH.md section 3), iid drafts.
 *   beta(rho) = sum_x min(q(x), p(x)/rho); rho* in [1, n] solves
 *   1 - (1 - beta)^n = rho beta (GSL Brent root finding);
 *   accept x_j w.p. min(1, p(x_j)/(rho* q(x_j))) for j = 1..n in turn;
 *   none accepted: y ~ p_res prop. to p - min(q, p/rho*) p_acc / beta,
 *   p_acc = 1 - (1 - beta)^n.
 * The output follows p for every rho >= rho* (then p_res >= 0), so the
 * verifier uses the upper end of the final root bracket: validity does not
 * depend on the solver's tolerance. At rho* the residual vanishes on the
 * tokens a test can reject, so alpha = p_acc (up to the bracket width). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include "simd.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t n, V;
    double *p, *rq;  /* rq = rho * q, so a test is u * rq[x] < p[x] */
    double rho, beta, p_acc;
    gsl_ran_discrete_t *residual;
} kseq_state;

typedef struct {
    const double *p, *q;
    size_t V, n;
} kseq_problem;

/* Kahan's sum in MDSD_LANES lanes (they vectorise; Brent evaluates this
 * ~10-40 times per position), the lanes then added with compensation. */
MDSD_SIMD_CLONES static double beta_sum(const double *p, const double *q, size_t V, double rho)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0};
    size_t x = 0;
    for (; x + MDSD_LANES <= V; x += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double a = p[x + j] / rho, m = q[x + j] < a ? q[x + j] : a;
            double y = m - c[j], t = s[j] + y;
            c[j] = (t - s[j]) - y;
            s[j] = t;
        }
    }
    for (size_t j = 0; x < V; x++, j++) {
        double a = p[x] / rho, m = q[x] < a ? q[x] : a;
        double y = m - c[j], t = s[j] + y;
        c[j] = (t - s[j]) - y;
        s[j] = t;
    }
    double total = 0.0, comp = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(total, comp, s[j]);
        comp -= c[j];
    }
    return total + comp;
}

static double beta_of(const kseq_problem *pr, double rho)
{
    return beta_sum(pr->p, pr->q, pr->V, rho);
}

static double accept_any(double beta, size_t n)
{
    return beta >= 1.0 ? 1.0 : -expm1((double)n * log1p(-beta));
}

static double gap(double rho, void *params)
{
    const kseq_problem *pr = params;
    double b = beta_of(pr, rho);
    return accept_any(b, pr->n) - rho * b;
}

/* rho* by Brent's method on [1, n]; returns the upper end of the bracket
 * (gap <= 0 there, so the residual is non-negative). */
static int solve_rho(const kseq_problem *pr, double *rho, mdsd_err *err)
{
    kseq_problem copy = *pr;
    gsl_function F = {gap, &copy};
    double lo = 1.0, hi = (double)pr->n;
    if (gap(lo, &copy) <= 0.0 || hi <= lo) {
        *rho = lo;
        return MDSD_OK;
    }
    if (gap(hi, &copy) > 0.0) { /* Bernoulli's inequality says <= 0; rounding only */
        *rho = hi;
        return MDSD_OK;
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    int status = s ? gsl_root_fsolver_set(s, &F, lo, hi) : GSL_ENOMEM;
    for (int it = 0; status == GSL_SUCCESS && it < 200; it++) {
        if ((status = gsl_root_fsolver_iterate(s)))
            break;
        lo = gsl_root_fsolver_x_lower(s);
        hi = gsl_root_fsolver_x_upper(s);
        if (gsl_root_test_interval(lo, hi, 0.0, 4 * GSL_DBL_EPSILON) == GSL_SUCCESS)
            break;
    }
    gsl_root_fsolver_free(s);
    gsl_set_error_handler(old);
    if (status != GSL_SUCCESS)
        return mdsd_fail(err, MDSD_ESOLVER, "kseq: root finding for rho* failed: %s",
                         gsl_strerror(status));
    /* Brent keeps a sign change in [lo, hi]; gap decreases in rho. */
    *rho = gap(hi, &copy) <= 0.0 ? hi : (double)pr->n;
    return MDSD_OK;
}

static int kseq_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_IID)
        return mdsd_vc_wrong_scheme("kseq", s, "iid drafts", err);
    return MDSD_OK;
}

static void kseq_release(void *state)
{
    kseq_state *st = state;
    free(st->p);
    free(st->rq);
    if (st->residual)
        gsl_ran_discrete_free(st->residual);
    free(st);
}

/* rho*, beta and p_acc only (the exact form needs no tables). */
static int kseq_solve(const double *p, const mdsd_scheme *s, double *rho, double *beta,
                      double *p_acc, mdsd_err *err)
{
    kseq_problem pr = {p, s->q, s->V, s->n};
    int rc = solve_rho(&pr, rho, err);
    if (rc)
        return rc;
    *beta = beta_of(&pr, *rho);
    *p_acc = accept_any(*beta, s->n);
    return MDSD_OK;
}

static int kseq_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                        void **state, mdsd_err *err)
{
    (void)opts;
    size_t V = s->V;
    kseq_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "kseq: out of memory");
    *state = st;
    st->n = s->n;
    st->V = V;
    int rc = kseq_solve(p, s, &st->rho, &st->beta, &st->p_acc, err);
    if (rc)
        return rc;
    st->p = mdsd_vc_malloc(V * sizeof *st->p, "kseq", err);
    st->rq = mdsd_vc_malloc(V * sizeof *st->rq, "kseq", err);
    double *w = mdsd_vc_malloc(V * sizeof *w, "kseq", err);
    if (!st->p || !st->rq || !w) {
        free(w);
        return MDSD_ENOMEM;
    }
    memcpy(st->p, p, V * sizeof *p);
    double scale = st->beta > 0.0 ? st->p_acc / st->beta : 0.0;
    for (size_t x = 0; x < V; x++) {
        st->rq[x] = st->rho * s->q[x];
        double a = p[x] / st->rho, m = s->q[x] < a ? s->q[x] : a;
        w[x] = p[x] - m * scale;
        if (w[x] < 0.0) /* rounding only: rho >= rho* makes it >= 0 */
            w[x] = 0.0;
    }
    st->residual = mdsd_vc_alias(w, p, V, "kseq", err);
    free(w);
    return st->residual ? MDSD_OK : MDSD_ENOMEM;
}

static int kseq_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const kseq_state *st = state;
    for (size_t j = 0; j < st->n; j++) {
        int x = drafts[j];
        if (gsl_rng_uniform(rng) * st->rq[x] < st->p[x]) {
            *accepted_index = (int)j;
            return x;
        }
    }
    return (int)gsl_ran_discrete(rng, st->residual);
}

static int kseq_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                      double *alpha, double *per_draft, mdsd_err *err)
{
    (void)opts;
    double rho, beta, p_acc;
    int rc = kseq_solve(p, s, &rho, &beta, &p_acc, err);
    if (rc)
        return rc;
    double reach = 1.0;
    for (size_t j = 0; j < s->n; j++) {
        per_draft[j] = reach * beta;
        reach *= 1.0 - beta;
    }
    *alpha = p_acc;
    return MDSD_OK;
}

const mdsd_verifier_ops mdsd_verify_kseq_ops = {
    .name = "kseq",
    .scheme = MDSD_SCHEME_IID,
    .check = kseq_check,
    .prepare = kseq_prepare,
    .verify = kseq_verify,
    .release = kseq_release,
    .exact = kseq_exact,
};
