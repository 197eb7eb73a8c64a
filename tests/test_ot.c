/* The optimal verifier `ot` (verify_ot.c, ot_plan.c; MATH.md §3.10).
 *
 * Slow references: alpha* by enumeration of all 2^V subsets of the
 * enumerated joint (test_alpha_star), the LP plan of otm, sort-and-scan at
 * LLM vocabularies; the output law by enumeration of every draft tuple; the
 * sampler against its own law given the drafts and against p (chi-square,
 * shown to catch a planted 1 % error); a planted wrong tier split, which
 * keeps the output p but lowers the acceptance below alpha*. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "bound.h"
#include "montecarlo.h"
#include "ot_plan.h"
#include "testutil.h"
#include "verifier.h"

#define SIGNIFICANCE 1e-6

/* Sum over every tuple of supp(q)^n of D(x) times the plan's whole law given
 * x, into out[V]; *accept gets sum D(x) P(output in S(x) | x). */
static void enumerate_law(const mdsd_ot_plan *pl, const double *q, double *out, double *accept)
{
    size_t V = pl->V, n = pl->n;
    int sup[32], x[8] = {0};
    size_t ns = 0;
    for (size_t v = 0; v < V; v++)
        if (q[v] > 0.0)
            sup[ns++] = (int)v;
    double *law = malloc(V * sizeof *law);
    memset(out, 0, V * sizeof *out);
    *accept = 0.0;
    size_t idx[8] = {0};
    for (;;) {
        double D = 1.0;
        for (size_t j = 0; j < n; j++)
            x[j] = sup[idx[j]], D *= q[x[j]];
        mdsd_ot_plan_law_full(pl, x, law);
        for (size_t v = 0; v < V; v++)
            out[v] += D * law[v];
        for (size_t j = 0; j < n; j++) {
            int first = 1;
            for (size_t l = 0; l < j; l++)
                first &= x[l] != x[j];
            if (first)
                *accept += D * law[x[j]];
        }
        size_t j = 0;
        while (j < n && ++idx[j] == ns)
            idx[j++] = 0;
        if (j == n)
            break;
    }
    free(law);
}

/* A toy pair of V tokens: the shared random families, then the hard ones,
 * renormalised as the verifiers' own copies are. */
static void toy(gsl_rng *r, unsigned t, size_t V, double *p, double *q)
{
    if (t % 2 == 0)
        toy_pair(r, t / 2, V, p, q);
    else
        test_hard_pair(r, t / 2 % TEST_HARD_PAIR_KINDS, V, p, q);
    cr_assert_eq(mdsd_probs_validate(p, V, "p", NULL), MDSD_OK);
    cr_assert_eq(mdsd_probs_validate(q, V, "q", NULL), MDSD_OK);
}

Test(ot, output_law_is_p_and_acceptance_is_alpha_star_by_enumeration)
{
    gsl_rng *r = mdsd_rng_alloc(37001);
    double p[8], q[8], out[8], worst_law = 0.0, worst_alpha = 0.0;
    unsigned tried = 0;
    for (unsigned t = 0; t < 1200; t++) {
        size_t V = 2 + t % 5, n = 1 + t % 4;
        toy(r, t, V, p, q);
        mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
        mdsd_ot_plan pl;
        mdsd_err err;
        cr_assert_eq(mdsd_ot_plan_build(&pl, p, q, V, n, &err), MDSD_OK, "%s", err.msg);
        double accept, star = test_alpha_star(p, &s);
        enumerate_law(&pl, q, out, &accept);
        for (size_t v = 0; v < V; v++) {
            cr_assert(fabs(out[v] - p[v]) <= 1e-12, "t %u V %zu n %zu: output law %.17g at %zu, "
                      "p %.17g", t, V, n, out[v], v, p[v]);
            worst_law = fmax(worst_law, fabs(out[v] - p[v]));
        }
        cr_assert(fabs(accept - star) <= 1e-12 && fabs(pl.alpha - star) <= 1e-12,
                  "t %u V %zu n %zu: acceptance %.17g (plan %.17g), alpha* %.17g", t, V, n,
                  accept, pl.alpha, star);
        worst_alpha = fmax(worst_alpha, fabs(accept - star));
        mdsd_ot_plan_free(&pl);
        tried++;
    }
    cr_log_info("ot by enumeration: %u toys, worst |law - p| %.3g, |alpha - alpha*| %.3g", tried,
                worst_law, worst_alpha);
    gsl_rng_free(r);
}

