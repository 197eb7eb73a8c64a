/* Block verifiers (blockv.h) and the two optima (MATH.md §5.4, §5.6-5.8):
 * Sun et al.'s worked example; the stopped-chain condition checked exactly
 * for every block verifier on random and hard toys from every context, and
 * a chi-square test of the first tokens of live steps, each shown to catch
 * a planted invalid variant; the sampled and simulated routes against the
 * exact one; the draft enumeration against the token-level recursion;
 * optimal-block against bv (K = 1), 1 + alpha* (L = 1), optimal-token and
 * every verifier; otm-tiebreak against optimal-token where MATH.md §5.4
 * proves them equal, and the counterexample where it does not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "block.h"
#include "blockv.h"
#include "dtree.h"
#include "rng.h"
#include "stats.h"
#include "testutil.h"
#include "verifier.h"

static const mdsd_blockv_ops *const verifiers[] = {&mdsd_blockv_bv_ops, &mdsd_blockv_gbv_ops,
                                                   &mdsd_blockv_traversal_ops};
#define NVERIFIERS 3

/* A random Markov pair on V tokens: rows from toy_pair (kind 0..5) or
 * test_hard_pair (kind 6..9: subnormal, near-one-hot, ties, zeros), kind
 * cycling along the rows. */
static void random_markov(gsl_rng *r, size_t V, unsigned kind, mdsd_markov *m)
{
    m->V = V;
    m->p = malloc(V * V * sizeof *m->p);
    m->q = malloc(V * V * sizeof *m->q);
    for (size_t i = 0; i < V; i++) {
        unsigned k = (kind + (unsigned)i) % (TOY_PAIR_KINDS + TEST_HARD_PAIR_KINDS);
        if (k < TOY_PAIR_KINDS)
            toy_pair(r, k, V, m->p + i * V, m->q + i * V);
        else
            test_hard_pair(r, k - TOY_PAIR_KINDS, V, m->p + i * V, m->q + i * V);
    }
}

/* Dirichlet rows with full support: every context reached in live runs. */
static void dirichlet_markov(gsl_rng *r, size_t V, mdsd_markov *m)
{
    m->V = V;
    m->p = malloc(V * V * sizeof *m->p);
    m->q = malloc(V * V * sizeof *m->q);
    for (size_t i = 0; i < V; i++) {
        toy_distribution(r, TOY_DIRICHLET, V, m->p + i * V);
        toy_distribution(r, TOY_DIRICHLET, V, m->q + i * V);
        for (size_t x = 0; x < V; x++) {
            m->p[i * V + x] = 0.9 * m->p[i * V + x] + 0.1 / (double)V;
            m->q[i * V + x] = 0.9 * m->q[i * V + x] + 0.1 / (double)V;
        }
    }
}

static mdsd_policy seq(size_t K, size_t L)
{
    mdsd_policy pol = {0};
    pol.kind = MDSD_POLICY_SEQ, pol.sequences = K, pol.depth = L;
    return pol;
}

static mdsd_policy tree(mdsd_scheme_kind s, size_t w1, size_t w2)
{
    mdsd_policy pol = {0};
    pol.kind = MDSD_POLICY_TREE, pol.scheme = s, pol.depth = 2;
    pol.width[0] = w1, pol.width[1] = w2;
    return pol;
}

/* A Markov pair from rows (V <= 4). */
static mdsd_markov pair_of(size_t V, const double *p, const double *q)
{
    mdsd_markov m = {V, malloc(V * V * sizeof(double)), malloc(V * V * sizeof(double))};
    memcpy(m.p, p, V * V * sizeof(double));
    memcpy(m.q, q, V * V * sizeof(double));
    return m;
}

/* ---- worked examples ----------------------------------------------------- */

/* Sun et al. §1: context-independent p = (1/3, 2/3), q = (2/3, 1/3), L = 2:
 * token-level 10/9 accepted tokens (E[tau] = 19/9), block verification 11/9
 * (20/9), which their theorem says is the best of any valid verifier. */
