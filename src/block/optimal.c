/* optimal.c - the largest block efficiency of any token-level verifier
 * (block.h), by backward induction.
 *
 * A token-level verifier at a node sees only the drafts' tokens there, and
 * the subtrees below are drawn independently of its choice; so the best
 * verifier maximises, node by node, E[reward(y, x)] over couplings pi of
 * y ~ p(.|node) and the node's draft tuple x ~ D, with
 *   reward(y, x) = [y in x] (1 + A(child y, drafts of x equal to y)),
 * A = the optimal expected accepted tokens of that child. As in the reduced
 * LP of lp.h only accepting entries s(y, x), y in x, are variables, with
 * sum_x s(y, x) <= p(y) and sum_y s(y, x) <= D(x): rewards are non-negative,
 * so any such s completes to a coupling of no smaller value, and every
 * coupling restricts to one. Solved by GLPK's simplex, then its rational
 * simplex from that basis.
 *
 * otm-tiebreak (MATH.md §5.4): the same backward induction, each node first
 * maximising the acceptance sum_x,y s(y, x) (alpha*), then, over that LP's
 * optimal face, the reward above with its own child values. The face is
 * fixed exactly by complementary slackness with the rational dual of the
 * first solve: a column of non-zero reduced cost is fixed at 0, a row of
 * non-zero dual at its bound (every optimal solution satisfies both, and
 * every feasible point that does is optimal). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "block_impl.h"
#include "glpk_solve.h"

typedef mdsd_bk_memo opt_ctx; /* memo: reach vectors of the optimal plans */

static int node_of(opt_ctx *x, size_t d, int tok, size_t m, int tiebreak, const double **out,
                   mdsd_err *err);

/* One entry s(y, x) of the LP: tuple t, its first draft index j holding y. */
typedef struct {
    size_t t, j;
    double reward;
    const double *child; /* reach vector of the child (NULL at the last depth) */
} entry;

/* Simplex, then the rational simplex from its basis; non-zero on failure. */
static int simplex(glp_prob *P)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    const char *stage;
    int ret = mdsd_glpk_solve(P, &parm, MDSD_GLPK_EXACT_AFTER_OPTIMUM, 0, &stage);
    return ret != 0 ? ret : glp_get_status(P) != GLP_OPT;
}

/* The tie-break's second stage: the first stage's optimal face, then the
 * rewards as objective. */
static int second_stage(glp_prob *P, const double *reward, size_t ne)
{
    for (int i = 1; i <= glp_get_num_rows(P); i++)
        if (glp_get_row_dual(P, i) != 0.0)
            glp_set_row_bnds(P, i, GLP_FX, glp_get_row_ub(P, i), glp_get_row_ub(P, i));
    for (size_t j = 0; j < ne; j++) {
        if (glp_get_col_dual(P, (int)j + 1) != 0.0)
            glp_set_col_bnds(P, (int)j + 1, GLP_FX, 0.0, 0.0);
        glp_set_obj_coef(P, (int)j + 1, reward[j]);
    }
    return simplex(P);
}

