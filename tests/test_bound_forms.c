/* alpha* by sort-and-scan against the published closed forms and bounds
 * (SpecTr's Bernoulli and uniform cases and Lemmas 1 and 3, Khisti's Theorems
 * 2 and 3, hub = greedy at two drafts), Hu's generating function against
 * sequential sampling without replacement, the q/p order, and bad input
 * (library and command line). Split from test_bound.c (its routes against
 * enumeration, the LPs and max-flow). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "testutil.h"

/* No .timeout on these tests: with criterion 2.4.1, timed tests running in
 * parallel workers leak 48 bytes in the runner under LeakSanitizer. */
#define TOL 1e-9
#define LP_TOL 1e-7

/* ---- closed forms ------------------------------------------------------------ */

static double sort_iid(const double *p, const double *q, size_t V, size_t n)
{
    mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
    return test_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, NULL);
}

/* SpecTr: target Ber(b), draft Ber(a):
 * alpha*_iid = min(b, 1 - (1-a)^n) + min(1 - b, 1 - a^n). */
Test(bound, spectr_bernoulli)
{
    for (int ia = 1; ia < 10; ia++)
        for (int ib = 0; ib <= 10; ib++)
            for (size_t n = 1; n <= 6; n++) {
                double a = ia / 10.0, b = ib / 10.0;
                double p[2] = {1 - b, b}, q[2] = {1 - a, a};
                double want = fmin(b, 1 - pow(1 - a, (double)n)) + fmin(1 - b, 1 - pow(a, (double)n));
                cr_assert_float_eq(sort_iid(p, q, 2, n), want, 1e-12, "a %g b %g n %zu", a, b, n);
                mdsd_scheme s = {MDSD_SCHEME_IID, n, 2, q, NULL};
                cr_assert_float_eq(test_bound_alpha(p, &s, MDSD_BOUND_BRUTE, NULL, NULL, NULL), want, 1e-12);
            }
}

/* SpecTr: draft U(d), target uniform on d/r of its symbols:
 * alpha*_iid = 1 - (1 - 1/r)^n. */
Test(bound, spectr_uniform)
{
    static const size_t ds[] = {2, 4, 6, 12, 60};
    for (size_t k = 0; k < sizeof ds / sizeof *ds; k++)
        for (size_t r = 1; r <= ds[k]; r++) {
            size_t d = ds[k];
            if (d % r)
                continue;
            double p[61] = {0}, q[61];
            for (size_t x = 0; x < d; x++) {
                q[x] = 1.0 / (double)d;
                p[x] = x < d / r ? (double)r / (double)d : 0.0;
            }
            q[d] = 0.0, p[d] = 0.0; /* one token outside both supports */
            for (size_t n = 1; n <= 8; n++)
                cr_assert_float_eq(sort_iid(p, q, d + 1, n), 1 - pow(1 - 1.0 / (double)r, (double)n),
                                   1e-12, "d %zu r %zu n %zu", d, r, n);
        }
}

/* Khisti Thm 2 (alpha* = 1 iff p(S) >= q(S)^2 for all S) and Thm 3 (the
 * value), against the brute force, on random and on hand-made instances:
 * q = (1/2, 1/2) and p = (1/4, 3/4) reach alpha* = 1 with p != q; p =
 * (0.24, 0.76) does not (alpha* = 1 - (0.25 - 0.24) = 0.99). */
