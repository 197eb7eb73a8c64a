#include "wor_q.h"
#include "wor_chain.h"
#include "vexp.h"

#include "bsum.h"
#include "simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>

/* ---- allocation ------------------------------------------------------- */

int mdsd_wor_grow(void **ptr, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < want)
        c *= 2;
    void *p = realloc(*ptr, c * elem);
    if (!p)
        return -1;
    *ptr = p;
    *cap = c;
    return 0;
}

static void series_coefficients(mdsd_wor_chain *c)
{
    size_t stride = MAX_ORDER + 1;
    double *a1 = c->a + stride;
    memset(c->a, 0, (c->L < 1 ? 2 : c->L + 1) * stride * sizeof *c->a);
    c->a[0] = 1.0; /* (e^z - 1)^0 = 1 */
    double f = 1.0;
    for (size_t m = 1; m <= MAX_ORDER; m++) {
        f /= (double)m;
        a1[m] = f;
    }
    for (size_t l = 2; l <= c->L; l++) {
        double *al = c->a + l * stride, *prev = c->a + (l - 1) * stride;
        for (size_t m = l; m <= MAX_ORDER; m++) {
            double s = 0.0;
            for (size_t k = 1; k + l - 1 <= m; k++)
                s += a1[k] * prev[m - k];
            al[m] = s;
        }
    }
}

/* Series order for w in (2^{-e-1}, 2^{-e}]: the tail sum_{m > M} (L w)^m / m!
 * bounds the error of every P_l (l <= L), and is at most 2 (L w)^{M+1}/(M+1)!
 * once L w <= (M + 2) / 2. */
static void series_orders(mdsd_wor_chain *c)
{
    double L = c->L ? (double)c->L : 1.0;
    for (int e = 0; e < EXPONENTS; e++) {
        double w_hi = ldexp(c->rho, -e), w_lo = w_hi / 2, x = L * w_hi;
        unsigned m = 1;
        double term = x * x / 2; /* x^{m+1} / (m+1)! */
        while (m < MAX_ORDER && (x > (m + 2) / 2.0 || 2 * term > SERIES_TOL * w_lo)) {
            m++;
            term *= x / (double)(m + 1);
        }
        c->order_of[e] = (unsigned char)m;
    }
}

int mdsd_wor_chain_set_drafts(mdsd_wor_chain *c, size_t n, mdsd_err *err)
{
    if (n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "wor: n must be >= 1");
    size_t stride = MAX_ORDER + 1;
    if (n > c->n_cap) {
        size_t rows = n < 2 ? 2 : n; /* a holds (e^z - 1)^1 even for n = 1 */
        double *a = realloc(c->a, rows * stride * sizeof *a);
        if (a)
            c->a = a;
        double *coef = realloc(c->coef, rows * stride * sizeof *coef);
        if (coef)
            c->coef = coef;
        double *pi = realloc(c->pi, (n + 1) * NODE_CHUNK * sizeof *pi);
        if (pi)
            c->pi = pi;
        double *Pl = realloc(c->Pl, (n + 1) * NODE_CHUNK * sizeof *Pl);
        if (Pl)
            c->Pl = Pl;
        if (!a || !coef || !pi || !Pl)
            return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory for n = %zu", n);
        c->n_cap = n;
    }
    c->n = n;
    c->L = n - 1;
    c->rho = c->L > 4 ? 4.0 / (double)c->L : 1.0;
    c->inv_rho = 1.0 / c->rho;
    series_coefficients(c);
    series_orders(c);
    int e = 0;
    while (e + 1 < EXPONENTS && c->order_of[e] > FIXED_ORDER)
        e++;
    c->w_fixed = ldexp(c->rho, -e);
    c->N = 0; /* a chain must be set again */
    return MDSD_OK;
}

