/* blockv.h - block verifiers: verifiers that see the whole draft (its
 * sequences or tree, with p and q at every drafted prefix) and accept a
 * drafted prefix plus one next token, jointly (MATH.md §5.6). Unlike the
 * token-level verifiers of verifier.h they are not a coupling per node.
 *
 *   bv         Block Verification, Sun et al., ICLR 2025 (arXiv 2403.10444),
 *              Algorithm 2                                    seq, K = 1
 *   gbv        Greedy multi-path block verification, Thomas & Pal (arXiv
 *              2602.16961): the lexicographically highest path by p/q, then
 *              bv with q replaced by that path's law (the "skew")  seq, any K
 *   traversal  Traversal Verification, Weng et al. (arXiv 2505.12398),
 *              Algorithm 3: leaves accepted or deleted in post-order with
 *              residual updates of p and q at the parent       seq; iid and wor trees
 *
 * Each lives in its own verify_<name>.c (headed by the paper and the lines
 * it implements) and exports one ops table. A law is exact: the verifier's
 * own randomness integrated out. Where a paper is ambiguous the file says
 * how it is read. */
#ifndef MDSD_BLOCKV_H
#define MDSD_BLOCKV_H

#include <gsl/gsl_rng.h>

#include "block.h"
#include "dtree.h"

typedef enum {
    MDSD_BLOCKV_BV,
    MDSD_BLOCKV_GBV,
    MDSD_BLOCKV_TRAVERSAL,
    MDSD_BLOCKV_COUNT
} mdsd_blockv_kind;

typedef struct {
    const char *name;
    /* MDSD_EUNSUPPORTED with the reason where the verifier is not defined
     * for drafts drawn by pol. */
    int (*check)(const mdsd_policy *pol, mdsd_err *err);
    /* stop[u] = P(the step accepts exactly the tokens of node u's path | t),
     * u < t->n (they sum to 1); next, if not NULL, [t->n * V]: next[u V + b]
     * = P(the next token is b | the step stops at u) (the correction or
     * bonus token; needs p at u), for every u with stop[u] > 0. */
    int (*law)(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err);
    /* One step with the verifier's own random numbers as the paper draws
     * them: the accepted node and the next token. */
    int (*step)(const mdsd_dtree *t, gsl_rng *rng, int *node, int *next, mdsd_err *err);
} mdsd_blockv_ops;

extern const mdsd_blockv_ops mdsd_blockv_bv_ops, mdsd_blockv_gbv_ops, mdsd_blockv_traversal_ops;
/* Audit variants, NOT valid (the tests show the checks catch them): bv
 * whose h_i takes the previous weight p_{i-1}, gbv
 * walking to the first child among equal ratios (its reference
 * implementation's walk), gbv without the skew (bv on the selected path
 * with q), traversal keeping M_s after a deletion. */
extern const mdsd_blockv_ops mdsd_blockv_bv_stale_ops, mdsd_blockv_gbv_first_tie_ops, mdsd_blockv_gbv_no_skew_ops,
    mdsd_blockv_traversal_keep_q_ops;
/* The clamped reading of gbv's reference code (MATH.md §5.6): tokens ranked
 * by min(1, p/q), ties (every token with p >= q) by token index in walk and
 * CDF - valid; and with the reference's first-tie walk - NOT valid. */
extern const mdsd_blockv_ops mdsd_blockv_gbv_clamped_ops, mdsd_blockv_gbv_clamped_first_tie_ops;

const mdsd_blockv_ops *mdsd_blockv(mdsd_blockv_kind kind);
const char *mdsd_blockv_name(mdsd_blockv_kind kind);
/* MDSD_EINVAL (listing the names) where name is not a block verifier. */
int mdsd_blockv_parse(const char *name, mdsd_blockv_kind *kind, mdsd_err *err);

/* Block verification on one path (shared by bv and gbv): tokens x[0..L),
 * P[i] = p(.|first i tokens), Q[i] the law x[i] was drawn from (i < L);
 * P[L] may be NULL when next is NULL. stop[i] = P(i tokens accepted),
 * i = 0..L; next (optional) [(L + 1) V], row i the next token's law. */
int mdsd_bv_path_law(size_t V, size_t L, const int *x, const double *const *P,
                     const double *const *Q, double *stop, double *next, mdsd_err *err);

/* One step of Algorithm 2 on that path with its random numbers: *tau
 * tokens accepted, *next the next token. */
int mdsd_bv_path_step(size_t V, size_t L, const int *x, const double *const *P,
                      const double *const *Q, gsl_rng *rng, size_t *tau, int *next,
                      mdsd_err *err);

/* Samples an index from w[0..n) (non-negative, not all 0) by one uniform. */
int mdsd_blockv_sample(const double *w, size_t n, gsl_rng *rng);

/* ---- routes on a Markov toy pair (block.h) ------------------------------ */

/* Exact E[tau] and reach: every draft enumerated (mdsd_dtree_enumerate;
 * o->vopts.max_tuples its guard). */
int mdsd_blockv_exact(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                      const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);
/* The sampled route: the same drafts as mdsd_block_sampled draws, the
 * verifier's randomness integrated out on each. */
int mdsd_blockv_sampled(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                        const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);
/* Plain speculative steps (ops->step). */
int mdsd_blockv_simulate(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                         const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

/* Tree `tree` of a tree dump (its rows' laws p, q and their stored logits
 * zp, zq as mdsd_dtree_from_dump takes them) under the block verifier v and
 * sub-policy pol: R[k-1] += P(at least k accepted | tree), k = 1..pol->depth. */
int mdsd_blockv_dump_tree(const struct mdsd_tree_dump_s *d, size_t tree, const mdsd_blockv_ops *v,
                          const mdsd_policy *pol, const double *p, const double *q,
                          const float *zp, const float *zq, double *R, mdsd_err *err);

/* ---- validity (MATH.md §5.7) ------------------------------------------- */

/* The stopped-chain condition of one step from context token root, checked
 * exactly over every draft: for every output prefix u (|u| <= L) and token
 * b, P[out starts with u.b] = P[out starts with u, tau > |u|] p(b | root.u).
 * *max_dev gets the largest |difference|, *first_dev (if not NULL) the
 * largest at u empty (the first output token's law against p(.|root)). */
int mdsd_block_stopped_chain(const mdsd_markov *m, const mdsd_policy *pol,
                             const mdsd_blockv_ops *v, int root, double *max_dev, double *first_dev,
                             mdsd_err *err);

/* Live decoding: `steps` speculative steps from token 0, each from the last
 * token of the previous step's output (drafts drawn as the sampled route
 * draws them, stream "block-live"); counts[c V + b] += 1 for a step from
 * context token c whose first output token is b. */
int mdsd_block_live(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                    uint64_t steps, uint64_t seed, uint64_t *counts, mdsd_err *err);

#endif
