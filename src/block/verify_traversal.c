/* verify_traversal.c - Traversal Verification: Y. Weng, Q. Hu, X. Chen,
 * L. Liu, D. Mei, H. Qiu, J. Tian, Z. Shi, "Traversal Verification for
 * Speculative Tree Decoding", NeurIPS 2025 (arXiv 2505.12398), Algorithm 3.
 * Every node a of the draft tree carries a weight p_a, the target law
 * M_b(.|a) and the draft law M_s(.|a) of its children:
 *
 *   p_root = 1;  p_a = min{ p_parent(a) M_b(a | parent) / M_s(a | parent), 1 }
 *   repeat:
 *     a = the first leaf of the remaining tree in post-order (depth first,
 *         children in draft order)
 *     if a is the root: accept it; Y ~ M_b(. | root); stop
 *     sample eta ~ U(0, 1)
 *     if eta <= p_a: accept the path to a; Y ~ M_b(. | a); stop
 *     else delete a; at its parent b:
 *       S = sum_x max{p_b M_b(x|b) - M_s(x|b), 0}
 *       M_b(.|b) <- max{p_b M_b(.|b) - M_s(.|b), 0} / S
 *       M_s(.|b) <- M_s(.|b) without a's token, renormalised
 *       p_b <- S / (S + 1 - p_b)
 *       recompute p of b's remaining descendants from the rule above
 *
 * So every test is a Bernoulli of a weight the deletions so far fix, and the
 * law given the tree is the product of the failures before the accepted
 * test: this file runs the traversal once with the failures' probability
 * carried along (law) or with random numbers (step).
 *
 * The paper's full text was not retrievable here (its abstract, and a
 * third-party summary listing "Algorithm 3 Traversal Verification", were);
 * this is the algorithm as Thomas & Pal's reference implementation
 * (arXiv 2602.16961, verifier.py, traversal_verify) runs it, which matches
 * the abstract (leaf-to-root, whole sequences accepted) and reduces to
 * bv on one path (then S / (S + 1 - p_b) is Sun et al.'s h_i). Readings:
 *   - when S = 0 the parent's weight becomes 0 and its M_b is kept (the
 *     reference's branch), so its remaining subtree is deleted test by test
 *     at weight 0;
 *   - the root, once a leaf, is accepted outright;
 *   - "first leaf" is post-order with children in draft order (the
 *     reference's smallest prefix index);
 *   - M_s's update (remove the token, renormalise) is the law of the next
 *     draw without replacement: the paper's setting, wor trees. On i.i.d.
 *     drafts (seq, iid trees) the next *distinct* child is drawn from the
 *     same law, but how many distinct children there are depends on the
 *     tokens, and the exact check decides validity (MATH.md §5.6);
 *   - greedy and hub trees are refused (not sampling without replacement).
 * The remaining mass of M_s is summed, never formed as 1 - M_s(token). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blockv.h"

typedef struct {
    const mdsd_dtree *t;
    int keep_q;               /* audit variant (NOT valid): M_s not updated */
    char *alive;
    double *w;
    const double **pc, **qc;  /* current laws: the tree's, or a buffer */
    int *slot;                /* node -> buffer pair, or -1 */
    double *pool;             /* [(L + 1) * 2 * V] */
    int *free_slots, n_free;
} state;

static int first_alive_kid(const state *s, int u)
{
    int c = s->t->kid[u];
    while (c >= 0 && !s->alive[c])
        c = s->t->sib[c];
    return c;
}

static void weight_of(state *s, int u)
{
    int par = s->t->parent[u], tok = s->t->token[u];
    const double *p = s->pc[par], *q = s->qc[par];
    s->w[u] = q && q[tok] > 0.0 ? fmin(1.0, s->w[par] * p[tok] / q[tok]) : 0.0;
}

/* The weights of u's remaining descendants, top down. */
static void reweigh_below(state *s, int u)
{
    for (int c = first_alive_kid(s, u); c >= 0; c = s->t->sib[c]) {
        if (!s->alive[c])
            continue;
        weight_of(s, c);
        reweigh_below(s, c);
    }
}

/* Deletes leaf a and updates its parent b (the rule in the header). */
static int delete_leaf(state *s, int a, mdsd_err *err)
{
    const mdsd_dtree *t = s->t;
    size_t V = t->V;
    int b = t->parent[a], tok = t->token[a];
    s->alive[a] = 0;
    if (s->slot[a] >= 0)
        s->free_slots[s->n_free++] = s->slot[a];
    if (!s->pc[b] || !s->qc[b])
        return mdsd_fail(err, MDSD_EINVAL, "traversal: no laws at a node of depth %d",
                         t->depth[b]);
    if (s->slot[b] < 0) {
        if (s->n_free == 0)
            return mdsd_fail(err, MDSD_EINVAL, "traversal: more modified nodes than depths");
        s->slot[b] = s->free_slots[--s->n_free];
        double *pb = s->pool + (size_t)s->slot[b] * 2 * V, *qb = pb + V;
        memcpy(pb, s->pc[b], V * sizeof *pb);
        memcpy(qb, s->qc[b], V * sizeof *qb);
        s->pc[b] = pb, s->qc[b] = qb;
    }
    double *pb = (double *)s->pc[b], *qb = (double *)s->qc[b];
    double wb = fmin(s->w[b], 1.0), S = 0.0, rest = 0.0;
    for (size_t x = 0; x < V; x++) {
        double d = wb * pb[x] - qb[x];
        if (d > 0.0)
            S += d;
        if ((int)x != tok)
            rest += qb[x];
    }
    if (S > 0.0) {
        for (size_t x = 0; x < V; x++) {
            double d = wb * pb[x] - qb[x];
            pb[x] = d > 0.0 ? d / S : 0.0;
        }
        s->w[b] = S / (S + (1.0 - wb));
    } else {
        s->w[b] = 0.0;
    }
    for (size_t x = 0; x < V && !s->keep_q; x++) {
        if ((int)x == tok)
            qb[x] = 0.0;
        else if (rest > 0.0)
            qb[x] /= rest;
    }
    reweigh_below(s, b);
    return MDSD_OK;
}

