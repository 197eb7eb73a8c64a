#include "bound.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bsum.h"
#include "dist.h"
#include "simd.h"
#include "lp.h"
#include "maxflow.h"
#include "qporder.h"
#include "subset.h"
#include "wor_bucket.h"
#include "wor_q.h"

struct mdsd_bound_workspace {
    size_t V;             /* capacity */
    mdsd_qp_order ord;
    double *ps, *qs;      /* [V] p and q along the order (gathered once, scanned in turn) */
    uint32_t *ident;      /* [V] 0, 1, 2, ...: the chain over qs for wor */
    uint64_t tag;         /* opts->pq_tag of the order held (0 = none reusable) */
    size_t tag_V;
    double *P;            /* [V+1] p mass of prefixes */
    double *R;            /* [V+1] q mass of suffixes */
    double *num;          /* [V+1] cps: W_{n, H_i} */
    unsigned char *mark;  /* [V] greedy: the fixed tokens */
    mdsd_wor_chain *wor;  /* allocated at the first wor scan with n >= 3 */
    size_t wor_n;
    mdsd_wor_buckets *worb; /* wor without the full order: allocated at its first use */
    /* sort-free route: per bucket lower bound and flag, allocated at first use */
    double *blb;          /* [MDSD_QP_BUCKETS] */
    unsigned char *bflag; /* [MDSD_QP_BUCKETS] */
    double *besp;         /* cps: [buckets used * (n + 1)], grown as needed */
    size_t besp_cap;
};

static const char *const method_names[MDSD_BOUND_METHOD_COUNT] = {
    "auto", "lp-full", "lp-reduced", "brute", "sort", "k2", "maxflow", "all",
};

const char *mdsd_bound_method_name(mdsd_bound_method m)
{
    return m < MDSD_BOUND_METHOD_COUNT ? method_names[m] : "?";
}

int mdsd_bound_method_parse(const char *name, mdsd_bound_method *m, mdsd_err *err)
{
    for (int k = 0; k < MDSD_BOUND_METHOD_COUNT; k++)
        if (!strcmp(name, method_names[k])) {
            *m = (mdsd_bound_method)k;
            return MDSD_OK;
        }
    return mdsd_fail(err, MDSD_EINVAL,
                     "unknown method '%s' (expected auto, lp-full, lp-reduced, brute, sort, k2, "
                     "maxflow or all)", name);
}

static bool sort_applies(mdsd_scheme_kind k)
{
    return k == MDSD_SCHEME_IID || k == MDSD_SCHEME_WOR || k == MDSD_SCHEME_GREEDY ||
           k == MDSD_SCHEME_HUB || k == MDSD_SCHEME_CPS;
}

bool mdsd_bound_applies(mdsd_bound_method m, const mdsd_scheme *s)
{
    switch (m) {
    case MDSD_BOUND_AUTO:
    case MDSD_BOUND_LP_FULL:
    case MDSD_BOUND_LP_REDUCED:
    case MDSD_BOUND_BRUTE:
    case MDSD_BOUND_MAXFLOW: return true;
    case MDSD_BOUND_SORT: return sort_applies(s->kind);
    case MDSD_BOUND_K2: return s->kind == MDSD_SCHEME_IID && s->n == 2;
    default: return false;
    }
}

mdsd_bound_method mdsd_bound_auto_method(const mdsd_scheme *s)
{
    if (sort_applies(s->kind))
        return MDSD_BOUND_SORT;
    /* measured (multi, n = 2, 3): brute takes 2-6 us at V = 8, maxflow 6-22 us;
     * at V = 16 brute 650-700 us, maxflow 13-165 us */
    return s->V <= 10 ? MDSD_BOUND_BRUTE : MDSD_BOUND_MAXFLOW;
}

/* ---- workspace ------------------------------------------------------------ */

mdsd_bound_workspace *mdsd_bound_workspace_alloc(size_t V, size_t n, mdsd_err *err)
{
    mdsd_bound_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) {
        mdsd_fail(err, MDSD_ENOMEM, "bound workspace: out of memory");
        return NULL;
    }
    ws->V = V;
    if (mdsd_qp_order_init(&ws->ord, V, err)) {
        free(ws);
        return NULL;
    }
    ws->P = malloc((V + 1) * sizeof *ws->P);
    ws->R = malloc((V + 1) * sizeof *ws->R);
    ws->num = malloc((V + 1) * sizeof *ws->num);
    ws->mark = malloc(V + 1);
    ws->ps = malloc((V + 1) * sizeof *ws->ps);
    ws->qs = malloc((V + 1) * sizeof *ws->qs);
    ws->ident = malloc((V + 1) * sizeof *ws->ident);
    if (!ws->P || !ws->R || !ws->num || !ws->mark || !ws->ps || !ws->qs || !ws->ident) {
        mdsd_bound_workspace_free(ws);
        mdsd_fail(err, MDSD_ENOMEM, "bound workspace: out of memory for V = %zu", V);
        return NULL;
    }
    for (size_t k = 0; k <= V; k++)
        ws->ident[k] = (uint32_t)k;
    if (n >= 3) {
        ws->wor = mdsd_wor_chain_alloc(V, n, err);
        if (!ws->wor) {
            mdsd_bound_workspace_free(ws);
            return NULL;
        }
        ws->wor_n = n;
    }
    return ws;
}

void mdsd_bound_workspace_free(mdsd_bound_workspace *ws)
{
    if (!ws)
        return;
    mdsd_qp_order_destroy(&ws->ord);
    free(ws->P), free(ws->R), free(ws->num), free(ws->mark);
    free(ws->ps), free(ws->qs), free(ws->ident);
    free(ws->blb), free(ws->bflag), free(ws->besp);
    mdsd_wor_chain_free(ws->wor);
    mdsd_wor_buckets_free(ws->worb);
    free(ws);
}

