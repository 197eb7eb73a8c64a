/* Tree dumps (src/block/treedump.c): a tree dump drawn from a Markov toy
 * pair, evaluated by mdsd_tree_dump_eval, agrees with the exact route within
 * 5 standard errors (seq, iid and hub trees; shown once to catch a planted
 * wrong drafter); depth 1 on the shipped KJV tree dump agrees with 1 + the
 * flat per-position alpha on the same contexts; results do not depend on the
 * thread count; malformed tree dumps are refused naming file and dataset;
 * the command's CSV; the job from C (mdsd_block_run, mdsd_merge) writes the
 * CLI's bytes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <hdf5.h>

#include <mdsd/block.h>
#include <stdlib.h>

#include "block.h"
#include "blockv.h"
#include "testutil.h"
#include "treedump.h"

#define SHIPPED "data/kjv-trees.h5"

/* ---- writing a tree dump from a Markov pair ------------------------------ */

typedef struct {
    size_t cap, n, S;
    float *target, *draft;        /* [cap * V] */
    int *tokens, *sample, *position, *depth, *edge, *slots;
    long long *parent;
} rows_buf;

static void push_row(rows_buf *b, const mdsd_markov *m, int last, long long parent, int depth,
                     int edge, int tree, int pos, const float *logp, const float *logq)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 1024;
        size_t V = m->V;
        b->target = realloc(b->target, b->cap * V * sizeof(float));
        b->draft = realloc(b->draft, b->cap * V * sizeof(float));
        b->tokens = realloc(b->tokens, b->cap * sizeof(int));
        b->sample = realloc(b->sample, b->cap * sizeof(int));
        b->position = realloc(b->position, b->cap * sizeof(int));
        b->depth = realloc(b->depth, b->cap * sizeof(int));
        b->edge = realloc(b->edge, b->cap * sizeof(int));
        b->slots = realloc(b->slots, b->cap * b->S * sizeof(int));
        b->parent = realloc(b->parent, b->cap * sizeof(long long));
    }
    size_t r = b->n++, V = m->V;
    memcpy(b->target + r * V, logp + (size_t)last * V, V * sizeof(float));
    memcpy(b->draft + r * V, logq + (size_t)last * V, V * sizeof(float));
    b->tokens[r] = 0;
    b->sample[r] = tree;
    b->position[r] = pos;
    b->depth[r] = depth;
    b->edge[r] = edge;
    b->parent[r] = parent;
    for (size_t s = 0; s < b->S; s++)
        b->slots[r * b->S + s] = -1;
}

/* A node after token `last` at depth d: fill its slots, then its children. */
static void grow(rows_buf *b, const mdsd_markov *m, const mdsd_policy *pol, gsl_rng *r,
                 mdsd_sampler **smp, size_t row, int d, int tree, int *pos, const float *logp,
                 const float *logq, int (*seqs)[8], unsigned mask)
{
    size_t S = b->S;
    int last = b->depth[row] == 0 ? 0 : b->edge[row];
    int x[8];
    if (pol->kind == MDSD_POLICY_SEQ) {
        for (size_t s = 0; s < S; s++)
            if (mask >> s & 1u)
                b->slots[row * S + s] = seqs[s][d];
    } else {
        mdsd_sampler_draw(smp[last], r, x);
        for (size_t s = 0; s < pol->width[d]; s++)
            b->slots[row * S + s] = x[s];
    }
    if ((size_t)d + 1 >= pol->depth)
        return;
    for (size_t s = 0; s < S; s++) {
        int t = b->slots[row * S + s], first = t >= 0;
        for (size_t k = 0; k < s && first; k++)
            first = b->slots[row * S + k] != t;
        if (!first)
            continue;
        unsigned sub = 0;
        for (size_t k = 0; k < S; k++)
            if (b->slots[row * S + k] == t)
                sub |= 1u << k;
        push_row(b, m, t, (long long)row, d + 1, t, tree, (*pos)++, logp, logq);
        grow(b, m, pol, r, smp, b->n - 1, d + 1, tree, pos, logp, logq, seqs, sub);
    }
}

/* Writes `trees` trees of pol drawn from the pair (the drafts from draw_q,
 * normally m->q: a planted wrong drafter draws from something else). */
