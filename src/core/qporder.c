#include "qporder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keysort.h"
#include "simd.h"

int mdsd_qp_order_init(mdsd_qp_order *o, size_t V, mdsd_err *err)
{
    memset(o, 0, sizeof *o);
    size_t cap = V ? V : 1;
    o->V = V;
    o->lo = 1, o->hi = 0;
    o->order = malloc(cap * sizeof *o->order);
    o->ratio = malloc(cap * sizeof *o->ratio);
    int rc = mdsd_keysort_init(&o->ks, V, err);
    if (rc || !o->order || !o->ratio) {
        mdsd_qp_order_destroy(o);
        return rc ? rc : mdsd_fail(err, MDSD_ENOMEM, "sort-and-scan: out of memory for V = %zu", V);
    }
    return MDSD_OK;
}

void mdsd_qp_order_destroy(mdsd_qp_order *o)
{
    free(o->order), free(o->ratio);
    mdsd_keysort_destroy(&o->ks);
    free(o->bucket), free(o->next);
    memset(o, 0, sizeof *o);
}

void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V)
{
    /* Partition by group, each in increasing index order; group 2 is packed
     * as (key, token) words for the radix sort. */
    uint64_t *w = o->ks.w;
    size_t n0 = 0, n1 = 0, n2 = 0;
    for (size_t x = 0; x < V; x++) {
        double px = p[x], qx = q[x];
        if (!(qx > 0.0)) {
            n2++;
        } else if (px > 0.0) {
            double ratio = qx / px;
            o->ratio[x] = ratio;
            w[n1++] = (uint64_t)mdsd_keysort_float_key(ratio, true) << 32 | (uint32_t)x;
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
    mdsd_keysort_words(&o->ks, o->ratio, true, w, n1, 32, o->order + n0);
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
            /* Kahan: a bucket may hold thousands of tokens, and a plain sum's
             * error then reached 55 ulp of alpha* (tests/test_table_routes.c);
             * the terms are >= 0, so the running sum dominates each term. */
            double yp = p[x0 + i] - B->pc, tp = B->p + yp;
            B->pc = (tp - B->p) - yp, B->p = tp;
            double yq = q[x0 + i] - B->qc, tq = B->q + yq;
            B->qc = (tq - B->q) - yq, B->q = tq;
            o->next[x0 + i] = B->head;
            B->head = (uint32_t)(x0 + i);
            B->n++;
        }
    }
    for (uint32_t k = lo; k <= hi; k++)
        b[k].p -= b[k].pc, b[k].q -= b[k].qc, b[k].pc = b[k].qc = 0.0;
    b[MDSD_QP_BUCKETS].p -= b[MDSD_QP_BUCKETS].pc, b[MDSD_QP_BUCKETS].q -= b[MDSD_QP_BUCKETS].qc;
    b[MDSD_QP_BUCKETS].pc = b[MDSD_QP_BUCKETS].qc = 0.0;
    o->lo = lo, o->hi = hi;
    o->n_zero_p = lo == 0 ? b[0].n : 0;
    o->n_scan = V - b[MDSD_QP_BUCKETS].n;
    return MDSD_OK;
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
    uint64_t *w = o->ks.w;
    uint32_t x = B->head;
    for (size_t i = B->n; i-- > 0; x = o->next[x]) {
        double ratio = k == 0 ? INFINITY : q[x] / p[x];
        o->ratio[x] = ratio;
        w[i] = (uint64_t)(k == 0 ? 0u : mdsd_keysort_float_key(ratio, true)) << 32 | x;
    }
    /* the float keys of a bucket share their top 15 bits (its number) */
    mdsd_keysort_words(&o->ks, o->ratio, true, w, B->n, MDSD_QP_BUCKET_SHIFT, dest);
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