/* The traversal: with rng, one run (*node, *next); without, stop[] and
 * next rows (when next) integrated over its tests. */
static int traverse(const mdsd_dtree *t, int keep_q, gsl_rng *rng, double *stop, double *next,
                    int *node, int *tok, mdsd_err *err)
{
    size_t n = t->n, V = t->V, L = t->L;
    state s = {t, keep_q, calloc(n, 1), malloc(n * sizeof(double)), malloc(n * sizeof(double *)),
               malloc(n * sizeof(double *)), malloc(n * sizeof(int)),
               malloc((L + 1) * 2 * V * sizeof(double)), malloc((L + 1) * sizeof(int)), 0};
    int rc = MDSD_OK;
    if (!s.alive || !s.w || !s.pc || !s.qc || !s.slot || !s.pool || !s.free_slots)
        rc = mdsd_fail(err, MDSD_ENOMEM, "traversal: out of memory");
    for (size_t u = 0; rc == MDSD_OK && u < n; u++) {
        s.alive[u] = 1, s.pc[u] = t->p[u], s.qc[u] = t->q[u], s.slot[u] = -1;
        if (u == 0)
            s.w[u] = 1.0;
        else
            weight_of(&s, (int)u); /* parents come before their children */
    }
    for (size_t k = 0; rc == MDSD_OK && k <= L; k++)
        s.free_slots[s.n_free++] = (int)(L - k);
    if (stop)
        memset(stop, 0, n * sizeof *stop);
    double surv = 1.0;
    while (rc == MDSD_OK) {
        int a = 0, c;
        while ((c = first_alive_kid(&s, a)) >= 0)
            a = c;
        int accept = a == 0 || (rng ? gsl_rng_uniform(rng) <= s.w[a] : 0);
        if (rng && accept) {
            *node = a;
            *tok = s.pc[a] ? mdsd_blockv_sample(s.pc[a], V, rng) : -1;
            break;
        }
        if (!rng) {
            double at = a == 0 ? surv : surv * s.w[a];
            stop[a] += at;
            if (next && at > 0.0) {
                if (!s.pc[a])
                    rc = mdsd_fail(err, MDSD_EINVAL, "traversal: no target law at an accepted "
                                   "node");
                else
                    memcpy(next + (size_t)a * V, s.pc[a], V * sizeof *next);
            }
            if (a == 0)
                break;
            surv *= 1.0 - s.w[a];
            if (surv == 0.0) /* every later test has probability 0 */
                break;
        }
        if (rc == MDSD_OK)
            rc = delete_leaf(&s, a, err);
    }
    free(s.alive), free(s.w), free(s.pc), free(s.qc), free(s.slot), free(s.pool);
    free(s.free_slots);
    return rc;
}

static int traversal_check(const mdsd_policy *pol, mdsd_err *err)
{
    if (pol->kind == MDSD_POLICY_TREE && pol->scheme != MDSD_SCHEME_WOR &&
        pol->scheme != MDSD_SCHEME_IID)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "traversal: its draft-law update (remove the "
                         "rejected token, renormalise) is sampling without replacement; %s trees "
                         "are not (wor and iid trees, seq)", mdsd_scheme_name(pol->scheme));
    return MDSD_OK;
}

static int traversal_law(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err)
{
    return traverse(t, 0, NULL, stop, next, NULL, NULL, err);
}

static int traversal_step(const mdsd_dtree *t, gsl_rng *rng, int *node, int *next, mdsd_err *err)
{
    return traverse(t, 0, rng, NULL, NULL, node, next, err);
}

const mdsd_blockv_ops mdsd_blockv_traversal_ops = {"traversal", traversal_check, traversal_law,
                                                   traversal_step};

/* Audit variant (NOT valid): the draft law M_s kept after a deletion. */
static int keep_q_law(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err)
{
    return traverse(t, 1, NULL, stop, next, NULL, NULL, err);
}

static int keep_q_step(const mdsd_dtree *t, gsl_rng *rng, int *node, int *next, mdsd_err *err)
{
    return traverse(t, 1, rng, NULL, NULL, node, next, err);
}

const mdsd_blockv_ops mdsd_blockv_traversal_keep_q_ops = {"traversal-keep-q", traversal_check,
                                                          keep_q_law, keep_q_step};
