/* verify_kseq.c - SpecTr's k-Seq verifier (MATH.md §3.5), iid drafts.
 *   beta(rho) = sum_x min(q(x), p(x)/rho); rho* in [1, n] solves
 *   1 - (1 - beta)^n = rho beta (bracketed Newton, solve_rho);
 *   accept x_j w.p. min(1, p(x_j)/(rho* q(x_j))) for j = 1..n in turn;
 *   none accepted: y ~ p_res prop. to p - min(q, p/rho*) p_acc / beta,
 *   p_acc = 1 - (1 - beta)^n.
 * The output follows p for every rho >= rho* (then p_res >= 0), so the
 * verifier uses the upper end of the final root bracket: validity does not
 * depend on the solver's tolerance. At rho* the residual vanishes on the
 * tokens a test can reject, so alpha = p_acc (up to the bracket width). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t n, V;
    double *p, *rq;  /* rq = rho * q, so a test is u * rq[x] < p[x] */
    double rho, beta, p_acc;
    gsl_ran_discrete_t *residual;
} kseq_state;

/* beta(rho) = const_q + const_p / rho + sum over the tokens still in play
 * (p, q)[0..m) of min(q, p/rho): tokens with p/q >= hi of the root's bracket
 * give q, those with p/q <= lo give p/rho for every rho in it, so once the
 * bracket is narrow they leave the loop (compact) and each evaluation of
 * beta costs the few tokens whose p/q lies inside the bracket. */
typedef struct {
    const double *p, *q;  /* [m] the tokens in play */
    size_t m, V, n;
    double const_q, const_qc, const_p, const_pc; /* compensated sums */
    double *buf;          /* [2 V] p, q of the tokens in play once compacted */
} kseq_problem;

/* beta(rho) = sum_x min(q(x), p(x)/rho) by Kahan's sum in MDSD_LANES lanes
 * (they vectorise), the lanes then added with compensation; *active gets
 * sum of p over the tokens with p/rho < q, so that beta'(rho) = -active/rho^2.
 * p/rho is taken as p * (1/rho) (within an ulp; a vector division would
 * cost more than the rest of the loop). */
MDSD_SIMD_CLONES static double beta_sum(const double *p, const double *q, size_t V, double rho,
                                        double *active)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0}, act[MDSD_LANES] = {0}, inv = 1.0 / rho;
    size_t x = 0;
    for (; x + MDSD_LANES <= V; x += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double a = p[x + j] * inv, m = q[x + j] < a ? q[x + j] : a;
            MDSD_KAHAN_ADD(s[j], c[j], m);
            act[j] += a < q[x + j] ? p[x + j] : 0.0;
        }
    }
    for (size_t j = 0; x < V; x++, j++) {
        double a = p[x] * inv, m = q[x] < a ? q[x] : a;
        MDSD_KAHAN_ADD(s[j], c[j], m);
        act[j] += a < q[x] ? p[x] : 0.0;
    }
    double total = 0.0, comp = 0.0, sum_act = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(total, comp, s[j]);
        comp -= c[j];
        sum_act += act[j];
    }
    *active = sum_act;
    return total + comp;
}

static double accept_any(double beta, size_t n)
{
    return beta >= 1.0 ? 1.0 : -expm1((double)n * log1p(-beta));
}

/* gap(rho) = 1 - (1 - beta)^n - rho beta, decreasing in rho, and its
 * derivative; *beta gets beta(rho). */
static double gap(const kseq_problem *pr, double rho, double *beta, double *slope)
{
    double active, b = beta_sum(pr->p, pr->q, pr->m, rho, &active);
    b = (pr->const_q + pr->const_qc) + ((pr->const_p + pr->const_pc) / rho + b);
    active += pr->const_p + pr->const_pc;
    double db = -active / (rho * rho);
    double dA = b >= 1.0 ? 0.0 : (double)pr->n * pow(1.0 - b, (double)pr->n - 1.0);
    *beta = b;
    *slope = db * (dA - rho) - b;
    return accept_any(b, pr->n) - rho * b;
}

/* The settled masses of compact: sum of q over p >= hi q and of p over
 * p <= lo q, by Kahan's sum in MDSD_LANES lanes (they vectorise). */
MDSD_SIMD_CLONES static void settled_sums(const double *p, const double *q, size_t m, double lo,
                                          double hi, double *sum_q, double *sum_p)
{
    double a[MDSD_LANES] = {0}, ac[MDSD_LANES] = {0}, b[MDSD_LANES] = {0}, bc[MDSD_LANES] = {0};
    size_t x = 0;
    for (; x + MDSD_LANES <= m; x += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double px = p[x + j], qx = q[x + j];
            MDSD_KAHAN_ADD(a[j], ac[j], (px >= hi * qx ? qx : 0.0));
            MDSD_KAHAN_ADD(b[j], bc[j], (px <= lo * qx ? px : 0.0));
        }
    }
    for (size_t j = 0; x < m; x++, j++) {
        double px = p[x], qx = q[x];
        MDSD_KAHAN_ADD(a[j], ac[j], (px >= hi * qx ? qx : 0.0));
        MDSD_KAHAN_ADD(b[j], bc[j], (px <= lo * qx ? px : 0.0));
    }
    double sa = 0.0, sac = 0.0, sb = 0.0, sbc = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(sa, sac, a[j]);
        sac -= ac[j];
        MDSD_NEUMAIER_ADD(sb, sbc, b[j]);
        sbc -= bc[j];
    }
    *sum_q = sa + sac;
    *sum_p = sb + sbc;
}