Test(ot, exact_rates_equal_alpha_star_and_the_enumerated_per_draft_rates)
{
    gsl_rng *r = mdsd_rng_alloc(37002);
    double p[16], q[16];
    for (unsigned t = 0; t < 600; t++) {
        size_t V = 2 + t % 14, n = 1 + t % 6;
        if (V > 6 && n > 3)
            n = 3; /* the per-draft enumeration below is |supp|^n */
        toy(r, t, V, p, q);
        mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
        double alpha, per[8], star = test_alpha_star(p, &s), total = 0.0;
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OT, p, &s, NULL, &alpha, per, &err),
                     MDSD_OK, "%s", err.msg);
        cr_assert(fabs(alpha - star) <= 1e-12, "t %u: ot %.17g, alpha* %.17g", t, alpha, star);
        for (size_t j = 0; j < n; j++)
            total += per[j];
        cr_assert(fabs(total - alpha) <= 1e-12, "t %u: per-draft sum %.17g vs %.17g", t, total,
                  alpha);
        /* per-draft rates from the law given each tuple, first occurrences,
         * against the same plan's exact ones (the rates are the plan's: where
         * q/p ties, an ulp of p can pick another optimal plan) */
        mdsd_ot_plan pl;
        cr_assert_eq(mdsd_ot_plan_build(&pl, p, q, V, n, &err), MDSD_OK, "%s", err.msg);
        cr_assert_eq(mdsd_ot_plan_per_draft(&pl, per, &err), MDSD_OK);
        double enumd[8] = {0}, py[8];
        int sup[16], x[8];
        size_t ns = 0, idx[8] = {0};
        for (size_t v = 0; v < V; v++)
            if (q[v] > 0.0)
                sup[ns++] = (int)v;
        for (;;) {
            double D = 1.0;
            for (size_t j = 0; j < n; j++)
                x[j] = sup[idx[j]], D *= q[x[j]];
            mdsd_ot_plan_law(&pl, x, py);
            for (size_t j = 0; j < n; j++) {
                int first = 1;
                for (size_t l = 0; l < j; l++)
                    first &= x[l] != x[j];
                enumd[j] += first ? D * py[j] : 0.0;
            }
            size_t j = 0;
            while (j < n && ++idx[j] == ns)
                idx[j++] = 0;
            if (j == n)
                break;
        }
        for (size_t j = 0; j < n; j++)
            cr_assert(fabs(enumd[j] - per[j]) <= 1e-12, "t %u draft %zu: exact %.17g, "
                      "enumerated %.17g", t, j, per[j], enumd[j]);
        mdsd_ot_plan_free(&pl);
    }
    gsl_rng_free(r);
}

Test(ot, acceptance_equals_otm_on_toys)
{
    gsl_rng *r = mdsd_rng_alloc(37003);
    double p[6], q[6];
    for (unsigned t = 0; t < 120; t++) {
        size_t V = 2 + t % 5, n = 2 + t % 2;
        toy_pair(r, t, V, p, q);
        mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
        double a_ot, a_otm, per[4];
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OT, p, &s, NULL, &a_ot, per, &err), MDSD_OK,
                     "%s", err.msg);
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OTM, p, &s, NULL, &a_otm, per, &err),
                     MDSD_OK, "%s", err.msg);
        cr_assert(fabs(a_ot - a_otm) <= 1e-9, "t %u: ot %.17g, otm %.17g", t, a_ot, a_otm);
    }
    gsl_rng_free(r);
}

/* LLM vocabularies: the plan's acceptance against sort-and-scan (sort-free
 * and full order), every tier target met, and the law given random tuples
 * summing to at most 1. */
