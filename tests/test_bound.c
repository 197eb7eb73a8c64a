/* alpha* by every route (bound.h): sort-and-scan, brute force, k2 and the LPs
 * agree with a slow reference (all 2^V subsets, Q(H) by mdsd_joint_Q of the
 * enumerated D) on random toy instances, max-flow against enumeration and the
 * LPs. Closed forms, the q/p order and bad input: test_bound_forms.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "maxflow.h"
#include "testutil.h"

/* No .timeout on these tests: with criterion 2.4.1, timed tests running in
 * parallel workers leak 48 bytes in the runner under LeakSanitizer. */
#define TOL 1e-9
#define LP_TOL 1e-7

/* The slow reference: 1 + min over every subset H of p(H) - Q(H), with Q(H)
 * summed over the enumerated tuples inside H (each tuple's token set as a
 * bitmask; independent of subset.c's aggregation and zeta transform). */
static double reference_alpha(const double *p, size_t V, const mdsd_joint *D)
{
    unsigned *set = malloc((D->count ? D->count : 1) * sizeof *set);
    for (size_t t = 0; t < D->count; t++) {
        set[t] = 0;
        for (size_t j = 0; j < D->n; j++)
            set[t] |= 1u << D->tokens[t * D->n + j];
    }
    double best = 0.0;
    for (unsigned mask = 1; mask < (1u << V); mask++) {
        double pH = 0.0, Q = 0.0;
        for (size_t v = 0; v < V; v++)
            if (mask >> v & 1)
                pH += p[v];
        for (size_t t = 0; t < D->count; t++)
            if (!(set[t] & ~mask))
                Q += D->prob[t];
        if (pH - Q < best)
            best = pH - Q;
    }
    free(set);
    return 1.0 + best;
}

/* p(H) - Q(H) of a returned subset, by enumeration. */
static double subset_value(const double *p, size_t V, const mdsd_joint *D, const unsigned char *H)
{
    double pH = 0.0;
    for (size_t v = 0; v < V; v++)
        if (H[v])
            pH += p[v];
    return pH - mdsd_joint_Q(D, H);
}

static void random_custom(gsl_rng *r, size_t V, size_t n, mdsd_joint *D)
{
    size_t count = 1 + gsl_rng_uniform_int(r, 10);
    D->n = n;
    D->count = count;
    D->tokens = malloc(count * n * sizeof *D->tokens);
    D->prob = malloc(count * sizeof *D->prob);
    toy_distribution(r, TOY_DIRICHLET, count, D->prob);
    for (size_t i = 0; i < count * n; i++)
        D->tokens[i] = (int)gsl_rng_uniform_int(r, V);
    cr_assert_eq(mdsd_joint_validate(D, V, NULL), MDSD_OK);
    cr_assert_eq(mdsd_joint_sort(D, NULL), MDSD_OK);
}

/* Every applicable method against the reference on >= 1,000 instances:
 * V 2..8, n 1..5 (hub: 2), toy_pair's families (Dirichlet, softmax with
 * temperature, zeros in p and q, p = q, one-hot q, disjoint supports). */
