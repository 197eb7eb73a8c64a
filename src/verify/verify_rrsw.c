/* verify_rrsw.c - recursive speculative decoding without replacement (Jeon
 * et al.), on drafts drawn sequentially without replacement (MATH.md §3.4):
 *   p_1 = p, q_1 = q; for j = 1..n: accept x_j w.p. min(1, p_j(x_j)/q_j(x_j)),
 *   else p_{j+1} = norm((p_j - q_j)+) and q_{j+1} = q_j with x_j removed,
 *   renormalised; all rejected: y ~ p_{n+1}.
 *
 * The residuals are path dependent, but only through scalars: by induction
 * p_j = (p - c_j q)+ / Z_j on the tokens not yet drawn, with c_1 = 0,
 * c_{j+1} = c_j + Z_j / R_j, Z_j = F(c_j) = sum_x (p(x) - c_j q(x))+ and
 * R_j = 1 - sum_{l<j} q(x_l) (a rejected x_l has p - c_{l+1} q < 0, so the
 * drawn tokens drop out by themselves). With the tokens sorted by p/q and
 * prefix sums of p and q, F(c) and sampling from (p - c q)+ cost O(log V):
 * a verification is O(n log V) after an O(V log V) set-up.
 *
 * Exact rates, two routes. The .exact op: the same scalar recursion summed
 * over the sequences of rejected tokens, with the children of small q
 * bounded by their moments, giving an interval [lo, hi] proven to hold alpha
 * with hi - lo <= 1e-9 (alpha = its midpoint; verify_rrsw_exact.c, "exact
 * rates by the scalar recursion"); about 200 positions/s/core at V = 32,000, n = 3.
 * mdsd_rrsw_exact_paths (verify_rrsw_exact.c too): every draw path with the
 * definition above transcribed literally (explicit p_j, q_j arrays),
 * |supp q|^n paths: the independent slow route the tests compare with. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"
#include "dist.h"
#include "verifier.h"
#include "verify_common.h"
#include "rrsw_shared.h"

typedef struct {
    size_t n, V;
    double *p, *q;        /* [V] */
    size_t m;             /* tokens with p > 0 */
    int *order;           /* [m] tokens with p > 0 by p/q decreasing (q = 0 first) */
    long double *ratio;   /* [m] p/q along order (+inf where q = 0) */
    long double *P, *Q;   /* [m + 1] prefix sums of p and q along order */
    int *q_rank;          /* [V] rank of each token in q ascending (ties by token) */
    long double *A;       /* [V + 1] A[r] = q mass of the tokens of rank < r */
} rrsw_state;

static int rrsw_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_WOR)
        return mdsd_vc_wrong_scheme("rrsw", s, "wor drafts (without replacement)", err);
    return MDSD_OK;
}

static void rrsw_release(void *state)
{
    rrsw_state *st = state;
    free(st->p);
    free(st->q);
    free(st->order);
    free(st->ratio);
    free(st->P);
    free(st->Q);
    free(st->q_rank);
    free(st->A);
    free(st);
}

/* The sampling path keeps p/q and the scalar c in long double: with a
 * subnormal q(x) the ratio p(x)/q(x), and with a subnormal mass left R the
 * step Z/R of c, pass DBL_MAX (p = (.3, .3, .3, .1), q = (1, 1e-310, 1e-310,
 * 0): c_3 = 1 + 0.7/2e-310). In double both became +inf, the tokens of finite
 * ratio joined the q = 0 ones and the residual was sampled from the wrong
 * step. Every ratio and c fits in long double's range (p/q <= 1/2^-1074 and
 * c grows by at most that per draft). */
_Static_assert(LDBL_MAX_EXP >= 2 * DBL_MAX_EXP, "rrsw needs a long double wider in range than double");

typedef struct {
    long double ratio;
    int token;
} keyed_ld;

static int by_ratio_desc_ld(const void *a, const void *b)
{
    const keyed_ld *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio > y->ratio ? -1 : 1;
    return x->token - y->token;
}

/* Ranks of the tokens in q ascending and the prefix masses along them: the
 * mass left after drawing a few tokens is a sum of segments between their
 * ranks, never 1 - q(drawn), which cancels when the drawn tokens hold nearly
 * all the mass. */
