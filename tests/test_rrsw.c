/* test_rrsw.c - rrsw's exact rate (src/verify/verify_rrsw.c, MATH.md §3.4):
 * the certified interval of the scalar recursion against the literal
 * enumeration of every draw path (explicit p_j, q_j arrays) on random toys,
 * the hard instances included (low temperature with subnormal masses,
 * near-one-hot, ties, zeros); at wide tolerances, where the cuts prune most
 * children, the interval must still hold the enumerated value; and against
 * Monte Carlo at V = 32,000. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "testutil.h"

static mdsd_verifier_opts default_opts(void)
{
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    o.max_paths = MDSD_RRSW_MAX_PATHS; /* the ops get their defaults filled in */
    return o;
}

typedef struct {
    double alpha, lo, hi, per_draft[8];
} certified;

static int run_certified(const double *p, const mdsd_scheme *s, double tolerance, certified *c,
                         mdsd_err *err)
{
    mdsd_verifier_opts o = default_opts();
    return mdsd_rrsw_exact_bounds(p, s, &o, tolerance, &c->alpha, c->per_draft, &c->lo, &c->hi, err);
}

/* Why the certified result disagrees with the enumerated one (NULL if it
 * agrees): alpha and each per-draft rate within tol, the interval holding
 * the enumerated alpha (up to 1e-12 of rounding) and no wider than tol. */
static const char *disagreement(double exact, const double *exact_per_draft, const certified *c,
                                size_t n, double tol)
{
    if (!(fabs(c->alpha - exact) <= tol))
        return "alpha";
    if (!(c->lo <= exact + 1e-12 && exact <= c->hi + 1e-12))
        return "interval misses the enumerated alpha";
    if (!(c->hi - c->lo <= tol))
        return "interval too wide";
    for (size_t j = 0; j < n; j++)
        if (!(fabs(c->per_draft[j] - exact_per_draft[j]) <= tol))
            return "per-draft rate";
    return NULL;
}

static size_t support(const double *q, size_t V)
{
    size_t k = 0;
    for (size_t x = 0; x < V; x++)
        k += q[x] > 0.0;
    return k;
}

/* A random toy: toy_pair's kinds, then test_hard_pair's. */
static void toy(gsl_rng *r, unsigned inst, size_t V, double *p, double *q)
{
    unsigned kind = inst % (TOY_PAIR_KINDS + TEST_HARD_PAIR_KINDS);
    if (kind < TOY_PAIR_KINDS)
        toy_pair(r, kind, V, p, q);
    else
        test_hard_pair(r, kind - TOY_PAIR_KINDS, V, p, q);
}

/* Compares both routes on one instance at every n up to max_n. Returns the
 * number of (instance, n) compared. */
static unsigned compare(const double *p, const double *q, size_t V, size_t max_n, double tol,
                        unsigned inst, unsigned *pruned)
{
    unsigned done = 0;
    size_t supp = support(q, V);
    for (size_t n = 1; n <= max_n && n <= supp; n++) {
        mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
        mdsd_verifier_opts o = default_opts();
        double exact, exact_pd[8];
        certified c;
        mdsd_err err;
        cr_assert_eq(mdsd_rrsw_exact_paths(p, &s, &o, &exact, exact_pd, &err), MDSD_OK, "%s",
                     err.msg);
        int rc = run_certified(p, &s, tol, &c, &err);
        const char *why = rc ? err.msg : disagreement(exact, exact_pd, &c, n, tol);
        if (why) /* the instance, for the record */
            for (size_t x = 0; x < V; x++)
                fprintf(stderr, "token %zu: p %.17g q %.17g\n", x, p[x], q[x]);
        cr_assert(rc == MDSD_OK && why == NULL,
                  "inst %u V %zu n %zu tol %g: %s: enumerated %.17g, certified %.17g in [%.17g, %.17g]",
                  inst, V, n, tol, why, exact, c.alpha, c.lo, c.hi);
        if (pruned && c.hi - c.lo > 1e-12)
            (*pruned)++;
        done++;
    }
    return done;
}

Test(rrsw, certified_matches_path_enumeration_on_toys)
{
    gsl_rng *r = mdsd_rng_alloc(1919);
    double p[8], q[8];
    unsigned compared = 0;
    for (unsigned inst = 0; inst < 3000; inst++) {
        size_t V = 2 + inst % 7; /* 2..8 */
        toy(r, inst, V, p, q);
        compared += compare(p, q, V, 5, 1e-9, inst, NULL);
    }
    cr_log_info("rrsw: %u (instance, n) pairs agree to 1e-9", compared);
    cr_assert_gt(compared, 9000);
    gsl_rng_free(r);
}