Test(bound, every_method_agrees_with_subset_enumeration)
{
    gsl_rng *r = mdsd_rng_alloc(2024);
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(8, 5, NULL);
    unsigned per_kind[MDSD_SCHEME_COUNT] = {0}, lp_checked = 0, done = 0;
    double worst = 0.0, worst_lp = 0.0;
    for (unsigned i = 0; done < 1050; i++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 7), n = 1 + gsl_rng_uniform_int(r, 5);
        mdsd_scheme_kind kind = (mdsd_scheme_kind)(i % MDSD_SCHEME_COUNT);
        if (kind == MDSD_SCHEME_HUB)
            n = 2;
        if (kind == MDSD_SCHEME_MULTI && n > 3)
            n = 3;
        double p[8], q[5 * 8];
        toy_pair(r, i / MDSD_SCHEME_COUNT, V, p, q);
        for (size_t j = 1; kind == MDSD_SCHEME_MULTI && j < n; j++)
            toy_distribution(r, (toy_family)(j % TOY_FAMILY_COUNT), V, q + j * V);
        mdsd_joint custom = {0};
        mdsd_scheme s = {kind, n, V, q, NULL};
        if (kind == MDSD_SCHEME_CUSTOM) {
            random_custom(r, V, n, &custom);
            s.custom = &custom;
        }
        if (mdsd_scheme_check(&s, NULL) != MDSD_OK)
            continue;
        mdsd_joint D;
        cr_assert_eq(mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &D, NULL), MDSD_OK);
        double ref = reference_alpha(p, V, &D);
        for (int m = MDSD_BOUND_AUTO; m < MDSD_BOUND_ALL; m++) {
            if (!mdsd_bound_applies((mdsd_bound_method)m, &s))
                continue;
            bool lp = m == MDSD_BOUND_LP_FULL || m == MDSD_BOUND_LP_REDUCED;
            if (lp && (i % 4 != 0 || V * D.count > 6000))
                continue; /* keep the suite fast; test_lp.c covers the LPs at length */
            unsigned char H[8];
            mdsd_bound_result res;
            double a = test_bound_alpha(p, &s, (mdsd_bound_method)m, ws, H, &res);
            double tol = lp ? LP_TOL : TOL;
            cr_assert(fabs(a - ref) <= tol,
                      "instance %u, %s, V = %zu, n = %zu, method %s: %.15g, reference %.15g", i,
                      mdsd_scheme_name(kind), V, n, mdsd_bound_method_name(m), a, ref);
            if (res.has_subset)
                cr_assert(fabs(subset_value(p, V, &D, H) - (a - 1.0)) <= TOL,
                          "instance %u, %s, method %s: the returned H does not attain alpha*", i,
                          mdsd_scheme_name(kind), mdsd_bound_method_name(m));
            if (lp) {
                worst_lp = fmax(worst_lp, fabs(a - ref));
                lp_checked++;
            } else {
                worst = fmax(worst, fabs(a - ref));
            }
        }
        per_kind[kind]++;
        done++;
        mdsd_joint_free(&D);
        mdsd_joint_free(&custom);
    }
    for (int k = 0; k < MDSD_SCHEME_COUNT; k++)
        cr_assert_geq(per_kind[k], 100, "scheme %s: only %u instances", mdsd_scheme_name(k),
                      per_kind[k]);
    cr_assert_geq(lp_checked, 250);
    cr_log_info("alpha*: %u instances, worst |method - reference| %.3g (sort, brute, k2), "
                "%.3g (LPs, %u solves)", done, worst, worst_lp, lp_checked);
    mdsd_bound_workspace_free(ws);
    gsl_rng_free(r);
}

/* wor for n = 2 (closed form) to 6 (quadrature): the sort-and-scan against
 * enumeration, including draft laws with a nearly exhausted remaining mass
 * (q with entries ~1e-12). */
Test(bound, wor_sort_is_exact_up_to_six_drafts)
{
    gsl_rng *r = mdsd_rng_alloc(77);
    double worst = 0.0;
    unsigned done = 0;
    for (unsigned i = 0; done < 300; i++) {
        size_t V = 6 + gsl_rng_uniform_int(r, 3), n = 2 + gsl_rng_uniform_int(r, 5);
        double p[8], q[8];
        toy_pair(r, i, V, p, q);
        if (i % 3 == 0) { /* a concentrated draft: two tokens hold all but ~1e-12 */
            for (size_t v = 0; v < V; v++)
                q[v] = 1e-12 * (1.0 + (double)v);
            q[0] = 0.6;
            q[1] = 0.4;
            mdsd_probs_validate(q, V, "q", NULL);
        }
        mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
        if (mdsd_scheme_check(&s, NULL) != MDSD_OK)
            continue;
        mdsd_joint D;
        cr_assert_eq(mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &D, NULL), MDSD_OK);
        double ref = reference_alpha(p, V, &D), a = test_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, NULL);
        cr_assert(fabs(a - ref) <= TOL, "wor V = %zu, n = %zu: sort %.15g, reference %.15g", V, n,
                  a, ref);
        /* Q(H) itself, for every subset. */
        for (unsigned long mask = 0; mask < (1ul << V); mask += 3 + (mask % 11)) {
            unsigned char H[8];
            for (size_t v = 0; v < V; v++)
                H[v] = mask >> v & 1;
            double Q;
            cr_assert_eq(mdsd_wor_Q(q, V, n, H, &Q, NULL), MDSD_OK);
            worst = fmax(worst, fabs(Q - mdsd_joint_Q(&D, H)));
        }
        mdsd_joint_free(&D);
        done++;
    }
    cr_assert_leq(worst, 1e-12);
    cr_log_info("wor Q(H) by quadrature vs enumeration, n <= 6: worst error %.3g", worst);
    gsl_rng_free(r);
}

