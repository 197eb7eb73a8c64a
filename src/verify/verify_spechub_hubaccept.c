/* verify_spechub_hubaccept.c - AUDIT VARIANT, NOT A VALID VERIFIER.
 *
 * Reproduces a behaviour found in a public peer implementation of SpecHub
 * (Sun et al., EMNLP 2024; the EAGLE-based path of the authors' evaluation
 * code, rewritten here from its description, no code copied): when the target
 * puts p(a) > 1 - 10^-3 on the hub token a = argmax q, the hub is accepted
 * outright. Every hub-scheme draft pair contains a, so such a position
 * reports alpha = 1 and always outputs a: the output law is the point mass
 * on a instead of p (papers/FINDINGS.md; p = (0.9992, 0, 0.0008),
 * q = (0.6, 0.399999, 1e-6): alpha 1 instead of spechub's 0.9992025).
 * Otherwise it is the `spechub` verifier (verify_spechub.c).
 *
 * Exact rate: 1 when the shortcut fires (per draft: draft 1 is a with
 * probability q(a), draft 2 with the mass of the (x, a) tuples, summed);
 * else spechub's p(a) + sum_{x != a} min(p(x), q(x)/(1 - q(a))). */
#include <stdlib.h>

#include "dist.h"
#include "verifier.h"
#include "verify_common.h"

/* The peer's threshold: accept the hub outright when p(a) > 1 - HUB_EPS. */
#define HUB_EPS 1e-3

typedef struct {
    int a;          /* hub token */
    int shortcut;   /* p(a) > 1 - HUB_EPS: always output a */
    void *inner;    /* spechub's state when the shortcut does not fire */
} hubaccept_state;

static int hubaccept_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_HUB)
        return mdsd_vc_wrong_scheme("spechub-hubaccept", s, "hub drafts (n = 2)", err);
    return MDSD_OK;
}

static int fires(const double *p, const mdsd_scheme *s, int *a)
{
    *a = (int)mdsd_argmax(s->q, s->V);
    return p[*a] > 1.0 - HUB_EPS;
}

static void hubaccept_release(void *state)
{
    hubaccept_state *st = state;
    if (st->inner)
        mdsd_verify_spechub_ops.release(st->inner);
    free(st);
}

static int hubaccept_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                             void **state, mdsd_err *err)
{
    hubaccept_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "spechub-hubaccept: out of memory");
    *state = st;
    st->shortcut = fires(p, s, &st->a);
    if (st->shortcut)
        return MDSD_OK;
    return mdsd_verify_spechub_ops.prepare(p, s, opts, &st->inner, err);
}

static int hubaccept_verify(const void *state, const int *drafts, gsl_rng *rng,
                            int *accepted_index)
{
    const hubaccept_state *st = state;
    if (!st->shortcut)
        return mdsd_verify_spechub_ops.verify(st->inner, drafts, rng, accepted_index);
    *accepted_index = drafts[0] == st->a ? 0 : 1;
    return st->a;
}

static int hubaccept_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           double *alpha, double *per_draft, mdsd_err *err)
{
    int a;
    if (!fires(p, s, &a))
        return mdsd_verify_spechub_ops.exact(p, s, opts, alpha, per_draft, err);
    double second = 0.0; /* mass of the (x, a) tuples: sum_{x != a} q(x) */
    for (size_t x = 0; x < s->V; x++)
        if ((int)x != a)
            second += s->q[x];
    per_draft[0] = s->q[a];
    per_draft[1] = second;
    *alpha = 1.0;
    return MDSD_OK;
}

const mdsd_verifier_ops mdsd_verify_spechub_hubaccept_ops = {
    .name = "spechub-hubaccept",
    .scheme = MDSD_SCHEME_HUB,
    .check = hubaccept_check,
    .prepare = hubaccept_prepare,
    .verify = hubaccept_verify,
    .release = hubaccept_release,
    .exact = hubaccept_exact,
};
