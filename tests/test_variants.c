/* The audit variants (verifier.h): is-face (Remark 4's optimal face) and the
 * three peer behaviours rrs-skipdup, spechub-hubaccept, rrsw-f32. Each has its
 * exact rate checked against the numbers of papers/FINDINGS.md and against
 * Monte Carlo, and the output-validity test (chi-square against p) must FAIL
 * where the behaviour changes the output law and pass where it does not. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "iws.h"

static double exact_of(mdsd_verifier_kind k, const double *p, const mdsd_scheme *s)
{
    double alpha = NAN;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_verifier_exact(k, p, s, NULL, &alpha, NULL, &err), MDSD_OK, "%s", err.msg);
    return alpha;
}

/* Output-test p-value of `trials` Monte-Carlo trials, and the estimate checked
 * against the exact rate (5 standard errors). */
static double output_pvalue(mdsd_verifier_kind k, const double *p, const mdsd_scheme *s,
                            uint64_t trials)
{
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_verifier *v = mdsd_verifier_alloc(k, p, s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result res = test_simulate(v, trials, 7);
    test_assert_within_5se(res.alpha, exact_of(k, p, s), trials, mdsd_verifier_name(k));
    double pv = mdsd_mc_check_output(&res, p).p_value;
    mdsd_mc_result_free(&res);
    mdsd_verifier_free(v);
    return pv;
}

/* ---- rrs-skipdup ------------------------------------------------------------ */

Test(variants, skipdup_inflates_alpha_and_breaks_the_law_at_n3)
{
    static const double p[3] = {0.1, 0.3, 0.6}, q[3] = {0.7, 0.2, 0.1};
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 3, q, NULL};
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRS, p, &s), 0.604, 1e-12);
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRS_SKIPDUP, p, &s), 0.674, 1e-12);
    cr_assert_lt(output_pvalue(MDSD_VERIFIER_RRS_SKIPDUP, p, &s, 200000), 1e-6);
    cr_assert_gt(output_pvalue(MDSD_VERIFIER_RRS, p, &s, 200000), 1e-4);
}

/* At n = 2 the acceptance rate equals RRS's (a repeat is rejected by RRS for
 * sure, skipped here), but the output law does not: after a rejected x_1 = x_2
 * skipdup outputs from p_2 where RRS outputs from p_3. By hand for this pair:
 * P(y = 1) = 0.2 + 0.6 (0.7/6 + 0.2 * 5/6) = 0.37 instead of p(1) = 0.3. */
Test(variants, skipdup_at_n2_keeps_alpha_not_the_law)
{
    static const double p[3] = {0.1, 0.3, 0.6}, q[3] = {0.7, 0.2, 0.1};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 3, q, NULL};
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRS_SKIPDUP, p, &s), 0.56, 1e-12);
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRS_SKIPDUP, p, &s, NULL, NULL);
    mdsd_mc_result res = test_simulate(v, 400000, 3);
    test_assert_within_5se((double)res.histogram[1] / 400000.0, 0.37, 400000, "P(y = 1)");
    cr_assert_lt(mdsd_mc_check_output(&res, p).p_value, 1e-6);
    mdsd_mc_result_free(&res);
    mdsd_verifier_free(v);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 13);
    for (unsigned t = 0; t < 200; t++) {
        double pp[5], qq[5];
        toy_pair(r, t % TOY_PAIR_KINDS, 5, pp, qq);
        mdsd_scheme s2 = {MDSD_SCHEME_IID, 2, 5, qq, NULL};
        cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRS_SKIPDUP, pp, &s2),
                           exact_of(MDSD_VERIFIER_RRS, pp, &s2), 1e-12, "instance %u", t);
    }
    gsl_rng_free(r);
}

/* ---- spechub-hubaccept ------------------------------------------------------- */

Test(variants, hubaccept_reports_one_and_outputs_only_the_hub)
{
    static const double p[3] = {0.9992, 0, 0.0008}, q[3] = {0.6, 0.399999, 1e-6};
    mdsd_scheme s = {MDSD_SCHEME_HUB, 2, 3, q, NULL};
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_SPECHUB, p, &s), 0.9992025, 1e-12);
    cr_assert_eq(exact_of(MDSD_VERIFIER_SPECHUB_HUBACCEPT, p, &s), 1.0);
    cr_assert_lt(output_pvalue(MDSD_VERIFIER_SPECHUB_HUBACCEPT, p, &s, 200000), 1e-6);
    cr_assert_gt(output_pvalue(MDSD_VERIFIER_SPECHUB, p, &s, 200000), 1e-4);
}

Test(variants, hubaccept_below_the_threshold_is_spechub)
{
    static const double p[4] = {0.3, 0.1, 0.4, 0.2}, q[4] = {0.4, 0.3, 0.2, 0.1};
    mdsd_scheme s = {MDSD_SCHEME_HUB, 2, 4, q, NULL};
    cr_assert_eq(exact_of(MDSD_VERIFIER_SPECHUB_HUBACCEPT, p, &s),
                 exact_of(MDSD_VERIFIER_SPECHUB, p, &s));
    cr_assert_gt(output_pvalue(MDSD_VERIFIER_SPECHUB_HUBACCEPT, p, &s, 200000), 1e-4);
}