static void write_tree_dump(const char *path, const mdsd_markov *m, const double *draw_q,
                            const mdsd_policy *pol, size_t trees, uint64_t seed)
{
    size_t V = m->V;
    float *logp = malloc(V * V * sizeof *logp), *logq = malloc(V * V * sizeof *logq);
    for (size_t i = 0; i < V * V; i++) {
        logp[i] = m->p[i] > 0 ? (float)log(m->p[i]) : -INFINITY;
        logq[i] = m->q[i] > 0 ? (float)log(m->q[i]) : -INFINITY;
    }
    rows_buf b = {0};
    b.S = pol->kind == MDSD_POLICY_SEQ ? pol->sequences : pol->width[0];
    for (size_t d = 0; pol->kind == MDSD_POLICY_TREE && d < pol->depth; d++)
        if (pol->width[d] > b.S)
            b.S = pol->width[d];
    gsl_rng *r = mdsd_rng_alloc(seed);
    mdsd_sampler *one[8], *smp[8];
    for (size_t t = 0; t < V; t++) {
        mdsd_scheme s1 = {MDSD_SCHEME_IID, 1, V, draw_q + t * V, NULL};
        one[t] = mdsd_sampler_alloc(&s1, NULL);
        smp[t] = NULL;
        if (pol->kind == MDSD_POLICY_TREE) {
            mdsd_scheme s = {pol->scheme, pol->width[0], V, draw_q + t * V, NULL};
            smp[t] = mdsd_sampler_alloc(&s, NULL);
        }
    }
    for (size_t tr = 0; tr < trees; tr++) {
        int seqs[8][8], pos = 0;
        for (size_t k = 0; pol->kind == MDSD_POLICY_SEQ && k < pol->sequences; k++) {
            int tok = 0;
            for (size_t d = 0; d < pol->depth; d++) {
                mdsd_sampler_draw(one[tok], r, &tok);
                seqs[k][d] = tok;
            }
        }
        push_row(&b, m, 0, -1, 0, -1, (int)tr, pos++, logp, logq);
        grow(&b, m, pol, r, smp, b.n - 1, 0, (int)tr, &pos, logp, logq, seqs,
             pol->kind == MDSD_POLICY_SEQ ? (1u << pol->sequences) - 1u : 0u);
    }
    const char *names[1] = {"toy"};
    mdsd_dump_spec spec = {.V = V, .dtype = MDSD_DUMP_FLOAT32, .creator = "test",
                           .generation_temperature = 1.0, .target_model = "p", .n_drafts = 1,
                           .draft_names = names};
    mdsd_dump_writer *w;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_writer_open(path, &spec, &w, &err), MDSD_OK, "%s", err.msg);
    const float *drafts[1] = {b.draft};
    cr_assert_eq(mdsd_dump_writer_append(w, b.n, b.target, drafts, b.tokens, b.sample, b.position,
                                         &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_commit(w, &err), MDSD_OK, "%s", err.msg);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    int one_i = 1;
    long long depth = (long long)pol->depth, K = (long long)pol->sequences, widths[32];
    double T = 1.0;
    test_h5_attr_int(f, "mdsd_tree", H5T_NATIVE_INT, &one_i, 0);
    test_h5_attr_string(f, "tree_policy", pol->kind == MDSD_POLICY_SEQ ? "seq" : "tree");
    test_h5_attr_string(f, "tree_scheme", mdsd_scheme_name(pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID
                                                                                : pol->scheme));
    test_h5_attr_string(f, "tree_drafter", "toy");
    test_h5_attr_int(f, "tree_depth", H5T_NATIVE_LLONG, &depth, 0);
    test_h5_attr_int(f, "tree_temperature", H5T_NATIVE_DOUBLE, &T, 0);
    if (pol->kind == MDSD_POLICY_SEQ) {
        test_h5_attr_int(f, "tree_sequences", H5T_NATIVE_LLONG, &K, 0);
    } else {
        for (size_t d = 0; d < pol->depth; d++)
            widths[d] = (long long)pol->width[d];
        test_h5_attr_int(f, "tree_widths", H5T_NATIVE_LLONG, widths, pol->depth);
    }
    test_h5_dataset(f, "/parent", H5T_NATIVE_LLONG, b.parent, b.n, 0);
    test_h5_dataset(f, "/depth", H5T_NATIVE_INT, b.depth, b.n, 0);
    test_h5_dataset(f, "/edge", H5T_NATIVE_INT, b.edge, b.n, 0);
    test_h5_dataset(f, "/slots", H5T_NATIVE_INT, b.slots, b.n, b.S);
    test_h5_dataset(f, "/tree_sample", H5T_NATIVE_INT, b.sample, b.n, 0);
    test_h5_dataset(f, "/tree_position", H5T_NATIVE_INT, b.position, b.n, 0);
    H5Fclose(f);
    for (size_t t = 0; t < V; t++) {
        mdsd_sampler_free(one[t]);
        mdsd_sampler_free(smp[t]);
    }
    gsl_rng_free(r);
    free(b.target), free(b.draft), free(b.tokens), free(b.sample), free(b.position);
    free(b.depth), free(b.edge), free(b.slots), free(b.parent);
    free(logp), free(logq);
}

static mdsd_block_dump_result eval_one(const char *path, mdsd_verifier_kind v,
                                       const mdsd_policy *pol, int threads)
{
    mdsd_tree_dump *t;
    mdsd_err err;
    cr_assert_eq(mdsd_tree_dump_open(path, &t, &err), MDSD_OK, "%s", err.msg);
    mdsd_block_case c = {v, *pol, 0};
    mdsd_block_dump_result res;
    cr_assert_eq(mdsd_tree_dump_eval(t, &c, 1, NULL, threads, NULL, NULL, &res, &err), MDSD_OK,
                 "%s", err.msg);
    mdsd_tree_dump_close(t);
    return res;
}

