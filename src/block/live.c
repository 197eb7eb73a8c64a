/* live.c - live tokens per target call on a Markov toy pair (live.h,
 * MATH.md §5.9).
 *
 * A node of a block is (depth d, last token t, m surviving drafts) as in
 * block.c. Its law, the verifier's randomness and the node's drafts
 * integrated out, is acc(y, c) = P(y is output and accepted, y drawn c
 * times) from the enumerated draft law and the verifier's conditional law,
 * and corr(b) = P(b is output as the correction token) = p(b | t) -
 * sum_c acc(b, c): the output follows p(. | t) whatever the drafts (the
 * verifier is lossless), so what is not accepted is the correction. A
 * forward pass from the root spreads the mass over the nodes and collects
 * B_s(j, b) = P(tau = j, last token b | context s). */
#include "live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>

#include "block_impl.h"

typedef struct {
    mdsd_bk c;
    size_t V, W;      /* W = nmax + 1: the draft-count cells of a token */
    double **acc;     /* [V * W] cells (token, n): [V * W] acc(y, count) at y * W + count */
    double **corr;    /* the same cells: [V] corr(b) */
} live_ctx;

static void live_free(live_ctx *x)
{
    for (size_t i = 0; x->acc && i < x->V * x->W; i++) {
        free(x->acc[i]);
        free(x->corr[i]);
    }
    free(x->acc);
    free(x->corr);
    mdsd_bk_free(&x->c);
}

/* The law of a node after token tok with n drafts (computed once). */
static int node_law(live_ctx *x, int tok, size_t n, const double **acc, const double **corr,
                    mdsd_err *err)
{
    size_t cell = (size_t)tok * x->W + n, V = x->V, W = x->W;
    if (x->acc[cell]) {
        *acc = x->acc[cell], *corr = x->corr[cell];
        return MDSD_OK;
    }
    double *a = calloc(V * W, sizeof *a), *r = malloc(V * sizeof *r);
    const mdsd_verifier *v;
    mdsd_scheme s;
    mdsd_joint D = {0};
    int rc = a && r ? mdsd_bk_verifier(&x->c, tok, n, &v, err)
                    : mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    mdsd_bk_scheme(&x->c, tok, n, &s);
    size_t guard = x->c.o.vopts.max_tuples ? x->c.o.vopts.max_tuples : MDSD_JOINT_MAX_TUPLES;
    if (rc == MDSD_OK)
        rc = mdsd_scheme_joint(&s, guard, &D, err);
    double py[MDSD_BLOCK_MAX_DRAFTS];
    for (size_t t = 0; rc == MDSD_OK && t < D.count; t++) {
        const int *tu = D.tokens + t * n;
        if ((rc = mdsd_verifier_law(v, tu, py, err)) != MDSD_OK)
            break;
        for (size_t j = 0; j < n; j++) {
            size_t count = 0, first = 1;
            for (size_t k = 0; k < n; k++)
                if (tu[k] == tu[j]) {
                    count++;
                    first &= k >= j;
                }
            if (first && py[j] > 0.0)
                a[(size_t)tu[j] * W + count] += D.prob[t] * py[j];
        }
    }
    mdsd_joint_free(&D);
    const double *p = x->c.m->p + (size_t)tok * V;
    for (size_t b = 0; rc == MDSD_OK && b < V; b++) {
        double accepted = 0.0;
        for (size_t c = 0; c < W; c++)
            accepted += a[b * W + c];
        /* the one difference: absolute error a few ulp of p(b), and a valid
         * verifier never accepts more of b than p(b) */
        r[b] = p[b] - accepted;
        if (r[b] < -1e-9)
            rc = mdsd_fail(err, MDSD_EINVAL, "block: after token %d with %zu drafts, %s accepts "
                           "token %zu with probability %.17g > p = %.17g: not a lossless verifier",
                           tok, n, mdsd_verifier_name(x->c.v), b, accepted, p[b]);
        if (r[b] < 0.0)
            r[b] = 0.0;
    }
    if (rc != MDSD_OK) {
        free(a), free(r);
        return rc;
    }
    x->acc[cell] = a, x->corr[cell] = r;
    *acc = a, *corr = r;
    return MDSD_OK;
}

/* B[j * V + b] = P(tau = j, last token b | context s), j = 1..L+1 (B has
 * (L + 2) V entries, row 0 unused); cur and next: [V * W] scratch. */
