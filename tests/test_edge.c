/* test_edge.c - the numerical edge cases of LLM distributions: low
 * temperature with wide logit gaps (masses that are subnormal or round to
 * zero), near-one-hot and exactly tied distributions, zeros. Every fast route
 * against brute force (1e-9) and the reduced LP (1e-7), every verifier's exact
 * rate finite and within [0, alpha* of its scheme]; and `mdsd bound --method
 * all` fails when its routes disagree (issue: no silent wrong answer). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "testutil.h"

/* ---- the reported instances ------------------------------------------------ */

/* Greedy and hub closed forms divided by q(T^c), subnormal here: sort printed
 * 1 against brute = LPs = 0.8 (greedy) and 0.5 (hub), and spechub's exact
 * rate was NaN, all with exit status 0. */
Test(edge, reported_subnormal_leftover_instances)
{
    static const struct {
        const char *args;
        const char *want;
    } cases[] = {
        {"bound -p 0,0,0,0,0 -q 0,-1,-2,-36.2,-inf --logits -T 0.05 -n 4 --scheme greedy "
         "--method all --json", "\"max_disagreement\":0,"},
        {"bound -p 0,0,0,0,0 -q 0,-1,-2,-36.2,-inf --logits -T 0.05 -n 4 --scheme greedy "
         "--method sort --json", "\"alpha\":0.80000000000000004"},
        {"bound -p 0,0,0,0 -q 0,-36.2,-inf,-inf --logits -T 0.05 -n 2 --scheme hub "
         "--method all --json", "\"max_disagreement\":0,"},
        {"accept --verifier spechub --exact -p 0,0,0,0 -q 0,-36.2,-inf,-inf --logits -T 0.05 "
         "-n 2 --json", "\"alpha\":0.5,"},
        {"accept --verifier greedy --exact -p 0,0,0,0,0 -q 0,-1,-2,-36.2,-inf --logits -T 0.05 "
         "-n 4 --json", "\"alpha\":0.80000000000000004"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL;
        int rc = test_run_mdsd(cases[i].args, 1, &out);
        cr_assert_eq(rc, 0, "%s: rc %d: %s", cases[i].args, rc, out);
        cr_assert(strstr(out, cases[i].want), "%s: want %s in %s", cases[i].args, cases[i].want,
                  out);
        cr_assert(!strstr(out, "nan"), "%s: %s", cases[i].args, out);
        free(out);
    }
}

/* ---- hard random instances ------------------------------------------------- */

static const mdsd_scheme_kind sort_kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR,
                                              MDSD_SCHEME_GREEDY, MDSD_SCHEME_HUB,
                                              MDSD_SCHEME_CPS};