Test(block_dump, markov_tree_dump_agrees_with_exact)
{
    mdsd_markov m;
    test_toy_markov(&m, 3, 15301);
    char path[] = "/tmp/mdsd-test-trees-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    struct {
        mdsd_policy pol;
        mdsd_verifier_kind v[3];
        size_t nv;
    } cases[3] = {{{MDSD_POLICY_SEQ, 3, 3, {0}, MDSD_SCHEME_IID},
                   {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ}, 2},
                  {{MDSD_POLICY_TREE, 3, 0, {2, 2, 2}, MDSD_SCHEME_IID},
                   {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ}, 2},
                  {{MDSD_POLICY_TREE, 3, 0, {2, 2, 2}, MDSD_SCHEME_HUB},
                   {MDSD_VERIFIER_SPECHUB}, 1}};
    int planted_caught = 0;
    for (size_t c = 0; c < 3; c++) {
        write_tree_dump(path, &m, m.q, &cases[c].pol, 5000, 15400 + c);
        for (size_t k = 0; k < cases[c].nv; k++) {
            mdsd_block_result ex;
            mdsd_err err;
            cr_assert_eq(mdsd_block_exact(&m, &cases[c].pol, cases[c].v[k], NULL, &ex, &err),
                         MDSD_OK, "%s", err.msg);
            mdsd_block_dump_result r = eval_one(path, cases[c].v[k], &cases[c].pol, 0);
            cr_assert_eq(r.trees, 5000);
            cr_assert(fabs(r.tau - ex.tau) <= 5 * r.se, "%s case %zu: dump %.6f +- %.2g, exact "
                      "%.6f", mdsd_verifier_name(cases[c].v[k]), c, r.tau, r.se, ex.tau);
            /* a sub-policy: depth 2 */
            mdsd_policy sub = cases[c].pol;
            sub.depth = 2;
            cr_assert_eq(mdsd_block_exact(&m, &sub, cases[c].v[k], NULL, &ex, &err), MDSD_OK);
            r = eval_one(path, cases[c].v[k], &sub, 0);
            cr_assert(fabs(r.tau - ex.tau) <= 5 * r.se, "depth 2: %.6f vs %.6f", r.tau, ex.tau);
        }
    }
    /* planted: trees drawn from the target instead of the drafter */
    write_tree_dump(path, &m, m.p, &cases[0].pol, 5000, 15499);
    mdsd_block_result ex;
    cr_assert_eq(mdsd_block_exact(&m, &cases[0].pol, MDSD_VERIFIER_RRS, NULL, &ex, NULL), MDSD_OK);
    mdsd_block_dump_result r = eval_one(path, MDSD_VERIFIER_RRS, &cases[0].pol, 0);
    planted_caught = fabs(r.tau - ex.tau) > 5 * r.se;
    cr_assert(planted_caught, "a dump drawn from the wrong law passed: %.6f vs %.6f +- %.2g",
              r.tau, ex.tau, r.se);
    unlink(path);
    mdsd_markov_free(&m);
}

/* The block verifiers on tree dumps of a Markov pair (mdsd_blockv_dump_tree)
 * against their exact route, within 5 standard errors; sub-policies too. */
Test(block_dump, block_verifiers_on_markov_tree_dumps)
{
    mdsd_markov m;
    test_toy_markov(&m, 3, 15303);
    char path[] = "/tmp/mdsd-test-trees-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    mdsd_policy seqp = {MDSD_POLICY_SEQ, 3, 3, {0}, MDSD_SCHEME_IID};
    mdsd_policy worp = {MDSD_POLICY_TREE, 3, 0, {2, 2, 2}, MDSD_SCHEME_WOR};
    struct {
        const mdsd_policy *dump;
        mdsd_policy pol;
        const char *v;
    } cases[5] = {{&seqp, {MDSD_POLICY_SEQ, 3, 1, {0}, MDSD_SCHEME_IID}, "bv"},
                  {&seqp, {MDSD_POLICY_SEQ, 3, 3, {0}, MDSD_SCHEME_IID}, "gbv"},
                  {&seqp, {MDSD_POLICY_SEQ, 2, 2, {0}, MDSD_SCHEME_IID}, "traversal"},
                  {&worp, {MDSD_POLICY_TREE, 3, 0, {2, 2, 2}, MDSD_SCHEME_WOR}, "traversal"},
                  {&worp, {MDSD_POLICY_TREE, 2, 0, {2, 1}, MDSD_SCHEME_WOR}, "traversal"}};
    const mdsd_policy *written = NULL;
    for (size_t c = 0; c < 5; c++) {
        if (cases[c].dump != written)
            write_tree_dump(path, &m, m.q, cases[c].dump, 4000, 15500 + c);
        written = cases[c].dump;
        mdsd_block_case bc = {MDSD_VERIFIER_SD, cases[c].pol, 0};
        mdsd_err err;
        cr_assert_eq(mdsd_block_case_parse(cases[c].v, &bc, &err), MDSD_OK, "%s", err.msg);
        mdsd_blockv_kind k;
        cr_assert_eq(mdsd_blockv_parse(cases[c].v, &k, NULL), MDSD_OK);
        mdsd_block_result ex;
        cr_assert_eq(mdsd_blockv_exact(&m, &cases[c].pol, mdsd_blockv(k), NULL, &ex, &err), MDSD_OK,
                     "%s", err.msg);
        mdsd_tree_dump *t;
        cr_assert_eq(mdsd_tree_dump_open(path, &t, &err), MDSD_OK, "%s", err.msg);
        mdsd_block_dump_result r;
        cr_assert_eq(mdsd_tree_dump_eval(t, &bc, 1, NULL, 0, NULL, NULL, &r, &err), MDSD_OK, "%s",
                     err.msg);
        mdsd_tree_dump_close(t);
        cr_assert(fabs(r.tau - ex.tau) <= 5 * r.se, "%s case %zu: dump %.6f +- %.2g, exact %.6f",
                  cases[c].v, c, r.tau, r.se, ex.tau);
    }
    unlink(path);
    mdsd_markov_free(&m);
}

