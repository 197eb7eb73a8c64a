/* Distributions: softmax, temperature, truncation and every validation error. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"

Test(dist, softmax_matches_definition)
{
    double l[4] = {1.0, -2.0, 0.5, 3.0}, p[4];
    mdsd_err err;
    cr_assert_eq(mdsd_softmax(l, 4, 0.7, p, "t", &err), MDSD_OK);
    double z = 0.0;
    for (int i = 0; i < 4; i++)
        z += exp(l[i] / 0.7);
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(p[i], exp(l[i] / 0.7) / z, 1e-15);
}

/* The softmax's vectorised exp against libm over its whole range: p[i] / p[0]
 * = exp(l[i]) for l[0] = 0, within a few ulp (1 from the exp, the rest from
 * the normalisation), absolutely near the subnormals; 0 below -746. The
 * vector lengths cover the SIMD blocks and their tails. */
Test(dist, softmax_exp_is_within_a_few_ulp_of_libm)
{
    for (size_t V = 1; V <= 5003; V += V < 40 ? 1 : 997) {
        double *l = malloc(V * sizeof *l), *p = malloc(V * sizeof *p);
        float *lf = malloc(V * sizeof *lf);
        double *pf = malloc(V * sizeof *pf);
        l[0] = 0.0;
        lf[0] = 0.0f;
        for (size_t i = 1; i < V; i++) {
            l[i] = -750.0 * (double)i / (double)V * (i % 3 ? 1.0 : 0.01);
            lf[i] = (float)l[i];
        }
        cr_assert_eq(mdsd_softmax(l, V, 1.0, p, "t", NULL), MDSD_OK);
        cr_assert_eq(mdsd_softmax_float(lf, V, 1.0, pf, "t", NULL), MDSD_OK);
        for (size_t i = 1; i < V; i++) {
            double want = exp(l[i]), got = p[i] / p[0], wantf = exp((double)lf[i]);
            double gotf = pf[i] / pf[0];
            if (want > 1e-300) {
                cr_assert(fabs(got - want) <= 4 * DBL_EPSILON * want, "V %zu, exp(%.17g): %.17g, libm %.17g",
                          V, l[i], got, want);
                cr_assert(fabs(gotf - wantf) <= 4 * DBL_EPSILON * wantf);
            } else {
                cr_assert(fabs(p[i] - want * p[0]) <= 1e-305, "exp(%.17g): %.17g", l[i], p[i]);
            }
            if (l[i] < -746.0)
                cr_assert_eq(p[i], 0.0);
        }
        free(l), free(p), free(lf), free(pf);
    }
}

Test(dist, softmax_is_stable_for_huge_logits)
{
    double l[3] = {1000.0, 999.0, -1e308}, p[3];
    cr_assert_eq(mdsd_softmax(l, 3, 1.0, p, "t", NULL), MDSD_OK);
    cr_assert_float_eq(p[0], 1.0 / (1.0 + exp(-1.0)), 1e-15);
    cr_assert_eq(p[2], 0.0);
}

Test(dist, float_softmax_agrees_with_double)
{
    float lf[5] = {0.1f, 2.5f, -1.0f, 0.0f, 7.0f};
    double ld[5], pf[5], pd[5];
    for (int i = 0; i < 5; i++)
        ld[i] = lf[i];
    mdsd_softmax_float(lf, 5, 0.5, pf, "t", NULL);
    mdsd_softmax(ld, 5, 0.5, pd, "t", NULL);
    for (int i = 0; i < 5; i++)
        cr_assert_float_eq(pf[i], pd[i], 1e-15);
}

Test(dist, zero_temperature_is_argmax_with_lowest_index_on_ties)
{
    double l[5] = {1.0, 3.0, -INFINITY, 3.0, 2.0}, p[5];
    cr_assert_eq(mdsd_softmax(l, 5, 0.0, p, "t", NULL), MDSD_OK);
    double want[5] = {0, 1, 0, 0, 0};
    cr_assert_arr_eq(p, want, sizeof want);
}

