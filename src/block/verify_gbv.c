/* verify_gbv.c - Greedy multi-path block verification: R. Thomas, A. Pal,
 * "Greedy Multi-Path Block Verification for Faster Decoding in Speculative
 * Sampling" (arXiv 2602.16961), GBV, for K i.i.d. draft paths of length L:
 *
 *   1. rank the paths lexicographically: at every node the tokens ordered
 *      by p(x|node) / q(x|node) (the ratio), and select the highest
 *      drafted path X* (walk from the root to the child of highest ratio);
 *   2. along X*, the law of the selected path's next token (the "skew"):
 *      with F the CDF of a path prefix under the order, A(u) = P(prefix <
 *      u) and Q(u) = P(prefix = u) for one path, and cdf_<(x), cdf_<=(x) the
 *      q-mass of the tokens ranked below x (and x),
 *        q*(x | u) = [(A + Q cdf_<=(x))^K - (A + Q cdf_<(x))^K]
 *                    / [(A + Q)^K - A^K]
 *      (the law of the highest of K i.i.d. paths);
 *   3. block verification (verify_bv.c, Sun et al. Algorithm 2) on X*
 *      with q replaced by q*.
 *
 * The paper's text was not retrievable here beyond its abstract and its
 * reviews (which describe it as path selection followed by single-path BV
 * on the "skewed draft"); this is the authors' reference implementation
 * (verifier.py, TreeVerifier.gbv_verify and compute_skew) read as
 * mathematics. Readings:
 *   - the ratio is p/q unclamped (the reference's p / (q + eps)); a token
 *     with q = 0 is never drafted and holds no q-mass, so its rank is moot.
 *     The clamped reading, min(1, p/q), is the test variant gbv-clamped;
 *   - the order is exact, never a rounded quotient: on tree dumps by the
 *     stored logits' difference zp - zq (p/q is increasing in it at one
 *     temperature; formed exactly by a two-sum), so that it does not depend
 *     on which exp made p and q; elsewhere by exact cross-products of the
 *     stored doubles (MATH.md §5.6);
 *   - ties of the ratio are ranked by token index, the larger higher, in
 *     both the walk and the CDF. The reference's CDF (a stable argsort)
 *     ranks them so but its walk keeps the first child among equal ratios;
 *     the selected path's law then differs from q* and the output from p
 *     (tests block_verifiers/checks_catch_planted_invalid_variants,
 *     gbv_ranks/clamped_reading_needs_one_tie_rule);
 *   - q* is formed as q(x) sum_{i<K} a^i b^{K-1-i} normalised by its sum
 *     (a^K - b^K = (a - b) sum ..., the reference's stable form), with
 *     a, b divided by A + Q so that nothing underflows at depth:
 *     alpha = A / (A + Q), beta = Q / (A + Q) carried down the path as
 *     alpha' = b(x*) / a(x*), beta' = beta q(x*) / a(x*). No mass is formed
 *     as 1 - mass.
 * Defined for the seq policy (K i.i.d. paths); at K = 1 it is bv. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blockv.h"
#include "dist.h"
#include "keysort.h"

/* A token's place in a node's order by the ratio r(x) = p(x)/q(x):
 * cls 0 for r = 0 (p = 0), 2 for r = inf (q = 0 < p), 1 otherwise, where
 * (a, b) is the exact key - logits: zp - zq = a + b exactly (a two-sum);
 * probabilities: a = p, b = q, compared as exact cross-products. */
typedef struct {
    double a, b;
    int cls, tok;
} ranked;

/* How a node's tokens are ranked: by the stored logits (tree dumps), by
 * the exact ratio of the stored doubles, or by min(1, p/q) (the clamped
 * reading of the reference code; test variants only). */
typedef enum { RANK_LOGITS, RANK_RATIO, RANK_CLAMPED } rank_mode;

typedef struct {
    rank_mode mode;
    const double *p, *q;
    const float *zp, *zq;
} node_rank;

static node_rank rank_at(const mdsd_dtree *t, int u, int clamped)
{
    int logits = !clamped && t->zp && t->zp[u] && t->zq[u];
    return (node_rank){logits ? RANK_LOGITS : clamped ? RANK_CLAMPED : RANK_RATIO, t->p[u],
                       t->q[u], logits ? t->zp[u] : NULL, logits ? t->zq[u] : NULL};
}

