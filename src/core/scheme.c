#include "simd.h"
#include "scheme.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "dist.h"
#include "registry.h"

/* The names are the registry's (registry.c). */
const char *mdsd_scheme_name(mdsd_scheme_kind kind)
{
    const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_SCHEME, (int)kind);
    return e ? e->name : "?";
}

mdsd_status mdsd_scheme_parse(const char *name, mdsd_scheme_kind *kind, mdsd_err *err)
{
    const mdsd_registry_entry *e = mdsd_registry_find(MDSD_NAME_SCHEME, name);
    if (e) {
        *kind = (mdsd_scheme_kind)e->kind;
        return MDSD_OK;
    }
    char names[128];
    return mdsd_fail(err, MDSD_EINVAL, "unknown scheme '%s' (expected %s)", name,
                     mdsd_registry_join(MDSD_NAME_SCHEME, -1, " or ", names, sizeof names));
}

/* ---- checks ------------------------------------------------------------ */

static int check_custom(const mdsd_scheme *s, mdsd_err *err)
{
    const mdsd_joint *D = s->custom;
    if (!D || D->count == 0)
        return mdsd_fail(err, MDSD_EINVAL, "custom scheme: no tuples given");
    if (D->n != s->n)
        return mdsd_fail(err, MDSD_EINVAL, "custom scheme: tuples have %zu drafts, n = %zu",
                         D->n, s->n);
    for (size_t t = 0; t < D->count * D->n; t++)
        if (D->tokens[t] < 0 || (size_t)D->tokens[t] >= s->V)
            return mdsd_fail(err, MDSD_EINVAL,
                             "custom scheme: tuple %zu has token %d outside the vocabulary [0, %zu)",
                             t / D->n, D->tokens[t], s->V);
    return MDSD_OK;
}

int mdsd_scheme_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind >= MDSD_SCHEME_COUNT)
        return mdsd_fail(err, MDSD_EINVAL, "unknown scheme %d", (int)s->kind);
    const char *name = mdsd_scheme_name(s->kind);
    if (s->n < 1)
        return mdsd_fail(err, MDSD_EINVAL, "%s: number of drafts n must be >= 1", name);
    if (s->n > MDSD_MAX_DRAFTS)
        return mdsd_fail(err, MDSD_EINVAL, "%s: n = %zu drafts is above the limit of %d", name,
                         s->n, MDSD_MAX_DRAFTS);
    if (s->V < 1)
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty vocabulary", name);
    if (s->kind == MDSD_SCHEME_CUSTOM)
        return check_custom(s, err);
    if (!s->q)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no draft distribution", name);
    /* Only whether the support reaches n matters (exact count for the message). */
    size_t need = s->kind == MDSD_SCHEME_HUB ? 2 : s->n, support = 0;
    for (size_t x = 0; x < s->V && support < need; x++)
        support += s->q[x] > 0.0;
    if (support < need)
        support = mdsd_support_size(s->q, s->V);
    switch (s->kind) {
    case MDSD_SCHEME_WOR:
    case MDSD_SCHEME_CPS:
        if (s->n > support)
            return mdsd_fail(err, MDSD_EINVAL,
                             "%s: n = %zu drafts without replacement but the draft has only %zu "
                             "tokens of positive probability", name, s->n, support);
        break;
    case MDSD_SCHEME_GREEDY:
        if (s->n > support)
            return mdsd_fail(err, MDSD_EINVAL,
                             "greedy: n = %zu needs %zu tokens of positive draft probability, "
                             "the draft has %zu", s->n, s->n, support);
        break;
    case MDSD_SCHEME_HUB:
        if (s->n != 2)
            return mdsd_fail(err, MDSD_EINVAL, "hub: the hub scheme is defined for n = 2 only (got %zu)",
                             s->n);
        if (support < 2)
            return mdsd_fail(err, MDSD_EINVAL,
                             "hub: needs at least 2 tokens of positive draft probability, got %zu",
                             support);
        break;
    default:
        break;
    }
    return MDSD_OK;
}

/* ---- enumeration --------------------------------------------------------- */

