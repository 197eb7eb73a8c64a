/* GBV's order of tokens by p/q (verify_gbv.c, MATH.md §5.6): the exact
 * ratio of the stored doubles on toys, the stored logits' difference on tree
 * dumps (so E[tau] does not depend on which exp made p and q), ties by token
 * index; and the clamped reading of the reference code, min(1, p/q), valid
 * only with one tie rule in the walk and the CDF. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "block.h"
#include "blockv.h"
#include "dist.h"
#include "dtree.h"
#include "rng.h"
#include "testutil.h"

/* The stop probabilities of gbv's law on a root with drafts a (sequence 0)
 * and b (sequence 1), seq K = 2, L = 1; every node has the laws p, q and,
 * when zp is not NULL, the logits zp, zq. Returns stop[node of a] and
 * stop[node of b] (one of them is 0: gbv accepts only the selected path). */
static void gbv_two_drafts(size_t V, const double *p, const double *q, const float *zp,
                           const float *zq, int a, int b, double *stop_a, double *stop_b)
{
    mdsd_dtree t;
    mdsd_err err;
    cr_assert_eq(mdsd_dtree_init(&t, V, 1, 2, &err), MDSD_OK);
    mdsd_dtree_root(&t, 0, p, q);
    int ua = mdsd_dtree_draft(&t, 0, a, 0, p, q), ub = mdsd_dtree_draft(&t, 0, b, 1, p, q);
    cr_assert(ua > 0 && ub > 0 && ua != ub);
    if (zp)
        for (size_t u = 0; u < t.n; u++)
            t.zp[u] = zp, t.zq[u] = zq;
    double stop[3];
    cr_assert_eq(mdsd_blockv_gbv_ops.law(&t, stop, NULL, &err), MDSD_OK, "%s", err.msg);
    *stop_a = stop[ua], *stop_b = stop[ub];
    mdsd_dtree_free(&t);
}

/* Two ratios whose quotients round to the same double but differ exactly
 * (0.21343642441124014/0.3 - 0.17786368700936678/0.25 = 4.5e-17): token 1
 * has the higher ratio and is the selected path, although the index rule
 * for a tie would select token 2. */
Test(gbv_ranks, exact_ratio_of_the_stored_doubles)
{
    double p[3] = {0.0, 0.21343642441124014, 0.17786368700936678}, q[3] = {0.45, 0.3, 0.25};
    p[0] = 1.0 - p[1] - p[2];
    cr_assert_eq(p[1] / q[1], p[2] / q[2], "the quotients round alike");
    double s1, s2;
    gbv_two_drafts(3, p, q, NULL, NULL, 1, 2, &s1, &s2);
    cr_assert(s1 > 0.0 && s2 == 0.0, "token 1 selected: stop %.17g, token 2 %.17g", s1, s2);
    gbv_two_drafts(3, p, q, NULL, NULL, 2, 1, &s2, &s1); /* draft order does not matter */
    cr_assert(s1 > 0.0 && s2 == 0.0, "token 1 selected: stop %.17g, token 2 %.17g", s1, s2);
}

/* A node with logits: tokens 1 and 2 tie exactly in zp - zq (= 1), so
 * token 2 (the larger index) is selected; a relative 1e-12 on p(1) - what
 * another exp could do to the stored doubles - makes token 1's double ratio
 * the larger, and leaves the law as it was (to 1e-9) where the logits are
 * at hand; without them the ratio route follows the doubles. */
Test(gbv_ranks, dump_nodes_rank_by_the_logits)
{
    const size_t V = 4;
    float zp[4] = {0.0f, 1.0f, 2.0f, 0.5f}, zq[4] = {0.5f, 0.0f, 1.0f, 1.0f};
    double p[4], q[4], pp[4];
    cr_assert_eq(mdsd_softmax_float(zp, V, 1.0, p, "p", NULL), MDSD_OK);
    cr_assert_eq(mdsd_softmax_float(zq, V, 1.0, q, "q", NULL), MDSD_OK);
    memcpy(pp, p, sizeof pp);
    pp[1] *= 1.0 + 1e-12;
    cr_assert(pp[1] / q[1] > pp[2] / q[2]);
    double s1, s2, t1, t2;
    gbv_two_drafts(V, p, q, zp, zq, 1, 2, &s1, &s2);
    cr_assert(s2 > 0.0 && s1 == 0.0, "token 2 selected: stop %.17g, token 1 %.17g", s2, s1);
    gbv_two_drafts(V, pp, q, zp, zq, 1, 2, &t1, &t2);
    cr_assert(t1 == 0.0 && fabs(t2 - s2) <= 1e-9, "perturbed: stop %.17g vs %.17g", t2, s2);
    gbv_two_drafts(V, pp, q, NULL, NULL, 1, 2, &t1, &t2);
    cr_assert(t1 > 0.0 && t2 == 0.0, "without logits the doubles rank token 1 higher");
    /* -inf logits (p(0) = 0, q(3) = 0: ratios 0 and inf) rank without NaN */
    zp[0] = -INFINITY, zq[3] = -INFINITY;
    cr_assert_eq(mdsd_softmax_float(zp, V, 1.0, p, "p", NULL), MDSD_OK);
    cr_assert_eq(mdsd_softmax_float(zq, V, 1.0, q, "q", NULL), MDSD_OK);
    cr_assert(p[0] == 0.0 && q[3] == 0.0);
    gbv_two_drafts(V, p, q, zp, zq, 1, 2, &s1, &s2);
    cr_assert(s2 > 0.0 && s1 == 0.0, "with -inf logits: stop %.17g, token 1 %.17g", s2, s1);
}

