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
 *     with q = 0 is never drafted and holds no q-mass, so its rank is moot;
 *   - ties of the ratio are ranked by token index, the larger higher, in
 *     both the walk and the CDF. The reference's CDF (a stable argsort)
 *     ranks them so but its walk keeps the first child among equal ratios;
 *     the selected path's law then differs from q* and the output from p
 *     (test block_verifiers/gbv_reference_tie_walk_is_invalid);
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

typedef struct {
    double key;
    int tok;
} ranked;

static double ratio(const double *p, const double *q, int x)
{
    return q[x] > 0.0 ? p[x] / q[x] : (p[x] > 0.0 ? INFINITY : 0.0);
}

static int by_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->tok > y->tok) - (x->tok < y->tok);
}

/* Whether x ranks above y at a node. */
static int above(const double *p, const double *q, int x, int y)
{
    double kx = ratio(p, q, x), ky = ratio(p, q, y);
    return kx != ky ? kx > ky : x > y;
}

/* q* at a node (p, q; K paths; alpha, beta) into qs, and cdf_< per token. */
static void skew(size_t V, size_t K, const double *p, const double *q, double alpha, double beta,
                 ranked *order, double *below, double *qs)
{
    for (size_t x = 0; x < V; x++)
        order[x] = (ranked){ratio(p, q, (int)x), (int)x};
    qsort(order, V, sizeof *order, by_rank);
    double run = 0.0, c = 0.0; /* Neumaier running sum of q in rank order */
    for (size_t i = 0; i < V; i++) {
        int x = order[i].tok;
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

/* Audit variants (NOT valid), for the tests that show the validity checks
 * catch them: the reference's walk on ties (the first child among equal
 * ratios), and bv on the selected path with the raw q instead of q*. */
enum { GBV_AS_PRINTED = 0, GBV_FIRST_TIE = 1, GBV_NO_SKEW = 2 };

/* Step 1 and 2: the highest path and q* along it. */
static int select_path(const mdsd_dtree *t, int variant, selected *s, mdsd_err *err)
{
    size_t V = t->V, L = t->L, K = t->K;
    if (!K)
        return mdsd_fail(err, MDSD_EINVAL, "gbv: the draft is not K sequences");
    s->buf = malloc((L * V + V) * sizeof *s->buf);
    ranked *order = malloc(V * sizeof *order);
    if (!s->buf || !order) {
        free(order);
        return mdsd_fail(err, MDSD_ENOMEM, "gbv: out of memory");
    }
    double *below = s->buf + L * V, alpha = 0.0, beta = 1.0;
    int u = 0;
    s->nodes[0] = 0;
    for (size_t i = 0; i < L; i++) {
        const double *p = t->p[u], *q = t->q[u];
        if (!p || !q || t->kid[u] < 0) {
            free(order);
            return mdsd_fail(err, MDSD_EINVAL, "gbv: a draft path is shorter than %zu or has no "
                             "laws", L);
        }
        int best = t->kid[u];
        for (int c = t->sib[best]; c >= 0; c = t->sib[c])
            if (variant == GBV_FIRST_TIE ? ratio(p, q, t->token[c]) > ratio(p, q, t->token[best])
                                         : above(p, q, t->token[c], t->token[best]))
                best = c;
        double *qs = s->buf + i * V;
        skew(V, K, p, q, alpha, beta, order, below, qs);
        if (variant == GBV_NO_SKEW)
            memcpy(qs, q, V * sizeof *qs);
        int x = t->token[best];
        double a = alpha + beta * (below[x] + q[x]), b = alpha + beta * below[x];
        beta = beta * q[x] / a;
        alpha = b / a;
        s->P[i] = p, s->Q[i] = qs, s->x[i] = x;
        s->nodes[i + 1] = u = best;
    }
    s->P[L] = t->p[u];
    free(order);
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