static int rank_by_q(rrsw_state *st, const double *q, mdsd_err *err)
{
    size_t V = st->V;
    keyed *k = mdsd_vc_malloc(V * sizeof *k, "rrsw", err);
    st->q_rank = mdsd_vc_malloc(V * sizeof *st->q_rank, "rrsw", err);
    st->A = mdsd_vc_malloc((V + 1) * sizeof *st->A, "rrsw", err);
    if (!k || !st->q_rank || !st->A) {
        free(k);
        return MDSD_ENOMEM;
    }
    for (size_t x = 0; x < V; x++)
        k[x] = (keyed){q[x], (int)x};
    qsort(k, V, sizeof *k, by_q_ascending);
    st->A[0] = 0.0L;
    for (size_t r = 0; r < V; r++) {
        st->q_rank[k[r].token] = (int)r;
        st->A[r + 1] = st->A[r] + (long double)k[r].ratio;
    }
    free(k);
    return MDSD_OK;
}


static double mass_left(const rrsw_state *st, const int *drawn, size_t count)
{
    return mass_left_ranked(st->q_rank, st->A, st->V, drawn, count);
}

static int rrsw_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                        void **state, mdsd_err *err)
{
    (void)opts;
    size_t V = s->V;
    rrsw_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "rrsw: out of memory");
    *state = st;
    st->n = s->n;
    st->V = V;
    st->m = mdsd_support_size(p, V);
    st->p = mdsd_vc_malloc(V * sizeof *st->p, "rrsw", err);
    st->q = mdsd_vc_malloc(V * sizeof *st->q, "rrsw", err);
    st->order = mdsd_vc_malloc(st->m * sizeof *st->order, "rrsw", err);
    st->ratio = mdsd_vc_malloc(st->m * sizeof *st->ratio, "rrsw", err);
    st->P = mdsd_vc_malloc((st->m + 1) * sizeof *st->P, "rrsw", err);
    st->Q = mdsd_vc_malloc((st->m + 1) * sizeof *st->Q, "rrsw", err);
    keyed *k = mdsd_vc_malloc(st->m * sizeof *k, "rrsw", err);
    if (!st->p || !st->q || !st->order || !st->ratio || !st->P || !st->Q || !k) {
        free(k);
        return MDSD_ENOMEM;
    }
    memcpy(st->p, p, V * sizeof *p);
    memcpy(st->q, s->q, V * sizeof *st->q);
    size_t i = 0;
    for (size_t x = 0; x < V; x++)
        if (p[x] > 0.0)
            k[i++] = (keyed){s->q[x] > 0.0 ? p[x] / s->q[x] : INFINITY, (int)x};
    /* Sorted by the double ratio (fast); then the run of +inf, where q = 0
     * tokens and those whose ratio passed DBL_MAX are mixed, is ordered by
     * the long-double ratio (q = 0 first). Outside that run the long-double
     * ratio stored is the double one, so the order stays monotone. */
    qsort(k, st->m, sizeof *k, by_ratio_desc);
    size_t inf_run = 0;
    while (inf_run < st->m && isinf(k[inf_run].ratio))
        inf_run++;
    keyed_ld *big = inf_run ? mdsd_vc_malloc(inf_run * sizeof *big, "rrsw", err) : NULL;
    if (inf_run && !big) {
        free(k);
        return MDSD_ENOMEM;
    }
    for (i = 0; i < inf_run; i++) {
        int x = k[i].token;
        big[i] = (keyed_ld){s->q[x] > 0.0 ? (long double)p[x] / s->q[x] : (long double)INFINITY, x};
    }
    if (inf_run)
        qsort(big, inf_run, sizeof *big, by_ratio_desc_ld);
    st->P[0] = st->Q[0] = 0.0L;
    for (i = 0; i < st->m; i++) {
        st->order[i] = i < inf_run ? big[i].token : k[i].token;
        st->ratio[i] = i < inf_run ? big[i].ratio : (long double)k[i].ratio;
        st->P[i + 1] = st->P[i] + p[st->order[i]];
        st->Q[i + 1] = st->Q[i] + s->q[st->order[i]];
    }
    free(big);
    free(k);
    return rank_by_q(st, s->q, err);
}