/* ---- rrsw-f32 ---------------------------------------------------------------- */

Test(variants, f32_loses_the_second_draft_on_a_nearly_one_hot_draft)
{
    static const double p[6] = {0.4, 0.26, 0.085, 0.085, 0.085, 0.085};
    static const double q[6] = {1 - 1e-8, 1e-8, 0, 0, 0, 0};
    mdsd_scheme s = {MDSD_SCHEME_WOR, 2, 6, q, NULL};
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRSW, p, &s), 0.66, 1e-7);
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRSW_F32, p, &s), 0.40, 1e-7);
    cr_assert_lt(output_pvalue(MDSD_VERIFIER_RRSW_F32, p, &s, 200000), 1e-6);
    cr_assert_gt(output_pvalue(MDSD_VERIFIER_RRSW, p, &s, 200000), 1e-4);
}

Test(variants, f32_agrees_with_rrsw_when_q_is_not_extreme)
{
    static const double p[4] = {0.1, 0.3, 0.2, 0.4}, q[4] = {0.5, 0.2, 0.2, 0.1};
    for (size_t n = 1; n <= 3; n++) {
        mdsd_scheme s = {MDSD_SCHEME_WOR, n, 4, q, NULL};
        cr_assert_float_eq(exact_of(MDSD_VERIFIER_RRSW_F32, p, &s),
                           exact_of(MDSD_VERIFIER_RRSW, p, &s), 1e-6, "n = %zu", n);
    }
    mdsd_scheme s = {MDSD_SCHEME_WOR, 2, 4, q, NULL};
    cr_assert_gt(output_pvalue(MDSD_VERIFIER_RRSW_F32, p, &s, 200000), 1e-4);
}

/* ---- is-face (Khisti et al., Remark 4) ---------------------------------------- */

/* Both published counterexamples: the best stage-1 optimum reaches alpha*. */
Test(variants, is_face_reaches_alpha_star_on_the_counterexamples)
{
    static const double p1[3] = {0.05, 0.3, 0.65}, q1[3] = {0.3, 0.4, 0.3};
    static const double p2[4] = {0.1, 0.3, 0.3, 0.3}, q2[4] = {0.5, 0.2, 0.1, 0.2};
    mdsd_scheme s1 = {MDSD_SCHEME_IID, 3, 3, q1, NULL}, s2 = {MDSD_SCHEME_IID, 3, 4, q2, NULL};
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_IS, p1, &s1), 0.993, 1e-9);
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_IS_FACE, p1, &s1), 1.0, 1e-7);
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_IS, p2, &s2), 0.935, 1e-9);
    cr_assert_float_eq(exact_of(MDSD_VERIFIER_IS_FACE, p2, &s2), test_alpha_star(p2, &s2), 1e-7);
    cr_assert_gt(output_pvalue(MDSD_VERIFIER_IS_FACE, p2, &s2, 200000), 1e-4);
}

/* On random instances: the face point is on stage 1's optimal face (its
 * sum min(p, r_1) equals the plain solve's stage-1 value), never below the
 * plain solve's final acceptance, and never above alpha*. */
Test(variants, is_face_stays_on_the_face_and_between_is_and_alpha_star)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 21);
    for (unsigned t = 0; t < 120; t++) {
        size_t V = 3 + t % 3;
        double p[5], q[5];
        toy_pair(r, t % TOY_PAIR_KINDS, V, p, q);
        mdsd_iws plain1, face;
        mdsd_iws_opts o = {0, MDSD_IWS_RANK_DEFICIT, 0, false, 0.0};
        mdsd_err err;
        mdsd_err_clear(&err);
        cr_assert_eq(mdsd_iws_solve(p, q, V, 2, false, &o, &plain1, &err), MDSD_OK, "%s", err.msg);
        o.face = true;
        cr_assert_eq(mdsd_iws_solve(p, q, V, 3, false, &o, &face, &err), MDSD_OK, "%s", err.msg);
        cr_assert_float_eq(face.face_stage1_kept, plain1.accept, 1e-7, "instance %u", t);
        mdsd_scheme s = {MDSD_SCHEME_IID, 3, V, q, NULL};
        double is = exact_of(MDSD_VERIFIER_IS, p, &s), best = exact_of(MDSD_VERIFIER_IS_FACE, p, &s);
        double star = test_alpha_star(p, &s);
        cr_assert_geq(best, is - 1e-7, "instance %u: face %.12g < is %.12g", t, best, is);
        cr_assert_leq(best, star + 1e-9, "instance %u: face %.12g > alpha* %.12g", t, best, star);
        mdsd_iws_free(&plain1);
        mdsd_iws_free(&face);
    }
    gsl_rng_free(r);
}

Test(variants, is_face_refuses_what_it_does_not_do)
{
    static const double p[3] = {0.2, 0.3, 0.5}, q[3] = {0.3, 0.4, 0.3};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 3, q, NULL};
    mdsd_err err;
    mdsd_err_clear(&err);
    double alpha;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_IS_FACE, p, &s, NULL, &alpha, NULL, &err),
                 MDSD_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "n = 3"), "%s", err.msg);
}