/* LLM-like logits. */
static void llm_pair(gsl_rng *r, size_t V, int family, double T, double *p, double *q)
{
    double *z = malloc(V * sizeof *z), *e = malloc(V * sizeof *e);
    for (size_t x = 0; x < V; x++) {
        z[x] = family == 0 ? gsl_ran_gaussian(r, 2.5)
             : family == 1 ? -1.2 * log(1.0 + (double)x) + gsl_ran_gaussian(r, 0.5)
             : family == 2 ? gsl_ran_gaussian(r, 1.0) + (x == 0 ? 22.0 : x == 1 ? 18.0 : 0.0)
                           : gsl_ran_gaussian(r, 0.3) + (x == 0 ? 3.0 : 0.0); /* flat tail */
        e[x] = z[x] + gsl_ran_gaussian(r, 1.0);
    }
    mdsd_softmax(z, V, T, p, "p", NULL);
    mdsd_softmax(e, V, T, q, "q", NULL);
    free(z), free(e);
}

/* ---- maxflow: the reduced LP as a maximum flow (maxflow.h) ---------------------- */

/* A random custom law whose tuple masses come from a hard pair (subnormal,
 * near-one-hot, tied, zero masses): count <= 16 tuples over V tokens. */
static void hard_custom(gsl_rng *r, unsigned kind, size_t V, size_t n, mdsd_joint *D)
{
    size_t count = 1 + gsl_rng_uniform_int(r, 16);
    double mass[16], unused[16];
    test_hard_pair(r, kind, count, unused, mass);
    D->n = n;
    D->count = count;
    D->tokens = malloc(count * n * sizeof *D->tokens);
    D->prob = malloc(count * sizeof *D->prob);
    memcpy(D->prob, mass, count * sizeof *D->prob);
    for (size_t i = 0; i < count * n; i++)
        D->tokens[i] = (int)gsl_rng_uniform_int(r, V);
    cr_assert_eq(mdsd_joint_validate(D, V, NULL), MDSD_OK);
}

/* maxflow against enumeration over all 2^V subsets (1e-9) and the reduced
 * LP (1e-7) on random toys of every scheme - custom and multi-drafter, and
 * iid / wor / greedy / hub / cps through their enumerated set law - half of
 * them the trust issue's hard pairs (T <= 0.05 with wide logit gaps and
 * subnormal masses, near-one-hot, exact ties, zeros). The returned H must
 * attain alpha*, and the certificate must close to 1e-11. */