Test(edge, fast_routes_and_verifiers_on_hard_instances, .timeout = 300)
{
    gsl_rng *r = mdsd_rng_alloc(120001);
    size_t checked = 0, verifier_rates = 0, refused = 0;
    for (unsigned inst = 0; inst < 400; inst++) {
        size_t V = 3 + inst % 5;
        double p[16], q[16];
        test_hard_pair(r, inst, V, p, q);
        for (size_t k = 0; k < sizeof sort_kinds / sizeof *sort_kinds; k++) {
            size_t n = sort_kinds[k] == MDSD_SCHEME_HUB ? 2 : 2 + inst % 3;
            mdsd_scheme s = {sort_kinds[k], n, V, q, NULL};
            if (mdsd_scheme_check(&s, NULL) != MDSD_OK)
                continue; /* e.g. wor with n > |supp q| */
            double brute = test_alpha_star(p, &s);
            mdsd_bound_result fast = {0}, lp = {0};
            mdsd_err err;
            int frc = mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, &fast, &err);
            if (frc == MDSD_EUNSUPPORTED && strstr(err.msg, "too small")) {
                refused++; /* a refusal that names the problem is not a wrong answer */
                fast.alpha = brute;
            } else {
                cr_assert_eq(frc, MDSD_OK, "%s", err.msg);
            }
            if (!(fabs(fast.alpha - brute) <= 1e-9)) {
                for (size_t x = 0; x < V; x++)
                    fprintf(stderr, "p[%zu] = %a q[%zu] = %a\n", x, p[x], x, q[x]);
            }
            cr_assert(fabs(fast.alpha - brute) <= 1e-9,
                      "inst %u kind %u %s n=%zu V=%zu: sort %.17g brute %.17g", inst, inst % 4,
                      mdsd_scheme_name(s.kind), n, V, fast.alpha, brute);
            int lrc = mdsd_bound_alpha(p, &s, MDSD_BOUND_LP_REDUCED, NULL, NULL, &lp, &err);
            cr_assert_eq(lrc, MDSD_OK, "inst %u %s n=%zu V=%zu q=%a %a %a %a %a: %s", inst,
                         mdsd_scheme_name(s.kind), n, V, q[0], q[1], q[2], q[3], q[4], err.msg);
            cr_assert(fabs(lp.alpha - brute) <= 1e-7, "inst %u %s: lp-reduced %.17g brute %.17g",
                      inst, mdsd_scheme_name(s.kind), lp.alpha, brute);
            checked++;
            for (int v = 0; v < MDSD_VERIFIER_KINDS; v++) {
                mdsd_verifier_kind kind = (mdsd_verifier_kind)v;
                if (kind == MDSD_VERIFIER_RRS_SKIPDUP || kind == MDSD_VERIFIER_SPECHUB_HUBACCEPT ||
                    kind == MDSD_VERIFIER_RRSW_F32)
                    continue; /* audit variants: invalid by design (tests/test_variants.c) */
                mdsd_scheme sv = s;
                if (kind == MDSD_VERIFIER_SD)
                    sv.n = 1;
                if (mdsd_verifier_scheme(kind) != s.kind ||
                    mdsd_verifier_check(kind, &sv, NULL) != MDSD_OK)
                    continue;
                double rate, per[8];
                int rc = mdsd_verifier_exact(kind, p, &sv, NULL, &rate, per, NULL);
                if (rc == MDSD_EUNSUPPORTED)
                    continue;
                cr_assert_eq(rc, MDSD_OK, "%s on inst %u", mdsd_verifier_name(kind), inst);
                double bound = kind == MDSD_VERIFIER_SD ? test_alpha_star(p, &sv) : brute;
                cr_assert(isfinite(rate) && rate >= 0.0 && rate <= bound + 1e-9,
                          "inst %u kind %u: %s on %s n=%zu V=%zu: rate %.17g, alpha* %.17g", inst,
                          inst % 4, mdsd_verifier_name(kind), mdsd_scheme_name(sv.kind), sv.n, V,
                          rate, bound);
                verifier_rates++;
            }
        }
    }
    cr_assert(checked > 1200 && verifier_rates > 1200 && refused * 20 < checked,
              "%zu routes, %zu rates, %zu refused", checked, verifier_rates, refused);
    gsl_rng_free(r);
}

/* ---- a cross-check that fails must fail the command ------------------------- */

