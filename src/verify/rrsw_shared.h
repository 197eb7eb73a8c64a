/* rrsw_shared.h - what the rrsw verifier (verify_rrsw.c) shares with its
 * exact-rate routes (verify_rrsw_exact.c): tokens
 * keyed by a double for sorting, ties by token. */
#ifndef MDSD_RRSW_SHARED_H
#define MDSD_RRSW_SHARED_H

#include <stddef.h>

#include "verifier.h"

/* qsort has no context argument: sort (ratio, token) pairs. */
typedef struct {
    double ratio;
    int token;
} keyed;

static inline int by_ratio_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio > y->ratio ? -1 : 1;
    return x->token - y->token;
}

static inline int by_q_ascending(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio < y->ratio ? -1 : 1;
    return x->token - y->token;
}

/* q mass of the tokens not among drawn[0..count), from the ranks of the
 * tokens in q ascending and the prefix masses A along them. */
static inline double mass_left_ranked(const int *q_rank, const long double *A, size_t V, const int *drawn,
                                      size_t count)
{
    int rank[MDSD_LAW_MAX_DRAFTS];
    for (size_t i = 0; i < count; i++) { /* insertion sort: count <= n is small */
        int r = q_rank[drawn[i]];
        size_t k = i;
        for (; k > 0 && rank[k - 1] > r; k--)
            rank[k] = rank[k - 1];
        rank[k] = r;
    }
    long double left = 0.0L;
    size_t from = 0;
    for (size_t i = 0; i < count; i++) {
        left += A[rank[i]] - A[from];
        from = (size_t)rank[i] + 1;
    }
    left += A[V] - A[from];
    return left > 0.0L ? (double)left : 0.0;
}

#endif
