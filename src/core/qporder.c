#include "qporder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"

/* qsort has no context argument: the fix-up sorts (ratio, token) pairs. */
typedef struct {
    double ratio;
    uint32_t token;
} ranked;

int mdsd_qp_order_init(mdsd_qp_order *o, size_t V, mdsd_err *err)
{
    memset(o, 0, sizeof *o);
    size_t cap = V ? V : 1;
    o->V = V;
    o->lo = 1, o->hi = 0;
    o->order = malloc(cap * sizeof *o->order);
    o->words = malloc(cap * sizeof *o->words);
    o->words_tmp = malloc(cap * sizeof *o->words_tmp);
    o->ratio = malloc(cap * sizeof *o->ratio);
    o->run = malloc(cap * sizeof(ranked));
    if (!o->order || !o->words || !o->words_tmp || !o->ratio || !o->run) {
        mdsd_qp_order_destroy(o);
        return mdsd_fail(err, MDSD_ENOMEM, "sort-and-scan: out of memory for V = %zu", V);
    }
    return MDSD_OK;
}

void mdsd_qp_order_destroy(mdsd_qp_order *o)
{
    free(o->order), free(o->words), free(o->words_tmp);
    free(o->ratio), free(o->run);
    free(o->bucket), free(o->next);
    memset(o, 0, sizeof *o);
}

/* Descending order of positive floats = ascending order of the inverted bits. */
static uint32_t descending_key(double ratio)
{
    float f = (float)ratio;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return ~bits;
}

/* Stable LSD radix sort of the words w[0..m) by their high 32 bits (the key;
 * the low 32 bits carry the token): 11 + 11 + 10 bit digits, ping-ponging
 * between w and tmp; returns the buffer holding the result. */
static uint64_t *radix_sort(uint64_t *w, uint64_t *tmp, size_t m)
{
    enum { DIGITS = 3 };
    static const int shift[DIGITS] = {32, 43, 54};
    static const uint32_t mask[DIGITS] = {(1u << 11) - 1, (1u << 11) - 1, (1u << 10) - 1};
    uint32_t count[DIGITS][1 << 11];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < m; i++) {
        uint64_t k = w[i];
        count[0][(k >> 32) & mask[0]]++;
        count[1][(k >> 43) & mask[1]]++;
        count[2][(k >> 54) & mask[2]]++;
    }
    for (int pass = 0; pass < DIGITS; pass++) {
        uint32_t *c = count[pass];
        size_t buckets = (size_t)mask[pass] + 1;
        /* A digit shared by every key leaves the order unchanged: skip it. */
        if (c[(w[0] >> shift[pass]) & mask[pass]] == m)
            continue;
        uint32_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            uint32_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        int sh = shift[pass];
        uint32_t mk = mask[pass];
        for (size_t i = 0; i < m; i++) {
            uint64_t x = w[i];
            tmp[c[(x >> sh) & mk]++] = x;
        }
        uint64_t *t = w;
        w = tmp;
        tmp = t;
    }
    return w;
}

/* The exact order inside a run of equal float keys: the double ratios of a
 * run round to one float, so their bit patterns (monotone for positive
 * doubles) lie within about one float ulp, 2^29 double ulps, of the run's
 * largest: d = (largest bits - bits) fits in 32 bits and increases as the
 * ratio decreases. Words (d << 32 | token) in increasing order are the
 * ratios decreasing, ties by increasing token. Float keys are monotone but
 * can collapse far more than an ulp where the float overflows or underflows
 * (ratios beyond 3.4e38 or below 1.2e-38): such a run falls back to qsort. */
static int by_ratio_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio > y->ratio ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

static inline uint64_t double_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Sorts w[0..m) ascending: insertion sort for short runs, else LSD radix on
 * the 32-bit key in 8-bit digits (digits shared by every key skipped). */