Test(bound, khisti_theorems_2_and_3)
{
    double q[2] = {0.5, 0.5}, p1[2] = {0.25, 0.75}, p2[2] = {0.24, 0.76};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 2, q, NULL};
    mdsd_bound_result res;
    cr_assert_float_eq(test_bound_alpha(p1, &s, MDSD_BOUND_K2, NULL, NULL, &res), 1.0, 1e-15);
    cr_assert_eq(res.alpha_one, 1);
    cr_assert_float_eq(test_bound_alpha(p2, &s, MDSD_BOUND_K2, NULL, NULL, &res), 0.99, 1e-15);
    cr_assert_eq(res.alpha_one, 0);
    cr_assert_float_eq(res.k2_margin, -0.01, 1e-15);
    gsl_rng *r = mdsd_rng_alloc(9);
    unsigned ones = 0, large = 0;
    for (unsigned i = 0; i < 600; i++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 23); /* V > 20: the prefix route of k2 */
        double p[24], qq[24];
        toy_pair(r, i, V, p, qq);
        if (i % 5 == 0) { /* near the boundary: p a mild perturbation of q */
            double sum = 0.0;
            for (size_t v = 0; v < V; v++)
                sum += p[v] = qq[v] * (1.0 + 0.3 * (gsl_rng_uniform(r) - 0.5));
            for (size_t v = 0; v < V; v++)
                p[v] /= sum;
        }
        mdsd_scheme si = {MDSD_SCHEME_IID, 2, V, qq, NULL};
        double k2 = test_bound_alpha(p, &si, MDSD_BOUND_K2, NULL, NULL, &res);
        double ref = V <= 16 ? test_bound_alpha(p, &si, MDSD_BOUND_BRUTE, NULL, NULL, NULL)
                             : test_bound_alpha(p, &si, MDSD_BOUND_LP_REDUCED, NULL, NULL, NULL);
        cr_assert(fabs(k2 - ref) <= (V <= 16 ? TOL : LP_TOL), "V %zu: k2 %.15g, reference %.15g",
                  V, k2, ref);
        cr_assert_eq(res.alpha_one == 1, ref >= 1.0 - 1e-9, "V %zu: Thm 2 flag %d, alpha* %.15g",
                     V, res.alpha_one, ref);
        ones += res.alpha_one == 1;
        large += V > 20;
    }
    cr_assert_geq(ones, 50, "only %u instances with alpha* = 1", ones);
    cr_assert_geq(large, 40);
    gsl_rng_free(r);
}

/* SpecTr Lemma 1: alpha*_iid is non-decreasing in n and tends to
 * p(supp q); with q_min the smallest positive q,
 * min(p(supp q), 1 - (1 - q_min)^n) <= alpha*_n <= p(supp q). */
Test(bound, spectr_lemma1_monotone_with_limit)
{
    gsl_rng *r = mdsd_rng_alloc(10);
    for (unsigned i = 0; i < 60; i++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 7);
        double p[8], q[8];
        toy_pair(r, i, V, p, q);
        double supp = 0.0, qmin = 1.0, prev = 0.0;
        for (size_t v = 0; v < V; v++)
            if (q[v] > 0.0)
                supp += p[v], qmin = fmin(qmin, q[v]);
        for (size_t n = 1; n <= 400; n += n < 20 ? 1 : 37) {
            double a = sort_iid(p, q, V, n);
            cr_assert_geq(a, prev - 1e-12, "not monotone at n = %zu: %.15g < %.15g", n, a, prev);
            cr_assert_leq(a, supp + 1e-12);
            cr_assert_geq(a, fmin(supp, 1 - pow(1 - qmin, (double)n)) - 1e-12);
            prev = a;
        }
    }
    gsl_rng_free(r);
}

/* SpecTr Lemma 3: (1 - (1 - 1/n)^n) abar_n <= alpha*_iid <= abar_n with
 * abar_n = min over Omega0 of sum_{y in Omega0} min(p(y), 1 - (1 - q(y))^n)
 *          + sum over tuples x of min(prod q(x_j), p(S(x) \ Omega0)). */
Test(bound, spectr_lemma3_bounds)
{
    gsl_rng *r = mdsd_rng_alloc(12);
    for (unsigned i = 0; i < 150; i++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 4), n = 1 + gsl_rng_uniform_int(r, 3);
        double p[5], q[5];
        toy_pair(r, i, V, p, q);
        mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
        mdsd_joint D;
        cr_assert_eq(mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &D, NULL), MDSD_OK);
        double abar = INFINITY;
        for (unsigned omega = 0; omega < (1u << V); omega++) {
            double v = 0.0;
            for (size_t y = 0; y < V; y++)
                if (omega >> y & 1)
                    v += fmin(p[y], 1 - pow(1 - q[y], (double)n));
            for (size_t t = 0; t < D.count; t++) {
                unsigned set = 0;
                for (size_t j = 0; j < n; j++)
                    set |= 1u << D.tokens[t * n + j];
                double ps = 0.0;
                for (size_t y = 0; y < V; y++)
                    if ((set & ~omega) >> y & 1)
                        ps += p[y];
                v += fmin(D.prob[t], ps);
            }
            abar = fmin(abar, v);
        }
        double a = sort_iid(p, q, V, n), c = 1 - pow(1 - 1.0 / (double)n, (double)n);
        cr_assert_leq(a, abar + 1e-12, "alpha* %.15g above the upper bound %.15g", a, abar);
        cr_assert_geq(a, c * abar - 1e-12, "alpha* %.15g below the lower bound %.15g", a, c * abar);
        mdsd_joint_free(&D);
    }
    gsl_rng_free(r);
}