static void llm_vocabulary(size_t V, unsigned instances, uint64_t seed)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    double *z = malloc(V * sizeof *z), *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    mdsd_err err;
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(V, 8, &err);
    double worst = 0.0;
    for (unsigned t = 0; t < instances; t++) {
        size_t n = 2 + t % 7;
        test_large_pair(r, t % TEST_LARGE_PAIR_KINDS, V, z, p, q);
        mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
        mdsd_bound_result a = {0}, b = {0};
        mdsd_bound_opts full = {.full_sort = true};
        cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, ws, &a, &err), MDSD_OK, "%s",
                     err.msg);
        cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, &full, ws, &b, &err), MDSD_OK, "%s",
                     err.msg);
        mdsd_ot_plan pl;
        cr_assert_eq(mdsd_ot_plan_build(&pl, p, q, V, n, &err), MDSD_OK, "%s", err.msg);
        cr_assert(fabs(pl.alpha - a.alpha) <= 1e-9 && fabs(pl.alpha - b.alpha) <= 1e-9,
                  "V %zu n %zu kind %u: ot %.17g, sort-free %.17g, full order %.17g", V, n,
                  t % TEST_LARGE_PAIR_KINDS, pl.alpha, a.alpha, b.alpha);
        worst = fmax(worst, fabs(pl.alpha - b.alpha));
        /* the tiers, as every optimal plan has them: r <= p above the cut,
         * r >= p on it; what misses is rounding (masses down to 1e-300) */
        double over = 0.0, under = 0.0;
        for (size_t k = 0; k < pl.K; k++) {
            if (k >= pl.m)
                over += fmax(0.0, pl.r[k] - pl.p[k]);
            else
                under += fmax(0.0, pl.p[k] - pl.r[k]);
        }
        cr_assert(over <= 1e-13 && under <= 1e-13, "V %zu n %zu: r above p by %.3g off the "
                  "cut, below p by %.3g on it", V, n, over, under);
        mdsd_ot_plan_free(&pl);
    }
    cr_log_info("ot at V = %zu: %u instances, worst |alpha - alpha*| %.3g", V, instances, worst);
    mdsd_bound_workspace_free(ws);
    free(z), free(p), free(q);
    gsl_rng_free(r);
}

Test(ot, acceptance_is_alpha_star_at_32000) { llm_vocabulary(32000, 42, 37004); }
Test(ot, acceptance_is_alpha_star_at_152064) { llm_vocabulary(152064, 14, 37005); }

/* A wrong tier split (the two tokens at the cut swapped in the layout)
 * keeps the output law p, as any plan does, but no longer attains alpha*:
 * the sweep's proof needs the q/p order. */
Test(ot, planted_wrong_tier_split_lowers_the_acceptance_but_not_the_law)
{
    gsl_rng *r = mdsd_rng_alloc(37006);
    double p[6], q[6], out[6];
    unsigned lowered = 0, tried = 0;
    double worst = 0.0;
    for (unsigned t = 0; t < 300; t++) {
        size_t V = 3 + t % 4, n = 2 + t % 3;
        toy(r, 2 * t, V, p, q);
        mdsd_ot_plan good, bad;
        mdsd_err err;
        cr_assert_eq(mdsd_ot_plan_build(&good, p, q, V, n, &err), MDSD_OK, "%s", err.msg);
        cr_assert_eq(mdsd_ot_plan_build_planted(&bad, p, q, V, n, 1, &err), MDSD_OK, "%s",
                     err.msg);
        double accept;
        enumerate_law(&bad, q, out, &accept);
        for (size_t v = 0; v < V; v++)
            cr_assert(fabs(out[v] - p[v]) <= 1e-12, "planted split: law %.17g vs p %.17g",
                      out[v], p[v]);
        cr_assert(bad.alpha <= good.alpha + 1e-12);
        if (good.m > 0 && good.m < good.K) {
            tried++;
            lowered += bad.alpha < good.alpha - 1e-9;
            worst = fmax(worst, good.alpha - bad.alpha);
        }
        mdsd_ot_plan_free(&good);
        mdsd_ot_plan_free(&bad);
    }
    cr_log_info("planted splits: %u of %u lowered the acceptance (largest loss %.3g)", lowered,
                tried, worst);
    cr_assert_gt(tried, 100);
    cr_assert_gt(lowered, tried / 2, "only %u of %u planted splits lowered the acceptance",
                 lowered, tried);
    gsl_rng_free(r);
}

