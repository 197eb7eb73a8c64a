/* Live decoding (src/block/live.c, MATH.md §5.9) and tree dumps drawn at the
 * block starts of live runs (tree_contexts = live, src/block/treedump.c):
 * - E[tau | context s] from the block law equals mdsd_block_exact on the pair
 *   relabelled so that s is token 0 (every s; seq and tree policies);
 * - the exact live value equals simulated live runs (trees drawn, the verifier
 *   run down them with mdsd_verifier_verify, each block from the last token of
 *   the one before), and the long run is the limit of long horizons;
 * - the powered cross-check: a tree dump drawn at the block starts of live runs,
 *   evaluated by mdsd_tree_dump_eval, agrees with the exact live value, with a
 *   standard error small enough that a 1 % error is beyond 4 s.e. with
 *   probability >= 0.99. Power: the check fails when |estimate - claimed| >
 *   4 s.e. (a false alarm P(|Z| > 4) = 6.3e-5 for a right claim). If the
 *   claimed value is off by delta = 1 % of E[tau], estimate - claimed ~
 *   N(delta, s.e.^2), and P(fail) >= P(Z > 4 - delta / s.e.) = Phi(delta / s.e.
 *   - 4); Phi(z) >= 0.99 for z >= 2.326, so delta / s.e. >= 6.33, i.e.
 *   s.e. <= 0.01 E[tau] / 6.33: asserted below on the dump's clustered s.e.
 *   (12,500 runs of 16 tokens). Planted errors are caught: the live value off by 1 %,
 *   and trees at every position of the target's chain (position-uniform
 *   weighting, what today's dumps hold) claimed as live, while those agree with
 *   the exact position mean;
 * - a live dump answers its own case only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "block.h"
#include "live.h"
#include "testutil.h"
#include "treedump.h"

#define MAXK 4
#define MAX_NODES 64

/* The pair with tokens 0 and s exchanged. */
static void relabel(const mdsd_markov *m, size_t s, mdsd_markov *out)
{
    size_t V = m->V;
    out->V = V;
    out->p = malloc(V * V * sizeof *out->p);
    out->q = malloc(V * V * sizeof *out->q);
    for (size_t i = 0; i < V; i++)
        for (size_t j = 0; j < V; j++) {
            size_t a = i == 0 ? s : i == s ? 0 : i, b = j == 0 ? s : j == s ? 0 : j;
            out->p[a * V + b] = m->p[i * V + j];
            out->q[a * V + b] = m->q[i * V + j];
        }
}

static mdsd_policy seq(size_t K, size_t L)
{
    mdsd_policy pol = {MDSD_POLICY_SEQ, L, K, {0}, MDSD_SCHEME_IID};
    return pol;
}

static mdsd_policy tree2(mdsd_scheme_kind s, size_t w1, size_t w2)
{
    mdsd_policy pol = {MDSD_POLICY_TREE, 2, 0, {w1, w2}, s};
    return pol;
}

Test(block_live, tau_by_token_is_exact_from_each_context)
{
    struct {
        size_t V;
        mdsd_policy pol;
        mdsd_verifier_kind v;
    } cases[] = {{3, seq(2, 3), MDSD_VERIFIER_RRS},    {4, seq(2, 3), MDSD_VERIFIER_KSEQ},
                 {3, seq(3, 2), MDSD_VERIFIER_RRS},    {4, seq(1, 4), MDSD_VERIFIER_SD},
                 {3, tree2(MDSD_SCHEME_IID, 2, 2), MDSD_VERIFIER_KSEQ},
                 {4, tree2(MDSD_SCHEME_WOR, 3, 2), MDSD_VERIFIER_RRSW},
                 {3, tree2(MDSD_SCHEME_HUB, 2, 2), MDSD_VERIFIER_SPECHUB}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        mdsd_markov m;
        test_toy_markov(&m, cases[c].V, 24500 + c);
        double tau[8];
        mdsd_block_live_result res;
        mdsd_err err;
        cr_assert_eq(mdsd_block_live_exact(&m, &cases[c].pol, cases[c].v, 0, NULL, &res, tau, &err),
                     MDSD_OK, "%s", err.msg);
        cr_assert_eq(res.first, tau[0]);
        for (size_t s = 0; s < m.V; s++) {
            mdsd_markov r;
            relabel(&m, s, &r);
            mdsd_block_result ex;
            cr_assert_eq(mdsd_block_exact(&r, &cases[c].pol, cases[c].v, NULL, &ex, &err), MDSD_OK,
                         "%s", err.msg);
            cr_assert(fabs(ex.tau - tau[s]) <= 1e-12 * ex.tau, "case %zu, context %zu: %.17g vs "
                      "exact %.17g", c, s, tau[s], ex.tau);
            mdsd_markov_free(&r);
        }
        /* live and position means are averages of E[tau | s]: within their range */
        double lo = INFINITY, hi = 0.0;
        for (size_t s = 0; s < m.V; s++)
            lo = fmin(lo, tau[s]), hi = fmax(hi, tau[s]);
        cr_assert(res.live >= lo - 1e-12 && res.live <= hi + 1e-12);
        cr_assert(res.positions >= lo - 1e-12 && res.positions <= hi + 1e-12);
        mdsd_markov_free(&m);
    }
}