static ranked rank_of(const node_rank *r, int x)
{
    ranked k = {0.0, 0.0, 1, x};
    if (r->mode == RANK_LOGITS) {
        double zp = r->zp[x], zq = r->zq[x]; /* -inf logits: p or q is 0 */
        if (zp == -INFINITY || zq == -INFINITY) {
            k.cls = zp == -INFINITY ? 0 : 2;
            return k;
        }
        mdsd_logit_gap(zp, zq, &k.a, &k.b);
        return k;
    }
    double p = r->p[x], q = r->q[x];
    if (!(p > 0.0) || !(q > 0.0)) {
        k.cls = p > 0.0 ? 2 : 0;
        return k;
    }
    if (r->mode == RANK_CLAMPED && p >= q) /* min(1, p/q) = 1: ties */
        k.cls = 2;
    k.a = p, k.b = q;
    return k;
}

/* sign(x1 y1 - x2 y2) for doubles > 0, exactly: the mantissas' products
 * (in [1/4, 1)) split by fma into rounded value and exact error, compared
 * after the exponents' difference (at most 2 in the undecided case) is
 * applied to one side; no underflow, subnormal inputs included. */
static int cmp_products(double x1, double y1, double x2, double y2)
{
    int ex1, ey1, ex2, ey2;
    double mx1 = frexp(x1, &ex1), my1 = frexp(y1, &ey1), mx2 = frexp(x2, &ex2),
           my2 = frexp(y2, &ey2);
    int d = (ex1 + ey1) - (ex2 + ey2);
    if (d != 0 && abs(d) > 2)
        return d > 0 ? 1 : -1;
    double h1 = mx1 * my1, l1 = fma(mx1, my1, -h1), h2 = mx2 * my2, l2 = fma(mx2, my2, -h2);
    h1 = ldexp(h1, d), l1 = ldexp(l1, d);
    if (h1 != h2)
        return h1 > h2 ? 1 : -1;
    return (l1 > l2) - (l1 < l2);
}

/* The order of a node: by the ratio's class and key, ties by token index
 * (the larger higher), in both the walk and the CDF. */
static int by_logit_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->cls == 1 && (x->a != y->a || x->b != y->b))
        return x->a != y->a ? (x->a < y->a ? -1 : 1) : (x->b < y->b ? -1 : 1);
    return (x->tok > y->tok) - (x->tok < y->tok);
}

static int by_ratio_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    int c = x->cls == 1 ? cmp_products(x->a, y->b, y->a, x->b) : 0; /* p_x q_y vs p_y q_x */
    return c ? c : (x->tok > y->tok) - (x->tok < y->tok);
}

static int (*comparator(const node_rank *r))(const void *, const void *)
{
    return r->mode == RANK_LOGITS ? by_logit_rank : by_ratio_rank;
}

/* Whether x ranks above y at a node; first_tie: equal ratios are not
 * above one another (the reference's walk keeps the first child). */
static int above(const node_rank *r, int x, int y, int first_tie)
{
    ranked kx = rank_of(r, x), ky = rank_of(r, y);
    if (first_tie)
        kx.tok = ky.tok = 0;
    return comparator(r)(&kx, &ky) > 0;
}

/* Scratch of a node's order: tokens from lowest to highest rank. */
typedef struct {
    uint32_t *tok;   /* [V] */
    ranked *ranked;  /* [V] the ratio orders' entries (qsort) */
    mdsd_keysort ks; /* the logit order's sort (keysort.h) */
} node_order;

/* The node's tokens into o->tok from lowest to highest rank (the
 * comparator's order). The logit order: rank_of's classes (zp = -inf; both
 * finite; zq = -inf only), each by increasing token, the middle one sorted
 * by the exact gap (mdsd_keysort_logit_gap, the order by_logit_rank
 * defines, without a comparison sort). */