static int solve_node(opt_ctx *x, size_t d, int tok, size_t n, const mdsd_joint *D, int tiebreak,
                      double *R, mdsd_err *err)
{
    mdsd_bk *c = x->c;
    size_t V = c->m->V, left = c->pol.depth - d;
    const double *p = c->m->p + (size_t)tok * V;
    entry *e = malloc(D->count * n * sizeof *e);
    if (!e)
        return mdsd_fail(err, MDSD_ENOMEM, "block optimal: out of memory");
    size_t ne = 0;
    int rc = MDSD_OK;
    for (size_t t = 0; t < D->count && rc == MDSD_OK; t++) {
        const int *tu = D->tokens + t * n;
        for (size_t j = 0; j < n; j++) {
            size_t count = 1, first = 1;
            for (size_t k = 0; k < n; k++)
                if (k != j && tu[k] == tu[j]) {
                    count++;
                    first &= k > j;
                }
            if (!first || !(p[tu[j]] > 0.0))
                continue;
            entry en = {t, j, 1.0, NULL};
            if (left > 1) {
                if ((rc = node_of(x, d + 1, tu[j], count, tiebreak, &en.child, err)) != MDSD_OK)
                    break;
                for (size_t k = 0; k + 1 < left; k++)
                    en.reward += en.child[k];
            }
            e[ne++] = en;
        }
    }
    if (rc != MDSD_OK || ne == 0) {
        free(e);
        return rc; /* no acceptable entry: R stays 0 */
    }
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MAX);
    glp_add_rows(P, (int)(V + D->count));
    for (size_t y = 0; y < V; y++)
        glp_set_row_bnds(P, (int)y + 1, GLP_UP, 0.0, p[y]);
    for (size_t t = 0; t < D->count; t++)
        glp_set_row_bnds(P, (int)(V + t) + 1, GLP_UP, 0.0, D->prob[t]);
    glp_add_cols(P, (int)ne);
    for (size_t i = 0; i < ne; i++) {
        int col = (int)i + 1, y = D->tokens[e[i].t * n + e[i].j];
        int ind[3] = {0, y + 1, (int)(V + e[i].t) + 1};
        double val[3] = {0, 1.0, 1.0};
        glp_set_col_bnds(P, col, GLP_LO, 0.0, 0.0);
        glp_set_obj_coef(P, col, tiebreak ? 1.0 : e[i].reward);
        glp_set_mat_col(P, col, 2, ind, val);
    }
    int ret = simplex(P);
    double *reward = tiebreak && ret == 0 ? malloc(ne * sizeof *reward) : NULL;
    for (size_t i = 0; reward && i < ne; i++)
        reward[i] = e[i].reward;
    if (tiebreak && ret == 0)
        ret = reward ? second_stage(P, reward, ne) : -1;
    free(reward);
    if (ret != 0) {
        rc = mdsd_fail(err, MDSD_ESOLVER, "block optimal: GLPK failed on the node after token "
                       "%d at depth %zu (return %d, status %d)", tok, d, ret, glp_get_status(P));
    } else {
        for (size_t i = 0; i < ne; i++) {
            double s = glp_get_col_prim(P, (int)i + 1);
            if (!(s > 0.0))
                continue;
            R[0] += s;
            for (size_t k = 1; k < left; k++)
                R[k] += s * e[i].child[k - 1];
        }
    }
    glp_delete_prob(P);
    free(e);
    return rc;
}

static int node_of(opt_ctx *x, size_t d, int tok, size_t m, int tiebreak, const double **out,
                   mdsd_err *err)
{
    mdsd_bk *c = x->c;
    size_t V = c->m->V;
    size_t key = ((size_t)d * V + (size_t)tok) * (c->nmax + 1) +
                 (c->pol.kind == MDSD_POLICY_SEQ ? m : 0);
    if (x->memo[key]) {
        *out = x->memo[key];
        return MDSD_OK;
    }
    size_t n = mdsd_bk_drafts_at(c, d, m);
    double *R = calloc(c->pol.depth - d, sizeof *R);
    if (!R)
        return mdsd_fail(err, MDSD_ENOMEM, "block optimal: out of memory");
    mdsd_scheme s;
    mdsd_bk_scheme(c, tok, n, &s);
    mdsd_joint D = {0};
    mdsd_err e;
    int rc = mdsd_scheme_check(&s, &e);
    if (rc != MDSD_OK)
        rc = mdsd_fail(err, rc, "block optimal: after token %d (%zu drafts): %s", tok, n, e.msg);
    if (rc == MDSD_OK)
        rc = mdsd_scheme_joint(&s, c->o.vopts.max_tuples ? c->o.vopts.max_tuples
                                                         : MDSD_JOINT_MAX_TUPLES, &D, err);
    if (rc == MDSD_OK)
        rc = solve_node(x, d, tok, n, &D, tiebreak, R, err);
    mdsd_joint_free(&D);
    if (rc != MDSD_OK) {
        free(R);
        return rc;
    }
    x->memo[key] = R;
    *out = R;
    return MDSD_OK;
}

static int opt_node(opt_ctx *x, size_t d, int tok, size_t m, const double **out, mdsd_err *err)
{
    return node_of(x, d, tok, m, 0, out, err);
}

static int tiebreak_node(opt_ctx *x, size_t d, int tok, size_t m, const double **out,
                         mdsd_err *err)
{
    return node_of(x, d, tok, m, 1, out, err);
}

int mdsd_block_optimal_token(const mdsd_markov *m, const mdsd_policy *pol,
                             const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    return mdsd_bk_solve(m, pol, MDSD_VERIFIER_OTM, o, opt_node, res, err);
}

int mdsd_block_otm_tiebreak(const mdsd_markov *m, const mdsd_policy *pol,
                            const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    return mdsd_bk_solve(m, pol, MDSD_VERIFIER_OTM, o, tiebreak_node, res, err);
}
