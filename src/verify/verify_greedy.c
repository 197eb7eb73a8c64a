/* verify_greedy.c - the greedy verifier of Hu et al. (ICLR 2025, section 5)
 * on the greedy scheme: drafts x_1..x_{n-1} = T, the top n-1 tokens of q,
 * and x_n ~ q' = q off T, renormalised. It is single-draft speculative
 * sampling between q' and p applied to x_n: accept x_n w.p.
 * min(1, p(x_n)/q'(x_n)), else y ~ norm((p - q')+). Since q'(T) = 0 the
 * residual keeps p's full mass on T, and a residual draw in T is accepted.
 * alpha = p(T) + sum_{x not in T} min(p(x), q'(x)) = alpha*(greedy) (Thm 7). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t n, V;
    double *p, *qr;  /* qr = q' */
    gsl_ran_discrete_t *residual;
} greedy_state;

/* q off the top n-1 tokens (top[] gets them), not normalised; returns its
 * mass q(T^c), summed directly (it may be far below 1 - q(T)'s resolution). */
static double rest_of_draft(const mdsd_scheme *s, int *top, double *qr)
{
    size_t fixed = s->n - 1;
    mdsd_top_indices(s->q, s->V, fixed, top);
    memcpy(qr, s->q, s->V * sizeof *qr);
    for (size_t j = 0; j < fixed; j++)
        qr[top[j]] = 0.0;
    return mdsd_sum(qr, s->V);
}

/* q' = q off the top n-1 tokens, renormalised; top[] gets them. */
static void restricted_draft(const mdsd_scheme *s, int *top, double *qr)
{
    mdsd_vc_normalise(qr, s->V, rest_of_draft(s, top, qr));
}

static int greedy_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_GREEDY)
        return mdsd_vc_wrong_scheme("greedy", s, "greedy drafts", err);
    if (s->n > 64)
        return mdsd_fail(err, MDSD_ETOOBIG, "greedy: n = %zu drafts is above the limit of 64", s->n);
    return MDSD_OK;
}

static void greedy_release(void *state)
{
    greedy_state *st = state;
    free(st->p);
    free(st->qr);
    if (st->residual)
        gsl_ran_discrete_free(st->residual);
    free(st);
}

static int greedy_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                          void **state, mdsd_err *err)
{
    (void)opts;
    size_t V = s->V;
    greedy_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "greedy: out of memory");
    *state = st;
    st->n = s->n;
    st->V = V;
    st->p = mdsd_vc_malloc(V * sizeof *st->p, "greedy", err);
    st->qr = mdsd_vc_malloc(V * sizeof *st->qr, "greedy", err);
    double *res = mdsd_vc_malloc(V * sizeof *res, "greedy", err);
    if (!st->p || !st->qr || !res) {
        free(res);
        return MDSD_ENOMEM;
    }
    int top[64];
    memcpy(st->p, p, V * sizeof *p);
    restricted_draft(s, top, st->qr);
    mdsd_vc_residual(p, st->qr, V, res);
    st->residual = mdsd_vc_alias(res, p, V, "greedy", err);
    free(res);
    return st->residual ? MDSD_OK : MDSD_ENOMEM;
}

static int greedy_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const greedy_state *st = state;
    int x = drafts[st->n - 1];
    if (gsl_rng_uniform(rng) * st->qr[x] < st->p[x]) {
        *accepted_index = (int)st->n - 1;
        return x;
    }
    return (int)gsl_ran_discrete(rng, st->residual); /* a token of T counts as accepted */
}

static int greedy_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                        double *alpha, double *per_draft, mdsd_err *err)
{
    (void)opts;
    int top[64];
    double *qr = mdsd_vc_malloc(s->V * sizeof *qr, "greedy", err);
    if (!qr)
        return MDSD_ENOMEM;
    double rest = rest_of_draft(s, top, qr);
    for (size_t j = 0; j + 1 < s->n; j++)
        per_draft[j] = p[top[j]];
    if (rest >= DBL_MIN) { /* q' = qr / rest, formed on the fly */
        per_draft[s->n - 1] = mdsd_vc_overlap_scaled(p, qr, s->V, 1.0 / rest); /* q'(T) = 0 */
    } else { /* 1 / rest would overflow */
        mdsd_vc_normalise(qr, s->V, rest);
        per_draft[s->n - 1] = mdsd_vc_overlap(p, qr, s->V);
    }
    *alpha = mdsd_sum(per_draft, s->n);
    free(qr);
    return MDSD_OK;
}

/* The law of greedy_verify given the drafts: the sampled last draft passes
 * with min(1, p/q'), else the residual, whose tokens of T are drafts too. */
static void greedy_law(const void *state, const int *drafts, double *py)
{
    const greedy_state *st = state;
    double step[MDSD_LAW_MAX_DRAFTS] = {0};
    double a = mdsd_vc_pass(st->p[drafts[st->n - 1]], st->qr[drafts[st->n - 1]]);
    step[st->n - 1] = a;
    mdsd_vc_law_collect(drafts, st->n, step, py);
    if (a < 1.0)
        for (size_t j = 0; j < st->n; j++)
            py[j] += (1.0 - a) * mdsd_vc_alias_pdf(st->residual, drafts[j]);
}

const mdsd_verifier_ops mdsd_verify_greedy_ops = {
    .name = "greedy",
    .scheme = MDSD_SCHEME_GREEDY,
    .check = greedy_check,
    .prepare = greedy_prepare,
    .verify = greedy_verify,
    .release = greedy_release,
    .exact = greedy_exact,
};

const mdsd_verifier_law_fn mdsd_verify_greedy_law = greedy_law;
