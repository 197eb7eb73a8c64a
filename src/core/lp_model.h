/* lp_model.h - the GLPK models of core/lp.c for its exporter
 * (io/lp_export.c): the checked, rescaled instance and the problems built. */
#ifndef MDSD_LP_MODEL_H
#define MDSD_LP_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include <glpk.h>

#include "lp.h"

/* Checks p[V] and D; the scales that bring their masses to sum 1. */
int mdsd_lp_check_input(const double *p, size_t V, const mdsd_joint *D, double *p_scale,
                        double *d_scale, mdsd_err *err);
/* The full LP of (p, D) into P (named: rows and columns named, for the writers). */
void mdsd_lp_build_full(glp_prob *P, const double *p, double p_scale, size_t V,
                        const mdsd_joint *D, double d_scale, bool named);
/* The reduced LP over the token sets S; *rows: its rows. */
int mdsd_lp_build_reduced(glp_prob *P, const double *p, double p_scale, size_t V,
                          const mdsd_set_law *S, bool named, size_t *rows, mdsd_err *err);

#endif