/* The sampler follows its own law given the drafts (a few fixed tuples,
 * chi-square over the output tokens). */
Test(ot, sampler_follows_the_law_given_the_drafts)
{
    gsl_rng *r = mdsd_rng_alloc(37007);
    double p[6], q[6], law[6];
    for (unsigned t = 0; t < 12; t++) {
        size_t V = 4 + t % 3, n = 2 + t % 3;
        toy_pair(r, t + 1, V, p, q);
        mdsd_ot_plan pl;
        mdsd_err err;
        cr_assert_eq(mdsd_ot_plan_build(&pl, p, q, V, n, &err), MDSD_OK, "%s", err.msg);
        int x[4];
        for (size_t j = 0; j < n; j++) { /* a tuple of tokens with q > 0 */
            int v;
            do
                v = (int)gsl_rng_uniform_int(r, V);
            while (!(q[v] > 0.0));
            x[j] = v;
        }
        mdsd_ot_plan_law_full(&pl, x, law);
        uint64_t count[6] = {0}, trials = 400000;
        gsl_rng *s = mdsd_rng_alloc(91 + t);
        for (uint64_t i = 0; i < trials; i++) {
            int w;
            count[mdsd_ot_plan_verify(&pl, x, s, &w)]++;
        }
        gsl_rng_free(s);
        double chi = 0.0;
        int dof = -1;
        for (size_t v = 0; v < V; v++) {
            double e = law[v] * (double)trials;
            if (e > 0.0)
                chi += ((double)count[v] - e) * ((double)count[v] - e) / e, dof++;
            else
                cr_assert_eq(count[v], 0, "token %zu has law 0 but was output", v);
        }
        double pv = dof > 0 ? gsl_cdf_chisq_Q(chi, dof) : 1.0;
        cr_assert_gt(pv, SIGNIFICANCE, "t %u: chi-square %.3g on %d dof", t, chi, dof);
        mdsd_ot_plan_free(&pl);
    }
    gsl_rng_free(r);
}

/* Chi-square of the output at V = 32,000 over the whole pipeline (the
 * scheme's sampler, then the plan), 10^6 draws; cells: the tokens in the
 * plan's layout order, then those with q = 0, cut where the expected count
 * reaches 2 % of the draws (about 50 cells, fixed by p and q alone). */
static double chi_square_32000(const mdsd_ot_plan *pl, const double *p, const double *q,
                               uint64_t trials, uint64_t seed)
{
    size_t V = pl->V;
    mdsd_scheme s = {MDSD_SCHEME_IID, pl->n, V, q, NULL};
    mdsd_err err;
    mdsd_sampler *sm = mdsd_sampler_alloc(&s, &err);
    cr_assert_not_null(sm, "%s", err.msg);
    uint64_t *count = calloc(V, sizeof *count);
    gsl_rng *g = mdsd_rng_alloc(seed);
    int x[8];
    for (uint64_t i = 0; i < trials; i++) {
        mdsd_sampler_draw(sm, g, x);
        int w;
        count[mdsd_ot_plan_verify(pl, x, g, &w)]++;
    }
    gsl_rng_free(g);
    mdsd_sampler_free(sm);
    double chi = 0.0, e = 0.0, o = 0.0;
    int cells = 0;
    for (size_t i = 0; i < V; i++) {
        size_t v = pl->tok[i];
        e += p[v] * (double)trials;
        o += (double)count[v];
        if (e >= 0.02 * (double)trials || i + 1 == V) {
            if (e > 0.0)
                chi += (o - e) * (o - e) / e, cells++;
            else
                cr_assert_eq(o, 0.0, "tokens of probability 0 were output");
            e = o = 0.0;
        }
    }
    free(count);
    return gsl_cdf_chisq_Q(chi, cells - 1);
}