static int finish_alpha(double alpha, mdsd_bound_result *res, const char *what, mdsd_err *err);

/* ---- shared helpers ---------------------------------------------------------- */

/* Branch-free min (minsd; fmin is a library call at -O2) and positive part
 * ((a + |a|) / 2 is exact: 2a or 0; a ternary compiles to a branch that the
 * data make unpredictable). */
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double positive_part(double a) { return 0.5 * (a + fabs(a)); }

/* x^n for a probability mass x: clamped to 1 first, since a rounded mass of
 * 1 + 1e-16 raised to a large n would leave [0, 1] by more than rounding. */
static inline double ipow(double x, size_t n)
{
    x = dmin(x, 1.0);
    if (n > 64)
        return pow(x, (double)n);
    double r = x;
    for (size_t j = 1; j < n; j++)
        r *= x;
    return n ? r : 1.0;
}

/* The q/p order of (p, q) and p, q gathered along it, unless the caller's
 * tag says that the workspace already holds them. */
static void order_of(mdsd_bound_workspace *ws, const double *p, const double *q, size_t V,
                     uint64_t tag)
{
    if (tag != 0 && tag == ws->tag && V == ws->tag_V)
        return;
    mdsd_qp_order_compute(&ws->ord, p, q, V);
    const uint32_t *o = ws->ord.order;
    for (size_t k = 0; k < ws->ord.n_scan; k++) {
        ws->ps[k] = p[o[k]];
        ws->qs[k] = q[o[k]];
    }
    ws->tag = tag;
    ws->tag_V = V;
}

/* P[i] = p mass of the first i scanned tokens (compensated). */
static void prefix_p(mdsd_bound_workspace *ws)
{
    const double *ps = ws->ps;
    mdsd_bsum s;
    mdsd_bsum_init(&s);
    ws->P[0] = 0.0;
    for (size_t k = 0; k < ws->ord.n_scan; k++) {
        mdsd_bsum_add(&s, ps[k]);
        ws->P[k + 1] = mdsd_bsum_value(&s);
    }
}

/* R[i] = q mass of the scanned tokens from position i on (compensated),
 * with qs[k] = q(order[k]). */
static void suffix_q(mdsd_bound_workspace *ws, const double *qs)
{
    size_t N = ws->ord.n_scan;
    mdsd_bsum s;
    mdsd_bsum_init(&s);
    ws->R[N] = 0.0;
    for (size_t k = N; k-- > 0;) {
        mdsd_bsum_add(&s, qs[k]);
        ws->R[k] = mdsd_bsum_value(&s);
    }
}

static void prefix_subset(const mdsd_bound_workspace *ws, size_t len, size_t V, unsigned char *H)
{
    memset(H, 0, V);
    for (size_t k = 0; k < len; k++)
        H[ws->ord.order[k]] = 1;
}

/* ---- sort-and-scan: iid, wor, cps ----------------------------------------- */

/* iid: Q(H) = q(H)^n. */
static void scan_iid(mdsd_bound_workspace *ws, size_t n, double *fmin, size_t *argmin)
{
    const double *ps = ws->ps, *qs = ws->qs;
    mdsd_bsum P, S;
    mdsd_bsum_init(&P);
    mdsd_bsum_init(&S);
    double best = 0.0;
    size_t best_i = 0;
    for (size_t k = 0; k < ws->ord.n_scan; k++) {
        mdsd_bsum_add(&P, ps[k]);
        mdsd_bsum_add(&S, qs[k]);
        double f = mdsd_bsum_value(&P) - ipow(mdsd_bsum_value(&S), n);
        if (f < best)
            best = f, best_i = k + 1;
    }
    *fmin = best;
    *argmin = best_i;
}

/* The sort-free routes' first step: the tokens into the buckets of
 * ws->ord (which drops the workspace's tagged order) and the per-bucket
 * bound and flag arrays, allocated at the first use. */
static int fill_buckets(mdsd_bound_workspace *ws, const double *p, const double *q, size_t V,
                        mdsd_err *err)
{
    ws->tag = 0;
    int rc = mdsd_qp_bucket_fill(&ws->ord, p, q, V, err);
    if (rc)
        return rc;
    if (!ws->blb) {
        ws->blb = malloc(MDSD_QP_BUCKETS * sizeof *ws->blb);
        ws->bflag = malloc(MDSD_QP_BUCKETS);
        if (!ws->blb || !ws->bflag)
            return mdsd_fail(err, MDSD_ENOMEM, "sort-and-scan: out of memory for the buckets");
    }
    return MDSD_OK;
}

/* Flags the buckets of more than one token whose lower bound lb (ws->blb)
 * does not clear the best boundary value by the rounding slack (the bound
 * and the slack are argued at scan_iid_buckets below): the only buckets
 * sorted and scanned token by token. Returns how many. */
static size_t flag_buckets(mdsd_bound_workspace *ws, size_t n, size_t V, double best)
{
    const mdsd_qp_order *o = &ws->ord;
    double slack = (double)(n + 4) * ((double)V + 16.0) * DBL_EPSILON;
    size_t flagged = 0;
    for (uint32_t k = o->lo; k <= o->hi; k++) {
        bool need = o->bucket[k].n > 1 && !(ws->blb[k - o->lo] > best + slack);
        ws->bflag[k - o->lo] = need;
        flagged += need;
    }
    return flagged;
}

