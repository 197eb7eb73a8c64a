/* Decoding truncation (top-k, top-p; MATH.md §0.3) against a slow reference
 * that shares none of its code: the ranking by repeated selection, the top-p
 * cut decided exactly by Shewchuk's error-free expansions (not the library's
 * fixed-point sums), the divisor in long double. Also the exact sums
 * (src/core/xsum.c) against long double where long double is exact. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "xsum.h"

/* ---- the exact sums ------------------------------------------------------ */

static double xsum_of(const double *x, size_t n)
{
    mdsd_xsum s;
    mdsd_xsum_init(&s);
    for (size_t i = 0; i < n; i++)
        mdsd_xsum_add(&s, x[i]);
    return mdsd_xsum_round(&s);
}

Test(truncate, exact_sum_rounds_once)
{
    /* ties to even, the sticky bit, subnormals, the binade boundaries */
    double a[] = {1.0, 0x1p-53}, b[] = {1.0, 0x1p-53, 0x1p-1074}, c[] = {1.0 + 0x1p-52, 0x1p-53};
    cr_assert_eq(xsum_of(a, 2), 1.0);
    cr_assert_eq(xsum_of(b, 3), 1.0 + 0x1p-52);
    cr_assert_eq(xsum_of(c, 2), 1.0 + 0x1p-51);
    double d[] = {0x1p-1074, 0x1p-1074, 0x1p-1074}, e[] = {0x1p-1022 - 0x1p-1074, 0x1p-1074};
    cr_assert_eq(xsum_of(d, 3), 3 * 0x1p-1074);
    cr_assert_eq(xsum_of(e, 2), 0x1p-1022);
    double f[] = {0.1, 0.2}, g[] = {0.0};
    cr_assert_eq(xsum_of(f, 2), 0.30000000000000004); /* 0.1 + 0.2 rounds up once */
    cr_assert_eq(xsum_of(g, 1), 0.0);
    /* Random sums that long double holds exactly (at most 2^5 terms, each a
     * multiple of 2^-58 below 1, or of 2^-1074 below 2^-1015): one rounding
     * to double is the reference; the order of the terms does not matter. */
    gsl_rng *r = mdsd_rng_alloc(29);
    for (int t = 0; t < 20000; t++) {
        size_t n = 1 + gsl_rng_uniform_int(r, 32);
        int sub = t % 3 == 2;
        double x[32], y[32];
        long double ref = 0.0L;
        for (size_t i = 0; i < n; i++) {
            double u = ldexp(floor(ldexp(gsl_rng_uniform(r), 58)), -58);
            if (t % 3 == 1)
                u = ldexp(u, -(int)gsl_rng_uniform_int(r, 6)); /* fewer bits set near the top */
            x[i] = sub ? ldexp(u, -1015) : u;
            ref += x[i];
        }
        for (size_t i = 0; i < n; i++)
            y[i] = x[n - 1 - i];
        cr_assert_eq(xsum_of(x, n), (double)ref, "t = %d: %a vs %a", t, xsum_of(x, n), (double)ref);
        cr_assert_eq(xsum_of(y, n), (double)ref);
        mdsd_xsum sx, sy;
        mdsd_xsum_init(&sx);
        mdsd_xsum_init(&sy);
        for (size_t i = 0; i < n; i++)
            mdsd_xsum_add(&sx, x[i]), mdsd_xsum_add(&sy, i ? x[i] : nextafter(x[i], 1.0));
        cr_assert_eq(mdsd_xsum_cmp(&sx, &sx), 0);
        cr_assert_eq(mdsd_xsum_cmp(&sx, &sy), -1);
        cr_assert_eq(mdsd_xsum_cmp(&sy, &sx), 1);
    }
    gsl_rng_free(r);
}

/* ---- the slow reference ------------------------------------------------- */

/* Shewchuk's GROW-EXPANSION with zero elimination: e[0..n) (nonoverlapping,
 * increasing magnitude) += b exactly; returns the new length. */
static size_t grow(double *e, size_t n, double b)
{
    double q = b;
    size_t h = 0;
    for (size_t i = 0; i < n; i++) {
        double s = q + e[i], bv = s - q, av = s - bv;
        double lo = (q - av) + (e[i] - bv);
        q = s;
        if (lo != 0.0)
            e[h++] = lo;
    }
    if (q != 0.0 || h == 0)
        e[h++] = q;
    return h;
}

/* Ranks by repeated selection: the largest remaining value, the lower index
 * first among equals. */
