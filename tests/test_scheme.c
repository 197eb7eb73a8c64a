/* Draft schemes: enumerated D against independent formulas, samplers against
 * D (chi-square), tie-breaking and the well-definedness errors. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"

/* Chi-square acceptance level: a correct sampler fails with probability 1e-6
 * per test, and the seeds are fixed, so the outcome is deterministic. */
#define SIGNIFICANCE 1e-6
#define DRAWS 200000

static mdsd_joint enumerate(const mdsd_scheme *s)
{
    mdsd_joint D;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_scheme_joint(s, MDSD_JOINT_MAX_TUPLES, &D, &err);
    cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_joint_sort(&D, NULL), MDSD_OK);
    return D;
}

/* p-value of DRAWS samples of scheme s against the law `claimed`. */
static double sample_pvalue(const mdsd_scheme *s, const mdsd_joint *claimed, uint64_t seed)
{
    mdsd_sampler *sm = mdsd_sampler_alloc(s, NULL);
    cr_assert_not_null(sm);
    gsl_rng *r = mdsd_rng_alloc(seed);
    uint64_t *counts = calloc(claimed->count + 1, sizeof *counts);
    double *prob = calloc(claimed->count + 1, sizeof *prob);
    memcpy(prob, claimed->prob, claimed->count * sizeof *prob);
    int tuple[16];
    for (int t = 0; t < DRAWS; t++) {
        mdsd_sampler_draw(sm, r, tuple);
        long k = mdsd_joint_find(claimed, tuple);
        counts[k < 0 ? claimed->count : (size_t)k]++; /* last cell: outside the claimed support */
    }
    double pv = mdsd_chisq_gof(counts, prob, claimed->count + 1, 5.0).p_value;
    free(counts), free(prob);
    gsl_rng_free(r);
    mdsd_sampler_free(sm);
    return pv;
}

static const double Q5[5] = {0.35, 0.25, 0.2, 0.15, 0.05};
static const double Q2x5[10] = {0.35, 0.25, 0.2, 0.15, 0.05, 0.1, 0.1, 0.3, 0.4, 0.1};

static mdsd_scheme scheme_of(mdsd_scheme_kind kind, size_t n)
{
    mdsd_scheme s = {kind, n, 5, kind == MDSD_SCHEME_MULTI ? Q2x5 : Q5, NULL};
    return s;
}

static void check_sampler(mdsd_scheme_kind kind, size_t n)
{
    mdsd_scheme s = scheme_of(kind, n);
    mdsd_joint D = enumerate(&s);
    cr_assert_float_eq(mdsd_sum(D.prob, D.count), 1.0, 1e-12);
    double pv = sample_pvalue(&s, &D, 1000 + kind);
    cr_assert_gt(pv, SIGNIFICANCE, "%s sampler disagrees with its D: p = %g",
                 mdsd_scheme_name(kind), pv);
    /* Planted error: move 1% of mass between the two most likely tuples. */
    size_t a = 0, b = 1;
    for (size_t t = 0; t < D.count; t++)
        if (D.prob[t] > D.prob[a])
            b = a, a = t;
        else if (t != a && (b == a || D.prob[t] > D.prob[b]))
            b = t;
    D.prob[a] -= 0.01;
    D.prob[b] += 0.01;
    double planted = sample_pvalue(&s, &D, 1000 + kind);
    cr_assert_lt(planted, SIGNIFICANCE, "%s: the test missed a planted 1%% error (p = %g)",
                 mdsd_scheme_name(kind), planted);
    mdsd_joint_free(&D);
}

Test(scheme, iid_sampler_follows_D) { check_sampler(MDSD_SCHEME_IID, 3); }
Test(scheme, wor_sampler_follows_D) { check_sampler(MDSD_SCHEME_WOR, 3); }
Test(scheme, greedy_sampler_follows_D) { check_sampler(MDSD_SCHEME_GREEDY, 3); }
Test(scheme, hub_sampler_follows_D) { check_sampler(MDSD_SCHEME_HUB, 2); }
Test(scheme, cps_sampler_follows_D) { check_sampler(MDSD_SCHEME_CPS, 3); }
Test(scheme, multi_sampler_follows_D) { check_sampler(MDSD_SCHEME_MULTI, 2); }

Test(scheme, custom_sampler_follows_D)
{
    int tokens[8] = {0, 1, 1, 0, 2, 2, 3, 1};
    double prob[4] = {0.4, 0.3, 0.2, 0.1};
    mdsd_joint C = {2, 4, tokens, prob};
    mdsd_scheme s = {MDSD_SCHEME_CUSTOM, 2, 4, NULL, &C};
    mdsd_joint D = enumerate(&s);
    cr_assert_gt(sample_pvalue(&s, &D, 77), SIGNIFICANCE);
    mdsd_joint_free(&D);
}

