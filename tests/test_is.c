/* Importance weighted sampling (Khisti et al.): the weight LP against the
 * optimal acceptance by subset enumeration (Thm 1), the law of the selected
 * token against enumeration of draft tuples, the truncated LP against the
 * full one, the successive pairing for n > 2, and the size guard. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "../src/iws.h"

#define VMAX 6

/* alpha*_iid = 1 + min_H [p(H) - q(H)^n] over all 2^V subsets (Hu et al.;
 * for n = 2 Khisti Thm 3): a route independent of any LP. */
static double alpha_iid_subsets(const double *p, const double *q, size_t V, size_t n)
{
    double best = 0.0;
    for (unsigned H = 1; H < (1u << V); H++) {
        double pH = 0.0, qH = 0.0;
        for (size_t i = 0; i < V; i++)
            if (H >> i & 1)
                pH += p[i], qH += q[i];
        best = fmin(best, pH - pow(qH, (double)n));
    }
    return 1.0 + best;
}

static mdsd_iws solve(const double *p, const double *q, size_t V, size_t n, size_t top,
                      mdsd_iws_rank rank)
{
    mdsd_iws_opts o = {top, rank, 0};
    mdsd_iws w;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_iws_solve(p, q, V, n, &o, &w, &err);
    cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
    return w;
}

/* Adds the law of (selected token, source draft) of tuple x from stage k on,
 * the current pick being u from draft `at`, by following both branches. */
static void follow(const mdsd_iws *w, const int *x, size_t k, int u, size_t at, double prob,
                   double *r, double *from)
{
    if (prob == 0.0)
        return;
    if (k == w->stages) {
        r[u] += prob;
        from[at * w->V + (size_t)u] += prob;
        return;
    }
    int v = x[k + 1];
    if (v == u) {
        follow(w, x, k + 1, u, at, prob, r, from);
        return;
    }
    double keep = mdsd_iws_keep(&w->stage[k], u, v);
    cr_assert(keep >= 0.0 && keep <= 1.0);
    cr_assert_float_eq(keep + mdsd_iws_keep(&w->stage[k], v, u), 1.0, 1e-15);
    follow(w, x, k + 1, u, at, prob * keep, r, from);
    follow(w, x, k + 1, v, k + 1, prob * (1.0 - keep), r, from);
}

/* The selected token's law by enumeration of all V^n draft tuples, checked
 * against the module's r, its split by draft, and its acceptance. */
static void check_against_enumeration(const mdsd_iws *w, const double *p, const double *q)
{
    size_t V = w->V, n = w->n, total = 1;
    for (size_t j = 0; j < n; j++)
        total *= V;
    double r[VMAX] = {0}, from[4 * VMAX] = {0};
    int x[4];
    for (size_t t = 0; t < total; t++) {
        double prob = 1.0;
        for (size_t j = 0, c = t; j < n; j++, c /= V)
            x[j] = (int)(c % V), prob *= q[x[j]];
        follow(w, x, 0, x[0], 0, prob, r, from);
    }
    double acc = 0.0, per[4], per_sum = 0.0;
    for (size_t i = 0; i < V; i++) {
        cr_assert_float_eq(w->r[i], r[i], 1e-12, "r(%zu) = %.15g, enumeration %.15g", i,
                           w->r[i], r[i]);
        for (size_t j = 0; j < n; j++)
            cr_assert_float_eq(w->from[j * V + i], from[j * V + i], 1e-12);
        acc += fmin(p[i], r[i]);
    }
    cr_assert_float_eq(w->accept, acc, 1e-12);
    mdsd_iws_per_draft(w, p, per);
    for (size_t j = 0; j < n; j++)
        per_sum += per[j];
    cr_assert_float_eq(per_sum, w->accept, 1e-12);
}

Test(is, full_lp_attains_alpha_iid_khisti_thm1)
{
    gsl_rng *rng = mdsd_rng_alloc(4001);
    double p[VMAX], q[VMAX], worst = 0.0;
    for (unsigned t = 0; t < 300; t++) {
        size_t V = 2 + t % (VMAX - 1);
        toy_pair(rng, t / (VMAX - 1), V, p, q);
        double ref = alpha_iid_subsets(p, q, V, 2);
        for (int rank = 0; rank < 2; rank++) {
            mdsd_iws w = solve(p, q, V, 2, 0, (mdsd_iws_rank)rank);
            check_against_enumeration(&w, p, q);
            worst = fmax(worst, fabs(w.accept - ref));
            cr_assert_float_eq(w.accept, ref, 1e-7, "instance %u (V = %zu): LP %.12g, "
                               "subsets %.12g", t, V, w.accept, ref);
            mdsd_iws_free(&w);
        }
    }
    cr_log_info("IWS full LP vs subset enumeration: worst |diff| = %.3g", worst);
    gsl_rng_free(rng);
}