/* Depth 1 on the shipped dump: the mean of 1 + P(accept | the root's drafts)
 * against 1 + the flat exact alpha at the same contexts (its expectation). */
Test(block_dump, depth_one_matches_flat_alpha_on_shipped_dump)
{
    mdsd_tree_dump *t;
    mdsd_err err;
    cr_assert_eq(mdsd_tree_dump_open(SHIPPED, &t, &err), MDSD_OK, "%s", err.msg);
    size_t V = t->V;
    float *buf = malloc(V * sizeof *buf);
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    const mdsd_verifier_kind kinds[] = {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ};
    for (size_t k = 0; k < 2; k++) {
        for (size_t K = 1; K <= t->pol.sequences; K *= 2) {
            double flat = 0.0;
            for (size_t i = 0; i < t->n_trees; i++) {
                size_t row = t->root[i];
                cr_assert_eq(mdsd_dump_read_logits(t->dump, MDSD_DUMP_TARGET, row, 1, buf, NULL), 0);
                mdsd_softmax_float(buf, V, t->T, p, "p", NULL);
                cr_assert_eq(mdsd_dump_read_logits(t->dump, t->drafter, row, 1, buf, NULL), 0);
                mdsd_softmax_float(buf, V, t->T, q, "q", NULL);
                mdsd_scheme s = {MDSD_SCHEME_IID, K, V, q, NULL};
                double alpha;
                cr_assert_eq(mdsd_verifier_exact(kinds[k], p, &s, NULL, &alpha, NULL, NULL), 0);
                flat += alpha;
            }
            flat = 1.0 + flat / (double)t->n_trees;
            mdsd_policy pol = t->pol;
            pol.depth = 1;
            pol.sequences = K;
            mdsd_block_case c = {kinds[k], pol, 0};
            mdsd_block_dump_result r;
            cr_assert_eq(mdsd_tree_dump_eval(t, &c, 1, NULL, 0, NULL, NULL, &r, &err), 0);
            cr_assert(fabs(r.tau - flat) <= 5 * r.se + 1e-12, "%s K=%zu: %.6f +- %.2g vs flat %.6f",
                      mdsd_verifier_name(kinds[k]), K, r.tau, r.se, flat);
        }
    }
    free(buf), free(p), free(q);
    mdsd_tree_dump_close(t);
}

Test(block_dump, thread_count_invariant)
{
    mdsd_tree_dump *t;
    cr_assert_eq(mdsd_tree_dump_open(SHIPPED, &t, NULL), MDSD_OK);
    mdsd_block_case c[2] = {{MDSD_VERIFIER_KSEQ, t->pol, 0}, {MDSD_VERIFIER_RRS, t->pol, 0}};
    mdsd_block_dump_result a[2], b[2];
    cr_assert_eq(mdsd_tree_dump_eval(t, c, 2, NULL, 1, NULL, NULL, a, NULL), MDSD_OK);
    cr_assert_eq(mdsd_tree_dump_eval(t, c, 2, NULL, 3, NULL, NULL, b, NULL), MDSD_OK);
    cr_assert(!memcmp(a, b, sizeof a));
    mdsd_tree_dump_close(t);
}

/* Per-depth standard errors against a second computation: each tree is
 * evaluated alone (a one-tree view of the dump), and the delta-method CR1
 * variance of the ratio sum reach_d / sum reach_{d-1} is formed from the
 * per-sample totals in expanded form, sum A^2 - 2 R sum AB + R^2 sum B^2.
 * At depth 1 it is also the s.e. of tau at L = 1 (reach_0 = 1 per tree). */
