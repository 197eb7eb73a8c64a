/* glpk_solve.h - the one GLPK solve sequence of the library's LPs (lp.c,
 * iws.c, block/optimal.c): the floating-point simplex, then GLPK's exact
 * (rational) simplex from its basis, with GLPK's terminal output off. */
#ifndef MDSD_GLPK_SOLVE_H
#define MDSD_GLPK_SOLVE_H

#include <glpk.h>

typedef enum {
    MDSD_GLPK_FLOAT,               /* the simplex alone */
    MDSD_GLPK_EXACT_AFTER_OPTIMUM, /* glp_exact when the simplex ended optimal */
    MDSD_GLPK_EXACT_AFTER_SIMPLEX  /* glp_exact when the simplex returned 0, whatever its status
                                      (a badly scaled problem it could not settle) */
} mdsd_glpk_exact;

/* Runs the sequence with the caller's simplex settings parm (msg_lev,
 * tolerances, method); glp_exact runs under a time limit of exact_ms
 * milliseconds (0 = none), and parm->tm_lim is unlimited again afterwards.
 * Unless the caller sets parm->it_lim, the simplex is guarded against
 * cycling: past 20 iterations per row and column (plus 1,000) it is rerun
 * from the standard basis with the textbook ratio test, then with the dual
 * simplex; GLP_EITLIM if all three reach the limit. An LP that never reaches
 * the limit is solved exactly as without the guard.
 * Returns GLPK's code of the last stage run, named in *stage ("glp_simplex"
 * or "glp_exact"). */
int mdsd_glpk_solve(glp_prob *P, glp_smcp *parm, mdsd_glpk_exact exact, int exact_ms,
                    const char **stage);

/* The cycling guard's iteration limit for P: 20 per row and column plus
 * 1,000 (capped at INT_MAX). */
int mdsd_glpk_cycle_limit(glp_prob *P);

/* GLPK's return codes and solution statuses in words, for messages. */
const char *mdsd_glpk_ret_name(int ret);
const char *mdsd_glpk_status_name(int status);

#endif