/* Moves the tokens whose min(q, p/rho) no longer depends on where rho lies
 * in [lo, hi] into the constants (classified by p >= hi q and p <= lo q,
 * which agree with p/q up to an ulp at the bracket's ends). The copy is
 * branch-free (every token written, the index advanced for those kept), and
 * may run in place. */
static void compact(kseq_problem *pr, double lo, double hi)
{
    double sq, sp;
    settled_sums(pr->p, pr->q, pr->m, lo, hi, &sq, &sp);
    MDSD_NEUMAIER_ADD(pr->const_q, pr->const_qc, sq);
    MDSD_NEUMAIER_ADD(pr->const_p, pr->const_pc, sp);
    double *bp = pr->buf, *bq = pr->buf + pr->V;
    size_t k = 0;
    for (size_t x = 0; x < pr->m; x++) {
        double p = pr->p[x], q = pr->q[x];
        bp[k] = p, bq[k] = q;
        k += !(p >= hi * q) & !(p <= lo * q);
    }
    pr->p = bp, pr->q = bq, pr->m = k;
}

/* rho* in [1, n] by Newton's method kept inside a bracket [lo, hi] with
 * gap(lo) > 0 >= gap(hi), bisecting where a step leaves it or stalls (as
 * Numerical Recipes' rtsafe), until hi - lo <= 4 eps lo - the test GSL's
 * Brent solver used here before, at a third of its evaluations of beta
 * (GSL's own derivative solvers keep no bracket, which validity needs).
 * Returns the upper end hi (gap <= 0 there, so the residual is
 * non-negative) and *beta = beta(hi). */
static int solve_rho(kseq_problem *pr, double *rho, double *beta, mdsd_err *err)
{
    double lo = 1.0, hi = (double)pr->n, b, d;
    double g = gap(pr, lo, &b, &d);
    if (g <= 0.0 || hi <= lo) {
        *rho = lo, *beta = b;
        return MDSD_OK;
    }
    double g_lo = g, b_hi, g_hi = gap(pr, hi, &b_hi, &d);
    if (g_hi > 0.0) { /* Bernoulli's inequality says <= 0; rounding only */
        *rho = hi, *beta = b_hi;
        return MDSD_OK;
    }
    /* start at the secant point of the bracket */
    double x = lo + (hi - lo) * (g_lo / (g_lo - g_hi)), step_old = hi - lo, probe = 2 * DBL_EPSILON;
    double width = hi - lo;
    if (!(x > lo && x < hi))
        x = 0.5 * (lo + hi);
    for (int it = 0; it < 200; it++) {
        double gx = gap(pr, x, &b, &d);
        if (gx > 0.0) {
            lo = x;
        } else {
            hi = x;
            b_hi = b;
        }
        if (hi - lo <= 4 * DBL_EPSILON * lo) {
            *rho = hi, *beta = b_hi;
            return MDSD_OK;
        }
        if (pr->buf && hi - lo < 0.25 * width) { /* the bracket narrowed: drop settled tokens */
            compact(pr, lo, hi);
            width = hi - lo;
        }
        double newton = x - gx / d, next;
        if (fabs(newton - x) <= probe * x) {
            /* converged to the resolution: probe across the root, further
             * each time the probe lands on the same side */
            next = gx > 0.0 ? x * (1 + probe) : x * (1 - probe);
            probe *= 2;
        } else if (!(newton > lo && newton < hi) || fabs(newton - x) > 0.5 * step_old) {
            next = 0.5 * (lo + hi); /* Newton leaves the bracket or is slow */
        } else {
            next = newton;
        }
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        step_old = fabs(next - x);
        x = next;
    }
    return mdsd_fail(err, MDSD_ESOLVER, "kseq: root finding for rho* did not converge "
                     "(bracket [%.17g, %.17g])", lo, hi);
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
    kseq_problem pr = {p, s->q, s->V, s->V, s->n, 0.0, 0.0, 0.0, 0.0, NULL};
    pr.buf = malloc(2 * s->V * sizeof *pr.buf); /* without it: full passes, same root */
    int rc = solve_rho(&pr, rho, beta, err);
    free(pr.buf);
    if (rc)
        return rc;
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

/* The law of kseq_verify given the drafts: each test passes with
 * min(1, p/(rho q)) in turn; then the residual. */
static void kseq_law(const void *state, const int *drafts, double *py)
{
    const kseq_state *st = state;
    double step[MDSD_LAW_MAX_DRAFTS] = {0}, reach = 1.0;
    for (size_t j = 0; j < st->n; j++) {
        double a = mdsd_vc_pass(st->p[drafts[j]], st->rq[drafts[j]]);
        step[j] = reach * a;
        reach *= 1.0 - a;
    }
    mdsd_vc_law_collect(drafts, st->n, step, py);
    if (reach > 0.0)
        for (size_t j = 0; j < st->n; j++)
            py[j] += reach * mdsd_vc_alias_pdf(st->residual, drafts[j]);
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

const mdsd_verifier_law_fn mdsd_verify_kseq_law = kseq_law;