Test(is, truncated_lp_is_below_full_and_equal_with_every_token_free)
{
    gsl_rng *rng = mdsd_rng_alloc(4002);
    double p[VMAX], q[VMAX];
    for (unsigned t = 0; t < 200; t++) {
        size_t V = 3 + t % (VMAX - 2);
        toy_pair(rng, t / (VMAX - 2), V, p, q);
        for (int rank = 0; rank < 2; rank++) {
            mdsd_iws full = solve(p, q, V, 2, 0, (mdsd_iws_rank)rank);
            for (size_t s = 1; s <= V; s++) {
                mdsd_iws tr = solve(p, q, V, 2, s, (mdsd_iws_rank)rank);
                check_against_enumeration(&tr, p, q);
                cr_assert_leq(tr.accept, full.accept + 1e-9, "s = %zu: truncated %.12g > full "
                              "%.12g", s, tr.accept, full.accept);
                if (s == V)
                    cr_assert_float_eq(tr.accept, full.accept, 1e-9);
                mdsd_iws_free(&tr);
            }
            mdsd_iws_free(&full);
        }
    }
    gsl_rng_free(rng);
}

/* With one free token every weight is fixed: check the fixed rule itself
 * (Omega_1 wins, earlier wins in Omega_2, deficit order) on a hand instance. */
Test(is, fixed_rule_follows_the_deficit_order)
{
    const double p[4] = {0.1, 0.2, 0.3, 0.4}, q[4] = {0.4, 0.3, 0.2, 0.1};
    /* deficits p - q^2: -0.06, 0.11, 0.26, 0.39: order 3, 2, 1, 0 */
    mdsd_iws w = solve(p, q, 4, 2, 1, MDSD_IWS_RANK_DEFICIT);
    cr_assert_eq(w.stage[0].s, 1);
    cr_assert_eq(w.stage[0].top[0], 3);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 3, 0), 1.0);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 2, 1), 1.0);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 0, 1), 0.0);
    /* r(3) = q3^2 + 2 q3 (1 - q3); r(0) = q0^2 */
    cr_assert_float_eq(w.r[3], 0.01 + 2 * 0.1 * 0.9, 1e-15);
    cr_assert_float_eq(w.r[0], 0.16, 1e-15);
    check_against_enumeration(&w, p, q);
    mdsd_iws_free(&w);
    w = solve(p, q, 4, 2, 1, MDSD_IWS_RANK_DRAFT);
    cr_assert_eq(w.stage[0].top[0], 0);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 1, 3), 1.0);
    mdsd_iws_free(&w);
}

Test(is, successive_pairing_for_more_drafts)
{
    gsl_rng *rng = mdsd_rng_alloc(4003);
    double p[VMAX], q[VMAX];
    for (unsigned t = 0; t < 120; t++) {
        size_t V = 2 + t % 4;
        toy_pair(rng, t / 4, V, p, q);
        double prev = 0.0;
        for (size_t n = 1; n <= 4; n++) {
            int truncated = t % 3 == 2;
            mdsd_iws w = solve(p, q, V, n, truncated ? 2 : 0, MDSD_IWS_RANK_DEFICIT);
            check_against_enumeration(&w, p, q);
            /* full stage LPs can always keep u_k: acceptance never falls. The
             * truncated ones cannot (their fixed rule may lose to keeping). */
            if (!truncated)
                cr_assert_geq(w.accept, prev - 1e-9, "n = %zu: acceptance fell", n);
            cr_assert_leq(w.accept, alpha_iid_subsets(p, q, V, n) + 1e-9,
                          "n = %zu: above alpha*_iid", n);
            if (n == 1) { /* no stage: plain speculative sampling, sum min(p, q) */
                double sd = 0.0;
                for (size_t i = 0; i < V; i++)
                    sd += fmin(p[i], q[i]);
                cr_assert_float_eq(w.accept, sd, 1e-12);
            }
            prev = w.accept;
            mdsd_iws_free(&w);
        }
    }
    gsl_rng_free(rng);
}

Test(is, size_guard_is_a_clear_error)
{
    double p[6] = {0.1, 0.1, 0.2, 0.2, 0.2, 0.2}, q[6] = {0.2, 0.2, 0.2, 0.2, 0.1, 0.1};
    mdsd_iws_opts o = {0, MDSD_IWS_RANK_DEFICIT, 10}; /* 6 free tokens need 21 variables */
    mdsd_iws w;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_iws_solve(p, q, 6, 2, &o, &w, &err), MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "21 variables") && strstr(err.msg, "--is-top"), "%s", err.msg);
    cr_assert_null(w.r);
    o.top = 3; /* 6 variables: within the guard */
    cr_assert_eq(mdsd_iws_solve(p, q, 6, 2, &o, &w, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(w.lp_vars, 6);
    mdsd_iws_free(&w);
    cr_assert_eq(mdsd_iws_solve(p, q, 6, 0, NULL, &w, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "n >= 1"), "%s", err.msg);
}