Test(scheme, wor_sampler_with_concentrated_q_uses_the_fallback)
{
    /* q(0) = 0.999: rejection nearly always fails, the inversion path runs. */
    static const double q[4] = {0.999, 0.0006, 0.0003, 0.0001};
    mdsd_scheme s = {MDSD_SCHEME_WOR, 3, 4, q, NULL};
    mdsd_joint D = enumerate(&s);
    cr_assert_gt(sample_pvalue(&s, &D, 5), SIGNIFICANCE);
    mdsd_joint_free(&D);
}

/* Independent formulas for D. */
Test(scheme, wor_two_drafts_matches_closed_form)
{
    mdsd_scheme s = scheme_of(MDSD_SCHEME_WOR, 2);
    mdsd_joint D = enumerate(&s);
    cr_assert_eq(D.count, 20);
    for (size_t t = 0; t < D.count; t++) {
        int x = D.tokens[2 * t], y = D.tokens[2 * t + 1];
        cr_assert_float_eq(D.prob[t], Q5[x] * Q5[y] / (1 - Q5[x]), 1e-15);
    }
    mdsd_joint_free(&D);
}

Test(scheme, cps_set_probabilities_are_products_over_e_n)
{
    mdsd_scheme s = scheme_of(MDSD_SCHEME_CPS, 2);
    mdsd_joint D = enumerate(&s);
    double e2 = 0;
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            e2 += Q5[i] * Q5[j];
    for (size_t t = 0; t < D.count; t++) {
        int x = D.tokens[2 * t], y = D.tokens[2 * t + 1];
        cr_assert_float_eq(D.prob[t], Q5[x] * Q5[y] / e2 / 2, 1e-15);
    }
    mdsd_joint_free(&D);
}

Test(scheme, greedy_and_hub_match_their_definitions)
{
    mdsd_scheme g = scheme_of(MDSD_SCHEME_GREEDY, 3);
    mdsd_joint D = enumerate(&g);
    cr_assert_eq(D.count, 3);
    for (size_t t = 0; t < D.count; t++) {
        cr_assert(D.tokens[3 * t] == 0 && D.tokens[3 * t + 1] == 1);
        cr_assert_float_eq(D.prob[t], Q5[D.tokens[3 * t + 2]] / (1 - 0.6), 1e-15);
    }
    mdsd_joint_free(&D);
    mdsd_scheme h = scheme_of(MDSD_SCHEME_HUB, 2);
    D = enumerate(&h);
    cr_assert_eq(D.count, 8);
    for (size_t t = 0; t < D.count; t++) {
        int x = D.tokens[2 * t], y = D.tokens[2 * t + 1];
        double want = y == 0 ? Q5[x] : Q5[0] * Q5[y] / (1 - Q5[0]);
        cr_assert(x == 0 || y == 0);
        cr_assert_float_eq(D.prob[t], want, 1e-15);
    }
    mdsd_joint_free(&D);
}

Test(scheme, enumerated_Q_matches_closed_forms_on_random_instances)
{
    gsl_rng *r = mdsd_rng_alloc(99);
    double q[6];
    unsigned char in_H[6];
    for (int trial = 0; trial < 200; trial++) {
        toy_distribution(r, (toy_family)(trial % 3), 6, q);
        size_t n = 1 + trial % 4;
        for (int v = 0; v < 6; v++)
            in_H[v] = gsl_rng_uniform(r) < 0.5;
        double qH = 0;
        for (int v = 0; v < 6; v++)
            qH += in_H[v] ? q[v] : 0;
        mdsd_scheme iid = {MDSD_SCHEME_IID, n, 6, q, NULL};
        mdsd_joint D = enumerate(&iid);
        cr_assert_float_eq(mdsd_joint_Q(&D, in_H), pow(qH, (double)n), 1e-12);
        mdsd_joint_free(&D);
        if (mdsd_support_size(q, 6) < 2)
            continue;
        mdsd_scheme wor = {MDSD_SCHEME_WOR, 2, 6, q, NULL};
        D = enumerate(&wor);
        double want = 0;
        for (int v = 0; v < 6; v++)
            if (in_H[v] && q[v] < 1)
                want += q[v] * (qH - q[v]) / (1 - q[v]);
        cr_assert_float_eq(mdsd_joint_Q(&D, in_H), want, 1e-12);
        mdsd_joint_free(&D);
    }
    gsl_rng_free(r);
}

Test(scheme, ties_break_towards_the_lower_index)
{
    static const double q[4] = {0.1, 0.3, 0.3, 0.3};
    mdsd_scheme g = {MDSD_SCHEME_GREEDY, 3, 4, q, NULL};
    mdsd_joint D = enumerate(&g);
    for (size_t t = 0; t < D.count; t++)
        cr_assert(D.tokens[3 * t] == 1 && D.tokens[3 * t + 1] == 2);
    mdsd_joint_free(&D);
    mdsd_scheme h = {MDSD_SCHEME_HUB, 2, 4, q, NULL};
    D = enumerate(&h);
    for (size_t t = 0; t < D.count; t++)
        cr_assert(D.tokens[2 * t] == 1 || D.tokens[2 * t + 1] == 1, "hub token must be 1");
    mdsd_joint_free(&D);
}

