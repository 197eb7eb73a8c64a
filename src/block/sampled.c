/* sampled.c - block efficiency from sampled draft trees (the verifier's
 * randomness integrated out on each tree through its output law), and the
 * plain simulation (mdsd_verifier_verify down the tree) the tests compare
 * against.
 *
 * Reproducibility: trials in blocks of MDSD_BLOCK_TRIAL_BLOCK, block b on
 * its own taus2 stream mdsd_seed_mix(seed, b, mdsd_seed_name(name)), block
 * statistics merged in block order: a function of (seed, trials) only,
 * whatever the thread count. The draft trees are drawn the same way for
 * every verifier (every child's subtree is drawn, accepted or not). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "block_impl.h"
#include "blockv.h"
#include "rng.h"

typedef struct {
    double count, mean, m2;                    /* Welford of tau */
    double reach[MDSD_BLOCK_MAX_DEPTH + 1];    /* sums of P(at least d accepted) */
} block_stats;

static void stats_add(block_stats *b, double tau)
{
    b->count += 1.0;
    double delta = tau - b->mean;
    b->mean += delta / b->count;
    b->m2 += delta * (tau - b->mean);
}

/* Chan et al.'s merge of two Welford accumulators. */
static void stats_merge(block_stats *a, const block_stats *b, size_t L)
{
    if (b->count == 0.0)
        return;
    double n = a->count + b->count, delta = b->mean - a->mean;
    a->mean += delta * b->count / n;
    a->m2 += b->m2 + delta * delta * a->count * b->count / n;
    a->count = n;
    for (size_t d = 1; d <= L; d++)
        a->reach[d] += b->reach[d];
}

/* ---- integrated: one tree's conditional reach vector --------------------- */

typedef struct {
    mdsd_bk *c;
    gsl_rng *rng;
    int seq[MDSD_BLOCK_MAX_DRAFTS][MDSD_BLOCK_MAX_DEPTH]; /* seq: the K sequences */
    const mdsd_blockv_ops *bv;                            /* block verifier routes */
    mdsd_dtree tree;                                      /* their draft */
    double *stop;                                         /* [tree.n] */
} walker;

/* seq: the sequences idx[0..m) share the node (depth d, last token tok);
 * R[k-1] += P(at least k more accepted | the tree). */
static int seq_node(walker *w, size_t d, int tok, const size_t *idx, size_t m, double *R,
                    mdsd_err *err)
{
    size_t left = w->c->pol.depth - d;
    int x[MDSD_BLOCK_MAX_DRAFTS];
    double py[MDSD_BLOCK_MAX_DRAFTS];
    for (size_t j = 0; j < m; j++)
        x[j] = w->seq[idx[j]][d];
    const mdsd_verifier *v;
    int rc = mdsd_bk_verifier(w->c, tok, m, &v, err);
    if (rc == MDSD_OK)
        rc = mdsd_verifier_law(v, x, py, err);
    for (size_t j = 0; rc == MDSD_OK && j < m; j++) {
        size_t sub[MDSD_BLOCK_MAX_DRAFTS], count = 0, first = 1;
        for (size_t k = 0; k < m; k++)
            if (x[k] == x[j]) {
                first &= k >= j;
                sub[count++] = idx[k];
            }
        if (!first || !(py[j] > 0.0))
            continue;
        R[0] += py[j];
        if (left > 1) {
            double child[MDSD_BLOCK_MAX_DEPTH] = {0};
            rc = seq_node(w, d + 1, x[j], sub, count, child, err);
            for (size_t k = 1; k < left; k++)
                R[k] += py[j] * child[k - 1];
        }
    }
    return rc;
}

/* tree: draws the node's children, then every distinct child's subtree. */
static int tree_node(walker *w, size_t d, int tok, double *R, mdsd_err *err)
{
    size_t left = w->c->pol.depth - d, n = w->c->pol.width[d];
    int x[MDSD_BLOCK_MAX_DRAFTS];
    double py[MDSD_BLOCK_MAX_DRAFTS];
    const mdsd_sampler *sm;
    const mdsd_verifier *v;
    int rc = mdsd_bk_sampler(w->c, tok, n, &sm, err);
    if (rc == MDSD_OK)
        rc = mdsd_bk_verifier(w->c, tok, n, &v, err);
    if (rc != MDSD_OK)
        return rc;
    mdsd_sampler_draw(sm, w->rng, x);
    if ((rc = mdsd_verifier_law(v, x, py, err)) != MDSD_OK)
        return rc;
    for (size_t j = 0; rc == MDSD_OK && j < n; j++) {
        size_t first = 1;
        for (size_t k = 0; k < j; k++)
            first &= x[k] != x[j];
        if (!first)
            continue;
        double child[MDSD_BLOCK_MAX_DEPTH] = {0};
        if (left > 1) /* drawn even when py = 0: the same trees for every verifier */
            rc = tree_node(w, d + 1, x[j], child, err);
        R[0] += py[j];
        for (size_t k = 1; k < left; k++)
            R[k] += py[j] * child[k - 1];
    }
    return rc;
}

