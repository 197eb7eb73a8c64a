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

#endif
