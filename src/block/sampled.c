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

/* Draws the K sequences of a seq draft. */
static int draw_sequences(walker *w, mdsd_err *err)
{
    const mdsd_policy *pol = &w->c->pol;
    for (size_t k = 0; k < pol->sequences; k++) {
        int tok = 0;
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
    int rc = draw_sequences(w, err);
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
        if ((rc = draw_sequences(w, err)))
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

/* ---- the trial loop ------------------------------------------------------ */

typedef int (*trial_fn)(walker *w, double *R, mdsd_err *err);

static int run_trials(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                      const mdsd_block_opts *o, const char *stream, trial_fn trial,
                      mdsd_block_result *res, mdsd_err *err)
{
    mdsd_bk c;
    int rc = mdsd_bk_init(&c, m, pol, v, o, err);
    if (rc)
        return rc;
    uint64_t T = c.o.trials, B = MDSD_BLOCK_TRIAL_BLOCK;
    if (T < 2) {
        mdsd_bk_free(&c);
        return mdsd_fail(err, MDSD_EINVAL, "block: --trials must be at least 2 (got %llu)",
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
    mdsd_err first_err = {0, ""};
    int threads = c.o.threads > 0 ? c.o.threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        walker *w = calloc(1, sizeof *w);
        gsl_rng *rng = mdsd_rng_alloc(0);
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nblocks; b++) {
            long long failed_now;
#pragma omp atomic read
            failed_now = failed_at;
            if (failed_now >= 0)
                continue;
            mdsd_err e = {0, ""};
            int brc = MDSD_OK;
            if (!w || !rng) {
                brc = mdsd_fail(&e, MDSD_ENOMEM, "block: out of memory");
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
    return run_trials(m, pol, v, o, "block-trees", integrated_trial, res, err);
}

int mdsd_block_simulate(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                        const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    return run_trials(m, pol, v, o, "block-simulate", simulated_trial, res, err);
}
