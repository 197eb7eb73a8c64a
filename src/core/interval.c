/* interval.c - [alpha_lo, alpha_hi] of alpha*(iid, n) over the completions of
 * truncated rows (interval.h; the derivation and proofs are MATH.md §2.9,
 * derived here from §2.3's subset form, not taken from a paper).
 *
 * alpha*(p, q) = 1 + min_H [p(H) - q(H)^n]. Tokens fall in four classes:
 * K_pq (known in both rows), K_p (known in p, unseen in q), K_q (unseen in p,
 * known in q) and U (unseen in both, u of them). For a fixed H the unseen
 * masses enter only through how many unseen tokens H holds, so
 *   lo: min over completions of p(H) - q(H)^n
 *       = p_k(H) + max(0, m_p - |H^c n U_p| c_p) - (q_k(H) + min(m_q, |H n U_q| c_q))^n
 *   hi: max over completions of p(H) - q(H)^n
 *       = p_k(H) + min(m_p, |H n U_p| c_p) - (q_k(H) + max(0, m_q - |H^c n U_q| c_q))^n
 * (U_p = K_q u U, U_q = K_p u U; c = the caps). lo = 1 + min_H of the first
 * (exchanging the two minima), hi = 1 + min_H of the second (>= max-min).
 * Given the counts a = |H n K_p|, b = |H n K_q|, j = |H n U|, the best H takes
 * the a smallest p of K_p, the b largest q of K_q, and a prefix of K_pq in
 * sort-and-scan's q/p order (Thm A's lemma); in j the objective is concave
 * between its two kinks, so j needs only 0, u and the integers next to the
 * kinks. a and b run over windows outside which an end value dominates. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "interval.h"
#include "qporder.h"

/* One candidate (a, b, j) of either end: its objective is
 * base + min_i [P_i - (Q_i + extra)^n]. */
struct query {
    double extra, base;
    int hi; /* 0: alpha_lo, 1: alpha_hi */
};

struct mdsd_interval_ws {
    size_t V;
    double *cp, *cq;     /* [V] p and q of the K_pq tokens with q > 0, by token id */
    mdsd_qp_order order; /* sort-and-scan's q/p order of cp, cq (qporder.h) */
    double *kp, *kq;     /* [V] p of K_p ascending, q of K_q descending */
    double *P, *Q;       /* [V + 1] prefix sums of cp, cq along the q/p order */
    double *SP, *SQ;     /* [V + 1] prefix sums of kp, kq */
    struct query *query; /* [query_cap] the (a, b, j) candidates of one call */
    size_t query_cap;
};

mdsd_interval_ws *mdsd_interval_ws_alloc(size_t V)
{
    mdsd_interval_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->V = V;
    w->cp = malloc(V * sizeof *w->cp), w->cq = malloc(V * sizeof *w->cq);
    w->kp = malloc(V * sizeof *w->kp), w->kq = malloc(V * sizeof *w->kq);
    w->P = malloc((V + 1) * sizeof *w->P), w->Q = malloc((V + 1) * sizeof *w->Q);
    w->SP = malloc((V + 1) * sizeof *w->SP), w->SQ = malloc((V + 1) * sizeof *w->SQ);
    if (!w->cp || !w->cq || !w->kp || !w->kq || !w->P || !w->Q || !w->SP || !w->SQ ||
        mdsd_qp_order_init(&w->order, V, NULL) != MDSD_OK) {
        mdsd_interval_ws_free(w);
        return NULL;
    }
    return w;
}

void mdsd_interval_ws_free(mdsd_interval_ws *w)
{
    if (!w)
        return;
    mdsd_qp_order_destroy(&w->order);
    free(w->cp), free(w->cq), free(w->kp), free(w->kq), free(w->P), free(w->Q), free(w->SP), free(w->SQ);
    free(w->query);
    free(w);
}

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int descending(const void *a, const void *b)
{
    return ascending(b, a);
}

static double power(double x, size_t n)
{
    double r = 1;
    for (size_t i = 0; i < n; i++)
        r *= x;
    return r;
}

/* m / c, 0 when nothing is missing (c may be 0 then) */
static double slots(double m, double c)
{
    return m > 0 ? m / c : 0;
}

static int by_extra(const void *a, const void *b)
{
    double x = ((const struct query *)a)->extra, y = ((const struct query *)b)->extra;
    return x < y ? -1 : x > y;
}

/* Lemma 4 of MATH.md §2.9: the largest minimiser over i of
 * P_i - (Q_i + e)^n does not decrease with e (Q_i does not decrease with i,
 * so the difference of two prefixes' values is monotone in e). So the
 * queries sorted by extra find their minimisers by divide and conquer over
 * shrinking ranges of i: O((queries + k_pq) log queries), not their product.
 * best[0], best[1]: the smallest objective of the lo and hi queries. */