Test(bound, maxflow_matches_enumeration_and_lp_on_random_and_hard_toys)
{
    gsl_rng *r = mdsd_rng_alloc(1919);
    static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_CUSTOM, MDSD_SCHEME_MULTI,
                                             MDSD_SCHEME_IID,    MDSD_SCHEME_WOR,
                                             MDSD_SCHEME_CUSTOM, MDSD_SCHEME_MULTI,
                                             MDSD_SCHEME_GREEDY, MDSD_SCHEME_HUB,
                                             MDSD_SCHEME_CPS};
    enum { KINDS = sizeof kinds / sizeof *kinds };
    unsigned per_kind[MDSD_SCHEME_COUNT] = {0}, hard = 0, lp_checked = 0, done = 0;
    double worst = 0.0, worst_lp = 0.0, worst_gap = 0.0;
    for (unsigned i = 0; done < 2000; i++) {
        mdsd_scheme_kind kind = kinds[i % KINDS];
        size_t V = 2 + gsl_rng_uniform_int(r, 9), n = 1 + gsl_rng_uniform_int(r, 4);
        if (kind == MDSD_SCHEME_HUB)
            n = 2;
        while (n > 1 && pow((double)V, (double)n) > 4096.0)
            n--;
        bool is_hard = (i / KINDS) % 2 == 0;
        double p[16], q[4 * 16], unused[16];
        if (is_hard)
            test_hard_pair(r, i / (2 * KINDS), V, p, q);
        else
            toy_pair(r, i / (2 * KINDS), V, p, q);
        for (size_t j = 1; kind == MDSD_SCHEME_MULTI && j < n; j++) {
            if (is_hard)
                test_hard_pair(r, (unsigned)gsl_rng_uniform_int(r, TEST_HARD_PAIR_KINDS), V, unused,
                              q + j * V);
            else
                toy_distribution(r, (toy_family)gsl_rng_uniform_int(r, TOY_FAMILY_COUNT), V,
                                 q + j * V);
        }
        mdsd_joint custom = {0};
        mdsd_scheme s = {kind, n, V, q, NULL};
        if (kind == MDSD_SCHEME_CUSTOM) {
            if (is_hard)
                hard_custom(r, i / (2 * KINDS), V, n, &custom);
            else
                random_custom(r, V, n, &custom);
            s.custom = &custom;
        }
        if (mdsd_scheme_check(&s, NULL) != MDSD_OK) {
            mdsd_joint_free(&custom);
            continue;
        }
        mdsd_joint D;
        cr_assert_eq(mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &D, NULL), MDSD_OK);
        double ref = reference_alpha(p, V, &D);
        unsigned char H[16];
        mdsd_bound_result res;
        double a = test_bound_alpha(p, &s, MDSD_BOUND_MAXFLOW, NULL, H, &res);
        cr_assert(fabs(a - ref) <= TOL, "instance %u (%s), %s, V = %zu, n = %zu: maxflow %.17g, "
                  "enumeration %.17g", i, is_hard ? "hard" : "toy", mdsd_scheme_name(kind), V, n,
                  a, ref);
        cr_assert(res.has_subset && fabs(subset_value(p, V, &D, H) - (a - 1.0)) <= TOL,
                  "instance %u, %s: the returned H does not attain alpha*", i,
                  mdsd_scheme_name(kind));
        cr_assert(fabs(res.maxflow_gap) <= 1e-11, "instance %u: certificate gap %.3g", i,
                  res.maxflow_gap);
        worst = fmax(worst, fabs(a - ref));
        worst_gap = fmax(worst_gap, fabs(res.maxflow_gap));
        if (i % 3 == 0 && V * D.count <= 20000) {
            mdsd_bound_result lr = {0};
            mdsd_err err;
            mdsd_err_clear(&err);
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_LP_REDUCED, NULL, NULL, &lr, &err),
                         MDSD_OK, "instance %u: lp-reduced: %s", i, err.msg);
            cr_assert(fabs(a - lr.alpha) <= LP_TOL, "instance %u, %s: maxflow %.17g, lp-reduced "
                      "%.17g", i, mdsd_scheme_name(kind), a, lr.alpha);
            worst_lp = fmax(worst_lp, fabs(a - lr.alpha));
            lp_checked++;
        }
        per_kind[kind]++;
        hard += is_hard;
        done++;
        mdsd_joint_free(&D);
        mdsd_joint_free(&custom);
    }
    for (size_t k = 0; k < KINDS; k++)
        cr_assert_geq(per_kind[kinds[k]], 150, "%s: only %u instances",
                      mdsd_scheme_name(kinds[k]), per_kind[kinds[k]]);
    cr_assert_geq(hard, 900);
    cr_assert_geq(lp_checked, 500);
    cr_log_info("maxflow: %u instances (%u hard), worst |maxflow - enumeration| %.3g, "
                "|maxflow - lp-reduced| %.3g (%u), certificate gap %.3g", done, hard, worst,
                worst_lp, lp_checked, worst_gap);
    gsl_rng_free(r);
}

/* Beyond the toys: maxflow against the exact sort-and-scan (1e-9) for iid,
 * wor and cps up to V = 400 (160,000 tuples), against brute force (1e-9) for
 * multi-drafter laws at V = 12 - 20, and against the reduced LP (1e-7) for
 * multi-drafter and custom laws at V = 20 - 60. */
