/* test_keysort.c - the one sort kernel (src/core/keysort.c) against qsort:
 * tokens by a double key, ascending and descending, ties by increasing
 * token, to exact order equality, on random keys, exact ties, ties up to a
 * few ulps (as the softmax of quantised logits makes), keys that round to
 * one float but differ by more than 2^32 ulps (float underflow and
 * overflow), subnormals, zeros of both signs and +inf; sizes around every
 * threshold of the kernel (insertion sort at <= 48, run fix-ups at <= 32).
 * The one-bucket route (17 varying key bits, qporder.h) and the radix sort
 * of words with a moving index (the set law's tuple sort, lp.c) the same.
 * The logit order (mdsd_keysort_logit_gap: ot's layout, gbv's ranks)
 * against qsort by the exact gap (hi, lo), ties by token.
 * Planted errors caught here (by hand, once): the run fix-up skipped, ties
 * in the ulp counting sort reversed, the 17-bit route given a 16-bit
 * range; the logit order's runs of equal hi left in token order, and -0
 * not taken as +0. */
#include <criterion/criterion.h>
#include <float.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "keysort.h"
#include "testutil.h"

typedef struct {
    double key;
    uint32_t token;
} entry;

static bool g_desc;

static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    double kx = x->key + 0.0, ky = y->key + 0.0;
    if (kx != ky)
        return (g_desc ? kx > ky : kx < ky) ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

/* The reference: qsort of (key, token) by key, ties by token. */
static void reference(const double *key, size_t m, bool desc, uint32_t *out)
{
    entry *e = malloc((m ? m : 1) * sizeof *e);
    for (size_t t = 0; t < m; t++)
        e[t] = (entry){key[t], (uint32_t)t};
    g_desc = desc;
    qsort(e, m, sizeof *e, by_key);
    for (size_t i = 0; i < m; i++)
        out[i] = e[i].token;
    free(e);
}

enum { KINDS = 9 };

/* Keys of kind k: 0 random, 1 a few exact values, 2 ties up to 200 ulps
 * (the counting sort), 3 one float apart by far more than 2^32 ulps
 * (underflow: qsort), 4 subnormal and tiny, 5 +0, -0 and +inf among random,
 * 6 beyond float range (overflow), 7 mixed, 8 up to 10^5 ulps apart (the
 * radix sort on the distance). */
static double key_of(gsl_rng *r, int kind, size_t t)
{
    double u = gsl_rng_uniform(r);
    switch (kind) {
    case 0: return u;
    case 1: return (double)(gsl_rng_uniform_int(r, 5)) * 0.25;
    case 2: return 0.3 * (1.0 + DBL_EPSILON * (double)gsl_rng_uniform_int(r, 200));
    case 3: return 1e-60 * u;
    case 4: return u < 0.3 ? 0.0 : u < 0.6 ? DBL_MIN * u * 1e-10 : 1e-310 * u;
    case 5: return u < 0.2 ? 0.0 : u < 0.4 ? -0.0 : u < 0.5 ? INFINITY : u;
    case 6: return u < 0.5 ? 1e300 * u : 3.5e38 * (1.0 + u);
    case 7: return key_of(r, (int)(t % 7), t);
    default: return 0.3 * (1.0 + DBL_EPSILON * (double)gsl_rng_uniform_int(r, 100000));
    }
}

Test(keysort, tokens_by_double_key_equal_qsort)
{
    gsl_rng *r = mdsd_rng_alloc(2626);
    static const size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 47, 48, 49, 50, 300, 5000, 70000};
    size_t cap = 70000;
    mdsd_keysort ks;
    cr_assert_eq(mdsd_keysort_init(&ks, cap, NULL), MDSD_OK);
    double *key = malloc(cap * sizeof *key);
    uint32_t *got = malloc(cap * sizeof *got), *want = malloc(cap * sizeof *want);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = 0; kind < KINDS; kind++)
            for (int desc = 0; desc < 2; desc++) {
                size_t m = sizes[si];
                for (size_t t = 0; t < m; t++)
                    key[t] = key_of(r, kind, t);
                mdsd_keysort_tokens(&ks, key, desc, m, got);
                reference(key, m, desc, want);
                for (size_t i = 0; i < m; i++)
                    cr_assert_eq(got[i], want[i], "m = %zu, kind %d, %s: position %zu holds token "
                                 "%u (key %.17g), qsort has %u (key %.17g)", m, kind,
                                 desc ? "descending" : "ascending", i, got[i], key[got[i]],
                                 want[i], key[want[i]]);
            }
    mdsd_keysort_destroy(&ks);
    free(key), free(got), free(want);
    gsl_rng_free(r);
}