Test(block_verifiers, sun_example)
{
    double p[4] = {1.0 / 3, 2.0 / 3, 1.0 / 3, 2.0 / 3}, q[4] = {2.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3};
    mdsd_markov m = pair_of(2, p, q);
    mdsd_policy pol = seq(1, 2);
    mdsd_block_result r;
    mdsd_err err;
    cr_assert_eq(mdsd_block_exact(&m, &pol, MDSD_VERIFIER_SD, NULL, &r, &err), MDSD_OK, "%s", err.msg);
    cr_assert(fabs(r.tau - 19.0 / 9) <= 1e-12, "sd: %.17g", r.tau);
    cr_assert_eq(mdsd_block_optimal_token(&m, &pol, NULL, &r, &err), MDSD_OK, "%s", err.msg);
    cr_assert(fabs(r.tau - 19.0 / 9) <= 1e-9, "optimal-token: %.17g", r.tau);
    for (size_t k = 0; k < NVERIFIERS; k++) {
        cr_assert_eq(mdsd_blockv_exact(&m, &pol, verifiers[k], NULL, &r, &err), MDSD_OK, "%s", err.msg);
        cr_assert(fabs(r.tau - 20.0 / 9) <= 1e-12, "%s: %.17g", verifiers[k]->name, r.tau);
    }
    cr_assert_eq(mdsd_block_optimal_block(&m, &pol, NULL, &r, &err), MDSD_OK, "%s", err.msg);
    cr_assert(fabs(r.tau - 20.0 / 9) <= 1e-7, "optimal-block: %.17g", r.tau);
    mdsd_markov_free(&m);
}

/* The Markov toy (papers/block/toys/toy3.txt, seq K = 2, L = 3):
 * the best token-level verifier 3.678492, the best lossless one 3.8700088
 * (an independent LP's values in issue 24). */
