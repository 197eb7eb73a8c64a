/* mdsd/lp.h - the optimal-transport LPs behind alpha* (MATH.md sections 2.1-2.2),
 * for solving with GLPK (mdsd_alpha with MDSD_ALPHA_LP_FULL / _LP_REDUCED) or
 * exporting to another solver.
 *
 * Full LP (SpecTr eq. 4): pi(y, x) >= 0 for every token y and tuple x in
 * supp D, with marginals p and D; maximise the mass on y in x.
 * Reduced LP (SpecHub 3.2, Hu eq. 9): accepting entries only, tuples
 * aggregated by their token set. Same optimum. */
#ifndef MDSD_PUBLIC_LP_H
#define MDSD_PUBLIC_LP_H

#include <mdsd/scheme.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the full (reduced = 0) or reduced LP of (p, D(s)) to path,
 * atomically, in the format the name ends with: .dat (MathProg data for
 * lp/otm_full.mod or lp/otm_reduced.mod), .lp (CPLEX LP), .mps (free MPS). */
MDSD_API mdsd_status mdsd_lp_export(const double *p, const mdsd_scheme *s, int reduced, const char *path,
                   mdsd_err *err);

/* Structural variables of the full LP, V * |supp D| (enumerates D). */
MDSD_API mdsd_status mdsd_lp_full_size(const mdsd_scheme *s, size_t *vars, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