static void rank_order(size_t V, const node_rank *r, node_order *o)
{
    if (r->mode == RANK_LOGITS) {
        size_t n0 = 0, n1 = 0;
        for (size_t x = 0; x < V; x++)
            if (r->zp[x] == -INFINITY)
                n0++;
            else if (r->zq[x] != -INFINITY)
                n1++;
        size_t i0 = 0, i1 = n0, i2 = n0 + n1;
        for (size_t x = 0; x < V; x++)
            o->tok[r->zp[x] == -INFINITY ? i0++ : r->zq[x] != -INFINITY ? i1++ : i2++] = (uint32_t)x;
        mdsd_keysort_logit_gap(&o->ks, r->zp, r->zq, o->tok + n0, n1);
        return;
    }
    for (size_t x = 0; x < V; x++)
        o->ranked[x] = rank_of(r, (int)x);
    qsort(o->ranked, V, sizeof *o->ranked, comparator(r));
    for (size_t i = 0; i < V; i++)
        o->tok[i] = (uint32_t)o->ranked[i].tok;
}

static void order_free(node_order *o)
{
    free(o->tok), free(o->ranked);
    mdsd_keysort_destroy(&o->ks);
}

/* q* at a node (p, q; K paths; alpha, beta) into qs, and cdf_< per token. */
static void skew(size_t V, size_t K, const node_rank *r, double alpha, double beta,
                 node_order *order, double *below, double *qs)
{
    const double *q = r->q;
    rank_order(V, r, order);
    double run = 0.0, c = 0.0; /* Neumaier running sum of q in rank order */
    for (size_t i = 0; i < V; i++) {
        int x = (int)order->tok[i];
        below[x] = run + c;
        double t = run + q[x];
        c += fabs(run) >= q[x] ? (run - t) + q[x] : (q[x] - t) + run;
        run = t;
    }
    double total = 0.0;
    for (size_t x = 0; x < V; x++) {
        if (!(q[x] > 0.0)) {
            qs[x] = 0.0;
            continue;
        }
        double a = alpha + beta * (below[x] + q[x]), b = alpha + beta * below[x], s = 0.0;
        double ai = 1.0;
        for (size_t i = 0; i < K; i++) {
            s += ai * pow(b, (double)(K - 1 - i));
            ai *= a;
        }
        qs[x] = q[x] * s;
        total += qs[x];
    }
    for (size_t x = 0; x < V; x++)
        qs[x] = total > 0.0 ? qs[x] / total : q[x];
}

typedef struct {
    int x[MDSD_BLOCK_MAX_DEPTH];
    int nodes[MDSD_BLOCK_MAX_DEPTH + 1];
    const double *P[MDSD_BLOCK_MAX_DEPTH + 1], *Q[MDSD_BLOCK_MAX_DEPTH + 1];
    double *buf; /* [L * V] the skewed laws, then scratch */
} selected;

/* Variants, flags: the reference's walk on ties (the first child among
 * equal ratios; NOT valid), bv on the selected path with the raw q instead
 * of q* (NOT valid), and the clamped reading, ranked by min(1, p/q) (valid
 * with the index tie rule in walk and CDF; with the first-tie walk NOT). */
enum { GBV_AS_PRINTED = 0, GBV_FIRST_TIE = 1, GBV_NO_SKEW = 2, GBV_CLAMPED = 4 };

