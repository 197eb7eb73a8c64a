#include "verifier.h"

#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "opts.h"
#include "verify_common.h"

/* The verifiers built in. A kind without an entry is refused. */
static const mdsd_verifier_ops *const table[MDSD_VERIFIER_KINDS] = {
    [MDSD_VERIFIER_SD] = &mdsd_verify_sd_ops,
    [MDSD_VERIFIER_RRS] = &mdsd_verify_rrs_ops,
    [MDSD_VERIFIER_RRSW] = &mdsd_verify_rrsw_ops,
    [MDSD_VERIFIER_KSEQ] = &mdsd_verify_kseq_ops,
    [MDSD_VERIFIER_SPECHUB] = &mdsd_verify_spechub_ops,
    [MDSD_VERIFIER_GREEDY] = &mdsd_verify_greedy_ops,
    [MDSD_VERIFIER_IS] = &mdsd_verify_is_ops,
    [MDSD_VERIFIER_OTM] = &mdsd_verify_otm_ops,
    [MDSD_VERIFIER_OT] = &mdsd_verify_ot_ops,
    [MDSD_VERIFIER_IS_FACE] = &mdsd_verify_is_face_ops,
    [MDSD_VERIFIER_RRS_SKIPDUP] = &mdsd_verify_rrs_skipdup_ops,
    [MDSD_VERIFIER_SPECHUB_HUBACCEPT] = &mdsd_verify_spechub_hubaccept_ops,
    [MDSD_VERIFIER_RRSW_F32] = &mdsd_verify_rrsw_f32_ops,
};

struct mdsd_verifier {
    mdsd_verifier_kind kind;
    const mdsd_verifier_ops *ops;
    mdsd_scheme scheme;  /* points into the copies below */
    double *q;           /* copy of the scheme's q rows */
    mdsd_joint custom;   /* copy of a custom joint */
    void *state;
};

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_verifier_opts_init)(mdsd_verifier_opts *opts, size_t size)
{
    mdsd_verifier_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

static mdsd_verifier_opts with_defaults(const mdsd_verifier_opts *opts)
{
    mdsd_verifier_opts o;
    mdsd_verifier_opts_init(&o);
    if (opts)
        o = *opts;
    if (!(o.max_paths > 0.0)) /* 0, negative or NaN (a NaN guard would guard nothing) */
        o.max_paths = MDSD_RRSW_MAX_PATHS;
    if (o.max_tuples == 0)
        o.max_tuples = MDSD_JOINT_MAX_TUPLES;
    return o;
}

/* Names and default schemes are the registry's rather than the ops' so that
 * a kind is nameable even when its file is not built in. */
const char *mdsd_verifier_name(mdsd_verifier_kind kind)
{
    const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_VERIFIER, (int)kind);
    return e ? e->name : "?";
}

mdsd_status mdsd_verifier_parse(const char *name, mdsd_verifier_kind *kind, mdsd_err *err)
{
    const mdsd_registry_entry *e = mdsd_registry_find(MDSD_NAME_VERIFIER, name);
    if (e) {
        *kind = (mdsd_verifier_kind)e->kind;
        return MDSD_OK;
    }
    char valid[256], audit[256];
    return mdsd_fail(err, MDSD_EINVAL, "unknown verifier '%s' (expected %s; audit variants: %s)",
                     name, mdsd_registry_join(MDSD_NAME_VERIFIER, 0, " or ", valid, sizeof valid),
                     mdsd_registry_join(MDSD_NAME_VERIFIER, 1, ", ", audit, sizeof audit));
}

mdsd_scheme_kind mdsd_verifier_scheme(mdsd_verifier_kind kind)
{
    const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_VERIFIER, (int)kind);
    return e ? e->scheme : MDSD_SCHEME_IID;
}

static const mdsd_verifier_ops *lookup(mdsd_verifier_kind kind, mdsd_err *err)
{
    if ((unsigned)kind >= MDSD_VERIFIER_KINDS) {
        mdsd_fail(err, MDSD_EINVAL, "unknown verifier %d", (int)kind);
        return NULL;
    }
    if (!table[kind])
        mdsd_fail(err, MDSD_EUNSUPPORTED, "verifier '%s' is not built into this library",
                  mdsd_verifier_name(kind));
    return table[kind];
}