static void sort_words(uint64_t *w, uint64_t *tmp, size_t m)
{
    if (m <= 32) {
        for (size_t i = 1; i < m; i++) {
            uint64_t x = w[i];
            size_t j = i;
            for (; j > 0 && w[j - 1] > x; j--)
                w[j] = w[j - 1];
            w[j] = x;
        }
        return;
    }
    uint32_t count[4][256];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < m; i++) {
        uint32_t k = (uint32_t)(w[i] >> 32);
        count[0][k & 255]++;
        count[1][k >> 8 & 255]++;
        count[2][k >> 16 & 255]++;
        count[3][k >> 24]++;
    }
    uint64_t *src = w, *dst = tmp;
    for (int d = 0; d < 4; d++) {
        uint32_t *c = count[d];
        int sh = 32 + 8 * d;
        if (c[(src[0] >> sh) & 255] == m)
            continue;
        uint32_t sum = 0;
        for (int b = 0; b < 256; b++) {
            uint32_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (size_t i = 0; i < m; i++)
            dst[c[(src[i] >> sh) & 255]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != w)
        memcpy(w, src, m * sizeof *w);
}

/* Runs of equal float keys may hold distinct double ratios: order them
 * exactly. A run's bit patterns are gathered once; a run whose ratios lie
 * within SPAN_MAX ulps of its largest (the usual case: ties up to rounding,
 * as the softmax of quantised logits makes) is ordered by a counting sort on
 * the distance in ulps, stable, so exact ties keep the token order. */
#define SPAN_MAX 255
static void fix_up(mdsd_qp_order *o, uint32_t *order, const uint64_t *w, size_t m)
{
    uint64_t *words = o->words_tmp; /* free once the radix sort has finished */
    if (words == w)
        words = o->words;
    uint32_t *placed = o->run;
    size_t start = 0;
    while (start < m) {
        size_t end = start + 1;
        uint32_t key = (uint32_t)(w[start] >> 32);
        while (end < m && (uint32_t)(w[end] >> 32) == key)
            end++;
        size_t len = end - start;
        if (len == 1) {
            start = end;
            continue;
        }
        uint64_t hi = 0, lo = UINT64_MAX;
        for (size_t i = 0; i < len; i++) {
            uint64_t b = double_bits(o->ratio[order[start + i]]);
            words[i] = b;
            hi = b > hi ? b : hi;
            lo = b < lo ? b : lo;
        }
        if (hi - lo <= SPAN_MAX) {
            if (hi != lo) {
                uint32_t count[SPAN_MAX + 2] = {0};
                size_t span = (size_t)(hi - lo);
                for (size_t i = 0; i < len; i++)
                    count[hi - words[i] + 1]++;
                for (size_t d = 0; d <= span; d++)
                    count[d + 1] += count[d];
                for (size_t i = 0; i < len; i++)
                    placed[count[hi - words[i]]++] = order[start + i];
                memcpy(order + start, placed, len * sizeof *placed);
            }
        } else if (hi - lo <= UINT32_MAX) {
            for (size_t i = 0; i < len; i++)
                words[i] = (hi - words[i]) << 32 | order[start + i];
            sort_words(words, (uint64_t *)o->run, len);
            for (size_t i = 0; i < len; i++)
                order[start + i] = (uint32_t)words[i];
        } else {
            ranked *r = o->run;
            for (size_t i = start; i < end; i++)
                r[i - start] = (ranked){o->ratio[order[i]], order[i]};
            qsort(r, len, sizeof *r, by_ratio_desc);
            for (size_t i = start; i < end; i++)
                order[i] = r[i - start].token;
        }
        start = end;
    }
}

void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V)
{
    /* Partition by group, each in increasing index order; group 2 is packed
     * as (key, token) words for the radix sort. */
    uint64_t *w = o->words;
    size_t n0 = 0, n1 = 0, n2 = 0;
    for (size_t x = 0; x < V; x++) {
        double px = p[x], qx = q[x];
        if (!(qx > 0.0)) {
            n2++;
        } else if (px > 0.0) {
            double ratio = qx / px;
            o->ratio[x] = ratio;
            w[n1++] = (uint64_t)descending_key(ratio) << 32 | (uint32_t)x;
        } else {
            o->order[n0++] = (uint32_t)x;
        }
    }
    o->n_zero_p = n0;
    o->n_scan = n0 + n1;
    if (n2) {
        size_t i2 = n0 + n1;
        for (size_t x = 0; x < V; x++)
            if (!(q[x] > 0.0))
                o->order[i2++] = (uint32_t)x;
    }
    if (n1 == 0)
        return;
    uint64_t *sorted = n1 > 1 ? radix_sort(w, o->words_tmp, n1) : w;
    uint32_t *g = o->order + n0;
    for (size_t i = 0; i < n1; i++)
        g[i] = (uint32_t)sorted[i];
    fix_up(o, g, sorted, n1);
}