Test(scheme, ill_defined_schemes_are_refused_with_a_reason)
{
    static const double one_hot[3] = {0, 1, 0};
    mdsd_err err;
    mdsd_joint D;
    mdsd_scheme s = {MDSD_SCHEME_WOR, 2, 3, one_hot, NULL};
    cr_assert_eq(mdsd_scheme_joint(&s, 1000, &D, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "n = 2") && strstr(err.msg, "only 1"), "%s", err.msg);
    s.kind = MDSD_SCHEME_CPS;
    cr_assert_eq(mdsd_scheme_check(&s, &err), MDSD_EINVAL);
    s.kind = MDSD_SCHEME_GREEDY;
    cr_assert_eq(mdsd_scheme_check(&s, &err), MDSD_EINVAL);
    s.kind = MDSD_SCHEME_HUB;
    cr_assert_eq(mdsd_scheme_check(&s, &err), MDSD_EINVAL);
    s = scheme_of(MDSD_SCHEME_HUB, 3);
    cr_assert_eq(mdsd_scheme_check(&s, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "n = 2"), "%s", err.msg);
    s = scheme_of(MDSD_SCHEME_IID, 0);
    cr_assert_eq(mdsd_scheme_check(&s, &err), MDSD_EINVAL);
    s = scheme_of(MDSD_SCHEME_IID, 12);
    cr_assert_eq(mdsd_scheme_joint(&s, 1000, &D, &err), MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "limit"), "%s", err.msg);
    cr_assert_eq(mdsd_sampler_alloc(&(mdsd_scheme){MDSD_SCHEME_WOR, 4, 3, one_hot, NULL}, &err), NULL);
}

Test(scheme, iid_with_one_hot_q_is_well_defined)
{
    static const double one_hot[3] = {0, 1, 0};
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 3, one_hot, NULL};
    mdsd_joint D = enumerate(&s);
    cr_assert_eq(D.count, 1);
    cr_assert_float_eq(D.prob[0], 1.0, 1e-15);
    mdsd_joint_free(&D);
}

Test(scheme, names_round_trip_and_unknown_is_an_error)
{
    for (int k = 0; k < MDSD_SCHEME_COUNT; k++) {
        mdsd_scheme_kind got;
        cr_assert_eq(mdsd_scheme_parse(mdsd_scheme_name((mdsd_scheme_kind)k), &got, NULL), MDSD_OK);
        cr_assert_eq((int)got, k);
    }
    mdsd_err err;
    mdsd_scheme_kind got;
    cr_assert_eq(mdsd_scheme_parse("bogus", &got, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "bogus"));
}

Test(scheme, custom_file_is_parsed_merged_and_validated)
{
    char path[] = "/tmp/mdsd-test-jointXXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    fprintf(f, "# x1 x2 prob\n0 1 0.25\n1 0 0.25\n0 1 0.25 # repeated: merged\n2 2 0.25\n");
    fclose(f);
    mdsd_joint D;
    mdsd_err err;
    cr_assert_eq(mdsd_joint_read(path, &D, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_joint_validate(&D, 3, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_joint_sort(&D, NULL), MDSD_OK);
    cr_assert_eq(D.count, 3);
    int t01[2] = {0, 1};
    cr_assert_float_eq(D.prob[mdsd_joint_find(&D, t01)], 0.5, 1e-15);
    cr_assert_eq(mdsd_joint_validate(&D, 2, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "token 2"), "%s", err.msg);
    mdsd_joint_free(&D);
    f = fopen(path, "w");
    fprintf(f, "0 1 0.5\n1 0.5\n");
    fclose(f);
    cr_assert_eq(mdsd_joint_read(path, &D, &err), MDSD_EFORMAT);
    cr_assert(strstr(err.msg, "line 2"), "%s", err.msg);
    remove(path);
}

Test(scheme, concentrated_q_keeps_relative_accuracy)
{
    /* 1 - q(a) by subtraction would lose ~8 digits here; D must not. */
    static const double q[3] = {1 - 3e-9, 2e-9, 1e-9};
    mdsd_scheme s = {MDSD_SCHEME_WOR, 2, 3, q, NULL};
    mdsd_joint D = enumerate(&s);
    int t01[2] = {0, 1};
    cr_assert_float_eq(D.prob[mdsd_joint_find(&D, t01)] / (q[0] * q[1] / 3e-9), 1.0, 1e-12);
    mdsd_joint_free(&D);
    mdsd_scheme h = {MDSD_SCHEME_HUB, 2, 3, q, NULL};
    D = enumerate(&h);
    cr_assert_float_eq(D.prob[mdsd_joint_find(&D, t01)] / (q[0] * q[1] / 3e-9), 1.0, 1e-12);
    mdsd_joint_free(&D);
}
