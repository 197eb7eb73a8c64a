/* Importance weighted sampling (Khisti et al.): the weight LP against the
 * optimal acceptance by subset enumeration (Thm 1), the law of the selected
 * token against enumeration of draft tuples, the truncated LP against the
 * full one, the successive pairing for n > 2, and the size guard. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "iws.h"

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

/* alpha* for two independent drafts x_1 ~ q1, x_2 ~ q2: 1 + min_H [p(H) - q1(H) q2(H)]. */
static double alpha_two_subsets(const double *p, const double *q1, const double *q2, size_t V)
{
    double best = 0.0;
    for (unsigned H = 1; H < (1u << V); H++) {
        double pH = 0.0, aH = 0.0, bH = 0.0;
        for (size_t i = 0; i < V; i++)
            if (H >> i & 1)
                pH += p[i], aH += q1[i], bH += q2[i];
        best = fmin(best, pH - aH * bH);
    }
    return 1.0 + best;
}

static mdsd_iws solve(const double *p, const double *q, size_t V, size_t n, size_t top,
                      mdsd_iws_rank rank)
{
    mdsd_iws_opts o = {top, rank, 0, false, 0.0};
    mdsd_iws w;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_iws_solve(p, q, V, n, false, &o, &w, &err);
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
    if (!w->stage[k].pass)
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
    cr_assert_eq(w.stage[0].order[0], 3);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 3, 0), 1.0);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 2, 1), 1.0);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 0, 1), 0.0);
    /* r(3) = q3^2 + 2 q3 (1 - q3); r(0) = q0^2 */
    cr_assert_float_eq(w.r[3], 0.01 + 2 * 0.1 * 0.9, 1e-15);
    cr_assert_float_eq(w.r[0], 0.16, 1e-15);
    check_against_enumeration(&w, p, q);
    mdsd_iws_free(&w);
    w = solve(p, q, 4, 2, 1, MDSD_IWS_RANK_DRAFT);
    cr_assert_eq(w.stage[0].order[0], 0);
    cr_assert_eq(mdsd_iws_keep(&w.stage[0], 1, 3), 1.0);
    mdsd_iws_free(&w);
}