mdsd_wor_chain *mdsd_wor_chain_alloc(size_t V, size_t n, mdsd_err *err)
{
    mdsd_wor_chain *c = calloc(1, sizeof *c);
    if (!c) {
        mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
        return NULL;
    }
    c->cap_V = V;
    size_t nblk = V / BLOCK + 1, stride = MAX_ORDER + 1;
    c->S = malloc((V + 1) * sizeof *c->S);
    c->R = malloc((V + 1) * sizeof *c->R);
    c->P = malloc((V + 1) * sizeof *c->P);
    c->blk = malloc(nblk * stride * sizeof *c->blk);
    c->blk_qs = malloc(nblk * sizeof *c->blk_qs);
    c->blk_M = malloc(nblk);
    c->Shat = malloc(stride * sizeof *c->Shat);
    if (!c->S || !c->R || !c->P || !c->blk || !c->blk_qs || !c->blk_M || !c->Shat) {
        mdsd_wor_chain_free(c);
        mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory for V = %zu", V);
        return NULL;
    }
    gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(GL_POINTS);
    if (!gl) {
        mdsd_wor_chain_free(c);
        mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory for the Gauss-Legendre table");
        return NULL;
    }
    for (size_t g = 0; g < GL_POINTS; g++)
        gsl_integration_glfixed_point(0.0, 1.0, g, &c->gl_x[g], &c->gl_w[g], gl);
    gsl_integration_glfixed_table_free(gl);
    if (mdsd_wor_chain_set_drafts(c, n ? n : 1, err)) {
        mdsd_wor_chain_free(c);
        return NULL;
    }
    return c;
}

void mdsd_wor_chain_free(mdsd_wor_chain *c)
{
    if (!c)
        return;
    free(c->S), free(c->R), free(c->P), free(c->t), free(c->w), free(c->tau);
    free(c->big_pos), free(c->big_q), free(c->ebig), free(c->bbig);
    free(c->blk), free(c->blk_qs), free(c->blk_M), free(c->a);
    free(c->Shat), free(c->coef), free(c->pi), free(c->Pl);
    mdsd_wor_stack_free(&c->bb);
    free(c);
}

/* ---- set-up ----------------------------------------------------------- */

/* Neumaier step. */
/* lambda = mass outside the n - 1 largest q of the chain. */
static double mass_outside_top(const mdsd_wor_chain *c)
{
    size_t L = c->L;
    if (L == 0)
        return 1.0;
    double top[64];
    size_t pos[64], have = 0;
    if (L > 64)
        L = 64; /* n > 65: a smaller lambda bound only lengthens the range */
    for (size_t k = 0; k < c->N; k++) {
        double x = c->q[c->chain[k]];
        if (have == L && x <= top[L - 1])
            continue;
        size_t j = have < L ? have++ : L - 1;
        while (j > 0 && top[j - 1] < x) {
            top[j] = top[j - 1];
            pos[j] = pos[j - 1];
            j--;
        }
        top[j] = x;
        pos[j] = k;
    }
    /* Direct compensated sum of the rest: lambda may be far below 1e-16. */
    double s = 0.0, comp = 0.0;
    size_t next = 0;
    size_t sorted_pos[64];
    memcpy(sorted_pos, pos, have * sizeof *pos);
    for (size_t i = 1; i < have; i++)
        for (size_t j = i; j > 0 && sorted_pos[j - 1] > sorted_pos[j]; j--) {
            size_t t = sorted_pos[j];
            sorted_pos[j] = sorted_pos[j - 1];
            sorted_pos[j - 1] = t;
        }
    for (size_t k = 0; k < c->N; k++) {
        if (next < have && sorted_pos[next] == k) {
            next++;
            continue;
        }
        MDSD_NEUMAIER_ADD(s, comp, c->q[c->chain[k]]);
    }
    return s + comp;
}

int mdsd_wor_nodes(mdsd_wor_chain *c, double t_max, bool vector_exp, mdsd_err *err)
{
    c->vector_exp = vector_exp;
    c->t_max = t_max;
    c->thr = c->rho / t_max;
    c->nb = 0;
    /* Panels [0,2], [2,4], ..., [2^{J-1}, 2^J] and a last one up to t_max. */
    int panels = (int)ceil(log2(c->t_max));
    size_t K = (size_t)panels * GL_POINTS;
    size_t cap = c->node_cap;
    if (mdsd_wor_grow((void **)&c->t, &cap, K, sizeof *c->t) ||
        (cap = c->node_cap, mdsd_wor_grow((void **)&c->w, &cap, K, sizeof *c->w)) ||
        (cap = c->node_cap, mdsd_wor_grow((void **)&c->tau, &cap, K, sizeof *c->tau)))
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory for %zu quadrature nodes", K);
    c->node_cap = cap;
    c->K = K;
    size_t k = 0;
    for (int j = 0; j < panels; j++) {
        double lo = j == 0 ? 0.0 : ldexp(1.0, j), hi = fmin(ldexp(1.0, j + 1), c->t_max);
        for (size_t g = 0; g < GL_POINTS; g++, k++) {
            c->t[k] = lo + (hi - lo) * c->gl_x[g];
            c->w[k] = (hi - lo) * c->gl_w[g];
            c->tau[k] = c->t[k] / c->t_max;
        }
    }
    return MDSD_OK;
}