/* hub and greedy (n = 2) draw the same token sets: the same alpha*, by the
 * closed forms and by brute force over each scheme's own D. */
Test(bound, hub_equals_greedy_at_two_drafts)
{
    gsl_rng *r = mdsd_rng_alloc(13);
    for (unsigned i = 0; i < 200; i++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 7);
        double p[8], q[8];
        toy_pair(r, i, V, p, q);
        mdsd_scheme hub = {MDSD_SCHEME_HUB, 2, V, q, NULL}, greedy = {MDSD_SCHEME_GREEDY, 2, V, q, NULL};
        if (mdsd_scheme_check(&hub, NULL) != MDSD_OK)
            continue;
        double h = test_bound_alpha(p, &hub, MDSD_BOUND_SORT, NULL, NULL, NULL);
        cr_assert_float_eq(h, test_bound_alpha(p, &greedy, MDSD_BOUND_SORT, NULL, NULL, NULL), 1e-15);
        cr_assert_float_eq(h, test_bound_alpha(p, &hub, MDSD_BOUND_BRUTE, NULL, NULL, NULL), TOL);
        cr_assert_float_eq(h, test_bound_alpha(p, &greedy, MDSD_BOUND_BRUTE, NULL, NULL, NULL), TOL);
    }
    gsl_rng_free(r);
}

/* Hu et al.'s W_{n,H} / W_{n,all} is the cps scheme's Q(H), not sequential
 * sampling without replacement's: it matches enumerated cps and misses
 * enumerated wor by a wide margin. */
Test(bound, generating_function_is_cps_not_wor)
{
    gsl_rng *r = mdsd_rng_alloc(14);
    double worst_wor = 0.0, worst_cps = 0.0, worst_alpha = 0.0;
    for (unsigned i = 0; i < 200; i++) {
        size_t V = 3 + gsl_rng_uniform_int(r, 5), n = 2 + gsl_rng_uniform_int(r, 3);
        double p[8], q[8];
        toy_pair(r, 5 * i, V, p, q); /* Dirichlet pairs */
        mdsd_scheme wor = {MDSD_SCHEME_WOR, n, V, q, NULL}, cps = {MDSD_SCHEME_CPS, n, V, q, NULL};
        if (mdsd_scheme_check(&wor, NULL) != MDSD_OK)
            continue;
        mdsd_joint Dw, Dc;
        cr_assert_eq(mdsd_scheme_joint(&wor, MDSD_JOINT_MAX_TUPLES, &Dw, NULL), MDSD_OK);
        cr_assert_eq(mdsd_scheme_joint(&cps, MDSD_JOINT_MAX_TUPLES, &Dc, NULL), MDSD_OK);
        for (unsigned long mask = 0; mask < (1ul << V); mask++) {
            unsigned char H[8];
            for (size_t v = 0; v < V; v++)
                H[v] = mask >> v & 1;
            double gf;
            cr_assert_eq(mdsd_cps_Q(q, V, n, H, &gf, NULL), MDSD_OK);
            worst_cps = fmax(worst_cps, fabs(gf - mdsd_joint_Q(&Dc, H)));
            worst_wor = fmax(worst_wor, fabs(gf - mdsd_joint_Q(&Dw, H)));
        }
        worst_alpha = fmax(worst_alpha, fabs(test_bound_alpha(p, &cps, MDSD_BOUND_SORT, NULL, NULL, NULL) -
                                             test_bound_alpha(p, &wor, MDSD_BOUND_SORT, NULL, NULL, NULL)));
        mdsd_joint_free(&Dw);
        mdsd_joint_free(&Dc);
    }
    cr_assert_leq(worst_cps, 1e-12, "generating function vs cps: %.3g", worst_cps);
    cr_assert_geq(worst_wor, 0.05, "generating function vs wor only %.3g apart", worst_wor);
    cr_log_info("Hu's generating-function Q(H): worst error vs enumerated cps %.3g, vs "
                "enumerated wor %.3g; alpha*(cps) - alpha*(wor) up to %.3g",
                worst_cps, worst_wor, worst_alpha);
    gsl_rng_free(r);
}