/* Softmax pairs with a long tail of small q (the cuts' territory) at V up
 * to 24 and n up to 4, and the hard pairs at V 9..16, at tolerances wide
 * enough that the cuts and the moment bounds carry most of the rate: the
 * interval must still hold the enumerated value. */
Test(rrsw, cuts_hold_the_enumerated_value_at_wide_tolerances)
{
    gsl_rng *r = mdsd_rng_alloc(2024);
    double p[24], q[24], z[24], e[24];
    static const double tolerances[] = {1e-1, 1e-3, 1e-6, 1e-9};
    unsigned compared = 0, pruned = 0;
    for (unsigned inst = 0; inst < 400; inst++) {
        size_t V = 10 + inst % 15; /* 10..24 */
        if (inst % 4 == 3) { /* a hard pair */
            V = 9 + inst % 8;
            test_hard_pair(r, inst / 4, V, p, q);
            for (size_t k = 0; k < sizeof tolerances / sizeof *tolerances; k++)
                compared += compare(p, q, V, 4, tolerances[k], inst, &pruned);
            continue;
        }
        double T = inst % 3 == 0 ? 0.05 : 0.3 + gsl_rng_uniform(r);
        for (size_t x = 0; x < V; x++) {
            z[x] = gsl_ran_gaussian(r, 2.5);
            e[x] = z[x] + gsl_ran_gaussian(r, inst % 2 ? 1.0 : 0.3);
        }
        mdsd_softmax(z, V, T, p, "target", NULL);
        mdsd_softmax(e, V, T, q, "draft", NULL);
        for (size_t k = 0; k < sizeof tolerances / sizeof *tolerances; k++)
            compared += compare(p, q, V, V > 16 ? 3 : 4, tolerances[k], inst, &pruned);
    }
    cr_log_info("rrsw: %u comparisons at wide tolerances, %u with a pruned (non-point) interval",
                compared, pruned);
    cr_assert_gt(pruned, compared / 4, "the cuts must actually prune: %u of %u", pruned, compared);
    gsl_rng_free(r);
}

/* V = 300 at low temperature: most q and many p/q underflow float (not
 * double), so the sorts' long runs of equal float keys are ordered by their
 * double keys; n = 2 keeps the enumeration at 300^2 paths. */
Test(rrsw, certified_matches_path_enumeration_at_low_temperature)
{
    enum { V = 300 };
    gsl_rng *r = mdsd_rng_alloc(300);
    double p[V], q[V], z[V];
    unsigned compared = 0;
    for (unsigned inst = 0; inst < 6; inst++) {
        double T = inst % 2 ? 0.02 : 0.005;
        for (int w = 0; w < 2; w++) {
            for (size_t x = 0; x < V; x++)
                z[x] = -2.0 * gsl_ran_exponential(r, 1.0) + (w ? gsl_ran_gaussian(r, 0.2) : 0.0);
            mdsd_softmax(z, V, T, w ? q : p, "toy", NULL);
        }
        compared += compare(p, q, V, 2, 1e-9, inst, NULL);
    }
    cr_assert_gt(compared, 6);
    gsl_rng_free(r);
}

/* The comparison above can fail: a planted error of 2e-9 in the enumerated
 * value, or the exact rate of a slightly different p, is reported. */
Test(rrsw, planted_errors_are_caught)
{
    static const double p[5] = {0.3, 0.2, 0.1, 0.25, 0.15}, q[5] = {0.1, 0.4, 0.2, 0.05, 0.25};
    mdsd_scheme s = {MDSD_SCHEME_WOR, 3, 5, q, NULL};
    mdsd_verifier_opts o = default_opts();
    double exact, exact_pd[3];
    certified c;
    cr_assert_eq(mdsd_rrsw_exact_paths(p, &s, &o, &exact, exact_pd, NULL), MDSD_OK);
    cr_assert_eq(run_certified(p, &s, 0.0, &c, NULL), MDSD_OK);
    cr_assert_null(disagreement(exact, exact_pd, &c, 3, 1e-9));
    cr_assert_not_null(disagreement(exact + 2e-9, exact_pd, &c, 3, 1e-9));
    double pd_off[3] = {exact_pd[0], exact_pd[1] + 2e-9, exact_pd[2] - 2e-9};
    cr_assert_not_null(disagreement(exact, pd_off, &c, 3, 1e-9));
    static const double p2[5] = {0.3, 0.2, 0.1, 0.25 - 1e-8, 0.15 + 1e-8};
    cr_assert_eq(run_certified(p2, &s, 0.0, &c, NULL), MDSD_OK);
    cr_assert_not_null(disagreement(exact, exact_pd, &c, 3, 1e-9));
}

