/* toy.c - toy distribution families. See toy.h. */
#include "toy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "dist.h"

static const char *const family_names[MDSD_TOY_FAMILIES] = {
    "bernoulli", "uniform", "spechub-toy", "dirichlet", "zipf", "degenerate"};

const char *mdsd_toy_family_name(mdsd_toy_family f)
{
    return f < MDSD_TOY_FAMILIES ? family_names[f] : "unknown";
}

int mdsd_toy_family_parse(const char *name, mdsd_toy_family *out, mdsd_err *err)
{
    for (int f = 0; f < MDSD_TOY_FAMILIES; f++)
        if (!strcmp(name, family_names[f])) {
            *out = (mdsd_toy_family)f;
            return MDSD_OK;
        }
    return mdsd_fail(err, MDSD_EINVAL,
                     "unknown toy family '%s' (bernoulli, uniform, spechub-toy, dirichlet, zipf, degenerate)",
                     name);
}

void mdsd_toy_init(mdsd_toy *t, mdsd_toy_family f, size_t V)
{
    memset(t, 0, sizeof *t);
    t->family = f;
    t->V = V;
    t->a = t->b = NAN;
    t->d = V >= 2 ? V - V % 2 : V;
    t->r = 2.0;
    t->T = 1.0;
    t->lambda = 0.5;
    t->alpha = 1.0;
    /* zipf defaults measured to look like an LLM pair at T = 0.7 (V = 32000):
     * mean top-1 p 0.70, entropy 1.6 nats, sum min(p, q) 0.86, argmax of q =
     * argmax of p at 85% of rows */
    t->s = 2.0;
    t->spread = 0.6;
    t->sigma = 0.5;
    t->tau = 0.5;
    t->kind = -1;
}

/* Which parameters each family accepts. */
typedef struct {
    const char *name;
    mdsd_toy_family family;
} param_owner;

static const param_owner owners[] = {
    {"a", MDSD_TOY_BERNOULLI},   {"b", MDSD_TOY_BERNOULLI},      {"grid", MDSD_TOY_BERNOULLI},
    {"d", MDSD_TOY_UNIFORM},     {"r", MDSD_TOY_UNIFORM},        {"T", MDSD_TOY_SPECHUB},
    {"lambda", MDSD_TOY_SPECHUB}, {"alpha", MDSD_TOY_DIRICHLET}, {"s", MDSD_TOY_ZIPF},
    {"spread", MDSD_TOY_ZIPF},   {"sigma", MDSD_TOY_ZIPF},       {"tau", MDSD_TOY_ZIPF},
    {"kind", MDSD_TOY_DEGENERATE},
};

static double *param_slot(mdsd_toy *t, const char *name)
{
    if (!strcmp(name, "a")) return &t->a;
    if (!strcmp(name, "b")) return &t->b;
    if (!strcmp(name, "r")) return &t->r;
    if (!strcmp(name, "T")) return &t->T;
    if (!strcmp(name, "lambda")) return &t->lambda;
    if (!strcmp(name, "alpha")) return &t->alpha;
    if (!strcmp(name, "s")) return &t->s;
    if (!strcmp(name, "spread")) return &t->spread;
    if (!strcmp(name, "sigma")) return &t->sigma;
    if (!strcmp(name, "tau")) return &t->tau;
    return NULL;
}

static int whole(double v, double lo)
{
    return v >= lo && v == floor(v) && v < 1e15;
}

int mdsd_toy_set(mdsd_toy *t, const char *name, double value, mdsd_err *err)
{
    size_t k = 0;
    while (k < sizeof owners / sizeof *owners && strcmp(owners[k].name, name))
        k++;
    if (k == sizeof owners / sizeof *owners || owners[k].family != t->family)
        return mdsd_fail(err, MDSD_EINVAL, "toy family %s has no parameter '%s'",
                         mdsd_toy_family_name(t->family), name);
    if (!strcmp(name, "grid") || !strcmp(name, "d")) {
        if (!whole(value, 0))
            return mdsd_fail(err, MDSD_EINVAL, "toy parameter %s = %g is not a non-negative integer", name, value);
        *(!strcmp(name, "grid") ? &t->grid : &t->d) = (size_t)value;
    } else if (!strcmp(name, "kind")) {
        if (!(value == -1 || (whole(value, 0) && value < MDSD_DEGEN_KINDS)))
            return mdsd_fail(err, MDSD_EINVAL, "toy parameter kind = %g is not -1 or 0..%d", value,
                             MDSD_DEGEN_KINDS - 1);
        t->kind = (int)value;
    } else {
        *param_slot(t, name) = value;
    }
    return MDSD_OK;
}

