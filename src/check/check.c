/* check.c - the registry and the runner of the theorem checks (check.h),
 * and the helpers the check files share (check_impl.h). */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "check_impl.h"
#include "rng.h"
#include "wor_q.h"

/* ---- registry -------------------------------------------------------------- */

typedef struct {
    const mdsd_check *checks;
    const size_t *count;
} check_group;

static const check_group groups[] = {
    {mdsd_checks_alpha, &mdsd_checks_alpha_count},
    {mdsd_checks_verify, &mdsd_checks_verify_count},
    {mdsd_checks_formula, &mdsd_checks_formula_count},
};

size_t mdsd_check_count(void)
{
    size_t n = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        n += *groups[g].count;
    return n;
}

const mdsd_check *mdsd_check_get(size_t i)
{
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        if (i < *groups[g].count)
            return &groups[g].checks[i];
        i -= *groups[g].count;
    }
    return NULL;
}

const mdsd_check *mdsd_check_find(const char *name, mdsd_err *err)
{
    size_t n = mdsd_check_count();
    for (size_t i = 0; i < n; i++)
        if (!strcmp(mdsd_check_get(i)->name, name))
            return mdsd_check_get(i);
    char list[1536] = "";
    for (size_t i = 0, len = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                mdsd_check_get(i)->name);
    mdsd_fail(err, MDSD_EINVAL, "unknown check '%s' (checks: %s)", name, list);
    return NULL;
}

bool mdsd_check_uses_family(const mdsd_check *c, int family)
{
    if (family < 0)
        return c->families != 0;
    return family < MDSD_TOY_FAMILIES && (c->families & FAM(family));
}

const char *mdsd_check_status_name(mdsd_check_status s)
{
    switch (s) {
    case MDSD_CHECK_PASS: return "pass";
    case MDSD_CHECK_FAIL: return "fail";
    case MDSD_CHECK_FINDING: return "finding";
    case MDSD_CHECK_SKIP: return "skip";
    }
    return "?";
}

int mdsd_check_profile_parse(const char *name, mdsd_check_profile *out, mdsd_err *err)
{
    if (!strcmp(name, "quick"))
        *out = MDSD_CHECK_QUICK;
    else if (!strcmp(name, "thorough"))
        *out = MDSD_CHECK_THOROUGH;
    else
        return mdsd_fail(err, MDSD_EINVAL, "unknown profile '%s' (quick or thorough)", name);
    return MDSD_OK;
}

void mdsd_check_env_default(mdsd_check_env *env)
{
    memset(env, 0, sizeof *env);
    env->bound = mdsd_bound_alpha;
    env->exact = mdsd_verifier_exact;
    env->verifiers[MDSD_VERIFIER_SD] = &mdsd_verify_sd_ops;
    env->verifiers[MDSD_VERIFIER_RRS] = &mdsd_verify_rrs_ops;
    env->verifiers[MDSD_VERIFIER_RRSW] = &mdsd_verify_rrsw_ops;
    env->verifiers[MDSD_VERIFIER_KSEQ] = &mdsd_verify_kseq_ops;
    env->verifiers[MDSD_VERIFIER_SPECHUB] = &mdsd_verify_spechub_ops;
    env->verifiers[MDSD_VERIFIER_GREEDY] = &mdsd_verify_greedy_ops;
    env->verifiers[MDSD_VERIFIER_IS] = &mdsd_verify_is_ops;
    env->verifiers[MDSD_VERIFIER_OTM] = &mdsd_verify_otm_ops;
    env->verifiers[MDSD_VERIFIER_OT] = &mdsd_verify_ot_ops;
    env->cps_Q = mdsd_cps_Q;
    env->wor_Q = mdsd_wor_Q;
}

void mdsd_check_cfg_init(mdsd_check_cfg *o, mdsd_check_profile profile)
{
    memset(o, 0, sizeof *o);
    o->count = profile == MDSD_CHECK_THOROUGH ? 10000 : 25;
    o->trials = profile == MDSD_CHECK_THOROUGH ? 10000 : 3000;
    o->seed = 1;
    o->family = -1;
    o->threads = 1;
}

