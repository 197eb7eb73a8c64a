/* api_core.c - the public layer's common part (mdsd/common.h), schemes and
 * samplers (mdsd/scheme.h), alpha* (mdsd/alpha.h) and LP export (mdsd/lp.h):
 * thin wrappers that validate the caller's input and call the kernels. */
#include <mdsd/mdsd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "bound.h"
#include "dist.h"
#include "lp.h"
#include "lp_export.h"
#include "opts.h"
#include "rng.h"
#include "scheme.h"

#ifndef MDSD_VERSION
#define MDSD_VERSION "unknown"
#endif

_Static_assert(sizeof(mdsd_token) == sizeof(int), "mdsd_token is the library's int token");

const char *mdsd_version(void)
{
    return MDSD_VERSION;
}

/* ---- random streams ---- */

mdsd_rng *mdsd_rng_new(uint64_t seed, mdsd_err *err)
{
    mdsd_rng *rng = malloc(sizeof *rng);
    if (rng && !(rng->r = mdsd_rng_alloc(seed))) {
        free(rng);
        rng = NULL;
    }
    if (!rng)
        mdsd_fail(err, MDSD_ENOMEM, "random stream: out of memory");
    return rng;
}

void mdsd_rng_seed(mdsd_rng *rng, uint64_t seed)
{
    mdsd_rng_reseed(rng->r, seed);
}

double mdsd_rng_uniform(mdsd_rng *rng)
{
    return gsl_rng_uniform(rng->r);
}

void mdsd_rng_free(mdsd_rng *rng)
{
    if (rng) {
        gsl_rng_free(rng->r);
        free(rng);
    }
}

/* ---- validated copies ---- */

int api_probs_copy(const double *p, size_t V, const char *what, double **out, mdsd_err *err)
{
    *out = NULL;
    if (!p)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no distribution given (NULL)", what);
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty distribution (V = 0)", what);
    double *copy = malloc(V * sizeof *copy);
    if (!copy)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory for V = %zu", what, V);
    int rc = mdsd_probs_validate_copy(p, V, copy, what, err);
    if (rc) {
        free(copy);
        return rc;
    }
    *out = copy;
    return MDSD_OK;
}

int api_scheme_copy(const mdsd_scheme *s, api_scheme *a, mdsd_err *err)
{
    memset(a, 0, sizeof *a);
    if (!s)
        return mdsd_fail(err, MDSD_EINVAL, "no scheme given (NULL)");
    if ((unsigned)s->kind >= MDSD_SCHEME_COUNT)
        return mdsd_fail(err, MDSD_EINVAL, "unknown scheme kind %d", (int)s->kind);
    a->s = *s;
    if (s->kind == MDSD_SCHEME_CUSTOM) {
        const mdsd_joint *C = s->custom;
        if (!C || !C->tokens || !C->prob || C->n == 0)
            return mdsd_fail(err, MDSD_EINVAL, "custom scheme: no joint given");
        if (C->n != s->n)
            return mdsd_fail(err, MDSD_EINVAL, "custom scheme: joint tuples have %zu drafts, "
                             "the scheme n = %zu", C->n, s->n);
        a->custom.n = C->n;
        a->custom.count = C->count;
        a->custom.tokens = malloc((C->count * C->n + 1) * sizeof *a->custom.tokens);
        a->custom.prob = malloc((C->count + 1) * sizeof *a->custom.prob);
        if (!a->custom.tokens || !a->custom.prob) {
            api_scheme_clear(a);
            return mdsd_fail(err, MDSD_ENOMEM, "custom scheme: out of memory");
        }
        memcpy(a->custom.tokens, C->tokens, C->count * C->n * sizeof *C->tokens);
        memcpy(a->custom.prob, C->prob, C->count * sizeof *C->prob);
        int rc = mdsd_joint_validate(&a->custom, s->V, err);
        if (rc == MDSD_OK)
            rc = mdsd_joint_sort(&a->custom, err);
        if (rc) {
            api_scheme_clear(a);
            return rc;
        }
        a->s.custom = &a->custom;
        a->s.q = NULL;
        return MDSD_OK;
    }
    if (s->V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "scheme: V = 0");
    if (!s->q)
        return mdsd_fail(err, MDSD_EINVAL, "scheme %s: no draft distribution q (NULL)",
                         mdsd_scheme_name(s->kind));
    size_t rows = s->kind == MDSD_SCHEME_MULTI ? s->n : 1;
    if (rows == 0)
        return mdsd_fail(err, MDSD_EINVAL, "scheme multi: n = 0");
    if (!(a->q = malloc(rows * s->V * sizeof *a->q)))
        return mdsd_fail(err, MDSD_ENOMEM, "scheme: out of memory for V = %zu", s->V);
    for (size_t j = 0; j < rows; j++) {
        char what[32];
        snprintf(what, sizeof what, rows > 1 ? "draft %zu" : "draft", j + 1);
        int rc = mdsd_probs_validate_copy(s->q + j * s->V, s->V, a->q + j * s->V, what, err);
        if (rc) {
            api_scheme_clear(a);
            return rc;
        }
    }
    a->s.q = a->q;
    a->s.custom = NULL;
    return mdsd_scheme_check(&a->s, err);
}