Test(block_dump, per_depth_stderr_matches_per_tree_recomputation)
{
    mdsd_tree_dump *t;
    mdsd_err err;
    cr_assert_eq(mdsd_tree_dump_open(SHIPPED, &t, &err), MDSD_OK, "%s", err.msg);
    mdsd_block_case c = {MDSD_VERIFIER_KSEQ, t->pol, 0};
    size_t L = t->pol.depth, n = t->n_trees;
    mdsd_block_dump_result all;
    cr_assert_eq(mdsd_tree_dump_eval(t, &c, 1, NULL, 0, NULL, NULL, &all, &err), 0, "%s", err.msg);
    double *reach = calloc(n * (L + 1), sizeof *reach);
    int *sample = malloc(n * sizeof *sample);
    size_t *root = t->root, n_trees = t->n_trees;
    for (size_t i = 0; i < n; i++) {
        mdsd_block_dump_result one;
        sample[i] = t->sample[root[i]];
        t->root = root + i, t->n_trees = 1;
        cr_assert_eq(mdsd_tree_dump_eval(t, &c, 1, NULL, 1, NULL, NULL, &one, &err), 0);
        for (size_t d = 0; d <= L; d++)
            reach[i * (L + 1) + d] = one.reach[d];
    }
    t->root = root, t->n_trees = n_trees;
    for (size_t d = 1; d <= L; d++) {
        double A = 0, B = 0, AA = 0, AB = 0, BB = 0, a = 0, b = 0;
        size_t C = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i > 0 && (i == n || sample[i] != sample[i - 1])) {
                AA += a * a, AB += a * b, BB += b * b, A += a, B += b, C++;
                a = b = 0;
            }
            if (i < n)
                a += reach[i * (L + 1) + d], b += reach[i * (L + 1) + d - 1];
        }
        cr_assert(C > 1);
        double R = A / B, want = sqrt((double)C / (C - 1) * (AA - 2 * R * AB + R * R * BB)) / B;
        cr_assert(fabs(all.rate[d] - R) <= 1e-12, "depth %zu rate %.17g vs %.17g", d,
                  all.rate[d], R);
        cr_assert(all.rate_se[d] > 0 && fabs(all.rate_se[d] - want) <= 1e-9 * want,
                  "depth %zu: s.e. %.17g, recomputed %.17g", d, all.rate_se[d], want);
    }
    mdsd_policy one = t->pol;
    one.depth = 1;
    mdsd_block_case c1 = {MDSD_VERIFIER_KSEQ, one, 0};
    cr_assert_eq(mdsd_tree_dump_eval(t, &c1, 1, NULL, 0, NULL, NULL, &all, &err), 0);
    cr_assert(fabs(all.rate_se[1] - all.se) <= 1e-12 * all.se, "%.17g vs %.17g", all.rate_se[1],
              all.se);
    free(reach), free(sample);
    mdsd_tree_dump_close(t);
}

/* The block job resumes from CSV.partial: stopped by SIGINT after the first
 * of two dumps (MDSD_TEST_BLOCK_STOP_AFTER), it keeps that dump, refuses to
 * start over silently, resumes to the same bytes as an uninterrupted run,
 * and refuses a partial file with an altered or missing row, another job's,
 * or one whose dump changed since. */
static char *block_job(const char *dir, const char *extra, const char *env, int *rc)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s block a.h5 b.h5 -o out.csv --verifiers kseq "
             "--sequences 2,4 %s", dir, env, test_mdsd_bin(), extra);
    char *out = NULL;
    *rc = test_run_shell(cmd, &out);
    return out;
}

static void stop_after_first(const char *dir)
{
    int rc;
    char *out = block_job(dir, "--discard-partial", "MDSD_TEST_BLOCK_STOP_AFTER=1", &rc);
    cr_assert_neq(rc, 0, "%s", out);
    cr_assert(strstr(out, "--resume"), "%s", out);
    free(out);
}

static void expect_refusal(const char *dir, const char *edit, const char *extra, const char *want)
{
    char cmd[4096], *out = NULL;
    int rc;
    stop_after_first(dir);
    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, edit);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s: %s", edit, out);
    free(out);
    out = block_job(dir, extra, "", &rc);
    cr_assert_eq(rc, 1, "%s: rc %d: %s", edit, rc, out);
    cr_assert(strstr(out, want), "%s: want '%s' in: %s", edit, want, out);
    free(out);
    snprintf(cmd, sizeof cmd, "test ! -e %s/out.csv && test ! -e %s/out.csv.lock", dir, dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s: output or lock left behind", edit);
    free(out);
}