void mdsd_check_bound_text(const mdsd_check *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s %.0e", c->pvalue ? ">=" : "<=", c->tol);
}

void mdsd_check_result_free(mdsd_check_result *res)
{
    if (!res)
        return;
    free(res->worst_p);
    free(res->worst_q);
    res->worst_p = res->worst_q = NULL;
}

/* ---- helpers for the check files ---------------------------------------------- */

size_t chk_int(mdsd_check_ctx *c, size_t lo, size_t hi)
{
    return lo + (size_t)gsl_rng_uniform_int(c->rng, (unsigned long)(hi - lo + 1));
}

int chk_scheme(const mdsd_check_ctx *c, mdsd_scheme_kind kind, size_t n, mdsd_scheme *s)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->n = n;
    s->V = c->V;
    s->q = c->q;
    if (kind == MDSD_SCHEME_MULTI && n > MDSD_CHECK_MAX_NQ)
        return 0;
    return mdsd_scheme_check(s, NULL) == MDSD_OK;
}

int chk_alpha_res(mdsd_check_ctx *c, const mdsd_scheme *s, mdsd_bound_method m,
                  mdsd_bound_result *res, mdsd_err *err)
{
    memset(res, 0, sizeof *res);
    return c->env->bound(c->p, s, m, NULL, c->ws, res, err);
}

int chk_alpha(mdsd_check_ctx *c, const mdsd_scheme *s, mdsd_bound_method m, double *alpha,
              mdsd_err *err)
{
    mdsd_bound_result r;
    int rc = chk_alpha_res(c, s, m, &r, err);
    *alpha = r.alpha;
    return rc;
}

int chk_exact(mdsd_check_ctx *c, mdsd_verifier_kind kind, const mdsd_scheme *s,
              const mdsd_verifier_opts *vo, double *alpha, double *per_draft, mdsd_err *err)
{
    return c->env->exact(kind, c->p, s, vo, alpha, per_draft, err);
}

static void capture(mdsd_check_ctx *c, size_t n, const char *fmt, va_list ap)
{
    mdsd_check_result *r = c->res;
    r->has_worst = true;
    r->worst_draw = c->draw;
    r->worst_family = c->toy.family;
    r->worst_V = c->V;
    r->worst_nq = MDSD_CHECK_MAX_NQ;
    r->worst_n = n;
    memcpy(r->worst_p, c->p, c->V * sizeof *c->p);
    memcpy(r->worst_q, c->q, MDSD_CHECK_MAX_NQ * c->V * sizeof *c->q);
    vsnprintf(r->worst_note, sizeof r->worst_note, fmt, ap);
}

/* The first instance on which a solver failed becomes the reported one: an
 * error is the worst outcome (deviation inf, p-value 0). */
static void capture_error(mdsd_check_ctx *c, ...)
{
    va_list ap;
    va_start(ap, c);
    capture(c, 0, "solver error (see error)", ap);
    va_end(ap);
    c->res->worst = c->def->pvalue ? 0.0 : INFINITY;
}

void chk_record(mdsd_check_ctx *c, size_t n, double dev, const char *fmt, ...)
{
    mdsd_check_result *r = c->res;
    if (isnan(dev))
        dev = INFINITY; /* a NaN must not pass */
    r->cases++;
    if (!(dev <= c->def->tol))
        r->counterexamples++;
    if (!r->has_worst || dev > r->worst) {
        r->worst = dev;
        va_list ap;
        va_start(ap, fmt);
        capture(c, n, fmt, ap);
        va_end(ap);
    }
}