/* iid without the full order (MATH.md §2.4, "sort-free"). The scanned
 * tokens go into buckets of their float q/p (qporder.h: every token of
 * bucket k precedes every token of bucket k + 1 in the exact order), with
 * each bucket's sums of p and q, in one pass. Let P0, S0 be the p and q
 * mass of the buckets before k (exact prefixes of the order), B the bucket's
 * tokens, Q(s) = s^n. A prefix ending inside B adds the first tokens of B in
 * the exact order, of q mass s in [0, q(B)] and p mass >= s / r_hi (each has
 * q/p <= r_hi, mdsd_qp_bucket_ratio_hi), so
 *     f = P0 + p(part) - Q(S0 + s) >= g(s) = P0 + s / r_hi - Q(S0 + s),
 * and g is concave (Q is convex): its minimum over [0, q(B)] is at an end,
 * g(0) = f at the previous bucket boundary, g(q(B)) = lb(B). Hence the
 * prefixes inside B can beat the best boundary value only if lb(B) does,
 * and only those buckets are sorted and scanned token by token; the others
 * contribute their boundary value alone. The minimum found is the same
 * prefix minimum as the full scan (scan_iid), up to the order of the
 * additions. lb is computed in rounded arithmetic, and compared with a slack
 * above every rounding error involved (bucket sums are plain sums of at most
 * V terms of total <= 1, S^n adds n relative errors; the division q/p
 * rounds, so r_hi bounds q/p only to a relative eps): a bucket is skipped
 * only if lb(B) > best + (n + 4) (V + 16) eps, which only makes more buckets
 * sorted when in doubt. The workspace's tagged order is not touched except
 * that o->order is overwritten (so the tag is dropped). */
static int scan_iid_buckets(mdsd_bound_workspace *ws, const double *p, const double *q, size_t V,
                            size_t n, double *fmin, uint32_t *best_k, size_t *best_j,
                            size_t *best_off, mdsd_err *err)
{
    mdsd_qp_order *o = &ws->ord;
    int rc = fill_buckets(ws, p, q, V, err);
    if (rc)
        return rc;
    const mdsd_qp_bucket *b = o->bucket;
    double best = 0.0; /* the empty prefix */
    uint32_t bk = 0;
    size_t bj = 0, boff = 0;
    /* boundary values and bucket bounds */
    double P = 0.0, Pc = 0.0, S = 0.0, Sc = 0.0;
    for (uint32_t k = o->lo; k <= o->hi; k++) {
        const mdsd_qp_bucket *B = b + k;
        if (!B->n)
            continue;
        double P0 = P + Pc;
        MDSD_NEUMAIER_ADD(P, Pc, B->p);
        MDSD_NEUMAIER_ADD(S, Sc, B->q);
        double Qend = ipow(S + Sc, n), f = (P + Pc) - Qend;
        ws->blb[k - o->lo] = P0 + B->q / mdsd_qp_bucket_ratio_hi(k) - Qend;
        if (f < best)
            best = f, bk = k + 1, bj = 0;
    }
    size_t flagged = flag_buckets(ws, n, V, best);
    if (flagged) {
        mdsd_qp_bucket_sort(o, p, q, ws->bflag);
        const uint32_t *ord = o->order;
        size_t off = 0;
        P = Pc = S = Sc = 0.0;
        for (uint32_t k = o->lo; k <= o->hi; k++) {
            const mdsd_qp_bucket *B = b + k;
            if (!B->n)
                continue;
            if (ws->bflag[k - o->lo]) {
                double Pi = P, Pic = Pc, Si = S, Sic = Sc;
                for (size_t i = 0; i + 1 < B->n; i++) {
                    uint32_t x = ord[off + i];
                    MDSD_NEUMAIER_ADD(Pi, Pic, p[x]);
                    MDSD_NEUMAIER_ADD(Si, Sic, q[x]);
                    double f = (Pi + Pic) - ipow(Si + Sic, n);
                    if (f < best)
                        best = f, bk = k, bj = i + 1, boff = off;
                }
                off += B->n;
            }
            MDSD_NEUMAIER_ADD(P, Pc, B->p);
            MDSD_NEUMAIER_ADD(S, Sc, B->q);
        }
    }
    *fmin = best;
    *best_k = bk, *best_j = bj, *best_off = boff;
    return MDSD_OK;
}

/* E <- E * e truncated after degree n: the elementary symmetric polynomials
 * of a union of disjoint sets (descending j keeps E[i < j] unchanged). */
static inline void esp_union(double *E, const double *e, size_t n)
{
    for (size_t j = n; j > 0; j--) {
        double s = E[j];
        for (size_t i = 0; i < j; i++)
            s += E[i] * e[j - i];
        E[j] = s;
    }
}

/* cps without the full order: scan_iid_buckets with Q(H) = e_n(H) / e_n(all)
 * (Hu's generating function). Q is monotone under inclusion and q-convex
 * along every chain (Hu et al., Thm 4): along the exact order inside a
 * bucket, Q is convex in the q mass added, so g(s) = P0 + s / r_hi - Q is
 * concave there and the bound of scan_iid_buckets holds with Q(end of
 * bucket) = e_n(before and bucket) / e_n(all). The e_j of each bucket are
 * summed in one pass; those of a prefix of buckets are products of the
 * buckets' polynomials (all terms positive: relative errors add, no
 * cancellation). *fallback is set, and nothing else, where e_n(all) is below
 * 1e-280 (the full scan then works in long double) or n > 64. */
