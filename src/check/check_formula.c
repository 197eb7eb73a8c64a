/* check_formula.c - checks of the set function Q(H) = P(all drafts in H)
 * behind the sort-and-scan algorithm, and of the draft schemes' published
 * comparisons:
 *   hu-Q-cps      Hu et al.'s generating function W_{n,H}/W_{n,all} is exactly
 *                 Q(H) for the conditional-Poisson scheme (must hold);
 *   wor-Q-exact   the exact sequential wor Q(H) (wor_q.h) against enumeration;
 *   hu-Q-wor      the same generating function against sequential sampling
 *                 without replacement, as Hu et al. use it (a finding);
 *   hu-alpha-wor  the alpha* it gives for wor against the true one (finding);
 *   wor-ge-iid    Hu et al.'s empirical claim alpha*(wor) >= alpha*(iid). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_impl.h"

typedef int (*q_fn)(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
                    mdsd_err *err);

/* n in [lo, min(4, |supp q|)] for a scheme of distinct drafts; 0 if none. */
static size_t distinct_n(mdsd_check_ctx *c, size_t lo)
{
    size_t supp = 0;
    for (size_t x = 0; x < c->V; x++)
        supp += c->q[x] > 0.0;
    size_t hi = supp < 4 ? supp : 4;
    return hi < lo ? 0 : chk_int(c, lo, hi);
}

/* Largest |Q_enum(H) - f(H)| over all H for scheme `kind` (enumerated D). */
static int q_against(mdsd_check_ctx *c, mdsd_scheme_kind kind, size_t n, q_fn f, double *worst,
                     unsigned long *worst_H, double *Qe_w, double *Qf_w, mdsd_err *err)
{
    mdsd_scheme s;
    if (!chk_scheme(c, kind, n, &s))
        return MDSD_CHECK_NA;
    mdsd_joint D;
    int rc = mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &D, err);
    if (rc)
        return rc;
    unsigned char in_H[64];
    *worst = -1.0;
    for (unsigned long H = 0; H < (1ul << c->V) && rc == MDSD_OK; H++) {
        for (size_t x = 0; x < c->V; x++)
            in_H[x] = H >> x & 1;
        double Qe = mdsd_joint_Q(&D, in_H), Qf;
        if ((rc = f(c->q, c->V, n, in_H, &Qf, err)))
            break;
        double d = fabs(Qe - Qf);
        if (isnan(d))
            d = INFINITY;
        if (d > *worst)
            *worst = d, *worst_H = H, *Qe_w = Qe, *Qf_w = Qf;
    }
    mdsd_joint_free(&D);
    return rc;
}

static int q_check(mdsd_check_ctx *c, mdsd_scheme_kind kind, size_t n_lo, q_fn f, const char *fname,
                   mdsd_err *err)
{
    size_t n = distinct_n(c, n_lo);
    if (n == 0 || !f)
        return f ? MDSD_CHECK_NA : mdsd_fail(err, MDSD_EUNSUPPORTED, "no %s in the environment", fname);
    double worst, Qe = NAN, Qf = NAN;
    unsigned long H = 0;
    int rc = q_against(c, kind, n, f, &worst, &H, &Qe, &Qf, err);
    if (rc)
        return rc;
    c->acc[0] += worst;
    c->cnt[0] += worst > c->def->tol;
    chk_record(c, n, worst, "n = %zu, H = mask %#lx: Q(H) of the enumerated %s joint %.17g, %s %.17g",
               n, H, mdsd_scheme_name(kind), Qe, fname, Qf);
    return MDSD_OK;
}

static int run_q_cps(mdsd_check_ctx *c, mdsd_err *err)
{
    return q_check(c, MDSD_SCHEME_CPS, 1, c->env->cps_Q, "Hu's W_{n,H}/W_{n,all}", err);
}

static int run_q_wor_exact(mdsd_check_ctx *c, mdsd_err *err)
{
    return q_check(c, MDSD_SCHEME_WOR, 1, c->env->wor_Q, "exact wor Q (wor_q.h)", err);
}

static int run_q_wor_hu(mdsd_check_ctx *c, mdsd_err *err)
{
    return q_check(c, MDSD_SCHEME_WOR, 2, c->env->cps_Q, "Hu's W_{n,H}/W_{n,all}", err);
}

static void sum_q(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "largest |dQ| above %.0e on %zu of %zu instances; mean largest |dQ| %.3g",
             c->def->tol, c->cnt[0], c->res->instances, c->acc[0] / (double)c->res->instances);
}

/* alpha* from Hu et al.'s wor algorithm (sort and scan with their Q, i.e. the
 * cps scheme's alpha*) against the true alpha*(wor) by brute force. */
