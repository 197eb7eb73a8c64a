/* keysort.c - tokens by a double key, and the radix sort under it (keysort.h). */
#include "keysort.h"

#include <stdlib.h>

#include "dist.h"

/* One histogram pass over the words for `digits` digits (1 to 3 unrolled). */
static void histograms(const uint64_t *w, size_t m, unsigned lo, unsigned width, unsigned digits,
                       const uint64_t *mask, size_t buckets, uint32_t *count)
{
    uint32_t *c0 = count, *c1 = count + buckets, *c2 = count + 2 * buckets;
    unsigned s1 = lo + width, s2 = lo + 2 * width;
    if (digits == 1)
        for (size_t i = 0; i < m; i++)
            c0[(w[i] >> lo) & mask[0]]++;
    else if (digits == 2)
        for (size_t i = 0; i < m; i++) {
            uint64_t x = w[i];
            c0[(x >> lo) & mask[0]]++;
            c1[(x >> s1) & mask[1]]++;
        }
    else if (digits == 3)
        for (size_t i = 0; i < m; i++) {
            uint64_t x = w[i];
            c0[(x >> lo) & mask[0]]++;
            c1[(x >> s1) & mask[1]]++;
            c2[(x >> s2) & mask[2]]++;
        }
    else
        for (size_t i = 0; i < m; i++)
            for (unsigned d = 0; d < digits; d++)
                count[d * buckets + ((w[i] >> (lo + d * width)) & mask[d])]++;
}

