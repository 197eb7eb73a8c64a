/* dtree.h - one realised draft as a block verifier sees it (MATH.md §5.6):
 * the trie of the drafted tokens below the context, in draft order, with
 * the target's and the draft's next-token laws at every node.
 *
 * Node 0 is the root (the context). A node's children are the distinct
 * tokens drafted there, in the order of their first draft (seq: the lowest
 * sequence through them; tree: the first slot holding them), so that a
 * traversal in child order is the draft order. count[u] is the number of
 * drafts equal to u's token among its parent's drafts (seq: the sequences
 * through u). Nodes at depth L are the last drafted tokens: their laws are
 * needed only for the bonus token (NULL in tree dumps, which hold none).
 *
 * Builders: every draft of a Markov toy pair with its probability
 * (mdsd_dtree_enumerate, the exact routes and the optimal-block LP), one
 * draft drawn as the sampled route draws it (block_impl.h), and one tree of
 * a tree dump (mdsd_dtree_from_dump). */
#ifndef MDSD_DTREE_H
#define MDSD_DTREE_H

#include <stddef.h>

#include "block.h"

typedef struct {
    size_t V, L;             /* vocabulary; the policy's depth */
    size_t K;                /* seq: the sequences (seqs valid); tree: 0 */
    size_t n, cap;           /* nodes; allocated */
    int *parent, *depth;     /* [cap]; parent -1 at the root */
    int *token;              /* [cap]; the drafted token (root: the context's last token) */
    int *kid, *sib, *last;   /* [cap]: first child, next sibling, last child (-1: none) */
    int *count;              /* [cap]: drafts of this token at the parent */
    unsigned *seqs;          /* [cap]: seq: bit k = sequence k goes through the node */
    const double **p, **q;   /* [cap]: p(.|node), q(.|node), V long (NULL where unknown) */
    /* [cap]: the stored logits whose softmaxes (at one temperature) are p
     * and q at the node (tree dumps; NULL elsewhere). p(x)/q(x) is then
     * increasing in zp(x) - zq(x), which ranks tokens by the ratio exactly
     * and without exp (verify_gbv.c). */
    const float **zp, **zq;
} mdsd_dtree;

int mdsd_dtree_init(mdsd_dtree *t, size_t V, size_t L, size_t K, mdsd_err *err);
void mdsd_dtree_free(mdsd_dtree *t);
/* Empties t and adds the root: its token and laws. */
void mdsd_dtree_root(mdsd_dtree *t, int token, const double *p, const double *q);
/* Adds one draft of `token` at node `parent` (sequence k for seq, else k is
 * ignored): a new child in draft order, or one more draft of an existing
 * child. Returns the child's index, or -1 out of memory. */
int mdsd_dtree_draft(mdsd_dtree *t, int parent, int token, size_t k, const double *p,
                     const double *q);
/* Removes the nodes n0 .. n-1 (the last added, all children of nodes below n0). */
void mdsd_dtree_truncate(mdsd_dtree *t, size_t n0);
/* The tokens of node u's path below the root, path[0 .. depth[u]). */
void mdsd_dtree_path(const mdsd_dtree *t, int u, int *path);

/* Every draft of pol from the Markov pair after token root, with its
 * probability (a product of the nodes' draft laws; seq: the K ordered
 * sequences; tree: each node's ordered tuple), visited in a fixed order.
 * Refuses with MDSD_ETOOBIG when more than max_outcomes drafts could be
 * enumerated (0: MDSD_JOINT_MAX_TUPLES). A visit returning non-zero stops the
 * enumeration with that code. */
typedef int (*mdsd_dtree_visit)(void *ctx, const mdsd_dtree *t, double prob, mdsd_err *err);
int mdsd_dtree_enumerate(const mdsd_markov *m, const mdsd_policy *pol, int root,
                         size_t max_outcomes, mdsd_dtree_visit visit, void *ctx, mdsd_err *err);
/* The number of drafts mdsd_dtree_enumerate visits (after token root). */
int mdsd_dtree_outcomes(const mdsd_markov *m, const mdsd_policy *pol, int root, double *count,
                        mdsd_err *err);

/* Tree `tree` of a tree dump as drafted under the sub-policy pol (the first
 * K' sequences or the first w'_d slots, depth L' <= L; mdsd_tree_dump_check_case),
 * with p and q the tree's rows (row r at (r - first row) * V) and zp, zq
 * the stored logits they are the softmaxes of, laid out alike (NULL: none).
 * Nodes at depth L have no laws. */
struct mdsd_tree_dump_s;
int mdsd_dtree_from_dump(const struct mdsd_tree_dump_s *d, size_t tree, const mdsd_policy *pol,
                         const double *p, const double *q, const float *zp, const float *zq,
                         mdsd_dtree *t, mdsd_err *err);

#endif