Test(is, successive_pairing_for_more_drafts)
{
    gsl_rng *rng = mdsd_rng_alloc(4003);
    double p[VMAX], q[VMAX];
    unsigned passes = 0;
    for (unsigned t = 0; t < 120; t++) {
        size_t V = 2 + t % 4;
        toy_pair(rng, t / 4, V, p, q);
        double prev = 0.0;
        for (size_t n = 1; n <= 4; n++) {
            int truncated = t % 3 == 2;
            mdsd_iws w = solve(p, q, V, n, truncated ? 2 : 0, MDSD_IWS_RANK_DEFICIT);
            check_against_enumeration(&w, p, q);
            /* keeping u_k is feasible for a full stage LP, and the fallback of
             * a truncated one: acceptance never falls */
            cr_assert_geq(w.accept, prev - 1e-12, "n = %zu: acceptance fell", n);
            passes += truncated && n > 1 && w.stage[n - 2].pass;
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
    cr_log_info("successive pairing: %u truncated stages kept u_k", passes);
    cr_assert_gt(passes, 0, "no truncated stage fell back: that path went untested");
    gsl_rng_free(rng);
}

Test(is, size_guard_is_a_clear_error)
{
    double p[6] = {0.1, 0.1, 0.2, 0.2, 0.2, 0.2}, q[6] = {0.2, 0.2, 0.2, 0.2, 0.1, 0.1};
    mdsd_iws_opts o = {0, MDSD_IWS_RANK_DEFICIT, 10, false, 0.0}; /* 6 free tokens need 21 variables */
    mdsd_iws w;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_iws_solve(p, q, 6, 2, false, &o, &w, &err), MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "21 variables") && strstr(err.msg, "`is_top"), "%s", err.msg);
    cr_assert_null(w.r);
    o.top = 3; /* 6 variables: within the guard */
    cr_assert_eq(mdsd_iws_solve(p, q, 6, 2, false, &o, &w, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(w.lp_vars, 6);
    mdsd_iws_free(&w);
    cr_assert_eq(mdsd_iws_solve(p, q, 6, 0, false, NULL, &w, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "n >= 1"), "%s", err.msg);
}

/* ---- the `is` verifier (verify_is.c), through its ops table ----------- */

#include <gsl/gsl_randist.h>

#include "montecarlo.h"
#include "verifier.h"

#define SIGNIFICANCE 1e-6
#define TRIALS 200000

/* P(y in S(x)) and the per-draft split by enumerating every tuple of D,
 * every selection branch and every residual draw: the slow route for
 * is's exact rates. */
static void enumerate_alpha(const double *p, const mdsd_scheme *s, size_t top, double *per)
{
    size_t V = s->V, n = s->n;
    mdsd_iws w;
    mdsd_iws_opts o = {top, MDSD_IWS_RANK_DEFICIT, 0, false, 0.0};
    cr_assert_eq(mdsd_iws_solve(p, s->q, V, n, s->kind == MDSD_SCHEME_MULTI, &o, &w, NULL),
                 MDSD_OK);
    double res[VMAX], tot = 0.0;
    for (size_t i = 0; i < V; i++)
        tot += res[i] = fmax(p[i] - w.r[i], 0.0);
    mdsd_joint D;
    cr_assert_eq(mdsd_scheme_joint(s, MDSD_JOINT_MAX_TUPLES, &D, NULL), MDSD_OK);
    memset(per, 0, n * sizeof *per);
    for (size_t t = 0; t < D.count; t++) {
        const int *x = D.tokens + t * n;
        double r[VMAX] = {0}, from[4 * VMAX] = {0}; /* law of the selection for this x */
        follow(&w, x, 0, x[0], 0, D.prob[t], r, from);
        for (size_t j = 0; j < n; j++)
            for (size_t u = 0; u < V; u++) {
                double mass = from[j * V + u];
                if (mass == 0.0)
                    continue;
                double acc = fmin(1.0, p[u] / w.r[u]);
                per[j] += mass * acc;
                for (size_t k = 0; k < V && tot > 0.0; k++) { /* residual draw k */
                    size_t first = n;
                    for (size_t l = 0; l < n && first == n; l++)
                        if ((size_t)x[l] == k)
                            first = l;
                    if (first < n)
                        per[first] += mass * (1.0 - acc) * res[k] / tot;
                }
            }
    }
    mdsd_joint_free(&D);
    mdsd_iws_free(&w);
}

/* Runs the verifier on scheme s: output law, acceptance and per-draft rates
 * against the exact ones, which are checked against enumeration first. */
static void check_verifier(const double *p, const mdsd_scheme *s, size_t top, uint64_t seed)
{
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    o.is_top = top;
    mdsd_err err;
    double alpha, per[4], ref[4];
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_IS, p, s, &o, &alpha, per, &err), MDSD_OK,
                 "%s", err.msg);
    enumerate_alpha(p, s, top, ref);
    for (size_t j = 0; j < s->n; j++)
        cr_assert_float_eq(per[j], ref[j], 1e-12, "draft %zu: exact %.15g, enumeration %.15g",
                           j, per[j], ref[j]);
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_IS, p, s, &o, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result mc = test_simulate(v, TRIALS, seed);
    mdsd_gof g = mdsd_mc_check_output(&mc, p);
    cr_log_info("is (%s, n = %zu, top %zu): chi-square p = %.3g, alpha %.5f (exact %.5f)",
                mdsd_scheme_name(s->kind), s->n, top, g.p_value, mc.alpha, alpha);
    cr_assert_gt(g.p_value, SIGNIFICANCE, "is output is not p: chi-square p = %g", g.p_value);
    test_assert_within_5se(mc.alpha, alpha, TRIALS, "acceptance");
    for (size_t j = 0; j < s->n; j++)
        test_assert_within_5se((double)mc.per_draft[j] / TRIALS, per[j], TRIALS, "per-draft rate");
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

static const double P5[5] = {0.30, 0.25, 0.20, 0.15, 0.10};
static const double Q5[5] = {0.05, 0.10, 0.15, 0.30, 0.40};
static const double Q2x5[10] = {0.05, 0.10, 0.15, 0.30, 0.40, 0.05, 0.05, 0.10, 0.30, 0.50};

Test(is_verifier, full_lp_two_drafts_outputs_p_at_alpha_iid)
{
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 5, Q5, NULL};
    check_verifier(P5, &s, 0, 501);
    double alpha, per[2];
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_IS, P5, &s, NULL, &alpha, per, NULL), MDSD_OK);
    cr_assert_float_eq(alpha, alpha_iid_subsets(P5, Q5, 5, 2), 1e-9);
}