Test(bound, maxflow_matches_sort_and_lp_beyond_enumeration)
{
    gsl_rng *r = mdsd_rng_alloc(1920);
    double worst = 0.0, worst_lp = 0.0;
    static const struct { mdsd_scheme_kind kind; size_t V, n; } sorted[] = {
        {MDSD_SCHEME_IID, 400, 2}, {MDSD_SCHEME_IID, 50, 3}, {MDSD_SCHEME_WOR, 300, 2},
        {MDSD_SCHEME_WOR, 40, 3},  {MDSD_SCHEME_CPS, 30, 3}, {MDSD_SCHEME_IID, 12, 5},
    };
    for (size_t c = 0; c < sizeof sorted / sizeof *sorted; c++)
        for (int family = 0; family < 4; family++) {
            size_t V = sorted[c].V;
            double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
            llm_pair(r, V, family, family == 2 ? 0.05 : 0.7, p, q);
            mdsd_scheme s = {sorted[c].kind, sorted[c].n, V, q, NULL};
            double a = test_bound_alpha(p, &s, MDSD_BOUND_MAXFLOW, NULL, NULL, NULL);
            double b = test_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, NULL);
            cr_assert(fabs(a - b) <= TOL, "%s V = %zu n = %zu family %d: maxflow %.17g, sort "
                      "%.17g", mdsd_scheme_name(s.kind), V, s.n, family, a, b);
            worst = fmax(worst, fabs(a - b));
            free(p), free(q);
        }
    /* medium sizes against brute force over all 2^V subsets (1e-9) */
    static const struct { mdsd_scheme_kind kind; size_t V, n; } brutes[] = {
        {MDSD_SCHEME_MULTI, 20, 2}, {MDSD_SCHEME_MULTI, 16, 3}, {MDSD_SCHEME_MULTI, 12, 4},
    };
    for (size_t c = 0; c < sizeof brutes / sizeof *brutes; c++)
        for (int family = 0; family < 4; family++) {
            size_t V = brutes[c].V, n = brutes[c].n;
            double p[20], q[4 * 20], unused[20];
            llm_pair(r, V, family, family == 2 ? 0.05 : 0.7, p, q);
            for (size_t j = 1; j < n; j++)
                llm_pair(r, V, (family + (int)j) % 4, 0.7, unused, q + j * V);
            mdsd_scheme s = {MDSD_SCHEME_MULTI, n, V, q, NULL};
            double a = test_bound_alpha(p, &s, MDSD_BOUND_MAXFLOW, NULL, NULL, NULL);
            double b = test_bound_alpha(p, &s, MDSD_BOUND_BRUTE, NULL, NULL, NULL);
            cr_assert(fabs(a - b) <= TOL, "multi V = %zu n = %zu family %d: maxflow %.17g, brute "
                      "%.17g", V, n, family, a, b);
            worst = fmax(worst, fabs(a - b));
        }
    static const struct { mdsd_scheme_kind kind; size_t V, n; } lps[] = {
        {MDSD_SCHEME_MULTI, 60, 2}, {MDSD_SCHEME_MULTI, 20, 3}, {MDSD_SCHEME_CUSTOM, 40, 3},
        {MDSD_SCHEME_CUSTOM, 60, 4},
    };
    for (size_t c = 0; c < sizeof lps / sizeof *lps; c++)
        for (int family = 0; family < 4; family++) {
            size_t V = lps[c].V, n = lps[c].n;
            double *p = malloc(V * sizeof *p), *q = malloc(n * V * sizeof *q);
            llm_pair(r, V, family, family == 2 ? 0.05 : 0.7, p, q);
            for (size_t j = 1; j < n; j++) {
                double *unused = malloc(V * sizeof *unused);
                llm_pair(r, V, (family + (int)j) % 4, 0.7, unused, q + j * V);
                free(unused);
            }
            mdsd_joint custom = {0};
            if (lps[c].kind == MDSD_SCHEME_CUSTOM) { /* 3,000 tuples drawn from the multi law */
                custom.n = n;
                custom.count = 3000;
                custom.tokens = malloc(custom.count * n * sizeof *custom.tokens);
                custom.prob = malloc(custom.count * sizeof *custom.prob);
                toy_distribution(r, family % 2 ? TOY_SOFTMAX : TOY_SPARSE, custom.count,
                                 custom.prob);
                for (size_t t = 0; t < custom.count * n; t++) { /* inverse CDF of row t % n */
                    const double *row = q + (t % n) * V;
                    double u = gsl_rng_uniform(r), acc = 0.0;
                    size_t x = 0;
                    while (x + 1 < V && (acc += row[x]) <= u)
                        x++;
                    custom.tokens[t] = (int)x;
                }
            }
            mdsd_scheme s = {lps[c].kind, n, V, q, lps[c].kind == MDSD_SCHEME_CUSTOM ? &custom : NULL};
            mdsd_bound_result res;
            double a = test_bound_alpha(p, &s, MDSD_BOUND_MAXFLOW, NULL, NULL, &res);
            double b = test_bound_alpha(p, &s, MDSD_BOUND_LP_REDUCED, NULL, NULL, NULL);
            cr_assert(fabs(a - b) <= LP_TOL, "%s V = %zu n = %zu family %d: maxflow %.17g, "
                      "lp-reduced %.17g", mdsd_scheme_name(s.kind), V, n, family, a, b);
            cr_assert(fabs(res.maxflow_gap) <= 1e-11);
            worst_lp = fmax(worst_lp, fabs(a - b));
            mdsd_joint_free(&custom);
            free(p), free(q);
        }
    cr_log_info("maxflow beyond the toys: worst |maxflow - sort or brute| %.3g, |maxflow - lp-reduced| "
                "%.3g", worst, worst_lp);
    gsl_rng_free(r);
}

