#include "verify_common.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "simd.h"

/* (a + |a|) / 2 is exactly max(a, 0) (2a or 0) and needs no branch. */
MDSD_SIMD_CLONES static void positive_difference(const double *p, const double *q, size_t V,
                                                 double *out)
{
#pragma omp simd
    for (size_t x = 0; x < V; x++) {
        double d = p[x] - q[x];
        out[x] = 0.5 * (d + fabs(d));
    }
}

MDSD_SIMD_CLONES static void scale(double *x, size_t V, double by)
{
#pragma omp simd
    for (size_t i = 0; i < V; i++)
        x[i] *= by;
}

MDSD_SIMD_CLONES static void divide(double *x, size_t V, double by)
{
#pragma omp simd
    for (size_t i = 0; i < V; i++)
        x[i] /= by;
}

void mdsd_vc_normalise(double *x, size_t V, double mass)
{
    if (mass >= DBL_MIN) /* x * (1/mass) is x / mass to within an ulp, and cheaper */
        scale(x, V, 1.0 / mass);
    else
        divide(x, V, mass); /* 1/mass would overflow */
}

double mdsd_vc_residual(const double *p, const double *q, size_t V, double *out)
{
    positive_difference(p, q, V, out);
    double mass = mdsd_sum(out, V);
    if (mass > 0.0)
        mdsd_vc_normalise(out, V, mass);
    else
        memcpy(out, p, V * sizeof *out);
    return mass;
}

/* sum_x min(p(x), scale q(x)) by Kahan's sum in MDSD_LANES lanes (they
 * vectorise), the lanes then added with compensation. */
MDSD_SIMD_CLONES double mdsd_vc_overlap_scaled(const double *p, const double *q, size_t V,
                                               double scale)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0};
    size_t x = 0;
    for (; x + MDSD_LANES <= V; x += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double a = p[x + j], b = q[x + j] * scale;
            MDSD_KAHAN_ADD(s[j], c[j], (a < b ? a : b));
        }
    }
    for (size_t j = 0; x < V; x++, j++) {
        double a = p[x], b = q[x] * scale;
        MDSD_KAHAN_ADD(s[j], c[j], (a < b ? a : b));
    }
    double total = 0.0, comp = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(total, comp, s[j]);
        comp -= c[j];
    }
    return total + comp;
}

double mdsd_vc_overlap(const double *p, const double *q, size_t V)
{
    return mdsd_vc_overlap_scaled(p, q, V, 1.0); /* q * 1 is q exactly */
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

double mdsd_vc_pass(double num, double den)
{
    if (!(num > 0.0))
        return 0.0;
    if (!(den > num))
        return 1.0;
    return num / den;
}

void mdsd_vc_law_collect(const int *drafts, size_t n, const double *step, double *py)
{
    for (size_t j = 0; j < n; j++) {
        double s = 0.0;
        for (size_t k = 0; k < n; k++)
            s += drafts[k] == drafts[j] ? step[k] : 0.0;
        py[j] = s;
    }
}

double mdsd_vc_alias_pdf(const gsl_ran_discrete_t *g, int token)
{
    if (!g || token < 0 || (size_t)token >= g->K)
        return 0.0;
    return gsl_ran_discrete_pdf((size_t)token, g);
}