static int block_law(live_ctx *x, int s, double *B, double *cur, double *next, mdsd_err *err)
{
    const mdsd_policy *pol = &x->c.pol;
    size_t V = x->V, W = x->W, L = pol->depth, seq = pol->kind == MDSD_POLICY_SEQ;
    memset(B, 0, (L + 2) * V * sizeof *B);
    memset(cur, 0, V * W * sizeof *cur);
    cur[(size_t)s * W + (seq ? pol->sequences : 0)] = 1.0;
    for (size_t d = 0; d < L; d++) {
        memset(next, 0, V * W * sizeof *next);
        for (size_t cell = 0; cell < V * W; cell++) {
            double w = cur[cell];
            if (!(w > 0.0))
                continue;
            int tok = (int)(cell / W);
            size_t n = mdsd_bk_drafts_at(&x->c, d, cell % W);
            const double *acc, *corr;
            int rc = node_law(x, tok, n, &acc, &corr, err);
            if (rc)
                return rc;
            for (size_t b = 0; b < V; b++)
                B[(d + 1) * V + b] += w * corr[b];
            for (size_t yc = 0; yc < V * W; yc++) {
                double a = w * acc[yc];
                if (!(a > 0.0))
                    continue;
                size_t y = yc / W;
                if (d + 1 < L) {
                    next[y * W + (seq ? yc % W : 0)] += a;
                } else { /* every level accepted: the bonus token from p(. | y) */
                    const double *py = x->c.m->p + y * V;
                    for (size_t b = 0; b < V; b++)
                        B[(L + 1) * V + b] += a * py[b];
                }
            }
        }
        double *swap = cur;
        cur = next;
        next = swap;
    }
    return MDSD_OK;
}

/* pi with pi M = pi, sum pi = 1, for the row-stochastic V x V matrix M:
 * (M^T - I) pi = 0 with its last equation replaced by sum pi = 1, by LU. */
static int stationary(const double *M, size_t V, double *pi, const char *what, mdsd_err *err)
{
    gsl_matrix *A = gsl_matrix_alloc(V, V);
    gsl_vector *rhs = gsl_vector_calloc(V), *sol = gsl_vector_alloc(V);
    gsl_permutation *perm = gsl_permutation_alloc(V);
    int rc = A && rhs && sol && perm ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; rc == MDSD_OK && i < V; i++)
        for (size_t j = 0; j < V; j++)
            gsl_matrix_set(A, i, j, i + 1 == V ? 1.0 : M[j * V + i] - (i == j ? 1.0 : 0.0));
    int sign;
    if (rc == MDSD_OK) {
        gsl_vector_set(rhs, V - 1, 1.0);
        gsl_linalg_LU_decomp(A, perm, &sign);
        double umin = INFINITY;
        for (size_t i = 0; i < V; i++)
            umin = fmin(umin, fabs(gsl_matrix_get(A, i, i)));
        if (!(umin > 1e-12))
            rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_HORIZON,
                                  "`horizon inf`: the %s chain has no unique stationary "
                                  "law (reducible): give a horizon N instead", what);
    }
    if (rc == MDSD_OK)
        gsl_linalg_LU_solve(A, perm, rhs, sol);
    for (size_t i = 0; rc == MDSD_OK && i < V; i++) {
        pi[i] = gsl_vector_get(sol, i);
        if (pi[i] < -1e-9)
            rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_HORIZON,
                                  "`horizon inf`: the %s chain's stationary law is not "
                                  "a distribution (reducible): give a horizon N instead", what);
        if (pi[i] < 0.0)
            pi[i] = 0.0;
    }
    gsl_matrix_free(A), gsl_vector_free(rhs), gsl_vector_free(sol), gsl_permutation_free(perm);
    return rc;
}

