/* qporder.h - the token order of Hu et al.'s sort-and-scan (MATH.md §2.4).
 *
 * alpha* = 1 + min over prefixes H_i of this order of [p(H_i) - Q(H_i)] for the
 * q-convex schemes (iid, wor, cps). The order, defined exactly:
 *   1. tokens with p = 0 and q > 0, by increasing index (adding them lowers
 *      p(H) - Q(H), so every optimal prefix holds all of them; their order
 *      among themselves cannot change the minimum);
 *   2. tokens with p > 0 and q > 0, by q/p decreasing (the double ratio),
 *      ties by increasing index;
 *   3. tokens with q = 0 (any p): never scanned - they add p(x) >= 0 and leave
 *      Q unchanged, so no optimal H needs them.
 * The scan runs over prefixes of length 0..n_scan of groups 1 and 2.
 *
 * Speed: group 2 by keysort.h's tokens-by-double-key sort (an LSD radix sort,
 * 11-11-10 bits, on the float image of q/p, which is monotone in the double
 * ratio, followed by an exact fix-up of the runs whose float keys are equal
 * but whose double ratios differ). An MSD radix sort on the 64-bit keys was
 * tried: 1.5-2x slower on float32 logits, 10% faster on float16. */
#ifndef MDSD_QPORDER_H
#define MDSD_QPORDER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "keysort.h"

typedef struct {
    size_t V;          /* capacity */
    uint32_t *order;   /* [V] token ids, scan order first, then the q = 0 tokens */
    size_t n_zero_p;   /* group 1 size (p = 0, q > 0) */
    size_t n_scan;     /* groups 1 + 2: the scanned tokens */
    /* scratch */
    mdsd_keysort ks;   /* the sort (keysort.h), for V tokens */
    double *ratio;     /* [V] q/p by token id */
    /* sort-free route (mdsd_qp_bucket_fill): allocated at its first use */
    struct mdsd_qp_bucket *bucket; /* [MDSD_QP_BUCKETS]: all zero outside [lo, hi] */
    uint32_t *next;    /* [V] the tokens of a bucket, linked from its head */
    uint32_t lo, hi;   /* buckets used by the last fill (lo > hi: none) */
} mdsd_qp_order;

/* ---- the sort-free route: buckets of the float key ----------------------
 *
 * Bucket k holds the scanned tokens whose q/p rounds to a float with the
 * same 15 leading bits (sign, exponent, 6 mantissa bits: 64 buckets per
 * octave of q/p), numbered in scan order: bucket 0 is group 1 (p = 0),
 * bucket 1 the ratios whose float overflows to +inf, then decreasing ratios.
 * Since the float image of q/p is monotone in the double ratio, every token
 * of bucket k precedes every token of bucket k' > k in the exact order: the
 * exact order is the buckets in turn, each sorted. A bucket's sums of p and
 * q bound the prefixes that end inside it (bound.c), and only the buckets
 * whose bound can beat the minimum need their order. */
#define MDSD_QP_BUCKET_SHIFT 17
#define MDSD_QP_BUCKETS ((0x7f800000u >> MDSD_QP_BUCKET_SHIFT) + 2)

typedef struct mdsd_qp_bucket {
    double p, q;       /* mass of the bucket's tokens (Kahan sums: the terms are >= 0) */
    double pc, qc;     /* their compensations while filling (folded in at the end) */
    uint32_t n;        /* its number of tokens */
    uint32_t head;     /* the last token added; o->next[] links the others */
} mdsd_qp_bucket;

/* The bucket of a token with p, q (q > 0). */
static inline uint32_t mdsd_qp_bucket_of(double p, double q)
{
    if (!(p > 0.0))
        return 0;
    float f = (float)(q / p);
    uint32_t bits;
    __builtin_memcpy(&bits, &f, sizeof bits);
    return (0x7f800000u >> MDSD_QP_BUCKET_SHIFT) + 1 - (bits >> MDSD_QP_BUCKET_SHIFT);
}

/* An upper bound of q/p over the tokens of bucket k >= 2 (the smallest float
 * of bucket k - 1: rounding to float is monotone, so a ratio above it would
 * round to it or beyond); +inf for buckets 0 and 1. */
double mdsd_qp_bucket_ratio_hi(uint32_t k);

/* Clears the previous fill and distributes the scanned tokens of p, q into
 * buckets (one pass; o->lo..o->hi the buckets used). Sets n_zero_p and
 * n_scan; MDSD_ENOMEM if the table cannot be allocated. */
int mdsd_qp_bucket_fill(mdsd_qp_order *o, const double *p, const double *q, size_t V,
                        mdsd_err *err);

/* The bucket of each token of p[0..m), q[0..m) into key[] (MDSD_QP_BUCKETS,
 * a dummy bucket past the table, for q = 0), and *lo, *hi lowered / raised
 * to the range of the real ones (vectorised). */
void mdsd_qp_bucket_keys(const double *p, const double *q, size_t m, uint32_t *key, uint32_t *lo,
                         uint32_t *hi);

/* Allocates the bucket table at the first use and clears the last fill's
 * buckets (and the dummy): every bucket empty, lo > hi. For routes that
 * fill the table themselves (head, next and n as mdsd_qp_bucket_fill sets
 * them are what mdsd_qp_bucket_sort_one reads). */
int mdsd_qp_bucket_reset(mdsd_qp_order *o, mdsd_err *err);

/* Writes the tokens of bucket k of the last fill to dest[0..n) in the exact
 * order of mdsd_qp_order_compute (dest must not alias o's scratch). */
void mdsd_qp_bucket_sort_one(mdsd_qp_order *o, const double *p, const double *q, uint32_t k,
                             uint32_t *dest);

/* Writes the tokens of the buckets k with flag[k - o->lo] != 0 into
 * o->order, bucket after bucket in scan order, each in the exact order of
 * mdsd_qp_order_compute; returns their number. */
size_t mdsd_qp_bucket_sort(mdsd_qp_order *o, const double *p, const double *q,
                           const unsigned char *flag);

/* The elementary symmetric polynomials e_0..e_n of the q values of each
 * bucket of the last fill (p, q, V as given to it): esp[(k - o->lo) (n + 1)
 * + j] = e_j of bucket k, for o->lo <= k <= o->hi (plain sums of products
 * of positive terms). */
void mdsd_qp_bucket_esp(const mdsd_qp_order *o, const double *p, const double *q, size_t V,
                        size_t n, double *esp);

/* Allocates scratch for vocabularies up to V tokens (MDSD_ENOMEM on failure). */
int mdsd_qp_order_init(mdsd_qp_order *o, size_t V, mdsd_err *err);
void mdsd_qp_order_destroy(mdsd_qp_order *o);

/* Computes the order of p[0..V), q[0..V) (V <= capacity). */
void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V);

#endif