/* LLM-like pair as tests/bench/bench_accept.c makes them (T = 0.7, draft
 * noise sd 1), or at another temperature T and draft noise sd. */
static void llm_like_pair_at(size_t V, uint64_t seed, double T, double sd, double *p, double *q)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    double *z = malloc(V * sizeof *z), *e = malloc(V * sizeof *e);
    for (size_t x = 0; x < V; x++) {
        z[x] = gsl_ran_gaussian(r, 2.5);
        e[x] = z[x] + gsl_ran_gaussian(r, sd);
    }
    mdsd_softmax(z, V, T, p, "target", NULL);
    mdsd_softmax(e, V, T, q, "draft", NULL);
    free(z), free(e);
    gsl_rng_free(r);
}

static void llm_like_pair(size_t V, uint64_t seed, double *p, double *q)
{
    llm_like_pair_at(V, seed, 0.7, 1.0, p, q);
}

/* The certified route's results, bit for bit, as the route printed them
 * before its speed work (issue 27: tables in two passes of running sums,
 * prefix sums grouped by use, the drawn tokens read by q rank): alpha, the
 * interval and the per-draft rates at V = 32,000 (n = 3 at T = 0.7 and at
 * T = 0.05, whose tail is subnormal; n = 2 with a close draft), n = 4 at
 * V = 1,000 and n = 5 at V = 200. A speed change must leave them as they
 * are; a change of the arithmetic must say so and regenerate them.
 * (Planted: the tables' prefix sums of p accumulated in double instead of
 * long double fail this test while every other rrsw test still passes.)
 * The inputs come from the portable exp (src/core/dist.c), whose bits are
 * the same on every machine: with glibc's AVX-512 exp the softmax differs
 * by a few ulp, and so did these values between a CI machine without
 * AVX-512 and one with it. Criterion runs each test in its own process, so
 * the library reads the setting at this test's first softmax. */
Test(rrsw, certified_results_are_frozen, .timeout = 60)
{
    setenv("MDSD_PORTABLE_EXP", "1", 1);
    static const struct {
        size_t V, n;
        uint64_t seed;
        double T, sd, alpha, lo, hi, per_draft[5];
    } cases[] = {
        {32000, 3, 104, 0.7, 1.0, 0x1.4575a96afe3f8p-1, 0x1.4575a96a2794cp-1, 0x1.4575a96bd4ea4p-1, {0x1.acdd102d194c2p-2, 0x1.23c776798a329p-3, 0x1.30aa1db08a8fbp-4}},
        {32000, 3, 5, 0.05, 1.0, 0x1.3b35467c066e4p-1, 0x1.3b35467bf48bep-1, 0x1.3b35467c1850ap-1, {0x1.394fca0401865p-6, 0x1.02f94670f0f31p-3, 0x1.e158ed1f75112p-2}},
        {32000, 2, 6, 0.3, 0.3, 0x1.fb50072330263p-1, 0x1.fb5007232b7ffp-1, 0x1.fb50072334cc7p-1, {0x1.f9b601fd8e04dp-1, 0x1.9a0525a221609p-9}},
        {1000, 4, 7, 0.7, 1.0, 0x1.66782967167d7p-1, 0x1.6678296525c66p-1, 0x1.6678296907349p-1, {0x1.a6ff498742224p-2, 0x1.29713b0fcbe3ep-3, 0x1.461c1dcb697dfp-4, 0x1.fd8b22615439ep-5}},
        {200, 5, 7, 0.7, 1.0, 0x1.861875ca165d8p-1, 0x1.861875c8d0fdcp-1, 0x1.861875cb5bbd3p-1, {0x1.ac03668134a7bp-2, 0x1.258cde4255c8p-3, 0x1.3888b10e99f42p-4, 0x1.08eb90fb6d29bp-4, 0x1.e8502b7a5b3eep-5}},
    };
    double *p = malloc(32000 * sizeof *p), *q = malloc(32000 * sizeof *q);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t V = cases[i].V, n = cases[i].n;
        llm_like_pair_at(V, cases[i].seed, cases[i].T, cases[i].sd, p, q);
        mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
        double alpha, per_draft[5], lo, hi;
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact_bounds(MDSD_VERIFIER_RRSW, p, &s, NULL, &alpha, per_draft,
                                                &lo, &hi, &err),
                     MDSD_OK, "case %zu: %s", i, err.msg);
        cr_expect(alpha == cases[i].alpha && lo == cases[i].lo && hi == cases[i].hi,
                  "case %zu: alpha %a in [%a, %a], frozen %a in [%a, %a]", i, alpha, lo, hi,
                  cases[i].alpha, cases[i].lo, cases[i].hi);
        for (size_t j = 0; j < n; j++)
            cr_expect(per_draft[j] == cases[i].per_draft[j], "case %zu draft %zu: %a, frozen %a", i,
                      j, per_draft[j], cases[i].per_draft[j]);
    }
    free(p), free(q);
}