/* The set law (lp.h): the packed-key radix path (small tokens) gives the same
 * sets, in the same order (length, then lexicographic), with bit-identical
 * masses as the generic qsort path, reached here by spreading the same
 * tokens over ids up to 2^26 (too wide to pack three of them); and each mass
 * is the sum of its tuples. */
Test(bound, set_law_packed_and_generic_paths_agree)
{
    gsl_rng *r = mdsd_rng_alloc(1921);
    for (int inst = 0; inst < 200; inst++) {
        size_t n = 1 + (size_t)inst % 5, V = 2 + gsl_rng_uniform_int(r, 30);
        size_t T = 1 + gsl_rng_uniform_int(r, 400);
        mdsd_joint D = {n, T, malloc(T * n * sizeof(int)), malloc(T * sizeof(double))};
        mdsd_joint W = {n, T, malloc(T * n * sizeof(int)), D.prob};
        toy_distribution(r, (toy_family)(inst % 3), T, D.prob);
        for (size_t i = 0; i < T * n; i++) {
            D.tokens[i] = (int)gsl_rng_uniform_int(r, V);
            W.tokens[i] = D.tokens[i] << 21;
        }
        mdsd_set_law a, b;
        cr_assert_eq(mdsd_set_law_build(&D, 1.0, &a, NULL), MDSD_OK);
        cr_assert_eq(mdsd_set_law_build(&W, 1.0, &b, NULL), MDSD_OK);
        cr_assert_eq(a.count, b.count);
        for (size_t k = 0; k < a.count; k++) {
            cr_assert_eq(a.start[k + 1], b.start[k + 1]);
            cr_assert(a.mass[k] == b.mass[k], "inst %d set %zu: %a vs %a", inst, k, a.mass[k],
                      b.mass[k]);
            size_t len = a.start[k + 1] - a.start[k];
            for (size_t j = 0; j < len; j++) {
                cr_assert_eq(a.members[a.start[k] + j] << 21, b.members[b.start[k] + j]);
                if (j > 0)
                    cr_assert_lt(a.members[a.start[k] + j - 1], a.members[a.start[k] + j]);
            }
            if (k > 0) { /* strictly increasing: by length, then lexicographic */
                size_t lp = a.start[k] - a.start[k - 1];
                int c = lp < len ? -1 : lp > len ? 1 : 0;
                for (size_t j = 0; c == 0 && j < len; j++)
                    c = (a.members[a.start[k - 1] + j] > a.members[a.start[k] + j]) -
                        (a.members[a.start[k - 1] + j] < a.members[a.start[k] + j]);
                cr_assert_lt(c, 0, "inst %d: sets %zu and %zu out of order", inst, k - 1, k);
            }
            double mass = 0.0; /* the tuples whose token set is set k */
            for (size_t t = 0; t < T; t++) {
                bool same = true;
                for (size_t j = 0; j < n && same; j++) {
                    bool in = false;
                    for (size_t i = 0; i < len; i++)
                        in = in || D.tokens[t * n + j] == a.members[a.start[k] + i];
                    same = in;
                }
                for (size_t i = 0; i < len && same; i++) {
                    bool hit = false;
                    for (size_t j = 0; j < n; j++)
                        hit = hit || D.tokens[t * n + j] == a.members[a.start[k] + i];
                    same = hit;
                }
                mass += same ? D.prob[t] : 0.0;
            }
            cr_assert(fabs(mass - a.mass[k]) <= 1e-15, "inst %d set %zu: %.17g vs %.17g", inst,
                      k, mass, a.mass[k]);
        }
        mdsd_set_law_free(&a);
        mdsd_set_law_free(&b);
        free(W.tokens);
        mdsd_joint_free(&D);
    }
    gsl_rng_free(r);
}

/* The network on a hand-made set law: sets {0,1} 0.5, {1,2} 0.3, {2} 0.2 and
 * p = (0.1, 0.1, 0.8): the cut H = {0, 1} costs 1 + 0.2 - 0.5 = 0.7, the
 * flow sends 0.2 to tokens 0, 1 and 0.5 to token 2. */