static double falling_factorial(double s, size_t n)
{
    double r = 1.0;
    for (size_t j = 0; j < n; j++)
        r *= s - (double)j;
    return r > 0 ? r : 0;
}

double mdsd_scheme_joint_size(const mdsd_scheme *s)
{
    if (s->kind == MDSD_SCHEME_CUSTOM)
        return s->custom ? (double)s->custom->count : 0.0;
    if (s->kind == MDSD_SCHEME_MULTI) {
        double r = 1.0;
        for (size_t j = 0; j < s->n; j++)
            r *= (double)mdsd_support_size(s->q + j * s->V, s->V);
        return r;
    }
    double support = (double)mdsd_support_size(s->q, s->V);
    switch (s->kind) {
    case MDSD_SCHEME_IID: return pow(support, (double)s->n);
    case MDSD_SCHEME_WOR:
    case MDSD_SCHEME_CPS: return falling_factorial(support, s->n);
    case MDSD_SCHEME_GREEDY: return support - (double)(s->n - 1);
    case MDSD_SCHEME_HUB: return 2.0 * (support - 1.0);
    default: return 0.0;
    }
}

typedef struct {
    const mdsd_scheme *s;
    mdsd_joint *D;
    int *prefix;         /* [n] tokens chosen so far */
    double remaining;    /* wor: q mass outside the prefix */
} enumerator;

static void emit(enumerator *e, double prob)
{
    mdsd_joint *D = e->D;
    memcpy(D->tokens + D->count * D->n, e->prefix, D->n * sizeof(int));
    D->prob[D->count++] = prob;
}

static int in_prefix(const enumerator *e, size_t depth, int token)
{
    for (size_t l = 0; l < depth; l++)
        if (e->prefix[l] == token)
            return 1;
    return 0;
}

/* q mass off the first `count` tokens of tuple, summed directly: 1 - q(prefix)
 * by subtraction loses relative accuracy when q is concentrated. */
static double mass_outside(const double *q, size_t V, const int *tuple, size_t count)
{
    double s = 0.0, c = 0.0;
    for (size_t v = 0; v < V; v++) {
        int taken = 0;
        for (size_t l = 0; l < count && !taken; l++)
            taken = tuple[l] == (int)v;
        if (taken)
            continue;
        MDSD_KAHAN_ADD(s, c, q[v]);
    }
    return s;
}

/* Probability factor for appending `token` at `depth`; 0 excludes it. */
static double step_factor(const enumerator *e, size_t depth, int token)
{
    const mdsd_scheme *s = e->s;
    switch (s->kind) {
    case MDSD_SCHEME_IID: return s->q[token];
    case MDSD_SCHEME_MULTI: return s->q[depth * s->V + (size_t)token];
    case MDSD_SCHEME_CPS: return in_prefix(e, depth, token) ? 0.0 : s->q[token];
    case MDSD_SCHEME_WOR:
        return in_prefix(e, depth, token) ? 0.0 : s->q[token] / e->remaining;
    default: return 0.0;
    }
}

static void enumerate_products(enumerator *e, size_t depth, double prob)
{
    if (depth == e->s->n) {
        emit(e, prob);
        return;
    }
    if (e->s->kind == MDSD_SCHEME_WOR)
        e->remaining = mass_outside(e->s->q, e->s->V, e->prefix, depth);
    for (size_t v = 0; v < e->s->V; v++) {
        double f = step_factor(e, depth, (int)v);
        if (f <= 0.0)
            continue;
        e->prefix[depth] = (int)v;
        enumerate_products(e, depth + 1, prob * f);
        if (e->s->kind == MDSD_SCHEME_WOR) /* the recursion overwrote it */
            e->remaining = mass_outside(e->s->q, e->s->V, e->prefix, depth);
    }
}

/* cps: P(tuple) proportional to prod_i q(x_i) over distinct tokens. The
 * products can underflow (q with subnormal entries: all n-sets of V = n
 * tokens may include them), so they are summed as logarithms relative to
 * log_ref, the largest product's (the n largest q); a tuple below it by more
 * than the double range is 0 relative to it. */