/* ---- the sort-free route ------------------------------------------------------ */

double mdsd_qp_bucket_ratio_hi(uint32_t k)
{
    if (k < 2)
        return INFINITY;
    uint32_t bits = ((0x7f800000u >> MDSD_QP_BUCKET_SHIFT) + 2 - k) << MDSD_QP_BUCKET_SHIFT;
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

/* The bucket of each token of x[0..m), MDSD_QP_BUCKETS for q = 0 (a dummy
 * bucket past the table), and the range of the real ones, in vector lanes. */
#define FILL_CHUNK 512
MDSD_SIMD_CLONES void mdsd_qp_bucket_keys(const double *p, const double *q, size_t m, uint32_t *key,
                                          uint32_t *lo, uint32_t *hi)
{
    const uint32_t top = (0x7f800000u >> MDSD_QP_BUCKET_SHIFT) + 1;
    uint32_t l = *lo, h = *hi;
#pragma omp simd reduction(min : l) reduction(max : h)
    for (size_t i = 0; i < m; i++) {
        double px = p[i], qx = q[i];
        union {
            float f;
            uint32_t u;
        } r = {.f = (float)(qx / px)};
        uint32_t k = px > 0.0 ? top - (r.u >> MDSD_QP_BUCKET_SHIFT) : 0;
        k = qx > 0.0 ? k : MDSD_QP_BUCKETS;
        key[i] = k;
        l = k < l ? k : l;
        h = k < MDSD_QP_BUCKETS && k > h ? k : h;
    }
    *lo = l, *hi = h;
}

int mdsd_qp_bucket_reset(mdsd_qp_order *o, mdsd_err *err)
{
    if (!o->bucket) {
        /* one dummy bucket past the table collects the q = 0 tokens */
        o->bucket = calloc(MDSD_QP_BUCKETS + 1, sizeof *o->bucket);
        o->next = malloc((o->V ? o->V : 1) * sizeof *o->next);
        if (!o->bucket || !o->next) {
            free(o->bucket), free(o->next);
            o->bucket = NULL, o->next = NULL;
            return mdsd_fail(err, MDSD_ENOMEM, "sort-and-scan: out of memory for the buckets");
        }
        o->lo = 1, o->hi = 0;
    }
    mdsd_qp_bucket *b = o->bucket;
    if (o->lo <= o->hi)
        memset(b + o->lo, 0, (o->hi - o->lo + 1) * sizeof *b);
    memset(b + MDSD_QP_BUCKETS, 0, sizeof *b);
    o->lo = 1, o->hi = 0;
    return MDSD_OK;
}

int mdsd_qp_bucket_fill(mdsd_qp_order *o, const double *p, const double *q, size_t V,
                        mdsd_err *err)
{
    int rc = mdsd_qp_bucket_reset(o, err);
    if (rc)
        return rc;
    mdsd_qp_bucket *b = o->bucket;
    uint32_t lo = MDSD_QP_BUCKETS, hi = 0, key[FILL_CHUNK];
    for (size_t x0 = 0; x0 < V; x0 += FILL_CHUNK) {
        size_t m = V - x0 < FILL_CHUNK ? V - x0 : FILL_CHUNK;
        mdsd_qp_bucket_keys(p + x0, q + x0, m, key, &lo, &hi);
        for (size_t i = 0; i < m; i++) {
            mdsd_qp_bucket *B = b + key[i];
            B->p += p[x0 + i];
            B->q += q[x0 + i];
            o->next[x0 + i] = B->head;
            B->head = (uint32_t)(x0 + i);
            B->n++;
        }
    }
    o->lo = lo, o->hi = hi;
    o->n_zero_p = lo == 0 ? b[0].n : 0;
    o->n_scan = V - b[MDSD_QP_BUCKETS].n;
    return MDSD_OK;
}

/* Sorts one bucket's words w[0..m) (float key << 32 | token) by key, ties by
 * token: insertion sort when short, else a stable LSD radix sort on the key's
 * low 17 bits (9 + 8), the only ones that vary inside a bucket (its number
 * is the key's top 15 bits); returns the buffer holding the result (w or
 * tmp). */
static uint64_t *sort_bucket(uint64_t *w, uint64_t *tmp, size_t m)
{
    if (m > 48) {
        uint32_t c0[512] = {0}, c1[256] = {0};
        for (size_t i = 0; i < m; i++) {
            c0[(w[i] >> 32) & 511]++;
            c1[(w[i] >> 41) & 255]++;
        }
        uint32_t s0 = 0, s1 = 0;
        for (size_t d = 0; d < 512; d++) {
            uint32_t t = c0[d];
            c0[d] = s0, s0 += t;
        }
        for (size_t d = 0; d < 256; d++) {
            uint32_t t = c1[d];
            c1[d] = s1, s1 += t;
        }
        for (size_t i = 0; i < m; i++)
            tmp[c0[(w[i] >> 32) & 511]++] = w[i];
        for (size_t i = 0; i < m; i++)
            w[c1[(tmp[i] >> 41) & 255]++] = tmp[i];
        return w;
    }
    for (size_t i = 1; i < m; i++) {
        uint64_t x = w[i];
        size_t j = i;
        for (; j > 0 && w[j - 1] > x; j--)
            w[j] = w[j - 1];
        w[j] = x;
    }
    return w;
}

void mdsd_qp_bucket_sort_one(mdsd_qp_order *o, const double *p, const double *q, uint32_t k,
                             uint32_t *dest)
{
    const mdsd_qp_bucket *B = o->bucket + k;
    if (B->n == 0)
        return;
    /* The list runs by decreasing token: filled backwards, the words are
     * by increasing token, which the stable sorts keep for exact ties.
     * Group 1 (k = 0) has ratio +inf and key 0: its order is the token's. */
    uint64_t *w = o->words;
    uint32_t x = B->head;
    for (size_t i = B->n; i-- > 0; x = o->next[x]) {
        double ratio = k == 0 ? INFINITY : q[x] / p[x];
        o->ratio[x] = ratio;
        w[i] = (uint64_t)(k == 0 ? 0u : descending_key(ratio)) << 32 | x;
    }
    uint64_t *sorted = sort_bucket(w, o->words_tmp, B->n);
    for (size_t i = 0; i < B->n; i++)
        dest[i] = (uint32_t)sorted[i];
    fix_up(o, dest, sorted, B->n);
}

size_t mdsd_qp_bucket_sort(mdsd_qp_order *o, const double *p, const double *q,
                           const unsigned char *flag)
{
    size_t out = 0;
    for (uint32_t k = o->lo; k <= o->hi; k++) {
        if (!flag[k - o->lo] || o->bucket[k].n == 0)
            continue;
        mdsd_qp_bucket_sort_one(o, p, q, k, o->order + out);
        out += o->bucket[k].n;
    }
    return out;
}

void mdsd_qp_bucket_esp(const mdsd_qp_order *o, const double *p, const double *q, size_t V,
                        size_t n, double *esp)
{
    size_t stride = n + 1;
    if (o->lo > o->hi)
        return;
    size_t nb = o->hi - o->lo + 1;
    memset(esp, 0, nb * stride * sizeof *esp);
    for (size_t k = 0; k < nb; k++)
        esp[k * stride] = 1.0;
    uint32_t key[FILL_CHUNK], lo = MDSD_QP_BUCKETS, hi = 0;
    for (size_t x0 = 0; x0 < V; x0 += FILL_CHUNK) {
        size_t m = V - x0 < FILL_CHUNK ? V - x0 : FILL_CHUNK;
        mdsd_qp_bucket_keys(p + x0, q + x0, m, key, &lo, &hi);
        for (size_t i = 0; i < m; i++) {
            if (key[i] == MDSD_QP_BUCKETS)
                continue;
            double v = q[x0 + i], *e = esp + (key[i] - o->lo) * stride;
            for (size_t j = n; j > 0; j--)
                e[j] += v * e[j - 1];
        }
    }
}
