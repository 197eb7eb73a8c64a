/* The table job builds the q/p order only where a route needs it: iid, cps and
 * wor (n >= 3, V >= 4,096) take the sort-free routes, as mdsd_batch_eval
 * does; the rest share one full order per position (position.c). This moved
 * results in their last digits once (README, "Changes"): here every
 * per-position alpha* of the job's evaluator is compared with the full-order
 * route (bound.h's full_sort, the reference the routes are tested against),
 * on random LLM-like rows and the hard ones (T <= 0.05 with wide logit gaps,
 * near one-hot, ties, zeros), and must agree to a few ulp: measured worst 5.5 ulp
 * (iid), 7 (wor), 8.5 (cps) of 1 over the 756 values; iid also within 4 ulp of a
 * long-double scan (a planted plain bucket sum is 55 ulp off and fails). */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "bound.h"
#include "position.h"
#include "scheme.h"

/* Row k of a family of hard and random logit rows. */
static void make_row(size_t k, size_t V, float *t, float *d, double *T)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * (k + 1);
    double gap = (k % 5 == 0) ? 40.0 : 4.0;
    *T = (k % 4 == 0) ? 0.03 : (k % 4 == 1) ? 0.7 : 1.0;
    for (size_t i = 0; i < V; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u = (double)(s >> 11) / 9007199254740992.0;
        double zipf = -1.1 * log((double)(i + 1)); /* heavy-tailed, as LLM logits */
        t[i] = (float)(zipf + gap * (u - 0.5));
        d[i] = (float)(0.8 * t[i] + 2.0 * (u - 0.5));
        if (k % 7 == 3 && i % 3 == 0)
            d[i] = t[i]; /* ties of q/p */
        if (k % 6 == 2 && i > V / 2)
            t[i] = -INFINITY; /* zeros of p */
        if (k % 9 == 4 && i == 5)
            t[i] += 60.0f; /* near one-hot */
    }
}

/* iid alpha* summed in long double over an independent sort of q/p: the reference
 * that showed the buckets' plain sums 55 ulp off (now Kahan sums, qporder.c). */
static const double *cmp_p, *cmp_q;
static int by_ratio(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    long double ri = cmp_p[i] > 0 ? (long double)cmp_q[i] / cmp_p[i] : INFINITY;
    long double rj = cmp_p[j] > 0 ? (long double)cmp_q[j] / cmp_p[j] : INFINITY;
    return ri > rj ? -1 : ri < rj ? 1 : (i > j) - (i < j);
}
static double iid_long_double(const double *p, const double *q, size_t V, size_t n)
{
    size_t *idx = malloc(V * sizeof *idx), m = 0;
    for (size_t i = 0; i < V; i++)
        if (q[i] > 0)
            idx[m++] = i;
    cmp_p = p, cmp_q = q;
    qsort(idx, m, sizeof *idx, by_ratio);
    long double P = 0, S = 0, best = 0;
    for (size_t k = 0; k < m; k++) {
        P += p[idx[k]], S += q[idx[k]];
        long double f = P - powl(S > 1 ? 1 : S, (long double)n);
        best = f < best ? f : best;
    }
    free(idx);
    return (double)(1 + best);
}

Test(table_routes, every_position_agrees_with_the_full_order_to_a_few_ulp, .timeout = 300)
{
    const size_t sizes[] = {5000, 32000};
    const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR, MDSD_SCHEME_CPS};
    const size_t counts[] = {2, 3, 5};
    double worst = 0.0;
    size_t checked = 0, moved = 0;
    for (size_t v = 0; v < 2; v++) {
        size_t V = sizes[v];
        float *t = malloc(V * sizeof *t), *d = malloc(V * sizeof *d);
        mdsd_err err;
        mdsd_position_worker *w = mdsd_position_workers_alloc(1, V, 8, "test", &err);
        cr_assert(t && d && w, "%s", err.msg);
        mdsd_bound_workspace *ref_ws = mdsd_bound_workspace_alloc(V, 8, &err);
        cr_assert(ref_ws);
        for (size_t k = 0; k < (v ? 24 : 60); k++) {
            double T;
            make_row(k, V, t, d, &T);
            mdsd_position_settings st = {.T = T, .top_p = 1.0, .who = "test"};
            cr_assert_eq(mdsd_position_pq(&st, w, t, NULL, d, NULL, V, &err), MDSD_OK, "%s", err.msg);
            for (size_t a = 0; a < 3; a++)
                for (size_t c = 0; c < 3; c++) {
                    mdsd_scheme s = {kinds[a], counts[c], V, w->q, NULL};
                    double got;
                    cr_assert_eq(mdsd_position_alpha(w, &s, &got, &err), MDSD_OK, "%s", err.msg);
                    mdsd_bound_opts full = {.full_sort = true};
                    mdsd_bound_result ref = {0};
                    cr_assert_eq(mdsd_bound_alpha(w->p, &s, MDSD_BOUND_AUTO, &full, ref_ws, &ref, &err),
                                 MDSD_OK, "%s", err.msg);
                    double dev = fabs(got - ref.alpha);
                    worst = dev > worst ? dev : worst;
                    moved += dev > 0;
                    checked++;
                    /* the same minimum up to the order of additions (wor: and the
                     * quadrature's error, MATH.md §2.4) */
                    double tol = (kinds[a] == MDSD_SCHEME_IID ? 8 : 16) * DBL_EPSILON;
                    if (kinds[a] == MDSD_SCHEME_IID) { /* and closer to the truth than the full order */
                        double ld = iid_long_double(w->p, w->q, V, counts[c]);
                        cr_assert(fabs(got - ld) <= 4 * DBL_EPSILON, "V = %zu row %zu T = %g iid n = %zu: "
                                  "%.17g, long double %.17g", V, k, T, counts[c], got, ld);
                    }
                    cr_assert(dev <= tol, "V = %zu row %zu T = %g %s n = %zu: %.17g vs full order %.17g "
                              "(%.3g ulp)", V, k, T, mdsd_scheme_name(kinds[a]), counts[c], got, ref.alpha,
                              dev / DBL_EPSILON);
                }
        }
        mdsd_bound_workspace_free(ref_ws);
        mdsd_position_workers_free(w, 1);
        free(t), free(d);
    }
    cr_log_info("%zu per-position values, %zu moved, worst %.3g (%.2f ulp of 1)", checked, moved, worst,
                worst / DBL_EPSILON);
}