Test(block_dump, job_resumes_and_refuses_damaged_partial_files, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-block-resume-XXXXXX", cmd[4096], *out = NULL;
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp %s %s/a.h5 && cp %s %s/b.h5", SHIPPED, dir, SHIPPED, dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    free(out);
    int rc;
    out = block_job(dir, "&& mv out.csv ref.csv", "", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);

    stop_after_first(dir);
    snprintf(cmd, sizeof cmd, "cd %s && test ! -e out.csv && grep -c '^#done' out.csv.partial",
             dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    cr_assert_eq(atoi(out), 1, "one finished dump kept: %s", out);
    free(out);
    out = block_job(dir, "", "", &rc);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "--resume") && strstr(out, "--discard-partial"), "%s", out);
    free(out);
    out = block_job(dir, "--resume --threads 1", "", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && cmp out.csv ref.csv && test ! -e out.csv.partial && "
             "test ! -e out.csv.lock && rm out.csv", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "resumed CSV differs: %s", out);
    free(out);

    expect_refusal(dir, "sed -i '2s/p+0 /p+1 /' out.csv.partial", "--resume", "altered");
    expect_refusal(dir, "sed -i '3d' out.csv.partial", "--resume", "missing or extra");
    expect_refusal(dir, "sed -i 's/^#done 0 /#done 7 /' out.csv.partial", "--resume",
                   "the job has 2 dumps");
    expect_refusal(dir, "true", "--resume --depth 1", "different block job");
    /* dumps are identified by content (SHA-256): one byte changed, size and
     * modification time kept, is refused; a touch alone is not a change */
    expect_refusal(dir, "cp a.h5 keep.h5 && touch -r a.h5 stamp && printf X | dd of=a.h5 bs=1 "
                   "seek=60000 conv=notrunc 2>/dev/null && touch -r stamp a.h5",
                   "--resume", "different block job");
    snprintf(cmd, sizeof cmd, "cd %s && mv keep.h5 a.h5 && rm -f out.csv.partial stamp", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    free(out);
    stop_after_first(dir);
    snprintf(cmd, sizeof cmd, "cd %s && touch -d '2001-01-01' a.h5", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    free(out);
    out = block_job(dir, "--resume --threads 1", "", &rc);
    cr_assert_eq(rc, 0, "a touched dump (same content) resumes: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && cmp out.csv ref.csv", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "resumed CSV differs: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0);
    free(out);
}

/* Outputs are checked before any work: a directory or an input is refused. */
Test(block_dump, outputs_checked_before_work)
{
    char *out = NULL;
    int rc = test_run_mdsd("block " SHIPPED " -o /tmp", 1, &out);
    cr_assert_eq(rc, 1, "%s", out);
    free(out);
    rc = test_run_mdsd("block " SHIPPED " -o " SHIPPED, 1, &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, SHIPPED), "%s", out);
    free(out);
    rc = test_run_mdsd("block " SHIPPED " --markdown " SHIPPED, 1, &out);
    cr_assert_eq(rc, 1, "%s", out);
    free(out);
}

/* ---- malformed tree dumps ------------------------------------------------ */

/* Copies a small Markov tree dump, lets `edit` damage it, expects refusal
 * with a message containing `want`. */
static void refused(void (*edit)(hid_t f), const char *want)
{
    mdsd_markov m;
    test_toy_markov(&m, 3, 15302);
    char path[] = "/tmp/mdsd-test-badtree-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    mdsd_policy pol = {MDSD_POLICY_SEQ, 3, 2, {0}, MDSD_SCHEME_IID};
    write_tree_dump(path, &m, m.q, &pol, 5, 1);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    edit(f);
    H5Fclose(f);
    mdsd_tree_dump *t = NULL;
    mdsd_err err;
    int rc = mdsd_tree_dump_open(path, &t, &err);
    mdsd_tree_dump_close(t);
    unlink(path);
    mdsd_markov_free(&m);
    cr_assert_neq(rc, MDSD_OK, "a damaged tree dump (%s) was accepted", want);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, want), "message '%s' lacks '%s' or the "
              "file", err.msg, want);
}

static void set_int(hid_t f, const char *name, size_t index, long long value)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp = H5Dget_space(d);
    hsize_t start[2] = {index, 0}, count[2] = {1, 1};
    int rank = H5Sget_simple_extent_ndims(sp);
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mem = H5Screate_simple(rank, count, NULL);
    H5Dwrite(d, H5T_NATIVE_LLONG, mem, sp, H5P_DEFAULT, &value);
    H5Sclose(mem), H5Sclose(sp), H5Dclose(d);
}

static void no_tree_attr(hid_t f) { H5Adelete(f, "mdsd_tree"); }
static void bad_parent(hid_t f) { set_int(f, "/parent", 1, 7); }
static void bad_depth(hid_t f) { set_int(f, "/depth", 1, 2); }
static void bad_edge(hid_t f) { set_int(f, "/edge", 1, -1); }
static void bad_slot(hid_t f) { set_int(f, "/slots", 0, 9); }
static void unused_slot(hid_t f) { set_int(f, "/slots", 0, -1); }
static void no_slots(hid_t f) { H5Ldelete(f, "/slots", H5P_DEFAULT); }
static void bad_depth_attr(hid_t f)
{
    H5Adelete(f, "tree_depth");
    long long zero = 0;
    test_h5_attr_int(f, "tree_depth", H5T_NATIVE_LLONG, &zero, 0);
}
static void bad_drafter(hid_t f)
{
    H5Adelete(f, "tree_drafter");
    test_h5_attr_string(f, "tree_drafter", "nobody");
}

Test(block_dump, malformed_tree_dumps_refused)
{
    refused(no_tree_attr, "mdsd_tree");
    refused(bad_parent, "/parent");
    refused(bad_depth, "/depth");
    refused(bad_edge, "/edge");
    refused(bad_slot, "/slots");
    refused(unused_slot, "/slots");
    refused(no_slots, "/slots");
    refused(bad_depth_attr, "tree_depth");
    refused(bad_drafter, "tree_drafter");
}

/* ---- the command --------------------------------------------------------- */