Test(dist, minus_infinity_logits_are_legal)
{
    double l[3] = {-INFINITY, 0.0, 0.0}, p[3];
    cr_assert_eq(mdsd_softmax(l, 3, 1.0, p, "t", NULL), MDSD_OK);
    cr_assert_eq(p[0], 0.0);
    cr_assert_float_eq(p[1], 0.5, 1e-15);
}

Test(dist, logit_errors_name_the_index)
{
    mdsd_err err;
    double p[3];
    double nan_l[3] = {0.0, NAN, 1.0};
    cr_assert_eq(mdsd_softmax(nan_l, 3, 1.0, p, "target", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "target") && strstr(err.msg, "index 1") && strstr(err.msg, "NaN"),
              "%s", err.msg);
    double inf_l[3] = {0.0, 1.0, INFINITY};
    cr_assert_eq(mdsd_softmax(inf_l, 3, 1.0, p, "draft", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "index 2") && strstr(err.msg, "+inf"), "%s", err.msg);
    double all_minf[2] = {-INFINITY, -INFINITY};
    cr_assert_eq(mdsd_softmax(all_minf, 2, 1.0, p, "target", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "every logit is -inf"), "%s", err.msg);
    double ok[2] = {0.0, 1.0};
    cr_assert_eq(mdsd_softmax(ok, 2, -0.5, p, "target", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "temperature"), "%s", err.msg);
    cr_assert_eq(mdsd_softmax(ok, 0, 1.0, p, "target", &err), MDSD_EINVAL);
}

Test(dist, probability_errors_name_the_index)
{
    mdsd_err err;
    double neg[3] = {0.5, -0.1, 0.6};
    cr_assert_eq(mdsd_probs_validate(neg, 3, "target", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "index 1") && strstr(err.msg, "negative"), "%s", err.msg);
    double nanp[2] = {NAN, 1.0};
    cr_assert_eq(mdsd_probs_validate(nanp, 2, "draft", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "draft") && strstr(err.msg, "index 0") && strstr(err.msg, "NaN"),
              "%s", err.msg);
    double infp[2] = {0.0, INFINITY};
    cr_assert_eq(mdsd_probs_validate(infp, 2, "draft", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "index 1") && strstr(err.msg, "infinite"), "%s", err.msg);
    double off[2] = {0.5, 0.5 + 2e-6};
    cr_assert_eq(mdsd_probs_validate(off, 2, "target", &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "sum"), "%s", err.msg);
}

/* The one-pass copy gives validate's bits and validate's errors. */
Test(dist, validate_copy_matches_validate)
{
    gsl_rng *r = mdsd_rng_alloc(5);
    double a[37], b[37], src[37];
    for (int it = 0; it < 60; it++) {
        size_t V = 1 + (size_t)it % 37;
        for (size_t i = 0; i < V; i++)
            src[i] = gsl_rng_uniform(r);
        double s = mdsd_sum(src, V);
        for (size_t i = 0; i < V; i++)
            src[i] = src[i] / s * (1.0 + (it % 3 == 1 ? 3e-7 : it % 3 == 2 ? 3e-6 : 0.0));
        if (it % 10 == 7)
            src[V / 2] = it % 20 == 7 ? NAN : -0.25;
        memcpy(a, src, V * sizeof *a);
        mdsd_err ea, eb;
        int ra = mdsd_probs_validate(a, V, "t", &ea), rb = mdsd_probs_validate_copy(src, V, b, "t", &eb);
        cr_assert_eq(ra, rb, "it %d", it);
        if (ra == MDSD_OK)
            cr_assert_arr_eq(a, b, V * sizeof *a, "it %d", it);
        else
            cr_assert_str_eq(ea.msg, eb.msg);
    }
    gsl_rng_free(r);
}