static int scan_cps_buckets(mdsd_bound_workspace *ws, const double *p, const double *q, size_t V,
                            size_t n, double *fmin, uint32_t *best_k, size_t *best_j,
                            size_t *best_off, bool *fallback, mdsd_err *err)
{
    mdsd_qp_order *o = &ws->ord;
    *fallback = n > 64;
    if (*fallback)
        return MDSD_OK;
    int rc = fill_buckets(ws, p, q, V, err);
    if (rc)
        return rc;
    size_t stride = n + 1, nb = o->lo <= o->hi ? o->hi - o->lo + 1 : 0;
    if (nb * stride > ws->besp_cap) {
        double *t = realloc(ws->besp, nb * stride * sizeof *t);
        if (!t)
            return mdsd_fail(err, MDSD_ENOMEM, "cps: out of memory for the buckets");
        ws->besp = t, ws->besp_cap = nb * stride;
    }
    mdsd_qp_bucket_esp(o, p, q, V, n, ws->besp);
    const mdsd_qp_bucket *b = o->bucket;
    double E[65] = {1.0};
    for (uint32_t k = o->lo; k <= o->hi; k++)
        if (b[k].n)
            esp_union(E, ws->besp + (k - o->lo) * stride, n);
    double W = E[n];
    if (!(isfinite(W) && W > 1e-280)) {
        *fallback = true;
        return MDSD_OK;
    }
    double best = 0.0;
    uint32_t bk = 0;
    size_t bj = 0, boff = 0;
    double P = 0.0, Pc = 0.0;
    memset(E, 0, sizeof E);
    E[0] = 1.0;
    for (uint32_t k = o->lo; k <= o->hi; k++) {
        const mdsd_qp_bucket *B = b + k;
        if (!B->n)
            continue;
        double P0 = P + Pc;
        MDSD_NEUMAIER_ADD(P, Pc, B->p);
        esp_union(E, ws->besp + (k - o->lo) * stride, n);
        double Qend = E[n] / W, f = (P + Pc) - Qend;
        ws->blb[k - o->lo] = P0 + B->q / mdsd_qp_bucket_ratio_hi(k) - Qend;
        if (f < best)
            best = f, bk = k + 1, bj = 0;
    }
    size_t flagged = flag_buckets(ws, n, V, best);
    if (flagged) {
        mdsd_qp_bucket_sort(o, p, q, ws->bflag);
        const uint32_t *ord = o->order;
        size_t off = 0;
        P = Pc = 0.0;
        memset(E, 0, sizeof E);
        E[0] = 1.0;
        for (uint32_t k = o->lo; k <= o->hi; k++) {
            const mdsd_qp_bucket *B = b + k;
            if (!B->n)
                continue;
            if (ws->bflag[k - o->lo]) {
                double Pi = P, Pic = Pc, Ei[65];
                memcpy(Ei, E, stride * sizeof *Ei);
                for (size_t i = 0; i + 1 < B->n; i++) {
                    uint32_t x = ord[off + i];
                    MDSD_NEUMAIER_ADD(Pi, Pic, p[x]);
                    for (size_t j = n; j > 0; j--)
                        Ei[j] += q[x] * Ei[j - 1];
                    double f = (Pi + Pic) - Ei[n] / W;
                    if (f < best)
                        best = f, bk = k, bj = i + 1, boff = off;
                }
                off += B->n;
            }
            MDSD_NEUMAIER_ADD(P, Pc, B->p);
            esp_union(E, ws->besp + (k - o->lo) * stride, n);
        }
    }
    *fmin = best;
    *best_k = bk, *best_j = bj, *best_off = boff;
    return MDSD_OK;
}

/* The subset of the sort-free route: the buckets before k and the first j
 * tokens of bucket k in the exact order (at o->order + off). */
static void bucket_subset(const mdsd_bound_workspace *ws, const double *p, const double *q,
                          size_t V, uint32_t k, size_t j, size_t off, unsigned char *H)
{
    for (size_t x = 0; x < V; x++)
        H[x] = q[x] > 0.0 && mdsd_qp_bucket_of(p[x], q[x]) < k;
    for (size_t i = 0; i < j; i++)
        H[ws->ord.order[off + i]] = 1;
}

/* wor, n = 2: Q(H) = sum_{x in H} q(x) (q(H) - q(x)) / (1 - q(x))
 *            = q(H) - r sum_{x in H} q(x) / (1 - q(x)),  r = 1 - q(H),
 * the second form free of the cancellation the first has when q(x) -> 1
 * (each term r q(x)/(1 - q(x)) <= q(x) since r <= 1 - q(x)). Masses that
 * may be tiny (r, and 1 - q(x) for the one token that can exceed 1/2) are
 * summed directly, never formed as 1 - (something close to 1). */
static void scan_wor2(mdsd_bound_workspace *ws, double *fmin, size_t *argmin)
{
    const double *ps = ws->ps, *qs = ws->qs;
    suffix_q(ws, qs);
    size_t N = ws->ord.n_scan, top = 0;
    for (size_t k = 1; k < N; k++)
        if (qs[k] > qs[top])
            top = k;
    double rest = 0.0, restc = 0.0; /* 1 - q(top) */
    for (size_t k = 0; k < N; k++)
        if (k != top)
            MDSD_NEUMAIER_ADD(rest, restc, qs[k]);
    rest += restc;
    /* The top token's term r q(top) / (1 - q(top)) is formed as
     * q(top) (r / rest): r <= rest once top is in H, while q(top) / rest
     * alone overflows when q is nearly one-hot with a subnormal rest. */
    mdsd_bsum P, S, A;
    mdsd_bsum_init(&P);
    mdsd_bsum_init(&S);
    mdsd_bsum_init(&A);
    bool top_in = false;
    double best = 0.0;
    size_t best_i = 0;
    for (size_t k = 0; k < N; k++) {
        double px = ps[k], qx = qs[k];
        mdsd_bsum_add(&P, px);
        mdsd_bsum_add(&S, qx);
        if (k == top)
            top_in = true;
        else
            mdsd_bsum_add(&A, qx / (ws->R[0] - qx));
        double r = ws->R[k + 1];
        double Q = k + 1 == N ? 1.0
                              : mdsd_bsum_value(&S) - r * mdsd_bsum_value(&A) -
                                    (top_in ? qs[top] * (r / rest) : 0.0);
        double f = mdsd_bsum_value(&P) - Q;
        if (f < best)
            best = f, best_i = k + 1;
    }
    *fmin = best;
    *argmin = best_i;
}