void api_scheme_clear(api_scheme *a)
{
    free(a->q);
    mdsd_joint_free(&a->custom);
    memset(a, 0, sizeof *a);
}

/* ---- samplers ---- */

mdsd_sampler *mdsd_sampler_new(const mdsd_scheme *s, mdsd_err *err)
{
    api_scheme a;
    if (api_scheme_copy(s, &a, err))
        return NULL;
    mdsd_sampler *sm = mdsd_sampler_alloc(&a.s, err);
    api_scheme_clear(&a);
    return sm;
}

void mdsd_sampler_draw_drafts(const mdsd_sampler *sm, mdsd_rng *rng, mdsd_token *drafts)
{
    mdsd_sampler_draw(sm, rng->r, drafts);
}

mdsd_status mdsd_subset_probability(const mdsd_scheme *s, const size_t *tokens,
                                     size_t count, size_t max_tuples, double *Q, mdsd_err *err)
{
    if (!s || !Q || (count && !tokens))
        return mdsd_fail(err, MDSD_EINVAL, "subset probability: a NULL argument");
    api_scheme a;
    int rc = api_scheme_copy(s, &a, err);
    if (rc) {
        api_scheme_clear(&a); /* a scheme_check failure leaves the copy of q */
        return rc;
    }
    unsigned char *in_H = calloc(a.s.V ? a.s.V : 1, 1);
    if (!in_H)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; rc == MDSD_OK && i < count; i++) {
        if (tokens[i] >= a.s.V)
            rc = mdsd_fail(err, MDSD_EINVAL, "subset: entry %zu (%zu) is not a token id in "
                           "[0, %zu)", i, tokens[i], a.s.V);
        else
            in_H[tokens[i]] = 1;
    }
    mdsd_joint D;
    /* The CLI's route (cmd_draft.c): enumerate D, then sum the tuples inside H. */
    size_t guard = max_tuples ? max_tuples : MDSD_DRAFT_MAX_TUPLES;
    if (rc == MDSD_OK && (rc = mdsd_scheme_joint(&a.s, guard, &D, err)) == MDSD_OK) {
        if ((rc = mdsd_joint_sort(&D, err)) == MDSD_OK)
            *Q = mdsd_joint_Q(&D, in_H);
        mdsd_joint_free(&D);
    }
    free(in_H);
    api_scheme_clear(&a);
    return rc;
}

