/* subset.h - subset selection by brute force (Hu et al. section 3; MATH.md
 * §2.3): alpha* = 1 + min over all H of [p(H) - Q(H)] for ANY joint law
 * D of the drafts, the slow reference every fast method is checked against.
 *
 * D is aggregated by token set into Dbar[S] (a bitmask per tuple), and
 * Q(H) = sum over S inside H of Dbar[S] is the subset-sum (zeta) transform,
 * computed for all 2^V subsets at once in O(V 2^V) time and 2^V doubles of
 * memory (128 MiB at V = 24). */
#ifndef MDSD_SUBSET_H
#define MDSD_SUBSET_H

#include <stddef.h>

#include "err.h"
#include "scheme.h"

/* Largest vocabulary brute force accepts by default. */
#define MDSD_SUBSET_MAX_V 24

/* min over H of p(H) - Q(H) (the empty set gives 0, so *fmin <= 0), and one
 * minimiser in H[0..V) (1 = in H; may be NULL). Ties go to the first mask in
 * increasing order (bit x = token x). Refuses V > max_V (0 = MDSD_SUBSET_MAX_V)
 * with MDSD_ETOOBIG. */
int mdsd_subset_min(const double *p, size_t V, const mdsd_joint *D, size_t max_V,
                    double *fmin, unsigned char *H, mdsd_err *err);

#endif