Test(edge, bound_all_exits_1_when_routes_disagree)
{
    static const struct {
        const char *plant;
        int rc;
    } cases[] = {
        {"sort:2e-9", 1},    {"sort:5e-10", 0},  {"lp-full:5e-8", 0},
        {"lp-full:2e-7", 1}, {"brute:nan", 1},   {"k2:-3e-9", 1},
        {"maxflow:2e-9", 1}, {"maxflow:-5e-10", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[512], *out = NULL;
        snprintf(cmd, sizeof cmd, "MDSD_TEST_BOUND_OFFSET=%s %s bound -p 0.5,0.3,0.2 "
                 "-q 0.2,0.3,0.5 -n 2 -s iid --method all", cases[i].plant, test_mdsd_bin());
        int rc = test_run_shell(cmd, &out);
        cr_assert_eq(rc, cases[i].rc, "%s: rc %d: %s", cases[i].plant, rc, out);
        if (cases[i].rc) {
            char method[16];
            snprintf(method, sizeof method, "%.*s", (int)strcspn(cases[i].plant, ":"),
                     cases[i].plant);
            cr_assert(strstr(out, "routes disagree") && strstr(out, method), "%s: %s",
                      cases[i].plant, out);
        }
        free(out);
    }
}

/* ---- the sort-free route to alpha*_iid ----------------------------------------- */

/* 1 + min over all 2^V subsets of p(H) - q(H)^n by a Gray code (no order, no
 * joint): the enumeration the sort-free route is checked against. */
static double iid_enumerated(const double *p, const double *q, size_t V, size_t n)
{
    double best = 0.0, P = 0.0, S = 0.0;
    unsigned char in[24] = {0};
    for (size_t g = 1; g < ((size_t)1 << V); g++) {
        size_t x = (size_t)__builtin_ctzl(g);
        double sign = in[x] ? -1.0 : 1.0;
        in[x] ^= 1;
        P += sign * p[x], S += sign * q[x];
        if (g % 64 == 0) { /* resum now and then: no drift from the +/- updates */
            P = S = 0.0;
            for (size_t y = 0; y < V; y++)
                if (in[y])
                    P += p[y], S += q[y];
        }
        double Q = S <= 0.0 ? 0.0 : S >= 1.0 ? 1.0 : pow(S, (double)n);
        if (P - Q < best)
            best = P - Q;
    }
    return 1.0 + best;
}

/* 1 + min over all 2^V subsets of p(H) - e_n(H) / e_n(all) (cps), each
 * subset's polynomials from scratch in long double. V <= 14. */
static double cps_enumerated(const double *p, const double *q, size_t V, size_t n)
{
    long double all[6] = {1.0L};
    for (size_t x = 0; x < V; x++)
        for (size_t j = n; j > 0; j--)
            all[j] += (long double)q[x] * all[j - 1];
    double best = 0.0;
    for (size_t mask = 1; mask < ((size_t)1 << V); mask++) {
        long double e[6] = {1.0L}, P = 0.0L;
        for (size_t x = 0; x < V; x++)
            if (mask >> x & 1) {
                P += p[x];
                for (size_t j = n; j > 0; j--)
                    e[j] += (long double)q[x] * e[j - 1];
            }
        double f = (double)(P - e[n] / all[n]);
        if (f < best)
            best = f;
    }
    return 1.0 + best;
}

/* p(H) - q(H)^n of the returned subset, summed directly. */
static double iid_value_of(const double *p, const double *q, size_t V, size_t n,
                           const unsigned char *H)
{
    double P = 0.0, S = 0.0;
    for (size_t x = 0; x < V; x++)
        if (H[x])
            P += p[x], S += q[x];
    return P - pow(S > 1.0 ? 1.0 : S, (double)n);
}

Test(edge, sort_free_alpha_matches_full_sort_and_enumeration, .timeout = 600)
{
    gsl_rng *r = mdsd_rng_alloc(190002);
    mdsd_err err;
    /* one workspace for every instance: the bucket table is reused */
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(5000, 5, &err);
    cr_assert(ws);
    size_t small = 0, large = 0, below_one = 0, cps_checked = 0, cps_large = 0;
    double p[24], q[24];
    unsigned char H[5000];
    for (unsigned inst = 0; inst < 3000; inst++) {
        size_t V = 2 + inst % 19, n = 1 + inst / 19 % 5;
        if (inst % 2) {
            V = V < 16 ? V : 16; /* test_hard_pair's limit */
            test_hard_pair(r, inst / 2, V, p, q);
        } else
            toy_pair(r, inst / 2, V, p, q);
        mdsd_scheme_kind kinds[2] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR};
        for (int k = 0; k < (n == 1 ? 2 : 1); k++) {
            mdsd_scheme s = {kinds[k], n, V, q, NULL};
            if (mdsd_scheme_check(&s, NULL) != MDSD_OK)
                continue;
            mdsd_bound_opts full = {.full_sort = true};
            mdsd_bound_result a = {.subset = H}, b = {0};
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, ws, &a, &err), MDSD_OK,
                         "%s", err.msg);
            double f_sub = iid_value_of(p, q, V, n, H);
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, &full, ws, &b, &err), MDSD_OK,
                         "%s", err.msg);
            double e = iid_enumerated(p, q, V, n);
            cr_assert(fabs(a.alpha - b.alpha) <= 1e-12 && fabs(a.alpha - e) <= 1e-12 &&
                          fabs(a.alpha - fmax(0.0, fmin(1.0, 1.0 + f_sub))) <= 1e-12,
                      "inst %u V=%zu n=%zu %s: sort-free %.17g full sort %.17g enumeration "
                      "%.17g its subset %.17g", inst, V, n, mdsd_scheme_name(s.kind), a.alpha,
                      b.alpha, e, 1.0 + f_sub);
            small++;
        }
        mdsd_scheme cps = {MDSD_SCHEME_CPS, n, V, q, NULL};
        if (V <= 12 && mdsd_scheme_check(&cps, NULL) == MDSD_OK) {
            mdsd_bound_opts full = {.full_sort = true};
            mdsd_bound_result a = {.subset = H}, b = {0};
            int ra = mdsd_bound_alpha(p, &cps, MDSD_BOUND_SORT, NULL, ws, &a, &err);
            int rb = mdsd_bound_alpha(p, &cps, MDSD_BOUND_SORT, &full, ws, &b, &err);
            cr_assert_eq(ra, rb, "inst %u cps: %d vs %d", inst, ra, rb);
            if (ra == MDSD_OK) {
                double e = cps_enumerated(p, q, V, n);
                cr_assert(fabs(a.alpha - b.alpha) <= 1e-12 && fabs(a.alpha - e) <= 1e-12,
                          "inst %u V=%zu n=%zu cps: sort-free %.17g full sort %.17g enumeration "
                          "%.17g", inst, V, n, a.alpha, b.alpha, e);
                cps_checked++;
            }
        }
    }
    double *z = malloc(5000 * sizeof *z), *pl = malloc(5000 * sizeof *pl),
           *ql = malloc(5000 * sizeof *ql);
    for (unsigned inst = 0; inst < 240; inst++) {
        size_t V = inst % 3 == 0 ? 5000 : 20 + gsl_rng_uniform_int(r, 4980);
        size_t n = 1 + inst % 5;
        test_large_pair(r, inst / 5, V, z, pl, ql);
        mdsd_scheme cps = {MDSD_SCHEME_CPS, n, V, ql, NULL};
        if (mdsd_scheme_check(&cps, NULL) == MDSD_OK) {
            mdsd_bound_opts fo = {.full_sort = true};
            mdsd_bound_result a = {0}, b = {0};
            int ra = mdsd_bound_alpha(pl, &cps, MDSD_BOUND_SORT, NULL, ws, &a, &err);
            int rb = mdsd_bound_alpha(pl, &cps, MDSD_BOUND_SORT, &fo, ws, &b, &err);
            cr_assert(ra == rb && (ra != MDSD_OK || fabs(a.alpha - b.alpha) <= 1e-12),
                      "large inst %u kind %u V=%zu n=%zu cps: sort-free %d %.17g full sort %d "
                      "%.17g", inst, inst / 5 % 6, V, n, ra, a.alpha, rb, b.alpha);
            cps_large += ra == MDSD_OK;
        }
        mdsd_scheme s = {MDSD_SCHEME_IID, n, V, ql, NULL};
        mdsd_bound_opts full = {.full_sort = true};
        mdsd_bound_result a = {.subset = H}, b = {0};
        cr_assert_eq(mdsd_bound_alpha(pl, &s, MDSD_BOUND_SORT, NULL, ws, &a, &err), MDSD_OK,
                     "%s", err.msg);
        double f_sub = 0.0, Pm = 0.0, Sm = 0.0, Pc = 0.0, Sc = 0.0;
        for (size_t x = 0; x < V; x++)
            if (H[x]) {
                double t = Pm + pl[x];
                Pc += fabs(Pm) >= pl[x] ? (Pm - t) + pl[x] : (pl[x] - t) + Pm;
                Pm = t;
                t = Sm + ql[x];
                Sc += fabs(Sm) >= ql[x] ? (Sm - t) + ql[x] : (ql[x] - t) + Sm;
                Sm = t;
            }
        f_sub = (Pm + Pc) - pow(fmin(1.0, Sm + Sc), (double)n);
        cr_assert_eq(mdsd_bound_alpha(pl, &s, MDSD_BOUND_SORT, &full, ws, &b, &err), MDSD_OK,
                     "%s", err.msg);
        cr_assert(fabs(a.alpha - b.alpha) <= 1e-12 &&
                      fabs(a.alpha - fmax(0.0, fmin(1.0, 1.0 + f_sub))) <= 1e-12,
                  "large inst %u kind %u V=%zu n=%zu: sort-free %.17g full sort %.17g its subset "
                  "%.17g", inst, inst / 5 % 6, V, n, a.alpha, b.alpha, 1.0 + f_sub);
        below_one += a.alpha < 1.0;
        large++;
    }
    cr_assert(small > 3000 && large == 240 && below_one > 100 && cps_checked > 1000 &&
                  cps_large > 150,
              "%zu %zu %zu %zu %zu", small, large, below_one, cps_checked, cps_large);
    free(z), free(pl), free(ql);
    mdsd_bound_workspace_free(ws);
    gsl_rng_free(r);
}
