/* interval.h - certified intervals of alpha* (i.i.d. drafts) on truncated
 * top-k rows (MATH.md §2.9).
 *
 * A truncated row knows the probabilities of a top-k set of tokens; the other
 * ("unseen") tokens each have probability at most the smallest kept one (cap)
 * and together carry the missing mass. Every completion of the target row p
 * and the draft row q consistent with that gives an alpha*; this returns
 *   lo = the minimum of alpha*(iid, n) over all those completions (exact:
 *        a minimum over H of closed-form inner minima, §2.9 Thm A), and
 *   hi = 1 + min_H max_completions [p(H) - q(H)^n], an upper bound on the
 *        maximum (min-max >= max-min, §2.9 Thm B), not always attained.
 * The true alpha* of the full rows lies in [lo, hi] whenever the record is
 * true (the unseen tokens really are below the cap).
 *
 * Cost: O((M + k_pq) log M) per call, k_pq the tokens known in both rows and
 * M <= 12 A B candidates, A and B windows of at most k + m / cap tokens
 * (§2.9, Lemma 4). Rows with more than MDSD_INTERVAL_MAX_QUERIES candidates
 * are refused (MDSD_ETOOBIG). */
#ifndef MDSD_INTERVAL_H
#define MDSD_INTERVAL_H

#include <stddef.h>

#include "err.h"

#define MDSD_INTERVAL_MAX_QUERIES 2e7

/* One model's row: prob[V] holds the known probabilities (already divided by
 * the row's total, kept + missing), a negative entry marks an unseen token;
 * missing is the unseen tokens' total and cap the largest probability one of
 * them may have (the smallest kept probability). A complete row has no
 * negative entry and missing = 0. */
typedef struct {
    const double *prob;
    double missing;
    double cap;
} mdsd_partial_row;

typedef struct mdsd_interval_ws mdsd_interval_ws;

mdsd_interval_ws *mdsd_interval_ws_alloc(size_t V);
void mdsd_interval_ws_free(mdsd_interval_ws *ws);

/* [lo, hi] of alpha*(iid, n) over the completions of (p, q). An inconsistent
 * record (missing mass > 0 with no unseen token, or more than the unseen
 * tokens can hold under the cap) is MDSD_EINVAL naming the model. */
int mdsd_interval_iid(const mdsd_partial_row *p, const mdsd_partial_row *q, size_t V, size_t n,
                      mdsd_interval_ws *ws, double *lo, double *hi, mdsd_err *err);

#endif