int chk_record_p(mdsd_check_ctx *c, size_t n, double pvalue, const char *fmt, ...)
{
    mdsd_check_result *r = c->res;
    if (isnan(pvalue))
        pvalue = 0.0;
    if (c->n_pvalues == c->cap_pvalues) {
        size_t cap = c->cap_pvalues ? 2 * c->cap_pvalues : 256;
        double *grown = realloc(c->pvalues, cap * sizeof *grown);
        if (!grown)
            return MDSD_ENOMEM;
        c->pvalues = grown;
        c->cap_pvalues = cap;
    }
    c->pvalues[c->n_pvalues++] = pvalue;
    r->cases++;
    if (!r->has_worst || pvalue < r->worst) {
        r->worst = pvalue;
        va_list ap;
        va_start(ap, fmt);
        capture(c, n, fmt, ap);
        va_end(ap);
    }
    return MDSD_OK;
}

double chk_binomial_p(uint64_t k, uint64_t T, double prob)
{
    if (prob <= 0.0)
        return k == 0 ? 1.0 : 0.0;
    if (prob >= 1.0)
        return k == T ? 1.0 : 0.0;
    double lo = gsl_cdf_binomial_P((unsigned)k, prob, (unsigned)T);
    double hi = k == 0 ? 1.0 : gsl_cdf_binomial_Q((unsigned)(k - 1), prob, (unsigned)T);
    double pv = 2.0 * (lo < hi ? lo : hi);
    return pv < 1.0 ? pv : 1.0;
}

mdsd_gof chk_gof(const uint64_t *counts, const double *prob, size_t V)
{
    return mdsd_chisq_gof(counts, prob, V, 5.0);
}

double chk_mass(const double *x, size_t V, unsigned long S)
{
    double s = 0.0;
    for (size_t v = 0; v < V; v++)
        if (S >> v & 1)
            s += x[v];
    return s;
}

int chk_spectr_upper(const double *p, const double *q, size_t V, size_t n, double *ub,
                     mdsd_err *err)
{
    double tuples = pow((double)V, (double)n);
    if (V > 16 || tuples > 65536.0)
        return mdsd_fail(err, MDSD_ETOOBIG, "SpecTr upper bound: V^n = %g tuples is too many", tuples);
    size_t T = (size_t)tuples, masks = (size_t)1 << V;
    double *w = malloc(T * sizeof *w), *pm = malloc(masks * sizeof *pm);
    unsigned *S = malloc(T * sizeof *S);
    if (!w || !pm || !S) {
        free(w), free(pm), free(S);
        return mdsd_fail(err, MDSD_ENOMEM, "SpecTr upper bound: out of memory");
    }
    for (size_t t = 0; t < T; t++) {
        size_t code = t;
        w[t] = 1.0;
        S[t] = 0;
        for (size_t j = 0; j < n; j++, code /= V) {
            w[t] *= q[code % V];
            S[t] |= 1u << (code % V);
        }
    }
    for (size_t m = 0; m < masks; m++)
        pm[m] = chk_mass(p, V, m);
    double best = INFINITY;
    for (size_t om = 0; om < masks; om++) {
        double v = 0.0;
        for (size_t y = 0; y < V; y++)
            if (om >> y & 1) {
                double hit = -expm1((double)n * log1p(-q[y])); /* 1 - (1 - q)^n */
                v += p[y] < hit ? p[y] : hit;
            }
        for (size_t t = 0; t < T; t++) {
            double rest = pm[S[t] & ~om];
            v += w[t] < rest ? w[t] : rest;
        }
        if (v < best)
            best = v;
    }
    free(w), free(pm), free(S);
    *ub = best;
    return MDSD_OK;
}

/* ---- the runner ---------------------------------------------------------------- */

/* Family parameters varied across instances, so that a check sees sharp and
 * flat pairs, close and distant ones. */