static void rank_by_selection(const double *p, size_t V, size_t *order)
{
    char *taken = calloc(V, 1);
    for (size_t r = 0; r < V; r++) {
        size_t best = V;
        for (size_t i = 0; i < V; i++)
            if (!taken[i] && (best == V || p[i] > p[best]))
                best = i;
        taken[best] = 1;
        order[r] = best;
    }
    free(taken);
}

/* One cut of v in the given order: the first min(limit, positives) ranks,
 * shortened to the smallest prefix of exact mass >= P when P < 1. Writes the
 * kept values divided by their long double sum into out; returns the count. */
static size_t ref_cut(const double *v, size_t V, const size_t *order, size_t limit, double P, double *out)
{
    double *e = malloc((V + 2) * sizeof *e);
    size_t len = 1, m = 0;
    e[0] = -P;
    while (m < limit && v[order[m]] > 0.0) {
        if (P < 1.0 && m > 0 && e[len - 1] >= 0.0) /* the sign of the largest component */
            break;
        len = grow(e, len, v[order[m++]]);
    }
    long double s = 0.0L;
    for (size_t r = 0; r < m; r++)
        s += v[order[r]];
    for (size_t i = 0; i < V; i++)
        out[i] = 0.0;
    for (size_t r = 0; r < m; r++)
        out[order[r]] = (double)((long double)v[order[r]] / s);
    free(e);
    return m;
}

/* The library's result against the reference's: the same kept tokens, the
 * values within 2 ulp. */
static void assert_same(const double *got, const double *want, size_t V, const char *what, int inst)
{
    for (size_t i = 0; i < V; i++) {
        cr_assert_eq(got[i] == 0.0, want[i] == 0.0, "%s, instance %d, token %zu: %a vs %a", what, inst, i,
                     got[i], want[i]);
        cr_assert(fabs(got[i] - want[i]) <= 2 * DBL_EPSILON * want[i], "%s, instance %d, token %zu: %a vs %a",
                  what, inst, i, got[i], want[i]);
    }
}

/* A distribution of one of the hard kinds: random, tied levels, zeros,
 * near-one-hot, subnormal masses (softmax at T <= 0.05 with wide gaps), or
 * dyadic (every prefix mass exact, so P can equal one). */
static void hard_distribution(gsl_rng *r, int kind, size_t V, double *p)
{
    double q[16];
    switch (kind) {
    case 0: toy_distribution(r, TOY_DIRICHLET, V, p); break;
    case 1: toy_distribution(r, TOY_SPARSE, V, p); break;
    case 2: case 3: case 4: case 5: test_hard_pair(r, (unsigned)(kind - 2), V, p, q); break;
    default: { /* small integers over their total, or over a power of two (exact masses) */
        double t = 0.0;
        for (size_t i = 0; i < V; i++)
            t += p[i] = (double)gsl_rng_uniform_int(r, 5);
        if (t == 0.0)
            t = p[0] = 1.0;
        if (gsl_rng_uniform_int(r, 2)) {
            double pow2 = ldexp(1.0, (int)ceil(log2(t)));
            p[0] += pow2 - t;
            t = pow2;
        }
        for (size_t i = 0; i < V; i++)
            p[i] /= t;
    }
    }
}

/* A top-p value: random, an exact prefix mass of v in `order`, or one ulp
 * beside it. */
static double pick_P(gsl_rng *r, const double *v, const size_t *order, size_t V)
{
    unsigned how = (unsigned)gsl_rng_uniform_int(r, 4);
    if (how == 0)
        return 0.001 + 0.998 * gsl_rng_uniform(r);
    size_t m = 1 + gsl_rng_uniform_int(r, V);
    long double s = 0.0L;
    for (size_t i = 0; i < m; i++)
        s += v[order[i]];
    double P = (double)s;
    P = how == 2 ? nextafter(P, 0.0) : how == 3 ? nextafter(P, 2.0) : P;
    return P > 0.0 && P < 1.0 ? P : 0.5;
}