Test(ot, output_is_p_at_32000_and_a_planted_one_percent_error_is_caught)
{
    gsl_rng *r = mdsd_rng_alloc(37008);
    size_t V = 32000, n = 4;
    double *z = malloc(V * sizeof *z), *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    /* an over-confident drafter (its logits 1.5 x the target's, plus noise):
     * the cut then holds the head tokens, p(H) about a half */
    for (size_t v = 0; v < V; v++)
        z[v] = 2.0 * gsl_ran_gaussian(r, 1.0);
    mdsd_err err;
    cr_assert_eq(mdsd_softmax(z, V, 1.0, p, "target", &err), MDSD_OK, "%s", err.msg);
    for (size_t v = 0; v < V; v++)
        z[v] = 1.5 * z[v] + 0.5 * gsl_ran_gaussian(r, 1.0);
    cr_assert_eq(mdsd_softmax(z, V, 1.0, q, "draft", &err), MDSD_OK, "%s", err.msg);
    mdsd_ot_plan pl;
    cr_assert_eq(mdsd_ot_plan_build(&pl, p, q, V, n, &err), MDSD_OK, "%s", err.msg);
    double pv = chi_square_32000(&pl, p, q, 1000000, 5), pH = 0.0;
    for (size_t k = 0; k < pl.m; k++)
        pH += pl.p[k];
    cr_log_info("ot at V = 32,000, n = 4, 10^6 draws: chi-square p = %.3g (cut at %zu of %zu "
                "bins, p(H) = %.3f)", pv, pl.m, pl.K, pH);
    cr_assert_gt(pv, SIGNIFICANCE);
    /* the same through the public verifier and its Monte Carlo check */
    mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_OT, p, &s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result mc = test_simulate(v, 1000000, 6);
    mdsd_gof gof = mdsd_mc_check_output(&mc, p);
    cr_assert_gt(gof.p_value, SIGNIFICANCE, "public ot: chi-square p = %g", gof.p_value);
    test_assert_within_5se(mc.alpha, pl.alpha, 1000000, "acceptance");
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
    /* planted: the saturated tier's inflows read 1 % high, so its tokens are
     * accepted 1 % too rarely (the residual is left as it was) */
    for (size_t k = 0; k < pl.m; k++)
        pl.r[k] *= 1.01;
    double pv_bad = chi_square_32000(&pl, p, q, 1000000, 5);
    cr_log_info("planted 1 %% error in the tier on the cut: chi-square p = %.3g", pv_bad);
    cr_assert_lt(pv_bad, SIGNIFICANCE, "the chi-square missed a 1 %% error (p = %g)", pv_bad);
    mdsd_ot_plan_free(&pl);
    free(z), free(p), free(q);
    gsl_rng_free(r);
}

Test(ot, greedy_and_hub_attain_alpha_star_and_output_p)
{
    gsl_rng *r = mdsd_rng_alloc(37009);
    double p[8], q[8];
    for (unsigned t = 0; t < 200; t++) {
        size_t V = 3 + t % 5;
        toy_pair(r, t, V, p, q);
        mdsd_scheme_kind kind = t % 2 ? MDSD_SCHEME_HUB : MDSD_SCHEME_GREEDY;
        mdsd_scheme s = {kind, kind == MDSD_SCHEME_HUB ? 2 : 2 + t % 3, V, q, NULL};
        if (mdsd_verifier_check(MDSD_VERIFIER_OT, &s, NULL) != MDSD_OK)
            continue;
        double alpha, per[4], total = 0.0, star = test_alpha_star(p, &s);
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OT, p, &s, NULL, &alpha, per, &err),
                     MDSD_OK, "%s", err.msg);
        cr_assert(fabs(alpha - star) <= 1e-12, "%s t %u: ot %.17g alpha* %.17g",
                  mdsd_scheme_name(kind), t, alpha, star);
        for (size_t j = 0; j < s.n; j++)
            total += per[j];
        cr_assert(fabs(total - alpha) <= 1e-12);
        /* the output law and per-draft rates from the law given each tuple */
        mdsd_joint D;
        cr_assert_eq(mdsd_scheme_joint(&s, 1u << 20, &D, &err), MDSD_OK, "%s", err.msg);
        mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_OT, p, &s, NULL, &err);
        cr_assert_not_null(v, "%s", err.msg);
        double acc = 0.0, enumd[4] = {0}, py[4];
        for (size_t i = 0; i < D.count; i++) {
            const int *x = D.tokens + i * s.n;
            cr_assert_eq(mdsd_verifier_law(v, x, py, &err), MDSD_OK);
            for (size_t j = 0; j < s.n; j++) {
                int first = 1;
                for (size_t l = 0; l < j; l++)
                    first &= x[l] != x[j];
                if (first)
                    acc += D.prob[i] * py[j], enumd[j] += D.prob[i] * py[j];
            }
        }
        cr_assert(fabs(acc - alpha) <= 1e-12, "%s t %u: law's acceptance %.17g vs %.17g",
                  mdsd_scheme_name(kind), t, acc, alpha);
        if (kind == MDSD_SCHEME_HUB)
            for (size_t j = 0; j < 2; j++)
                cr_assert(fabs(enumd[j] - per[j]) <= 1e-12, "hub t %u draft %zu: %.17g vs %.17g",
                          t, j, enumd[j], per[j]);
        mdsd_verifier_free(v);
        mdsd_joint_free(&D);
    }
    gsl_rng_free(r);
}