Test(is_verifier, truncated_lp_outputs_p) { mdsd_scheme s = {MDSD_SCHEME_IID, 2, 5, Q5, NULL};
                                            check_verifier(P5, &s, 1, 502); }
Test(is_verifier, three_drafts_successive_pairing_outputs_p)
{
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 5, Q5, NULL};
    check_verifier(P5, &s, 0, 503);
}
Test(is_verifier, three_drafts_truncated_outputs_p)
{
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 5, Q5, NULL};
    check_verifier(P5, &s, 1, 505); /* residual draws hit unselected drafts: +0.03 */
}
Test(is_verifier, different_drafters_output_p)
{
    mdsd_scheme s = {MDSD_SCHEME_MULTI, 2, 5, Q2x5, NULL};
    check_verifier(P5, &s, 0, 504);
}

/* Exact rates against enumeration on random instances, where the residual
 * draw hitting the unselected draft matters (truncated LP, n = 3), and the
 * full LP at n = 2, where it must not (Khisti Thm 1 leaves no room). */
Test(is_verifier, exact_rates_match_enumeration_on_random_instances)
{
    gsl_rng *rng = mdsd_rng_alloc(4004);
    double p[VMAX], q[2 * VMAX], alpha, per[4], ref[4];
    double gap = 0.0; /* largest residual-hit share seen */
    unsigned optimal = 0;
    for (unsigned t = 0; t < 150; t++) {
        size_t V = 2 + t % 4, n = 2 + (t % 5 == 4), top = t % 3 == 1 ? 1 + t % 2 : 0;
        toy_pair(rng, t / 4, V, p, q);
        toy_distribution(rng, TOY_DIRICHLET, V, q + V);
        mdsd_scheme s = {t % 7 == 3 ? MDSD_SCHEME_MULTI : MDSD_SCHEME_IID, n, V, q, NULL};
        if (s.kind == MDSD_SCHEME_MULTI)
            s.n = 2;
        mdsd_verifier_opts o;
        mdsd_verifier_opts_init(&o);
        o.is_top = top;
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_IS, p, &s, &o, &alpha, per, &err),
                     MDSD_OK, "%s", err.msg);
        enumerate_alpha(p, &s, top, ref);
        double sum = 0.0;
        for (size_t j = 0; j < s.n; j++) {
            cr_assert_float_eq(per[j], ref[j], 1e-12, "instance %u draft %zu", t, j);
            sum += per[j];
        }
        cr_assert_float_eq(alpha, sum, 1e-15);
        mdsd_iws w;
        mdsd_iws_opts wo = {top, MDSD_IWS_RANK_DEFICIT, 0, false, 0.0};
        mdsd_iws_solve(p, q, V, s.n, s.kind == MDSD_SCHEME_MULTI, &wo, &w, NULL);
        cr_assert_geq(alpha, w.accept - 1e-12);
        gap = fmax(gap, alpha - w.accept);
        if (s.n == 2 && top == 0) { /* optimal (Khisti Thm 1; App. G for two drafters) */
            cr_assert_float_eq(alpha, w.accept, 1e-7, "full LP: the residual hit a draft");
            cr_assert_float_eq(alpha, alpha_two_subsets(p, q, s.kind == MDSD_SCHEME_MULTI ?
                               q + V : q, V), 1e-7, "instance %u: full LP below alpha*", t);
            optimal++;
        }
        mdsd_iws_free(&w);
    }
    cr_log_info("is: largest P(residual draw is an unselected draft) = %.3g", gap);
    cr_assert_gt(optimal, 30);
    gsl_rng_free(rng);
}

/* A planted error: the residual drawn from norm((p - q)+), i.e. forgetting
 * that the selection changed the draft's law to r. The same test rejects it. */
typedef struct {
    mdsd_iws w;
    double p[VMAX];
    gsl_ran_discrete_t *wrong;
} planted_is;