/* ---- drawing trees and running live decoding ----------------------------- */

typedef struct {
    int tok;          /* the node's last token */
    int depth, edge;
    long long parent; /* index in the tree */
    unsigned mask;    /* seq: the sequences through the node */
    int slots[MAXK];  /* the node's drafts in draft order, -1 = unused */
} tnode;

typedef struct {
    tnode node[MAX_NODES];
    size_t n;
} ttree;

typedef struct {
    const mdsd_markov *m;
    mdsd_policy pol;
    mdsd_verifier_kind v;
    gsl_ran_discrete_t **pd, **qd;  /* [V]: p(. | t), q(. | t) */
    mdsd_verifier **ver;            /* [V * (MAXK + 1)]: (token, drafts) */
} sim;

static void sim_init(sim *x, const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v)
{
    size_t V = m->V;
    x->m = m, x->pol = *pol, x->v = v;
    x->pd = malloc(V * sizeof *x->pd);
    x->qd = malloc(V * sizeof *x->qd);
    x->ver = calloc(V * (MAXK + 1), sizeof *x->ver);
    for (size_t t = 0; t < V; t++) {
        x->pd[t] = gsl_ran_discrete_preproc(V, m->p + t * V);
        x->qd[t] = gsl_ran_discrete_preproc(V, m->q + t * V);
    }
}

static void sim_free(sim *x)
{
    for (size_t t = 0; t < x->m->V; t++) {
        gsl_ran_discrete_free(x->pd[t]);
        gsl_ran_discrete_free(x->qd[t]);
    }
    for (size_t i = 0; i < x->m->V * (MAXK + 1); i++)
        mdsd_verifier_free(x->ver[i]);
    free(x->pd), free(x->qd), free(x->ver);
}

static size_t add_node(ttree *t, int tok, int depth, int edge, long long parent, unsigned mask)
{
    cr_assert(t->n < MAX_NODES);
    tnode *u = &t->node[t->n];
    *u = (tnode){tok, depth, edge, parent, mask, {-1, -1, -1, -1}};
    return t->n++;
}

/* A draft tree from context token root, nodes in breadth-first order (parents
 * first), one child per distinct drafted token below depth L - 1. */
static void draw_tree(const sim *x, int root, gsl_rng *r, ttree *t)
{
    size_t L = x->pol.depth, K = x->pol.sequences;
    int seqs[MAXK][MDSD_BLOCK_MAX_DEPTH];
    for (size_t k = 0; x->pol.kind == MDSD_POLICY_SEQ && k < K; k++)
        for (size_t d = 0, tok = (size_t)root; d < L; d++)
            tok = gsl_ran_discrete(r, x->qd[tok]), seqs[k][d] = (int)tok;
    t->n = 0;
    add_node(t, root, 0, -1, -1, (1u << K) - 1u);
    for (size_t u = 0; u < t->n; u++) {
        tnode *nd = &t->node[u];
        size_t d = (size_t)nd->depth;
        if (x->pol.kind == MDSD_POLICY_SEQ)
            for (size_t k = 0; k < K; k++)
                nd->slots[k] = nd->mask >> k & 1u ? seqs[k][d] : -1;
        else
            for (size_t k = 0; k < x->pol.width[d]; k++)
                nd->slots[k] = (int)gsl_ran_discrete(r, x->qd[nd->tok]);
        for (size_t k = 0; d + 1 < L && k < MAXK; k++) {
            int tok = nd->slots[k], first = tok >= 0;
            unsigned sub = 0;
            for (size_t j = 0; j < MAXK; j++) {
                first &= !(j < k && nd->slots[j] == tok);
                sub |= nd->slots[j] == tok ? 1u << j : 0u;
            }
            if (first)
                add_node(t, tok, (int)d + 1, tok, (long long)u, sub);
            nd = &t->node[u];
        }
    }
}