Test(truncate, truncate_matches_an_exact_slow_reference)
{
    gsl_rng *r = mdsd_rng_alloc(2929);
    int hit_exact = 0, combined = 0;
    for (int t = 0; t < 6000; t++) {
        size_t V = t % 10 == 9 ? 40 + gsl_rng_uniform_int(r, 160) : 1 + gsl_rng_uniform_int(r, 16);
        int kind = t % 7;
        if (kind >= 2 && kind <= 5 && V > 16)
            V = 16;
        double *p = malloc(V * sizeof *p), *got = malloc(V * sizeof *got), *want = malloc(V * sizeof *want);
        double *step = malloc(V * sizeof *step);
        size_t *order = malloc(V * sizeof *order);
        hard_distribution(r, kind, V, p);
        cr_assert_eq(mdsd_probs_validate(p, V, "p", NULL), MDSD_OK);
        rank_by_selection(p, V, order);
        size_t k = gsl_rng_uniform_int(r, 3) ? 1 + gsl_rng_uniform_int(r, V) : 0;
        double P = pick_P(r, p, order, V);
        /* top-p alone */
        memcpy(got, p, V * sizeof *p);
        cr_assert_eq(mdsd_truncate(got, V, 0, P, NULL), MDSD_OK);
        size_t m = ref_cut(p, V, order, V, P, want);
        assert_same(got, want, V, "top-p", t);
        long double s = 0.0L;
        for (size_t i = 0; i < m; i++)
            s += p[order[i]];
        hit_exact += s == (long double)P;
        /* top-k alone */
        memcpy(step, p, V * sizeof *p);
        cr_assert_eq(mdsd_truncate(step, V, k, 1.0, NULL), MDSD_OK);
        if (k > 0 && k < V) {
            ref_cut(p, V, order, k, 1.0, want);
            assert_same(step, want, V, "top-k", t);
        } else {
            cr_assert_eq(memcmp(step, p, V * sizeof *p), 0, "instance %d: k = %zu changed p", t, k);
        }
        /* both: top-p on the top-k distribution, in the untruncated order */
        P = pick_P(r, step, order, V);
        memcpy(got, p, V * sizeof *p);
        cr_assert_eq(mdsd_truncate(got, V, k, P, NULL), MDSD_OK);
        ref_cut(step, V, order, V, P, want);
        assert_same(got, want, V, "top-k + top-p", t);
        combined += k > 0 && k < V;
        /* P = 1, k = 0: untouched, bit for bit */
        memcpy(got, p, V * sizeof *p);
        cr_assert_eq(mdsd_truncate(got, V, 0, 1.0, NULL), MDSD_OK);
        cr_assert_eq(memcmp(got, p, V * sizeof *p), 0);
        free(p), free(got), free(want), free(step), free(order);
    }
    /* the instances reach the boundary cases they are meant to */
    cr_assert_gt(hit_exact, 300, "only %d instances with a prefix mass exactly P", hit_exact);
    cr_assert_gt(combined, 2500);
    gsl_rng_free(r);
}

/* A tiny P keeps exactly one token, the most likely (lower index among equals),
 * with probability exactly 1, even when every mass is subnormal-sized or the
 * masses are; with top-k too. P = 1 (k = 0) is the identity; P one ulp below 1
 * keeps what the exact reference keeps. */
Test(truncate, tiny_p_keeps_the_argmax_and_one_is_the_identity)
{
    const double tiny[] = {0x1p-1074, 0x1p-1060, DBL_MIN, 1e-300, 1e-17, 0x1p-60};
    gsl_rng *r = mdsd_rng_alloc(31);
    int subnormal_masses = 0;
    for (int t = 0; t < 3000; t++) {
        size_t V = 1 + gsl_rng_uniform_int(r, 16);
        double p[16], got[16], keep[16];
        hard_distribution(r, t % 7, V, p);
        cr_assert_eq(mdsd_probs_validate(p, V, "p", NULL), MDSD_OK);
        size_t best = 0;
        for (size_t i = 1; i < V; i++)
            best = p[i] > p[best] ? i : best;
        size_t positives = 0;
        for (size_t i = 0; i < V; i++) {
            positives += p[i] > 0.0;
            subnormal_masses += p[i] > 0.0 && p[i] < DBL_MIN;
        }
        for (size_t j = 0; j < sizeof tiny / sizeof *tiny; j++) {
            size_t k = t % 2 ? 1 + gsl_rng_uniform_int(r, V) : 0;
            memcpy(got, p, V * sizeof *p);
            cr_assert_eq(mdsd_truncate(got, V, k, tiny[j], NULL), MDSD_OK);
            for (size_t i = 0; i < V; i++)
                cr_assert_eq(got[i], i == best ? 1.0 : 0.0, "instance %d, P = %a, k = %zu, token %zu: %a", t,
                             tiny[j], k, i, got[i]);
        }
        memcpy(got, p, V * sizeof *p);
        cr_assert_eq(mdsd_truncate(got, V, 0, 1.0, NULL), MDSD_OK);
        cr_assert_eq(memcmp(got, p, V * sizeof *p), 0, "instance %d: P = 1 changed p", t);
        /* one ulp below 1: the reference decides how many */
        size_t order[16];
        rank_by_selection(p, V, order);
        memcpy(keep, p, V * sizeof *p);
        cr_assert_eq(mdsd_truncate(keep, V, 0, 1.0 - 0x1p-53, NULL), MDSD_OK);
        size_t m = ref_cut(p, V, order, V, 1.0 - 0x1p-53, got);
        assert_same(keep, got, V, "P = 1 - 2^-53", t);
        cr_assert(m >= 1 && m <= positives);
    }
    cr_assert_gt(subnormal_masses, 100, "only %d subnormal masses drawn", subnormal_masses);
    gsl_rng_free(r);
}