/* Words of one bucket of the sort-free route (float keys sharing their top
 * 15 bits: ratios in [1, 1 + 2^-6)), sorted with 17 varying bits. */
Test(keysort, one_bucket_route_equals_qsort)
{
    gsl_rng *r = mdsd_rng_alloc(2627);
    size_t cap = 4000;
    mdsd_keysort ks;
    cr_assert_eq(mdsd_keysort_init(&ks, cap, NULL), MDSD_OK);
    double *key = malloc(cap * sizeof *key);
    uint32_t *got = malloc(cap * sizeof *got), *want = malloc(cap * sizeof *want);
    for (int it = 0; it < 12; it++) {
        size_t m = it < 4 ? 40 + (size_t)it * 5 : 100 + gsl_rng_uniform_int(r, cap - 100);
        for (size_t t = 0; t < m; t++) {
            double u = gsl_rng_uniform(r);
            key[t] = it % 3 == 0 ? 1.0 + 0.015 * (double)gsl_rng_uniform_int(r, 8) * 0.125
                                 : 1.0 + 0.0155 * u;
        }
        for (size_t t = 0; t < m; t++)
            ks.w[t] = (uint64_t)mdsd_keysort_float_key(key[t], true) << 32 | t;
        for (size_t t = 1; t < m; t++)
            cr_assert_eq(ks.w[t] >> 49, ks.w[0] >> 49, "the test's keys leave one bucket");
        mdsd_keysort_words(&ks, key, true, ks.w, m, 17, got);
        reference(key, m, true, want);
        for (size_t i = 0; i < m; i++)
            cr_assert_eq(got[i], want[i], "it %d, m = %zu, position %zu", it, m, i);
    }
    mdsd_keysort_destroy(&ks);
    free(key), free(got), free(want);
    gsl_rng_free(r);
}

typedef struct {
    uint64_t word;
    uint32_t idx;
} pair;

static unsigned g_lo, g_hi;

static uint64_t field(uint64_t w)
{
    uint64_t x = w >> g_lo;
    return g_hi - g_lo == 64 ? x : x & (((uint64_t)1 << (g_hi - g_lo)) - 1);
}

static int by_field_then_idx(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    uint64_t fx = field(x->word), fy = field(y->word);
    if (fx != fy)
        return fx < fy ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx); /* stable: the input order */
}

Test(keysort, radix_sort_of_words_is_stable_on_bit_ranges)
{
    gsl_rng *r = mdsd_rng_alloc(2628);
    static const unsigned range[][3] = {{0, 64, 8}, {0, 64, 16}, {32, 64, 11}, {32, 49, 9},
                                        {32, 64, 8}, {5, 23, 7}, {0, 64, 11}};
    size_t cap = 70000;
    uint64_t *w = malloc(2 * cap * sizeof *w);
    uint32_t *idx = malloc(2 * cap * sizeof *idx);
    uint32_t *count = malloc(MDSD_RADIX_COUNT(0, 64, 16) * sizeof *count);
    pair *ref = malloc(cap * sizeof *ref);
    for (size_t ri = 0; ri < sizeof range / sizeof *range; ri++)
        for (int it = 0; it < 3; it++) {
            size_t m = it == 0 ? 1 + gsl_rng_uniform_int(r, 60) : it == 1 ? 3000 : cap;
            for (size_t i = 0; i < m; i++) {
                uint64_t x = (uint64_t)gsl_rng_get(r) << 32 ^ (uint64_t)gsl_rng_get(r);
                if (i % 3 == 0) /* ties and digits shared by every word */
                    x &= 0xff00ff00000f00ffULL;
                w[i] = x;
                idx[i] = (uint32_t)i;
                ref[i] = (pair){x, (uint32_t)i};
            }
            g_lo = range[ri][0], g_hi = range[ri][1];
            qsort(ref, m, sizeof *ref, by_field_then_idx);
            uint32_t *io = idx;
            uint64_t *s = mdsd_radix_sort(w, w + cap, &io, idx + cap, m, range[ri][0], range[ri][1],
                                          range[ri][2], count);
            for (size_t i = 0; i < m; i++) {
                cr_assert_eq(s[i], ref[i].word, "bits [%u, %u) by %u: position %zu", g_lo, g_hi,
                             range[ri][2], i);
                cr_assert_eq(io[i], ref[i].idx, "bits [%u, %u) by %u: index at %zu", g_lo, g_hi,
                             range[ri][2], i);
            }
        }
    free(w), free(idx), free(count), free(ref);
    gsl_rng_free(r);
}