Test(block_dump, command_csv_and_refusals)
{
    char *out = NULL;
    int rc = test_run_mdsd("block " SHIPPED " --verifiers kseq --sequences 4 --depth 1,4 "
                           "--cost 0,0.5 -o /tmp/mdsd-test-block.csv", 1, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    FILE *f = fopen("/tmp/mdsd-test-block.csv", "r");
    cr_assert(f);
    char line[4096];
    cr_assert(fgets(line, sizeof line, f));
    cr_assert(strstr(line, "dump,verifier,policy,scheme,sequences,widths,depth,tree_size,trees,"
                           "samples,block_efficiency,stderr,per_depth,cost,speedup,per_depth_stderr"));
    size_t n = 0;
    while (fgets(line, sizeof line, f))
        n++;
    fclose(f);
    unlink("/tmp/mdsd-test-block.csv");
    cr_assert_eq(n, 4, "2 depths x 2 costs, got %zu rows", n);
    rc = test_run_mdsd("block data/kjv-ngram.h5", 1, &out);
    cr_assert_eq(rc, 1);
    cr_assert(strstr(out, "not a tree dump"), "%s", out);
    free(out);
    rc = test_run_mdsd("block " SHIPPED " --sequences 5", 1, &out);
    cr_assert_eq(rc, 2, "%s", out);
    free(out);
    rc = test_run_mdsd("block --markov /nonexistent --sequences 2 --depth 2 -v rrs", 1, &out);
    cr_assert_eq(rc, 1);
    cr_assert(strstr(out, "/nonexistent"));
    free(out);
    rc = test_run_mdsd("block --markov /dev/null --sequences 2 --depth 2 -v rrs --json", 1, &out);
    cr_assert_eq(rc, 1);
    free(out);
}

/* ---- papers/block/README.md's claims, against its committed results ------ */

Test(block_dump, papers_block_claims_hold_in_results)
{
    mdsd_csv *t;
    mdsd_err err;
    cr_assert_eq(mdsd_csv_read("papers/block/results/toys.csv", &t, &err), MDSD_OK, "%s", err.msg);
    int cv = mdsd_csv_col(t, "verifier"), cg = mdsd_csv_col(t, "gap");
    cr_assert(cv >= 0 && cg >= 0);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *v = mdsd_csv_cell(t, r, cv);
        double g;
        cr_assert_eq(mdsd_csv_number(t, r, cg, &g, NULL), MDSD_OK);
        cr_assert(g >= -1e-9, "a verifier above the optimum (row %zu)", r);
        if (!strcmp(v, "spechub") || !strcmp(v, "greedy"))
            cr_assert(fabs(g) <= 1e-9, "%s gap %g (README: reaches the optimum)", v, g);
        if (!strcmp(v, "rrs") || !strcmp(v, "kseq") || !strcmp(v, "rrsw"))
            lo = fmin(lo, g), hi = fmax(hi, g);
    }
    /* README: "gaps of 0.18-0.71 tokens" */
    cr_assert(lo >= 0.175 && lo < 0.185 && hi >= 0.705 && hi < 0.715, "gaps %g..%g", lo, hi);
    mdsd_csv_free(t);
    /* README: kseq above rrs at equal K > 1 and L, and above K = 1, in seq.csv */
    cr_assert_eq(mdsd_csv_read("papers/block/results/seq.csv", &t, &err), MDSD_OK, "%s", err.msg);
    int c_v = mdsd_csv_col(t, "verifier"), c_k = mdsd_csv_col(t, "sequences"),
        c_l = mdsd_csv_col(t, "depth"), c_tau = mdsd_csv_col(t, "block_efficiency");
    double tau[3][5][5] = {{{0}}}; /* [sd/rrs/kseq][K][L] */
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *v = mdsd_csv_cell(t, r, c_v);
        int k = !strcmp(v, "sd") ? 0 : !strcmp(v, "rrs") ? 1 : !strcmp(v, "kseq") ? 2 : -1;
        double K, L, x;
        mdsd_csv_number(t, r, c_k, &K, NULL);
        mdsd_csv_number(t, r, c_l, &L, NULL);
        mdsd_csv_number(t, r, c_tau, &x, NULL);
        if (k >= 0)
            tau[k][(int)K][(int)L] = x;
    }
    for (int L = 1; L <= 4; L++) {
        cr_assert(tau[0][1][L] > 0);
        for (int K = 2; K <= 4; K += 2) {
            cr_assert(tau[2][K][L] > tau[1][K][L], "kseq <= rrs at K=%d L=%d", K, L);
            cr_assert(tau[2][K][L] > tau[0][1][L], "kseq <= sd at K=%d L=%d", K, L);
        }
    }
    mdsd_csv_free(t);
}

/* papers/block/results/verifiers_toys.csv (README "Block verifiers"): no
 * verifier above optimal-block, the token-level ones not above optimal-token;
 * at K = 1 bv (and traversal, gbv, which are bv there) reach optimal-block
 * (Sun et al.'s optimality); Sun et al.'s example: token-level 19/9, bv 20/9. */