/* Number of tokens (along order) with p > c q, i.e. ratio > c. */
static size_t positive_count(const rrsw_state *st, long double c)
{
    size_t lo = 0, hi = st->m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->ratio[mid] > c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* W(k) = sum (p - c q) over the first k tokens of the order (k <= K, all
 * of ratio > c). c = +inf only if every token left has q = 0 (Q = 0). */
static long double residual_prefix(const rrsw_state *st, long double c, size_t k)
{
    return st->Q[k] > 0.0L ? st->P[k] - c * st->Q[k] : st->P[k];
}

/* F(c) = sum (p - c q)+ over the first K tokens of the order. */
static double residual_mass(const rrsw_state *st, long double c, size_t K)
{
    double F = (double)residual_prefix(st, c, K);
    return F > 0.0 ? F : 0.0;
}

/* y ~ (p - c q)+ : inverse CDF by bisection on the prefix sums. */
static int sample_residual(const rrsw_state *st, long double c, size_t K, gsl_rng *rng)
{
    long double t = (long double)gsl_rng_uniform(rng) * residual_prefix(st, c, K);
    size_t lo = 0, hi = K - 1; /* smallest k with W(k+1) > t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (residual_prefix(st, c, mid + 1) > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return st->order[lo];
}

static int rrsw_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const rrsw_state *st = state;
    long double c = 0.0L;
    double Z = 1.0, R = 1.0;
    size_t K = st->m;
    for (size_t j = 0; j < st->n; j++) {
        int x = drafts[j];
        long double num = st->p[x] - c * st->q[x]; /* Z_j p_j(x); q_j(x) = q(x) / R */
        if (num > 0.0L && (long double)gsl_rng_uniform(rng) * Z * st->q[x] < num * R) {
            *accepted_index = (int)j;
            return x;
        }
        long double c_next = c + (long double)Z / R;
        size_t K_next = positive_count(st, c_next);
        double Z_next = residual_mass(st, c_next, K_next);
        if (!(Z_next > 0.0) || K_next == 0)
            break; /* p_j = q_j: rejection had probability 0 (rounding only) */
        c = c_next, Z = Z_next, K = K_next;
        R = mass_left(st, drafts, j + 1);
    }
    if (K == 0)
        return (int)st->order[0];
    return sample_residual(st, c, K, rng);
}

/* The law of rrsw_verify given the drafts: the same tests with their pass
 * probabilities, then the residual (p - c q)+ over the first K of the order
 * (or order[0] where K = 0). */
static void rrsw_law(const void *state, const int *drafts, double *py)
{
    const rrsw_state *st = state;
    double step[MDSD_LAW_MAX_DRAFTS] = {0}, Z = 1.0, R = 1.0, reach = 1.0;
    long double c = 0.0L;
    size_t K = st->m;
    for (size_t j = 0; j < st->n; j++) {
        int x = drafts[j];
        long double num = st->p[x] - c * st->q[x];
        long double den = (long double)Z * st->q[x], pass = num * R; /* mdsd_vc_pass in long double */
        double a = !(pass > 0.0L) ? 0.0 : !(den > pass) ? 1.0 : (double)(pass / den);
        step[j] = reach * a;
        reach *= 1.0 - a;
        long double c_next = c + (long double)Z / R;
        size_t K_next = positive_count(st, c_next);
        double Z_next = residual_mass(st, c_next, K_next);
        if (!(Z_next > 0.0) || K_next == 0)
            break;
        c = c_next, Z = Z_next, K = K_next;
        R = mass_left(st, drafts, j + 1);
    }
    mdsd_vc_law_collect(drafts, st->n, step, py);
    if (!(reach > 0.0))
        return;
    long double total = residual_prefix(st, c, K);
    for (size_t j = 0; j < st->n; j++) {
        if (K == 0) {
            py[j] += drafts[j] == st->order[0] ? reach : 0.0;
            continue;
        }
        for (size_t i = 0; i < K; i++)
            if (st->order[i] == drafts[j]) {
                long double dq = st->Q[i + 1] - st->Q[i];
                long double w = (st->P[i + 1] - st->P[i]) - (dq > 0.0L ? c * dq : 0.0L);
                if (w > 0.0L && total > 0.0L)
                    py[j] += reach * (double)(w / total);
            }
    }
}


static int rrsw_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                      double *alpha, double *per_draft, mdsd_err *err)
{
    return mdsd_rrsw_exact_bounds(p, s, opts, 0.0, alpha, per_draft, NULL, NULL, err);
}

const mdsd_verifier_ops mdsd_verify_rrsw_ops = {
    .name = "rrsw",
    .scheme = MDSD_SCHEME_WOR,
    .check = rrsw_check,
    .prepare = rrsw_prepare,
    .verify = rrsw_verify,
    .release = rrsw_release,
    .exact = rrsw_exact,
};

const mdsd_verifier_law_fn mdsd_verify_rrsw_law = rrsw_law;
