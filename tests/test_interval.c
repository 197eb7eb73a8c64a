/* test_interval.c - the certified interval of alpha*(iid) on truncated rows
 * (src/core/interval.c, MATH.md §2.9) against brute force: alpha* is jointly
 * concave in (p, q), so its minimum over the completions is attained at a
 * vertex of the completion polytopes (every unseen mass 0 or the cap, but at
 * most one), and those are enumerated here with alpha* by subset enumeration.
 * alpha_lo must equal that minimum to 1e-9; alpha_hi must lie above every
 * completion tried (the vertices, random interior points) and the true row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "interval.h"
#include "testutil.h"

#define VMAX 8

typedef struct {
    double full[VMAX];   /* the true row */
    double known[VMAX];  /* kept probability, -1 = unseen */
    size_t unseen[VMAX], s;
    double missing, cap;
} trunc_row;

/* Keeps the k largest entries (ties by index), the rest unseen. */
static void truncate_row(const double *full, size_t V, size_t k, trunc_row *r)
{
    memcpy(r->full, full, V * sizeof *full);
    bool keep[VMAX] = {0};
    for (size_t t = 0; t < k; t++) {
        size_t best = V;
        for (size_t x = 0; x < V; x++)
            if (!keep[x] && (best == V || full[x] > full[best]))
                best = x;
        keep[best] = true;
    }
    r->s = 0, r->missing = 0, r->cap = INFINITY;
    for (size_t x = 0; x < V; x++) {
        r->known[x] = keep[x] ? full[x] : -1;
        if (keep[x])
            r->cap = fmin(r->cap, full[x]);
        else
            r->unseen[r->s++] = x, r->missing += full[x];
    }
    if (r->s == 0)
        r->cap = 0;
}

/* The vertices of {unseen masses in [0, cap], summing to missing}: f = the
 * whole caps that fit, one remainder. Calls back with each completion. */
typedef void (*visit_fn)(const double *completion, void *ctx);

static void vertices(const trunc_row *r, size_t V, visit_fn fn, void *ctx)
{
    double c[VMAX];
    memcpy(c, r->known, V * sizeof *c);
    if (r->s == 0) {
        fn(c, ctx);
        return;
    }
    size_t f = r->cap > 0 ? (size_t)floor(r->missing / r->cap + 1e-12) : 0;
    if (f > r->s)
        f = r->s;
    double rem = fmax(0, r->missing - (double)f * r->cap);
    for (unsigned mask = 0; mask < 1u << r->s; mask++) {
        if ((size_t)__builtin_popcount(mask) != f)
            continue;
        for (size_t t = 0; t <= r->s; t++) { /* t = s: no remainder coordinate */
            if (t < r->s && (mask >> t & 1))
                continue;
            if ((t == r->s) != (rem <= 1e-15))
                continue;
            for (size_t i = 0; i < r->s; i++)
                c[r->unseen[i]] = (mask >> i & 1) ? r->cap : i == t ? rem : 0;
            fn(c, ctx);
        }
    }
}

typedef struct {
    const trunc_row *q;
    size_t V, n;
    const double *p;
    double min, max;
} pair_ctx;

static double brute(const double *p, const double *q, size_t V, size_t n)
{
    mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
    return test_bound_alpha(p, &s, MDSD_BOUND_BRUTE, NULL, NULL, NULL);
}

static void visit_q(const double *qc, void *ctx)
{
    pair_ctx *c = ctx;
    double a = brute(c->p, qc, c->V, c->n);
    c->min = fmin(c->min, a), c->max = fmax(c->max, a);
}

static void visit_p(const double *pc, void *ctx)
{
    pair_ctx *c = ctx;
    pair_ctx inner = *c;
    inner.p = pc;
    vertices(c->q, c->V, visit_q, &inner);
    c->min = inner.min, c->max = inner.max;
}

/* A random point of the completion polytope: the remainder moved between
 * pairs of unseen tokens from a vertex, as far as the caps allow. */
static void interior(const trunc_row *r, size_t V, gsl_rng *g, double *out)
{
    memcpy(out, r->known, V * sizeof *out);
    for (size_t i = 0; i < r->s; i++)
        out[r->unseen[i]] = r->missing / (double)r->s;
    for (int step = 0; step < 20 && r->s >= 2; step++) {
        size_t a = r->unseen[gsl_rng_uniform_int(g, r->s)], b = r->unseen[gsl_rng_uniform_int(g, r->s)];
        double room = fmin(r->cap - out[a], out[b]);
        double d = gsl_rng_uniform(g) * room;
        if (a != b && room > 0)
            out[a] += d, out[b] -= d;
    }
}

