/* wor_bucket.h - the exact `wor` alpha* (n >= 3) without the full q/p order
 * (MATH.md §2.4, "wor without the full order").
 *
 * The tokens go into the buckets of their float q/p (qporder.h: every token
 * of bucket k precedes every token of bucket k + 1 in the exact order), and
 * in the same passes each bucket's small tokens' power sums (the ones the
 * quadrature of wor_q.c needs) are summed; a prefix of whole buckets is a
 * prefix of the exact order, so Q at a bucket boundary costs one quadrature
 * from the buckets' sums. The branch and bound of mdsd_wor_chain_min then
 * runs over the positions of the order with the buckets as its units: inside
 * a bucket that is not sorted, Q lies below the chord (q-convexity along the
 * exact order) and p(H) grows by at least q / r_hi per unit of q mass
 * (r_hi >= q/p over the bucket), a bound linear in the mass added, so its
 * minimum over the bucket is at an end. Only the buckets where the bound's
 * minimiser falls and that the search must enter are sorted (exactly as
 * qporder.c sorts), and there the search continues token by token. The
 * minimum is the full scan's to within tol plus the quadrature's error. */
#ifndef MDSD_WOR_BUCKET_H
#define MDSD_WOR_BUCKET_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "qporder.h"
#include "wor_q.h"

typedef struct mdsd_wor_buckets mdsd_wor_buckets;

/* mdsd_bound_alpha takes this route from this many tokens on: below it the
 * full order is as fast (measured at n = 3: equal at V = 1,024 and 2,048,
 * 1.2x faster at 4,096, 1.7x at 8,192, 2x at 32,000). */
#define MDSD_WOR_BUCKET_MIN_V 4096

/* Workspace for vocabularies up to V tokens. */
mdsd_wor_buckets *mdsd_wor_buckets_alloc(size_t V, mdsd_err *err);
void mdsd_wor_buckets_free(mdsd_wor_buckets *wb);

/* min over the prefixes H_i of the exact q/p order of p(H_i) - Q_wor(H_i)
 * (i = 0: the empty set, 0) to within tol, for the n drafts the chain
 * workspace c is set for (n >= 3), and the subset attaining it in H (if not
 * NULL). o's buckets and order are overwritten. *fallback is set, and
 * nothing else, where this route does not apply (fewer than n tokens with
 * q > 0, a quadrature range refused or a tail check failed): the full-order
 * route (mdsd_wor_chain_min) then gives the value or the error. */
int mdsd_wor_bucket_min(mdsd_wor_buckets *wb, mdsd_wor_chain *c, mdsd_qp_order *o,
                        const double *p, const double *q, size_t V, double tol, double *fmin,
                        unsigned char *H, size_t *evaluations, bool *fallback, mdsd_err *err);

/* Tests only: with unbounded_inside != 0 the search skips the bound inside
 * the unsorted buckets (wrong: a minimum inside one is missed), a planted
 * error that tests/test_wor_bucket.c must catch; 0 restores the route. */
void mdsd_wor_bucket_plant(int unbounded_inside);

#endif
