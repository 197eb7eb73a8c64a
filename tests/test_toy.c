/* Toy families: each family's defining property, logits and probabilities
 * describing the same instance, reproducibility, and parameter errors. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"

#define SIGNIFICANCE_Z 4.89 /* two-sided normal quantile for 1e-6 */

static mdsd_toy make(mdsd_toy_family f, size_t V, const char *params)
{
    mdsd_toy t;
    mdsd_toy_init(&t, f, V);
    mdsd_err err;
    mdsd_err_clear(&err);
    if (params)
        cr_assert_eq(mdsd_toy_set_list(&t, params, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_toy_check(&t, &err), MDSD_OK, "%s", err.msg);
    return t;
}

/* One instance from stream `seed`, as probabilities or logits. */
static void instance(const mdsd_toy *t, size_t index, uint64_t seed, int logits, double *p, size_t n_q, double *q)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = logits ? mdsd_toy_logits(t, index, r, p, n_q, q, &err) : mdsd_toy_probs(t, index, r, p, n_q, q, &err);
    cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
    gsl_rng_free(r);
}

static void assert_distribution(const double *p, size_t V)
{
    double s = 0.0;
    for (size_t i = 0; i < V; i++) {
        cr_assert(p[i] >= 0.0 && p[i] <= 1.0, "p[%zu] = %g", i, p[i]);
        s += p[i];
    }
    cr_assert_float_eq(s, 1.0, 1e-12);
}

Test(toy, family_names_round_trip)
{
    for (int f = 0; f < MDSD_TOY_FAMILIES; f++) {
        mdsd_toy_family g;
        cr_assert_eq(mdsd_toy_family_parse(mdsd_toy_family_name((mdsd_toy_family)f), &g, NULL), MDSD_OK);
        cr_assert_eq((int)g, f);
    }
    mdsd_err err;
    mdsd_toy_family g;
    cr_assert_eq(mdsd_toy_family_parse("gaussian", &g, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "unknown toy family 'gaussian'"), "%s", err.msg);
}