static int run_alpha_wor_hu(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = distinct_n(c, 2);
    mdsd_scheme w, k;
    if (n == 0 || !chk_scheme(c, MDSD_SCHEME_WOR, n, &w) || !chk_scheme(c, MDSD_SCHEME_CPS, n, &k))
        return MDSD_CHECK_NA;
    double aw, ah;
    int rc = chk_alpha(c, &w, MDSD_BOUND_BRUTE, &aw, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &k, MDSD_BOUND_SORT, &ah, err);
    if (rc)
        return rc;
    double d = fabs(ah - aw);
    c->acc[0] += d;
    c->cnt[0] += d > c->def->tol;
    c->cnt[1] += ah > aw + c->def->tol;
    chk_record(c, n, d, "n = %zu: Hu's wor algorithm %.17g, true alpha*(wor) %.17g", n, ah, aw);
    return MDSD_OK;
}

static void sum_alpha_wor_hu(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "|alpha*(Hu) - alpha*(wor)| > %.0e on %zu of %zu instances (Hu's value higher "
             "on %zu); mean |difference| %.3g", c->def->tol, c->cnt[0], c->res->instances, c->cnt[1],
             c->acc[0] / (double)c->res->instances);
}

/* Hu et al. (abstract, sec. 6): sampling without replacement beats sampling
 * with replacement. Exact alpha* of both by sort and scan. */
static int run_wor_ge_iid(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = distinct_n(c, 2);
    mdsd_scheme w, i;
    if (n == 0 || !chk_scheme(c, MDSD_SCHEME_WOR, n, &w))
        return MDSD_CHECK_NA;
    chk_scheme(c, MDSD_SCHEME_IID, n, &i);
    double aw, ai;
    int rc = chk_alpha(c, &w, MDSD_BOUND_SORT, &aw, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &i, MDSD_BOUND_SORT, &ai, err);
    if (rc)
        return rc;
    c->acc[0] += aw - ai;
    c->acc[1] = fmax(c->acc[1], aw - ai);
    chk_record(c, n, fmax(0.0, ai - aw), "n = %zu: alpha*(iid) %.17g > alpha*(wor) %.17g", n, ai, aw);
    return MDSD_OK;
}

static void sum_wor_ge_iid(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "alpha*(iid) > alpha*(wor) + %.0e on %zu of %zu instances; mean "
             "alpha*(wor) - alpha*(iid) %.4f, largest %.4f", c->def->tol, c->res->counterexamples,
             c->res->instances, c->acc[0] / (double)c->res->instances, c->acc[1]);
}

const mdsd_check mdsd_checks_formula[] = {
    {"hu-Q-cps", "Hu et al. (ICLR 2025) sec. 4.2.2 (generating function W_{n,H})",
     "W_{n,H}/W_{n,all} = Q(H) of the conditional-Poisson scheme (enumerated), every H, n = 1..4",
     "max |dQ|", true, false, 1e-12, FAM_ALL, 2, 7, NULL, run_q_cps, sum_q},
    {"wor-Q-exact", "MATH.md sec. 2 (exponential clocks); Hu et al. eq. 6 (wor)",
     "the exact wor Q(H) (wor_q.h) = Q(H) of the enumerated wor joint, every H, n = 1..4",
     "max |dQ|", true, false, 1e-12, FAM_ALL, 2, 7, NULL, run_q_wor_exact, sum_q},
    {"hu-Q-wor", "Hu et al. (ICLR 2025) sec. 4.2.2, used for sampling without replacement",
     "W_{n,H}/W_{n,all} = Q(H) of sequential sampling without replacement, n = 2..4 (published formula under test)",
     "max |dQ|", false, false, 1e-12, FAM_ALL, 2, 7, NULL, run_q_wor_hu, sum_q},
    {"hu-alpha-wor", "Hu et al. (ICLR 2025) sec. 4.2.2 (algorithm for wor)",
     "sort and scan with W_{n,H}/W_{n,all} gives alpha*(wor) (brute force), n = 2..4",
     "max |alpha*(Hu) - alpha*(wor)|", false, false, 1e-9, FAM_ALL, 2, 7, NULL, run_alpha_wor_hu,
     sum_alpha_wor_hu},
    {"wor-ge-iid", "Hu et al. (ICLR 2025) abstract and sec. 6 (empirical claim)",
     "alpha*(wor) >= alpha*(iid), n = 2..4",
     "max alpha*(iid) - alpha*(wor)", false, false, 1e-12, FAM_ALL, 2, 10, NULL, run_wor_ge_iid,
     sum_wor_ge_iid},
};
const size_t mdsd_checks_formula_count = sizeof mdsd_checks_formula / sizeof *mdsd_checks_formula;