Test(ot, simulated_rates_match_the_exact_ones)
{
    static const double P5[5] = {0.30, 0.25, 0.20, 0.15, 0.10};
    static const double Q5[5] = {0.05, 0.10, 0.15, 0.30, 0.40};
    mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_GREEDY, MDSD_SCHEME_HUB};
    for (size_t k = 0; k < 3; k++) {
        mdsd_scheme s = {kinds[k], kinds[k] == MDSD_SCHEME_HUB ? 2 : 3, 5, Q5, NULL};
        double alpha, per[3];
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_OT, P5, &s, NULL, &alpha, per, &err),
                     MDSD_OK, "%s", err.msg);
        mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_OT, P5, &s, NULL, &err);
        cr_assert_not_null(v, "%s", err.msg);
        uint64_t trials = 400000;
        mdsd_mc_result mc = test_simulate(v, trials, 11 + k);
        mdsd_gof g = mdsd_mc_check_output(&mc, P5);
        cr_assert_gt(g.p_value, SIGNIFICANCE, "%s: output not p (p = %g)",
                     mdsd_scheme_name(kinds[k]), g.p_value);
        test_assert_within_5se(mc.alpha, alpha, trials, "acceptance");
        for (size_t j = 0; j < s.n; j++)
            test_assert_within_5se((double)mc.per_draft[j] / trials, per[j], trials, "per draft");
        mdsd_mc_result_free(&mc);
        mdsd_verifier_free(v);
    }
}

Test(ot, other_schemes_are_refused_by_name)
{
    static const double Q5[5] = {0.05, 0.10, 0.15, 0.30, 0.40};
    mdsd_scheme_kind kinds[] = {MDSD_SCHEME_WOR, MDSD_SCHEME_CPS, MDSD_SCHEME_MULTI};
    for (size_t k = 0; k < 3; k++) {
        mdsd_scheme s = {kinds[k], kinds[k] == MDSD_SCHEME_MULTI ? 1 : 2, 5, Q5, NULL};
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_check(MDSD_VERIFIER_OT, &s, &err), MDSD_EUNSUPPORTED);
        cr_assert(strstr(err.msg, "ot") && strstr(err.msg, mdsd_scheme_name(kinds[k])), "%s",
                  err.msg);
    }
}

/* ---- the jobs ------------------------------------------------------------ */

/* The column of `name` in a CSV header line (-1 if absent). */
static int csv_column(const char *header, const char *name)
{
    int col = 0;
    size_t len = strlen(name);
    for (const char *s = header; *s; col++) {
        const char *e = strpbrk(s, ",\n");
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == len && !strncmp(s, name, len))
            return col;
        if (!e || *e == '\n')
            break;
        s = e + 1;
    }
    return -1;
}

static double csv_field(const char *line, int col)
{
    for (int c = 0; c < col; c++)
        line = strchr(line, ',') + 1;
    return strtod(line, NULL);
}