int mdsd_toy_set_list(mdsd_toy *t, const char *spec, mdsd_err *err)
{
    char *copy = strdup(spec);
    if (!copy)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    int rc = MDSD_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == MDSD_OK; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        char *end = NULL;
        double v = eq ? strtod(eq + 1, &end) : 0.0;
        if (!eq || end == eq + 1 || *end != '\0') {
            rc = mdsd_fail(err, MDSD_EINVAL, "toy parameter '%s' is not NAME=NUMBER", item);
            break;
        }
        *eq = '\0';
        rc = mdsd_toy_set(t, item, v, err);
    }
    free(copy);
    return rc;
}

static int check_bernoulli(const mdsd_toy *t, mdsd_err *err)
{
    if (t->V != 2)
        return mdsd_fail(err, MDSD_EINVAL, "toy family bernoulli needs V = 2, not %zu", t->V);
    if (!isnan(t->a) && !(t->a >= 0 && t->a <= 1))
        return mdsd_fail(err, MDSD_EINVAL, "bernoulli a = %g is not in [0, 1]", t->a);
    if (!isnan(t->b) && !(t->b >= 0 && t->b <= 1))
        return mdsd_fail(err, MDSD_EINVAL, "bernoulli b = %g is not in [0, 1]", t->b);
    return MDSD_OK;
}

static int check_uniform(const mdsd_toy *t, mdsd_err *err)
{
    if (t->d < 1 || t->d > t->V)
        return mdsd_fail(err, MDSD_EINVAL, "uniform d = %zu is not in [1, V = %zu]", t->d, t->V);
    double m = (double)t->d / t->r;
    if (!(t->r >= 1) || fabs(m - nearbyint(m)) > 1e-9 * m || nearbyint(m) < 1)
        return mdsd_fail(err, MDSD_EINVAL, "uniform: d/r = %zu/%g must be an integer >= 1 (r >= 1)",
                         t->d, t->r);
    return MDSD_OK;
}

int mdsd_toy_check(const mdsd_toy *t, mdsd_err *err)
{
    if (t->family >= MDSD_TOY_FAMILIES)
        return mdsd_fail(err, MDSD_EINVAL, "unknown toy family %d", (int)t->family);
    if (t->V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "toy family %s: V must be at least 1", mdsd_toy_family_name(t->family));
    switch (t->family) {
    case MDSD_TOY_BERNOULLI: return check_bernoulli(t, err);
    case MDSD_TOY_UNIFORM: return check_uniform(t, err);
    case MDSD_TOY_SPECHUB:
        if (!(t->T > 0) || isinf(t->T))
            return mdsd_fail(err, MDSD_EINVAL, "spechub-toy T = %g is not a finite value > 0", t->T);
        if (!(t->lambda >= 0 && t->lambda <= 1))
            return mdsd_fail(err, MDSD_EINVAL, "spechub-toy lambda = %g is not in [0, 1]", t->lambda);
        return MDSD_OK;
    case MDSD_TOY_DIRICHLET:
        if (!(t->alpha > 0) || isinf(t->alpha))
            return mdsd_fail(err, MDSD_EINVAL, "dirichlet alpha = %g is not a finite value > 0", t->alpha);
        return MDSD_OK;
    case MDSD_TOY_ZIPF:
        if (!(t->s >= 0 && t->spread >= 0 && t->sigma >= 0 && t->tau >= 0) ||
            isinf(t->s + t->spread + t->sigma + t->tau))
            return mdsd_fail(err, MDSD_EINVAL, "zipf s, spread, sigma, tau must be finite and >= 0");
        return MDSD_OK;
    case MDSD_TOY_DEGENERATE:
    default:
        if (t->V < 2)
            return mdsd_fail(err, MDSD_EINVAL, "toy family degenerate needs V >= 2 (disjoint supports)");
        return MDSD_OK;
    }
}

void mdsd_toy_describe(const mdsd_toy *t, char *buf, size_t size)
{
    switch (t->family) {
    case MDSD_TOY_BERNOULLI:
        snprintf(buf, size, "a=%.15g,b=%.15g,grid=%zu", t->a, t->b, t->grid);
        break;
    case MDSD_TOY_UNIFORM: snprintf(buf, size, "d=%zu,r=%.15g", t->d, t->r); break;
    case MDSD_TOY_SPECHUB: snprintf(buf, size, "T=%.15g,lambda=%.15g", t->T, t->lambda); break;
    case MDSD_TOY_DIRICHLET: snprintf(buf, size, "alpha=%.15g", t->alpha); break;
    case MDSD_TOY_ZIPF:
        snprintf(buf, size, "s=%.15g,spread=%.15g,sigma=%.15g,tau=%.15g", t->s, t->spread, t->sigma, t->tau);
        break;
    case MDSD_TOY_DEGENERATE:
    default: snprintf(buf, size, "kind=%d", t->kind); break;
    }
}

