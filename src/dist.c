#include "dist.h"

#include <math.h>
#include <stdlib.h>

double mdsd_sum(const double *x, size_t n)
{
    double s = 0.0, c = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = s + x[i];
        c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
        s = t;
    }
    return s + c;
}

size_t mdsd_argmax(const double *x, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

size_t mdsd_support_size(const double *p, size_t V)
{
    size_t k = 0;
    for (size_t i = 0; i < V; i++)
        k += p[i] > 0.0;
    return k;
}

int mdsd_probs_validate(double *p, size_t V, const char *what, mdsd_err *err)
{
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty distribution", what);
    for (size_t i = 0; i < V; i++) {
        if (isnan(p[i]))
            return mdsd_fail(err, MDSD_EINVAL, "%s: probability at index %zu is NaN", what, i);
        if (isinf(p[i]))
            return mdsd_fail(err, MDSD_EINVAL, "%s: probability at index %zu is infinite", what, i);
        if (p[i] < 0.0)
            return mdsd_fail(err, MDSD_EINVAL, "%s: probability at index %zu is negative (%g)",
                             what, i, p[i]);
    }
    double s = mdsd_sum(p, V);
    if (fabs(s - 1.0) > MDSD_PROB_SUM_TOL)
        return mdsd_fail(err, MDSD_EINVAL,
                         "%s: probabilities sum to %.9g, not 1 (tolerance %g); "
                         "pass --logits if these are logits", what, s, MDSD_PROB_SUM_TOL);
    for (size_t i = 0; i < V; i++)
        p[i] /= s;
    return MDSD_OK;
}

/* One body for double and float logits: the element type is the only change. */
#define SOFTMAX_BODY(logits)                                                          \
    if (V == 0)                                                                       \
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty logit vector", what);           \
    if (!(T >= 0.0) || isinf(T))                                                      \
        return mdsd_fail(err, MDSD_EINVAL, "%s: temperature %g is not a finite value >= 0", \
                         what, T);                                                    \
    size_t best = V;                                                                  \
    for (size_t i = 0; i < V; i++) {                                                  \
        double l = (double)logits[i];                                                 \
        if (isnan(l))                                                                 \
            return mdsd_fail(err, MDSD_EINVAL, "%s: logit at index %zu is NaN", what, i); \
        if (isinf(l) && l > 0)                                                        \
            return mdsd_fail(err, MDSD_EINVAL, "%s: logit at index %zu is +inf", what, i); \
        if (l != -INFINITY && (best == V || l > (double)logits[best]))                \
            best = i;                                                                 \
    }                                                                                 \
    if (best == V)                                                                    \
        return mdsd_fail(err, MDSD_EINVAL, "%s: every logit is -inf", what);          \
    if (T == 0.0) {                                                                   \
        for (size_t i = 0; i < V; i++)                                                \
            p[i] = i == best;                                                         \
        return MDSD_OK;                                                               \
    }                                                                                 \
    double top = (double)logits[best], inv_t = 1.0 / T, s = 0.0;                      \
    for (size_t i = 0; i < V; i++) {                                                  \
        p[i] = exp(((double)logits[i] - top) * inv_t);                                \
        s += p[i];                                                                    \
    }                                                                                 \
    double inv_s = 1.0 / s;                                                           \
    for (size_t i = 0; i < V; i++)                                                    \
        p[i] *= inv_s;                                                                \
    return MDSD_OK;

int mdsd_softmax(const double *logits, size_t V, double T, double *p,
                 const char *what, mdsd_err *err)
{
    SOFTMAX_BODY(logits)
}

int mdsd_softmax_float(const float *logits, size_t V, double T, double *p,
                       const char *what, mdsd_err *err)
{
    SOFTMAX_BODY(logits)
}

typedef struct {
    double prob;
    size_t token;
} ranked_token;

/* Decreasing probability, ties to the lower index. */
static int by_prob_desc(const void *a, const void *b)
{
    const ranked_token *x = a, *y = b;
    if (x->prob != y->prob)
        return x->prob > y->prob ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

int mdsd_truncate(double *p, size_t V, size_t top_k, double top_p, mdsd_err *err)
{
    if (!(top_p > 0.0 && top_p <= 1.0))
        return mdsd_fail(err, MDSD_EINVAL, "top-p %g is not in (0, 1]", top_p);
    if (top_k == 0 || top_k > V)
        top_k = V;
    if (top_k == V && top_p >= 1.0)
        return MDSD_OK;
    ranked_token *order = malloc(V * sizeof *order);
    if (!order)
        return mdsd_fail(err, MDSD_ENOMEM, "top-k/top-p: out of memory for V = %zu", V);
    for (size_t i = 0; i < V; i++)
        order[i] = (ranked_token){p[i], i};
    qsort(order, V, sizeof *order, by_prob_desc);
    size_t keep = 0;
    double mass = 0.0;
    while (keep < top_k && (keep == 0 || mass < top_p) && order[keep].prob > 0.0)
        mass += order[keep++].prob;
    for (size_t r = keep; r < V; r++)
        p[order[r].token] = 0.0;
    free(order);
    for (size_t i = 0; i < V; i++)
        p[i] /= mass;
    return MDSD_OK;
}

void mdsd_top_indices(const double *x, size_t n, size_t k, int *top)
{
    for (size_t r = 0; r < k; r++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (size_t s = 0; s < r && !taken; s++)
                taken = top[s] == (int)i;
            if (!taken && (best == n || x[i] > x[best]))
                best = i;
        }
        top[r] = (int)best;
    }
}