/* E[tau] of every cell of `mdsd block data/kjv-trees.h5 --verifiers V` under
 * exp e = 0 (libmvec) and 1 (portable) in tau[e][0 .. n[e]) (at most 16). */
static void cells_under_both_exps(const char *verifier, double tau[2][16], size_t n[2])
{
    char path[2][64], cmd[2][512];
    for (int e = 0; e < 2; e++) {
        n[e] = 0;
        snprintf(path[e], sizeof path[e], "/tmp/mdsd-test-rank-exp-XXXXXX");
        int fd = mkstemp(path[e]);
        cr_assert(fd >= 0);
        close(fd);
        snprintf(cmd[e], sizeof cmd[e], "MDSD_PORTABLE_EXP=%d %s block data/kjv-trees.h5 "
                 "--verifiers %s --threads 2 -o %s > /dev/null", e, test_mdsd_bin(), verifier,
                 path[e]);
        char *out;
        cr_assert_eq(test_run_shell(cmd[e], &out), 0, "%s: %s", cmd[e], out);
        free(out);
        FILE *f = fopen(path[e], "r");
        cr_assert(f);
        char line[4096];
        cr_assert(fgets(line, sizeof line, f)); /* header: block_efficiency is column 11 */
        cr_assert(strstr(line, "dump,verifier,policy,scheme,sequences,widths,depth,tree_size,"
                                "trees,samples,block_efficiency,") == line, "%s", line);
        while (fgets(line, sizeof line, f) && n[e] < 16) {
            char *c = line;
            for (int k = 0; k < 10; k++)
                c = strchr(c, ',') + 1;
            tau[e][n[e]++] = strtod(c, NULL);
        }
        fclose(f);
        unlink(path[e]);
    }
}

/* E[tau] of gbv on the shipped dump under glibc's vector exp and under the
 * portable one (MDSD_PORTABLE_EXP=1): p and q differ by a few ulp, and the
 * ranks by exp-rounded ratios differed by up to 0.022 at K = L = 4; ranked
 * by the logits, every cell agrees to 1e-12 (not bit for bit: the laws
 * themselves are a few ulp apart, as for bv). Machines without AVX-512 use
 * the portable exp for both and check nothing here. */
Test(gbv_ranks, shipped_dump_independent_of_exp, .timeout = 120)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f"))
        cr_skip_test("no AVX-512: one exp only");
    double tau[2][16];
    size_t n[2];
    cells_under_both_exps("gbv", tau, n);
    cr_assert(n[0] == 12 && n[1] == 12, "cells: %zu, %zu", n[0], n[1]);
    for (size_t i = 0; i < n[0]; i++)
        cr_assert(fabs(tau[0][i] - tau[1][i]) <= 1e-12, "cell %zu: libmvec %.17g, portable %.17g",
                  i, tau[0][i], tau[1][i]);
}

/* ot orders its layout by q/p (MATH.md §3.10): ties among tokens of equal
 * ratio change which tokens are accepted (not alpha*), and on the shipped
 * dump, whose n-gram logits tie exactly, the exp-rounded ratios changed
 * E[tau] by up to 0.011 (K = 2, L = 4). Ordered by the stored logits
 * (mdsd_ot_plan_build_logits) every cell agrees to 1e-12. */
Test(gbv_ranks, ot_on_the_shipped_dump_independent_of_exp, .timeout = 120)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f"))
        cr_skip_test("no AVX-512: one exp only");
    double tau[2][16];
    size_t n[2];
    cells_under_both_exps("ot", tau, n);
    cr_assert(n[0] == 12 && n[1] == 12, "cells: %zu, %zu", n[0], n[1]);
    for (size_t i = 0; i < n[0]; i++)
        cr_assert(fabs(tau[0][i] - tau[1][i]) <= 1e-12, "cell %zu: libmvec %.17g, portable %.17g",
                  i, tau[0][i], tau[1][i]);
}