Test(dist, near_normalised_probabilities_are_renormalised)
{
    double p[2] = {0.5, 0.5 + 5e-7};
    cr_assert_eq(mdsd_probs_validate(p, 2, "target", NULL), MDSD_OK);
    cr_assert_float_eq(p[0] + p[1], 1.0, 1e-15);
    cr_assert_float_eq(p[0], 0.5 / (1.0 + 5e-7), 1e-15);
}

Test(dist, top_k_keeps_the_k_most_likely_with_ties_to_lower_index)
{
    double p[5] = {0.2, 0.3, 0.1, 0.2, 0.2};
    cr_assert_eq(mdsd_truncate(p, 5, 2, 1.0, NULL), MDSD_OK);
    cr_assert_float_eq(p[1], 0.6, 1e-15);
    cr_assert_float_eq(p[0], 0.4, 1e-15);
    cr_assert(p[2] == 0 && p[3] == 0 && p[4] == 0);
}

Test(dist, top_p_keeps_the_smallest_prefix_reaching_the_mass)
{
    double p[4] = {0.1, 0.4, 0.3, 0.2};
    cr_assert_eq(mdsd_truncate(p, 4, 0, 0.65, NULL), MDSD_OK);
    cr_assert_float_eq(p[1], 0.4 / 0.7, 1e-15);
    cr_assert_float_eq(p[2], 0.3 / 0.7, 1e-15);
    cr_assert(p[0] == 0 && p[3] == 0);
    double q[2] = {0.5, 0.5};
    cr_assert_eq(mdsd_truncate(q, 2, 0, 0.0, NULL), MDSD_EINVAL);
}

Test(dist, compensated_sum_beats_naive_summation)
{
    static double x[100001];
    x[0] = 1.0;
    for (int i = 1; i <= 100000; i++)
        x[i] = 1e-16;
    cr_assert_float_eq(mdsd_sum(x, 100001), 1.0 + 1e-11, 1e-15);
}

Test(dist, argmax_and_top_indices_break_ties_low)
{
    double x[6] = {0.1, 0.3, 0.3, 0.05, 0.2, 0.05};
    cr_assert_eq(mdsd_argmax(x, 6), 1);
    int top[4];
    mdsd_top_indices(x, 6, 4, top);
    int want[4] = {1, 2, 4, 0};
    cr_assert_arr_eq(top, want, sizeof want);
}

/* The lane-parallel compensated sum against a long double reference on sums
 * with heavy cancellation and every length up to a few lanes' worth. */
Test(dist, compensated_sum_is_accurate_on_cancellation)
{
    gsl_rng *r = mdsd_rng_alloc(3);
    double x[203];
    for (size_t n = 0; n <= 203; n++) {
        long double ref = 0.0L, mag = 0.0L;
        for (size_t i = 0; i < n; i++) {
            double u = gsl_rng_uniform(r);
            x[i] = (u - 0.5) * pow(10.0, (double)(i % 9) - 4.0);
            if (i % 11 == 3)
                x[i] = 1e15;
            if (i % 11 == 7)
                x[i] = -1e15;
        }
        /* the reference adds the +-1e15 terms apart (exactly) from the rest */
        long double big = 0.0L;
        for (size_t i = 0; i < n; i++) {
            if (fabs(x[i]) == 1e15)
                big += x[i];
            else
                ref += x[i];
            mag += fabsl((long double)x[i]);
        }
        ref += big;
        double got = mdsd_sum(x, n);
        cr_assert(fabsl((long double)got - ref) <= 2 * DBL_EPSILON * fabsl(ref) + 1e-30L * mag + 1e-300,
                  "n = %zu: %.17g, reference %.17Lg", n, got, ref);
    }
    gsl_rng_free(r);
}

/* The one-pass top-k (k <= 64) against repeated selection (k > 64 runs the
 * selection itself): the same indices, ties to the lower index. */
