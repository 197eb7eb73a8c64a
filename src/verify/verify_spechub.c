/* verify_spechub.c - SpecHub (Sun et al., EMNLP 2024) on the hub scheme:
 * a = argmax q, tuples (x, a) with mass q(x) and (a, x) with mass
 * r q(x), r = q(a) / (1 - q(a)), for x != a.
 *
 * Implemented from the transport plan of the paper's appendix B.1 (not from
 * the printed Algorithm 3, which updates the hub token's residual only in the
 * x1 = a branch and so over-produces a; tests/test_verifier.c shows a literal
 * transcription failing the output test). For x != a:
 *   pi((x,a) -> x) = min(p(x), q(x))                     accept draft 1
 *   pi((a,x) -> x) = min((p(x) - q(x))+, r q(x))         accept draft 2
 * Leftover masses L2 = sum_x [r q(x) - pi((a,x) -> x)] of the (a, x) tuples
 * and L1 = sum_x [q(x) - pi((x,a) -> x)] of the (x, a) tuples then accept the
 * hub a, the (a, x) tuples first, each tuple in proportion to its leftover:
 *   budget_2 = min(p(a), L2), budget_1 = min(p(a) - budget_2, L1)
 * i.e. a leftover is accepted as a with the fixed probabilities
 * budget_2 / L2 (draft 1 = a) and budget_1 / L1 (draft 2 = a). What is left
 * goes to the residual (p(x) - q(x) / (1 - q(a)))+ over x != a, whose mass is
 * 1 - alpha. Output ~ p (a is produced with probability exactly p(a), since
 * L1 + L2 >= p(a)), and alpha = p(a) + sum_{x != a} min(p(x), q(x)/(1-q(a))). */
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t V;
    int a;
    double rest; /* q off the hub, summed (it may be subnormal: r = q(a) / rest overflows) */
    double *p, *q;
    double hub_given_2, hub_given_1; /* P(accept a | leftover of (a,x)), (x,a) */
    gsl_ran_discrete_t *residual;
} spechub_state;

typedef struct {
    int a;
    double rest, L1, L2, budget1, budget2;
    double first, second; /* sum_x pi((x,a) -> x), sum_x pi((a,x) -> x) */
} hub_plan;

/* r q(x), the mass of the tuple (a, x), as q(a) (q(x) / rest): q(x) / rest
 * <= 1, so no overflow when rest is subnormal (r itself would be +inf, and
 * r q(x) = inf * 0 = NaN at q(x) = 0). */
static inline double hub_second(const double *q, int a, double rest, int x)
{
    return q[a] * (q[x] / rest);
}

static void plan_of(const double *p, const double *q, size_t V, hub_plan *h)
{
    h->a = (int)mdsd_argmax(q, V);
    double rest = 0.0; /* 1 - q(a), summed, never formed as 1 - q(a) */
    for (size_t x = 0; x < V; x++)
        if ((int)x != h->a)
            rest += q[x];
    h->rest = rest;
    h->L1 = h->L2 = h->first = h->second = 0.0;
    for (size_t x = 0; x < V; x++) {
        if ((int)x == h->a)
            continue;
        double one = p[x] < q[x] ? p[x] : q[x];
        double excess = p[x] > q[x] ? p[x] - q[x] : 0.0, rq = hub_second(q, h->a, rest, (int)x);
        double two = excess < rq ? excess : rq;
        h->first += one;
        h->second += two;
        h->L1 += q[x] - one;
        h->L2 += rq - two;
    }
    double pa = p[h->a];
    h->budget2 = pa < h->L2 ? pa : h->L2;
    double left = pa - h->budget2;
    h->budget1 = left < h->L1 ? left : h->L1;
}

static int spechub_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_HUB)
        return mdsd_vc_wrong_scheme("spechub", s, "hub drafts (n = 2)", err);
    return MDSD_OK;
}

static void spechub_release(void *state)
{
    spechub_state *st = state;
    free(st->p);
    free(st->q);
    if (st->residual)
        gsl_ran_discrete_free(st->residual);
    free(st);
}