/* At V = 32,000, n = 3 no enumeration is possible: the certified rate must
 * agree with 10^6 Monte-Carlo trials (fixed seed) within 5 standard errors
 * (binomial, from the trial count), and an exact value off by 0.005 must
 * not (the planted error: 0.005 is above 10 standard errors here). */
Test(rrsw, certified_matches_monte_carlo_at_32000, .timeout = 120)
{
    enum { V = 32000 };
    const uint64_t trials = 1000000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    llm_like_pair(V, 104, p, q);
    mdsd_scheme s = {MDSD_SCHEME_WOR, 3, V, q, NULL};
    double alpha, per_draft[3], lo, hi;
    mdsd_err err;
    cr_assert_eq(mdsd_verifier_exact_bounds(MDSD_VERIFIER_RRSW, p, &s, NULL, &alpha, per_draft, &lo,
                                            &hi, &err),
                 MDSD_OK, "%s", err.msg);
    cr_assert(lo <= alpha && alpha <= hi && hi - lo <= MDSD_RRSW_TOLERANCE, "[%.17g, %.17g]", lo, hi);
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRSW, p, &s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result res = test_simulate(v, trials, 77);
    cr_log_info("rrsw V = 32000 n = 3: certified %.12f (width %.2g), MC %.6f", alpha, hi - lo, res.alpha);
    test_assert_within_5se(res.alpha, alpha, trials, "rrsw certified vs Monte Carlo at V = 32000");
    for (size_t j = 0; j < 3; j++)
        test_assert_within_5se((double)res.per_draft[j] / (double)trials, per_draft[j], trials,
                               "rrsw per-draft rate at V = 32000");
    double se = sqrt(alpha * (1 - alpha) / (double)trials);
    cr_assert_gt(fabs(res.alpha - (alpha + 0.005)) / se, 5.0, "the planted error must be caught");
    mdsd_mc_result_free(&res);
    mdsd_verifier_free(v);
    free(p), free(q);
}

/* n = 4 at V = 1,000 and n = 5 at V = 200 (the steps before the last
 * rejection enumerate nearly every sequence, so no larger V here): against
 * 10^6 trials each. */
Test(rrsw, certified_matches_monte_carlo_at_n4_and_n5, .timeout = 120)
{
    const uint64_t trials = 1000000;
    double *p = malloc(1000 * sizeof *p), *q = malloc(1000 * sizeof *q);
    for (size_t n = 4; n <= 5; n++) {
        size_t V = n == 4 ? 1000 : 200;
        llm_like_pair(V, 7, p, q);
        mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
        double alpha, per_draft[5], lo, hi;
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact_bounds(MDSD_VERIFIER_RRSW, p, &s, NULL, &alpha, per_draft,
                                                &lo, &hi, &err),
                     MDSD_OK, "n = %zu: %s", n, err.msg);
        cr_assert(lo <= alpha && alpha <= hi && hi - lo <= MDSD_RRSW_TOLERANCE, "[%.17g, %.17g]", lo,
                  hi);
        mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRSW, p, &s, NULL, &err);
        cr_assert_not_null(v, "%s", err.msg);
        mdsd_mc_result res = test_simulate(v, trials, 78 + n);
        cr_log_info("rrsw V = %zu n = %zu: certified %.12f (width %.2g), MC %.6f", V, n, alpha,
                    hi - lo, res.alpha);
        test_assert_within_5se(res.alpha, alpha, trials, "rrsw certified vs Monte Carlo at n = 4, 5");
        for (size_t j = 0; j < n; j++)
            test_assert_within_5se((double)res.per_draft[j] / (double)trials, per_draft[j], trials,
                                   "rrsw per-draft rate at n = 4, 5");
        mdsd_mc_result_free(&res);
        mdsd_verifier_free(v);
    }
    free(p), free(q);
}