int mdsd_verifier_check(mdsd_verifier_kind kind, const mdsd_scheme *s, mdsd_err *err)
{
    mdsd_err e;
    mdsd_err_clear(&e);
    const mdsd_verifier_ops *ops = lookup(kind, &e);
    if (!ops)
        return mdsd_fail_from(err, &e, "verifier");
    int rc = mdsd_scheme_check(s, err);
    if (rc == MDSD_OK && ops->check)
        rc = ops->check(s, err);
    return rc;
}

/* A normalised copy of p, checked against the scheme's V. */
static int target_copy(const double *p, size_t V, double **out, mdsd_err *err)
{
    *out = NULL;
    if (!p)
        return mdsd_fail(err, MDSD_EINVAL, "no target distribution p");
    double *copy = mdsd_vc_malloc(V * sizeof *copy, "target", err);
    if (!copy)
        return MDSD_ENOMEM;
    int rc = mdsd_probs_validate_copy(p, V, copy, "target", err);
    if (rc) {
        free(copy);
        return rc;
    }
    *out = copy;
    return MDSD_OK;
}

static int copy_scheme(mdsd_verifier *v, const mdsd_scheme *s, mdsd_err *err)
{
    v->scheme = *s;
    if (s->kind == MDSD_SCHEME_CUSTOM) {
        const mdsd_joint *C = s->custom;
        v->custom.n = C->n;
        v->custom.tokens = mdsd_vc_malloc(C->count * C->n * sizeof(int), "verifier", err);
        v->custom.prob = mdsd_vc_malloc(C->count * sizeof(double), "verifier", err);
        if (!v->custom.tokens || !v->custom.prob)
            return MDSD_ENOMEM;
        memcpy(v->custom.tokens, C->tokens, C->count * C->n * sizeof(int));
        memcpy(v->custom.prob, C->prob, C->count * sizeof(double));
        v->custom.count = C->count;
        v->scheme.custom = &v->custom;
        return MDSD_OK;
    }
    size_t rows = s->kind == MDSD_SCHEME_MULTI ? s->n : 1;
    if (!(v->q = mdsd_vc_malloc(rows * s->V * sizeof *v->q, "verifier", err)))
        return MDSD_ENOMEM;
    memcpy(v->q, s->q, rows * s->V * sizeof *v->q);
    v->scheme.q = v->q;
    return MDSD_OK;
}

static mdsd_verifier *alloc_with(mdsd_verifier_kind kind, const mdsd_verifier_ops *ops,
                                 const double *p, const mdsd_scheme *s,
                                 const mdsd_verifier_opts *opts, const float *zp,
                                 const float *zq, mdsd_err *err)
{
    double *target;
    if (target_copy(p, s->V, &target, err))
        return NULL;
    mdsd_verifier *v = calloc(1, sizeof *v);
    if (!v) {
        free(target);
        mdsd_fail(err, MDSD_ENOMEM, "verifier: out of memory");
        return NULL;
    }
    v->kind = kind;
    v->ops = ops;
    mdsd_verifier_opts o = with_defaults(opts);
    int rc = copy_scheme(v, s, err);
    if (rc == MDSD_OK)
        rc = zp && zq && kind == MDSD_VERIFIER_OT
                 ? mdsd_verify_ot_prepare_logits(target, &v->scheme, &o, zp, zq, &v->state, err)
                 : ops->prepare(target, &v->scheme, &o, &v->state, err);
    free(target);
    if (rc) {
        mdsd_verifier_free(v);
        return NULL;
    }
    return v;
}

mdsd_verifier *mdsd_verifier_alloc(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                                   const mdsd_verifier_opts *opts, mdsd_err *err)
{
    return mdsd_verifier_alloc_logits(kind, p, s, opts, NULL, NULL, err);
}

mdsd_verifier *mdsd_verifier_alloc_logits(mdsd_verifier_kind kind, const double *p,
                                          const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                                          const float *zp, const float *zq, mdsd_err *err)
{
    if (mdsd_verifier_check(kind, s, err))
        return NULL;
    return alloc_with(kind, table[kind], p, s, opts, zp, zq, err);
}

mdsd_verifier *mdsd_verifier_alloc_ops(const mdsd_verifier_ops *ops, const double *p,
                                       const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                                       mdsd_err *err)
{
    int rc = mdsd_scheme_check(s, err);
    if (rc == MDSD_OK && ops->check)
        rc = ops->check(s, err);
    return rc ? NULL : alloc_with(MDSD_VERIFIER_KINDS, ops, p, s, opts, NULL, NULL, err);
}