/* Appends a big token: its e^{-q t} and 1 - e^{-q t} at every node. */
/* out[k] = e^{-a t[k]}, k < m, by mdsd_exp_nonpos (vectorised; the same
 * bits from every clone). */
MDSD_SIMD_CLONES static void exp_nodes(const double *t, size_t m, double a, double *out)
{
#pragma omp simd
    for (size_t k = 0; k < m; k++)
        out[k] = mdsd_exp_nonpos(-a * t[k]);
}

int mdsd_wor_add_big(mdsd_wor_chain *c, size_t pos, double x, mdsd_err *err)
{
    size_t cap = c->big_cap, tcap = c->table_cap;
    if (mdsd_wor_grow((void **)&c->big_pos, &cap, c->nb + 1, sizeof *c->big_pos) ||
        (cap = c->big_cap, mdsd_wor_grow((void **)&c->big_q, &cap, c->nb + 1, sizeof *c->big_q)) ||
        mdsd_wor_grow((void **)&c->ebig, &tcap, (c->nb + 1) * c->K, sizeof *c->ebig) ||
        (tcap = c->table_cap, mdsd_wor_grow((void **)&c->bbig, &tcap, (c->nb + 1) * c->K, sizeof *c->bbig)))
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory for %zu large tokens", c->nb + 1);
    c->big_cap = cap;
    c->table_cap = tcap;
    c->big_pos[c->nb] = pos;
    c->big_q[c->nb] = x;
    double *eb = c->ebig + c->nb * c->K, *bb = c->bbig + c->nb * c->K;
    if (c->vector_exp) {
        exp_nodes(c->t, c->K, x, eb);
        /* 1 - e^{-a} is exact to an ulp of it once e^{-a} <= e^{-1/2} */
        for (size_t i = 0; i < c->K; i++)
            bb[i] = x * c->t[i] >= 0.5 ? 1.0 - eb[i] : -expm1(-x * c->t[i]);
    } else {
        for (size_t i = 0; i < c->K; i++) {
            eb[i] = exp(-x * c->t[i]);
            bb[i] = -expm1(-x * c->t[i]);
        }
    }
    c->nb++;
    return MDSD_OK;
}

/* One pass over the chain: the big tokens and their node tables, and for the
 * small ones the power sums S_2..S_M and their q mass, recorded at every
 * block start. Orders 2..FIXED_ORDER go to register accumulators for every
 * small token (branch-free; an order beyond a token's need only adds
 * accuracy), higher orders only for the tokens that need them. */
/* Over chain[0..m): the q mass of the small tokens (q <= thr) in sums[0] and
 * their power sums w^2..w^8 (w = q t_max) in sums[1..7], each accumulated in
 * MDSD_LANES lanes (they vectorise) and the lanes then added in order. */
MDSD_SIMD_CLONES static void block_sums(const double *q, const uint32_t *chain, size_t m,
                                        double thr, double t_max, double sums[8])
{
    double l[8][MDSD_LANES] = {{0}};
    size_t k = 0;
    for (; k + MDSD_LANES <= m; k += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double x = q[chain[k + j]];
            x = x > thr ? 0.0 : x;
            double w = x * t_max, w2 = w * w, w3 = w2 * w, w4 = w2 * w2;
            l[0][j] += x, l[1][j] += w2, l[2][j] += w3, l[3][j] += w4;
            l[4][j] += w4 * w, l[5][j] += w4 * w2, l[6][j] += w4 * w3, l[7][j] += w4 * w4;
        }
    }
    for (size_t j = 0; k < m; k++, j++) {
        double x = q[chain[k]];
        x = x > thr ? 0.0 : x;
        double w = x * t_max, w2 = w * w, w3 = w2 * w, w4 = w2 * w2;
        l[0][j] += x, l[1][j] += w2, l[2][j] += w3, l[3][j] += w4;
        l[4][j] += w4 * w, l[5][j] += w4 * w2, l[6][j] += w4 * w3, l[7][j] += w4 * w4;
    }
    for (size_t r = 0; r < 8; r++) {
        double t = 0.0;
        for (size_t j = 0; j < MDSD_LANES; j++)
            t += l[r][j];
        sums[r] = t;
    }
}

/* One pass over the chain, a block at a time: the block rows (power sums of
 * the small tokens before each block start, their q mass, the largest
 * series order used), the big tokens and their node tables. Orders
 * 2..FIXED_ORDER of every small token come from block_sums (vectorised);
 * the few tokens whose series needs more orders (w >= w_fixed) and the big
 * tokens are handled in a second, scalar look at the block. */
