/* glpk_solve.c - GLPK's simplex, then its exact simplex from the same basis
 * (glpk_solve.h). */
#include "glpk_solve.h"

#include <limits.h>

int mdsd_glpk_solve(glp_prob *P, glp_smcp *parm, mdsd_glpk_exact exact, int exact_ms,
                    const char **stage)
{
    int old_out = glp_term_out(GLP_OFF);
    *stage = "glp_simplex";
    int ret = glp_simplex(P, parm);
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