Test(truncate, boundary_ties_and_refusals)
{
    /* a prefix of mass exactly P stops there; ties at the cut keep the lower index */
    double p[5] = {0.125, 0.25, 0.25, 0.25, 0.125};
    cr_assert_eq(mdsd_truncate(p, 5, 0, 0.5, NULL), MDSD_OK);
    double want[5] = {0, 0.5, 0.5, 0, 0};
    cr_assert_arr_eq(p, want, sizeof want);
    double u[4] = {0.25, 0.25, 0.25, 0.25};
    cr_assert_eq(mdsd_truncate(u, 4, 0, 0.5 + 0x1p-53, NULL), MDSD_OK);
    double want3[4] = {1.0 / 3, 1.0 / 3, 1.0 / 3, 0};
    cr_assert_arr_eq(u, want3, sizeof want3);
    /* top-k then top-p on the renormalised top-k: (0.3, 0.3 | 0.2, 0.2), k = 2,
     * P = 0.5 keeps one token (the untruncated masses would keep two) */
    double c[4] = {0.3, 0.3, 0.2, 0.2};
    cr_assert_eq(mdsd_truncate(c, 4, 2, 0.5, NULL), MDSD_OK);
    double one[4] = {1, 0, 0, 0};
    cr_assert_arr_eq(c, one, sizeof one);
    /* exact masses: 0.4 + 0.3 is 0.70000000000000001110 (above the double 0.7,
     * below 0.7000000000000001, to which a floating sum would round) */
    double e1[3] = {0.3, 0.4, 0.3}, e2[3] = {0.3, 0.4, 0.3};
    cr_assert_eq(mdsd_truncate(e1, 3, 0, 0.7, NULL), MDSD_OK);
    cr_assert(e1[0] > 0 && e1[1] > 0 && e1[2] == 0);
    cr_assert_eq(mdsd_truncate(e2, 3, 0, 0.7000000000000001, NULL), MDSD_OK);
    cr_assert(e2[0] > 0 && e2[1] > 0 && e2[2] > 0);
    /* subnormal masses: kept by top-k and renormalised exactly, cut by top-p */
    double s1[3] = {1.0, 0x1p-1074, 0x1p-1060}, s2[3] = {1.0, 0x1p-1074, 0x1p-1060};
    cr_assert_eq(mdsd_truncate(s1, 3, 2, 1.0, NULL), MDSD_OK);
    cr_assert(s1[0] == 1.0 && s1[1] == 0.0 && s1[2] == 0x1p-1060);
    cr_assert_eq(mdsd_truncate(s2, 3, 0, 1.0 - 0x1p-53, NULL), MDSD_OK);
    cr_assert(s2[0] == 1.0 && s2[1] == 0.0 && s2[2] == 0.0);
    double bad[] = {0.0, -0.0, -0.1, 1.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double x[2] = {0.5, 0.5};
        mdsd_err err;
        cr_assert_eq(mdsd_truncate(x, 2, 0, bad[i], &err), MDSD_EINVAL, "top-p %g", bad[i]);
        cr_assert(strstr(err.msg, "top-p"), "%s", err.msg);
        cr_assert(x[0] == 0.5 && x[1] == 0.5);
    }
    double nan_p[2] = {NAN, 1.0}, zero[2] = {0.0, 0.0};
    cr_assert_eq(mdsd_truncate(nan_p, 2, 1, 1.0, NULL), MDSD_EINVAL);
    cr_assert_eq(mdsd_truncate(zero, 2, 0, 0.5, NULL), MDSD_EINVAL);
}

/* tests/python/test_top_p.py: the same cuts bit for bit against exact rationals
 * (Python's sort and Fractions), and the package's top_p checked as --top-p. */
Test(truncate, python_package_against_exact_rationals, .timeout = 600)
{
    char *out;
    int rc = test_run_shell("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_top_p", &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}