static int planted_prepare(const double *p, const mdsd_scheme *s,
                           const mdsd_verifier_opts *opts, void **state, mdsd_err *err)
{
    (void)opts;
    planted_is *pl = calloc(1, sizeof *pl);
    *state = pl;
    memcpy(pl->p, p, s->V * sizeof *p);
    double res[VMAX];
    for (size_t i = 0; i < s->V; i++)
        res[i] = fmax(p[i] - s->q[i], 0.0);
    pl->wrong = gsl_ran_discrete_preproc(s->V, res);
    return mdsd_iws_solve(p, s->q, s->V, s->n, false, NULL, &pl->w, err);
}

static int planted_verify(const void *state, const int *x, gsl_rng *rng, int *index)
{
    const planted_is *pl = state;
    size_t from;
    int u = mdsd_iws_select(&pl->w, x, rng, &from);
    if (gsl_rng_uniform(rng) < fmin(1.0, pl->p[u] / pl->w.r[u])) {
        *index = (int)from;
        return u;
    }
    *index = -1;
    return (int)gsl_ran_discrete(rng, pl->wrong);
}

static void planted_release(void *state)
{
    planted_is *pl = state;
    gsl_ran_discrete_free(pl->wrong);
    mdsd_iws_free(&pl->w);
    free(pl);
}

static const mdsd_verifier_ops planted_ops = {
    .name = "is-planted", .scheme = MDSD_SCHEME_IID, .prepare = planted_prepare,
    .verify = planted_verify, .release = planted_release,
};

Test(is_verifier, planted_residual_error_is_rejected)
{
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 5, Q5, NULL};
    mdsd_err err;
    mdsd_verifier *v = mdsd_verifier_alloc_ops(&planted_ops, P5, &s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result mc = test_simulate(v, TRIALS, 501);
    double pv = mdsd_mc_check_output(&mc, P5).p_value;
    cr_log_info("is, planted residual error: chi-square p = %.3g", pv);
    cr_assert_lt(pv, SIGNIFICANCE, "the planted error passed (p = %g)", pv);
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

Test(is_verifier, unsupported_schemes_and_big_exact_are_refused)
{
    mdsd_err err;
    mdsd_scheme wor = {MDSD_SCHEME_WOR, 2, 5, Q5, NULL};
    cr_assert_null(mdsd_verifier_alloc(MDSD_VERIFIER_IS, P5, &wor, NULL, &err));
    cr_assert_eq(err.code, MDSD_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "independent") && strstr(err.msg, "wor"), "%s", err.msg);
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 5, Q5, NULL};
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    o.max_tuples = 100; /* 125 tuples */
    double alpha, per[3];
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_IS, P5, &s, &o, &alpha, per, &err),
                 MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "`trials`"), "%s", err.msg);
}

/* ---- `mdsd accept --verifier is` --------------------------------------- */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

Test(is_cli, accept_runs_is_with_is_top)
{
    char *out;
    cr_assert_eq(test_run_mdsd("accept -p 0.3,0.25,0.2,0.15,0.1 -q 0.05,0.1,0.15,0.3,0.4 -n 3 "
                               "--verifier is --is-top 1 --exact --trials 20000 --check-output "
                               "--json", 1, &out), 0, "%s", out);
    cr_assert(strstr(out, "\"verifier\":\"is\"") && strstr(out, "\"output_check\""), "%s", out);
    double alpha, per[3];
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 5, Q5, NULL};
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    o.is_top = 1;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_IS, P5, &s, &o, &alpha, per, NULL), MDSD_OK);
    char want[64];
    snprintf(want, sizeof want, "\"alpha\":%.6f", alpha);
    want[strlen(want) - 1] = '\0'; /* rounding of the last digit */
    cr_assert(strstr(out, want), "expected %s in %s", want, out);
    free(out);
}

/* The full LP over 1100 drawn tokens is above the guard: exit 1 and a
 * message that names the size and the way out. */
Test(is_cli, oversized_full_lp_is_refused_with_the_remedy)
{
    char path[] = "/tmp/mdsd-is-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 1100; i++)
        fprintf(f, "%.17g\n", 1.0 / 1100);
    fclose(f);
    char args[256], *out;
    snprintf(args, sizeof args, "accept -p @%s -q @%s -n 2 --verifier is --exact", path, path);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1, "%s", out);
    cr_assert(strstr(out, "variables") && strstr(out, "--is-top"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "accept -p @%s -q @%s -n 2 --verifier is --is-top 20 --exact",
             path, path);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s", out);
    free(out);
    unlink(path);
}
