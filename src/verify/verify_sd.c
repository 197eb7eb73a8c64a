/* verify_sd.c - single-draft speculative sampling (Leviathan et al.; Chen et
 * al.): accept the draft x ~ q with probability min(1, p(x)/q(x)), otherwise
 * output a sample of norm((p - q)+). Output ~ p; alpha = sum min(p, q). */
#include <stdlib.h>
#include <string.h>

#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t V;
    double *p, *q;
    gsl_ran_discrete_t *residual;
} sd_state;

static int sd_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->n != 1 || s->kind == MDSD_SCHEME_CUSTOM || s->kind == MDSD_SCHEME_HUB)
        return mdsd_vc_wrong_scheme("sd", s, "a single draft x ~ q (n = 1)", err);
    return MDSD_OK;
}

static void sd_release(void *state)
{
    sd_state *st = state;
    free(st->p);
    free(st->q);
    if (st->residual)
        gsl_ran_discrete_free(st->residual);
    free(st);
}

static int sd_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                      void **state, mdsd_err *err)
{
    (void)opts;
    size_t V = s->V;
    sd_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "sd: out of memory");
    *state = st;
    st->V = V;
    st->p = mdsd_vc_malloc(V * sizeof *st->p, "sd", err);
    st->q = mdsd_vc_malloc(V * sizeof *st->q, "sd", err);
    double *res = mdsd_vc_malloc(V * sizeof *res, "sd", err);
    if (!st->p || !st->q || !res) {
        free(res);
        return MDSD_ENOMEM;
    }
    memcpy(st->p, p, V * sizeof *p);
    memcpy(st->q, s->q, V * sizeof *st->q); /* multi with n = 1: its only row */
    mdsd_vc_residual(p, st->q, V, res);
    st->residual = mdsd_vc_alias(res, p, V, "sd", err);
    free(res);
    return st->residual ? MDSD_OK : MDSD_ENOMEM;
}

static int sd_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const sd_state *st = state;
    int x = drafts[0];
    if (gsl_rng_uniform(rng) * st->q[x] < st->p[x]) {
        *accepted_index = 0;
        return x;
    }
    return (int)gsl_ran_discrete(rng, st->residual);
}

static int sd_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                    double *alpha, double *per_draft, mdsd_err *err)
{
    (void)opts, (void)err;
    *alpha = per_draft[0] = mdsd_vc_overlap(p, s->q, s->V);
    return MDSD_OK;
}

/* The law of sd_verify given the draft: accepted with min(1, p/q), else
 * the residual draw (which may land on the draft where rounding left mass). */
static void sd_law(const void *state, const int *drafts, double *py)
{
    const sd_state *st = state;
    int x = drafts[0];
    double a = mdsd_vc_pass(st->p[x], st->q[x]);
    py[0] = a + (a < 1.0 ? (1.0 - a) * mdsd_vc_alias_pdf(st->residual, x) : 0.0);
}

const mdsd_verifier_ops mdsd_verify_sd_ops = {
    .name = "sd",
    .scheme = MDSD_SCHEME_IID,
    .check = sd_check,
    .prepare = sd_prepare,
    .verify = sd_verify,
    .release = sd_release,
    .exact = sd_exact,
};

const mdsd_verifier_law_fn mdsd_verify_sd_law = sd_law;
