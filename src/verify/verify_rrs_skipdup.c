/* verify_rrs_skipdup.c - AUDIT VARIANT, NOT A VALID VERIFIER for n >= 3.
 *
 * Reproduces a behaviour found in a public peer implementation of recursive
 * rejection sampling (SpecInfer's multi-candidate speculative sampling; the
 * EAGLE-based path of the SpecHub authors' evaluation code, rewritten here
 * from its description, no code copied): a draft whose token repeats an
 * earlier sibling's is skipped, with no test and no residual update. With
 * p_1 = p and iid drafts x_1..x_n ~ q:
 *   k = 1; for j = 1..n: if x_j is in {x_1..x_{j-1}} skip it; else accept x_j
 *   w.p. min(1, p_k(x_j)/q(x_j)), or reject and set p_{k+1} = norm((p_k - q)+),
 *   k = k + 1; all rejected: output y ~ p_k.
 * RRS tests the repeat against the lowered residual (where it is rejected
 * for sure) and moves one residual further. Skipping leaves the output
 * law at n = 2 unchanged (checked by tests/test_variants.c) but changes it for
 * n >= 3 and inflates alpha: p = (0.1, 0.3, 0.6), q = (0.7, 0.2, 0.1), n = 3:
 * 0.674 against RRS's 0.604 (papers/FINDINGS.md).
 *
 * Exact rate, by enumerating the draft tuples: for a tuple whose distinct
 * tokens in order of first appearance are d_1..d_m,
 *   P(accept d_k) = prod_{l<k} (1 - a_l(d_l)) a_k(d_k),  a_k(x) = min(1, p_k(x)/q(x)),
 * credited to the draft that first holds d_k. A rejected d_l has
 * p_{l+1}(d_l) = 0 and later residuals stay 0 there, so the final draw is
 * never a draft. */
#include <stdlib.h>
#include <string.h>

#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t n, V;
    double *p;        /* [(n + 1) * V]: row k = p_{k+1} (0-based) */
    double *q;        /* [V] */
    gsl_ran_discrete_t **residual; /* [n + 1]: alias of row k, k >= 1 */
} skipdup_state;

static int skipdup_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_IID)
        return mdsd_vc_wrong_scheme("rrs-skipdup", s, "iid drafts", err);
    return MDSD_OK;
}

static void skipdup_release(void *state)
{
    skipdup_state *st = state;
    for (size_t k = 0; st->residual && k <= st->n; k++)
        if (st->residual[k])
            gsl_ran_discrete_free(st->residual[k]);
    free(st->residual);
    free(st->p);
    free(st->q);
    free(st);
}

/* Fills the residual chain p_1..p_{n+1}. */
static void chain(const double *p, const double *q, size_t n, size_t V, double *rows)
{
    memcpy(rows, p, V * sizeof *p);
    for (size_t k = 0; k < n; k++)
        mdsd_vc_residual(rows + k * V, q, V, rows + (k + 1) * V);
}

static int skipdup_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           void **state, mdsd_err *err)
{
    (void)opts;
    size_t n = s->n, V = s->V;
    skipdup_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "rrs-skipdup: out of memory");
    *state = st;
    st->n = n, st->V = V;
    st->p = mdsd_vc_malloc((n + 1) * V * sizeof *st->p, "rrs-skipdup", err);
    st->q = mdsd_vc_malloc(V * sizeof *st->q, "rrs-skipdup", err);
    st->residual = calloc(n + 1, sizeof *st->residual);
    if (!st->p || !st->q || !st->residual)
        return mdsd_fail(err, MDSD_ENOMEM, "rrs-skipdup: out of memory (V = %zu)", V);
    memcpy(st->q, s->q, V * sizeof *st->q);
    chain(p, s->q, n, V, st->p);
    for (size_t k = 1; k <= n; k++)
        if (!(st->residual[k] = mdsd_vc_alias(st->p + k * V, p, V, "rrs-skipdup", err)))
            return MDSD_ENOMEM;
    return MDSD_OK;
}

static int seen_before(const int *x, size_t j)
{
    for (size_t l = 0; l < j; l++)
        if (x[l] == x[j])
            return 1;
    return 0;
}

static int skipdup_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const skipdup_state *st = state;
    size_t k = 0, V = st->V;
    for (size_t j = 0; j < st->n; j++) {
        if (seen_before(drafts, j))
            continue; /* the peer's skip: no test, no residual update */
        int x = drafts[j];
        if (gsl_rng_uniform(rng) * st->q[x] < st->p[k * V + x]) {
            *accepted_index = (int)j;
            return x;
        }
        k++;
    }
    return (int)gsl_ran_discrete(rng, st->residual[k]);
}

static int skipdup_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                         double *alpha, double *per_draft, mdsd_err *err)
{
    size_t n = s->n, V = s->V;
    mdsd_joint D;
    int rc = mdsd_scheme_joint(s, opts->max_tuples, &D, err);
    if (rc != MDSD_OK)
        return rc;
    double *rows = mdsd_vc_malloc((n + 1) * V * sizeof *rows, "rrs-skipdup", err);
    if (!rows) {
        mdsd_joint_free(&D);
        return MDSD_ENOMEM;
    }
    chain(p, s->q, n, V, rows);
    memset(per_draft, 0, n * sizeof *per_draft);
    for (size_t t = 0; t < D.count; t++) {
        const int *x = D.tokens + t * n;
        double reach = D.prob[t]; /* P(tuple, every earlier distinct draft rejected) */
        size_t k = 0;
        for (size_t j = 0; j < n && reach > 0.0; j++) {
            if (seen_before(x, j))
                continue;
            double ratio = rows[k * V + x[j]] / s->q[x[j]];
            double acc = ratio < 1.0 ? ratio : 1.0;
            per_draft[j] += reach * acc;
            reach *= 1.0 - acc;
            k++;
        }
    }
    *alpha = 0.0;
    for (size_t j = 0; j < n; j++)
        *alpha += per_draft[j];
    free(rows);
    mdsd_joint_free(&D);
    return MDSD_OK;
}

const mdsd_verifier_ops mdsd_verify_rrs_skipdup_ops = {
    .name = "rrs-skipdup",
    .scheme = MDSD_SCHEME_IID,
    .check = skipdup_check,
    .prepare = skipdup_prepare,
    .verify = skipdup_verify,
    .release = skipdup_release,
    .exact = skipdup_exact,
};