static int scan_setup(mdsd_wor_chain *c, mdsd_err *err)
{
    size_t stride = MAX_ORDER + 1;
    double extra[MAX_ORDER + 1] = {0};
    double a[FIXED_ORDER + 1] = {0}; /* a[2..8]: power sums so far */
    double qsum = 0.0, qcomp = 0.0;
    unsigned Mmax = FIXED_ORDER;
    c->nb = 0;
    for (size_t k0 = 0; k0 <= c->N; k0 += BLOCK) { /* rows at the block starts <= N */
        size_t b = k0 / BLOCK;
        double *row = c->blk + b * stride;
        row[0] = row[1] = 0.0;
        for (unsigned m = 2; m <= FIXED_ORDER; m++)
            row[m] = a[m];
        for (unsigned m = FIXED_ORDER + 1; m <= Mmax; m++)
            row[m] = extra[m];
        c->blk_qs[b] = qsum + qcomp;
        c->blk_M[b] = (unsigned char)Mmax;
        if (k0 == c->N)
            break;
        size_t k1 = k0 + BLOCK < c->N ? k0 + BLOCK : c->N;
        double sums[8];
        block_sums(c->q, c->chain + k0, k1 - k0, c->thr, c->t_max, sums);
        MDSD_NEUMAIER_ADD(qsum, qcomp, sums[0]);
        for (unsigned m = 2; m <= FIXED_ORDER; m++)
            a[m] += sums[m - 1];
        for (size_t k = k0; k < k1; k++) {
            double x = c->q[c->chain[k]];
            if (x > c->thr) {
                int rc = mdsd_wor_add_big(c, k, x, err);
                if (rc)
                    return rc;
                continue;
            }
            double w = x * c->t_max;
            if (w >= c->w_fixed) {
                unsigned m = mdsd_wor_order_for(c, w);
                double w2 = w * w, w4 = w2 * w2, p = w4 * w4;
                for (unsigned j = FIXED_ORDER + 1; j <= m; j++) {
                    p *= w;
                    extra[j] += p;
                }
                if (m > Mmax)
                    Mmax = m;
            }
        }
    }
    return MDSD_OK;
}

static int setup(mdsd_wor_chain *c, double t_max, mdsd_err *err)
{
    int rc = mdsd_wor_nodes(c, t_max, false, err);
    return rc ? rc : scan_setup(c, err);
}

int mdsd_wor_range(const mdsd_wor_chain *c, double lambda, double *t_max, mdsd_err *err)
{
    if (!(lambda > 0.0))
        return mdsd_fail(err, MDSD_EINVAL, "wor: no draft mass outside the %zu largest tokens",
                         c->L);
    double t = RANGE / lambda;
    if (!(t < 1e306)) /* panels up to 2^1017 and room for the restarts' growth */
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_METHOD,
                                "wor: the draft mass outside its %zu largest tokens is %g, too small for "
                                "the quadrature's range; use `method brute` or lp-reduced", c->L, lambda);
    *t_max = t < 4.0 ? 4.0 : t;
    return MDSD_OK;
}

int mdsd_wor_chain_set(mdsd_wor_chain *c, const double *q, const uint32_t *chain, size_t N,
                       mdsd_err *err)
{
    if (N > c->cap_V)
        return mdsd_fail(err, MDSD_EINVAL, "wor: chain of %zu tokens exceeds the workspace (%zu)",
                         N, c->cap_V);
    if (N < c->n)
        return mdsd_fail(err, MDSD_EINVAL,
                         "wor: n = %zu drafts without replacement but only %zu tokens have q > 0",
                         c->n, N);
    c->q = q;
    c->chain = chain;
    c->N = N;
    /* Prefix and suffix masses; the n - 1 largest q on the way (for lambda). */
    size_t L = c->L < 64 ? c->L : 64; /* n > 65: a smaller lambda only lengthens the range */
    double top[64];
    size_t have = 0;
    /* S forwards and R backwards in one loop: two independent chains of
     * additions, so that their latencies overlap */
    mdsd_bsum s, r;
    mdsd_bsum_init(&s);
    mdsd_bsum_init(&r);
    c->S[0] = 0.0;
    c->R[N] = 0.0;
    for (size_t k = 0; k < N; k++) {
        double x = q[chain[k]];
        mdsd_bsum_add(&s, x);
        c->S[k + 1] = mdsd_bsum_value(&s);
        mdsd_bsum_add(&r, q[chain[N - 1 - k]]);
        c->R[N - 1 - k] = mdsd_bsum_value(&r);
        if (L && (have < L || x > top[L - 1])) {
            size_t j = have < L ? have++ : L - 1;
            while (j > 0 && top[j - 1] < x) {
                top[j] = top[j - 1];
                j--;
            }
            top[j] = x;
        }
    }
    /* lambda = mass outside the top L. It only sets the integration range, so
     * 1 - (top mass) is enough unless it is tiny; then sum the rest directly. */
    double mtop = 0.0;
    for (size_t j = 0; j < have; j++)
        mtop += top[j];
    c->lambda = L ? c->R[0] - mtop : 1.0;
    if (L && c->lambda < 1e-6)
        c->lambda = mass_outside_top(c);
    double t_max;
    int rc = mdsd_wor_range(c, c->lambda, &t_max, err);
    return rc ? rc : setup(c, t_max, err);
}