Test(toy, parameter_errors_are_named)
{
    struct {
        mdsd_toy_family f;
        size_t V;
        const char *params, *needle;
    } cases[] = {
        {MDSD_TOY_BERNOULLI, 3, NULL, "needs V = 2"},
        {MDSD_TOY_BERNOULLI, 2, "a=1.5", "a = 1.5 is not in [0, 1]"},
        {MDSD_TOY_BERNOULLI, 2, "lambda=0.5", "has no parameter 'lambda'"},
        {MDSD_TOY_UNIFORM, 10, "d=12", "d = 12 is not in [1, V = 10]"},
        {MDSD_TOY_UNIFORM, 10, "d=9,r=2", "d/r = 9/2 must be an integer"},
        {MDSD_TOY_UNIFORM, 10, "d=8,r=0.5", "must be an integer >= 1 (r >= 1)"},
        {MDSD_TOY_SPECHUB, 10, "lambda=1.2", "lambda = 1.2 is not in [0, 1]"},
        {MDSD_TOY_SPECHUB, 10, "T=0", "T = 0 is not a finite value > 0"},
        {MDSD_TOY_DIRICHLET, 10, "alpha=-1", "alpha = -1"},
        {MDSD_TOY_ZIPF, 10, "tau=-1", "must be finite and >= 0"},
        {MDSD_TOY_DEGENERATE, 1, NULL, "needs V >= 2"},
        {MDSD_TOY_DEGENERATE, 5, "kind=4", "kind = 4 is not -1 or 0..3"},
        {MDSD_TOY_ZIPF, 10, "s", "is not NAME=NUMBER"},
        {MDSD_TOY_ZIPF, 0, NULL, "V must be at least 1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        mdsd_toy t;
        mdsd_toy_init(&t, cases[k].f, cases[k].V);
        mdsd_err err;
        mdsd_err_clear(&err);
        int rc = cases[k].params ? mdsd_toy_set_list(&t, cases[k].params, &err) : MDSD_OK;
        int set_ok = rc == MDSD_OK;
        if (rc == MDSD_OK)
            rc = mdsd_toy_check(&t, &err);
        cr_assert_eq(rc, MDSD_EINVAL, "case %zu passed", k);
        cr_assert(strstr(err.msg, cases[k].needle), "case %zu: expected '%s' in: %s", k, cases[k].needle, err.msg);
        /* generation refuses too */
        double p[16], q[16];
        gsl_rng *r = mdsd_rng_alloc(1);
        if (set_ok && cases[k].V > 0 && cases[k].V <= 16)
            cr_assert_neq(mdsd_toy_probs(&t, 0, r, p, 1, q, NULL), MDSD_OK, "case %zu", k);
        gsl_rng_free(r);
    }
}

Test(toy, bernoulli_fixed_random_and_grid)
{
    mdsd_toy t = make(MDSD_TOY_BERNOULLI, 2, "a=0.3,b=0.8");
    double p[2], q[4];
    instance(&t, 0, 1, 0, p, 2, q);
    cr_assert(p[0] == 1.0 - 0.8 && p[1] == 0.8 && q[1] == 0.3 && q[3] == 0.3);
    /* grid m = 4: the 25 indices visit every (a, b) of {0, .25, .5, .75, 1}^2 once */
    t = make(MDSD_TOY_BERNOULLI, 2, "grid=4");
    int seen[5][5] = {{0}};
    for (size_t i = 0; i < 25; i++) {
        instance(&t, i, i, 0, p, 1, q);
        double a = q[1], b = p[1];
        cr_assert(a * 4 == floor(a * 4) && b * 4 == floor(b * 4), "a = %g, b = %g", a, b);
        seen[(int)(a * 4)][(int)(b * 4)]++;
        assert_distribution(p, 2);
        assert_distribution(q, 2);
    }
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            cr_assert_eq(seen[a][b], 1, "(%d, %d)", a, b);
    /* random a, b: in [0, 1] and varying; drafters independent */
    t = make(MDSD_TOY_BERNOULLI, 2, NULL);
    instance(&t, 0, 7, 0, p, 2, q);
    cr_assert(q[1] != q[3] && p[1] > 0 && p[1] < 1);
    double b0 = p[1];
    instance(&t, 0, 8, 0, p, 2, q);
    cr_assert_neq(p[1], b0);
    /* logits are log-probabilities, -inf at 0 */
    t = make(MDSD_TOY_BERNOULLI, 2, "a=1,b=0.25");
    instance(&t, 0, 1, 1, p, 1, q);
    cr_assert(q[0] == -INFINITY && q[1] == 0.0 && p[1] == log(0.25));
}

Test(toy, uniform_has_the_stated_supports)
{
    size_t V = 30;
    mdsd_toy t = make(MDSD_TOY_UNIFORM, V, "d=12,r=3");
    double p[30], q[90];
    int first_support = -1, moved = 0;
    for (uint64_t seed = 0; seed < 20; seed++) {
        instance(&t, seed, seed, 0, p, 3, q);
        size_t np = 0, nq = 0;
        for (size_t i = 0; i < V; i++) {
            cr_assert(q[i] == 0.0 || q[i] == 1.0 / 12, "q[%zu] = %g", i, q[i]);
            cr_assert(p[i] == 0.0 || p[i] == 1.0 / 4, "p[%zu] = %g", i, p[i]);
            cr_assert(p[i] == 0.0 || q[i] > 0.0, "supp p not inside supp q at %zu", i);
            cr_assert(q[30 + i] == q[i] && q[60 + i] == q[i], "drafters differ at %zu", i);
            np += p[i] > 0;
            nq += q[i] > 0;
        }
        cr_assert(np == 4 && nq == 12, "|supp p| = %zu, |supp q| = %zu", np, nq);
        int s = (int)mdsd_argmax(p, V);
        if (first_support < 0)
            first_support = s;
        moved |= s != first_support;
    }
    cr_assert(moved, "the supports never moved: no random placement");
    t = make(MDSD_TOY_UNIFORM, 7, NULL); /* defaults: d = 6, r = 2 */
    instance(&t, 0, 1, 0, p, 1, q);
    cr_assert_eq(mdsd_support_size(q, 7), 6);
    cr_assert_eq(mdsd_support_size(p, 7), 3);
}

/* SpecHub App. D: lq = (lambda u_p + (1 - lambda) u_q)/T, lp = u_p/T. With
 * the same stream, lq is affine in lambda and equals lp at lambda = 1; and
 * logits scale as 1/T. */
Test(toy, spechub_toy_follows_the_formula)
{
    size_t V = 50;
    double lp1[50], lq1[100], lp0[50], lq0[100], lp[50], lq[100], lpT[50], lqT[100];
    mdsd_toy t1 = make(MDSD_TOY_SPECHUB, V, "lambda=1"), t0 = make(MDSD_TOY_SPECHUB, V, "lambda=0"),
             t3 = make(MDSD_TOY_SPECHUB, V, "lambda=0.3"), tT = make(MDSD_TOY_SPECHUB, V, "lambda=0.3,T=0.1");
    for (uint64_t seed = 1; seed <= 10; seed++) {
        instance(&t1, 0, seed, 1, lp1, 2, lq1);
        instance(&t0, 0, seed, 1, lp0, 2, lq0);
        instance(&t3, 0, seed, 1, lp, 2, lq);
        instance(&tT, 0, seed, 1, lpT, 2, lqT);
        for (size_t i = 0; i < V; i++) {
            cr_assert(lp[i] >= 0.0 && lp[i] < 1.0 && lp[i] == lp1[i] && lp[i] == lp0[i]);
            for (size_t j = 0; j < 2; j++) {
                cr_assert_eq(lq1[j * V + i], lp[i]);
                cr_assert(lq0[j * V + i] >= 0.0 && lq0[j * V + i] < 1.0);
                cr_assert_float_eq(lq[j * V + i], 0.3 * lq1[j * V + i] + 0.7 * lq0[j * V + i], 1e-15);
                cr_assert_float_eq(lqT[j * V + i], lq[j * V + i] / 0.1, 1e-13);
            }
            cr_assert_float_eq(lpT[i], lp[i] / 0.1, 1e-13);
        }
        cr_assert(memcmp(lq0, lq0 + V, V * sizeof *lq0), "the two drafters share u_q");
    }
}

/* Var(p_0) of Dirichlet(alpha 1_V) = (V - 1) / (V^2 (V alpha + 1)). The z
 * statistic uses the sample's own fourth moment; a planted wrong alpha must
 * be rejected. */
static double dirichlet_z(double alpha_true, double alpha_claimed)
{
    size_t V = 4, M = 20000;
    char params[32];
    snprintf(params, sizeof params, "alpha=%g", alpha_true);
    mdsd_toy t = make(MDSD_TOY_DIRICHLET, V, params);
    double *x = malloc(M * sizeof *x), p[4], q[4];
    gsl_rng *r = mdsd_rng_alloc(99);
    for (size_t m = 0; m < M; m++) {
        cr_assert_eq(mdsd_toy_probs(&t, m, r, p, 1, q, NULL), MDSD_OK);
        assert_distribution(p, V);
        x[m] = p[0];
    }
    gsl_rng_free(r);
    double mean = 0, m2 = 0, m4 = 0;
    for (size_t m = 0; m < M; m++)
        mean += x[m] / (double)M;
    for (size_t m = 0; m < M; m++) {
        double d = x[m] - mean;
        m2 += d * d / (double)M;
        m4 += d * d * d * d / (double)M;
    }
    free(x);
    double want = (double)(V - 1) / ((double)(V * V) * ((double)V * alpha_claimed + 1.0));
    return (m2 - want) / sqrt((m4 - m2 * m2) / (double)M);
}

Test(toy, dirichlet_has_the_right_variance_and_rejects_a_planted_one)
{
    double z = dirichlet_z(0.5, 0.5);
    cr_assert_lt(fabs(z), SIGNIFICANCE_Z, "z = %g", z);
    z = dirichlet_z(0.5, 0.8); /* planted: the variance of another alpha */
    cr_assert_gt(fabs(z), SIGNIFICANCE_Z, "z = %g: the check cannot tell alpha 0.5 from 0.8", z);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

Test(toy, zipf_is_a_permuted_power_law_with_a_correlated_draft)
{
    size_t V = 1000;
    double *lp = malloc(V * sizeof *lp), *lq = malloc(2 * V * sizeof *lq), *sorted = malloc(V * sizeof *sorted);
    /* without noise: sorted logits are exactly -s log(rank), q = p, shuffled */
    mdsd_toy t = make(MDSD_TOY_ZIPF, V, "s=1.2,spread=0,sigma=0,tau=0");
    instance(&t, 0, 5, 1, lp, 2, lq);
    memcpy(sorted, lp, V * sizeof *lp);
    qsort(sorted, V, sizeof *sorted, cmp_desc);
    for (size_t k = 0; k < V; k++)
        cr_assert_float_eq(sorted[k], -1.2 * log((double)(k + 1)), 1e-12, "rank %zu", k + 1);
    for (size_t k = 0; k < V; k++)
        cr_assert(lq[k] == lp[k] && lq[V + k] == lp[k], "token %zu", k);
    size_t in_place = 0;
    for (size_t k = 0; k < V; k++)
        in_place += lp[k] == sorted[k];
    cr_assert_lt(in_place, 20, "not permuted");
    /* defaults: drafts are noisy copies, strongly correlated, and differ */
    t = make(MDSD_TOY_ZIPF, V, NULL);
    instance(&t, 0, 6, 1, lp, 2, lq);
    double sxy = 0, sxx = 0, syy = 0, mx = 0, my = 0;
    for (size_t i = 0; i < V; i++) {
        mx += lp[i] / (double)V;
        my += lq[i] / (double)V;
    }
    for (size_t i = 0; i < V; i++) {
        sxy += (lp[i] - mx) * (lq[i] - my);
        sxx += (lp[i] - mx) * (lp[i] - mx);
        syy += (lq[i] - my) * (lq[i] - my);
    }
    cr_assert_gt(sxy / sqrt(sxx * syy), 0.9);
    cr_assert(memcmp(lq, lq + V, V * sizeof *lq), "drafters identical");
    free(lp);
    free(lq);
    free(sorted);
}

Test(toy, degenerate_kinds)
{
    size_t V = 10;
    mdsd_toy t = make(MDSD_TOY_DEGENERATE, V, NULL);
    double p[10], q[30];
    size_t zeros_p = 0, zeros_q = 0, count3 = 0;
    for (size_t i = 0; i < 400; i++) {
        instance(&t, i, i + 1000, 0, p, 3, q);
        assert_distribution(p, V);
        for (size_t j = 0; j < 3; j++)
            assert_distribution(q + j * V, V);
        switch (i % 4) {
        case MDSD_DEGEN_EQUAL:
            for (size_t j = 0; j < 3; j++)
                cr_assert(!memcmp(p, q + j * V, sizeof p));
            break;
        case MDSD_DEGEN_ONE_HOT_Q:
            for (size_t j = 0; j < 3; j++)
                cr_assert(mdsd_support_size(q + j * V, V) == 1 && q[j * V + mdsd_argmax(q + j * V, V)] == 1.0);
            break;
        case MDSD_DEGEN_DISJOINT:
            for (size_t j = 0; j < 3; j++)
                for (size_t x = 0; x < V; x++)
                    cr_assert(p[x] == 0.0 || q[j * V + x] == 0.0, "instance %zu token %zu", i, x);
            break;
        default:
            zeros_p += V - mdsd_support_size(p, V);
            zeros_q += V - mdsd_support_size(q, V);
            count3++;
            break;
        }
    }
    /* about 40% zeros (each of V - 1 tokens zero w.p. 0.4): 100 instances */
    double fp = (double)zeros_p / (double)(count3 * V), fq = (double)zeros_q / (double)(count3 * V);
    cr_assert(fp > 0.28 && fp < 0.44 && fq > 0.28 && fq < 0.44, "zero fractions %g %g", fp, fq);
    /* a fixed kind ignores the index */
    t = make(MDSD_TOY_DEGENERATE, V, "kind=1");
    instance(&t, 2, 3, 0, p, 1, q);
    cr_assert_eq(mdsd_support_size(q, V), 1);
}

/* The logits of an instance are the log of its probabilities (up to a
 * constant), for every family; the same seed gives the same instance. */
Test(toy, logits_and_probabilities_describe_the_same_instance)
{
    const char *params[MDSD_TOY_FAMILIES] = {"grid=3", NULL, "T=0.5", "alpha=0.3", NULL, NULL};
    for (int f = 0; f < MDSD_TOY_FAMILIES; f++) {
        size_t V = f == MDSD_TOY_BERNOULLI ? 2 : 40;
        mdsd_toy t = make((mdsd_toy_family)f, V, params[f]);
        for (size_t i = 0; i < 8; i++) {
            double p[40], q[80], lp[40], lq[80], sp[40], sq[80], p2[40], q2[80];
            instance(&t, i, 77 + i, 0, p, 2, q);
            instance(&t, i, 77 + i, 1, lp, 2, lq);
            instance(&t, i, 77 + i, 0, p2, 2, q2);
            cr_assert(!memcmp(p, p2, V * sizeof *p) && !memcmp(q, q2, 2 * V * sizeof *q), "not reproducible");
            cr_assert_eq(mdsd_softmax(lp, V, 1.0, sp, "p", NULL), MDSD_OK);
            for (size_t j = 0; j < 2; j++)
                cr_assert_eq(mdsd_softmax(lq + j * V, V, 1.0, sq + j * V, "q", NULL), MDSD_OK);
            for (size_t x = 0; x < V; x++) {
                cr_assert_float_eq(sp[x], p[x], 1e-12, "%s p[%zu]", mdsd_toy_family_name((mdsd_toy_family)f), x);
                cr_assert_float_eq(sq[x], q[x], 1e-12, "%s q[%zu]", mdsd_toy_family_name((mdsd_toy_family)f), x);
                cr_assert_float_eq(sq[V + x], q[V + x], 1e-12);
            }
            assert_distribution(p, V);
        }
        /* another seed, another instance (except the deterministic grid) */
        if (f != MDSD_TOY_BERNOULLI) {
            double p[40], q[80], p2[40], q2[80];
            instance(&t, 0, 1, 0, p, 2, q);
            instance(&t, 0, 2, 0, p2, 2, q2);
            cr_assert(memcmp(p, p2, V * sizeof *p), "%s ignores the seed", mdsd_toy_family_name((mdsd_toy_family)f));
        }
    }
}
