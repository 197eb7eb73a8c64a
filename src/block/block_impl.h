/* block_impl.h - what block.c, sampled.c and optimal.c share (internal):
 * the context of one run (pair, policy, verifier) with its per-(token, n)
 * caches of prepared verifiers and draft samplers. */
#ifndef MDSD_BLOCK_IMPL_H
#define MDSD_BLOCK_IMPL_H

#include "block.h"

typedef struct {
    const mdsd_markov *m;
    mdsd_policy pol;
    mdsd_verifier_kind v;
    mdsd_block_opts o;
    size_t nmax;             /* the most drafts at a node */
    mdsd_verifier **ver;     /* [V * (nmax + 1)], cell tok * (nmax + 1) + n */
    mdsd_sampler **smp;      /* the same cells */
} mdsd_bk;

int mdsd_bk_init(mdsd_bk *c, const mdsd_markov *m, const mdsd_policy *pol,
                 mdsd_verifier_kind v, const mdsd_block_opts *o, mdsd_err *err);
void mdsd_bk_free(mdsd_bk *c);
/* The scheme of a node after token tok with n drafts (q points into the pair). */
void mdsd_bk_scheme(const mdsd_bk *c, int tok, size_t n, mdsd_scheme *s);
int mdsd_bk_verifier(mdsd_bk *c, int tok, size_t n, const mdsd_verifier **out, mdsd_err *err);
int mdsd_bk_sampler(mdsd_bk *c, int tok, size_t n, const mdsd_sampler **out, mdsd_err *err);
/* Drafts at a node of depth d reached with m surviving sequences (seq: m;
 * tree: w_{d+1}). */
size_t mdsd_bk_drafts_at(const mdsd_bk *c, size_t d, size_t m);
/* res->reach[d] = reach_sum[d] / count for d = 1..L; tau and rates. */
void mdsd_bk_finish(mdsd_block_result *res, size_t L, const double *reach_sum, double count);

/* Backward induction over the nodes (depth d, last token tok, m surviving
 * drafts), memoised: memo[(d V + tok)(nmax + 1) + m] is a node's vector of
 * reach probabilities R[0..L-d) (owned by the memo). The exact route and the
 * optimal verifier differ only in how a node is valued (node). */
typedef struct {
    mdsd_bk *c;
    double **memo;
} mdsd_bk_memo;
typedef int (*mdsd_bk_node_fn)(mdsd_bk_memo *x, size_t d, int tok, size_t m, const double **out,
                               mdsd_err *err);
/* Runs node at the root (depth 0, token 0) for verifier v and fills res. */
int mdsd_bk_solve(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                  const mdsd_block_opts *o, mdsd_bk_node_fn node, mdsd_block_result *res,
                  mdsd_err *err);

#endif
