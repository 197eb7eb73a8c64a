/* verify_common.h - small helpers shared by the verify_<name>.c files
 * (internal to the library: residual distributions, alias tables, the
 * per-verifier scheme checks). Not part of the public API. */
#ifndef MDSD_VERIFY_COMMON_H
#define MDSD_VERIFY_COMMON_H

#include <stddef.h>

#include <gsl/gsl_randist.h>

#include "err.h"
#include "scheme.h"

/* out = norm((p - q)+) over [0, V); returns the unnormalised mass
 * sum (p - q)+ (compensated). When that mass is 0 the residual is never
 * sampled, and out is set to a copy of p so that it stays a distribution. */
double mdsd_vc_residual(const double *p, const double *q, size_t V, double *out);

/* sum_x min(p(x), q(x)), compensated. */
double mdsd_vc_overlap(const double *p, const double *q, size_t V);
/* sum_x min(p(x), scale q(x)), compensated (q need not be normalised). */
double mdsd_vc_overlap_scaled(const double *p, const double *q, size_t V, double scale);

/* x /= mass over [0, V) (mass > 0), as x * (1/mass) where that is finite. */
void mdsd_vc_normalise(double *x, size_t V, double mass);

/* Walker alias table of the non-negative weights w[0..V) (need not be
 * normalised). If they sum to 0, of `fallback` instead (a distribution that
 * is never actually sampled, but keeps the table valid). */
gsl_ran_discrete_t *mdsd_vc_alias(const double *w, const double *fallback, size_t V,
                                  const char *who, mdsd_err *err);

/* Lowest j with drafts[j] == y, or -1. */
int mdsd_vc_first_match(const int *drafts, size_t n, int y);

/* Common refusal for a verifier used on the wrong scheme: "verifier V needs
 * WANTED; got the S scheme with n = N". */
int mdsd_vc_wrong_scheme(const char *verifier, const mdsd_scheme *s, const char *wanted,
                         mdsd_err *err);

/* P(u * den < num) for u uniform on [0, 1): the pass probability of the
 * verifiers' acceptance tests `u * den < num`. */
double mdsd_vc_pass(double num, double den);

/* For the law ops: py[j] = sum of step[k] over the k with drafts[k] ==
 * drafts[j] (n <= MDSD_LAW_MAX_DRAFTS), so that equal drafts get their
 * token's whole probability. */
void mdsd_vc_law_collect(const int *drafts, size_t n, const double *step, double *py);

/* gsl_ran_discrete_pdf, 0 for a token outside the table. O(table size). */
double mdsd_vc_alias_pdf(const gsl_ran_discrete_t *g, int token);

/* malloc that reports MDSD_ENOMEM naming `who`; NULL on failure. */
void *mdsd_vc_malloc(size_t bytes, const char *who, mdsd_err *err);

#endif
