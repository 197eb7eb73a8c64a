#include "qporder.h"

#include <stdlib.h>
#include <string.h>

/* A group-2 token and its key: the bits of the double q/p, inverted. The
 * bit patterns of non-negative doubles (+inf included) increase with their
 * value, so ascending keys are exactly decreasing ratios. */
typedef struct {
    uint64_t key;
    uint32_t token;
} item;

/* Runs at most this long are finished by insertion sort. */
#define SMALL 16

int mdsd_qp_order_init(mdsd_qp_order *o, size_t V, mdsd_err *err)
{
    memset(o, 0, sizeof *o);
    size_t cap = V ? V : 1;
    o->V = V;
    o->order = malloc(cap * sizeof *o->order);
    o->items = malloc(cap * sizeof(item));
    o->items_tmp = malloc(cap * sizeof(item));
    if (!o->order || !o->items || !o->items_tmp) {
        mdsd_qp_order_destroy(o);
        return mdsd_fail(err, MDSD_ENOMEM, "sort-and-scan: out of memory for V = %zu", V);
    }
    return MDSD_OK;
}

void mdsd_qp_order_destroy(mdsd_qp_order *o)
{
    free(o->order), free(o->items), free(o->items_tmp);
    memset(o, 0, sizeof *o);
}

static inline uint64_t descending_key(double ratio)
{
    uint64_t bits;
    memcpy(&bits, &ratio, sizeof bits);
    return ~bits;
}

/* Stable insertion sort of src[0..m) into dst[0..m). */
static void insertion_to(const item *src, item *dst, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        item x = src[i];
        size_t j = i;
        for (; j > 0 && dst[j - 1].key > x.key; j--)
            dst[j] = dst[j - 1];
        dst[j] = x;
    }
}

/* Stable insertion sort of a[0..m) in place. */
static void insertion(item *a, size_t m)
{
    for (size_t i = 1; i < m; i++) {
        item x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1].key > x.key; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

static inline int bit_length(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

static void sort_in_place(item *a, item *tmp, size_t m);

/* One MSD radix step: scatters src[0..m) into dst by the digit of its keys
 * below their spread (max - min), of up to 11 bits sized to m; start[] gets
 * the bucket bounds (buckets + 1 of them). Returns the bucket count, 0 if
 * every key is equal (nothing moved). */
static size_t scatter(const item *src, item *dst, size_t m, uint32_t *start)
{
    uint64_t lo = src[0].key, hi = lo;
    for (size_t i = 1; i < m; i++) {
        uint64_t k = src[i].key;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    if (lo == hi)
        return 0;
    int digit = bit_length(m) - 3; /* ~8 keys per bucket */
    digit = digit < 4 ? 4 : digit > 11 ? 11 : digit;
    int width = bit_length(hi - lo), shift = width > digit ? width - digit : 0;
    size_t buckets = (size_t)((hi - lo) >> shift) + 1;
    memset(start, 0, (buckets + 1) * sizeof *start);
    for (size_t i = 0; i < m; i++)
        start[((src[i].key - lo) >> shift) + 1]++;
    for (size_t b = 0; b < buckets; b++)
        start[b + 1] += start[b];
    uint32_t pos[1 << 11];
    memcpy(pos, start, buckets * sizeof *pos);
    for (size_t i = 0; i < m; i++)
        dst[pos[(src[i].key - lo) >> shift]++] = src[i];
    return buckets;
}

/* Stable sort of src[0..m) by key into dst[0..m) (src is then scratch). MSD
 * radix (scatter) recursing into buckets longer than SMALL, which sort in
 * place with the matching part of src as scratch; exact ties keep their
 * input order (increasing token). The ratios of LLM-like (p, q) pairs spread
 * over a few binades, so the first digit leaves buckets of tens of tokens;
 * the ties up to rounding that quantised logits make (runs of ratios a few
 * ulps apart) are resolved by the recursion on their own, small spread. */
static void sort_into(item *src, item *dst, size_t m)
{
    uint32_t start[(1 << 11) + 1];
    size_t buckets = m > SMALL ? scatter(src, dst, m, start) : 0;
    if (buckets == 0) {
        if (m > SMALL) /* all keys equal */
            memcpy(dst, src, m * sizeof *dst);
        else
            insertion_to(src, dst, m);
        return;
    }
    for (size_t b = 0; b < buckets; b++)
        if (start[b + 1] - start[b] > 1)
            sort_in_place(dst + start[b], src + start[b], start[b + 1] - start[b]);
}

/* The same with the result in a[0..m) and tmp[0..m) as scratch. */
static void sort_in_place(item *a, item *tmp, size_t m)
{
    if (m <= SMALL) {
        insertion(a, m);
        return;
    }
    uint32_t start[(1 << 11) + 1];
    size_t buckets = scatter(a, tmp, m, start);
    for (size_t b = 0; b < buckets; b++)
        sort_into(tmp + start[b], a + start[b], start[b + 1] - start[b]);
}

void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V)
{
    /* Partition by group, each in increasing index order; group 2 is packed
     * as (key, token) items for the sort. */
    item *w = o->items;
    size_t n0 = 0, n1 = 0, n2 = 0;
    for (size_t x = 0; x < V; x++) {
        double px = p[x], qx = q[x];
        if (!(qx > 0.0)) {
            n2++;
        } else if (px > 0.0) {
            w[n1].key = descending_key(qx / px);
            w[n1++].token = (uint32_t)x;
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
    sort_in_place(w, o->items_tmp, n1);
    uint32_t *g = o->order + n0;
    for (size_t i = 0; i < n1; i++)
        g[i] = w[i].token;
}