/* A random Markov pair on V tokens with Dirichlet rows, no ties planted. */
static void dirichlet_pair(gsl_rng *r, size_t V, mdsd_markov *m)
{
    m->V = V;
    m->p = malloc(V * V * sizeof *m->p);
    m->q = malloc(V * V * sizeof *m->q);
    for (size_t i = 0; i < V; i++) {
        toy_distribution(r, TOY_DIRICHLET, V, m->p + i * V);
        toy_distribution(r, TOY_DIRICHLET, V, m->q + i * V);
    }
}

/* The clamped reading (rank by min(1, p/q), MATH.md §5.6): every token
 * with p >= q ties at 1, so the tie rule decides most of the order. Ranked
 * by index in the walk and in q*, it is lossless (stopped chain to 1e-12
 * on every toy and context); with the reference's walk (the first drafted
 * child among equal ranks) and its stable-argsort CDF it is not, on toys
 * with no planted ties: the first toy of the family shows it. */
Test(gbv_ranks, clamped_reading_needs_one_tie_rule, .timeout = 120)
{
    /* MATH.md §5.6's toy: p = (0.5, 0.3, 0.2), q = (0.3, 0.3, 0.4) after every
     * token, seq K = 2, L = 1. Clamped, tokens 0 and 1 tie at 1; the CDF
     * ranks 2 < 0 < 1, so q* = (0.33, 0.51, 0.16), but the first-tie walk
     * selects 0 and 1 each with 0.3 + 0.4 * 0.3 = 0.42, and the output is
     * token 0 with 0.42 + (2.94/17)(17/21) = 0.56, not 0.5. */
    double rows_p[9], rows_q[9], p[3] = {0.5, 0.3, 0.2}, q[3] = {0.3, 0.3, 0.4};
    for (int i = 0; i < 3; i++)
        memcpy(rows_p + 3 * i, p, sizeof p), memcpy(rows_q + 3 * i, q, sizeof q);
    mdsd_markov toy = {3, rows_p, rows_q};
    mdsd_policy k2 = {.kind = MDSD_POLICY_SEQ, .depth = 1, .sequences = 2};
    double dev, first;
    mdsd_err err;
    cr_assert_eq(mdsd_block_stopped_chain(&toy, &k2, &mdsd_blockv_gbv_clamped_ops, 0, &dev, &first,
                                          &err), MDSD_OK, "%s", err.msg);
    cr_assert(dev <= 1e-12, "gbv-clamped on the toy: %.3g", dev);
    cr_assert_eq(mdsd_block_stopped_chain(&toy, &k2, &mdsd_blockv_gbv_clamped_first_tie_ops, 0,
                                          &dev, &first, &err), MDSD_OK, "%s", err.msg);
    cr_assert(fabs(first - 0.06) <= 1e-12, "gbv-clamped-first-tie on the toy: %.17g", first);
    cr_assert_eq(mdsd_block_stopped_chain(&toy, &k2, &mdsd_blockv_gbv_ops, 0, &dev, &first, &err),
                 MDSD_OK, "%s", err.msg);
    cr_assert(dev <= 1e-12, "gbv (unclamped: no ties on the toy): %.3g", dev);

    gsl_rng *r = mdsd_rng_alloc(41001);
    mdsd_policy pols[2] = {{.kind = MDSD_POLICY_SEQ, .depth = 2, .sequences = 2},
                           {.kind = MDSD_POLICY_SEQ, .depth = 1, .sequences = 3}};
    double worst_first_tie = 0.0;
    for (unsigned inst = 0; inst < 10; inst++) {
        mdsd_markov m;
        dirichlet_pair(r, 3, &m);
        for (size_t c = 0; c < 2; c++)
            for (int root = 0; root < 3; root++) {
                double dev, first;
                mdsd_err err;
                cr_assert_eq(mdsd_block_stopped_chain(&m, &pols[c], &mdsd_blockv_gbv_clamped_ops,
                                                      root, &dev, &first, &err), MDSD_OK, "%s",
                             err.msg);
                cr_assert(dev <= 1e-12, "gbv-clamped, toy %u, policy %zu, root %d: %.3g", inst, c,
                          root, dev);
                cr_assert_eq(mdsd_block_stopped_chain(&m, &pols[c],
                                                      &mdsd_blockv_gbv_clamped_first_tie_ops, root,
                                                      &dev, &first, &err), MDSD_OK, "%s", err.msg);
                if (first > worst_first_tie)
                    worst_first_tie = first;
            }
        mdsd_markov_free(&m);
    }
    cr_assert(worst_first_tie >= 0.05, "gbv-clamped-first-tie: first-token deviation %.3g",
              worst_first_tie);
    gsl_rng_free(r);
}