static void configure_default(mdsd_toy *t, gsl_rng *r)
{
    static const double Ts[] = {0.1, 0.25, 0.5, 1.0, 2.0};
    static const double lambdas[] = {0.0, 0.25, 0.5, 0.7, 1.0};
    static const double alphas[] = {0.1, 0.3, 1.0, 3.0};
    switch (t->family) {
    case MDSD_TOY_BERNOULLI:
        if (gsl_rng_uniform_int(r, 2))
            t->grid = 6; /* else a, b ~ U(0, 1) */
        break;
    case MDSD_TOY_UNIFORM: {
        size_t d = 1 + gsl_rng_uniform_int(r, t->V), divisors[64], k = 0;
        for (size_t x = 1; x <= d && k < 64; x++)
            if (d % x == 0)
                divisors[k++] = x;
        t->d = d;
        t->r = (double)divisors[gsl_rng_uniform_int(r, k)];
        break;
    }
    case MDSD_TOY_SPECHUB:
        t->T = Ts[gsl_rng_uniform_int(r, 5)];
        t->lambda = lambdas[gsl_rng_uniform_int(r, 5)];
        break;
    case MDSD_TOY_DIRICHLET: t->alpha = alphas[gsl_rng_uniform_int(r, 4)]; break;
    case MDSD_TOY_ZIPF: t->s = 1.0 + (double)gsl_rng_uniform_int(r, 3); break;
    default: break;
    }
}

static void finish(mdsd_check_ctx *c, mdsd_check_result *res)
{
    const mdsd_check *def = c->def;
    if (def->pvalue && c->n_pvalues) {
        double m = (double)c->n_pvalues;
        res->worst = fmin(1.0, res->worst * m);
        res->counterexamples = 0;
        for (size_t i = 0; i < c->n_pvalues; i++)
            res->counterexamples += c->pvalues[i] * m < def->tol;
    }
    if (!res->has_worst)
        res->worst = NAN;
    if (def->summarize && res->instances)
        def->summarize(c, res->summary, sizeof res->summary);
    if (res->errors) {
        char first[sizeof res->error];
        memcpy(first, res->error, sizeof first);
        snprintf(res->error, sizeof res->error, "%zu instance%s failed; first: %.540s", res->errors,
                 res->errors > 1 ? "s" : "", first);
    }
    if (!res->error[0] && def->must_hold && res->cases == 0)
        snprintf(res->error, sizeof res->error,
                 "no instance met the hypothesis in %zu draws", res->draws);
    if (res->error[0])
        res->status = MDSD_CHECK_FAIL;
    else if (!def->must_hold)
        res->status = MDSD_CHECK_FINDING;
    else if (def->pvalue)
        res->status = res->worst >= def->tol ? MDSD_CHECK_PASS : MDSD_CHECK_FAIL;
    else
        res->status = res->worst <= def->tol ? MDSD_CHECK_PASS : MDSD_CHECK_FAIL;
}

/* Draws instance `draw` into c: family, V, parameters, p and q. */
static int draw_instance(mdsd_check_ctx *c, const mdsd_toy_family *fams, size_t nf,
                         size_t draw, mdsd_err *err)
{
    const mdsd_check *def = c->def;
    mdsd_toy_family f = fams[draw % nf];
    size_t index = draw / nf; /* per-family index: grid points, degenerate kinds */
    mdsd_rng_reseed(c->rng, mdsd_seed_mix(c->opts->seed, mdsd_seed_name(def->name), draw));
    c->draw = draw;
    c->V = f == MDSD_TOY_BERNOULLI ? 2 : chk_int(c, def->V_min, def->V_max);
    mdsd_toy_init(&c->toy, f, c->V);
    configure_default(&c->toy, c->rng);
    if (def->configure)
        def->configure(&c->toy, index, c->rng);
    c->V = c->toy.V;
    int rc = mdsd_toy_check(&c->toy, err);
    if (rc == MDSD_OK)
        rc = mdsd_toy_probs(&c->toy, index, c->rng, c->p, MDSD_CHECK_MAX_NQ, c->q, err);
    return rc;
}