/* Draws the K sequences of a seq draft after token root. */
static int draw_sequences(walker *w, int root, mdsd_err *err)
{
    const mdsd_policy *pol = &w->c->pol;
    for (size_t k = 0; k < pol->sequences; k++) {
        int tok = root;
        for (size_t d = 0; d < pol->depth; d++) {
            const mdsd_sampler *sm;
            int rc = mdsd_bk_sampler(w->c, tok, 1, &sm, err);
            if (rc)
                return rc;
            mdsd_sampler_draw(sm, w->rng, &tok);
            w->seq[k][d] = tok;
        }
    }
    return MDSD_OK;
}

static int integrated_trial(walker *w, double *R, mdsd_err *err)
{
    const mdsd_policy *pol = &w->c->pol;
    memset(R, 0, pol->depth * sizeof *R);
    if (pol->kind == MDSD_POLICY_TREE)
        return tree_node(w, 0, 0, R, err);
    int rc = draw_sequences(w, 0, err);
    if (rc)
        return rc;
    size_t idx[MDSD_BLOCK_MAX_DRAFTS];
    for (size_t k = 0; k < pol->sequences; k++)
        idx[k] = k;
    return seq_node(w, 0, 0, idx, pol->sequences, R, err);
}

/* ---- simulated: one speculative step ------------------------------------ */

static int simulated_trial(walker *w, double *R, mdsd_err *err)
{
    const mdsd_policy *pol = &w->c->pol;
    memset(R, 0, pol->depth * sizeof *R);
    size_t idx[MDSD_BLOCK_MAX_DRAFTS], m = pol->sequences;
    int rc = MDSD_OK;
    if (pol->kind == MDSD_POLICY_SEQ) {
        if ((rc = draw_sequences(w, 0, err)))
            return rc;
        for (size_t k = 0; k < m; k++)
            idx[k] = k;
    }
    int tok = 0;
    for (size_t d = 0; d < pol->depth; d++) {
        int x[MDSD_BLOCK_MAX_DRAFTS];
        size_t n = pol->kind == MDSD_POLICY_SEQ ? m : pol->width[d];
        const mdsd_verifier *v;
        if ((rc = mdsd_bk_verifier(w->c, tok, n, &v, err)))
            return rc;
        if (pol->kind == MDSD_POLICY_SEQ) {
            for (size_t j = 0; j < n; j++)
                x[j] = w->seq[idx[j]][d];
        } else {
            const mdsd_sampler *sm;
            if ((rc = mdsd_bk_sampler(w->c, tok, n, &sm, err)))
                return rc;
            mdsd_sampler_draw(sm, w->rng, x);
        }
        int j = -1, y = mdsd_verifier_verify(v, x, w->rng, &j);
        if (j < 0)
            break; /* y is the correction token */
        R[d] = 1.0;
        tok = y;
        if (pol->kind == MDSD_POLICY_SEQ) {
            size_t kept = 0;
            for (size_t k = 0; k < n; k++)
                if (x[k] == y)
                    idx[kept++] = idx[k];
            m = kept;
        }
    }
    return MDSD_OK;
}

/* ---- block verifiers: the draft as a whole -------------------------------- */

/* tree: the node's tuple, then every distinct child's subtree in draft
 * order: the draws of tree_node, so the same trees for every verifier. */
static int draw_tree(walker *w, int u, mdsd_err *err)
{
    mdsd_dtree *t = &w->tree;
    const mdsd_markov *m = w->c->m;
    size_t d = (size_t)t->depth[u], n = w->c->pol.width[d], V = m->V;
    int x[MDSD_BLOCK_MAX_DRAFTS];
    const mdsd_sampler *sm;
    int rc = mdsd_bk_sampler(w->c, t->token[u], n, &sm, err);
    if (rc)
        return rc;
    mdsd_sampler_draw(sm, w->rng, x);
    size_t n0 = t->n;
    for (size_t j = 0; j < n; j++)
        if (mdsd_dtree_draft(t, u, x[j], 0, m->p + (size_t)x[j] * V, m->q + (size_t)x[j] * V) < 0)
            return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    for (size_t c = n0, n1 = t->n; c < n1 && rc == MDSD_OK; c++)
        if (d + 1 < w->c->pol.depth)
            rc = draw_tree(w, (int)c, err);
    return rc;
}