static const mdsd_verifier *verifier_at(sim *x, int tok, size_t n)
{
    mdsd_verifier **v = &x->ver[(size_t)tok * (MAXK + 1) + n];
    if (!*v) {
        mdsd_scheme s = {x->pol.kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : x->pol.scheme, n,
                         x->m->V, x->m->q + (size_t)tok * x->m->V, NULL};
        mdsd_err err;
        *v = mdsd_verifier_alloc(x->v, x->m->p + (size_t)tok * x->m->V, &s, NULL, &err);
        cr_assert(*v, "%s", err.msg);
    }
    return *v;
}

/* One block: the verifier run down the tree; returns tau, *last = the block's
 * last token (correction or bonus). */
static int walk(sim *x, const ttree *t, gsl_rng *r, int *last)
{
    size_t u = 0, L = x->pol.depth;
    for (;;) {
        const tnode *nd = &t->node[u];
        int drafts[MAXK], drafted = 0;
        size_t n = 0;
        for (size_t k = 0; k < MAXK; k++)
            if (nd->slots[k] >= 0)
                drafts[n++] = nd->slots[k];
        int y = mdsd_verifier_verify(verifier_at(x, nd->tok, n), drafts, r, NULL);
        for (size_t j = 0; j < n; j++)
            drafted |= drafts[j] == y;
        if (!drafted) {
            *last = y;
            return nd->depth + 1;
        }
        if ((size_t)nd->depth + 1 == L) {
            *last = (int)gsl_ran_discrete(r, x->pd[y]);
            return (int)L + 1;
        }
        size_t c = u + 1;
        while (c < t->n && !(t->node[c].parent == (long long)u && t->node[c].edge == y))
            c++;
        cr_assert(c < t->n);
        u = c;
    }
}

/* ---- a tree dump from the trees drawn ------------------------------------ */

typedef struct {
    size_t n, cap, trees;
    float *target, *draft;
    int *zero, *tree, *index, *depth, *edge, *slots, *sample, *position;
    int *tau; /* the block's realised tau (live runs; 0 elsewhere) */
    long long *parent;
} rows;

static void rows_add(rows *b, const mdsd_markov *m, const ttree *t, int sample, int position)
{
    size_t V = m->V;
    if (b->n + t->n > b->cap) {
        b->cap = 2 * (b->n + t->n);
        b->target = realloc(b->target, b->cap * V * sizeof *b->target);
        b->draft = realloc(b->draft, b->cap * V * sizeof *b->draft);
        int **ints[] = {&b->zero, &b->tree,  &b->index,   &b->depth,
                        &b->edge, &b->sample, &b->position, &b->tau};
        for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
            *ints[i] = realloc(*ints[i], b->cap * sizeof **ints[i]);
        b->slots = realloc(b->slots, b->cap * MAXK * sizeof *b->slots);
        b->parent = realloc(b->parent, b->cap * sizeof *b->parent);
    }
    size_t base = b->n;
    for (size_t u = 0; u < t->n; u++, b->n++) {
        const tnode *nd = &t->node[u];
        for (size_t j = 0; j < V; j++) {
            b->target[b->n * V + j] = (float)log(m->p[(size_t)nd->tok * V + j]);
            b->draft[b->n * V + j] = (float)log(m->q[(size_t)nd->tok * V + j]);
        }
        b->zero[b->n] = 0;
        b->tree[b->n] = (int)b->trees;
        b->index[b->n] = (int)u;
        b->depth[b->n] = nd->depth;
        b->edge[b->n] = nd->edge;
        memcpy(b->slots + b->n * MAXK, nd->slots, sizeof nd->slots);
        b->parent[b->n] = nd->parent < 0 ? -1 : (long long)base + nd->parent;
        b->sample[b->n] = sample;
        b->position[b->n] = position;
        b->tau[b->n] = 0;
    }
    b->trees++;
}