/* ---- evaluation ------------------------------------------------------- */

/* e^{-decay t} at the nodes k0..k0+m (libm's exp, one call per node: the
 * same bits whichever clone of quad_chunk runs). */
static void decay_nodes(const double *t, size_t m, double decay, double *out)
{
    for (size_t k = 0; k < m; k++)
        out[k] = exp(-decay * t[k]);
}

/* R(t_k) = P(N_H(t_k) < n) e^{-r t_k} at the nodes k0..k0+m of one chunk,
 * vectorised over the nodes: each node's operations are the scalar
 * recursion's, in the same order (so every clone gives the same bits). */
MDSD_SIMD_CLONES static void quad_chunk(const mdsd_wor_chain *c, size_t k0, size_t m, unsigned M,
                                        size_t nbH, double *pi, double *P, double *Rk)
{
    size_t stride = MAX_ORDER + 1, L = c->L, n = c->n, K = c->K;
    const double *tau = c->tau + k0;
    for (size_t l = 1; l <= L; l++) {
        const double *cl = c->coef + l * stride;
        double *Pl = P + l * NODE_CHUNK;
#pragma omp simd
        for (size_t k = 0; k < m; k++)
            Pl[k] = 0.0;
        for (size_t i = M + 1; i-- > l;) {
            double a = cl[i - l];
#pragma omp simd
            for (size_t k = 0; k < m; k++)
                Pl[k] = Pl[k] * tau[k] + a;
        }
#pragma omp simd
        for (size_t k = 0; k < m; k++) {
            double tl = tau[k];
            for (size_t j = 1; j < l; j++)
                tl *= tau[k];
            Pl[k] = Pl[k] * tl;
        }
    }
    /* pi_j = e^{-r t} P(N_S(t) = j): exp of the log-generating function
     * (pi_0, the decay, is filled by the caller) */
    for (size_t j = 1; j < n; j++) {
        double *pj = pi + j * NODE_CHUNK, inv = (double)j;
#pragma omp simd
        for (size_t k = 0; k < m; k++) {
            double s = 0.0;
            for (size_t l = 1; l <= j; l++) {
                double v = P[l * NODE_CHUNK + k];
                s += (l & 1 ? v : -v) * pi[(j - l) * NODE_CHUNK + k];
            }
            pj[k] = s / inv;
        }
    }
    for (size_t bt = 0; bt < nbH; bt++) {
        const double *e = c->ebig + bt * K + k0, *bb = c->bbig + bt * K + k0;
        for (size_t j = n - 1; j > 0; j--) {
            double *pj = pi + j * NODE_CHUNK, *pl = pi + (j - 1) * NODE_CHUNK;
#pragma omp simd
            for (size_t k = 0; k < m; k++)
                pj[k] = pj[k] * e[k] + pl[k] * bb[k];
        }
#pragma omp simd
        for (size_t k = 0; k < m; k++)
            pi[k] *= e[k];
    }
#pragma omp simd
    for (size_t k = 0; k < m; k++) {
        double s = 0.0;
        for (size_t j = 0; j < n; j++)
            s += pi[j * NODE_CHUNK + k];
        Rk[k] = s;
    }
}