Test(block_verifiers, token_level_optimum_is_below_the_lossless_one)
{
    mdsd_markov m;
    mdsd_err err;
    cr_assert_eq(mdsd_markov_read("papers/block/toys/toy3.txt", &m, &err), MDSD_OK, "%s", err.msg);
    mdsd_policy pol = seq(2, 3);
    mdsd_block_result tok, blk;
    cr_assert_eq(mdsd_block_optimal_token(&m, &pol, NULL, &tok, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_block_optimal_block(&m, &pol, NULL, &blk, &err), MDSD_OK, "%s", err.msg);
    cr_assert(fabs(tok.tau - 3.678492) <= 1e-6, "optimal-token %.9f", tok.tau);
    cr_assert(fabs(blk.tau - 3.8700088) <= 1e-6, "optimal-block %.9f", blk.tau);
    mdsd_markov_free(&m);
}

/* ---- validity ------------------------------------------------------------- */

static const mdsd_policy *validity_policies(size_t *n)
{
    static mdsd_policy pols[6];
    pols[0] = seq(1, 3), pols[1] = seq(2, 2), pols[2] = seq(3, 2);
    pols[3] = tree(MDSD_SCHEME_IID, 2, 2), pols[4] = tree(MDSD_SCHEME_WOR, 2, 2);
    pols[5] = tree(MDSD_SCHEME_IID, 3, 1);
    *n = 6;
    return pols;
}

/* Every block verifier, on every policy it takes, on random and hard toys,
 * from every context token: the stopped-chain condition to 1e-12. */
Test(block_verifiers, stopped_chain_holds_on_random_toys, .timeout = 300)
{
    gsl_rng *r = mdsd_rng_alloc(24001);
    size_t npol, checked = 0;
    const mdsd_policy *pols = validity_policies(&npol);
    for (unsigned inst = 0; inst < 30; inst++) {
        size_t V = 2 + inst % 2;
        mdsd_markov m;
        random_markov(r, V, inst, &m);
        for (size_t k = 0; k < NVERIFIERS; k++)
            for (size_t c = 0; c < npol; c++)
                for (size_t root = 0; root < V; root++) {
                    double dev = -1.0;
                    mdsd_err err;
                    int rc = mdsd_block_stopped_chain(&m, &pols[c], verifiers[k], (int)root, &dev,
                                                      NULL, &err);
                    if (rc == MDSD_EUNSUPPORTED || (rc == MDSD_EINVAL && strstr(err.msg, "wor")))
                        continue; /* not its policy; wor drafts beyond q's support */
                    cr_assert_eq(rc, MDSD_OK, "%s: %s", verifiers[k]->name, err.msg);
                    cr_assert(dev <= 1e-12, "%s, toy %u, policy %zu, root %zu: deviation %.3g",
                              verifiers[k]->name, inst, c, root, dev);
                    checked++;
                }
        mdsd_markov_free(&m);
    }
    cr_assert(checked > 500, "only %zu checks ran", checked);
    gsl_rng_free(r);
}

/* Live decoding: `steps` steps, the first output token of the steps from
 * each context against p(.|context); the smallest p-value over contexts. */
static double live_p_value(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                           uint64_t steps, uint64_t seed)
{
    size_t V = m->V;
    uint64_t *counts = calloc(V * V, sizeof *counts);
    mdsd_err err;
    cr_assert_eq(mdsd_block_live(m, pol, v, steps, seed, counts, &err), MDSD_OK, "%s: %s", v->name,
                 err.msg);
    double pmin = 1.0;
    for (size_t c = 0; c < V; c++) {
        uint64_t n = 0;
        for (size_t b = 0; b < V; b++)
            n += counts[c * V + b];
        if (n < 100)
            continue;
        mdsd_gof g = mdsd_chisq_gof(counts + c * V, m->p + c * V, V, 5.0);
        if (g.p_value < pmin)
            pmin = g.p_value;
    }
    free(counts);
    return pmin;
}

/* Every block verifier's live first tokens pass the chi-square test at
 * 1e-6 (fixed seeds) on random toys. */
Test(block_verifiers, live_first_tokens_follow_the_target, .timeout = 300)
{
    gsl_rng *r = mdsd_rng_alloc(24002);
    size_t npol;
    const mdsd_policy *pols = validity_policies(&npol);
    for (unsigned inst = 0; inst < 4; inst++) {
        mdsd_markov m;
        dirichlet_markov(r, 3, &m);
        for (size_t k = 0; k < NVERIFIERS; k++)
            for (size_t c = 0; c < npol; c += 2) {
                if (verifiers[k]->check(&pols[c], NULL) != MDSD_OK)
                    continue;
                double pv = live_p_value(&m, &pols[c], verifiers[k], 20000, 24100 + inst);
                cr_assert(pv >= 1e-6, "%s toy %u policy %zu: p = %.3g", verifiers[k]->name, inst,
                          c, pv);
            }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* Each audit variant (blockv.h, NOT valid) is caught by the exact check and
 * by the live chi-square: a toy of the family where its first-token law is
 * off by at least 0.05 is found, and 100,000 live steps give p < 1e-6 there. */
Test(block_verifiers, checks_catch_planted_invalid_variants, .timeout = 300)
{
    struct {
        const mdsd_blockv_ops *v;
        mdsd_policy pol;
        int ties; /* q = p rows (every ratio 1: ties) */
    } planted[4] = {{&mdsd_blockv_bv_stale_ops, seq(1, 2), 0},
                    {&mdsd_blockv_gbv_first_tie_ops, seq(2, 2), 1},
                    {&mdsd_blockv_gbv_no_skew_ops, seq(2, 2), 0},
                    {&mdsd_blockv_traversal_keep_q_ops, tree(MDSD_SCHEME_WOR, 2, 2), 0}};
    gsl_rng *r = mdsd_rng_alloc(24003);
    for (size_t k = 0; k < 4; k++) {
        int found = 0;
        for (unsigned inst = 0; inst < 40 && !found; inst++) {
            mdsd_markov m;
            dirichlet_markov(r, 3, &m);
            if (planted[k].ties)
                memcpy(m.q, m.p, 9 * sizeof *m.q);
            double dev = 0.0, first = 0.0;
            mdsd_err err;
            int rc = mdsd_block_stopped_chain(&m, &planted[k].pol, planted[k].v, 0, &dev, &first,
                                              &err);
            if (rc == MDSD_OK && first >= 0.05) {
                found = 1;
                cr_assert(dev >= 0.05);
                double pv = live_p_value(&m, &planted[k].pol, planted[k].v, 100000, 24200 + k);
                cr_assert(pv < 1e-6, "%s: live chi-square p = %.3g (first-token deviation %.3g)",
                          planted[k].v->name, pv, first);
            }
            mdsd_markov_free(&m);
        }
        cr_assert(found, "%s: no toy of the family shows it invalid", planted[k].v->name);
    }
    gsl_rng_free(r);
}

/* ---- routes ----------------------------------------------------------------- */

/* The sampled route (verifier randomness integrated out) and plain steps
 * against the exact route, within 5 standard errors (fixed seeds). */
Test(block_verifiers, sampled_and_simulated_agree_with_exact, .timeout = 120)
{
    gsl_rng *r = mdsd_rng_alloc(24004);
    mdsd_markov m;
    random_markov(r, 3, 0, &m);
    size_t npol;
    const mdsd_policy *pols = validity_policies(&npol);
    for (size_t k = 0; k < NVERIFIERS; k++)
        for (size_t c = 0; c < npol; c++) {
            if (verifiers[k]->check(&pols[c], NULL) != MDSD_OK)
                continue;
            mdsd_block_opts o;
            mdsd_block_opts_init(&o);
            o.trials = 20000;
            o.seed = 24300 + c;
            mdsd_block_result ex, sa, si;
            mdsd_err err;
            int rc = mdsd_blockv_exact(&m, &pols[c], verifiers[k], &o, &ex, &err);
            if (rc == MDSD_EINVAL && strstr(err.msg, "wor"))
                continue;
            cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
            cr_assert_eq(mdsd_blockv_sampled(&m, &pols[c], verifiers[k], &o, &sa, &err), MDSD_OK);
            cr_assert_eq(mdsd_blockv_simulate(&m, &pols[c], verifiers[k], &o, &si, &err), MDSD_OK);
            cr_assert(fabs(sa.tau - ex.tau) <= 5 * sa.se + 1e-12, "%s sampled %.6f +- %.2g vs %.6f",
                      verifiers[k]->name, sa.tau, sa.se, ex.tau);
            cr_assert(fabs(si.tau - ex.tau) <= 5 * si.se + 1e-12, "%s simulated %.6f +- %.2g vs %.6f",
                      verifiers[k]->name, si.tau, si.se, ex.tau);
            cr_assert(sa.se < si.se, "integrating the verifier's randomness lowers the s.e.");
        }
    mdsd_markov_free(&m);
    gsl_rng_free(r);
}

/* A token-level verifier's recursion written on the enumerated drafts: the
 * law at each node from mdsd_verifier_law on the node's tuple (the tokens
 * of the sequences through it, in sequence order). */
static mdsd_verifier_kind token_kind;
static int token_law(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err)
{
    (void)next;
    memset(stop, 0, t->n * sizeof *stop);
    double *reach = calloc(t->n, sizeof *reach);
    reach[0] = 1.0;
    for (size_t u = 0; u < t->n; u++) { /* parents before children */
        if (t->kid[u] < 0 || !(reach[u] > 0.0)) {
            stop[u] += reach[u];
            continue;
        }
        int x[MDSD_BLOCK_MAX_DRAFTS], who[MDSD_BLOCK_MAX_DRAFTS];
        size_t n = 0;
        for (size_t k = 0; k < t->K; k++)
            if (t->seqs[u] >> k & 1u)
                for (int c = t->kid[u]; c >= 0; c = t->sib[c])
                    if (t->seqs[c] >> k & 1u)
                        x[n] = t->token[c], who[n++] = c;
        mdsd_scheme s = {MDSD_SCHEME_IID, n, t->V, t->q[u], NULL};
        mdsd_verifier *v = mdsd_verifier_alloc(token_kind, t->p[u], &s, NULL, err);
        double py[MDSD_BLOCK_MAX_DRAFTS], acc = 0.0;
        if (!v || mdsd_verifier_law(v, x, py, err) != MDSD_OK) {
            mdsd_verifier_free(v);
            free(reach);
            return MDSD_EINVAL;
        }
        mdsd_verifier_free(v);
        for (size_t j = 0; j < n; j++) {
            int first = 1;
            for (size_t i = 0; i < j; i++)
                first &= x[i] != x[j];
            if (first)
                reach[who[j]] += reach[u] * py[j], acc += py[j];
        }
        stop[u] += reach[u] * (1.0 - acc);
    }
    free(reach);
    return MDSD_OK;
}

Test(block_verifiers, draft_enumeration_matches_token_level_recursion)
{
    gsl_rng *r = mdsd_rng_alloc(24005);
    /* gbv's check: any seq policy */
    mdsd_blockv_ops ops = {"token", mdsd_blockv_gbv_ops.check, token_law, NULL};
    for (unsigned inst = 0; inst < 6; inst++) {
        mdsd_markov m;
        random_markov(r, 3, inst, &m);
        mdsd_verifier_kind kinds[2] = {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ};
        for (size_t k = 0; k < 2; k++) {
            token_kind = kinds[k];
            mdsd_policy pol = seq(2 + inst % 2, 2);
            mdsd_block_result a, b;
            mdsd_err err;
            cr_assert_eq(mdsd_block_exact(&m, &pol, kinds[k], NULL, &a, &err), MDSD_OK, "%s", err.msg);
            cr_assert_eq(mdsd_blockv_exact(&m, &pol, &ops, NULL, &b, &err), MDSD_OK, "%s", err.msg);
            cr_assert(fabs(a.tau - b.tau) <= 1e-12, "%s: recursion %.17g, enumeration %.17g",
                      mdsd_verifier_name(kinds[k]), a.tau, b.tau);
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* One path: gbv is bv, and traversal is bv (its parent update is Sun et
 * al.'s h_i); per draft, so in E[tau] to rounding. */
Test(block_verifiers, one_path_reductions)
{
    gsl_rng *r = mdsd_rng_alloc(24006);
    for (unsigned inst = 0; inst < 10; inst++) {
        mdsd_markov m;
        random_markov(r, 3, inst, &m);
        mdsd_policy pol = seq(1, 3);
        mdsd_block_result res[NVERIFIERS];
        mdsd_err err;
        for (size_t k = 0; k < NVERIFIERS; k++)
            cr_assert_eq(mdsd_blockv_exact(&m, &pol, verifiers[k], NULL, &res[k], &err), MDSD_OK,
                         "%s", err.msg);
        for (size_t k = 1; k < NVERIFIERS; k++)
            for (size_t d = 1; d <= 3; d++)
                cr_assert(fabs(res[k].reach[d] - res[0].reach[d]) <= 1e-12, "%s reach %zu",
                          verifiers[k]->name, d);
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* ---- the optima --------------------------------------------------------------- */

/* optimal-block: = bv at K = 1 (Sun et al.'s optimality), = 1 + alpha* at
 * L = 1, >= optimal-token, otm-tiebreak and every verifier (1e-7: an LP). */
Test(block_verifiers, optimal_block_bounds, .timeout = 300)
{
    gsl_rng *r = mdsd_rng_alloc(24007);
    mdsd_policy pols[6] = {seq(1, 2), seq(1, 3), seq(2, 2), seq(3, 1), tree(MDSD_SCHEME_IID, 2, 2),
                           tree(MDSD_SCHEME_WOR, 2, 1)};
    for (unsigned inst = 0; inst < 10; inst++) {
        size_t V = 2 + inst % 2;
        mdsd_markov m;
        random_markov(r, V, inst, &m);
        for (size_t c = 0; c < 6; c++) {
            mdsd_block_result ob, ot, tb, x;
            mdsd_err err;
            int rc = mdsd_block_optimal_block(&m, &pols[c], NULL, &ob, &err);
            if (rc == MDSD_EINVAL && strstr(err.msg, "wor"))
                continue;
            cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
            cr_assert_eq(mdsd_block_optimal_token(&m, &pols[c], NULL, &ot, &err), MDSD_OK);
            cr_assert_eq(mdsd_block_otm_tiebreak(&m, &pols[c], NULL, &tb, &err), MDSD_OK);
            cr_assert(ob.tau >= ot.tau - 1e-7, "toy %u pol %zu: block %.12f < token %.12f", inst, c,
                      ob.tau, ot.tau);
            cr_assert(ot.tau >= tb.tau - 1e-7);
            for (size_t k = 0; k < NVERIFIERS; k++) {
                if (mdsd_blockv_exact(&m, &pols[c], verifiers[k], NULL, &x, &err) != MDSD_OK)
                    continue;
                cr_assert(ob.tau >= x.tau - 1e-7, "%s %.12f above optimal-block %.12f",
                          verifiers[k]->name, x.tau, ob.tau);
                if (k == 0) /* bv at K = 1 */
                    cr_assert(fabs(ob.tau - x.tau) <= 1e-7, "bv %.12f, optimal-block %.12f", x.tau,
                              ob.tau);
            }
            if (pols[c].depth == 1) { /* L = 1: 1 + alpha* of the root's drafts */
                mdsd_scheme s = {pols[c].kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pols[c].scheme,
                                 pols[c].kind == MDSD_POLICY_SEQ ? pols[c].sequences : pols[c].width[0],
                                 V, m.q, NULL};
                double astar = test_alpha_star(m.p, &s);
                cr_assert(fabs(ob.tau - 1.0 - astar) <= 1e-7, "L = 1: %.12f vs 1 + %.12f", ob.tau,
                          astar);
            }
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* otm-tiebreak = optimal-token on trees and seq K <= 2 (MATH.md §5.4: every
 * optimal plan reaches alpha* there), on random toys; below it on the
 * counterexample of §5.4 (seq K = 3). */
Test(block_verifiers, otm_tiebreak_against_optimal_token, .timeout = 300)
{
    gsl_rng *r = mdsd_rng_alloc(24008);
    mdsd_policy pols[5] = {seq(2, 3), seq(2, 4), tree(MDSD_SCHEME_IID, 3, 2),
                           tree(MDSD_SCHEME_WOR, 2, 2), tree(MDSD_SCHEME_GREEDY, 3, 2)};
    for (unsigned inst = 0; inst < 12; inst++) {
        mdsd_markov m;
        random_markov(r, 3 + inst % 2, inst, &m);
        for (size_t c = 0; c < 5; c++) {
            mdsd_block_result ot, tb;
            mdsd_err err;
            int rc = mdsd_block_optimal_token(&m, &pols[c], NULL, &ot, &err);
            if (rc == MDSD_EINVAL)
                continue; /* a scheme beyond q's support */
            cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
            cr_assert_eq(mdsd_block_otm_tiebreak(&m, &pols[c], NULL, &tb, &err), MDSD_OK, "%s",
                         err.msg);
            cr_assert(fabs(ot.tau - tb.tau) <= 1e-9, "toy %u pol %zu: %.12f vs %.12f", inst, c,
                      ot.tau, tb.tau);
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
    /* the counterexample: context r = 0, a = 1, b = 2, z = 3 */
    double p[16] = {0, 0.45, 0.55, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0.25, 0.25, 0.25, 0.25};
    double q[16] = {0, 0.5, 0.2, 0.3, 0, 0.8, 0, 0.2, 0, 0, 0, 1, 0.25, 0.25, 0.25, 0.25};
    mdsd_markov m = pair_of(4, p, q);
    mdsd_policy pol = seq(3, 6);
    mdsd_block_result ot, tb;
    cr_assert_eq(mdsd_block_optimal_token(&m, &pol, NULL, &ot, NULL), MDSD_OK);
    cr_assert_eq(mdsd_block_otm_tiebreak(&m, &pol, NULL, &tb, NULL), MDSD_OK);
    cr_assert(ot.tau - tb.tau > 0.01, "optimal-token %.9f, otm-tiebreak %.9f", ot.tau, tb.tau);
    mdsd_markov_free(&m);
}

/* ---- the command line ------------------------------------------------------ */

static double json_number(const char *out, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(out, pat);
    cr_assert(at, "no %s in %s", key, out);
    return strtod(at + strlen(pat), NULL);
}

/* The interface of issue 24: --verifier bv|gbv|traversal|optimal-block|
 * optimal-token --exact --json prints block_efficiency, the library's
 * value; --optimal's keys state the class; -v optimal is refused. */
Test(block_verifiers, command_line)
{
    mdsd_markov m;
    cr_assert_eq(mdsd_markov_read("papers/block/toys/toy3.txt", &m, NULL), MDSD_OK);
    const char *names[] = {"bv", "gbv", "traversal", "optimal-block", "optimal-token",
                           "otm-tiebreak"};
    for (size_t i = 0; i < 6; i++) {
        size_t K = i == 0 ? 1 : 2;
        mdsd_policy pol = seq(K, 3);
        char args[256], *out = NULL;
        snprintf(args, sizeof args, "block --markov papers/block/toys/toy3.txt --sequences %zu "
                 "--depth 3 --verifier %s --exact --json", K, names[i]);
        cr_assert_eq(test_run_mdsd(args, 0, &out), 0, "%s", args);
        mdsd_block_result r;
        mdsd_blockv_kind k;
        if (i < 3) {
            cr_assert_eq(mdsd_blockv_parse(names[i], &k, NULL), MDSD_OK);
            cr_assert_eq(mdsd_blockv_exact(&m, &pol, mdsd_blockv(k), NULL, &r, NULL), MDSD_OK);
        } else if (i == 3)
            cr_assert_eq(mdsd_block_optimal_block(&m, &pol, NULL, &r, NULL), MDSD_OK);
        else if (i == 4)
            cr_assert_eq(mdsd_block_optimal_token(&m, &pol, NULL, &r, NULL), MDSD_OK);
        else
            cr_assert_eq(mdsd_block_otm_tiebreak(&m, &pol, NULL, &r, NULL), MDSD_OK);
        cr_assert(fabs(json_number(out, "block_efficiency") - r.tau) <= 1e-12, "%s: %s", names[i],
                  out);
        cr_assert(strstr(out, names[i]), "%s", out);
        free(out);
    }
    char *out = NULL;
    cr_assert_eq(test_run_mdsd("block --markov papers/block/toys/toy3.txt --sequences 2 --depth 3 "
                               "-v gbv --optimal --json", 0, &out), 0);
    double tau = json_number(out, "block_efficiency"), opt = json_number(out, "optimal_token_block_efficiency");
    cr_assert(fabs(json_number(out, "gap_to_optimal_token") - (opt - tau)) <= 1e-12);
    cr_assert(!strstr(out, "\"optimal_block_efficiency\""), "a key that names no class: %s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("block --markov papers/block/toys/toy3.txt --sequences 2 --depth 3 "
                               "-v optimal", 1, &out), 2);
    cr_assert(strstr(out, "optimal-token") && strstr(out, "optimal-block"), "%s", out);
    free(out);
    /* the block verifiers on the shipped tree dump */
    cr_assert_eq(test_run_mdsd("block data/kjv-trees.h5 --verifiers bv,gbv,traversal --depth 2 "
                               "--sequences 1,2", 0, &out), 0);
    cr_assert(strstr(out, "| bv | seq K=1 |") && strstr(out, "| gbv | seq K=2 |") &&
              strstr(out, "| traversal | seq K=2 |") && !strstr(out, "| bv | seq K=2 |"), "%s", out);
    free(out);
    mdsd_markov_free(&m);
}

/* A sparse Dirichlet toy (papers/ceilings' random-19: rows with entries near
 * 1e-4) on which the simplex at 1e-10 judged optimal-block's LP infeasible
 * (the LP always has the lossless verifiers as points): it is now solved at
 * GLPK's own 1e-7 after that, and its optimum lies above the token-level one. */
Test(block_verifiers, optimal_block_solves_a_sparse_toy_at_the_lp_tolerance, .timeout = 120)
{
    const char *toy = "block --markov papers/ceilings/results/random/random-19.txt --tree 2,1 "
                      "--scheme wor --exact --json -v ";
    double tau[3];
    const char *v[3] = {"optimal-block", "optimal-token", "rrsw"};
    for (int k = 0; k < 3; k++) {
        char args[512], *out;
        snprintf(args, sizeof args, "%s%s", toy, v[k]);
        cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s: %s", args, out);
        tau[k] = json_number(out, "block_efficiency");
        free(out);
    }
    cr_assert(tau[0] >= tau[1] - 1e-7 && tau[1] >= tau[2] - 1e-7 && tau[0] <= 3.0,
              "optimal-block %.12f, optimal-token %.12f, rrsw %.12f", tau[0], tau[1], tau[2]);
}
