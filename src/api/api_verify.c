/* api_verify.c - the public verifiers (mdsd/verifier.h): exact rates,
 * verifier objects for decoding loops, Monte Carlo. Thin wrappers over
 * verifier.h and montecarlo.h that validate the caller's input. */
#include <mdsd/mdsd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "dist.h"
#include "montecarlo.h"
#include "opts.h"
#include "scheme.h"
#include "stats.h"
#include "verifier.h"

/* The kind, and the options' size (mdsd/common.h; NULL options are the defaults). */
static int check_kind(mdsd_verifier_kind kind, const mdsd_verifier_opts *opts, mdsd_err *err)
{
    if ((unsigned)kind >= MDSD_VERIFIER_KINDS) /* the audit variants' kinds too (registry.h) */
        return mdsd_fail(err, MDSD_EINVAL, "unknown verifier kind %d", (int)kind);
    return opts ? mdsd_opts_check(opts->size, sizeof *opts, "mdsd_verifier_opts", NULL, err)
                : MDSD_OK;
}

mdsd_status mdsd_verifier_rate(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                       const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                       mdsd_err *err)
{
    if (!alpha)
        return mdsd_fail(err, MDSD_EINVAL, "verifier rate: no output given (NULL alpha)");
    api_scheme a;
    int rc = check_kind(kind, opts, err);
    if (rc || (rc = api_scheme_copy(s, &a, err)))
        return rc;
    rc = mdsd_verifier_exact(kind, p, &a.s, opts, alpha, per_draft, err);
    api_scheme_clear(&a);
    return rc;
}

mdsd_verifier *mdsd_verifier_new(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                                 const mdsd_verifier_opts *opts, mdsd_err *err)
{
    api_scheme a;
    if (check_kind(kind, opts, err) || api_scheme_copy(s, &a, err))
        return NULL;
    mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &a.s, opts, err);
    api_scheme_clear(&a);
    return v;
}

/* ---- draft tuples the scheme can produce ----
 * A tuple of probability 0 under the scheme's joint law D (a token of draft
 * probability 0, a repeat under wor or cps, greedy's fixed prefix or spechub's
 * hub out of place, a tuple absent from a custom joint) has no conditional law
 * to verify against: the verifiers' formulas divide by q or D and would count an
 * impossible draft as accepted. Refused, naming the draft and the token. */

static int impossible(const mdsd_scheme *s, const mdsd_token *x, size_t j, const char *why,
                      mdsd_err *err)
{
    return mdsd_fail(err, MDSD_EINVAL, "verify: draft %zu (token %d) cannot come from the %s "
                     "scheme: %s", j + 1, (int)x[j], mdsd_scheme_name(s->kind), why);
}

static const double *q_row(const mdsd_scheme *s, size_t j)
{
    return s->kind == MDSD_SCHEME_MULTI ? s->q + j * s->V : s->q;
}

static int check_greedy(const mdsd_scheme *s, const mdsd_token *x, mdsd_err *err)
{
    size_t fixed = s->n - 1;
    int *top = malloc((fixed ? fixed : 1) * sizeof *top);
    if (!top)
        return mdsd_fail(err, MDSD_ENOMEM, "verify: out of memory");
    mdsd_top_indices(s->q, s->V, fixed, top);
    int rc = MDSD_OK;
    for (size_t j = 0; j < fixed && rc == MDSD_OK; j++)
        if (x[j] != top[j]) {
            char why[96];
            snprintf(why, sizeof why, "draft %zu is the %zu-th most likely draft token, %d", j + 1,
                     j + 1, top[j]);
            rc = impossible(s, x, j, why, err);
        }
    for (size_t j = 0; j < fixed && rc == MDSD_OK; j++)
        if (x[fixed] == top[j])
            rc = impossible(s, x, fixed, "the last draft is drawn off the fixed top tokens", err);
    free(top);
    return rc;
}

static int check_possible(const mdsd_scheme *s, const mdsd_token *x, mdsd_err *err)
{
    if (s->kind == MDSD_SCHEME_CUSTOM) {
        long t = mdsd_joint_find(s->custom, x);
        if (t < 0 || !(s->custom->prob[t] > 0.0))
            return mdsd_fail(err, MDSD_EINVAL, "verify: the drafts are not a tuple of the custom "
                             "joint (probability 0)");
        return MDSD_OK;
    }
    for (size_t j = 0; j < s->n; j++)
        if (!(q_row(s, j)[x[j]] > 0.0))
            return impossible(s, x, j, "its draft probability q is 0", err);
    if (s->kind == MDSD_SCHEME_WOR || s->kind == MDSD_SCHEME_CPS)
        for (size_t j = 1; j < s->n; j++)
            for (size_t k = 0; k < j; k++)
                if (x[j] == x[k]) {
                    char why[96];
                    snprintf(why, sizeof why, "it repeats draft %zu (drafts are distinct)", k + 1);
                    return impossible(s, x, j, why, err);
                }
    if (s->kind == MDSD_SCHEME_GREEDY)
        return check_greedy(s, x, err);
    if (s->kind == MDSD_SCHEME_HUB) {
        int a = (int)mdsd_argmax(s->q, s->V);
        if ((x[0] == a) == (x[1] == a))
            return mdsd_fail(err, MDSD_EINVAL, "verify: drafts (%d, %d) cannot come from the hub "
                             "scheme: exactly one of them is the hub token %d", (int)x[0], (int)x[1], a);
    }
    return MDSD_OK;
}