double mdsd_wor_quad(mdsd_wor_chain *c, const double *Sh, unsigned M, double qs, double r,
                     size_t nbH, double *tail)
{
    size_t stride = MAX_ORDER + 1, L = c->L;
    /* coef[l][m] = a_{l,m} S_m, stored from m = l so that Horner runs on m - l. */
    for (size_t l = 1; l <= L; l++) {
        const double *al = c->a + l * stride;
        double *cl = c->coef + l * stride;
        for (size_t m = l; m <= M; m++)
            cl[m - l] = al[m] * Sh[m];
    }
    double decay = r + qs, acc = 0.0, last = 0.0, Rk[NODE_CHUNK];
    for (size_t k0 = 0; k0 < c->K; k0 += NODE_CHUNK) {
        size_t m = c->K - k0 < NODE_CHUNK ? c->K - k0 : NODE_CHUNK;
        if (c->vector_exp)
            exp_nodes(c->t + k0, m, decay, c->pi);
        else
            decay_nodes(c->t + k0, m, decay, c->pi);
        quad_chunk(c, k0, m, M, nbH, c->pi, c->Pl, Rk);
        for (size_t k = 0; k < m; k++)
            acc += c->w[k0 + k] * Rk[k];
        last = Rk[m - 1];
    }
    *tail = last;
    return 1.0 - r * acc;
}

/* One quadrature of Q(H_i); *tail receives e^{-r t} R(t) at the last node. */
static double evaluate(mdsd_wor_chain *c, size_t i, double *tail)
{
    size_t stride = MAX_ORDER + 1;
    size_t b = i / BLOCK;
    double *Sh = c->Shat;
    unsigned M = c->blk_M[b];
    memcpy(Sh, c->blk + b * stride, (M + 1) * sizeof *Sh);
    memset(Sh + M + 1, 0, (stride - M - 1) * sizeof *Sh); /* rows hold orders <= M only */
    double qs = 0.0;
    for (size_t k = b * BLOCK; k < i; k++) {
        double x = c->q[c->chain[k]];
        if (x > c->thr)
            continue;
        double w = x * c->t_max;
        unsigned m = mdsd_wor_order_for(c, w);
        if (m > M)
            M = m;
        mdsd_wor_add_powers(Sh, w, m);
        qs += x;
    }
    qs += c->blk_qs[b];
    Sh[1] = qs * c->t_max; /* the compensated mass, consistent with e^{-q(S) t} */
    size_t nbH = 0;
    while (nbH < c->nb && c->big_pos[nbH] < i)
        nbH++;
    return mdsd_wor_quad(c, Sh, M, qs, c->R[i], nbH, tail);
}

int mdsd_wor_chain_Q(mdsd_wor_chain *c, size_t i, double *Q, mdsd_err *err)
{
    if (i > c->N)
        return mdsd_fail(err, MDSD_EINVAL, "wor: prefix %zu beyond the chain of %zu tokens", i,
                         c->N);
    if (i < c->n) {
        *Q = 0.0; /* fewer than n tokens of positive probability */
        return MDSD_OK;
    }
    if (i == c->N) {
        *Q = 1.0;
        return MDSD_OK;
    }
    for (int attempt = 0;; attempt++) {
        double tail, v = evaluate(c, i, &tail);
        if (mdsd_wor_quad_ok(v, tail)) {
            *Q = v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
            return MDSD_OK;
        }
        if (attempt == MAX_RESTARTS || tail <= TAIL_TOL)
            return mdsd_fail(err, MDSD_ESOLVER,
                             "wor: quadrature of Q(H) failed (value %.17g, tail %.3g, t_max %g, "
                             "lambda %.3g)", v, tail, c->t_max, c->lambda);
        int rc = setup(c, c->t_max * 16.0, err);
        if (rc)
            return rc;
    }
}

/* ---- branch and bound over prefixes ------------------------------------ */

int mdsd_wor_stack_push(mdsd_wor_stack *s, size_t a, size_t b, double Qa, double Qb)
{
    size_t cap = s->cap, qcap = s->cap;
    if (mdsd_wor_grow((void **)&s->ab, &cap, 2 * (s->top + 1), sizeof *s->ab) ||
        mdsd_wor_grow((void **)&s->Q, &qcap, 2 * (s->top + 1), sizeof *s->Q))
        return -1;
    s->cap = cap < qcap ? cap : qcap;
    s->ab[2 * s->top] = a, s->ab[2 * s->top + 1] = b;
    s->Q[2 * s->top] = Qa, s->Q[2 * s->top + 1] = Qb;
    s->top++;
    return 0;
}

void mdsd_wor_stack_free(mdsd_wor_stack *s)
{
    free(s->ab), free(s->Q);
    s->ab = NULL, s->Q = NULL, s->cap = s->top = 0;
}