/* The wor chain workspace, set for n drafts (n >= 3). */
static int wor_chain_for(mdsd_bound_workspace *ws, size_t n, mdsd_err *err)
{
    if (!ws->wor) {
        if (!(ws->wor = mdsd_wor_chain_alloc(ws->V, n, err)))
            return MDSD_ENOMEM;
        ws->wor_n = n;
    } else if (ws->wor_n != n) { /* small tables only: the batch job alternates n */
        int rc = mdsd_wor_chain_set_drafts(ws->wor, n, err);
        if (rc)
            return rc;
        ws->wor_n = n;
    }
    return MDSD_OK;
}

/* wor, n >= 3, without the full order (wor_bucket.h); *fallback where the
 * full-order route must run instead. */
static int wor_buckets(mdsd_bound_workspace *ws, const double *p, const mdsd_scheme *s,
                       double tol, mdsd_bound_result *res, bool *fallback, mdsd_err *err)
{
    int rc = wor_chain_for(ws, s->n, err);
    if (rc)
        return rc;
    if (!ws->worb && !(ws->worb = mdsd_wor_buckets_alloc(ws->V, err)))
        return MDSD_ENOMEM;
    ws->tag = 0; /* the order is overwritten */
    double fmin = 0.0;
    rc = mdsd_wor_bucket_min(ws->worb, ws->wor, &ws->ord, p, s->q, s->V, tol, &fmin, res->subset,
                             &res->evaluations, fallback, err);
    if (rc || *fallback)
        return rc;
    res->has_subset = res->subset != NULL;
    return finish_alpha(1.0 + fmin, res, "sort", err);
}

static int scan_wor(mdsd_bound_workspace *ws, size_t n, double tol, double *fmin,
                    size_t *argmin, size_t *evals, mdsd_err *err)
{
    if (n == 1) {
        scan_iid(ws, 1, fmin, argmin);
        return MDSD_OK;
    }
    if (n == 2) {
        scan_wor2(ws, fmin, argmin);
        return MDSD_OK;
    }
    int rc = wor_chain_for(ws, n, err);
    if (rc)
        return rc;
    /* the chain over the gathered qs and ps: sequential reads in every pass */
    rc = mdsd_wor_chain_set(ws->wor, ws->qs, ws->ident, ws->ord.n_scan, err);
    if (rc == MDSD_OK)
        rc = mdsd_wor_chain_min(ws->wor, ws->ps, tol, fmin, argmin, evals, err);
    return rc;
}

/* Elementary symmetric polynomials e_0..e_n of the values seen so far,
 * each accumulated with a compensation term. T is double or long double. */
#define ESP_SCAN(T, N_TOK, VALUE, STORE)                                      \
    do {                                                                      \
        T e[65] = {1}, c[65] = {0};                                           \
        for (size_t k = 0; k < (N_TOK); k++) {                                \
            T v = (VALUE);                                                    \
            for (size_t j = n; j > 0; j--) {                                  \
                T add = v * (e[j - 1] + c[j - 1]), t = e[j] + add;            \
                c[j] += (e[j] >= add ? (e[j] - t) + add : (add - t) + e[j]);  \
                e[j] = t;                                                     \
            }                                                                 \
            STORE;                                                            \
        }                                                                     \
        total = (long double)(e[n] + c[n]);                                   \
    } while (0)

/* cps: Q(H_i) = W_{n,H_i} / W_{n,all} (Hu et al.'s generating function). */
static int scan_cps(mdsd_bound_workspace *ws, size_t n, double *fmin, size_t *argmin,
                    mdsd_err *err)
{
    if (n > 64)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "cps: n = %zu above 64", n);
    prefix_p(ws);
    const double *qs = ws->qs;
    size_t N = ws->ord.n_scan;
    long double total;
    ESP_SCAN(double, N, qs[k], ws->num[k + 1] = e[n] + c[n]);
    double den = (double)total;
    double best = 0.0;
    size_t best_i = 0;
    if (isfinite(den) && den > 1e-280) {
        for (size_t i = n; i <= N; i++) {
            double f = ws->P[i] - ws->num[i] / den;
            if (f < best)
                best = f, best_i = i;
        }
    } else {
        /* W_{n,all} underflows in double (q(x) below ~1e-300^(1/n) among the
         * top n): the same scan in long double's wider exponent range. */
        long double *numl = malloc((N + 1) * sizeof *numl);
        if (!numl)
            return mdsd_fail(err, MDSD_ENOMEM, "cps: out of memory");
        ESP_SCAN(long double, N, (long double)qs[k], numl[k + 1] = e[n] + c[n]);
        if (!(total > 0.0L)) {
            free(numl);
            return mdsd_fail(err, MDSD_EUNSUPPORTED,
                             "cps: W_{n,all} underflows even in long double");
        }
        for (size_t i = n; i <= N; i++) {
            double f = ws->P[i] - (double)(numl[i] / total);
            if (f < best)
                best = f, best_i = i;
        }
        free(numl);
    }
    *fmin = best;
    *argmin = best_i;
    return MDSD_OK;
}

/* ---- closed forms: greedy (Hu Thm 7) and hub ------------------------------- */

/* sum_x min(q(x) inv, p(x)) and sum_x (q(x) inv - p(x))+ over every token,
 * each by Kahan's sum in MDSD_LANES lanes (they vectorise). */