static void rows_free(rows *b)
{
    free(b->target), free(b->draft), free(b->zero), free(b->tree), free(b->index);
    free(b->depth), free(b->edge), free(b->slots), free(b->sample), free(b->position), free(b->tau);
    free(b->parent);
    memset(b, 0, sizeof *b);
}

/* Writes the rows as a seq tree dump of MAXK slots (the policy's K = MAXK);
 * live: the attributes of a dump drawn at live block starts of verifier v. */
static void write_dump(const char *path, const mdsd_markov *m, const rows *b, size_t L,
                       const char *live)
{
    const char *names[1] = {"toy"};
    mdsd_dump_spec spec = {.V = m->V, .dtype = MDSD_DUMP_FLOAT32, .creator = "test",
                           .generation_temperature = 1.0, .target_model = "p", .n_drafts = 1,
                           .draft_names = names};
    mdsd_dump_writer *w;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_writer_open(path, &spec, &w, &err), MDSD_OK, "%s", err.msg);
    const float *drafts[1] = {b->draft};
    cr_assert_eq(mdsd_dump_writer_append(w, b->n, b->target, drafts, b->zero, b->tree, b->index,
                                         &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_commit(w, &err), MDSD_OK, "%s", err.msg);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    int one = 1;
    long long depth = (long long)L, K = MAXK;
    double T = 1.0;
    test_h5_attr_int(f, "mdsd_tree", H5T_NATIVE_INT, &one, 0);
    test_h5_attr_string(f, "tree_policy", "seq");
    test_h5_attr_string(f, "tree_scheme", "iid");
    test_h5_attr_string(f, "tree_drafter", "toy");
    test_h5_attr_int(f, "tree_depth", H5T_NATIVE_LLONG, &depth, 0);
    test_h5_attr_int(f, "tree_sequences", H5T_NATIVE_LLONG, &K, 0);
    test_h5_attr_int(f, "tree_temperature", H5T_NATIVE_DOUBLE, &T, 0);
    if (live) {
        test_h5_attr_string(f, "tree_contexts", "live");
        test_h5_attr_string(f, "tree_live_verifier", live);
    }
    test_h5_dataset(f, "/parent", H5T_NATIVE_LLONG, b->parent, b->n, 0);
    test_h5_dataset(f, "/depth", H5T_NATIVE_INT, b->depth, b->n, 0);
    test_h5_dataset(f, "/edge", H5T_NATIVE_INT, b->edge, b->n, 0);
    test_h5_dataset(f, "/slots", H5T_NATIVE_INT, b->slots, b->n, MAXK);
    test_h5_dataset(f, "/tree_sample", H5T_NATIVE_INT, b->sample, b->n, 0);
    test_h5_dataset(f, "/tree_position", H5T_NATIVE_INT, b->position, b->n, 0);
    if (live)
        test_h5_dataset(f, "/tree_tau", H5T_NATIVE_INT, b->tau, b->n, 0);
    H5Fclose(f);
}

static int eval(const char *path, mdsd_verifier_kind v, const mdsd_policy *pol,
                mdsd_block_dump_result *res, mdsd_err *err)
{
    mdsd_tree_dump *t;
    cr_assert_eq(mdsd_tree_dump_open(path, &t, err), MDSD_OK, "%s", err->msg);
    mdsd_block_case c = {v, *pol, 0};
    int rc = mdsd_tree_dump_eval(t, &c, 1, NULL, 1, NULL, NULL, res, err);
    mdsd_tree_dump_close(t);
    return rc;
}

/* ---- exact against simulation -------------------------------------------- */

/* runs live runs of N tokens from token 0; *tau_hat = sum tau / sum calls with
 * its standard error clustered by run, *calls_hat = mean calls per run and
 * its s.e.; rows (may be NULL) get each block's tree (sample = run, position
 * = where the block starts). */