static void monotone_minima(const mdsd_interval_ws *w, const struct query *q, size_t q0, size_t q1,
                            size_t i0, size_t i1, size_t n, double best[2])
{
    while (q0 < q1) {
        size_t mid = q0 + (q1 - q0) / 2, arg = i0;
        double e = q[mid].extra, g = INFINITY;
        for (size_t i = i0; i <= i1; i++) {
            double v = w->P[i] - power(w->Q[i] + e, n);
            if (v <= g)
                g = v, arg = i; /* ties: the largest */
        }
        double f = w->P[arg] + q[mid].base - power(w->Q[arg] + e, n);
        if (f < best[q[mid].hi])
            best[q[mid].hi] = f;
        monotone_minima(w, q, q0, mid, i0, arg, n, best);
        q0 = mid + 1, i0 = arg; /* the right half in this frame */
    }
}

static int add_query(mdsd_interval_ws *w, size_t *count, double base, double extra, int hi)
{
    if (*count == w->query_cap) {
        size_t cap = w->query_cap ? 2 * w->query_cap : 1024;
        struct query *g = realloc(w->query, cap * sizeof *g);
        if (!g)
            return MDSD_ENOMEM;
        w->query = g, w->query_cap = cap;
    }
    w->query[(*count)++] = (struct query){extra, base, hi};
    return MDSD_OK;
}

/* The candidate counts j in [0, u]: the ends and the integers beside two kinks. */
static size_t j_candidates(double u, double kink1, double kink2, double out[6])
{
    size_t c = 0;
    out[c++] = 0;
    out[c++] = u;
    double kinks[2] = {kink1, kink2};
    for (int t = 0; t < 2; t++) {
        double f = floor(kinks[t]), g = ceil(kinks[t]);
        if (f > 0 && f < u)
            out[c++] = f;
        if (g > 0 && g < u && g != f)
            out[c++] = g;
    }
    return c;
}

static int check_record(const mdsd_partial_row *r, size_t unseen, const char *who, mdsd_err *err)
{
    if (!(r->missing >= 0 && r->missing <= 1 && r->cap >= 0))
        return mdsd_fail(err, MDSD_EINVAL, "%s row: missing mass %.17g or cap %.17g out of range",
                         who, r->missing, r->cap);
    if (r->missing > 0 && !((double)unseen * r->cap >= r->missing * (1 - 1e-12)))
        return mdsd_fail(err, MDSD_EINVAL, "%s row: a missing mass of %.17g cannot be spread over "
                         "its %zu unseen tokens with none above the smallest kept probability "
                         "%.17g (the row is not a top-k row of a distribution over this vocabulary)",
                         who, r->missing, unseen, r->cap);
    return MDSD_OK;
}