MDSD_SIMD_CLONES static void lanes_min_gain(const double *p, const double *q, size_t V, double inv,
                                            double *acc, double *gain)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0}, g[MDSD_LANES] = {0}, gc[MDSD_LANES] = {0};
    size_t x = 0;
    for (; x + MDSD_LANES <= V; x += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double qp = q[x + j] * inv, px = p[x + j], d = qp - px;
            MDSD_KAHAN_ADD(s[j], c[j], (qp < px ? qp : px));
            MDSD_KAHAN_ADD(g[j], gc[j], 0.5 * (d + fabs(d)));
        }
    }
    for (size_t j = 0; x < V; x++, j++) {
        double qp = q[x] * inv, px = p[x], d = qp - px;
        MDSD_KAHAN_ADD(s[j], c[j], (qp < px ? qp : px));
        MDSD_KAHAN_ADD(g[j], gc[j], 0.5 * (d + fabs(d)));
    }
    double a = 0.0, ac = 0.0, b = 0.0, bc = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(a, ac, s[j]);
        ac -= c[j];
        MDSD_NEUMAIER_ADD(b, bc, g[j]);
        bc -= gc[j];
    }
    *acc = a + ac;
    *gain = b + bc;
}

/* T = top n-1 of q (ties to the lower index), q' = q / q(T^c) off T:
 * alpha* = p(T) + sum_{x not in T} min(p(x), q'(x)); an optimal H is
 * T + {x : q'(x) > p(x)}, or the empty set when that does not beat 0. */
static int closed_greedy(const double *p, const double *q, size_t V, size_t n_fixed,
                         unsigned char *inT, double *scratch, double *alpha, unsigned char *H,
                         mdsd_err *err)
{
    int top_buf[64], *top = n_fixed <= 64 ? top_buf : malloc(n_fixed * sizeof *top);
    if (!top)
        return mdsd_fail(err, MDSD_ENOMEM, "greedy: out of memory");
    memset(inT, 0, V);
    mdsd_top_indices(q, V, n_fixed, top); /* ties to the lower index, as the schemes */
    for (size_t j = 0; j < n_fixed; j++)
        inT[top[j]] = 1;
    double pT = 0.0, pc = 0.0;
    for (size_t j = 0; j < n_fixed; j++)
        MDSD_NEUMAIER_ADD(pT, pc, p[top[j]]);
    /* q(T^c) summed directly (it may be far below the resolution of
     * 1 - q(T)): q with T zeroed, in scratch */
    memcpy(scratch, q, V * sizeof *scratch);
    for (size_t j = 0; j < n_fixed; j++)
        scratch[top[j]] = 0.0;
    double rest = mdsd_sum(scratch, V);
    /* q(T^c) can be subnormal (low temperature, wide logit gaps): 1 / rest
     * would overflow. Scaling q off T by a power of two is exact and leaves
     * q' = q / q(T^c) unchanged. */
    if (rest < 0x1p-1000) {
        int e;
        frexp(rest, &e);
        for (size_t x = 0; x < V; x++)
            scratch[x] = ldexp(scratch[x], -e);
        rest = mdsd_sum(scratch, V);
    }
    /* Branch-free over every token (lanes_min_gain) with q off T: the n - 1
     * fixed tokens contribute min(p, 0) = 0 there, and p(T) is added. */
    double inv = 1.0 / rest, acc_sum, gain_sum;
    lanes_min_gain(p, scratch, V, inv, &acc_sum, &gain_sum);
    mdsd_bsum acc;
    mdsd_bsum_init(&acc);
    mdsd_bsum_add(&acc, acc_sum);
    mdsd_bsum_add(&acc, pT);
    mdsd_bsum_add(&acc, pc);
    *alpha = mdsd_bsum_value(&acc);
    if (H) {
        bool empty = (pT + pc) - gain_sum >= 0.0;
        for (size_t x = 0; x < V; x++)
            H[x] = !empty && (inT[x] || scratch[x] * inv > p[x]);
    }
    if (top != top_buf)
        free(top);
    return MDSD_OK;
}

/* ---- k2: Khisti et al. Thm 3 and Thm 2 -------------------------------------- */

/* alpha* = min over S of p(S) + q(S^c)^2 + 2 q(S) q(S^c), written as in the
 * paper (q(S^c) summed, not 1 - q(S)); Thm 2: alpha* = 1 iff p(S) >= q(S)^2
 * for every S. Small V: all 2^V sets S, independent of Hu's structure. Larger
 * V: the prefixes of the q/p order, where Hu's Thm 3 puts the minimiser. */
static int k2_alpha(mdsd_bound_workspace *ws, const double *p, const double *q, size_t V,
                    mdsd_bound_result *res, mdsd_err *err)
{
    double best = INFINITY, margin = 0.0;
    size_t best_mask = 0, best_len = 0;
    bool enumerate = V <= 20;
    if (enumerate) {
        size_t half = V / 2, lo_count = (size_t)1 << half, hi_count = (size_t)1 << (V - half);
        double *t = malloc(2 * (lo_count + hi_count) * sizeof *t);
        if (!t)
            return mdsd_fail(err, MDSD_ENOMEM, "k2: out of memory");
        double *plo = t, *qlo = plo + lo_count, *phi = qlo + lo_count, *qhi = phi + hi_count;
        for (size_t m = 0; m < lo_count; m++) {
            plo[m] = qlo[m] = 0.0;
            for (size_t x = 0; x < half; x++)
                if (m >> x & 1)
                    plo[m] += p[x], qlo[m] += q[x];
        }
        for (size_t m = 0; m < hi_count; m++) {
            phi[m] = qhi[m] = 0.0;
            for (size_t x = 0; x < V - half; x++)
                if (m >> x & 1)
                    phi[m] += p[half + x], qhi[m] += q[half + x];
        }
        size_t full_lo = lo_count - 1, full_hi = hi_count - 1;
        for (size_t mask = 0; mask < ((size_t)1 << V); mask++) {
            size_t lo = mask & full_lo, hi = mask >> half;
            double pS = plo[lo] + phi[hi], qS = qlo[lo] + qhi[hi];
            double qC = qlo[full_lo ^ lo] + qhi[full_hi ^ hi];
            double v = pS + qC * qC + 2.0 * qS * qC, g = pS - qS * qS;
            if (v < best)
                best = v, best_mask = mask;
            if (g < margin)
                margin = g;
        }
        free(t);
    } else {
        order_of(ws, p, q, V, 0);
        suffix_q(ws, ws->qs);
        const uint32_t *o = ws->ord.order;
        double P = 0.0, Pc = 0.0, S = 0.0, Sc = 0.0;
        for (size_t k = 0; k <= ws->ord.n_scan; k++) {
            if (k > 0) {
                MDSD_NEUMAIER_ADD(P, Pc, p[o[k - 1]]);
                MDSD_NEUMAIER_ADD(S, Sc, q[o[k - 1]]);
            }
            double pS = P + Pc, qS = S + Sc, qC = ws->R[k];
            double v = pS + qC * qC + 2.0 * qS * qC, g = pS - qS * qS;
            if (v < best)
                best = v, best_len = k;
            if (g < margin)
                margin = g;
        }
    }
    res->alpha = best;
    res->k2_margin = margin;
    res->alpha_one = margin >= -MDSD_BOUND_K2_TOL;
    if (res->subset) {
        /* The minimising S of Thm 3 is the H of the subset form. */
        if (enumerate)
            for (size_t x = 0; x < V; x++)
                res->subset[x] = best_mask >> x & 1;
        else
            prefix_subset(ws, best_len, V, res->subset);
        res->has_subset = true;
    }
    return MDSD_OK;
}