/* q mass of the tokens at chain positions a..b-1, from whichever of the
 * prefix or suffix masses resolves it: near H = everything the prefix mass is
 * ~1 and the tail tokens' q may be far below its rounding. */
static inline double mass_between(const mdsd_wor_chain *c, size_t a, size_t b)
{
    return c->R[a] <= 0.5 ? c->R[a] - c->R[b] : c->S[b] - c->S[a];
}

int mdsd_wor_chain_min(mdsd_wor_chain *c, const double *p, double tol, double *fmin,
                       size_t *argmin, size_t *evaluations, mdsd_err *err)
{
    size_t N = c->N, n = c->n, evals = 0;
    double *P = c->P;
    mdsd_bsum s;
    mdsd_bsum_init(&s);
    P[0] = 0.0;
    for (size_t k = 0; k < N; k++) {
        mdsd_bsum_add(&s, p[c->chain[k]]);
        P[k + 1] = mdsd_bsum_value(&s);
    }
    double best = 0.0; /* the empty set */
    size_t best_i = 0;
    /* Prefixes shorter than n have Q = 0 and p(H) - Q(H) = P >= 0: skip them. */
    size_t lo = n, hi = N;
    double Qlo, Qhi = 1.0;
    int rc = mdsd_wor_chain_Q(c, lo, &Qlo, err);
    if (rc)
        return rc;
    evals++;
    if (P[lo] - Qlo < best)
        best = P[lo] - Qlo, best_i = lo;
    if (P[hi] - Qhi < best)
        best = P[hi] - Qhi, best_i = hi;
    mdsd_wor_stack *st = &c->bb;
    st->top = 0;
    if (mdsd_wor_stack_push(st, lo, hi, Qlo, Qhi))
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    size_t a, b;
    double Qa, Qb;
    while (mdsd_wor_stack_pop(st, &a, &b, &Qa, &Qb)) {
        if (b - a < 2)
            continue;
        /* Lower bound of P - Q inside (a, b): Q <= the chord in the q-mass
         * coordinate (q-convexity), so P - Q >= A_i = P_i - chord_i. Along
         * the chain the added tokens' p/q never decrease, so A_i is unimodal:
         * its minimum is where the increment p(x) - slope q(x) of the token
         * added turns positive, found by bisection in O(log(b - a)). */
        double span_mass = mass_between(c, a, b), lb;
        size_t j;
        if (span_mass > 0.0) {
            double slope = (Qb - Qa) / span_mass;
            size_t l = a + 1, h = b; /* first i in [a+1, b) with a positive increment, else b */
            while (l < h) {
                size_t mid = l + (h - l) / 2;
                uint32_t x = c->chain[mid - 1];
                if (p[x] - slope * c->q[x] > 0.0)
                    h = mid;
                else
                    l = mid + 1;
            }
            j = l > a + 1 ? l - 1 : a + 1;
            if (j >= b)
                j = b - 1;
            lb = P[j] - (Qa + slope * mass_between(c, a, j));
        } else { /* masses below rounding: only monotonicity, Q <= Q(H_b) */
            j = a + (b - a) / 2;
            lb = P[a + 1] - Qb;
        }
        if (!(lb >= best - tol)) {
            size_t span = b - a, m = j;
            if (m - a < span / 8 || b - m < span / 8)
                m = a + span / 2;
            double Qm;
            if ((rc = mdsd_wor_chain_Q(c, m, &Qm, err)))
                return rc;
            evals++;
            if (P[m] - Qm < best)
                best = P[m] - Qm, best_i = m;
            /* Explore the side holding the bound's minimiser first. */
            int ok = j < m ? !mdsd_wor_stack_push(st, m, b, Qm, Qb) &&
                                 !mdsd_wor_stack_push(st, a, m, Qa, Qm)
                           : !mdsd_wor_stack_push(st, a, m, Qa, Qm) &&
                                 !mdsd_wor_stack_push(st, m, b, Qm, Qb);
            if (!ok)
                return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
        }
    }
    *fmin = best;
    *argmin = best_i;
    if (evaluations)
        *evaluations = evals;
    return MDSD_OK;
}

/* ---- arbitrary subsets -------------------------------------------------- */