static void random_row(gsl_rng *g, size_t V, int kind, double *x)
{
    double s = 0;
    for (size_t v = 0; v < V; v++) {
        double z = gsl_ran_gaussian(g, kind == 0 ? 1.0 : kind == 1 ? 4.0 : 0.0);
        x[v] = kind == 3 ? (v == 0 ? 1.0 : 1e-9) : kind == 4 ? (v % 2 ? 0.0 : 1.0) : exp(z);
        s += x[v];
    }
    for (size_t v = 0; v < V; v++)
        x[v] /= s;
}

/* 1 + min over all 2^V sets H of the closed-form inner extremum of
 * p(H) - q(H)^n (interval.c's header): lo with hi = false, the min-max with
 * hi = true. The fast routes must equal these exactly. */
static double by_subsets(const trunc_row *tp, const trunc_row *tq, size_t V, size_t n, bool hi)
{
    double best = 0;
    for (unsigned H = 0; H < 1u << V; H++) {
        double pk = 0, qk = 0, in_up = 0, out_up = 0, in_uq = 0, out_uq = 0;
        for (size_t x = 0; x < V; x++) {
            bool in = H >> x & 1;
            if (tp->known[x] >= 0)
                pk += in ? tp->known[x] : 0;
            else
                in ? in_up++ : out_up++;
            if (tq->known[x] >= 0)
                qk += in ? tq->known[x] : 0;
            else
                in ? in_uq++ : out_uq++;
        }
        double f = hi ? pk + fmin(tp->missing, in_up * tp->cap) -
                            pow(qk + fmax(0, tq->missing - out_uq * tq->cap), (double)n)
                      : pk + fmax(0, tp->missing - out_up * tp->cap) -
                            pow(qk + fmin(tq->missing, in_uq * tq->cap), (double)n);
        best = fmin(best, f);
    }
    return 1 + best;
}

static void check_instance(const trunc_row *tp, const trunc_row *tq, size_t V, size_t n, gsl_rng *g,
                           const char *what)
{
    mdsd_interval_ws *ws = mdsd_interval_ws_alloc(V);
    mdsd_partial_row pr = {tp->known, tp->missing, tp->cap}, qr = {tq->known, tq->missing, tq->cap};
    double lo, hi;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_interval_iid(&pr, &qr, V, n, ws, &lo, &hi, &err), MDSD_OK, "%s: %s", what, err.msg);
    pair_ctx c = {tq, V, n, NULL, INFINITY, -INFINITY};
    vertices(tp, V, visit_p, &c);
    cr_assert(fabs(lo - c.min) <= 1e-9, "%s: alpha_lo %.17g, brute-force minimum %.17g", what, lo, c.min);
    cr_assert(hi >= c.max - 1e-9, "%s: alpha_hi %.17g below a vertex completion's %.17g", what, hi, c.max);
    double lo_ref = by_subsets(tp, tq, V, n, false), hi_ref = fmin(1, by_subsets(tp, tq, V, n, true));
    cr_assert(fabs(lo - lo_ref) <= 1e-12, "%s: alpha_lo %.17g, over all subsets %.17g", what, lo, lo_ref);
    cr_assert(fabs(hi - hi_ref) <= 1e-12, "%s: alpha_hi %.17g, min-max over all subsets %.17g", what, hi, hi_ref);
    double truth = brute(tp->full, tq->full, V, n);
    cr_assert(truth >= lo - 1e-9 && truth <= hi + 1e-9, "%s: true alpha* %.17g outside [%.17g, %.17g]",
              what, truth, lo, hi);
    for (int t = 0; t < 8; t++) {
        double pc[VMAX], qc[VMAX];
        interior(tp, V, g, pc), interior(tq, V, g, qc);
        double a = brute(pc, qc, V, n);
        cr_assert(a >= lo - 1e-9 && a <= hi + 1e-9, "%s: completion's alpha* %.17g outside [%.17g, %.17g]",
                  what, a, lo, hi);
    }
    mdsd_interval_ws_free(ws);
}