static void enumerate_cps(enumerator *e, size_t depth, double log_prob, double log_ref)
{
    if (depth == e->s->n) {
        emit(e, exp(log_prob - log_ref));
        return;
    }
    for (size_t v = 0; v < e->s->V; v++) {
        if (!(e->s->q[v] > 0.0) || in_prefix(e, depth, (int)v))
            continue;
        e->prefix[depth] = (int)v;
        enumerate_cps(e, depth + 1, log_prob + log(e->s->q[v]), log_ref);
    }
}

static double cps_log_ref(const mdsd_scheme *s, int *scratch)
{
    mdsd_top_indices(s->q, s->V, s->n, scratch);
    double r = 0.0;
    for (size_t j = 0; j < s->n; j++)
        r += log(s->q[scratch[j]]);
    return r;
}

static void enumerate_greedy(enumerator *e)
{
    const mdsd_scheme *s = e->s;
    size_t fixed = s->n - 1;
    mdsd_top_indices(s->q, s->V, fixed, e->prefix);
    double rest = mass_outside(s->q, s->V, e->prefix, fixed);
    for (size_t v = 0; v < s->V; v++) {
        if (s->q[v] <= 0.0 || in_prefix(e, fixed, (int)v))
            continue;
        e->prefix[fixed] = (int)v;
        emit(e, s->q[v] / rest);
    }
}

static void enumerate_hub(enumerator *e)
{
    const mdsd_scheme *s = e->s;
    int a = (int)mdsd_argmax(s->q, s->V);
    double qa = s->q[a], rest = mass_outside(s->q, s->V, &a, 1);
    for (size_t v = 0; v < s->V; v++) {
        if (s->q[v] <= 0.0 || (int)v == a)
            continue;
        e->prefix[0] = (int)v, e->prefix[1] = a;
        emit(e, s->q[v]);
        e->prefix[0] = a, e->prefix[1] = (int)v;
        emit(e, qa * s->q[v] / rest);
    }
}

static void normalise(mdsd_joint *D)
{
    double total = mdsd_sum(D->prob, D->count);
    for (size_t t = 0; t < D->count; t++)
        D->prob[t] /= total;
}

static int joint_alloc(mdsd_joint *D, size_t n, size_t count, mdsd_err *err)
{
    D->n = n;
    D->count = 0;
    D->tokens = malloc((count ? count : 1) * n * sizeof *D->tokens);
    D->prob = malloc((count ? count : 1) * sizeof *D->prob);
    if (!D->tokens || !D->prob) {
        mdsd_joint_free(D);
        return mdsd_fail(err, MDSD_ENOMEM, "joint distribution: out of memory for %zu tuples", count);
    }
    return MDSD_OK;
}

int mdsd_scheme_joint(const mdsd_scheme *s, size_t max_tuples, mdsd_joint *out, mdsd_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = mdsd_scheme_check(s, err);
    if (rc)
        return rc;
    double size = mdsd_scheme_joint_size(s);
    if (size > (double)max_tuples)
        return mdsd_fail(err, MDSD_ETOOBIG,
                         "%s: the joint distribution of n = %zu drafts over V = %zu has %.4g tuples, "
                         "above the enumeration limit of %zu; use a closed-form method",
                         mdsd_scheme_name(s->kind), s->n, s->V, size, max_tuples);
    if ((rc = joint_alloc(out, s->n, (size_t)size, err)))
        return rc;
    if (s->kind == MDSD_SCHEME_CUSTOM) {
        const mdsd_joint *C = s->custom;
        memcpy(out->tokens, C->tokens, C->count * C->n * sizeof *C->tokens);
        memcpy(out->prob, C->prob, C->count * sizeof *C->prob);
        out->count = C->count;
        return MDSD_OK;
    }
    int prefix[64];
    if (s->n > 64)
        return mdsd_fail(err, MDSD_ETOOBIG, "n = %zu drafts is above the enumeration limit of 64", s->n);
    enumerator e = {s, out, prefix, 1.0};
    if (s->kind == MDSD_SCHEME_GREEDY)
        enumerate_greedy(&e);
    else if (s->kind == MDSD_SCHEME_HUB)
        enumerate_hub(&e);
    else if (s->kind == MDSD_SCHEME_CPS)
        enumerate_cps(&e, 0, 0.0, cps_log_ref(s, prefix));
    else
        enumerate_products(&e, 0, 1.0);
    if (s->kind == MDSD_SCHEME_CPS)
        normalise(out);
    return MDSD_OK;
}