Test(block_dump, papers_block_verifier_table_holds)
{
    mdsd_csv *t;
    mdsd_err err;
    cr_assert_eq(mdsd_csv_read("papers/block/results/verifiers_toys.csv", &t, &err), MDSD_OK,
                 "%s", err.msg);
    int c_toy = mdsd_csv_col(t, "toy"), c_pol = mdsd_csv_col(t, "policy"),
        c_v = mdsd_csv_col(t, "verifier"), c_tau = mdsd_csv_col(t, "block_efficiency"),
        c_gt = mdsd_csv_col(t, "gap_token"), c_gb = mdsd_csv_col(t, "gap_block");
    cr_assert(c_toy >= 0 && c_pol >= 0 && c_v >= 0 && c_tau >= 0 && c_gt >= 0 && c_gb >= 0);
    int sun = 0, k1 = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *v = mdsd_csv_cell(t, r, c_v), *pol = mdsd_csv_cell(t, r, c_pol);
        double tau, gt, gb;
        cr_assert_eq(mdsd_csv_number(t, r, c_tau, &tau, NULL), MDSD_OK);
        cr_assert_eq(mdsd_csv_number(t, r, c_gt, &gt, NULL), MDSD_OK);
        cr_assert_eq(mdsd_csv_number(t, r, c_gb, &gb, NULL), MDSD_OK);
        int block = !strcmp(v, "bv") || !strcmp(v, "gbv") || !strcmp(v, "traversal") ||
                    !strcmp(v, "optimal-block");
        cr_assert(gb >= -1e-7, "%s above optimal-block (row %zu)", v, r);
        cr_assert(block || gt >= -1e-7, "token-level %s above optimal-token (row %zu)", v, r);
        if (block && !strncmp(pol, "seq-K1-", 7)) {
            cr_assert(fabs(gb) <= 1e-7, "%s at K = 1: gap %g to optimal-block (row %zu)", v, gb, r);
            k1++;
        }
        if (!strcmp(mdsd_csv_cell(t, r, c_toy), "sun") && !strcmp(pol, "seq-K1-L2")) {
            sun += !strcmp(v, "sd") || !strcmp(v, "bv");
            if (!strcmp(v, "sd"))
                cr_assert(fabs(tau - 19.0 / 9.0) <= 1e-12, "sd %.15g", tau);
            if (!strcmp(v, "bv"))
                cr_assert(fabs(tau - 20.0 / 9.0) <= 1e-12, "bv %.15g", tau);
        }
    }
    cr_assert_eq(sun, 2);
    cr_assert(k1 >= 20, "%d K = 1 block rows", k1);
    mdsd_csv_free(t);
}

/* ---- the job from C (mdsd/block.h) --------------------------------------- */

static char *slurp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

/* mdsd_block_run on the shipped tree dump writes the CLI's bytes (CSV,
 * Markdown, LaTeX); mdsd_merge of the CLI's shards writes the unsharded CSV.
 * A planted difference in the options (sequences 1,2 instead of 1,4) gives
 * other bytes, so the comparison can fail. */
Test(block_dump, library_job_and_merge_write_the_cli_bytes, .timeout = 300)
{
    char dir[] = "/tmp/mdsd-block-api-XXXXXX", cmd[16384], *out = NULL, path[256], trees[4200];
    cr_assert(mkdtemp(dir));
    cr_assert(getcwd(trees, 4096));
    strcat(trees, "/" SHIPPED); /* the dump column is the path as given */
    snprintf(cmd, sizeof cmd, "cd %s && %s block %s -o b.csv --markdown b.md --latex b.tex "
             "--verifiers rrs,kseq --sequences 1,4 --cost 0,0.05 && for i in 1 2; do %s block %s"
             " -o s$i --verifiers rrs,kseq --sequences 1,4 --cost 0,0.05 --shard $i/2 || exit 1; done",
             dir, test_mdsd_bin(), trees, test_mdsd_bin(), trees);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    free(out);
    char a_csv[300], a_md[300], a_tex[300];
    snprintf(a_csv, sizeof a_csv, "%s/a.csv", dir);
    snprintf(a_md, sizeof a_md, "%s/a.md", dir);
    snprintf(a_tex, sizeof a_tex, "%s/a.tex", dir);
    const char *dumps[] = {trees};
    mdsd_block_job_opts o;
    mdsd_block_job_opts_init(&o);
    o.n_dumps = 1, o.dumps = dumps;
    o.verifiers = "rrs,kseq", o.sequences = "1,4", o.costs = "0,0.05";
    o.output = a_csv, o.markdown = a_md, o.latex = a_tex;
    mdsd_err err;
    cr_assert_eq(mdsd_block_run(&o, &err), MDSD_OK, "%s", err.msg);
    const char *ext[] = {"csv", "md", "tex"};
    for (int k = 0; k < 3; k++) {
        char pa[300], pb[300];
        snprintf(pa, sizeof pa, "%s/a.%s", dir, ext[k]);
        snprintf(pb, sizeof pb, "%s/b.%s", dir, ext[k]);
        char *x = slurp_file(pa), *y = slurp_file(pb);
        cr_assert_str_eq(x, y, "%s differs from the CLI's", pa);
        free(x), free(y);
    }
    /* the planted difference */
    o.sequences = "1,2", o.markdown = o.latex = NULL;
    snprintf(path, sizeof path, "%s/p.csv", dir);
    o.output = path;
    cr_assert_eq(mdsd_block_run(&o, &err), MDSD_OK, "%s", err.msg);
    char *x = slurp_file(path), *y = slurp_file(a_csv);
    cr_assert(strcmp(x, y) != 0, "other options gave the same bytes");
    free(x), free(y);
    /* merge, shards in any order */
    char s1[300], s2[300], m[300];
    snprintf(s1, sizeof s1, "%s/s1", dir);
    snprintf(s2, sizeof s2, "%s/s2", dir);
    snprintf(m, sizeof m, "%s/m.csv", dir);
    const char *shards[] = {s2, s1};
    cr_assert_eq(mdsd_merge(shards, 2, m, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    x = slurp_file(m), y = slurp_file(a_csv);
    cr_assert_str_eq(x, y, "the merge differs from the unsharded CSV");
    free(x), free(y);
    /* refused, naming the input; nothing written */
    o.verifiers = "nosuch";
    cr_assert_neq(mdsd_block_run(&o, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "nosuch"), "%s", err.msg);
    cr_assert_neq(mdsd_merge(shards, 1, path, NULL, NULL, &err), MDSD_OK);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0);
    free(out);
}