/* ---- the logit order ---------------------------------------------------------------------- */

typedef struct {
    double hi, lo;
    uint32_t tok;
} gap_entry;

/* gbv's by_logit_rank and ot's former comparator: hi, then lo, then token
 * (-0 == +0 as doubles compare). */
static int by_gap(const void *a, const void *b)
{
    const gap_entry *x = a, *y = b;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->tok > y->tok) - (x->tok < y->tok);
}

/* Logits of kind k: 0 N(0, 3); 1 small integers (exact ties of the gap);
 * 2 zp = +-2^60, zq tiny (every hi equal, the lo differ: the run fix-up);
 * 3 zeros of both signs (hi = -0 and +0); 4 +-1e30 against +-1e-30;
 * 5 mixed. */
static void logits_of(gsl_rng *r, int kind, size_t t, float *zp, float *zq)
{
    double u = gsl_rng_uniform(r), v = gsl_rng_uniform(r);
    switch (kind) {
    case 0: *zp = (float)(3.0 * gsl_ran_gaussian(r, 1.0)), *zq = (float)(3.0 * gsl_ran_gaussian(r, 1.0)); return;
    case 1: *zp = (float)gsl_rng_uniform_int(r, 4), *zq = (float)gsl_rng_uniform_int(r, 4); return;
    case 2: *zp = u < 0.5 ? 0x1p60f : -0x1p60f, *zq = (float)(1e-3 * v) * (u < 0.25 ? -1.0f : 1.0f); return;
    case 3: *zp = u < 0.5 ? -0.0f : 0.0f, *zq = v < 0.3 ? 0.0f : v < 0.6 ? -0.0f : (float)(v - 0.8); return;
    case 4: *zp = (float)(u < 0.5 ? 1e30 * v : -1e30 * v), *zq = (float)(u < 0.7 ? 1e-30 * u : -1e-30 * v); return;
    default: logits_of(r, (int)(t % 5), t, zp, zq);
    }
}

Test(keysort, logit_gap_order_equals_qsort)
{
    gsl_rng *r = mdsd_rng_alloc(2628);
    static const size_t sizes[] = {0, 1, 2, 3, 50, 1000, 70000};
    size_t cap = 70000;
    mdsd_keysort ks;
    cr_assert_eq(mdsd_keysort_init(&ks, cap, NULL), MDSD_OK);
    float *zp = malloc(cap * sizeof *zp), *zq = malloc(cap * sizeof *zq);
    uint32_t *got = malloc(cap * sizeof *got);
    gap_entry *want = malloc(cap * sizeof *want);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = 0; kind < 6; kind++) {
            size_t m = sizes[si];
            for (size_t t = 0; t < m; t++) {
                logits_of(r, kind, t, &zp[t], &zq[t]);
                got[t] = (uint32_t)t;
                want[t].tok = (uint32_t)t;
                mdsd_logit_gap(zp[t], zq[t], &want[t].hi, &want[t].lo);
            }
            qsort(want, m, sizeof *want, by_gap);
            mdsd_keysort_logit_gap(&ks, zp, zq, got, m);
            for (size_t i = 0; i < m; i++)
                cr_assert_eq(got[i], want[i].tok, "m = %zu, kind %d: position %zu holds token %u "
                             "(zp %.9g, zq %.9g), qsort has %u (zp %.9g, zq %.9g)", m, kind, i,
                             got[i], zp[got[i]], zq[got[i]], want[i].tok, zp[want[i].tok],
                             zq[want[i].tok]);
        }
    /* a subset of the tokens, as the callers pass (one class of a node's tokens) */
    size_t m = 0;
    for (size_t t = 0; t < cap; t += 3) {
        logits_of(r, 5, t, &zp[t], &zq[t]);
        got[m] = (uint32_t)t;
        want[m].tok = (uint32_t)t;
        mdsd_logit_gap(zp[t], zq[t], &want[m].hi, &want[m].lo);
        m++;
    }
    qsort(want, m, sizeof *want, by_gap);
    mdsd_keysort_logit_gap(&ks, zp, zq, got, m);
    for (size_t i = 0; i < m; i++)
        cr_assert_eq(got[i], want[i].tok, "subset: position %zu", i);
    mdsd_keysort_destroy(&ks);
    free(zp), free(zq), free(got), free(want);
    gsl_rng_free(r);
}