void mdsd_joint_free(mdsd_joint *D)
{
    if (!D)
        return;
    free(D->tokens);
    free(D->prob);
    D->tokens = NULL;
    D->prob = NULL;
    D->count = 0;
}

double mdsd_joint_Q(const mdsd_joint *D, const unsigned char *in_H)
{
    double s = 0.0, c = 0.0;
    for (size_t t = 0; t < D->count; t++) {
        const int *x = D->tokens + t * D->n;
        size_t j = 0;
        while (j < D->n && in_H[x[j]])
            j++;
        if (j < D->n)
            continue;
        MDSD_KAHAN_ADD(s, c, D->prob[t]);
    }
    return s;
}

static int compare_tuples(const int *a, const int *b, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (a[j] != b[j])
            return a[j] < b[j] ? -1 : 1;
    return 0;
}

/* qsort has no context argument, so each reference carries its tuple length. */
typedef struct {
    const int *tuple;
    size_t n;
    size_t index;
} tuple_ref;

static int by_tuple(const void *a, const void *b)
{
    const tuple_ref *x = a, *y = b;
    return compare_tuples(x->tuple, y->tuple, x->n);
}

int mdsd_joint_sort(mdsd_joint *D, mdsd_err *err)
{
    size_t n = D->n, count = D->count;
    tuple_ref *ref = malloc((count ? count : 1) * sizeof *ref);
    int *tokens = malloc((count ? count : 1) * n * sizeof *tokens);
    double *prob = malloc((count ? count : 1) * sizeof *prob);
    if (!ref || !tokens || !prob) {
        free(ref), free(tokens), free(prob);
        return mdsd_fail(err, MDSD_ENOMEM, "joint sort: out of memory");
    }
    for (size_t t = 0; t < count; t++)
        ref[t] = (tuple_ref){D->tokens + t * n, n, t};
    qsort(ref, count, sizeof *ref, by_tuple);
    size_t out = 0;
    for (size_t r = 0; r < count; r++) {
        const int *x = D->tokens + ref[r].index * n;
        if (out > 0 && compare_tuples(tokens + (out - 1) * n, x, n) == 0) {
            prob[out - 1] += D->prob[ref[r].index];
            continue;
        }
        memcpy(tokens + out * n, x, n * sizeof *x);
        prob[out++] = D->prob[ref[r].index];
    }
    free(ref);
    free(D->tokens);
    free(D->prob);
    D->tokens = tokens;
    D->prob = prob;
    D->count = out;
    return MDSD_OK;
}