int mdsd_verifier_verify(const mdsd_verifier *v, const int *drafts, gsl_rng *rng,
                         int *accepted_index)
{
    int j = -1;
    int y = v->ops->verify(v->state, drafts, rng, &j);
    if (j < 0)
        j = mdsd_vc_first_match(drafts, v->scheme.n, y);
    if (accepted_index)
        *accepted_index = j;
    return y;
}

static mdsd_verifier_law_fn law_of(const mdsd_verifier *v)
{
    switch ((int)v->kind) { /* int: the audit kinds are not members of the public enum */
    case MDSD_VERIFIER_SD: return mdsd_verify_sd_law;
    case MDSD_VERIFIER_RRS: return mdsd_verify_rrs_law;
    case MDSD_VERIFIER_RRSW: return mdsd_verify_rrsw_law;
    case MDSD_VERIFIER_KSEQ: return mdsd_verify_kseq_law;
    case MDSD_VERIFIER_SPECHUB: return mdsd_verify_spechub_law;
    case MDSD_VERIFIER_GREEDY: return mdsd_verify_greedy_law;
    case MDSD_VERIFIER_IS:
    case MDSD_VERIFIER_IS_FACE: return mdsd_verify_is_law; /* same state, other weights */
    case MDSD_VERIFIER_OTM: return mdsd_verify_otm_law;
    case MDSD_VERIFIER_OT: return mdsd_verify_ot_law;
    default: return NULL; /* ops outside the table */
    }
}

int mdsd_verifier_law(const mdsd_verifier *v, const int *drafts, double *py, mdsd_err *err)
{
    mdsd_verifier_law_fn law = law_of(v);
    if (!law)
        return mdsd_fail(err, MDSD_EUNSUPPORTED,
                         "verifier %s has no conditional output law given the drafts",
                         v->ops->name);
    if (v->scheme.n > MDSD_LAW_MAX_DRAFTS)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "verifier %s: the output law handles at most "
                         "%d drafts, got %zu", v->ops->name, MDSD_LAW_MAX_DRAFTS, v->scheme.n);
    law(v->state, drafts, py);
    return MDSD_OK;
}

mdsd_verifier_kind mdsd_verifier_kind_of(const mdsd_verifier *v)
{
    return v->kind;
}

const char *mdsd_verifier_name_of(const mdsd_verifier *v)
{
    return v->ops->name;
}

const mdsd_scheme *mdsd_verifier_scheme_of(const mdsd_verifier *v)
{
    return &v->scheme;
}

void mdsd_verifier_free(mdsd_verifier *v)
{
    if (!v)
        return;
    if (v->state && v->ops->release)
        v->ops->release(v->state);
    free(v->q);
    mdsd_joint_free(&v->custom);
    free(v);
}

int mdsd_verifier_exact(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                        const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                        mdsd_err *err)
{
    return mdsd_verifier_exact_bounds(kind, p, s, opts, alpha, per_draft, NULL, NULL, err);
}

int mdsd_verifier_exact_bounds(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                               const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                               double *alpha_lo, double *alpha_hi, mdsd_err *err)
{
    int rc = mdsd_verifier_check(kind, s, err);
    if (rc)
        return rc;
    const mdsd_verifier_ops *ops = table[kind];
    if (!ops->exact)
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_TRIALS,
                                "verifier %s has no exact acceptance rate; estimate it by Monte Carlo "
                                "(`trials`)", mdsd_verifier_name(kind));
    double *target;
    if ((rc = target_copy(p, s->V, &target, err)))
        return rc;
    double *rates = mdsd_vc_malloc(s->n * sizeof *rates, "exact", err);
    if (!rates) {
        free(target);
        return MDSD_ENOMEM;
    }
    mdsd_verifier_opts o = with_defaults(opts);
    double a = 0.0, lo = 0.0, hi = 0.0;
    if (kind == MDSD_VERIFIER_RRSW) {
        rc = mdsd_rrsw_exact_bounds(target, s, &o, 0.0, &a, rates, &lo, &hi, err);
    } else {
        rc = ops->exact(target, s, &o, &a, rates, err);
        lo = hi = a;
    }
    if (rc == MDSD_OK) {
        *alpha = a;
        if (alpha_lo)
            *alpha_lo = lo;
        if (alpha_hi)
            *alpha_hi = hi;
        if (per_draft)
            memcpy(per_draft, rates, s->n * sizeof *rates);
    }
    free(target);
    free(rates);
    return rc;
}