int mdsd_interval_iid(const mdsd_partial_row *p, const mdsd_partial_row *q, size_t V, size_t n,
                      mdsd_interval_ws *w, double *lo, double *hi, mdsd_err *err)
{
    if (V > w->V || n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "interval: V = %zu (workspace %zu), n = %zu", V, w->V, n);
    size_t kpq = 0, nkp = 0, nkq = 0, un = 0, unseen_p = 0, unseen_q = 0, zp = 0;
    for (size_t x = 0; x < V; x++) {
        bool pk = p->prob[x] >= 0, qk = q->prob[x] >= 0;
        unseen_p += !pk, unseen_q += !qk;
        if (pk && qk) {
            if (q->prob[x] > 0) { /* q = 0 tokens add p >= 0 and no q: never needed */
                w->cp[kpq] = p->prob[x], w->cq[kpq] = q->prob[x];
                kpq++;
            }
        } else if (pk) {
            w->kp[nkp++] = p->prob[x];
            zp += p->prob[x] == 0;
        } else if (qk) {
            w->kq[nkq++] = q->prob[x];
        } else {
            un++;
        }
    }
    int bad = check_record(p, unseen_p, "target", err);
    if (bad == MDSD_OK)
        bad = check_record(q, unseen_q, "draft", err);
    if (bad)
        return bad;
    /* K_pq in token order, so sort-and-scan's order of the compacted rows (p = 0 first, then
     * q/p decreasing, ties by index) is its order on these tokens; every one has q > 0, so
     * all kpq are scanned */
    mdsd_qp_order_compute(&w->order, w->cp, w->cq, kpq);
    const uint32_t *by_ratio = w->order.order;
    qsort(w->kp, nkp, sizeof *w->kp, ascending);
    qsort(w->kq, nkq, sizeof *w->kq, descending);
    w->P[0] = w->Q[0] = w->SP[0] = w->SQ[0] = 0;
    for (size_t i = 0; i < kpq; i++) {
        w->P[i + 1] = w->P[i] + w->cp[by_ratio[i]];
        w->Q[i + 1] = w->Q[i] + w->cq[by_ratio[i]];
    }
    for (size_t a = 0; a < nkp; a++)
        w->SP[a + 1] = w->SP[a] + w->kp[a];
    for (size_t b = 0; b < nkq; b++)
        w->SQ[b + 1] = w->SQ[b] + w->kq[b];

    const double mp = p->missing, mq = q->missing, cp = p->cap, cq = q->cap;
    const double sp = slots(mp, cp), sq = slots(mq, cq), u = (double)un;
    const double NKp = (double)nkp, NKq = (double)nkq;

    /* lo windows: a past max(zp, ceil(sq)) only adds p (q saturated);
     * b below floor(NKq - sp) leaves the p term 0 while q(H) grows */
    double a_end = fmax((double)zp, ceil(sq));
    size_t a_lo_end = a_end < NKp ? (size_t)a_end : nkp;
    double b0 = floor(NKq - sp);
    size_t b_lo_begin = b0 > 0 ? (size_t)b0 : 0;
    /* hi windows: a in {0} and past floor(NKp - sq) (the q floor is 0 below);
     * b up to ceil(sp) (the p term saturates), and nkq */
    double a1 = floor(NKp - sq);
    size_t a_hi_begin = a1 > 0 ? (size_t)a1 : 0;
    size_t b_hi_end = ceil(sp) < NKq ? (size_t)ceil(sp) : nkq;
    double work = ((double)a_lo_end + 1) * (NKq - (double)b_lo_begin + 1) +
                  (NKp - (double)a_hi_begin + 2) * ((double)b_hi_end + 2);
    if (work * 6 > MDSD_INTERVAL_MAX_QUERIES)
        return mdsd_fail(err, MDSD_ETOOBIG, "interval: windows of %.0f (a, b) pairs: more than "
                         "%.0g candidates for one row (a missing mass of many times the smallest "
                         "kept probability)", work, MDSD_INTERVAL_MAX_QUERIES);
    int rc = MDSD_OK;

    double js[6];
    size_t count = 0;
    for (size_t a = 0; a <= a_lo_end && rc == MDSD_OK; a++)
        for (size_t b = b_lo_begin; b <= nkq && rc == MDSD_OK; b++) {
            double rest_p = NKq - (double)b + u; /* |H^c n U_p| = rest_p - j */
            size_t nj = j_candidates(u, rest_p - sp, sq - (double)a, js);
            for (size_t t = 0; t < nj && rc == MDSD_OK; t++) {
                double j = js[t];
                rc = add_query(w, &count, w->SP[a] + fmax(0, mp - (rest_p - j) * cp),
                               w->SQ[b] + fmin(mq, ((double)a + j) * cq), 0);
            }
        }
    for (size_t a = 0; a <= nkp && rc == MDSD_OK; a = a == 0 && a_hi_begin > 1 ? a_hi_begin : a + 1)
        for (size_t b = 0; b <= nkq && rc == MDSD_OK;
             b = b < b_hi_end ? b + 1 : (b < nkq ? nkq : nkq + 1)) {
            double rest_q = NKp - (double)a + u; /* |H^c n U_q| = rest_q - j */
            size_t nj = j_candidates(u, sp - (double)b, rest_q - sq, js);
            for (size_t t = 0; t < nj && rc == MDSD_OK; t++) {
                double j = js[t];
                rc = add_query(w, &count, w->SP[a] + fmin(mp, ((double)b + j) * cp),
                               w->SQ[b] + fmax(0, mq - (rest_q - j) * cq), 1);
            }
        }
    if (rc)
        return mdsd_fail(err, rc, "interval: out of memory for %zu candidates", count);
    qsort(w->query, count, sizeof *w->query, by_extra);
    double best[2] = {0, 0}; /* H = {} gives 0 for both */
    monotone_minima(w, w->query, 0, count, 0, kpq, n, best);
    double best_lo = best[0], best_hi = best[1];
    *lo = 1 + best_lo, *hi = 1 + best_hi;
    if (!(*lo >= -1e-12 && *hi <= 1 + 1e-12 && *lo <= *hi + 1e-12))
        return mdsd_fail(err, MDSD_ESOLVER, "interval: [%.17g, %.17g] is not an interval in [0, 1]; "
                         "please report this row", *lo, *hi);
    *lo = fmax(0, fmin(1, *lo)), *hi = fmax(*lo, fmin(1, *hi));
    return MDSD_OK;
}
