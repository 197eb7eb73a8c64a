#include "verify_common.h"

#include <stdlib.h>
#include <string.h>

#include "dist.h"

double mdsd_vc_residual(const double *p, const double *q, size_t V, double *out)
{
    for (size_t x = 0; x < V; x++)
        out[x] = p[x] > q[x] ? p[x] - q[x] : 0.0;
    double mass = mdsd_sum(out, V);
    if (mass > 0.0) {
        for (size_t x = 0; x < V; x++)
            out[x] /= mass;
    } else {
        memcpy(out, p, V * sizeof *out);
    }
    return mass;
}

double mdsd_vc_overlap(const double *p, const double *q, size_t V)
{
    double s = 0.0, c = 0.0;
    for (size_t x = 0; x < V; x++) {
        double y = (p[x] < q[x] ? p[x] : q[x]) - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

gsl_ran_discrete_t *mdsd_vc_alias(const double *w, const double *fallback, size_t V,
                                  const char *who, mdsd_err *err)
{
    double total = 0.0;
    for (size_t x = 0; x < V; x++)
        total += w[x];
    gsl_ran_discrete_t *t = gsl_ran_discrete_preproc(V, total > 0.0 ? w : fallback);
    if (!t)
        mdsd_fail(err, MDSD_ENOMEM, "%s: alias table of %zu tokens failed", who, V);
    return t;
}

int mdsd_vc_first_match(const int *drafts, size_t n, int y)
{
    for (size_t j = 0; j < n; j++)
        if (drafts[j] == y)
            return (int)j;
    return -1;
}

int mdsd_vc_wrong_scheme(const char *verifier, const mdsd_scheme *s, const char *wanted,
                         mdsd_err *err)
{
    return mdsd_fail(err, MDSD_EUNSUPPORTED,
                     "verifier %s needs %s; got the %s scheme with n = %zu", verifier,
                     wanted, mdsd_scheme_name(s->kind), s->n);
}

void *mdsd_vc_malloc(size_t bytes, const char *who, mdsd_err *err)
{
    void *m = malloc(bytes ? bytes : 1);
    if (!m)
        mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory (%zu bytes)", who, bytes);
    return m;
}