/* ---- dispatch ------------------------------------------------------------------ */

static int finish_alpha(double alpha, mdsd_bound_result *res, const char *what, mdsd_err *err)
{
    if (!(alpha >= -MDSD_BOUND_RANGE_TOL && alpha <= 1.0 + MDSD_BOUND_RANGE_TOL))
        return mdsd_fail(err, MDSD_ESOLVER, "%s: alpha* = %.17g is outside [0, 1] beyond rounding",
                         what, alpha);
    res->alpha = alpha < 0.0 ? 0.0 : alpha > 1.0 ? 1.0 : alpha;
    return MDSD_OK;
}

static int by_sort(const double *p, const mdsd_scheme *s, double tol, uint64_t tag,
                   bool full_sort, mdsd_bound_workspace *ws, mdsd_bound_result *res,
                   mdsd_err *err)
{
    size_t V = s->V, n = s->n;
    /* A nonzero tag announces calls for other schemes on the same p, q
     * (the batch job: iid, wor, cps), which then share the full order: the
     * sort-free routes serve the untagged calls. */
    bool iid = s->kind == MDSD_SCHEME_IID || (s->kind == MDSD_SCHEME_WOR && n == 1);
    if (!full_sort && tag == 0 && (iid || s->kind == MDSD_SCHEME_CPS)) {
        double fmin = 0.0;
        uint32_t k = 0;
        size_t j = 0, off = 0;
        bool fallback = false;
        int rc = iid ? scan_iid_buckets(ws, p, s->q, V, n, &fmin, &k, &j, &off, err)
                     : scan_cps_buckets(ws, p, s->q, V, n, &fmin, &k, &j, &off, &fallback, err);
        if (rc)
            return rc;
        if (!fallback) {
            if (res->subset) {
                bucket_subset(ws, p, s->q, V, k, j, off, res->subset);
                res->has_subset = true;
            }
            return finish_alpha(1.0 + fmin, res, "sort", err);
        }
    }
    if (!full_sort && tag == 0 && s->kind == MDSD_SCHEME_WOR && n >= 3 &&
        V >= MDSD_WOR_BUCKET_MIN_V) {
        bool fallback = false;
        int rc = wor_buckets(ws, p, s, tol, res, &fallback, err);
        if (rc || !fallback)
            return rc;
    }
    if (s->kind == MDSD_SCHEME_GREEDY || s->kind == MDSD_SCHEME_HUB) {
        double alpha = 0.0;
        int rc = closed_greedy(p, s->q, V, n - 1, ws->mark, ws->num, &alpha, res->subset, err);
        res->has_subset = res->subset != NULL;
        return rc ? rc : finish_alpha(alpha, res, mdsd_scheme_name(s->kind), err);
    }
    order_of(ws, p, s->q, V, tag);
    double fmin = 0.0;
    size_t len = 0;
    int rc = MDSD_OK;
    switch (s->kind) {
    case MDSD_SCHEME_IID: scan_iid(ws, n, &fmin, &len); break;
    case MDSD_SCHEME_WOR: rc = scan_wor(ws, n, tol, &fmin, &len, &res->evaluations, err); break;
    case MDSD_SCHEME_CPS: rc = scan_cps(ws, n, &fmin, &len, err); break;
    default: return mdsd_fail(err, MDSD_EUNSUPPORTED, "sort: no scan for scheme %s",
                              mdsd_scheme_name(s->kind));
    }
    if (rc)
        return rc;
    if (res->subset) {
        prefix_subset(ws, len, V, res->subset);
        res->has_subset = true;
    }
    return finish_alpha(1.0 + fmin, res, "sort", err);
}

/* maxflow: the enumerated D aggregated into its set law, then the certified
 * max-flow of maxflow.h (masses as enumerated, as brute uses them). */
static int by_maxflow(const double *p, const mdsd_scheme *s, const mdsd_joint *D,
                      mdsd_bound_result *res, mdsd_err *err)
{
    mdsd_set_law S;
    int rc = mdsd_set_law_build(D, 1.0, &S, err);
    if (rc)
        return rc;
    mdsd_maxflow_result mf;
    rc = mdsd_maxflow_alpha(p, s->V, &S, &mf, res->subset, err);
    mdsd_set_law_free(&S);
    res->has_subset = rc == MDSD_OK && res->subset;
    res->maxflow_sets = mf.sets;
    res->maxflow_gap = mf.alpha - mf.flow;
    return rc ? rc : finish_alpha(mf.alpha, res, "maxflow", err);
}

