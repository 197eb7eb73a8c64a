/* qporder.h - the token order of Hu et al.'s sort-and-scan (MATH.md section 2).
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
 * Speed: an MSD radix sort on the exact keys (the bits of the double q/p),
 * digits sized to the keys' spread, buckets of <= 32 finished by insertion
 * sort; no comparison callback, and exact by construction (no float keys to
 * fix up). */
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
    void *items, *items_tmp; /* [V] (key, token) pairs of group 2 for the sort */
} mdsd_qp_order;

/* Allocates scratch for vocabularies up to V tokens (MDSD_ENOMEM on failure). */
int mdsd_qp_order_init(mdsd_qp_order *o, size_t V, mdsd_err *err);
void mdsd_qp_order_destroy(mdsd_qp_order *o);

/* Computes the order of p[0..V), q[0..V) (V <= capacity). */
void mdsd_qp_order_compute(mdsd_qp_order *o, const double *p, const double *q, size_t V);

#endif
