/* verify_rrsw.h - what the two halves of rrsw share (internal): the sampled
 * route, its law and the literal path enumeration in verify_rrsw.c; the
 * certified interval of its exact rate in verify_rrsw_exact.c. */
#ifndef MDSD_VERIFY_RRSW_H
#define MDSD_VERIFY_RRSW_H

#include <stddef.h>

/* qsort has no context argument: sort (ratio, token) pairs. */
typedef struct {
    double ratio;
    int token;
} keyed;

/* qsort comparators of keyed: ratio decreasing / increasing, ties by token. */
int mdsd_rrsw_by_ratio_desc(const void *a, const void *b);
int mdsd_rrsw_by_q_ascending(const void *a, const void *b);

/* q mass of the tokens not among drawn[0..count), from the ranks of the
 * tokens in q ascending and the prefix masses A along them. */
double mdsd_rrsw_mass_left_ranked(const int *q_rank, const long double *A, size_t V,
                                  const int *drawn, size_t count);

#endif