Test(ot, table_row_equals_alpha_star_at_every_position)
{
    char *out = NULL, *csv = NULL;
    int rc = test_run_mdsd("table data/kjv-ngram.h5 --draft-model kn3 -t 0.7,0.05 -d 2,4 -s iid "
                           "-v ot -o /tmp/mdsd-ot-table.csv --per-position /tmp/mdsd-ot-pos.csv",
                           1, &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    cr_assert_eq(test_run_shell("cat /tmp/mdsd-ot-pos.csv", &csv), 0);
    char *nl = strchr(csv, '\n');
    cr_assert_not_null(nl);
    size_t rows = 0;
    double worst = 0.0;
    for (size_t n = 2; n <= 4; n += 2) {
        char star[64], rate[64];
        snprintf(star, sizeof star, "alpha_star_iid_n%zu", n);
        snprintf(rate, sizeof rate, "rate_ot_n%zu", n);
        int cs = csv_column(csv, star), cr = csv_column(csv, rate);
        cr_assert(cs >= 0 && cr >= 0, "columns %s, %s in %.200s", star, rate, csv);
        for (const char *line = nl + 1; *line; line = strchr(line, '\n') + 1) {
            double a = csv_field(line, cs), b = csv_field(line, cr);
            cr_assert(fabs(a - b) <= 1e-9, "row: alpha* %.17g, ot %.17g", a, b);
            worst = fmax(worst, fabs(a - b));
            rows++;
            if (!strchr(line, '\n'))
                break;
        }
    }
    cr_assert_gt(rows, 2000);
    cr_log_info("mdsd table -v ot: %zu position values, worst |ot - alpha*| = %.3g", rows, worst);
    free(csv);
    test_run_shell("rm -f /tmp/mdsd-ot-table.csv /tmp/mdsd-ot-pos.csv*", &csv);
    free(csv);
}

/* Block efficiency on a Markov toy: at L = 1 every optimal token-level plan
 * gives 1 + alpha*, so ot, otm and optimal-token agree; deeper, ot is a
 * token-level verifier and so at most optimal-token. */
static double block_exact(const char *args)
{
    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "block --markov papers/block/toys/%s --exact --json", args);
    int rc = test_run_mdsd(cmd, 0, &out);
    cr_assert_eq(rc, 0, "mdsd %s: %s", cmd, out);
    const char *k = strstr(out, "\"block_efficiency\":");
    cr_assert_not_null(k, "%s", out);
    double v = strtod(k + 19, NULL);
    free(out);
    return v;
}

Test(ot, block_on_markov_toys_against_otm_and_optimal_token)
{
    static const char *shapes[] = {"toy4.txt --sequences 2 --depth 1", "toy5.txt --sequences 3 --depth 1",
                                   "toy4.txt --tree 3", "toy3.txt --sequences 2 --depth 3",
                                   "toy5.txt --tree 2,2", "toy4.txt --tree 2,2 --scheme greedy",
                                   "sun.txt --sequences 2 --depth 2"};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char a[128];
        snprintf(a, sizeof a, "%s --verifier ot", shapes[i]);
        double ot = block_exact(a);
        snprintf(a, sizeof a, "%s --verifier optimal-token", shapes[i]);
        double opt = block_exact(a);
        cr_assert(ot <= opt + 1e-9, "%s: ot %.12g above optimal-token %.12g", shapes[i], ot, opt);
        if (strstr(shapes[i], "depth 1") || (strstr(shapes[i], "--tree") && !strchr(shapes[i], ','))) {
            snprintf(a, sizeof a, "%s --verifier otm", shapes[i]);
            double otm = block_exact(a);
            cr_assert(fabs(ot - otm) <= 1e-9 && fabs(ot - opt) <= 1e-9,
                      "%s (one step): ot %.12g, otm %.12g, optimal-token %.12g", shapes[i], ot, otm,
                      opt);
        }
    }
}

Test(ot, block_on_the_shipped_tree_dump_reports_ot)
{
    char *out = NULL;
    int rc = test_run_mdsd("block data/kjv-trees.h5 --verifiers ot,kseq --sequences 4 --depth 4",
                           1, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "| ot |"), "%s", out);
    free(out);
}