/* The example quoted in MATH.md section 1.2: q = (0.5, 0.3, 0.15, 0.05), n = 3,
 * H = {0, 1, 2}: Q(H) = 0.6965 (4 d.p.) without replacement, 0.625 under cps, by
 * enumeration and by the fast routes. */
Test(bound, math_md_wor_cps_example)
{
    static const double q[4] = {0.5, 0.3, 0.15, 0.05};
    static const unsigned char H[4] = {1, 1, 1, 0};
    mdsd_scheme wor = {MDSD_SCHEME_WOR, 3, 4, q, NULL}, cps = {MDSD_SCHEME_CPS, 3, 4, q, NULL};
    mdsd_joint Dw, Dc;
    cr_assert_eq(mdsd_scheme_joint(&wor, MDSD_JOINT_MAX_TUPLES, &Dw, NULL), MDSD_OK);
    cr_assert_eq(mdsd_scheme_joint(&cps, MDSD_JOINT_MAX_TUPLES, &Dc, NULL), MDSD_OK);
    double Qw, Qc;
    cr_assert_eq(mdsd_wor_Q(q, 4, 3, H, &Qw, NULL), MDSD_OK);
    cr_assert_eq(mdsd_cps_Q(q, 4, 3, H, &Qc, NULL), MDSD_OK);
    cr_assert_float_eq(mdsd_joint_Q(&Dw, H), Qw, 1e-12);
    cr_assert_float_eq(mdsd_joint_Q(&Dc, H), Qc, 1e-12);
    cr_assert_float_eq(Qw, 0.6965, 5e-5, "wor Q(H) = %.6f", Qw);
    cr_assert_float_eq(Qc, 0.625, 1e-12, "cps Q(H) = %.6f", Qc);
    mdsd_joint_free(&Dw);
    mdsd_joint_free(&Dc);
}

/* ---- the order ----------------------------------------------------------------- */

Test(bound, qp_order_follows_its_definition)
{
    gsl_rng *r = mdsd_rng_alloc(15);
    size_t V = 3000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    mdsd_qp_order o;
    cr_assert_eq(mdsd_qp_order_init(&o, V, NULL), MDSD_OK);
    for (int it = 0; it < 9; it++) {
        for (size_t x = 0; x < V; x++) {
            double u = gsl_rng_uniform(r);
            p[x] = u < 0.1 ? 0.0 : gsl_rng_uniform(r);
            q[x] = u > 0.9 ? 0.0 : gsl_rng_uniform(r);
            if (it % 2 && x % 3 == 0) /* ratios equal as floats, distinct as doubles */
                q[x] = p[x] * (1.0 + 1e-13 * (double)(x % 7));
            if (it == 4 && x % 2) /* exact ties */
                q[x] = p[x];
            if (it == 6 && x % 2) /* ties up to a few ulps (softmax of quantised logits) */
                q[x] = p[x] * 0.5 * (1.0 + DBL_EPSILON * (double)(x % 5));
            if (it >= 7 && p[x] > 0.0 && q[x] > 0.0 && x % 4 == 0) /* ratios beyond float range */
                q[x] *= 1e-200 * (it == 8 ? 1.0 : gsl_rng_uniform(r));
            if (it >= 7 && p[x] > 0.0 && q[x] > 0.0 && x % 4 == 1)
                p[x] *= 1e-200 * (it == 8 ? 1.0 : gsl_rng_uniform(r));
        }
        mdsd_qp_order_compute(&o, p, q, V);
        unsigned char *seen = calloc(V, 1);
        for (size_t k = 0; k < V; k++) {
            uint32_t x = o.order[k];
            cr_assert(!seen[x]);
            seen[x] = 1;
            if (k < o.n_zero_p) {
                cr_assert(p[x] == 0.0 && q[x] > 0.0);
                cr_assert(k == 0 || o.order[k - 1] < x);
            } else if (k < o.n_scan) {
                cr_assert(p[x] > 0.0 && q[x] > 0.0);
                if (k > o.n_zero_p) {
                    uint32_t w = o.order[k - 1];
                    double a = q[w] / p[w], b = q[x] / p[x];
                    cr_assert(a > b || (a == b && w < x), "position %zu: %.17g then %.17g", k, a, b);
                }
            } else {
                cr_assert(q[x] == 0.0);
            }
        }
        free(seen);
    }
    mdsd_qp_order_destroy(&o);
    free(p), free(q);
    gsl_rng_free(r);
}