/* ---- generators: each fills p (target) and q (n_q rows) in its native
 * form, probabilities (returns 0) or logits (returns 1). ---------------- */

static void normalise(double *p, size_t V)
{
    double s = mdsd_sum(p, V);
    for (size_t i = 0; i < V; i++)
        p[i] /= s;
}

/* Dirichlet(alpha) on the tokens with mask[i] != 0 (mask NULL = all); zero
 * elsewhere. Gamma draws can underflow to 0 for small alpha; if all do, one
 * allowed token gets everything. */
static void dirichlet(gsl_rng *r, size_t V, double alpha, const unsigned char *mask, double *p)
{
    double total = 0.0;
    size_t allowed = 0;
    for (size_t i = 0; i < V; i++) {
        int on = !mask || mask[i];
        p[i] = on ? gsl_ran_gamma(r, alpha, 1.0) : 0.0;
        total += p[i];
        allowed += on;
    }
    if (total > 0.0) {
        normalise(p, V);
        return;
    }
    size_t k = gsl_rng_uniform_int(r, allowed), seen = 0;
    for (size_t i = 0; i < V; i++)
        if (!mask || mask[i])
            p[i] = seen++ == k;
}

static double grid_value(size_t k, size_t m)
{
    return (double)(k % (m + 1)) / (double)m;
}

static int gen_bernoulli(const mdsd_toy *t, size_t index, gsl_rng *r, double *p, size_t n_q, double *q)
{
    size_t m = t->grid;
    double b = m ? grid_value(index / (m + 1), m) : isnan(t->b) ? gsl_rng_uniform(r) : t->b;
    p[0] = 1.0 - b;
    p[1] = b;
    for (size_t j = 0; j < n_q; j++) {
        double a = m ? grid_value(index + j, m) : isnan(t->a) ? gsl_rng_uniform(r) : t->a;
        q[2 * j] = 1.0 - a;
        q[2 * j + 1] = a;
    }
    return 0;
}

static int gen_uniform(const mdsd_toy *t, gsl_rng *r, double *p, size_t n_q, double *q)
{
    size_t V = t->V, m = (size_t)nearbyint((double)t->d / t->r);
    /* codes 2 = in both supports, 1 = draft only, 0 = neither; shuffled */
    for (size_t i = 0; i < V; i++)
        p[i] = i < m ? 2.0 : i < t->d ? 1.0 : 0.0;
    gsl_ran_shuffle(r, p, V, sizeof *p);
    for (size_t i = 0; i < V; i++) {
        q[i] = p[i] > 0.0 ? 1.0 / (double)t->d : 0.0;
        p[i] = p[i] == 2.0 ? 1.0 / (double)m : 0.0;
    }
    for (size_t j = 1; j < n_q; j++)
        memcpy(q + j * V, q, V * sizeof *q);
    return 0;
}

static int gen_spechub(const mdsd_toy *t, gsl_rng *r, double *lp, size_t n_q, double *lq)
{
    size_t V = t->V;
    for (size_t i = 0; i < V; i++)
        lp[i] = gsl_rng_uniform(r);
    for (size_t j = 0; j < n_q; j++)
        for (size_t i = 0; i < V; i++)
            lq[j * V + i] = (t->lambda * lp[i] + (1.0 - t->lambda) * gsl_rng_uniform(r)) / t->T;
    for (size_t i = 0; i < V; i++)
        lp[i] /= t->T;
    return 1;
}

static int gen_zipf(const mdsd_toy *t, gsl_rng *r, double *lp, size_t n_q, double *lq)
{
    size_t V = t->V;
    double c = t->s * exp(t->spread * gsl_ran_gaussian_ziggurat(r, 1.0));
    for (size_t k = 0; k < V; k++)
        lp[k] = -c * log((double)(k + 1));
    gsl_ran_shuffle(r, lp, V, sizeof *lp);
    if (t->sigma > 0)
        for (size_t i = 0; i < V; i++)
            lp[i] += gsl_ran_gaussian_ziggurat(r, t->sigma);
    for (size_t j = 0; j < n_q; j++)
        for (size_t i = 0; i < V; i++)
            lq[j * V + i] = lp[i] + (t->tau > 0 ? gsl_ran_gaussian_ziggurat(r, t->tau) : 0.0);
    return 1;
}

static void one_hot(gsl_rng *r, size_t V, double *q)
{
    size_t k = gsl_rng_uniform_int(r, V);
    for (size_t i = 0; i < V; i++)
        q[i] = i == k;
}