static int spechub_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           void **state, mdsd_err *err)
{
    (void)opts;
    size_t V = s->V;
    spechub_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "spechub: out of memory");
    *state = st;
    st->V = V;
    hub_plan h;
    plan_of(p, s->q, V, &h);
    st->a = h.a;
    st->rest = h.rest;
    st->hub_given_2 = h.L2 > 0.0 ? h.budget2 / h.L2 : 0.0;
    st->hub_given_1 = h.L1 > 0.0 ? h.budget1 / h.L1 : 0.0;
    st->p = mdsd_vc_malloc(V * sizeof *st->p, "spechub", err);
    st->q = mdsd_vc_malloc(V * sizeof *st->q, "spechub", err);
    double *w = mdsd_vc_malloc(V * sizeof *w, "spechub", err);
    if (!st->p || !st->q || !w) {
        free(w);
        return MDSD_ENOMEM;
    }
    memcpy(st->p, p, V * sizeof *p);
    memcpy(st->q, s->q, V * sizeof *st->q);
    for (size_t x = 0; x < V; x++) {
        double d = p[x] - s->q[x] - hub_second(s->q, h.a, h.rest, (int)x);
        w[x] = (int)x == h.a || d < 0.0 ? 0.0 : d;
    }
    st->residual = mdsd_vc_alias(w, p, V, "spechub", err);
    free(w);
    return st->residual ? MDSD_OK : MDSD_ENOMEM;
}

static int spechub_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const spechub_state *st = state;
    int a = st->a;
    double u = gsl_rng_uniform(rng);
    if (drafts[1] == a) { /* (x, a): x at its single-draft rate */
        int x = drafts[0];
        if (u * st->q[x] < st->p[x]) {
            *accepted_index = 0;
            return x;
        }
        if (gsl_rng_uniform(rng) < st->hub_given_1) {
            *accepted_index = 1;
            return a;
        }
    } else { /* (a, x): x takes what its first-draft acceptance left */
        int x = drafts[1];
        double rq = hub_second(st->q, a, st->rest, x);
        if (u * rq < st->p[x] - st->q[x]) {
            *accepted_index = 1;
            return x;
        }
        if (gsl_rng_uniform(rng) < st->hub_given_2) {
            *accepted_index = 0;
            return a;
        }
    }
    return (int)gsl_ran_discrete(rng, st->residual);
}

static int spechub_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                         double *alpha, double *per_draft, mdsd_err *err)
{
    (void)opts, (void)err;
    hub_plan h;
    plan_of(p, s->q, s->V, &h);
    per_draft[0] = h.first + h.budget2;
    per_draft[1] = h.second + h.budget1;
    *alpha = per_draft[0] + per_draft[1];
    return MDSD_OK;
}

/* The law of spechub_verify given the drafts (the same two tests, then the
 * residual). */
static void spechub_law(const void *state, const int *drafts, double *py)
{
    const spechub_state *st = state;
    double step[2], reach;
    if (drafts[1] == st->a) {
        int x = drafts[0];
        double a1 = mdsd_vc_pass(st->p[x], st->q[x]);
        double h = mdsd_vc_pass(st->hub_given_1, 1.0);
        step[0] = a1, step[1] = (1.0 - a1) * h, reach = (1.0 - a1) * (1.0 - h);
    } else {
        int x = drafts[1];
        double a1 = mdsd_vc_pass(st->p[x] - st->q[x], hub_second(st->q, st->a, st->rest, x));
        double h = mdsd_vc_pass(st->hub_given_2, 1.0);
        step[1] = a1, step[0] = (1.0 - a1) * h, reach = (1.0 - a1) * (1.0 - h);
    }
    mdsd_vc_law_collect(drafts, 2, step, py);
    if (reach > 0.0)
        for (size_t j = 0; j < 2; j++)
            py[j] += reach * mdsd_vc_alias_pdf(st->residual, drafts[j]);
}

const mdsd_verifier_ops mdsd_verify_spechub_ops = {
    .name = "spechub",
    .scheme = MDSD_SCHEME_HUB,
    .check = spechub_check,
    .prepare = spechub_prepare,
    .verify = spechub_verify,
    .release = spechub_release,
    .exact = spechub_exact,
};

const mdsd_verifier_law_fn mdsd_verify_spechub_law = spechub_law;
