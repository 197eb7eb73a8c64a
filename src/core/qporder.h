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
 * Speed: an LSD radix sort (11-11-10 bits) on the float image of q/p, which is
 * monotone in the double ratio, followed by an exact fix-up of runs whose
 * float keys are equal but whose double ratios differ (a counting sort on
 * the distance in ulps for the ties up to rounding that the softmax of
 * quantised logits makes; a radix sort on 32 bits of the double, or qsort
 * where the float over- or underflows). An MSD radix sort on the 64-bit
 * keys was tried: 1.5-2x slower on float32 logits, 10% faster on float16. */
#ifndef MDSD_QPORDER_H
#define MDSD_QPORDER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct {
    size_t V;          /* capacity */
    uint32_t *order;   /* [V] token ids, scan order first, then the q = 0 tokens */
    size_t n_zero_p;   /* group 1 size (p = 0, q > 0) */
    size_t n_scan;     /* groups 1 + 2: the scanned tokens */
    /* scratch */
    uint64_t *words, *words_tmp; /* [V] (key << 32 | token) for the radix sort */
    double *ratio;     /* [V] q/p by token id */
    void *run;         /* [V] fix-up scratch */
} mdsd_qp_order;

/* Allocates scratch for vocabularies up to V tokens (MDSD_ENOMEM on failure). */
int mdsd_qp_order_init(mdsd_qp_order *o, size_t V, mdsd_err *err);
void mdsd_qp_order_destroy(mdsd_qp_order *o);

/* Computes the order of p[0..V), q[0..V) (V <= capacity). */
void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V);

#endif