long mdsd_joint_find(const mdsd_joint *D, const int *tuple)
{
    size_t lo = 0, hi = D->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_tuples(D->tokens + mid * D->n, tuple, D->n);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int mdsd_joint_validate(mdsd_joint *D, size_t V, mdsd_err *err)
{
    if (D->count == 0)
        return mdsd_fail(err, MDSD_EINVAL, "custom joint: no tuples");
    for (size_t t = 0; t < D->count; t++) {
        for (size_t j = 0; j < D->n; j++) {
            int x = D->tokens[t * D->n + j];
            if (x < 0 || (size_t)x >= V)
                return mdsd_fail(err, MDSD_EINVAL,
                                 "custom joint: tuple %zu, draft %zu: token %d is outside [0, %zu)",
                                 t, j + 1, x, V);
        }
    }
    return mdsd_probs_validate_hint(D->prob, D->count, "custom joint", "the probabilities of the "
                                    "tuples of a `joint` file sum to 1", err);
}

/* ---- custom joint file ---------------------------------------------------- */

static int parse_joint_line(char *line, const char *path, size_t lineno, mdsd_joint *D,
                            size_t *cap, mdsd_err *err)
{
    double field[65];
    size_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (k == 65)
            return mdsd_fail(err, MDSD_EFORMAT, "%s line %zu: more than 64 tokens", path, lineno);
        char *end;
        field[k] = strtod(tok, &end);
        if (*end != '\0')
            return mdsd_fail(err, MDSD_EFORMAT, "%s line %zu: '%s' is not a number", path, lineno, tok);
        k++;
    }
    if (k == 0)
        return MDSD_OK;
    if (k < 2)
        return mdsd_fail(err, MDSD_EFORMAT, "%s line %zu: need tokens then a probability", path, lineno);
    if (D->n == 0)
        D->n = k - 1;
    if (k - 1 != D->n)
        return mdsd_fail(err, MDSD_EFORMAT, "%s line %zu: %zu tokens, earlier lines have %zu",
                         path, lineno, k - 1, D->n);
    if (D->count == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        int *tokens = realloc(D->tokens, *cap * D->n * sizeof *tokens);
        if (tokens)
            D->tokens = tokens;
        double *prob = realloc(D->prob, *cap * sizeof *prob);
        if (prob)
            D->prob = prob;
        if (!tokens || !prob)
            return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", path);
    }
    for (size_t j = 0; j < D->n; j++) {
        if (field[j] != floor(field[j]) || field[j] < 0 || field[j] > 2147483647.0)
            return mdsd_fail(err, MDSD_EFORMAT, "%s line %zu: token '%g' is not a token id",
                             path, lineno, field[j]);
        D->tokens[D->count * D->n + j] = (int)field[j];
    }
    D->prob[D->count++] = field[D->n];
    return MDSD_OK;
}

int mdsd_joint_read(const char *path, mdsd_joint *out, mdsd_err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot open custom joint '%s': %s", path, strerror(errno));
    char *line = NULL; /* lines of any length */
    size_t lineno = 0, cap = 0, line_cap = 0;
    int rc = MDSD_OK;
    ssize_t len;
    while (rc == MDSD_OK && (len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s line %zu: a NUL byte", path, lineno);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        rc = parse_joint_line(line, path, lineno, out, &cap, err);
    }
    free(line);
    fclose(f);
    if (rc == MDSD_OK && out->count == 0)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: no tuples", path);
    if (rc)
        mdsd_joint_free(out);
    return rc;
}

/* ---- sampling ------------------------------------------------------------ */

/* wor draws by rejection from the alias table of q; after this many
 * rejections in a row (q concentrated on drawn tokens) it falls back to
 * inversion over the remaining tokens. Both give the exact conditional law. */
#define WOR_MAX_REJECTIONS 16

struct mdsd_sampler {
    mdsd_scheme_kind kind;
    size_t n, V;
    gsl_ran_discrete_t **alias; /* [n_alias]: q; multi: one per drafter; custom: over tuples */
    size_t n_alias;
    gsl_ran_discrete_t *rest;   /* greedy: q off the fixed prefix; hub: q off the hub token */
    int fixed[64];              /* greedy: top n-1 tokens; hub: fixed[0] = a */
    double *q;                  /* [V] copy (wor fallback, cps) */
    double *cps_e;              /* [(V+1)*(n+1)]: e_m(q[k..V)) at k*(n+1)+m */
    int *tuples;                /* custom: [count * n] */
};

void mdsd_sampler_free(mdsd_sampler *sm)
{
    if (!sm)
        return;
    for (size_t i = 0; i < sm->n_alias; i++)
        gsl_ran_discrete_free(sm->alias[i]);
    free(sm->alias);
    if (sm->rest)
        gsl_ran_discrete_free(sm->rest);
    free(sm->q);
    free(sm->cps_e);
    free(sm->tuples);
    free(sm);
}

static int build_rest(mdsd_sampler *sm, const double *q, size_t excluded, mdsd_err *err)
{
    double *w = malloc(sm->V * sizeof *w);
    if (!w)
        return mdsd_fail(err, MDSD_ENOMEM, "sampler: out of memory");
    memcpy(w, q, sm->V * sizeof *w);
    for (size_t j = 0; j < excluded; j++)
        w[sm->fixed[j]] = 0.0;
    sm->rest = gsl_ran_discrete_preproc(sm->V, w);
    free(w);
    return sm->rest ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "sampler: alias table failed");
}