/* Step 1 and 2: the highest path and q* along it. */
static int select_path(const mdsd_dtree *t, int variant, selected *s, mdsd_err *err)
{
    size_t V = t->V, L = t->L, K = t->K;
    if (!K)
        return mdsd_fail(err, MDSD_EINVAL, "gbv: the draft is not K sequences");
    s->buf = malloc((L * V + V) * sizeof *s->buf);
    node_order order = {malloc(V * sizeof *order.tok), malloc(V * sizeof *order.ranked), {0}};
    if (!s->buf || !order.tok || !order.ranked || mdsd_keysort_init(&order.ks, V, NULL)) {
        order_free(&order);
        return mdsd_fail(err, MDSD_ENOMEM, "gbv: out of memory");
    }
    double *below = s->buf + L * V, alpha = 0.0, beta = 1.0;
    int u = 0;
    s->nodes[0] = 0;
    for (size_t i = 0; i < L; i++) {
        const double *p = t->p[u], *q = t->q[u];
        if (!p || !q || t->kid[u] < 0) {
            order_free(&order);
            return mdsd_fail(err, MDSD_EINVAL, "gbv: a draft path is shorter than %zu or has no "
                             "laws", L);
        }
        node_rank r = rank_at(t, u, variant & GBV_CLAMPED);
        int best = t->kid[u];
        for (int c = t->sib[best]; c >= 0; c = t->sib[c])
            if (above(&r, t->token[c], t->token[best], variant & GBV_FIRST_TIE))
                best = c;
        double *qs = s->buf + i * V;
        skew(V, K, &r, alpha, beta, &order, below, qs);
        if (variant & GBV_NO_SKEW)
            memcpy(qs, q, V * sizeof *qs);
        int x = t->token[best];
        double a = alpha + beta * (below[x] + q[x]), b = alpha + beta * below[x];
        beta = beta * q[x] / a;
        alpha = b / a;
        s->P[i] = p, s->Q[i] = qs, s->x[i] = x;
        s->nodes[i + 1] = u = best;
    }
    s->P[L] = t->p[u];
    order_free(&order);
    return MDSD_OK;
}

static int gbv_check(const mdsd_policy *pol, mdsd_err *err)
{
    if (pol->kind != MDSD_POLICY_SEQ)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "gbv is defined for K i.i.d. draft sequences "
                         "(arXiv 2602.16961); tree policies are not");
    return MDSD_OK;
}

static int law_of(const mdsd_dtree *t, int variant, double *stop, double *next, mdsd_err *err)
{
    size_t V = t->V, L = t->L;
    selected s = {0};
    double st[MDSD_BLOCK_MAX_DEPTH + 1], *rows = NULL;
    int rc = select_path(t, variant, &s, err);
    if (rc == MDSD_OK && next && !(rows = malloc((L + 1) * V * sizeof *rows)))
        rc = mdsd_fail(err, MDSD_ENOMEM, "gbv: out of memory");
    if (rc == MDSD_OK)
        rc = mdsd_bv_path_law(V, L, s.x, s.P, s.Q, st, rows, err);
    if (rc == MDSD_OK) {
        memset(stop, 0, t->n * sizeof *stop);
        for (size_t i = 0; i <= L; i++)
            stop[s.nodes[i]] = st[i];
        for (size_t i = 0; next && i <= L; i++)
            memcpy(next + (size_t)s.nodes[i] * V, rows + i * V, V * sizeof *rows);
    }
    free(rows);
    free(s.buf);
    return rc;
}

static int step_of(const mdsd_dtree *t, int variant, gsl_rng *rng, int *node, int *next,
                   mdsd_err *err)
{
    selected s = {0};
    size_t tau = 0;
    int rc = select_path(t, variant, &s, err);
    if (rc == MDSD_OK)
        rc = mdsd_bv_path_step(t->V, t->L, s.x, s.P, s.Q, rng, &tau, next, err);
    *node = s.nodes[tau];
    free(s.buf);
    return rc;
}

#define GBV_OPS(NAME, VARIANT, LABEL)                                                              \
    static int NAME##_law(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err)          \
    {                                                                                              \
        return law_of(t, VARIANT, stop, next, err);                                                \
    }                                                                                              \
    static int NAME##_step(const mdsd_dtree *t, gsl_rng *rng, int *node, int *next,               \
                           mdsd_err *err)                                                          \
    {                                                                                              \
        return step_of(t, VARIANT, rng, node, next, err);                                          \
    }                                                                                              \
    const mdsd_blockv_ops mdsd_blockv_##NAME##_ops = {LABEL, gbv_check, NAME##_law, NAME##_step};

GBV_OPS(gbv, GBV_AS_PRINTED, "gbv")
GBV_OPS(gbv_first_tie, GBV_FIRST_TIE, "gbv-first-tie")
GBV_OPS(gbv_no_skew, GBV_NO_SKEW, "gbv-no-skew")
GBV_OPS(gbv_clamped, GBV_CLAMPED, "gbv-clamped")
GBV_OPS(gbv_clamped_first_tie, GBV_CLAMPED | GBV_FIRST_TIE, "gbv-clamped-first-tie")