Test(bound, maxflow_network_by_hand)
{
    size_t start[4] = {0, 2, 4, 5};
    int members[5] = {0, 1, 1, 2, 2};
    double mass[3] = {0.5, 0.3, 0.2}, p[3] = {0.1, 0.1, 0.8};
    mdsd_set_law S = {3, start, members, mass};
    mdsd_maxflow_result res;
    unsigned char H[3];
    mdsd_err err;
    cr_assert_eq(mdsd_maxflow_alpha(p, 3, &S, &res, H, &err), MDSD_OK, "%s", err.msg);
    cr_assert_float_eq(res.alpha, 0.7, 1e-15);
    cr_assert_float_eq(res.flow, 0.7, 1e-15);
    cr_assert(H[0] && H[1] && !H[2]);
    cr_assert_eq(res.sets, 3);
    cr_assert_eq(res.arcs, 5);
    /* a certificate that cannot close fails the call instead of printing a
     * number: a NaN mass (which the callers' validation keeps out) */
    mass[0] = NAN;
    cr_assert_eq(mdsd_maxflow_alpha(p, 3, &S, &res, H, &err), MDSD_ESOLVER);
    cr_assert(strstr(err.msg, "no certified alpha*"), "%s", err.msg);
    mass[0] = 0.5;
    members[4] = 3;
    cr_assert_eq(mdsd_maxflow_alpha(p, 3, &S, &res, H, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "token 3"), "%s", err.msg);
}

/* Large V: the fast Q(H) against GSL adaptive quadrature over every token,
 * for Gaussian, Zipf, peaked (mass outside the top two ~1e-6) and flat
 * drafts (whose small tokens all need long power series). */
Test(bound, wor_Q_matches_gsl_quadrature_at_larger_V)
{
    gsl_rng *r = mdsd_rng_alloc(5);
    size_t Vmax = 5000;
    double *p = malloc(Vmax * sizeof *p), *q = malloc(Vmax * sizeof *q);
    unsigned char *H = malloc(Vmax);
    double worst = 0.0;
    for (int it = 0; it < 16; it++) {
        size_t V = it < 12 ? 400 : Vmax;
        llm_pair(r, V, it % 4, 0.5 + 0.1 * (it % 12), p, q);
        size_t n = 3 + (size_t)(it % 4);
        for (size_t x = 0; x < V; x++)
            H[x] = gsl_rng_uniform(r) < 0.8 || x < (size_t)(it % 2);
        double fast, slow;
        mdsd_err err;
        cr_assert_eq(mdsd_wor_Q(q, V, n, H, &fast, &err), MDSD_OK, "%s", err.msg);
        cr_assert_eq(mdsd_wor_Q_quad(q, V, n, H, &slow, &err), MDSD_OK, "%s", err.msg);
        cr_assert(fabs(fast - slow) <= 1e-12, "it %d (n = %zu): fast %.17g, GSL %.17g", it, n,
                  fast, slow);
        worst = fmax(worst, fabs(fast - slow));
    }
    cr_log_info("wor Q(H), V = 400 and 5000: worst |fast - GSL| %.3g", worst);
    free(p), free(q), free(H);
    gsl_rng_free(r);
}

/* mdsd_bound_opts.pq_tag: iid, wor and cps at one position share one q/p
 * order and give the same bits as with a fresh workspace; a new tag (new p,
 * q) recomputes it; the subset of a reused order is the same. */
Test(bound, pq_tag_reuses_the_order_of_one_position_only)
{
    gsl_rng *r = mdsd_rng_alloc(21);
    size_t V = 1500;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    unsigned char *H1 = malloc(V), *H2 = malloc(V);
    mdsd_bound_workspace *shared = mdsd_bound_workspace_alloc(V, 3, NULL);
    static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR, MDSD_SCHEME_CPS};
    for (int it = 0; it < 8; it++) {
        llm_pair(r, V, it % 4, 0.7, p, q);
        mdsd_bound_opts o = {.pq_tag = 100 + (uint64_t)it};
        for (size_t k = 0; k < 3; k++) {
            mdsd_scheme s = {kinds[k], 2 + (size_t)it % 2, V, q, NULL};
            mdsd_bound_result a = {.subset = H1}, b = {.subset = H2}, c = {0};
            /* tagged calls use the full order: the same bits as a fresh one */
            mdsd_bound_opts fresh = {.full_sort = true};
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, &o, shared, &a, NULL), MDSD_OK);
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, &fresh, NULL, &b, NULL), MDSD_OK);
            cr_assert(a.alpha == b.alpha, "it %d, %s: shared %.17g, fresh %.17g", it,
                      mdsd_scheme_name(kinds[k]), a.alpha, b.alpha);
            cr_assert_arr_eq(H1, H2, V);
            /* untagged iid: the sort-free route, the same up to the order of the sums */
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, &c, NULL), MDSD_OK);
            cr_assert(fabs(c.alpha - b.alpha) <= 1e-13, "it %d, %s: %.17g vs %.17g", it,
                      mdsd_scheme_name(kinds[k]), c.alpha, b.alpha);
        }
    }
    mdsd_bound_workspace_free(shared);
    free(p), free(q), free(H1), free(H2);
    gsl_rng_free(r);
}