uint64_t *mdsd_radix_sort(uint64_t *w, uint64_t *tmp, uint32_t **idx, uint32_t *idx_tmp, size_t m,
                          unsigned lo, unsigned hi, unsigned width, uint32_t *count)
{
    if (m < 2)
        return w;
    unsigned digits = (hi - lo + width - 1) / width;
    size_t buckets = (size_t)1 << width;
    uint64_t mask[64];
    for (unsigned d = 0; d < digits; d++) {
        unsigned bits = hi - (lo + d * width) < width ? hi - (lo + d * width) : width;
        mask[d] = ((uint64_t)1 << bits) - 1;
    }
    memset(count, 0, digits * buckets * sizeof *count);
    histograms(w, m, lo, width, digits, mask, buckets, count);
    uint32_t *from_i = idx ? *idx : NULL, *to_i = idx_tmp;
    for (unsigned d = 0; d < digits; d++) {
        uint32_t *c = count + d * buckets;
        unsigned sh = lo + d * width;
        uint64_t mk = mask[d];
        if (c[(w[0] >> sh) & mk] == m)
            continue; /* every word has this digit: the pass would move nothing */
        uint32_t sum = 0;
        for (size_t b = 0; b <= mk; b++) {
            uint32_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        if (from_i)
            for (size_t i = 0; i < m; i++) {
                uint32_t at = c[(w[i] >> sh) & mk]++;
                tmp[at] = w[i];
                to_i[at] = from_i[i];
            }
        else
            for (size_t i = 0; i < m; i++) {
                uint64_t x = w[i];
                tmp[c[(x >> sh) & mk]++] = x;
            }
        uint64_t *t = w;
        w = tmp, tmp = t;
        uint32_t *ti = from_i;
        from_i = to_i, to_i = ti;
    }
    if (idx)
        *idx = from_i;
    return w;
}

/* ---- tokens by a double key ----------------------------------------------- */

typedef struct {
    double key;
    uint32_t token;
} ranked;

static int by_key_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

static int by_key_asc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

int mdsd_keysort_init(mdsd_keysort *ks, size_t cap, mdsd_err *err)
{
    size_t n = cap ? cap : 1;
    ks->cap = cap;
    ks->w = malloc(n * sizeof *ks->w);
    ks->tmp = malloc(n * sizeof *ks->tmp);
    ks->run = malloc(n * sizeof(ranked));
    if (!ks->w || !ks->tmp || !ks->run) {
        mdsd_keysort_destroy(ks);
        return mdsd_fail(err, MDSD_ENOMEM, "sort: out of memory for %zu tokens", cap);
    }
    return MDSD_OK;
}

void mdsd_keysort_destroy(mdsd_keysort *ks)
{
    free(ks->w), free(ks->tmp), free(ks->run);
    ks->w = ks->tmp = NULL, ks->run = NULL, ks->cap = 0;
}

static inline uint64_t double_bits(double x)
{
    x += 0.0; /* -0 + 0 = +0 */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Insertion sort of w[0..m) ascending (the whole word: key, then token). */
static void insertion_sort(uint64_t *w, size_t m)
{
    for (size_t i = 1; i < m; i++) {
        uint64_t x = w[i];
        size_t j = i;
        for (; j > 0 && w[j - 1] > x; j--)
            w[j] = w[j - 1];
        w[j] = x;
    }
}

/* Sorts words (distance << 32 | token) ascending: insertion sort when
 * short, else radix on the distance in 8-bit digits. */
static void sort_distances(uint64_t *w, uint64_t *tmp, size_t m)
{
    if (m <= 32) {
        insertion_sort(w, m);
        return;
    }
    uint32_t count[MDSD_RADIX_COUNT(32, 64, 8)];
    uint64_t *sorted = mdsd_radix_sort(w, tmp, NULL, NULL, m, 32, 64, 8, count);
    if (sorted != w)
        memcpy(w, sorted, m * sizeof *w);
}

/* One run order[0..len) of equal float keys put in the order of the double
 * keys (its bit patterns, gathered into bits[], are monotone in them for
 * keys >= +0): ties keep the run's order, which is the tokens'. */
static void fix_run(mdsd_keysort *ks, const double *key, bool desc, uint32_t *order, size_t len,
                    uint64_t *bits)
{
    enum { SPAN_MAX = 255 };
    uint64_t hi = 0, lo = UINT64_MAX;
    for (size_t i = 0; i < len; i++) {
        uint64_t b = double_bits(key[order[i]]);
        bits[i] = b;
        hi = b > hi ? b : hi;
        lo = b < lo ? b : lo;
    }
    if (hi == lo)
        return;
    /* the distance from the run's first key in the sort's direction */
    uint64_t base = desc ? hi : lo;
    for (size_t i = 0; i < len; i++)
        bits[i] = desc ? base - bits[i] : bits[i] - base;
    if (hi - lo <= SPAN_MAX) {
        uint32_t count[SPAN_MAX + 2] = {0}, *placed = ks->run;
        size_t span = (size_t)(hi - lo);
        for (size_t i = 0; i < len; i++)
            count[bits[i] + 1]++;
        for (size_t d = 0; d <= span; d++)
            count[d + 1] += count[d];
        for (size_t i = 0; i < len; i++)
            placed[count[bits[i]]++] = order[i];
        memcpy(order, placed, len * sizeof *placed);
    } else if (hi - lo <= UINT32_MAX) {
        for (size_t i = 0; i < len; i++)
            bits[i] = bits[i] << 32 | order[i];
        sort_distances(bits, (uint64_t *)ks->run, len);
        for (size_t i = 0; i < len; i++)
            order[i] = (uint32_t)bits[i];
    } else {
        ranked *r = ks->run;
        for (size_t i = 0; i < len; i++)
            r[i] = (ranked){key[order[i]] + 0.0, order[i]};
        qsort(r, len, sizeof *r, desc ? by_key_desc : by_key_asc);
        for (size_t i = 0; i < len; i++)
            order[i] = r[i].token;
    }
}

void mdsd_keysort_words(mdsd_keysort *ks, const double *key, bool desc, uint64_t *w, size_t m,
                        unsigned varying_bits, uint32_t *out)
{
    uint64_t *sorted = w;
    if (m <= 48) {
        insertion_sort(w, m);
    } else {
        uint32_t count[MDSD_RADIX_COUNT(32, 64, 11)];
        sorted = varying_bits <= 17 ? mdsd_radix_sort(w, ks->tmp, NULL, NULL, m, 32, 49, 9, count)
                                    : mdsd_radix_sort(w, ks->tmp, NULL, NULL, m, 32, 64, 11, count);
    }
    for (size_t i = 0; i < m; i++)
        out[i] = (uint32_t)sorted[i];
    /* the buffer that does not hold the result is free for the runs' bits */
    uint64_t *bits = sorted == ks->tmp ? w : ks->tmp;
    for (size_t start = 0; start < m;) {
        size_t end = start + 1;
        uint32_t k = (uint32_t)(sorted[start] >> 32);
        while (end < m && (uint32_t)(sorted[end] >> 32) == k)
            end++;
        if (end - start > 1)
            fix_run(ks, key, desc, out + start, end - start, bits);
        start = end;
    }
}

void mdsd_keysort_tokens(mdsd_keysort *ks, const double *key, bool desc, size_t m, uint32_t *out)
{
    for (size_t t = 0; t < m; t++)
        ks->w[t] = (uint64_t)mdsd_keysort_float_key(key[t], desc) << 32 | t;
    mdsd_keysort_words(ks, key, desc, ks->w, m, 32, out);
}

/* The exact gap of a token (mdsd_logit_gap), compared as (hi, lo), ties by
 * token: the order of a run of equal hi (rare: the floats' difference was
 * rounded the same way twice). */
typedef struct {
    double lo;
    uint32_t tok;
} gap_tail;

static int by_gap_tail(const void *a, const void *b)
{
    const gap_tail *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->tok > y->tok) - (x->tok < y->tok);
}

/* The image of a double in a word that orders as the double does (-0 = +0). */
static inline uint64_t ordered_bits(double x)
{
    uint64_t b = double_bits(x);
    return b >> 63 ? ~b : b | (uint64_t)1 << 63;
}

void mdsd_keysort_logit_gap(mdsd_keysort *ks, const float *zp, const float *zq, uint32_t *tok,
                            size_t m)
{
    uint32_t *idx = tok, *idx_tmp = ks->run; /* [cap] 16-byte entries: room for 4 cap */
    for (size_t i = 0; i < m; i++) {
        double hi, lo;
        mdsd_logit_gap(zp[tok[i]], zq[tok[i]], &hi, &lo);
        ks->w[i] = ordered_bits(hi);
    }
    uint32_t count[MDSD_RADIX_COUNT(0, 64, 11)];
    uint64_t *w = mdsd_radix_sort(ks->w, ks->tmp, &idx, idx_tmp, m, 0, 64, 11, count);
    if (idx != tok)
        memcpy(tok, idx, m * sizeof *tok);
    /* runs of equal hi: stable, so by increasing token; by lo first where it
     * differs (ks->run, free again once the index is back in tok) */
    gap_tail *tail = ks->run;
    for (size_t start = 0, end; start < m; start = end) {
        for (end = start + 1; end < m && w[end] == w[start]; end++)
            ;
        if (end - start < 2)
            continue;
        bool differ = false;
        for (size_t i = start; i < end; i++) {
            double hi;
            mdsd_logit_gap(zp[tok[i]], zq[tok[i]], &hi, &tail[i - start].lo);
            tail[i - start].tok = tok[i];
            differ |= tail[i - start].lo != tail[0].lo;
        }
        if (!differ)
            continue;
        qsort(tail, end - start, sizeof *tail, by_gap_tail);
        for (size_t i = start; i < end; i++)
            tok[i] = tail[i - start].tok;
    }
}