/* Past the visit guard the rate is refused with a pointer to --trials,
 * never printed wrong. */
Test(rrsw, refuses_past_the_visit_guard)
{
    enum { V = 32000 };
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    llm_like_pair(V, 101, p, q);
    mdsd_scheme s = {MDSD_SCHEME_WOR, 3, V, q, NULL};
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    o.max_paths = 100;
    double alpha, per_draft[3];
    mdsd_err err;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_RRSW, p, &s, &o, &alpha, per_draft, &err),
                 MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "`trials`") && strstr(err.msg, "`max_paths`"), "%s", err.msg);
    free(p), free(q);
}

/* mdsd accept --exact --json keeps its keys and adds the interval. */
Test(rrsw, accept_json_reports_the_interval)
{
    char *out;
    int rc = test_run_mdsd("accept -p 0.3,0.2,0.1,0.25,0.15 -q 0.1,0.4,0.2,0.05,0.25 -n 3 "
                           "--verifier rrsw --exact --json",
                           1, &out);
    cr_assert_eq(rc, 0, "%s", out);
    double alpha, lo, hi;
    const char *a = strstr(out, "\"alpha\":"), *l = strstr(out, "\"alpha_low\":"),
               *h = strstr(out, "\"alpha_high\":");
    cr_assert(a && l && h && strstr(out, "\"per_draft\":"), "%s", out);
    alpha = atof(a + 8), lo = atof(l + 12), hi = atof(h + 13);
    cr_assert(lo <= alpha && alpha <= hi && hi - lo <= 1e-9, "%s", out);
    cr_assert_float_eq(alpha, 0.806866883116883, 1e-12, "%s", out);
    free(out);
}

/* The sampling path with a subnormal mass left: after the top token of a
 * nearly one-hot q is drawn and rejected, R is subnormal and the scalar c
 * passes DBL_MAX (c_3 = 1 + 0.7 / 2e-310), as do the ratios p/q of the
 * subnormal tokens. In double both became +inf and the residual was sampled
 * from the wrong step (alpha 0.9435 against 0.9, output check p = 0, before
 * the fix); with q = (1, 5e-324, 5e-324) the wor draft sampler's inversion
 * kept one bit of u * (mass left) and drew token 2 three times in four. Now
 * the Monte-Carlo rate is within 5 s.e. of the exact one and the output
 * follows p (chi-square at 1e-6). */
Test(rrsw, subnormal_mass_left_keeps_the_output_law, .timeout = 60)
{
    const char *qs[] = {"1,1e-310,1e-310,0", "1,5e-324,5e-324,0", "1,1e-322,2e-322,0"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        char args[256], *mc, *ex;
        snprintf(args, sizeof args, "accept -p 0.3,0.3,0.3,0.1 -q %s -n 2 --verifier rrsw --json --exact", qs[i]);
        cr_assert_eq(test_run_mdsd(args, 1, &ex), 0, "%s", ex);
        snprintf(args, sizeof args, "accept -p 0.3,0.3,0.3,0.1 -q %s -n 2 --verifier rrsw --json "
                 "--trials 200000 --seed 1 --threads 1 --check-output", qs[i]);
        cr_assert_eq(test_run_mdsd(args, 1, &mc), 0, "%s", mc);
        const char *a_ex = strstr(ex, "\"alpha\":"), *a_mc = strstr(mc, "\"alpha\":"),
                   *pv = strstr(mc, "\"p_value\":");
        cr_assert(a_ex && a_mc && pv, "%s\n%s", ex, mc);
        double alpha = atof(a_ex + 8), estimate = atof(a_mc + 8), p_value = atof(pv + 10);
        test_assert_within_5se(estimate, alpha, 200000, qs[i]);
        cr_expect_gt(p_value, 1e-6, "q = %s: the output does not follow p (p-value %g)", qs[i], p_value);
        free(ex), free(mc);
    }
    /* the draft sampler alone: both second drafts equally likely */
    char *out;
    cr_assert_eq(test_run_mdsd("draft -q 1,5e-324,5e-324,0 -n 2 -s wor --sample 100000 --seed 1", 1, &out), 0);
    const char *pv = strstr(out, "p-value ");
    cr_assert_not_null(pv, "%s", out);
    cr_expect_gt(atof(pv + 8), 1e-6, "%s", out);
    free(out);
}
