/* verify_bv.c - Block Verification: Z. Sun, U. Mendlovic, Y. Leviathan,
 * A. Aharoni, J. H. Ro, A. Beirami, A. T. Suresh, "Block Verification
 * Accelerates Speculative Decoding", ICLR 2025 (arXiv 2403.10444),
 * Algorithm 2 (block verification):
 *
 *   sample eta_1..eta_L ~ U(0, 1); tau = 0; p_0 = 1
 *   for i = 1..L:
 *     p_i = min{ p_{i-1} M_b(X_i | X^{i-1}) / M_s(X_i | X^{i-1}), 1 }
 *     h_i = sum_x max{p_i M_b(x | X^i) - M_s(x | X^i), 0}
 *           / ( sum_x max{p_i M_b(x | X^i) - M_s(x | X^i), 0} + 1 - p_i )   (i < L)
 *     h_L = p_L
 *     if eta_i <= h_i: tau = i
 *   Y ~ M_b(. | X^L) if tau = L, else
 *   Y ~ p_res(. | X^tau) = max{p_tau M_b(. | X^tau) - M_s(. | X^tau), 0} / its sum
 *   return X^tau, Y
 *
 * (M_b the target p, M_s the draft q.) So tau is the last i whose test
 * passes, and its law given the draft is
 *   P(tau = i) = h_i prod_{j > i} (1 - h_j),  h_0 = 1.
 * Its text was not retrievable here in full; this is the algorithm as its
 * example checks it (binary p = (1/3, 2/3), q = (2/3, 1/3), L = 2: 11/9
 * accepted tokens, test block_verifiers/sun_example) and as the reference
 * implementation of Thomas & Pal (arXiv 2602.16961, bv_verify) computes it.
 * Readings: h_i = 0 when its numerator is 0 (the paper's 0/0 at p_i = 1 and
 * p(.|X^i) = q(.|X^i): then P(tau = i) = 0 whatever h_i is, as every later
 * weight is 1); 1 - h_i is formed as (1 - p_i) / (sum + 1 - p_i). One path:
 * seq K = 1 (gbv verifies several). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blockv.h"

int mdsd_blockv_sample(const double *w, size_t n, gsl_rng *rng)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++)
        total += w[i];
    double u = gsl_rng_uniform(rng) * total, acc = 0.0;
    int last = -1;
    for (size_t i = 0; i < n; i++) {
        if (!(w[i] > 0.0))
            continue;
        last = (int)i;
        acc += w[i];
        if (u < acc)
            return (int)i;
    }
    return last;
}

/* The weights p_i and tests h_i of the path (h[0] = 1), and 1 - h_i as a
 * ratio of non-negative terms. stale: the audit variant (NOT valid) whose
 * h_i takes p_{i-1} for p_i. */
static void weights(size_t V, size_t L, const int *x, const double *const *P,
                    const double *const *Q, int stale, double *w, double *h, double *miss,
                    double *r)
{
    w[0] = 1.0;
    for (size_t i = 1; i <= L; i++) {
        double qx = Q[i - 1][x[i - 1]], num = w[i - 1] * P[i - 1][x[i - 1]];
        w[i] = qx > 0.0 ? fmin(1.0, num / qx) : 0.0;
    }
    h[0] = 1.0, miss[0] = 0.0, r[0] = 0.0;
    for (size_t i = 0; i < L; i++) {
        double s = 0.0, wi = stale && i > 0 ? w[i - 1] : w[i];
        for (size_t y = 0; y < V; y++) {
            double d = wi * P[i][y] - Q[i][y];
            if (d > 0.0)
                s += d;
        }
        r[i] = s;
        if (i == 0)
            continue;
        h[i] = s > 0.0 ? s / (s + (1.0 - wi)) : 0.0;
        miss[i] = s > 0.0 ? (1.0 - wi) / (s + (1.0 - wi)) : 1.0;
    }
    h[L] = w[L];
    miss[L] = 1.0 - w[L];
}

/* Row i of the next token's law: the residual at i < L (normalised by its
 * summed mass), p at L. */
static void next_law(size_t V, size_t L, size_t i, const double *const *P,
                     const double *const *Q, const double *w, double *out)
{
    double mass = 0.0;
    for (size_t y = 0; i < L && y < V; y++) {
        double d = w[i] * P[i][y] - Q[i][y];
        out[y] = d > 0.0 ? d : 0.0;
        mass += out[y];
    }
    if (i == L || !(mass > 0.0)) { /* a residual of mass 0 is never reached */
        for (size_t y = 0; y < V; y++)
            out[y] = P[i] ? P[i][y] : 0.0;
        return;
    }
    for (size_t y = 0; y < V; y++)
        out[y] /= mass;
}

static int path_law(size_t V, size_t L, const int *x, const double *const *P,
                    const double *const *Q, int stale, double *stop, double *next, mdsd_err *err)
{
    double w[MDSD_BLOCK_MAX_DEPTH + 1], h[MDSD_BLOCK_MAX_DEPTH + 1];
    double miss[MDSD_BLOCK_MAX_DEPTH + 1], r[MDSD_BLOCK_MAX_DEPTH + 1];
    if (L > MDSD_BLOCK_MAX_DEPTH)
        return mdsd_fail(err, MDSD_EINVAL, "bv: depth %zu above %d", L, MDSD_BLOCK_MAX_DEPTH);
    weights(V, L, x, P, Q, stale, w, h, miss, r);
    double surv = 1.0; /* P(every test after i fails) */
    for (size_t i = L; i >= 1; i--) {
        stop[i] = surv * h[i];
        surv *= miss[i];
    }
    stop[0] = surv;
    for (size_t i = 0; next && i <= L; i++)
        next_law(V, L, i, P, Q, w, next + i * V);
    return MDSD_OK;
}

