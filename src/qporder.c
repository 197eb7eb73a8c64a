#include "qporder.h"

#include <stdlib.h>
#include <string.h>

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
    o->order = malloc(cap * sizeof *o->order);
    o->key = malloc(cap * sizeof *o->key);
    o->tmp_order = malloc(cap * sizeof *o->tmp_order);
    o->tmp_key = malloc(cap * sizeof *o->tmp_key);
    o->ratio = malloc(cap * sizeof *o->ratio);
    o->run = malloc(cap * sizeof(ranked));
    if (!o->order || !o->key || !o->tmp_order || !o->tmp_key || !o->ratio || !o->run) {
        mdsd_qp_order_destroy(o);
        return mdsd_fail(err, MDSD_ENOMEM, "sort-and-scan: out of memory for V = %zu", V);
    }
    return MDSD_OK;
}

void mdsd_qp_order_destroy(mdsd_qp_order *o)
{
    free(o->order), free(o->key), free(o->tmp_order), free(o->tmp_key);
    free(o->ratio), free(o->run);
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

/* Stable LSD radix sort of order[0..m) by key[0..m): 11 + 11 + 10 bits. */
static void radix_sort(uint32_t *order, uint32_t *key, uint32_t *tmp_order, uint32_t *tmp_key,
                       size_t m)
{
    enum { B0 = 11, B1 = 11, B2 = 10 };
    static const int shift[3] = {0, B0, B0 + B1};
    static const uint32_t mask[3] = {(1u << B0) - 1, (1u << B1) - 1, (1u << B2) - 1};
    size_t count[3][1 << 11];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < m; i++) {
        uint32_t k = key[i];
        count[0][k & mask[0]]++;
        count[1][(k >> shift[1]) & mask[1]]++;
        count[2][(k >> shift[2]) & mask[2]]++;
    }
    for (int pass = 0; pass < 3; pass++) {
        size_t *c = count[pass], buckets = (size_t)mask[pass] + 1;
        /* A digit shared by every key leaves the order unchanged: skip it. */
        if (c[(key[0] >> shift[pass]) & mask[pass]] == m)
            continue;
        size_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            size_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (size_t i = 0; i < m; i++) {
            size_t d = c[(key[i] >> shift[pass]) & mask[pass]]++;
            tmp_order[d] = order[i];
            tmp_key[d] = key[i];
        }
        memcpy(order, tmp_order, m * sizeof *order);
        memcpy(key, tmp_key, m * sizeof *key);
    }
}

static int by_ratio_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio > y->ratio ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

/* Runs of equal float keys may hold distinct double ratios: order them exactly. */
static void fix_up(mdsd_qp_order *o, uint32_t *order, const uint32_t *key, size_t m)
{
    size_t start = 0;
    while (start < m) {
        size_t end = start + 1;
        int distinct = 0;
        while (end < m && key[end] == key[start]) {
            distinct |= o->ratio[order[end]] != o->ratio[order[start]];
            end++;
        }
        if (distinct) {
            ranked *r = o->run;
            for (size_t i = start; i < end; i++)
                r[i - start] = (ranked){o->ratio[order[i]], order[i]};
            qsort(r, end - start, sizeof *r, by_ratio_desc);
            for (size_t i = start; i < end; i++)
                order[i] = r[i - start].token;
        }
        start = end;
    }
}

void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V)
{
    /* Partition by group, each in increasing index order. */
    size_t n0 = 0, n1 = 0;
    for (size_t x = 0; x < V; x++)
        if (q[x] > 0.0) {
            if (p[x] > 0.0)
                n1++;
            else
                n0++;
        }
    size_t i0 = 0, i1 = n0, i2 = n0 + n1;
    for (size_t x = 0; x < V; x++) {
        if (!(q[x] > 0.0)) {
            o->order[i2++] = (uint32_t)x;
        } else if (p[x] > 0.0) {
            o->ratio[x] = q[x] / p[x];
            o->key[i1 - n0] = descending_key(o->ratio[x]);
            o->order[i1++] = (uint32_t)x;
        } else {
            o->order[i0++] = (uint32_t)x;
        }
    }
    o->n_zero_p = n0;
    o->n_scan = n0 + n1;
    if (n1 > 1) {
        uint32_t *g = o->order + n0;
        radix_sort(g, o->key, o->tmp_order, o->tmp_key, n1);
        fix_up(o, g, o->key, n1);
    }
}