static void live_runs(sim *x, size_t N, size_t runs, uint64_t seed, rows *out, double *tau_hat,
                      double *tau_se, double *calls_hat, double *calls_se)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    double *A = malloc(runs * sizeof *A), *n = malloc(runs * sizeof *n), sa = 0, sn = 0;
    for (size_t i = 0; i < runs; i++) {
        int last = 0;
        A[i] = n[i] = 0.0;
        for (size_t t = 0; t < N;) {
            ttree tr;
            draw_tree(x, last, r, &tr);
            if (out)
                rows_add(out, x->m, &tr, (int)i, (int)t);
            int tau = walk(x, &tr, r, &last);
            for (size_t u = 0; out && u < tr.n; u++)
                out->tau[out->n - tr.n + u] = tau;
            A[i] += tau, n[i] += 1.0, t += (size_t)tau;
        }
        sa += A[i], sn += n[i];
    }
    double ratio = sa / sn, z2 = 0.0, mean = sn / (double)runs, v2 = 0.0;
    for (size_t i = 0; i < runs; i++) {
        z2 += (A[i] - ratio * n[i]) * (A[i] - ratio * n[i]);
        v2 += (n[i] - mean) * (n[i] - mean);
    }
    double C = (double)runs;
    *tau_hat = ratio, *tau_se = sqrt(C / (C - 1.0) * z2) / sn;
    *calls_hat = mean, *calls_se = sqrt(v2 / (C - 1.0) / C);
    free(A), free(n);
    gsl_rng_free(r);
}

Test(block_live, exact_matches_simulated_live_runs, .timeout = 120)
{
    struct {
        size_t V;
        mdsd_policy pol;
        mdsd_verifier_kind v;
    } cases[] = {{3, seq(2, 3), MDSD_VERIFIER_RRS}, {4, seq(3, 2), MDSD_VERIFIER_KSEQ},
                 {3, tree2(MDSD_SCHEME_IID, 2, 2), MDSD_VERIFIER_RRS}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        mdsd_markov m;
        test_toy_markov(&m, cases[c].V, 24600 + c);
        sim x;
        sim_init(&x, &m, &cases[c].pol, cases[c].v);
        mdsd_block_live_result ex;
        mdsd_err err;
        cr_assert_eq(mdsd_block_live_exact(&m, &cases[c].pol, cases[c].v, 20, NULL, &ex, NULL,
                                           &err), MDSD_OK, "%s", err.msg);
        double tau, se, calls, calls_se;
        live_runs(&x, 20, 20000, 24700 + c, NULL, &tau, &se, &calls, &calls_se);
        cr_assert(fabs(tau - ex.live) <= 5 * se, "case %zu: simulated %.6f +- %.2g, exact %.6f", c,
                  tau, se, ex.live);
        cr_assert(fabs(calls - ex.calls) <= 5 * calls_se, "case %zu: calls %.6f +- %.2g, exact "
                  "%.6f", c, calls, calls_se, ex.calls);
        /* the long run is the limit of long runs: the start's and the end's
         * effects on tau are O(1/N) */
        mdsd_block_live_result inf, far;
        cr_assert_eq(mdsd_block_live_exact(&m, &cases[c].pol, cases[c].v, 0, NULL, &inf, NULL,
                                           &err), MDSD_OK, "%s", err.msg);
        cr_assert_eq(mdsd_block_live_exact(&m, &cases[c].pol, cases[c].v, 4000, NULL, &far, NULL,
                                           &err), MDSD_OK, "%s", err.msg);
        cr_assert(fabs(far.live - inf.live) <= 2e-3 && fabs(far.positions - inf.positions) <= 2e-3,
                  "N = 4000: %.6f, %.6f; the long run: %.6f, %.6f", far.live, far.positions,
                  inf.live, inf.positions);
        sim_free(&x);
        mdsd_markov_free(&m);
    }
}

/* ---- the powered cross-check --------------------------------------------- */