int mdsd_bv_path_law(size_t V, size_t L, const int *x, const double *const *P,
                     const double *const *Q, double *stop, double *next, mdsd_err *err)
{
    return path_law(V, L, x, P, Q, 0, stop, next, err);
}

/* One path's laws along the first (only) sequence of a seq tree. */
static int the_path(const mdsd_dtree *t, int *x, const double **P, const double **Q, int *nodes,
                    mdsd_err *err)
{
    int u = 0;
    nodes[0] = 0;
    for (size_t i = 0; i < t->L; i++) {
        P[i] = t->p[u], Q[i] = t->q[u];
        if (t->kid[u] < 0 || t->sib[t->kid[u]] >= 0 || !P[i] || !Q[i])
            return mdsd_fail(err, MDSD_EINVAL, "bv: the draft is not one path of depth %zu with "
                             "its laws", t->L);
        u = t->kid[u];
        x[i] = t->token[u];
        nodes[i + 1] = u;
    }
    P[t->L] = t->p[u];
    return MDSD_OK;
}

static int bv_check(const mdsd_policy *pol, mdsd_err *err)
{
    if (pol->kind != MDSD_POLICY_SEQ || pol->sequences != 1)
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_SEQUENCES,
                                "bv verifies one draft path: `sequences 1` "
                                "(gbv verifies K paths)");
    return MDSD_OK;
}

static int law_of(const mdsd_dtree *t, int stale, double *stop, double *next, mdsd_err *err)
{
    int x[MDSD_BLOCK_MAX_DEPTH], nodes[MDSD_BLOCK_MAX_DEPTH + 1];
    const double *P[MDSD_BLOCK_MAX_DEPTH + 1], *Q[MDSD_BLOCK_MAX_DEPTH + 1];
    double s[MDSD_BLOCK_MAX_DEPTH + 1];
    size_t V = t->V, L = t->L;
    int rc = the_path(t, x, P, Q, nodes, err);
    double *rows = next ? malloc((L + 1) * V * sizeof *rows) : NULL;
    if (rc == MDSD_OK && next && !rows)
        rc = mdsd_fail(err, MDSD_ENOMEM, "bv: out of memory");
    if (rc == MDSD_OK)
        rc = path_law(V, L, x, P, Q, stale, s, rows, err);
    if (rc == MDSD_OK) {
        memset(stop, 0, t->n * sizeof *stop);
        for (size_t i = 0; i <= L; i++)
            stop[nodes[i]] = s[i];
        for (size_t i = 0; next && i <= L; i++)
            memcpy(next + (size_t)nodes[i] * V, rows + i * V, V * sizeof *rows);
    }
    free(rows);
    return rc;
}

/* Algorithm 2 as printed: every eta_i drawn, tau the last passing test. */
static int path_step(size_t V, size_t L, const int *x, const double *const *P,
                     const double *const *Q, int stale, gsl_rng *rng, size_t *tau, int *next,
                     mdsd_err *err)
{
    double w[MDSD_BLOCK_MAX_DEPTH + 1], h[MDSD_BLOCK_MAX_DEPTH + 1];
    double miss[MDSD_BLOCK_MAX_DEPTH + 1], r[MDSD_BLOCK_MAX_DEPTH + 1];
    weights(V, L, x, P, Q, stale, w, h, miss, r);
    *tau = 0;
    for (size_t i = 1; i <= L; i++)
        if (gsl_rng_uniform(rng) <= h[i])
            *tau = i;
    double *law = malloc(V * sizeof *law);
    if (!law)
        return mdsd_fail(err, MDSD_ENOMEM, "bv: out of memory");
    next_law(V, L, *tau, P, Q, w, law);
    *next = mdsd_blockv_sample(law, V, rng);
    free(law);
    return MDSD_OK;
}

int mdsd_bv_path_step(size_t V, size_t L, const int *x, const double *const *P,
                      const double *const *Q, gsl_rng *rng, size_t *tau, int *next,
                      mdsd_err *err)
{
    return path_step(V, L, x, P, Q, 0, rng, tau, next, err);
}

static int step_of(const mdsd_dtree *t, int stale, gsl_rng *rng, int *node, int *next,
                   mdsd_err *err)
{
    int x[MDSD_BLOCK_MAX_DEPTH], nodes[MDSD_BLOCK_MAX_DEPTH + 1];
    const double *P[MDSD_BLOCK_MAX_DEPTH + 1], *Q[MDSD_BLOCK_MAX_DEPTH + 1];
    size_t tau = 0;
    int rc = the_path(t, x, P, Q, nodes, err);
    if (rc == MDSD_OK)
        rc = path_step(t->V, t->L, x, P, Q, stale, rng, &tau, next, err);
    *node = nodes[tau];
    return rc;
}

static int bv_law(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err)
{
    return law_of(t, 0, stop, next, err);
}

static int bv_step(const mdsd_dtree *t, gsl_rng *rng, int *node, int *next, mdsd_err *err)
{
    return step_of(t, 0, rng, node, next, err);
}

const mdsd_blockv_ops mdsd_blockv_bv_ops = {"bv", bv_check, bv_law, bv_step};

/* Audit variant (NOT valid): h_i formed with p_{i-1} instead of p_i. */
static int stale_law(const mdsd_dtree *t, double *stop, double *next, mdsd_err *err)
{
    return law_of(t, 1, stop, next, err);
}

static int stale_step(const mdsd_dtree *t, gsl_rng *rng, int *node, int *next, mdsd_err *err)
{
    return step_of(t, 1, rng, node, next, err);
}

const mdsd_blockv_ops mdsd_blockv_bv_stale_ops = {"bv-stale", bv_check, stale_law, stale_step};