/* The draft of the policy after token root into w->tree. */
static int draw_draft(walker *w, int root, mdsd_err *err)
{
    mdsd_dtree *t = &w->tree;
    const mdsd_markov *m = w->c->m;
    const mdsd_policy *pol = &w->c->pol;
    size_t V = m->V;
    mdsd_dtree_root(t, root, m->p + (size_t)root * V, m->q + (size_t)root * V);
    if (t->n != 1)
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    if (pol->kind == MDSD_POLICY_TREE)
        return draw_tree(w, 0, err);
    int rc = draw_sequences(w, root, err), at[MDSD_BLOCK_MAX_DRAFTS] = {0};
    for (size_t d = 0; rc == MDSD_OK && d < pol->depth; d++)
        for (size_t k = 0; k < pol->sequences && rc == MDSD_OK; k++) {
            int x = w->seq[k][d];
            if ((at[k] = mdsd_dtree_draft(t, at[k], x, k, m->p + (size_t)x * V,
                                          m->q + (size_t)x * V)) < 0)
                rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        }
    return rc;
}

static int blockv_integrated_trial(walker *w, double *R, mdsd_err *err)
{
    const mdsd_policy *pol = &w->c->pol;
    memset(R, 0, pol->depth * sizeof *R);
    int rc = draw_draft(w, 0, err);
    if (rc == MDSD_OK) {
        free(w->stop);
        if (!(w->stop = malloc(w->tree.n * sizeof *w->stop)))
            return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        rc = w->bv->law(&w->tree, w->stop, NULL, err);
    }
    for (size_t u = 0; rc == MDSD_OK && u < w->tree.n; u++)
        for (int d = 0; d < w->tree.depth[u]; d++)
            R[d] += w->stop[u];
    return rc;
}

static int blockv_simulated_trial(walker *w, double *R, mdsd_err *err)
{
    memset(R, 0, w->c->pol.depth * sizeof *R);
    int node = 0, next;
    int rc = draw_draft(w, 0, err);
    if (rc == MDSD_OK)
        rc = w->bv->step(&w->tree, w->rng, &node, &next, err);
    for (int d = 0; rc == MDSD_OK && d < w->tree.depth[node]; d++)
        R[d] = 1.0;
    return rc;
}

/* ---- the trial loop ------------------------------------------------------ */

typedef int (*trial_fn)(walker *w, double *R, mdsd_err *err);

static int run_trials(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                      const mdsd_blockv_ops *bv, const mdsd_block_opts *o, const char *stream,
                      trial_fn trial, mdsd_block_result *res, mdsd_err *err)
{
    mdsd_bk c;
    int rc = mdsd_bk_init(&c, m, pol, v, o, err);
    if (rc)
        return rc;
    uint64_t T = c.o.trials, B = MDSD_BLOCK_TRIAL_BLOCK;
    if (T < 2) {
        mdsd_bk_free(&c);
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_TRIALS,
                                "block: `trials` must be at least 2 (got %llu)",
                                (unsigned long long)T);
    }
    uint64_t nblocks = (T + B - 1) / B;
    block_stats *st = calloc(nblocks, sizeof *st);
    if (!st) {
        mdsd_bk_free(&c);
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory for %llu trial blocks",
                         (unsigned long long)nblocks);
    }
    uint64_t base_name = mdsd_seed_name(stream);
    long long failed_at = -1;
    mdsd_err first_err = {0, "", MDSD_OPTION_NONE};
    int threads = c.o.threads > 0 ? c.o.threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        walker *w = calloc(1, sizeof *w);
        gsl_rng *rng = mdsd_rng_alloc(0);
        if (w) {
            w->bv = bv;
            mdsd_dtree_init(&w->tree, m->V, pol->depth,
                            pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0, NULL);
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nblocks; b++) {
            long long failed_now;
#pragma omp atomic read
            failed_now = failed_at;
            if (failed_now >= 0)
                continue;
            mdsd_err e = {0, "", MDSD_OPTION_NONE};
            int brc = MDSD_OK;
            if (!w || !rng) {
                brc = mdsd_fail(&e, MDSD_ENOMEM, "block: out of memory");
            } else if (mdsd_interrupted()) { /* mdsd_interrupt: the blocks left are skipped */
                brc = mdsd_fail_interrupted(&e, "block");
            } else {
                w->c = &c;
                w->rng = rng;
                mdsd_rng_reseed(rng, mdsd_seed_mix(c.o.seed, b, base_name));
                uint64_t end = (b + 1) * B < T ? (b + 1) * B : T;
                for (uint64_t t = b * B; t < end && brc == MDSD_OK; t++) {
                    double R[MDSD_BLOCK_MAX_DEPTH];
                    if ((brc = trial(w, R, &e)) != MDSD_OK)
                        break;
                    double tau = 1.0;
                    for (size_t d = 0; d < pol->depth; d++) {
                        tau += R[d];
                        st[b].reach[d + 1] += R[d];
                    }
                    stats_add(&st[b], tau);
                }
            }
            if (brc != MDSD_OK) {
#pragma omp critical(mdsd_block_err)
                if (failed_at < 0 || (long long)b < failed_at) {
                    failed_at = (long long)b;
                    first_err = e;
                }
            }
        }
        if (w) {
            mdsd_dtree_free(&w->tree);
            free(w->stop);
        }
        free(w);
        if (rng)
            gsl_rng_free(rng);
    }
    if (failed_at >= 0) {
        rc = first_err.code ? first_err.code : MDSD_EINVAL;
        if (err)
            *err = first_err;
    } else {
        block_stats all = {0};
        for (uint64_t b = 0; b < nblocks; b++)
            stats_merge(&all, &st[b], pol->depth);
        memset(res, 0, sizeof *res);
        mdsd_bk_finish(res, pol->depth, all.reach, all.count);
        res->tau = all.mean; /* the same up to rounding; the Welford mean is the one with se */
        res->trials = T;
        res->se = sqrt(all.m2 / (all.count - 1.0) / all.count);
    }
    free(st);
    mdsd_bk_free(&c);
    return rc;
}