static int validate_opts(const mdsd_check *def, const mdsd_check_cfg *o, mdsd_err *err)
{
    if (o->count == 0)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_COUNT,
                                "check %s: `count` must be at least 1", def->name);
    if (o->trials == 0 || o->trials > 100000000)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_TRIALS,
                                "check %s: `trials` = %llu must be in [1, 10^8]",
                                def->name, (unsigned long long)o->trials);
    if (o->family >= MDSD_TOY_FAMILIES || o->family < -1)
        return mdsd_fail(err, MDSD_EINVAL, "check %s: unknown family %d", def->name, o->family);
    if (def->V_max > 64 || def->V_min < 1 || def->V_min > def->V_max)
        return mdsd_fail(err, MDSD_EINVAL, "check %s: bad vocabulary range", def->name);
    return MDSD_OK;
}

int mdsd_check_run_one(const mdsd_check *def, const mdsd_check_env *env, const mdsd_check_cfg *o,
                   mdsd_check_result *res, mdsd_err *err)
{
    memset(res, 0, sizeof *res);
    res->check = def;
    res->worst = NAN;
    int rc = validate_opts(def, o, err);
    if (rc)
        return rc;
    mdsd_toy_family fams[MDSD_TOY_FAMILIES];
    size_t nf = 0;
    for (int f = 0; f < MDSD_TOY_FAMILIES; f++)
        if ((def->families & FAM(f)) && (o->family < 0 || o->family == f))
            fams[nf++] = (mdsd_toy_family)f;
    if (nf == 0) {
        res->status = MDSD_CHECK_SKIP;
        return MDSD_OK;
    }
    size_t Vmax = def->V_max > 2 ? def->V_max : 2;
    mdsd_check_ctx c;
    memset(&c, 0, sizeof c);
    c.def = def;
    c.env = env;
    c.opts = o;
    c.res = res;
    c.p = malloc(Vmax * sizeof *c.p);
    c.q = malloc(MDSD_CHECK_MAX_NQ * Vmax * sizeof *c.q);
    res->worst_p = malloc(Vmax * sizeof *res->worst_p);
    res->worst_q = malloc(MDSD_CHECK_MAX_NQ * Vmax * sizeof *res->worst_q);
    c.rng = mdsd_rng_alloc(o->seed);
    if (!c.p || !c.q || !res->worst_p || !res->worst_q || !c.rng) {
        rc = mdsd_fail(err, MDSD_ENOMEM, "check %s: out of memory", def->name);
        goto done;
    }
    if (!(c.ws = mdsd_bound_workspace_alloc(Vmax, 2, err))) {
        rc = MDSD_ENOMEM;
        goto done;
    }
    size_t max_draws = o->count > SIZE_MAX / 20 ? SIZE_MAX : 20 * o->count;
    for (size_t draw = 0; res->instances + res->errors < o->count && draw < max_draws; draw++) {
        if (mdsd_interrupted()) { /* mdsd_interrupt: stop between instances */
            rc = mdsd_fail_interrupted(err, "check");
            goto done;
        }
        mdsd_err e;
        mdsd_err_clear(&e);
        int r = draw_instance(&c, fams, nf, draw, &e);
        if (r == MDSD_OK) {
            res->draws++;
            r = def->run(&c, &e);
        }
        if (r == MDSD_CHECK_NA)
            continue;
        if (r != MDSD_OK) {
            if (r == MDSD_ENOMEM) {
                rc = mdsd_fail(err, MDSD_ENOMEM, "check %s: out of memory", def->name);
                goto done;
            }
            if (res->errors++ == 0) {
                snprintf(res->error, sizeof res->error, "instance %zu (%s, V = %zu): %.440s", draw,
                         mdsd_toy_family_name(c.toy.family), c.V,
                         e.msg[0] ? e.msg : mdsd_strerror(r));
                capture_error(&c);
            }
            continue;
        }
        res->instances++;
    }
    finish(&c, res);
done:
    mdsd_bound_workspace_free(c.ws);
    if (c.rng)
        gsl_rng_free(c.rng);
    free(c.p);
    free(c.q);
    free(c.pvalues);
    return rc;
}