/* The branch and bound over prefixes finds the same minimum as evaluating
 * Q(H_i) at every prefix - also when the draft puts all but lambda = 1e-12 or
 * 1e-30 of its mass on its top n - 1 tokens (the tail's q then lies below the
 * rounding of prefix masses near 1). */
Test(bound, wor_branch_and_bound_equals_full_scan)
{
    gsl_rng *r = mdsd_rng_alloc(6);
    size_t V = 700;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    mdsd_qp_order ord;
    cr_assert_eq(mdsd_qp_order_init(&ord, V, NULL), MDSD_OK);
    for (int it = 0; it < 15; it++) {
        size_t n = 3 + (size_t)(it % 3) * (it < 9 ? 1 : 3);
        llm_pair(r, V, it % 3, 0.7, p, q);
        if (it >= 9) {
            double lambda = it % 2 ? 1e-12 : 1e-30, s = 0.0;
            for (size_t x = 0; x < V; x++)
                s += q[x] = lambda * gsl_rng_uniform(r) / (double)V;
            for (size_t j = 0; j + 1 < n; j++)
                q[j] = (1.0 - s) / (double)(n - 1);
        }
        mdsd_qp_order_compute(&ord, p, q, V);
        mdsd_wor_chain *c = mdsd_wor_chain_alloc(V, n, NULL);
        cr_assert_eq(mdsd_wor_chain_set(c, q, ord.order, ord.n_scan, NULL), MDSD_OK);
        double P = 0.0, full = 0.0;
        for (size_t i = 1; i <= ord.n_scan; i++) {
            P += p[ord.order[i - 1]];
            double Q;
            cr_assert_eq(mdsd_wor_chain_Q(c, i, &Q, NULL), MDSD_OK);
            full = fmin(full, P - Q);
        }
        double bb;
        size_t arg, evals;
        cr_assert_eq(mdsd_wor_chain_min(c, p, 1e-14, &bb, &arg, &evals, NULL), MDSD_OK);
        cr_assert(fabs(bb - full) <= 1e-12, "it %d: branch and bound %.17g, full scan %.17g", it,
                  bb, full);
        cr_assert_lt(evals, ord.n_scan / 4, "branch and bound evaluated %zu of %zu prefixes",
                     evals, ord.n_scan);
        mdsd_wor_chain_free(c);
    }
    mdsd_qp_order_destroy(&ord);
    free(p), free(q);
    gsl_rng_free(r);
}

/* One workspace, n switching back and forth (as the batch job does): the
 * same values as fresh workspaces; n = 1 and 2 through the chain match
 * q(H) and the n = 2 closed form. */
Test(bound, wor_workspace_switches_n)
{
    gsl_rng *r = mdsd_rng_alloc(8);
    size_t V = 300;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(V, 3, NULL);
    for (int it = 0; it < 12; it++) {
        size_t n = (size_t)(it % 2 ? 5 : 3) + (size_t)(it / 6);
        llm_pair(r, V, it % 3, 0.8, p, q);
        mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
        double shared = test_bound_alpha(p, &s, MDSD_BOUND_SORT, ws, NULL, NULL);
        double fresh = test_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, NULL);
        cr_assert_eq(shared, fresh, "n = %zu: %.17g with a reused workspace, %.17g fresh", n,
                     shared, fresh);
    }
    unsigned char *H = malloc(V);
    for (size_t x = 0; x < V; x++)
        H[x] = x % 3 != 0;
    double Q1, Q2, qH = 0.0, A = 0.0, r_out = 0.0;
    cr_assert_eq(mdsd_wor_Q(q, V, 1, H, &Q1, NULL), MDSD_OK);
    cr_assert_eq(mdsd_wor_Q(q, V, 2, H, &Q2, NULL), MDSD_OK);
    for (size_t x = 0; x < V; x++) {
        if (H[x])
            qH += q[x], A += q[x] / (1.0 - q[x]);
        else
            r_out += q[x];
    }
    cr_assert_float_eq(Q1, qH, 1e-14);
    cr_assert_float_eq(Q2, qH - r_out * A, 1e-14);
    free(H), free(p), free(q);
    mdsd_bound_workspace_free(ws);
    gsl_rng_free(r);
}