static int by_enumeration(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                          const mdsd_bound_opts *o, mdsd_bound_result *res, mdsd_err *err)
{
    if (m == MDSD_BOUND_BRUTE) {
        size_t max_V = o->max_brute_V ? o->max_brute_V : MDSD_SUBSET_MAX_V;
        if (s->V > max_V)
            return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_METHOD,
                                    "brute force over 2^V subsets: V = %zu is above the limit of %zu; "
                                    "use `method sort` (iid, wor, greedy, hub, cps) or maxflow",
                                    s->V, max_V);
    }
    mdsd_joint D;
    int rc = mdsd_scheme_joint(s, o->max_tuples ? o->max_tuples : MDSD_JOINT_MAX_TUPLES, &D, err);
    if (rc)
        return rc;
    double total = mdsd_sum(D.prob, D.count);
    if (!(fabs(total - 1.0) <= MDSD_PROB_SUM_TOL)) {
        mdsd_joint_free(&D);
        return mdsd_fail(err, MDSD_ESOLVER,
                         "%s: the enumerated joint law of the drafts sums to %g, not 1 (underflow "
                         "in the scheme's enumeration?)", mdsd_bound_method_name(m), total);
    }
    if (m == MDSD_BOUND_MAXFLOW) {
        rc = by_maxflow(p, s, &D, res, err);
    } else if (m == MDSD_BOUND_BRUTE) {
        double fmin;
        rc = mdsd_subset_min(p, s->V, &D, o->max_brute_V, &fmin, res->subset, err);
        res->has_subset = rc == MDSD_OK && res->subset;
        if (rc == MDSD_OK)
            rc = finish_alpha(1.0 + fmin, res, "brute", err);
    } else {
        mdsd_lp_opts lo = {.exact_arith = o->exact_arith, .max_vars = o->max_vars,
                           .max_seconds = o->lp_max_seconds};
        mdsd_lp_result lr;
        memset(&lr, 0, sizeof lr);
        rc = m == MDSD_BOUND_LP_FULL ? mdsd_lp_full(p, s->V, &D, &lo, &lr, err)
                                     : mdsd_lp_reduced(p, s->V, &D, &lo, &lr, err);
        if (rc == MDSD_OK) {
            res->lp_vars = lr.vars;
            rc = finish_alpha(lr.alpha, res, mdsd_bound_method_name(m), err);
        }
        mdsd_lp_result_free(&lr);
    }
    mdsd_joint_free(&D);
    return rc;
}

int mdsd_bound_alpha(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                     const mdsd_bound_opts *opts, mdsd_bound_workspace *ws,
                     mdsd_bound_result *res, mdsd_err *err)
{
    static const mdsd_bound_opts defaults = {0};
    const mdsd_bound_opts *o = opts ? opts : &defaults;
    unsigned char *subset = res->subset;
    memset(res, 0, sizeof *res);
    res->subset = subset;
    res->alpha_one = -1;
    int rc = mdsd_scheme_check(s, err);
    if (rc)
        return rc;
    if (m == MDSD_BOUND_AUTO)
        m = mdsd_bound_auto_method(s);
    if (m >= MDSD_BOUND_ALL)
        return mdsd_fail(err, MDSD_EINVAL, "method '%s' is not a single method",
                         mdsd_bound_method_name(m));
    res->method = m;
    if (!mdsd_bound_applies(m, s))
        return mdsd_fail(err, MDSD_EUNSUPPORTED,
                         m == MDSD_BOUND_K2
                             ? "k2 (Khisti Thm 3) needs the iid scheme with n = 2 (got %s, n = %zu)"
                             : "sort applies to iid, wor, greedy, hub and cps, not %s (n = %zu); "
                               "use maxflow, brute or lp-reduced",
                         mdsd_scheme_name(s->kind), s->n);
    if (m == MDSD_BOUND_BRUTE || m == MDSD_BOUND_LP_FULL || m == MDSD_BOUND_LP_REDUCED ||
        m == MDSD_BOUND_MAXFLOW)
        return by_enumeration(p, s, m, o, res, err);
    mdsd_bound_workspace *own = NULL;
    if (!ws || ws->V < s->V) {
        if (ws)
            return mdsd_fail(err, MDSD_EINVAL, "bound workspace for V = %zu used with V = %zu",
                             ws->V, s->V);
        if (!(ws = own = mdsd_bound_workspace_alloc(s->V, s->n, err)))
            return MDSD_ENOMEM;
    }
    if (m == MDSD_BOUND_K2)
        rc = k2_alpha(ws, p, s->q, s->V, res, err);
    else
        rc = by_sort(p, s, o->tol > 0 ? o->tol : 1e-14, o->pq_tag, o->full_sort, ws, res, err);
    if (rc == MDSD_OK && m == MDSD_BOUND_K2)
        rc = finish_alpha(res->alpha, res, "k2", err);
    mdsd_bound_workspace_free(own);
    return rc;
}

/* ---- Hu's generating function for any subset ---------------------------------- */

int mdsd_cps_Q(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
               mdsd_err *err)
{
    if (n > 64)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "cps: n = %zu above 64", n);
    long double eH[65] = {1}, eA[65] = {1};
    for (size_t x = 0; x < V; x++) {
        long double v = q[x];
        for (size_t j = n; j > 0; j--) {
            eA[j] += v * eA[j - 1];
            if (in_H[x])
                eH[j] += v * eH[j - 1];
        }
    }
    if (!(eA[n] > 0.0L))
        return mdsd_fail(err, MDSD_EINVAL, "cps: fewer than n = %zu tokens have q > 0", n);
    *Q = (double)(eH[n] / eA[n]);
    return MDSD_OK;
}