int mdsd_block_sampled(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                       const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    return run_trials(m, pol, v, NULL, o, "block-trees", integrated_trial, res, err);
}

int mdsd_block_simulate(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                        const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    return run_trials(m, pol, v, NULL, o, "block-simulate", simulated_trial, res, err);
}

static int blockv_usable(const mdsd_policy *pol, const mdsd_blockv_ops *v, mdsd_err *err)
{
    int rc = mdsd_policy_check(pol, err);
    return rc ? rc : v->check(pol, err);
}

int mdsd_blockv_sampled(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                        const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    int rc = blockv_usable(pol, v, err);
    return rc ? rc : run_trials(m, pol, MDSD_VERIFIER_SD, v, o, "block-trees",
                                blockv_integrated_trial, res, err);
}

int mdsd_blockv_simulate(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                         const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    int rc = blockv_usable(pol, v, err);
    return rc ? rc : run_trials(m, pol, MDSD_VERIFIER_SD, v, o, "block-simulate",
                                blockv_simulated_trial, res, err);
}

int mdsd_block_live(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                    uint64_t steps, uint64_t seed, uint64_t *counts, mdsd_err *err)
{
    mdsd_bk c;
    int rc = blockv_usable(pol, v, err);
    if (rc == MDSD_OK)
        rc = mdsd_bk_init(&c, m, pol, MDSD_VERIFIER_SD, NULL, err);
    if (rc)
        return rc;
    walker w = {&c, mdsd_rng_alloc(mdsd_seed_mix(seed, 0, mdsd_seed_name("block-live"))), {{0}}, v,
                {0}, NULL};
    mdsd_dtree_init(&w.tree, m->V, pol->depth, pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0,
                    NULL);
    int ctx = 0, path[MDSD_BLOCK_MAX_DEPTH];
    if (!w.rng)
        rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    for (uint64_t i = 0; rc == MDSD_OK && i < steps; i++) {
        int node = 0, next = -1;
        if ((rc = draw_draft(&w, ctx, err)) == MDSD_OK)
            rc = v->step(&w.tree, w.rng, &node, &next, err);
        if (rc == MDSD_OK && (next < 0 || (size_t)next >= m->V))
            rc = mdsd_fail(err, MDSD_EINVAL, "block live: %s gave no next token", v->name);
        if (rc != MDSD_OK)
            break;
        mdsd_dtree_path(&w.tree, node, path);
        int first = w.tree.depth[node] > 0 ? path[0] : next;
        counts[(size_t)ctx * m->V + (size_t)first]++;
        ctx = next;
    }
    mdsd_dtree_free(&w.tree);
    if (w.rng)
        gsl_rng_free(w.rng);
    mdsd_bk_free(&c);
    return rc;
}
