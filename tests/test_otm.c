/* The optimal verifier `otm` (verify_otm.c): its exact acceptance is alpha*
 * by subset enumeration (an LP-free route) for every draft scheme, the
 * simulated acceptance and per-draft rates agree with the exact ones, the
 * output follows p (chi-square, with a planted error rejected by the same
 * test), and the size guards refuse big instances with a clear error. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "montecarlo.h"
#include "verifier.h"

#define SIGNIFICANCE 1e-6
#define TRIALS 200000
#define VMAX 5
#define NMAX 3

static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR, MDSD_SCHEME_GREEDY,
                                         MDSD_SCHEME_HUB, MDSD_SCHEME_CPS, MDSD_SCHEME_MULTI};

Test(otm, exact_acceptance_is_alpha_star_for_every_scheme)
{
    gsl_rng *r = mdsd_rng_alloc(6001);
    double p[VMAX], q[NMAX * VMAX], worst = 0.0;
    unsigned tried = 0;
    for (unsigned t = 0; t < 300; t++) {
        size_t V = 2 + t % (VMAX - 1), n = 2 + t % 2;
        mdsd_scheme_kind kind = kinds[t % 6];
        if (kind == MDSD_SCHEME_HUB)
            n = 2;
        toy_pair(r, t / 6, V, p, q);
        for (size_t j = 1; j < n; j++)
            toy_distribution(r, TOY_DIRICHLET, V, q + j * V);
        mdsd_scheme s = {kind, n, V, q, NULL};
        if (mdsd_verifier_check(MDSD_VERIFIER_OTM, &s, NULL) != MDSD_OK)
            continue; /* e.g. wor with n above the support of q */
        tried++;
        double alpha, per[NMAX], star = test_alpha_star(p, &s), total = 0.0;
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OTM, p, &s, NULL, &alpha, per, &err),
                     MDSD_OK, "%s", err.msg);
        cr_assert_float_eq(alpha, star, 1e-7, "%s, V = %zu, n = %zu: otm %.12g, alpha* %.12g",
                           mdsd_scheme_name(kind), V, n, alpha, star);
        worst = fmax(worst, fabs(alpha - star));
        for (size_t j = 0; j < n; j++)
            total += per[j];
        cr_assert_float_eq(total, alpha, 1e-12);
    }
    cr_assert_gt(tried, 200);
    cr_log_info("otm exact vs alpha* by subsets: %u instances, worst |diff| = %.3g", tried, worst);
    gsl_rng_free(r);
}

static void check_simulation(const double *p, const mdsd_scheme *s, uint64_t seed)
{
    double alpha, per[NMAX];
    mdsd_err err;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OTM, p, s, NULL, &alpha, per, &err), MDSD_OK,
                 "%s", err.msg);
    cr_assert_float_eq(alpha, test_alpha_star(p, s), 1e-7);
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_OTM, p, s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result mc = test_simulate(v, TRIALS, seed);
    mdsd_gof g = mdsd_mc_check_output(&mc, p);
    cr_log_info("otm (%s, n = %zu): chi-square p = %.3g, alpha %.5f (alpha* %.5f)",
                mdsd_scheme_name(s->kind), s->n, g.p_value, mc.alpha, alpha);
    cr_assert_gt(g.p_value, SIGNIFICANCE, "otm output is not p (p = %g)", g.p_value);
    test_assert_within_5se(mc.alpha, alpha, TRIALS, "acceptance");
    for (size_t j = 0; j < s->n; j++)
        test_assert_within_5se((double)mc.per_draft[j] / TRIALS, per[j], TRIALS, "per-draft rate");
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

static const double P5[5] = {0.30, 0.25, 0.20, 0.15, 0.10};
static const double Q5[5] = {0.05, 0.10, 0.15, 0.30, 0.40};
static const double Q3x5[15] = {0.05, 0.10, 0.15, 0.30, 0.40, 0.05, 0.05, 0.10, 0.30, 0.50,
                                0.10, 0.10, 0.10, 0.20, 0.50};

Test(otm, iid_outputs_p_at_alpha_star) { mdsd_scheme s = {MDSD_SCHEME_IID, 3, 5, Q5, NULL};
                                         check_simulation(P5, &s, 61); }