/* ---- bad input and the command line ----------------------------------------------- */

Test(bound, library_refusals_name_the_problem)
{
    double p[3] = {0.2, 0.3, 0.5}, q[6] = {0.5, 0.3, 0.2, 0.1, 0.1, 0.8};
    mdsd_bound_result res = {0};
    mdsd_err err;
    mdsd_scheme multi = {MDSD_SCHEME_MULTI, 2, 3, q, NULL};
    cr_assert_eq(mdsd_bound_alpha(p, &multi, MDSD_BOUND_SORT, NULL, NULL, &res, &err),
                 MDSD_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "sort applies to iid, wor, greedy, hub and cps"), "%s", err.msg);
    mdsd_scheme iid3 = {MDSD_SCHEME_IID, 3, 3, q, NULL};
    cr_assert_eq(mdsd_bound_alpha(p, &iid3, MDSD_BOUND_K2, NULL, NULL, &res, &err),
                 MDSD_EUNSUPPORTED);
    cr_assert(strstr(err.msg, "n = 2"), "%s", err.msg);
    mdsd_bound_opts small = {.max_brute_V = 2};
    cr_assert_eq(mdsd_bound_alpha(p, &iid3, MDSD_BOUND_BRUTE, &small, NULL, &res, &err),
                 MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "V = 3") && strstr(err.msg, "maxflow"), "%s", err.msg);
    mdsd_scheme wor4 = {MDSD_SCHEME_WOR, 4, 3, q, NULL};
    cr_assert_eq(mdsd_bound_alpha(p, &wor4, MDSD_BOUND_SORT, NULL, NULL, &res, &err), MDSD_EINVAL);
    cr_assert_eq(mdsd_bound_alpha(p, &iid3, MDSD_BOUND_ALL, NULL, NULL, &res, &err), MDSD_EINVAL);
    mdsd_bound_method m;
    cr_assert_eq(mdsd_bound_method_parse("fast", &m, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "'fast'") && strstr(err.msg, "lp-reduced"), "%s", err.msg);
    /* A joint law that is not a probability (here: sums to 0.5) is refused. */
    int tokens[4] = {0, 1, 2, 2};
    double prob[2] = {0.25, 0.25};
    mdsd_joint D = {2, 2, tokens, prob};
    mdsd_scheme custom = {MDSD_SCHEME_CUSTOM, 2, 3, NULL, &D};
    cr_assert_eq(mdsd_bound_alpha(p, &custom, MDSD_BOUND_BRUTE, NULL, NULL, &res, &err),
                 MDSD_ESOLVER);
    cr_assert(strstr(err.msg, "sums to 0.5"), "%s", err.msg);
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(2, 2, NULL);
    cr_assert_eq(mdsd_bound_alpha(p, &iid3, MDSD_BOUND_SORT, NULL, ws, &res, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "workspace"), "%s", err.msg);
    mdsd_bound_workspace_free(ws);
}

