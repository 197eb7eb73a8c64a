/* Traversal against token-level verification at L = 1 (MATH.md §5.6): with
 * one level traversal is recursive rejection sampling without replacement
 * on the distinct drafted tokens, so on wor trees it is rrsw, and with two
 * i.i.d. drafts it is never above rrs; the committed toy of
 * papers/block/results/ (traversal_scan.py) where it is 0.0947 below. */
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "block.h"
#include "blockv.h"
#include "rng.h"
#include "testutil.h"

static double tau_block(const mdsd_markov *m, const mdsd_policy *pol)
{
    mdsd_block_result r;
    mdsd_err err;
    cr_assert_eq(mdsd_blockv_exact(m, pol, &mdsd_blockv_traversal_ops, NULL, &r, &err), MDSD_OK,
                 "%s", err.msg);
    return r.tau;
}

static double tau_token(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v)
{
    mdsd_block_result r;
    mdsd_err err;
    cr_assert_eq(mdsd_block_exact(m, pol, v, NULL, &r, &err), MDSD_OK, "%s", err.msg);
    return r.tau;
}

/* 60 random toys (V = 3, 4; Dirichlet rows): wor width 2 and 3 against
 * rrsw to 1e-12, seq K = 2 against rrs (never above; below on some). */
Test(traversal_claims, one_level_is_rrsw_on_distinct_tokens, .timeout = 120)
{
    gsl_rng *r = mdsd_rng_alloc(41002);
    mdsd_policy wor[2] = {{.kind = MDSD_POLICY_TREE, .depth = 1, .width = {2}, .scheme = MDSD_SCHEME_WOR},
                          {.kind = MDSD_POLICY_TREE, .depth = 1, .width = {3}, .scheme = MDSD_SCHEME_WOR}};
    mdsd_policy k2 = {.kind = MDSD_POLICY_SEQ, .depth = 1, .sequences = 2};
    size_t below = 0;
    for (unsigned inst = 0; inst < 60; inst++) {
        size_t V = 3 + inst % 2;
        mdsd_markov m = {V, malloc(V * V * sizeof(double)), malloc(V * V * sizeof(double))};
        for (size_t i = 0; i < V; i++) {
            toy_distribution(r, TOY_DIRICHLET, V, m.p + i * V);
            toy_distribution(r, TOY_DIRICHLET, V, m.q + i * V);
        }
        for (size_t w = 0; w < 2; w++) {
            double t = tau_block(&m, &wor[w]), k = tau_token(&m, &wor[w], MDSD_VERIFIER_RRSW);
            cr_assert(fabs(t - k) <= 1e-12, "toy %u, wor width %zu: traversal %.17g, rrsw %.17g",
                      inst, w + 2, t, k);
        }
        double t = tau_block(&m, &k2), k = tau_token(&m, &k2, MDSD_VERIFIER_RRS);
        cr_assert(t <= k + 1e-12, "toy %u, K = 2: traversal %.17g above rrs %.17g", inst, t, k);
        below += t < k - 1e-12;
        mdsd_markov_free(&m);
    }
    cr_assert(below > 0, "traversal below rrs on no toy");
    gsl_rng_free(r);
}

/* The scan's largest shortfall at seq K = 2, L = 1, from its toy file. */
Test(traversal_claims, committed_toy_below_rrs)
{
    mdsd_markov m;
    mdsd_err err;
    cr_assert_eq(mdsd_markov_read("papers/block/results/traversal_below_seq-K2-L1.txt", &m, &err),
                 MDSD_OK, "%s", err.msg);
    mdsd_policy k2 = {.kind = MDSD_POLICY_SEQ, .depth = 1, .sequences = 2};
    double t = tau_block(&m, &k2), k = tau_token(&m, &k2, MDSD_VERIFIER_RRS);
    cr_assert(fabs(t - 1.5784339262629477) <= 1e-9 && fabs(k - 1.6731121402905915) <= 1e-9,
              "traversal %.17g, rrs %.17g", t, k);
    mdsd_markov_free(&m);
}
