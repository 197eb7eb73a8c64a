/* api.h - shared helpers of the public layer (the files in src/api): validated copies
 * of a caller's (p, scheme), so that the internal kernels, which expect
 * validated input, never see the caller's raw arrays. Private. */
#ifndef MDSD_API_INTERNAL_H
#define MDSD_API_INTERNAL_H

#include <gsl/gsl_rng.h>

#include <mdsd/batch.h>

#include "err.h"
#include "scheme.h"

/* The public mdsd_rng: a GSL taus2 stream. */
struct mdsd_rng {
    gsl_rng *r;
};

/* A scheme whose q rows (or custom joint) are validated, renormalised copies. */
typedef struct {
    mdsd_scheme s;
    double *q;
    mdsd_joint custom;
} api_scheme;

/* Checks s (non-NULL, kind, n, V) and copies it with q validated. */
int api_scheme_copy(const mdsd_scheme *s, api_scheme *out, mdsd_err *err);
void api_scheme_clear(api_scheme *a);
/* A validated copy of p[0..V) (NULL p is an error naming `what`). */
int api_probs_copy(const double *p, size_t V, const char *what, double **out, mdsd_err *err);
/* The checks of mdsd_table_run and mdsd_table_run_recorded before the job: options
 * given, their size and verifier_opts' (mdsd/common.h), top_p in (0, 1]. */
int api_table_opts_check(const mdsd_table_opts *t, mdsd_err *err);
/* mdsd_table_run, mdsd_table_run_recorded and mdsd_table_run_with: the job, its
 * rendered tables and per-position file, as run says (checked: runopts.h). */
int api_table_run(const mdsd_table_opts *t, const mdsd_run_opts *run, mdsd_err *err);

#endif