Test(block_live, live_tree_dump_agrees_with_live_decoding, .timeout = 300)
{
    const size_t N = 16, runs = 12500, position_runs = 2500;
    mdsd_markov m;
    test_toy_markov(&m, 3, 24807);
    mdsd_policy pol = seq(MAXK, 3);
    sim x;
    sim_init(&x, &m, &pol, MDSD_VERIFIER_RRS);
    mdsd_block_live_result ex;
    mdsd_err err;
    cr_assert_eq(mdsd_block_live_exact(&m, &pol, MDSD_VERIFIER_RRS, N, NULL, &ex, NULL, &err),
                 MDSD_OK, "%s", err.msg);
    cr_assert(fabs(ex.positions - ex.live) >= 0.02 * ex.live, "the toy's live and position "
              "means differ by less than 2 %%: %.6f, %.6f", ex.live, ex.positions);
    char path[] = "/tmp/mdsd-test-live-XXXXXX";
    int fd = mkstemp(path);
    close(fd);

    /* trees at the block starts of live runs */
    rows b = {0};
    double tau, se, calls, calls_se;
    live_runs(&x, N, runs, 24802, &b, &tau, &se, &calls, &calls_se);
    write_dump(path, &m, &b, pol.depth, "rrs");
    mdsd_block_dump_result r;
    cr_assert_eq(eval(path, MDSD_VERIFIER_RRS, &pol, &r, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(r.trees, b.trees);
    cr_assert(r.se <= 0.01 * ex.live / 6.33, "not powered: s.e. %.3g, 1 %% is %.3g", r.se,
              0.01 * ex.live);
    cr_assert(fabs(r.tau - ex.live) <= 4 * r.se, "live dump %.6f +- %.2g, exact live %.6f", r.tau,
              r.se, ex.live);
    /* planted: the live value off by 1 % either way */
    cr_assert(fabs(r.tau - 1.01 * ex.live) > 4 * r.se && fabs(r.tau - 0.99 * ex.live) > 4 * r.se);
    /* the realised tokens per call of the same runs agree too */
    cr_assert(fabs(tau - ex.live) <= 4 * se, "realised %.6f +- %.2g vs %.6f", tau, se, ex.live);
    /* a live dump answers its own case only */
    mdsd_policy sub = seq(1, 3);
    cr_assert_eq(eval(path, MDSD_VERIFIER_KSEQ, &pol, &r, &err), MDSD_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "live decoding with rrs, seq K=4 L=3"), "%s", err.msg);
    cr_assert_eq(eval(path, MDSD_VERIFIER_RRS, &sub, &r, &err), MDSD_EUNSUPPORTED);
    /* planted: the second block of run 0 a token later than the first one's
     * tau puts it (then, instead, a tree's tau beyond L + 1) */
    size_t second = 0;
    while (b.parent[++second] != -1)
        ;
    cr_assert_eq(b.sample[second], 0);
    for (int k = 0; k < 2; k++) {
        for (size_t u = second; u < b.n && b.tree[u] == b.tree[second]; u++)
            k ? (void)(b.tau[u] = (int)pol.depth + 2) : (void)b.position[u]++;
        write_dump(path, &m, &b, pol.depth, "rrs");
        mdsd_tree_dump *bad;
        cr_assert_eq(mdsd_tree_dump_open(path, &bad, &err), MDSD_EFORMAT);
        char want[200];
        if (k == 0)
            snprintf(want, sizeof want, "tree 1 (row %zu) of /tree_position: %d, but the tree before "
                     "it in sample 0 (row 0) starts at 0 and yielded /tree_tau %d tokens", second,
                     b.position[second], b.tau[0]);
        else
            snprintf(want, sizeof want, "tree 1 (row %zu) of /tree_tau: %d outside [1, %zu]", second,
                     b.tau[second], pol.depth + 1);
        cr_assert(strstr(err.msg, want), "%s\nwanted: %s", err.msg, want);
        for (size_t u = second; !k && u < b.n && b.tree[u] == b.tree[second]; u++)
            b.position[u]--; /* the next case has the positions right */
    }
    rows_free(&b);

    /* planted: trees at every position of the target's chain (a dump of fixed
     * positions) claimed as live; they estimate the position mean */
    gsl_rng *rng = mdsd_rng_alloc(24803);
    for (size_t i = 0; i < position_runs; i++)
        for (size_t t = 0, last = 0; t < N; t++) {
            ttree tr;
            draw_tree(&x, (int)last, rng, &tr);
            rows_add(&b, &m, &tr, (int)i, (int)t);
            last = gsl_ran_discrete(rng, x.pd[last]);
        }
    gsl_rng_free(rng);
    write_dump(path, &m, &b, pol.depth, NULL);
    cr_assert_eq(eval(path, MDSD_VERIFIER_RRS, &pol, &r, &err), MDSD_OK, "%s", err.msg);
    cr_assert(fabs(r.tau - ex.positions) <= 4 * r.se, "positions dump %.6f +- %.2g, exact "
              "position mean %.6f", r.tau, r.se, ex.positions);
    cr_assert(fabs(r.tau - ex.live) > 4 * r.se, "position weighting passed as live: %.6f +- %.2g "
              "vs %.6f", r.tau, r.se, ex.live);
    rows_free(&b);
    unlink(path);
    sim_free(&x);
    mdsd_markov_free(&m);
}