/* ---- alpha* ---- */

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_alpha_opts_init)(mdsd_alpha_opts *opts, size_t size)
{
    mdsd_alpha_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

const char *mdsd_alpha_method_name(mdsd_alpha_method m)
{
    if ((unsigned)m > MDSD_ALPHA_MAXFLOW)
        return "unknown";
    return mdsd_bound_method_name((mdsd_bound_method)m);
}

mdsd_status mdsd_alpha_method_parse(const char *name, mdsd_alpha_method *m, mdsd_err *err)
{
    mdsd_bound_method b;
    if (!name)
        return mdsd_fail(err, MDSD_EINVAL, "no method name given (NULL)");
    int rc = mdsd_bound_method_parse(name, &b, err);
    if (rc == MDSD_OK && b > MDSD_BOUND_MAXFLOW)
        rc = mdsd_fail(err, MDSD_EINVAL, "unknown alpha* method '%s' (auto, lp-full, "
                       "lp-reduced, brute, sort, k2, maxflow)", name);
    if (rc == MDSD_OK)
        *m = (mdsd_alpha_method)b;
    return rc;
}

/* The internal options of the public ones (opts NULL: the defaults). */
static void alpha_bound_opts(const mdsd_alpha_opts *opts, mdsd_bound_opts *bo)
{
    memset(bo, 0, sizeof *bo);
    if (opts) {
        bo->exact_arith = opts->exact_arith != 0;
        bo->max_tuples = opts->max_tuples;
        bo->max_vars = opts->max_vars;
        bo->max_brute_V = opts->max_brute_V;
        bo->lp_max_seconds = opts->force ? INFINITY : 0.0;
    }
}

mdsd_status mdsd_alpha(const double *p, const mdsd_scheme *s, mdsd_alpha_method m,
               const mdsd_alpha_opts *opts, mdsd_alpha_result *res, unsigned char *subset,
               mdsd_err *err)
{
    if (!res)
        return mdsd_fail(err, MDSD_EINVAL, "alpha*: no result given (NULL)");
    memset(res, 0, sizeof *res);
    res->alpha_one = -1;
    if ((unsigned)m > MDSD_ALPHA_MAXFLOW)
        return mdsd_fail(err, MDSD_EINVAL, "alpha*: unknown method %d", (int)m);
    int rc = opts ? mdsd_opts_check(opts->size, sizeof *opts, "mdsd_alpha_opts", NULL, err)
                  : MDSD_OK;
    api_scheme a;
    if (rc || (rc = api_scheme_copy(s, &a, err)))
        return rc;
    double *target;
    if ((rc = api_probs_copy(p, a.s.V, "target", &target, err))) {
        api_scheme_clear(&a);
        return rc;
    }
    mdsd_bound_opts bo;
    alpha_bound_opts(opts, &bo);
    mdsd_bound_result br = {0};
    br.subset = subset;
    rc = mdsd_bound_alpha(target, &a.s, (mdsd_bound_method)m, &bo, NULL, &br, err);
    if (rc == MDSD_OK) {
        res->alpha = br.alpha;
        res->method = (mdsd_alpha_method)br.method;
        res->has_subset = subset && br.has_subset;
        res->alpha_one = br.alpha_one;
        res->k2_margin = br.k2_margin;
        res->lp_vars = br.lp_vars;
    }
    free(target);
    api_scheme_clear(&a);
    return rc;
}

void (mdsd_alpha_routes_init)(mdsd_alpha_routes *routes, size_t size)
{
    mdsd_alpha_routes d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(routes, size, &d, sizeof d);
}

mdsd_status mdsd_alpha_all(const double *p, const mdsd_scheme *s, const mdsd_alpha_opts *opts,
                           mdsd_alpha_routes *routes, unsigned char *subsets, mdsd_err *err)
{
    if (!routes)
        return mdsd_fail(err, MDSD_EINVAL, "alpha* routes: no result given (NULL)");
    int rc = mdsd_opts_check(routes->size, sizeof *routes, "mdsd_alpha_routes", NULL, err);
    if (rc == MDSD_OK && opts)
        rc = mdsd_opts_check(opts->size, sizeof *opts, "mdsd_alpha_opts", NULL, err);
    if (rc)
        return rc;
    size_t size = routes->size;
    memset(routes, 0, sizeof *routes);
    routes->size = size;
    routes->alpha = NAN;
    api_scheme a;
    if ((rc = api_scheme_copy(s, &a, err)))
        return rc;
    double *target;
    if ((rc = api_probs_copy(p, a.s.V, "target", &target, err))) {
        api_scheme_clear(&a);
        return rc;
    }
    mdsd_bound_opts bo;
    alpha_bound_opts(opts, &bo);
    /* mdsd_scheme_check as the CLI makes it before its loop, so both refuse alike. */
    mdsd_bound_routes *r = malloc(sizeof *r);
    if (!r)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK)
        rc = mdsd_scheme_check(&a.s, err);
    if (rc == MDSD_OK) {
        rc = mdsd_bound_all(target, &a.s, &bo, subsets, NULL, r, err);
        routes->ran = r->ran;
        routes->alpha = r->alpha;
        routes->max_disagreement = r->max_disagreement;
        routes->failures = r->failures;
        for (size_t k = 0; k < MDSD_ALPHA_ROUTES; k++) {
            const mdsd_bound_route *from = &r->route[k];
            mdsd_alpha_route *to = &routes->routes[k];
            to->method = (mdsd_alpha_method)from->method;
            to->applies = from->applies;
            to->status = from->rc;
            memcpy(to->why, from->why, sizeof to->why);
            to->seconds = from->seconds;
            to->alpha = from->res.alpha;
            to->has_subset = subsets && from->rc == MDSD_OK && from->res.has_subset;
            to->alpha_one = from->rc == MDSD_OK ? from->res.alpha_one : -1;
            to->k2_margin = from->res.k2_margin;
            to->evaluations = from->res.evaluations;
            to->lp_vars = from->res.lp_vars;
            to->maxflow_sets = from->res.maxflow_sets;
            to->certificate_gap = from->res.maxflow_gap;
        }
    }
    free(r);
    free(target);
    api_scheme_clear(&a);
    return rc;
}