static int build_cps_table(mdsd_sampler *sm, mdsd_err *err)
{
    size_t n = sm->n, V = sm->V;
    sm->cps_e = calloc((V + 1) * (n + 1), sizeof *sm->cps_e);
    if (!sm->cps_e)
        return mdsd_fail(err, MDSD_ENOMEM, "cps sampler: out of memory for V = %zu", V);
    double *e = sm->cps_e;
    e[V * (n + 1)] = 1.0;
    for (size_t k = V; k-- > 0;) {
        e[k * (n + 1)] = 1.0;
        for (size_t m = 1; m <= n; m++)
            e[k * (n + 1) + m] = e[(k + 1) * (n + 1) + m] + sm->q[k] * e[(k + 1) * (n + 1) + m - 1];
    }
    return MDSD_OK;
}

static int sampler_build(mdsd_sampler *sm, const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind == MDSD_SCHEME_CUSTOM) {
        const mdsd_joint *C = s->custom;
        sm->tuples = malloc(C->count * C->n * sizeof *sm->tuples);
        if (!sm->tuples)
            return mdsd_fail(err, MDSD_ENOMEM, "sampler: out of memory");
        memcpy(sm->tuples, C->tokens, C->count * C->n * sizeof *sm->tuples);
        sm->alias[0] = gsl_ran_discrete_preproc(C->count, C->prob);
        sm->n_alias = 1;
        return sm->alias[0] ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "sampler: alias table failed");
    }
    for (size_t i = 0; i < sm->n_alias; i++)
        if (!(sm->alias[i] = gsl_ran_discrete_preproc(s->V, s->q + i * s->V)))
            return mdsd_fail(err, MDSD_ENOMEM, "sampler: alias table failed");
    if (s->kind == MDSD_SCHEME_WOR || s->kind == MDSD_SCHEME_CPS) {
        if (!(sm->q = malloc(s->V * sizeof *sm->q)))
            return mdsd_fail(err, MDSD_ENOMEM, "sampler: out of memory");
        memcpy(sm->q, s->q, s->V * sizeof *sm->q);
    }
    if (s->kind == MDSD_SCHEME_CPS)
        return build_cps_table(sm, err);
    if (s->kind == MDSD_SCHEME_GREEDY) {
        mdsd_top_indices(s->q, s->V, s->n - 1, sm->fixed);
        return build_rest(sm, s->q, s->n - 1, err);
    }
    if (s->kind == MDSD_SCHEME_HUB) {
        sm->fixed[0] = (int)mdsd_argmax(s->q, s->V);
        return build_rest(sm, s->q, 1, err);
    }
    return MDSD_OK;
}

mdsd_sampler *mdsd_sampler_alloc(const mdsd_scheme *s, mdsd_err *err)
{
    if (mdsd_scheme_check(s, err))
        return NULL;
    if (s->n > 64) {
        mdsd_fail(err, MDSD_ETOOBIG, "sampler: n = %zu drafts is above the limit of 64", s->n);
        return NULL;
    }
    mdsd_sampler *sm = calloc(1, sizeof *sm);
    if (!sm) {
        mdsd_fail(err, MDSD_ENOMEM, "sampler: out of memory");
        return NULL;
    }
    sm->kind = s->kind;
    sm->n = s->n;
    sm->V = s->V;
    sm->n_alias = s->kind == MDSD_SCHEME_MULTI ? s->n : 1;
    sm->alias = calloc(sm->n_alias, sizeof *sm->alias); /* NULL entries are freed safely */
    if (!sm->alias) {
        mdsd_fail(err, MDSD_ENOMEM, "sampler: out of memory");
        sm->n_alias = 0;
        mdsd_sampler_free(sm);
        return NULL;
    }
    if (sampler_build(sm, s, err)) {
        mdsd_sampler_free(sm);
        return NULL;
    }
    return sm;
}