Test(interval, lo_is_the_brute_force_minimum_and_hi_bounds_every_completion)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 20261203);
    size_t checked = 0;
    for (int it = 0; it < 3000; it++) {
        size_t V = 2 + gsl_rng_uniform_int(g, VMAX - 1);
        size_t n = 1 + gsl_rng_uniform_int(g, 4);
        double p[VMAX], q[VMAX];
        random_row(g, V, (int)gsl_rng_uniform_int(g, 5), p);
        random_row(g, V, (int)gsl_rng_uniform_int(g, 5), q);
        if (it % 7 == 0)
            memcpy(q, p, sizeof p); /* ties between the models */
        size_t kp = 1 + gsl_rng_uniform_int(g, V), kq = 1 + gsl_rng_uniform_int(g, V);
        if (it % 5 == 0)
            kp = V; /* a complete target beside a truncated draft */
        if (it % 5 == 1)
            kq = V;
        trunc_row tp, tq;
        truncate_row(p, V, kp, &tp), truncate_row(q, V, kq, &tq);
        char what[128];
        snprintf(what, sizeof what, "instance %d (V %zu, n %zu, k %zu/%zu)", it, V, n, kp, kq);
        check_instance(&tp, &tq, V, n, g, what);
        checked++;
    }
    cr_assert_eq(checked, 3000);
    gsl_rng_free(g);
}

/* Complete rows: the interval is the point alpha*. */
Test(interval, complete_rows_give_the_point)
{
    double p[4] = {0.4, 0.3, 0.2, 0.1}, q[4] = {0.1, 0.2, 0.3, 0.4};
    mdsd_partial_row pr = {p, 0, 0}, qr = {q, 0, 0};
    mdsd_interval_ws *ws = mdsd_interval_ws_alloc(4);
    for (size_t n = 1; n <= 4; n++) {
        double lo, hi;
        cr_assert_eq(mdsd_interval_iid(&pr, &qr, 4, n, ws, &lo, &hi, NULL), MDSD_OK);
        double want = brute(p, q, 4, n);
        cr_assert_float_eq(lo, want, 1e-12);
        cr_assert_float_eq(hi, want, 1e-12);
    }
    mdsd_interval_ws_free(ws);
}

/* A record that cannot be a top-k row is refused, naming the model. */
Test(interval, an_impossible_record_is_refused)
{
    double p[3] = {0.5, 0.1, -1}, q[3] = {0.2, 0.3, 0.5};
    mdsd_partial_row pr = {p, 0.4, 0.1}, qr = {q, 0, 0}; /* 0.4 in one token of at most 0.1 */
    mdsd_interval_ws *ws = mdsd_interval_ws_alloc(3);
    double lo, hi;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_interval_iid(&pr, &qr, 3, 2, ws, &lo, &hi, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "target row") && strstr(err.msg, "0.4"), "%s", err.msg);
    double p2[3] = {0.6, 0.4, 0.0};
    pr = (mdsd_partial_row){p2, 0.1, 0.4}; /* mass missing, nothing unseen */
    cr_assert_eq(mdsd_interval_iid(&pr, &qr, 3, 2, ws, &lo, &hi, &err), MDSD_EINVAL);
    mdsd_interval_ws_free(ws);
}

/* ---- larger rows: the windows, kinks and divide-and-conquer against a plain
 * enumeration of every count (a, b, j) and every prefix of the q/p order ---- */

#define BIG 64