mdsd_token mdsd_verify(const mdsd_verifier *v, const mdsd_token *drafts, mdsd_rng *rng,
                       int *accepted_index, mdsd_err *err)
{
    if (!v || !drafts || !rng) {
        mdsd_fail(err, MDSD_EINVAL, "verify: %s is NULL", !v ? "the verifier"
                                                      : !drafts ? "drafts" : "the rng");
        return -1;
    }
    const mdsd_scheme *s = mdsd_verifier_scheme_of(v);
    for (size_t j = 0; j < s->n; j++)
        if (drafts[j] < 0 || (size_t)drafts[j] >= s->V) {
            mdsd_fail(err, MDSD_EINVAL, "verify: draft %zu is token %d, outside [0, %zu)", j + 1,
                      (int)drafts[j], s->V);
            return -1;
        }
    if (check_possible(s, drafts, err))
        return -1;
    return mdsd_verifier_verify(v, drafts, rng->r, accepted_index);
}

void (mdsd_montecarlo_opts_init)(mdsd_montecarlo_opts *opts, size_t size)
{
    mdsd_montecarlo_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.trials = 1000000;
    d.seed = 1;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

mdsd_status mdsd_montecarlo(const mdsd_verifier *v, const mdsd_montecarlo_opts *opts,
                    mdsd_montecarlo_result *res, double *per_draft, uint64_t *histogram,
                    mdsd_err *err)
{
    if (!v || !res)
        return mdsd_fail(err, MDSD_EINVAL, "Monte Carlo: %s is NULL",
                         !v ? "the verifier" : "the result");
    memset(res, 0, sizeof *res);
    if (opts && mdsd_opts_check(opts->size, sizeof *opts, "mdsd_montecarlo_opts", NULL, err))
        return MDSD_EINVAL;
    mdsd_montecarlo_opts o;
    mdsd_montecarlo_opts_init(&o);
    if (opts)
        o = *opts;
    if (o.trials == 0)
        return mdsd_fail(err, MDSD_EINVAL, "Monte Carlo: trials = 0");
    mdsd_mc_opts mc;
    mdsd_mc_opts_init(&mc);
    mc.trials = o.trials;
    mc.seed = o.seed;
    mc.position = o.position;
    mc.threads = o.threads;
    mc.histogram = histogram != NULL;
    mdsd_mc_result r;
    int rc = mdsd_mc_run(v, &mc, &r, err);
    if (rc)
        return rc;
    res->trials = r.trials;
    res->alpha = r.alpha;
    res->se = r.se;
    res->ci_low = r.ci_low;
    res->ci_high = r.ci_high;
    for (size_t j = 0; per_draft && j < r.n; j++)
        per_draft[j] = (double)r.per_draft[j] / (double)r.trials;
    if (histogram)
        memcpy(histogram, r.histogram, r.V * sizeof *histogram);
    mdsd_mc_result_free(&r);
    return MDSD_OK;
}

mdsd_status mdsd_output_chisq(const uint64_t *histogram, const double *p, size_t V,
                              double *statistic, size_t *dof, double *p_value, mdsd_err *err)
{
    if (!histogram || !p || !statistic || !dof || !p_value)
        return mdsd_fail(err, MDSD_EINVAL, "output chi-square: a NULL argument");
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "output chi-square: V = 0");
    uint64_t total = 0;
    for (size_t i = 0; i < V; i++)
        total += histogram[i];
    if (total == 0)
        return mdsd_fail(err, MDSD_EINVAL, "output chi-square: the histogram is all zero");
    /* Against p validated and renormalised as the CLI loads it (and as the verifier
     * copies it), so the statistic is the CLI's to the last bit. */
    double *pn = malloc(V * sizeof *pn);
    if (!pn)
        return mdsd_fail(err, MDSD_ENOMEM, "output chi-square: out of memory for V = %zu", V);
    int rc = mdsd_probs_validate_copy(p, V, pn, "target p", err);
    if (rc == MDSD_OK) {
        /* The same test and pooling threshold as the CLI's accept --check-output. */
        mdsd_gof g = mdsd_chisq_gof(histogram, pn, V, 5.0);
        *statistic = g.statistic;
        *dof = g.dof;
        *p_value = g.p_value;
    }
    free(pn);
    return rc;
}