static int drawn_before(const int *tuple, size_t j, int token)
{
    for (size_t l = 0; l < j; l++)
        if (tuple[l] == token)
            return 1;
    return 0;
}

/* Inversion over the tokens not yet drawn. In long double: when the mass
 * left is subnormal (q nearly one-hot, its top token drawn), u * remaining
 * in double keeps a bit or two (q = (1, 5e-324, 5e-324): the second draft
 * was token 2 three times in four); long double holds it as a normal number. */
static int wor_fallback(const mdsd_sampler *sm, gsl_rng *rng, const int *tuple, size_t j)
{
    long double remaining = 0.0L;
    for (size_t v = 0; v < sm->V; v++)
        if (!drawn_before(tuple, j, (int)v))
            remaining += sm->q[v];
    long double u = (long double)gsl_rng_uniform(rng) * remaining, acc = 0.0L;
    int last = -1;
    for (size_t v = 0; v < sm->V; v++) {
        if (sm->q[v] <= 0.0 || drawn_before(tuple, j, (int)v))
            continue;
        last = (int)v;
        acc += sm->q[v];
        if (u < acc)
            return (int)v;
    }
    return last; /* u landed past the rounded total */
}

static void draw_wor(const mdsd_sampler *sm, gsl_rng *rng, int *tuple)
{
    for (size_t j = 0; j < sm->n; j++) {
        int x = -1;
        for (int tries = 0; tries < WOR_MAX_REJECTIONS && x < 0; tries++) {
            int t = (int)gsl_ran_discrete(rng, sm->alias[0]);
            if (!drawn_before(tuple, j, t))
                x = t;
        }
        tuple[j] = x >= 0 ? x : wor_fallback(sm, rng, tuple, j);
    }
}

static void draw_cps(const mdsd_sampler *sm, gsl_rng *rng, int *tuple)
{
    size_t n = sm->n, m = n, j = 0;
    const double *e = sm->cps_e;
    for (size_t k = 0; k < sm->V && m > 0; k++) {
        if (sm->q[k] <= 0.0)
            continue;
        /* forced when the suffix cannot fill the slots without k (guards rounding) */
        double skip_weight = e[(k + 1) * (n + 1) + m];
        double take = skip_weight <= 0.0 ? 1.0
                                         : sm->q[k] * e[(k + 1) * (n + 1) + m - 1] / e[k * (n + 1) + m];
        if (gsl_rng_uniform(rng) < take) {
            tuple[j++] = (int)k;
            m--;
        }
    }
    gsl_ran_shuffle(rng, tuple, n, sizeof *tuple);
}

void mdsd_sampler_draw(const mdsd_sampler *sm, gsl_rng *rng, int *tuple)
{
    switch (sm->kind) {
    case MDSD_SCHEME_IID:
        for (size_t j = 0; j < sm->n; j++)
            tuple[j] = (int)gsl_ran_discrete(rng, sm->alias[0]);
        break;
    case MDSD_SCHEME_MULTI:
        for (size_t j = 0; j < sm->n; j++)
            tuple[j] = (int)gsl_ran_discrete(rng, sm->alias[j]);
        break;
    case MDSD_SCHEME_WOR:
        draw_wor(sm, rng, tuple);
        break;
    case MDSD_SCHEME_CPS:
        draw_cps(sm, rng, tuple);
        break;
    case MDSD_SCHEME_GREEDY:
        memcpy(tuple, sm->fixed, (sm->n - 1) * sizeof *tuple);
        tuple[sm->n - 1] = (int)gsl_ran_discrete(rng, sm->rest);
        break;
    case MDSD_SCHEME_HUB: {
        int a = sm->fixed[0], x = (int)gsl_ran_discrete(rng, sm->alias[0]);
        tuple[0] = x;
        tuple[1] = a;
        if (x == a)
            tuple[1] = (int)gsl_ran_discrete(rng, sm->rest);
        break;
    }
    case MDSD_SCHEME_CUSTOM: {
        size_t t = gsl_ran_discrete(rng, sm->alias[0]);
        memcpy(tuple, sm->tuples + t * sm->n, sm->n * sizeof *tuple);
        break;
    }
    default:
        break;
    }
}