Test(otm, wor_outputs_p_at_alpha_star) { mdsd_scheme s = {MDSD_SCHEME_WOR, 2, 5, Q5, NULL};
                                         check_simulation(P5, &s, 62); }
Test(otm, multi_outputs_p_at_alpha_star) { mdsd_scheme s = {MDSD_SCHEME_MULTI, 3, 5, Q3x5, NULL};
                                           check_simulation(P5, &s, 63); }
Test(otm, hub_outputs_p_at_alpha_star) { mdsd_scheme s = {MDSD_SCHEME_HUB, 2, 5, Q5, NULL};
                                         check_simulation(P5, &s, 64); }

/* Planted error: the tuple looked up with its drafts in the wrong order, so
 * y ~ pi*(y | (x_2, x_1)). Under the hub scheme D is not symmetric, and the
 * output test must notice. Built on the real verifier's ops. */
static int reversed_verify(const void *state, const int *x, gsl_rng *rng, int *index)
{
    int rev[2] = {x[1], x[0]};
    return mdsd_verify_otm_ops.verify(state, rev, rng, index);
}

Test(otm, planted_draft_order_error_is_rejected)
{
    mdsd_verifier_ops planted = mdsd_verify_otm_ops;
    planted.name = "otm-reversed";
    planted.verify = reversed_verify;
    mdsd_scheme s = {MDSD_SCHEME_HUB, 2, 5, Q5, NULL};
    mdsd_err err;
    mdsd_verifier *v = mdsd_verifier_alloc_ops(&planted, P5, &s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result mc = test_simulate(v, TRIALS, 64);
    double pv = mdsd_mc_check_output(&mc, P5).p_value;
    cr_log_info("otm, planted draft-order error: chi-square p = %.3g", pv);
    cr_assert_lt(pv, SIGNIFICANCE, "the planted error passed (p = %g)", pv);
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

Test(otm, size_guards_are_clear_errors)
{
    double p[64], q[64];
    for (int i = 0; i < 64; i++)
        p[i] = q[i] = 1.0 / 64;
    mdsd_scheme s = {MDSD_SCHEME_IID, 4, 64, q, NULL}; /* 64^4 = 16.8M tuples */
    mdsd_err err;
    cr_assert_null(mdsd_verifier_alloc(MDSD_VERIFIER_OTM, p, &s, NULL, &err));
    cr_assert_eq(err.code, MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "otm") && strstr(err.msg, "tuples"), "%s", err.msg);
    s.n = 3; /* 262144 tuples x 64 tokens = 16.8M LP variables */
    double alpha;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OTM, p, &s, NULL, &alpha, NULL, &err),
                 MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "variables") && strstr(err.msg, "toy"), "%s", err.msg);
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    o.max_tuples = 1000; /* the tuple guard follows the options */
    s.n = 2;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OTM, p, &s, &o, &alpha, NULL, &err),
                 MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "1000"), "%s", err.msg);
}

Test(otm, accept_cli_runs_otm_and_refuses_big_instances)
{
    char *out;
    cr_assert_eq(test_run_mdsd("accept -p 0.3,0.25,0.2,0.15,0.1 -q 0.05,0.1,0.15,0.3,0.4 -n 2 "
                               "--verifier otm --scheme wor --exact --json", 1, &out), 0, "%s", out);
    mdsd_scheme s = {MDSD_SCHEME_WOR, 2, 5, Q5, NULL};
    char want[64];
    snprintf(want, sizeof want, "\"alpha\":%.6f", test_alpha_star(P5, &s));
    want[strlen(want) - 1] = '\0';
    cr_assert(strstr(out, "\"verifier\":\"otm\"") && strstr(out, want), "want %s in %s", want, out);
    free(out);
    cr_assert_eq(test_run_mdsd("accept -p 0.5,0.5 -q 0.5,0.5 -n 30 --verifier otm --exact", 1,
                               &out), 1, "%s", out);
    cr_assert(strstr(out, "otm") && strstr(out, "toy"), "%s", out);
    free(out);
}