Test(bound, cli_methods_agree_and_report)
{
    char *out;
    int rc = test_run_mdsd("bound -p 0.5,0.3,0.2,0 -q 0.2,0.3,0.4,0.1 -n 3 --scheme wor --method all "
                           "--json --show-subset", 0, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "\"method\":\"all\"") && strstr(out, "\"max_disagreement\":"), "%s", out);
    cr_assert(strstr(out, "\"method\":\"sort\"") && strstr(out, "\"method\":\"lp-full\"") &&
                  strstr(out, "\"method\":\"lp-reduced\"") && strstr(out, "\"method\":\"brute\""),
              "%s", out);
    double dis = 1.0;
    cr_assert_eq(sscanf(strstr(out, "\"max_disagreement\":") + 19, "%lf", &dis), 1);
    cr_assert_leq(dis, LP_TOL, "%s", out);
    free(out);
    rc = test_run_mdsd("bound -p 0.5,0.5 -q 0.9,0.1 -n 2 --scheme iid --method k2 --json", 0, &out);
    cr_assert_eq(rc, 0);
    /* 1 + min(0, 0.5 - 0.81, 0.5 - 0.01, 1 - 1) = 0.69 */
    cr_assert(strstr(out, "\"alpha\":0.68999999999999") || strstr(out, "\"alpha\":0.69"), "%s", out);
    cr_assert(strstr(out, "\"alpha_one\":false") && strstr(out, "\"method\":\"k2\""), "%s", out);
    free(out);
    rc = test_run_mdsd("bound -p 0.25,0.75 -q 0.5,0.5 --scheme iid --show-subset", 0, &out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "alpha* = 1") && strstr(out, "method sort"), "%s", out);
    free(out);
    rc = test_run_mdsd("bound -p 0.3,0.3,0.4 -q 0.5,0.3,0.2 -q 0.1,0.1,0.8 --scheme multi --json",
                       0, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "\"method\":\"brute\""), "%s", out); /* auto at V <= 10 */
    free(out);
    rc = test_run_mdsd("bound -p 0.3,0.3,0.4 -q 0.5,0.3,0.2 -q 0.1,0.1,0.8 --scheme multi --json "
                       "--method maxflow --show-subset", 0, &out);
    cr_assert_eq(rc, 0, "%s", out);
    /* both drafters give every token mass: all six token sets of one or two tokens */
    cr_assert(strstr(out, "\"method\":\"maxflow\"") && strstr(out, "\"certificate_gap\":") &&
                  strstr(out, "\"maxflow_sets\":6") && strstr(out, "\"subset\":["), "%s", out);
    free(out);
    /* custom: tuples from a file; brute and both LPs. */
    char path[] = "/tmp/mdsd-bound-custom-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("# x1 x2 prob\n0 1 0.5\n1 2 0.3\n2 2 0.2\n", f);
    fclose(f);
    char args[256];
    snprintf(args, sizeof args,
             "bound -p 0.1,0.1,0.8 --scheme custom --custom %s --method all --json", path);
    rc = test_run_mdsd(args, 0, &out);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", out);
    /* H = {0, 1}: p(H) - Q(H) = 0.2 - 0.5, so alpha* = 0.7 (no smaller value) */
    cr_assert(strstr(out, "\"alpha\":0.69999999999") || strstr(out, "\"alpha\":0.7"), "%s", out);
    cr_assert(strstr(out, "\"method\":\"lp-full\"") && strstr(out, "\"method\":\"brute\"") &&
                  strstr(out, "\"method\":\"maxflow\""), "%s", out);
    free(out);
}

Test(bound, cli_bad_input)
{
    static const struct {
        const char *args;
        int status;
        const char *message;
    } cases[] = {
        {"bound -p 0.5,0.5 -q 0.5,0.5 --scheme iid --method fast", 1, "unknown method 'fast'"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 --scheme nope", 1, "unknown scheme 'nope'"},
        {"bound -p 0.5,0.5 -q 0.5,0.5", 2, "missing --scheme"},
        {"bound -q 0.5,0.5 --scheme iid", 1, "missing -p/--target"},
        {"bound -p 0.5,0.5 -q 0.3,0.3,0.4 --scheme iid", 1, "vocabulary mismatch"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 -n 3 --scheme iid --method k2", 1, "n = 2"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 -q 0.2,0.8 --scheme multi --method sort", 1,
         "sort applies to"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 -n 3 --scheme wor", 1, "only 2 tokens"},
        {"bound -p 0.5,0.6 -q 0.5,0.5 --scheme iid", 1, "sum to"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 --scheme custom", 1, "--custom FILE"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 --scheme iid --bogus", 2, "unrecognised option"},
        {"bound -p 0.5,0.5 -q 0.5,0.5 --scheme iid extra", 2, "unexpected argument 'extra'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *out;
        int rc = test_run_mdsd(cases[k].args, 1, &out);
        cr_assert_eq(rc, cases[k].status, "%s: status %d: %s", cases[k].args, rc, out);
        cr_assert(strstr(out, cases[k].message), "%s: expected '%s' in: %s", cases[k].args,
                  cases[k].message, out);
        free(out);
    }
    /* brute refuses large V with the size and a method to use instead. */
    char args[4096] = "bound --scheme iid --method brute -p ";
    size_t len = strlen(args);
    for (int x = 0; x < 30; x++)
        len += (size_t)snprintf(args + len, sizeof args - len, x ? ",%g" : "%g", 1.0 / 30);
    len += (size_t)snprintf(args + len, sizeof args - len, " -q ");
    for (int x = 0; x < 30; x++)
        len += (size_t)snprintf(args + len, sizeof args - len, x ? ",%g" : "%g", 1.0 / 30);
    char *out;
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1, "%s", out);
    cr_assert(strstr(out, "V = 30") && strstr(out, "--method sort"), "%s", out);
    free(out);
}