/* A random mask with about 40% zeros and at least one token kept. */
static void sparse_mask(gsl_rng *r, size_t V, unsigned char *mask)
{
    size_t keep = gsl_rng_uniform_int(r, V);
    for (size_t i = 0; i < V; i++)
        mask[i] = i == keep || gsl_rng_uniform(r) >= 0.4;
}

static int gen_degenerate(const mdsd_toy *t, size_t index, gsl_rng *r, double *p, size_t n_q,
                          double *q, mdsd_err *err)
{
    size_t V = t->V;
    int kind = t->kind >= 0 ? t->kind : (int)(index % MDSD_DEGEN_KINDS);
    unsigned char *mask = malloc(V);
    if (!mask)
        return -mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    switch (kind) {
    case MDSD_DEGEN_EQUAL:
        dirichlet(r, V, 1.0, NULL, p);
        for (size_t j = 0; j < n_q; j++)
            memcpy(q + j * V, p, V * sizeof *p);
        break;
    case MDSD_DEGEN_ONE_HOT_Q:
        dirichlet(r, V, 1.0, NULL, p);
        for (size_t j = 0; j < n_q; j++)
            one_hot(r, V, q + j * V);
        break;
    case MDSD_DEGEN_DISJOINT: {
        /* target on a random set A of 1..V-1 tokens, drafts on its complement */
        size_t size = 1 + gsl_rng_uniform_int(r, V - 1);
        for (size_t i = 0; i < V; i++)
            mask[i] = i < size;
        gsl_ran_shuffle(r, mask, V, 1);
        dirichlet(r, V, 1.0, mask, p);
        for (size_t i = 0; i < V; i++)
            mask[i] = !mask[i];
        for (size_t j = 0; j < n_q; j++)
            dirichlet(r, V, 1.0, mask, q + j * V);
        break;
    }
    case MDSD_DEGEN_ZEROS:
    default:
        sparse_mask(r, V, mask);
        dirichlet(r, V, 1.0, mask, p);
        for (size_t j = 0; j < n_q; j++) {
            sparse_mask(r, V, mask);
            dirichlet(r, V, 1.0, mask, q + j * V);
        }
        break;
    }
    free(mask);
    return 0;
}

/* Generates the instance in the family's native form: 0 = probabilities,
 * 1 = logits, negative = -(error code). */
static int generate(const mdsd_toy *t, size_t index, gsl_rng *r, double *p, size_t n_q, double *q,
                    mdsd_err *err)
{
    int rc = mdsd_toy_check(t, err);
    if (rc)
        return -rc;
    switch (t->family) {
    case MDSD_TOY_BERNOULLI: return gen_bernoulli(t, index, r, p, n_q, q);
    case MDSD_TOY_UNIFORM: return gen_uniform(t, r, p, n_q, q);
    case MDSD_TOY_SPECHUB: return gen_spechub(t, r, p, n_q, q);
    case MDSD_TOY_DIRICHLET:
        dirichlet(r, t->V, t->alpha, NULL, p);
        for (size_t j = 0; j < n_q; j++)
            dirichlet(r, t->V, t->alpha, NULL, q + j * t->V);
        return 0;
    case MDSD_TOY_ZIPF: return gen_zipf(t, r, p, n_q, q);
    case MDSD_TOY_DEGENERATE:
    default: return gen_degenerate(t, index, r, p, n_q, q, err);
    }
}

int mdsd_toy_logits(const mdsd_toy *t, size_t index, gsl_rng *r, double *lp, size_t n_q,
                    double *lq, mdsd_err *err)
{
    int form = generate(t, index, r, lp, n_q, lq, err);
    if (form < 0)
        return -form;
    if (form == 0)
        for (size_t i = 0; i < (n_q + 1) * t->V; i++) {
            double *x = i < t->V ? &lp[i] : &lq[i - t->V];
            *x = *x > 0.0 ? log(*x) : -INFINITY;
        }
    return MDSD_OK;
}

int mdsd_toy_probs(const mdsd_toy *t, size_t index, gsl_rng *r, double *p, size_t n_q, double *q,
                   mdsd_err *err)
{
    int form = generate(t, index, r, p, n_q, q, err);
    if (form < 0)
        return -form;
    int rc = MDSD_OK;
    if (form == 1) {
        rc = mdsd_softmax(p, t->V, 1.0, p, "toy target", err);
        for (size_t j = 0; j < n_q && rc == MDSD_OK; j++)
            rc = mdsd_softmax(q + j * t->V, t->V, 1.0, q + j * t->V, "toy draft", err);
    }
    return rc;
}