int mdsd_wor_Q(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
               mdsd_err *err)
{
    uint32_t *chain = malloc((V ? V : 1) * sizeof *chain);
    if (!chain)
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    size_t N = 0, h = 0;
    for (size_t x = 0; x < V; x++)
        if (q[x] > 0.0 && in_H[x])
            chain[N++] = (uint32_t)x, h++;
    for (size_t x = 0; x < V; x++)
        if (q[x] > 0.0 && !in_H[x])
            chain[N++] = (uint32_t)x;
    mdsd_wor_chain *c = mdsd_wor_chain_alloc(V, n, err);
    int rc = c ? MDSD_OK : MDSD_ENOMEM;
    if (rc == MDSD_OK)
        rc = mdsd_wor_chain_set(c, q, chain, N, err);
    if (rc == MDSD_OK)
        rc = mdsd_wor_chain_Q(c, h, Q, err);
    mdsd_wor_chain_free(c);
    free(chain);
    return rc;
}

/* ---- the GSL reference ---------------------------------------------------- */

typedef struct {
    const double *q;
    const size_t *H;
    size_t h, n;
    double r;
    double *pi;
} quad_params;

/* r e^{-rt} P(N_H(t) < n) by the Poisson-binomial DP over every token of H. */
static double quad_integrand(double t, void *vp)
{
    quad_params *qp = vp;
    double *pi = qp->pi;
    size_t n = qp->n;
    pi[0] = 1.0;
    for (size_t j = 1; j < n; j++)
        pi[j] = 0.0;
    for (size_t k = 0; k < qp->h; k++) {
        double x = qp->q[qp->H[k]], e = exp(-x * t), b = -expm1(-x * t);
        for (size_t j = n - 1; j > 0; j--)
            pi[j] = pi[j] * e + pi[j - 1] * b;
        pi[0] *= e;
    }
    double R = 0.0;
    for (size_t j = 0; j < n; j++)
        R += pi[j];
    return qp->r * exp(-qp->r * t) * R;
}

/* lambda of an arbitrary q: mass outside its n - 1 largest entries. */
static double lambda_of(const double *q, size_t V, size_t n)
{
    size_t L = n ? n - 1 : 0;
    double top[64] = {0};
    if (L > 64)
        L = 64;
    double total = 0.0, comp = 0.0;
    for (size_t x = 0; x < V; x++) {
        if (!(q[x] > 0.0))
            continue;
        MDSD_NEUMAIER_ADD(total, comp, q[x]);
        double v = q[x];
        for (size_t j = 0; j < L; j++)
            if (v > top[j]) {
                double t = top[j];
                top[j] = v;
                v = t;
            }
    }
    double m = 0.0;
    for (size_t j = 0; j < L; j++)
        m += top[j];
    return total + comp - m;
}

int mdsd_wor_Q_quad(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
                    mdsd_err *err)
{
    size_t *H = malloc((V ? V : 1) * sizeof *H), h = 0;
    double *pi = malloc((n ? n : 1) * sizeof *pi);
    if (!H || !pi) {
        free(H), free(pi);
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    }
    double r = 0.0, comp = 0.0;
    for (size_t x = 0; x < V; x++) {
        if (!(q[x] > 0.0))
            continue;
        if (in_H[x])
            H[h++] = x;
        else
            MDSD_NEUMAIER_ADD(r, comp, q[x]);
    }
    r += comp;
    int rc = MDSD_OK;
    if (h < n) {
        *Q = 0.0;
    } else if (r == 0.0) {
        *Q = 1.0;
    } else {
        /* Adaptive Gauss-Kronrod (61 points) on [0,1], [1,2], [2,4], ... up to
         * 100 / lambda: one panel per scale, so that no scale is missed. */
        double lambda = lambda_of(q, V, n);
        quad_params qp = {q, H, h, n, r, pi};
        gsl_function F = {quad_integrand, &qp};
        gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        double total = 0.0, tcomp = 0.0, lo = 0.0, hi = 1.0, worst = 0.0;
        while (ws && lo < 100.0 / lambda && rc == MDSD_OK) {
            double result, abserr;
            int status = gsl_integration_qag(&F, lo, hi, 1e-18, 1e-14, 1000, GSL_INTEG_GAUSS61, ws,
                                             &result, &abserr);
            if (status && abserr > 1e-14)
                rc = mdsd_fail(err, MDSD_ESOLVER,
                               "wor reference quadrature on [%g, %g]: %s (error estimate %g)", lo,
                               hi, gsl_strerror(status), abserr);
            MDSD_NEUMAIER_ADD(total, tcomp, result);
            worst = abserr > worst ? abserr : worst;
            lo = hi;
            hi *= 2.0;
        }
        gsl_set_error_handler(old);
        if (!ws)
            rc = mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
        gsl_integration_workspace_free(ws);
        double v = 1.0 - (total + tcomp);
        *Q = v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
    }
    free(H), free(pi);
    return rc;
}
