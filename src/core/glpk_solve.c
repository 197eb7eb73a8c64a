/* glpk_solve.c - GLPK's simplex, then its exact simplex from the same basis
 * (glpk_solve.h). */
#include "glpk_solve.h"

#include <limits.h>

/* GLPK's primal simplex (Harris's ratio test, projected steepest edge) can
 * cycle on degenerate LPs and then never returns: the importance-weight LP of
 * stage 2 at row 828 of the n-gram pair's T = 0.7 dump (drafter kn3, s = 50,
 * 50 rows, 1,275 columns) ran for hours, where such LPs take at most 800
 * iterations (12,006 of them on that dump). A run past this many iterations
 * per row and column is taken to cycle (glpk_solve.h). */
#define CYCLE_ITERATIONS_PER_DIMENSION 20

int mdsd_glpk_cycle_limit(glp_prob *P)
{
    long dims = (long)glp_get_num_rows(P) + glp_get_num_cols(P);
    long limit = CYCLE_ITERATIONS_PER_DIMENSION * dims + 1000;
    return limit < INT_MAX ? (int)limit : INT_MAX;
}

/* glp_simplex under the cycling guard: a run that reaches the limit is rerun
 * from the standard basis with the textbook ratio test, then with the dual
 * simplex; the caller's own it_lim, if set, is left alone. */
static int simplex_guarded(glp_prob *P, glp_smcp *parm)
{
    if (parm->it_lim != INT_MAX)
        return glp_simplex(P, parm);
    parm->it_lim = mdsd_glpk_cycle_limit(P);
    int ret = glp_simplex(P, parm);
    static const struct {
        int meth, r_test;
    } rerun[] = {{GLP_PRIMAL, GLP_RT_STD}, {GLP_DUALP, GLP_RT_HAR}};
    for (size_t k = 0; ret == GLP_EITLIM && k < sizeof rerun / sizeof *rerun; k++) {
        glp_smcp alt = *parm;
        alt.meth = rerun[k].meth;
        alt.r_test = rerun[k].r_test;
        glp_std_basis(P);
        ret = glp_simplex(P, &alt);
    }
    parm->it_lim = INT_MAX;
    return ret;
}

int mdsd_glpk_solve(glp_prob *P, glp_smcp *parm, mdsd_glpk_exact exact, int exact_ms,
                    const char **stage)
{
    int old_out = glp_term_out(GLP_OFF);
    *stage = "glp_simplex";
    int ret = simplex_guarded(P, parm);
    if (ret == 0 && (exact == MDSD_GLPK_EXACT_AFTER_SIMPLEX ||
                     (exact == MDSD_GLPK_EXACT_AFTER_OPTIMUM && glp_get_status(P) == GLP_OPT))) {
        *stage = "glp_exact";
        parm->tm_lim = exact_ms > 0 ? exact_ms : INT_MAX;
        ret = glp_exact(P, parm);
        parm->tm_lim = INT_MAX;
    }
    glp_term_out(old_out);
    return ret;
}

const char *mdsd_glpk_ret_name(int ret)
{
    switch (ret) {
    case GLP_EBADB: return "invalid initial basis";
    case GLP_ESING: return "singular basis matrix";
    case GLP_ECOND: return "ill-conditioned basis matrix";
    case GLP_EBOUND: return "invalid bounds";
    case GLP_EFAIL: return "solver failure";
    case GLP_EITLIM: return "iteration limit";
    case GLP_ETMLIM: return "time limit";
    case GLP_ENOPFS: return "no primal feasible solution";
    case GLP_ENODFS: return "no dual feasible solution";
    default: return "error";
    }
}

const char *mdsd_glpk_status_name(int status)
{
    switch (status) {
    case GLP_OPT: return "optimal";
    case GLP_FEAS: return "feasible, not proven optimal";
    case GLP_INFEAS: return "infeasible";
    case GLP_NOFEAS: return "no feasible solution";
    case GLP_UNBND: return "unbounded";
    default: return "undefined";
    }
}