/* The run of N tokens from token 0 (res->horizon = N >= 1). */
static void horizon_run(const double *Bs, const double *tau, const double *P, size_t V, size_t L,
                        size_t N, double *f, double *g, double *g2, mdsd_block_live_result *res)
{
    /* f[t * V + s] = P(a block starts at t after token s) */
    memset(f, 0, N * V * sizeof *f);
    f[0] = 1.0;
    double num = 0.0, calls = 0.0;
    for (size_t t = 0; t < N; t++)
        for (size_t s = 0; s < V; s++) {
            double w = f[t * V + s];
            if (!(w > 0.0))
                continue;
            num += w * tau[s];
            calls += w;
            const double *B = Bs + s * (L + 2) * V;
            for (size_t j = 1; j <= L + 1 && t + j < N; j++)
                for (size_t b = 0; b < V; b++)
                    f[(t + j) * V + b] += w * B[j * V + b];
        }
    res->live = num / calls;
    res->calls = calls;
    /* the target chain from token 0: g = law of the token before position t */
    memset(g, 0, V * sizeof *g);
    g[0] = 1.0;
    double pos = 0.0;
    for (size_t t = 0; t < N; t++) {
        for (size_t s = 0; s < V; s++)
            pos += g[s] * tau[s];
        memset(g2, 0, V * sizeof *g2);
        for (size_t s = 0; s < V; s++)
            for (size_t b = 0; g[s] > 0.0 && b < V; b++)
                g2[b] += g[s] * P[s * V + b];
        memcpy(g, g2, V * sizeof *g);
    }
    res->positions = pos / (double)N;
}

int mdsd_block_live_exact(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                          size_t horizon, const mdsd_block_opts *o, mdsd_block_live_result *res,
                          double *tau_by_token, mdsd_err *err)
{
    live_ctx x = {0};
    int rc = mdsd_bk_init(&x.c, m, pol, v, o, err);
    if (rc)
        return rc;
    size_t V = m->V, L = pol->depth;
    x.V = V, x.W = x.c.nmax + 1;
    if ((double)V * (double)V * (double)(L + 2) > (double)MDSD_LIVE_MAX_ENTRIES) {
        mdsd_bk_free(&x.c);
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_HORIZON,
                                "`horizon`: V = %zu, L = %zu: V^2 (L + 2) block-law "
                                "entries exceed the guard %zu", V, L, (size_t)MDSD_LIVE_MAX_ENTRIES);
    }
    if ((double)horizon * (double)V > (double)MDSD_LIVE_MAX_ENTRIES) {
        mdsd_bk_free(&x.c);
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_HORIZON,
                                "`horizon %zu`: N V = %.0f block-start entries exceed the "
                                "guard %zu (the long run: `horizon inf`)", horizon,
                                (double)horizon * (double)V, (size_t)MDSD_LIVE_MAX_ENTRIES);
    }
    x.acc = calloc(V * x.W, sizeof *x.acc);
    x.corr = calloc(V * x.W, sizeof *x.corr);
    double *Bs = malloc(V * (L + 2) * V * sizeof *Bs), *tau = malloc(V * sizeof *tau);
    double *cur = malloc(V * x.W * sizeof *cur), *next = malloc(V * x.W * sizeof *next);
    double *M = calloc(V * V, sizeof *M), *pi = malloc(V * sizeof *pi);
    size_t N = horizon ? horizon : 1;
    double *f = malloc(N * V * sizeof *f), *g = malloc(2 * V * sizeof *g);
    if (!x.acc || !x.corr || !Bs || !tau || !cur || !next || !M || !pi || !f || !g)
        rc = mdsd_fail_option(err, MDSD_ENOMEM, MDSD_OPTION_HORIZON, "`horizon`: out of memory");
    for (size_t s = 0; rc == MDSD_OK && s < V; s++) {
        double *B = Bs + s * (L + 2) * V;
        if ((rc = block_law(&x, (int)s, B, cur, next, err)) != MDSD_OK)
            break;
        tau[s] = 0.0;
        for (size_t j = 1; j <= L + 1; j++)
            for (size_t b = 0; b < V; b++) {
                tau[s] += (double)j * B[j * V + b];
                M[s * V + b] += B[j * V + b];
            }
    }
    if (rc == MDSD_OK) {
        memset(res, 0, sizeof *res);
        res->horizon = horizon;
        res->first = tau[0];
        if (tau_by_token)
            memcpy(tau_by_token, tau, V * sizeof *tau);
    }
    if (rc == MDSD_OK && horizon) {
        horizon_run(Bs, tau, m->p, V, L, horizon, f, g, g + V, res);
    } else if (rc == MDSD_OK) {
        if ((rc = stationary(M, V, pi, "block-start", err)) == MDSD_OK) {
            res->live = 0.0;
            for (size_t s = 0; s < V; s++)
                res->live += pi[s] * tau[s];
            res->calls = 1.0 / res->live;
            rc = stationary(m->p, V, pi, "target", err);
        }
        for (size_t s = 0; rc == MDSD_OK && s < V; s++)
            res->positions += pi[s] * tau[s];
    }
    free(Bs), free(tau), free(cur), free(next), free(M), free(pi), free(f), free(g);
    live_free(&x);
    return rc;
}