Test(dist, top_indices_one_pass_agrees_with_selection)
{
    gsl_rng *r = mdsd_rng_alloc(4);
    size_t n = 300;
    double x[300];
    int fast[80], slow[80];
    for (int it = 0; it < 40; it++) {
        for (size_t i = 0; i < n; i++)
            x[i] = (double)gsl_rng_uniform_int(r, it % 2 ? 7 : 1000) / 7.0;
        size_t k = 1 + (size_t)it % 64;
        mdsd_top_indices(x, n, k, fast);
        for (size_t a = 0; a < k; a++) {
            size_t best = n;
            for (size_t i = 0; i < n; i++) {
                int taken = 0;
                for (size_t b = 0; b < a; b++)
                    taken |= slow[b] == (int)i;
                if (!taken && (best == n || x[i] > x[best]))
                    best = i;
            }
            slow[a] = (int)best;
        }
        cr_assert_arr_eq(fast, slow, k * sizeof *fast, "it %d, k = %zu", it, k);
    }
    gsl_rng_free(r);
}

Test(parse, vectors_ranges_and_errors)
{
    double *v;
    size_t n;
    mdsd_err err;
    cr_assert_eq(mdsd_parse_vector("0.25, 0.75", "--target", &v, &n, &err), MDSD_OK);
    cr_assert(n == 2 && v[0] == 0.25 && v[1] == 0.75);
    free(v);
    cr_assert_eq(mdsd_parse_vector("0.25,abc", "--target", &v, &n, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "--target") && strstr(err.msg, "value 1") && strstr(err.msg, "abc"),
              "%s", err.msg);
    cr_assert_eq(mdsd_parse_vector("@/nonexistent/file", "--draft", &v, &n, &err), MDSD_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/file"), "%s", err.msg);
    cr_assert_eq(mdsd_parse_range("0.5:1.0:0.25", "--temperatures", &v, &n, &err), MDSD_OK);
    cr_assert(n == 3 && v[2] == 1.0);
    free(v);
}

Test(parse, vector_from_file_with_comments)
{
    char path[] = "/tmp/mdsd-test-vecXXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# a comment\n0.5\n\n0.25 # inline\n0.25\n");
    fclose(f);
    char spec[64];
    snprintf(spec, sizeof spec, "@%s", path);
    double *v;
    size_t n;
    cr_assert_eq(mdsd_parse_vector(spec, "--target", &v, &n, NULL), MDSD_OK);
    cr_assert(n == 3 && v[0] == 0.5 && v[1] == 0.25);
    free(v);
    remove(path);
}

/* @FILE of .npy, against numpy itself: numpy.save writes each dtype and byte order, and the
 * values numpy reads back (as float64, printed with repr: exact) are what we must read, bit
 * for bit, including subnormals, negative zero and float16's extremes. */
