/* api_verify.c - the public verifiers (mdsd/verifier.h): exact rates,
 * verifier objects for decoding loops, Monte Carlo. Thin wrappers over
 * verifier.h and montecarlo.h that validate the caller's input. */
#include <mdsd/mdsd.h>

#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "montecarlo.h"
#include "verifier.h"

static int check_kind(mdsd_verifier_kind kind, mdsd_err *err)
{
    if ((unsigned)kind >= MDSD_VERIFIER_COUNT)
        return mdsd_fail(err, MDSD_EINVAL, "unknown verifier kind %d", (int)kind);
    return MDSD_OK;
}

int mdsd_verifier_rate(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                       const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                       mdsd_err *err)
{
    if (!alpha)
        return mdsd_fail(err, MDSD_EINVAL, "verifier rate: no output given (NULL alpha)");
    api_scheme a;
    int rc = check_kind(kind, err);
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
    if (check_kind(kind, err) || api_scheme_copy(s, &a, err))
        return NULL;
    mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &a.s, opts, err);
    api_scheme_clear(&a);
    return v;
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
    return mdsd_verifier_verify(v, drafts, rng->r, accepted_index);
}

void mdsd_montecarlo_opts_init(mdsd_montecarlo_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->trials = 1000000;
    opts->seed = 1;
}

int mdsd_montecarlo(const mdsd_verifier *v, const mdsd_montecarlo_opts *opts,
                    mdsd_montecarlo_result *res, double *per_draft, uint64_t *histogram,
                    mdsd_err *err)
{
    if (!v || !res)
        return mdsd_fail(err, MDSD_EINVAL, "Monte Carlo: %s is NULL",
                         !v ? "the verifier" : "the result");
    memset(res, 0, sizeof *res);
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