static int cmp_up(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const double *g_p, *g_q;
static int cmp_ratio(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    double rx = g_p[x] == 0 ? INFINITY : g_q[x] / g_p[x], ry = g_p[y] == 0 ? INFINITY : g_q[y] / g_p[y];
    return rx > ry ? -1 : rx < ry ? 1 : x - y;
}

/* Every a in [0, |K_p|], b in [0, |K_q|], j in [0, u] and prefix i (Lemma 1 and
 * the selections of Thm A / B; none of the windows, kinks or minima search). */
static void plain_interval(const double *kp_row, double mp, double cp, const double *kq_row, double mq,
                           double cq, size_t V, size_t n, double *lo, double *hi)
{
    double kp[BIG], kq[BIG], P[BIG + 1] = {0}, Q[BIG + 1] = {0}, SP[BIG + 1] = {0}, SQ[BIG + 1] = {0};
    int pq[BIG];
    size_t nkp = 0, nkq = 0, kpq = 0, u = 0;
    for (size_t x = 0; x < V; x++) {
        bool pk = kp_row[x] >= 0, qk = kq_row[x] >= 0;
        if (pk && qk && kq_row[x] > 0)
            pq[kpq++] = (int)x;
        else if (pk && !qk)
            kp[nkp++] = kp_row[x];
        else if (!pk && qk)
            kq[nkq++] = kq_row[x];
        else if (!pk && !qk)
            u++;
    }
    g_p = kp_row, g_q = kq_row;
    qsort(pq, kpq, sizeof *pq, cmp_ratio);
    qsort(kp, nkp, sizeof *kp, cmp_up);
    qsort(kq, nkq, sizeof *kq, cmp_up);
    for (size_t i = 0; i < kpq; i++)
        P[i + 1] = P[i] + kp_row[pq[i]], Q[i + 1] = Q[i] + kq_row[pq[i]];
    for (size_t a = 0; a < nkp; a++)
        SP[a + 1] = SP[a] + kp[a];
    for (size_t b = 0; b < nkq; b++)
        SQ[b + 1] = SQ[b] + kq[nkq - 1 - b]; /* the largest first */
    double bl = 0, bh = 0;
    for (size_t a = 0; a <= nkp; a++)
        for (size_t b = 0; b <= nkq; b++)
            for (size_t j = 0; j <= u; j++)
                for (size_t i = 0; i <= kpq; i++) {
                    double outp = (double)(nkq - b + u - j), inp = (double)(b + j);
                    double inq = (double)(a + j), outq = (double)(nkp - a + u - j);
                    double fl = P[i] + SP[a] + fmax(0, mp - outp * cp) -
                                pow(Q[i] + SQ[b] + fmin(mq, inq * cq), (double)n);
                    double fh = P[i] + SP[a] + fmin(mp, inp * cp) -
                                pow(Q[i] + SQ[b] + fmax(0, mq - outq * cq), (double)n);
                    bl = fmin(bl, fl), bh = fmin(bh, fh);
                }
    *lo = fmax(0, 1 + bl), *hi = fmin(1, 1 + bh);
}

static void big_truncated(gsl_rng *g, size_t V, size_t k, double spread, double *known, double *m,
                          double *c)
{
    double full[BIG], s = 0;
    for (size_t v = 0; v < V; v++)
        s += full[v] = exp(spread * gsl_ran_gaussian(g, 1.0));
    int idx[BIG];
    for (size_t v = 0; v < V; v++)
        full[v] /= s, idx[v] = (int)v;
    for (size_t t = 0; t < k; t++) /* partial selection sort: the k largest first */
        for (size_t v = t + 1; v < V; v++)
            if (full[idx[v]] > full[idx[t]]) {
                int x = idx[t];
                idx[t] = idx[v], idx[v] = x;
            }
    *m = 0, *c = INFINITY;
    for (size_t v = 0; v < V; v++)
        known[v] = -1;
    for (size_t t = 0; t < k; t++)
        known[idx[t]] = full[idx[t]], *c = fmin(*c, full[idx[t]]);
    for (size_t t = k; t < V; t++)
        *m += full[idx[t]];
    if (k == V)
        *c = 0;
}

Test(interval, windows_and_minima_search_equal_a_plain_enumeration_on_larger_rows)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 7);
    mdsd_interval_ws *ws = mdsd_interval_ws_alloc(BIG);
    for (int it = 0; it < 60; it++) {
        size_t V = 20 + gsl_rng_uniform_int(g, BIG - 20), n = 1 + gsl_rng_uniform_int(g, 4);
        size_t kp = 1 + gsl_rng_uniform_int(g, V), kq = 1 + gsl_rng_uniform_int(g, V);
        if (it % 6 == 0)
            kp = V;
        double p[BIG], q[BIG], mp, mq, cp, cq;
        big_truncated(g, V, kp, 0.5 + 2.0 * gsl_rng_uniform(g), p, &mp, &cp);
        big_truncated(g, V, kq, 0.5 + 2.0 * gsl_rng_uniform(g), q, &mq, &cq);
        mdsd_partial_row pr = {p, mp, cp}, qr = {q, mq, cq};
        double lo, hi, want_lo, want_hi;
        mdsd_err err;
        mdsd_err_clear(&err);
        cr_assert_eq(mdsd_interval_iid(&pr, &qr, V, n, ws, &lo, &hi, &err), MDSD_OK, "%s", err.msg);
        plain_interval(p, mp, cp, q, mq, cq, V, n, &want_lo, &want_hi);
        cr_assert(fabs(lo - want_lo) <= 1e-12 && fabs(hi - want_hi) <= 1e-12,
                  "instance %d (V %zu, n %zu, k %zu/%zu): [%.17g, %.17g], plain [%.17g, %.17g]", it, V,
                  n, kp, kq, lo, hi, want_lo, want_hi);
    }
    mdsd_interval_ws_free(ws);
    gsl_rng_free(g);
}