/* ---- LPs ---- */

mdsd_status mdsd_lp_export(const double *p, const mdsd_scheme *s, int reduced, const char *path,
                   mdsd_err *err)
{
    if (!path)
        return mdsd_fail(err, MDSD_EINVAL, "LP export: no path given (NULL)");
    mdsd_lp_format format;
    int rc = mdsd_lp_format_parse(path, &format, err);
    api_scheme a;
    if (rc || (rc = api_scheme_copy(s, &a, err)))
        return rc;
    double *target = NULL;
    mdsd_joint D = {0};
    rc = api_probs_copy(p, a.s.V, "target", &target, err);
    if (rc == MDSD_OK)
        rc = mdsd_scheme_joint(&a.s, MDSD_JOINT_MAX_TUPLES, &D, err);
    if (rc == MDSD_OK)
        rc = mdsd_lp_write(target, a.s.V, &D, reduced != 0, format, path, err);
    mdsd_joint_free(&D);
    free(target);
    api_scheme_clear(&a);
    return rc;
}

mdsd_status mdsd_lp_full_size(const mdsd_scheme *s, size_t *vars, mdsd_err *err)
{
    if (!vars)
        return mdsd_fail(err, MDSD_EINVAL, "LP size: no output given (NULL)");
    api_scheme a;
    int rc = api_scheme_copy(s, &a, err);
    if (rc)
        return rc;
    mdsd_joint D = {0};
    rc = mdsd_scheme_joint(&a.s, MDSD_JOINT_MAX_TUPLES, &D, err);
    if (rc == MDSD_OK)
        *vars = mdsd_lp_full_vars(a.s.V, &D);
    mdsd_joint_free(&D);
    api_scheme_clear(&a);
    return rc;
}