Test(parse, npy_files_read_as_numpy_reads_them)
{
    char dir[] = "/tmp/mdsd-test-npyXXXXXX", cmd[2048];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cd %s && /usr/bin/python3 -c '\n"
             "import numpy as np\n"
             "x = np.array([0.5, 0.3, 1e-310, -0.0, 65504.0, 6e-8, 1/3, 2.0**-149, 7.0])\n"
             "for t in (\"<f8\", \">f8\", \"<f4\", \">f4\", \"<f2\", \">f2\"):\n"
             "    y = x.astype(t)\n"
             "    np.save(t[1:] + (\"b\" if t[0] == \">\" else \"l\") + \".npy\", y)\n"
             "    open(t[1:] + (\"b\" if t[0] == \">\" else \"l\") + \".txt\", \"w\").write("
             "\"\\n\".join(repr(float(v)) for v in y.astype(np.float64)))\n'",
             dir);
    free(test_shell_ok(cmd));
    const char *names[] = {"f8l", "f8b", "f4l", "f4b", "f2l", "f2b"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char npy[128], txt[128];
        snprintf(npy, sizeof npy, "@%s/%s.npy", dir, names[k]);
        snprintf(txt, sizeof txt, "@%s/%s.txt", dir, names[k]);
        double *a, *b;
        size_t na, nb;
        mdsd_err err;
        cr_assert_eq(mdsd_parse_vector(npy, "--target", &a, &na, &err), MDSD_OK, "%s: %s",
                     names[k], err.msg);
        cr_assert_eq(mdsd_parse_vector(txt, "--target", &b, &nb, &err), MDSD_OK, "%s", err.msg);
        cr_assert_eq(na, 9);
        cr_assert_eq(na, nb);
        for (size_t i = 0; i < na; i++)
            cr_assert(memcmp(&a[i], &b[i], sizeof a[i]) == 0, "%s[%zu]: %.17g, numpy %.17g",
                      names[k], i, a[i], b[i]);
        free(a);
        free(b);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

Test(stats, welford_matches_two_pass_and_merges)
{
    double x[7] = {1, 2, 4, 8, 16, 32, 64};
    mdsd_welford a, b, all;
    mdsd_welford_init(&a), mdsd_welford_init(&b), mdsd_welford_init(&all);
    double mean = 0;
    for (int i = 0; i < 7; i++) {
        mdsd_welford_add(i < 3 ? &a : &b, x[i]);
        mdsd_welford_add(&all, x[i]);
        mean += x[i] / 7;
    }
    double var = 0;
    for (int i = 0; i < 7; i++)
        var += (x[i] - mean) * (x[i] - mean) / 6;
    mdsd_welford_merge(&a, &b);
    cr_assert_float_eq(a.mean, mean, 1e-12);
    cr_assert_float_eq(mdsd_welford_variance(&a), var, 1e-9);
    cr_assert_float_eq(mdsd_welford_variance(&all), var, 1e-9);
}

Test(stats, chisq_accepts_a_fair_die_and_rejects_a_loaded_one)
{
    gsl_rng *r = mdsd_rng_alloc(42);
    double prob[6] = {1. / 6, 1. / 6, 1. / 6, 1. / 6, 1. / 6, 1. / 6};
    uint64_t fair[6] = {0}, loaded[6] = {0};
    for (int t = 0; t < 60000; t++) {
        fair[gsl_rng_uniform_int(r, 6)]++;
        double u = gsl_rng_uniform(r);
        loaded[u < 0.18 ? 0 : 1 + gsl_rng_uniform_int(r, 5)]++;
    }
    gsl_rng_free(r);
    cr_assert_gt(mdsd_chisq_gof(fair, prob, 6, 5.0).p_value, 1e-6);
    cr_assert_lt(mdsd_chisq_gof(loaded, prob, 6, 5.0).p_value, 1e-6);
    uint64_t impossible[2] = {10, 1};
    double half[2] = {1.0, 0.0};
    cr_assert_eq(mdsd_chisq_gof(impossible, half, 2, 5.0).p_value, 0.0);
}

Test(rng, streams_are_reproducible_and_distinct)
{
    gsl_rng *a = mdsd_rng_alloc(mdsd_seed_mix(7, 3, mdsd_seed_name("rrs")));
    gsl_rng *b = mdsd_rng_alloc(mdsd_seed_mix(7, 3, mdsd_seed_name("rrs")));
    gsl_rng *c = mdsd_rng_alloc(mdsd_seed_mix(7, 4, mdsd_seed_name("rrs")));
    int same_ab = 1, same_ac = 1;
    for (int i = 0; i < 100; i++) {
        unsigned long x = gsl_rng_get(a), y = gsl_rng_get(b), z = gsl_rng_get(c);
        same_ab &= x == y;
        same_ac &= x == z;
    }
    cr_assert(same_ab);
    cr_assert(!same_ac);
    gsl_rng_free(a), gsl_rng_free(b), gsl_rng_free(c);
}
