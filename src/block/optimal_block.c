/* optimal_block.c - the largest E[tau] of any lossless verifier that sees
 * the whole draft (MATH.md §5.8): an LP over the joint law of the draft
 * outcome and the step's output, solved by GLPK.
 *
 * Variables: x(w, u, b) = P(draft class w, the step accepts the drafted
 * prefix u of w and outputs b next), for every node u of w and token b
 * (solved in the reduced form of build());
 * h(v) = P(the output starts with v and goes past it), for every string v,
 * 1 <= |v| <= L. Rows:
 *   sum_{u, b} x(w, u, b) = Q(w)                        every class w
 *   e(v.b) + h(v.b) = p(b | v) h(v)                     every v.b, |v| <= L
 * with e(s) = sum of the x whose output u.b is s, h(empty) = 1 and
 * h(v.b) = 0 at |v.b| = L + 1: P(output starts with v.b) = e + h, so the
 * second rows are the stopped-chain condition of §5.7, which makes iterated
 * steps the target chain. Objective: E[tau] = sum_x |u.b| x.
 *
 * Classes: drafts with the same set of drafted prefixes (the trie, without
 * draft order or counts), their probabilities summed. In the reduced form
 * below a class enters only through its probability and its node set, so
 * two drafts with the same node set can share one solution (merge their z
 * columns; split a merged one in proportion to their probabilities): the
 * optimum over verifiers that see the whole ordered draft equals the one
 * over verifiers that see its trie. Strings whose target probability is 0
 * and outputs b with p(b | u) = 0 get no variables (the rows force them
 * to 0). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "block_impl.h"
#include "glpk_solve.h"
#include "dtree.h"
#include "fnv.h"
#include "lp.h"

typedef struct {
    const mdsd_markov *m;
    const mdsd_policy *pol;
    int root;
    size_t V, L;
    size_t off[MDSD_BLOCK_MAX_DEPTH + 3];  /* first code of each string length */
    unsigned char *pos;                    /* [off[L + 2]]: string of positive probability */
    /* classes: key pool, open-addressing table, per class Q and node codes */
    int *keys;
    size_t nkeys, capkeys;
    size_t *key_at, *key_len;              /* [capcls] */
    double *Q;
    size_t *node_at, *node_n;              /* [capcls]: codes[node_at .. + node_n) */
    size_t ncls, capcls;
    size_t *codes, ncodes, capcodes;
    long *slot;                            /* [capslot]: class or -1 */
    size_t capslot;
    int *buf;
    size_t capbuf;
} lp_ctx;

static int push(int **a, size_t *n, size_t *cap, int v)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        int *g = realloc(*a, c * sizeof *g);
        if (!g)
            return -1;
        *a = g, *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}


/* The canonical serialisation of node u's subtree (children by token) into buf. */
static int serialise(lp_ctx *c, const mdsd_dtree *t, int u, size_t *n)
{
    int kids[MDSD_BLOCK_MAX_DRAFTS], k = 0;
    for (int v = t->kid[u]; v >= 0 && k < MDSD_BLOCK_MAX_DRAFTS; v = t->sib[v])
        kids[k++] = v;
    for (int i = 1; i < k; i++) /* insertion sort by token */
        for (int j = i; j > 0 && t->token[kids[j - 1]] > t->token[kids[j]]; j--) {
            int tmp = kids[j];
            kids[j] = kids[j - 1], kids[j - 1] = tmp;
        }
    if (push(&c->buf, n, &c->capbuf, k))
        return -1;
    for (int i = 0; i < k; i++) {
        if (push(&c->buf, n, &c->capbuf, t->token[kids[i]]) || serialise(c, t, kids[i], n))
            return -1;
    }
    return 0;
}

static size_t code_of(const lp_ctx *c, const int *w, size_t len)
{
    size_t v = 0;
    for (size_t i = 0; i < len; i++)
        v = v * c->V + (size_t)w[i];
    return c->off[len] + v;
}

static int grow_classes(lp_ctx *c)
{
    if (c->ncls < c->capcls)
        return 0;
    size_t cap = c->capcls ? 2 * c->capcls : 1024;
    size_t *a = realloc(c->key_at, cap * sizeof *a), *b = a ? realloc(c->key_len, cap * sizeof *b) : NULL;
    if (a)
        c->key_at = a;
    if (b)
        c->key_len = b;
    double *q = b ? realloc(c->Q, cap * sizeof *q) : NULL;
    if (q)
        c->Q = q;
    size_t *na = q ? realloc(c->node_at, cap * sizeof *na) : NULL;
    if (na)
        c->node_at = na;
    size_t *nn = na ? realloc(c->node_n, cap * sizeof *nn) : NULL;
    if (nn)
        c->node_n = nn;
    if (!nn)
        return -1;
    c->capcls = cap;
    /* rehash into a table of twice the classes' capacity */
    free(c->slot);
    c->capslot = 2 * cap;
    if (!(c->slot = malloc(c->capslot * sizeof *c->slot)))
        return -1;
    for (size_t i = 0; i < c->capslot; i++)
        c->slot[i] = -1;
    for (size_t k = 0; k < c->ncls; k++) {
        uint64_t h = mdsd_fnv1a(MDSD_FNV_OFFSET, (const char *)(c->keys + c->key_at[k]),
                                c->key_len[k] * sizeof(int));
        size_t i = (size_t)(h % c->capslot);
        while (c->slot[i] >= 0)
            i = (i + 1) % c->capslot;
        c->slot[i] = (long)k;
    }
    return 0;
}

/* A new class: its key moved from buf to the pool, its node codes. */
static int add_class(lp_ctx *c, const mdsd_dtree *t, size_t len, size_t at_slot, double prob)
{
    size_t k = c->ncls++;
    c->key_at[k] = c->nkeys, c->key_len[k] = len;
    for (size_t i = 0; i < len; i++)
        if (push(&c->keys, &c->nkeys, &c->capkeys, c->buf[i]))
            return -1;
    c->Q[k] = prob;
    c->node_at[k] = c->ncodes, c->node_n[k] = 0;
    int w[MDSD_BLOCK_MAX_DEPTH + 1];
    for (size_t u = 0; u < t->n; u++) {
        mdsd_dtree_path(t, (int)u, w);
        size_t code = code_of(c, w, (size_t)t->depth[u]);
        if (!c->pos[code])
            continue;
        if (c->ncodes == c->capcodes) {
            size_t cap = c->capcodes ? 2 * c->capcodes : 1024;
            size_t *g = realloc(c->codes, cap * sizeof *g);
            if (!g)
                return -1;
            c->codes = g, c->capcodes = cap;
        }
        c->codes[c->ncodes++] = code;
        c->node_n[k]++;
    }
    c->slot[at_slot] = (long)k;
    return 0;
}

static int visit(void *ctx, const mdsd_dtree *t, double prob, mdsd_err *err)
{
    lp_ctx *c = ctx;
    size_t len = 0;
    if (serialise(c, t, 0, &len) || grow_classes(c))
        return mdsd_fail(err, MDSD_ENOMEM, "block optimal-block: out of memory");
    uint64_t h = mdsd_fnv1a(MDSD_FNV_OFFSET, (const char *)c->buf, len * sizeof(int));
    size_t i = (size_t)(h % c->capslot);
    for (; c->slot[i] >= 0; i = (i + 1) % c->capslot) {
        size_t k = (size_t)c->slot[i];
        if (c->key_len[k] == len && !memcmp(c->keys + c->key_at[k], c->buf, len * sizeof(int))) {
            c->Q[k] += prob;
            return MDSD_OK;
        }
    }
    if (add_class(c, t, len, i, prob))
        return mdsd_fail(err, MDSD_ENOMEM, "block optimal-block: out of memory");
    return MDSD_OK;
}

/* pos[] of every string of length <= L + 1 after the root. */
static int strings(lp_ctx *c, mdsd_err *err)
{
    double codes = 0.0, pw = 1.0;
    for (size_t l = 0; l <= c->L + 2; l++) {
        c->off[l] = (size_t)codes;
        codes += pw;
        pw *= (double)c->V;
    }
    if (codes > (double)((size_t)1 << 24))
        return mdsd_fail(err, MDSD_ETOOBIG, "block optimal-block: %.3g output strings: a smaller "
                         "toy (V^(L+1) <= 2^24)", codes);
    if (!(c->pos = calloc(c->off[c->L + 2], 1)))
        return mdsd_fail(err, MDSD_ENOMEM, "block optimal-block: out of memory");
    c->pos[0] = 1;
    for (size_t len = 1; len <= c->L + 1; len++)
        for (size_t i = 0; i < c->off[len + 1] - c->off[len]; i++) {
            size_t parent = c->off[len - 1] + i / c->V, b = i % c->V;
            size_t last = len == 1 ? (size_t)c->root : (i / c->V) % c->V;
            c->pos[c->off[len] + i] = c->pos[parent] && c->m->p[last * c->V + b] > 0.0;
        }
    return MDSD_OK;
}

static void ctx_free(lp_ctx *c)
{
    free(c->pos), free(c->keys), free(c->key_at), free(c->key_len), free(c->Q);
    free(c->node_at), free(c->node_n), free(c->codes), free(c->slot), free(c->buf);
}

/* The length of the string of a code. */
static size_t len_of(const lp_ctx *c, size_t code)
{
    size_t len = 0;
    while (len <= c->L && code >= c->off[len + 1])
        len++;
    return len;
}

typedef struct {
    glp_prob *P;
    long *row;        /* [strings]: the string's row, or -1 */
    long *bal;        /* [strings]: the balance row of a node string, or -1 */
    size_t nz, ny, nh, nrows;
} lp_model;

/* The LP of the header in its reduced form: x(w, u, b) enters only through
 * its class's row (sum over u, b) and its output string's row (sum over w),
 * so it is a transportation plan between z(w, u) = sum_b x (the class w
 * stops at u) and y(u, b) = sum_w x (the output u.b), which exists exactly
 * when sum_w z(w, u) = sum_b y(u, b) for every node string u. Columns: z,
 * then y, then h; rows: classes, output strings, then balances. */
static int build(const lp_ctx *c, const mdsd_block_opts *o, lp_model *lm, mdsd_err *err)
{
    size_t V = c->V, L = c->L, nstr = c->off[L + 2];
    lm->nrows = c->ncls;
    lm->row = malloc(nstr * sizeof *lm->row);
    lm->bal = malloc(nstr * sizeof *lm->bal);
    int *ind = malloc((V + c->ncls + 2) * sizeof *ind);
    double *val = malloc((V + c->ncls + 2) * sizeof *val);
    int rc = lm->row && lm->bal && ind && val
                 ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "block optimal-block: out of memory");
    for (size_t k = 0; rc == MDSD_OK && k < c->ncls; k++)
        lm->nz += c->node_n[k];
    for (size_t w = 0; rc == MDSD_OK && w < nstr; w++) {
        lm->row[w] = w > 0 && c->pos[w] ? (long)lm->nrows++ : -1;
        lm->ny += w > 0 && c->pos[w];
        lm->nh += w >= c->off[1] && w < c->off[L + 1] && c->pos[w];
    }
    for (size_t w = 0; rc == MDSD_OK && w < nstr; w++)
        lm->bal[w] = w < c->off[L + 1] && c->pos[w] ? (long)lm->nrows++ : -1;
    size_t ncols = lm->nz + lm->ny + lm->nh;
    double limit = o && o->max_seconds > 0.0 ? o->max_seconds : MDSD_LP_MAX_SECONDS;
    double est = mdsd_lp_seconds_estimate(ncols, lm->nrows);
    if (rc == MDSD_OK && est > limit)
        rc = mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_FORCE,
                              "block optimal-block: %zu variables x %zu rows (%zu "
                              "draft classes), about %.0f s of simplex (limit %.0f s); a smaller toy, "
                              "or pass `force` to solve it anyway", ncols, lm->nrows, c->ncls, est, limit);
    if (rc == MDSD_OK) {
        glp_prob *P = lm->P = glp_create_prob();
        glp_set_obj_dir(P, GLP_MAX);
        glp_add_rows(P, (int)lm->nrows);
        glp_add_cols(P, (int)ncols);
        for (size_t k = 0; k < c->ncls; k++)
            glp_set_row_bnds(P, (int)k + 1, GLP_FX, c->Q[k], c->Q[k]);
        for (size_t w = 0; w < nstr; w++) {
            if (lm->row[w] >= 0) {
                double rhs = w < c->off[2] ? c->m->p[(size_t)c->root * V + (w - c->off[1])] : 0.0;
                glp_set_row_bnds(P, (int)lm->row[w] + 1, GLP_FX, rhs, rhs);
            }
            if (lm->bal[w] >= 0)
                glp_set_row_bnds(P, (int)lm->bal[w] + 1, GLP_FX, 0.0, 0.0);
        }
        int col = 0;
        for (size_t k = 0; k < c->ncls; k++) /* z(w, u) */
            for (size_t i = 0; i < c->node_n[k]; i++) {
                int zi[3] = {0, (int)k + 1, (int)lm->bal[c->codes[c->node_at[k] + i]] + 1};
                double zv[3] = {0, 1.0, 1.0};
                glp_set_col_bnds(P, ++col, GLP_LO, 0.0, 0.0);
                glp_set_mat_col(P, col, 2, zi, zv);
            }
        for (size_t w = c->off[1]; w < nstr; w++) { /* y(u, b), w = u.b */
            if (!c->pos[w])
                continue;
            size_t len = len_of(c, w), u = c->off[len - 1] + (w - c->off[len]) / V;
            int yi[3] = {0, (int)lm->row[w] + 1, (int)lm->bal[u] + 1};
            double yv[3] = {0, 1.0, -1.0};
            glp_set_col_bnds(P, ++col, GLP_LO, 0.0, 0.0);
            glp_set_obj_coef(P, col, (double)len);
            glp_set_mat_col(P, col, 2, yi, yv);
        }
        for (size_t w = c->off[1]; w < c->off[L + 1]; w++) { /* h(w) */
            if (!c->pos[w])
                continue;
            size_t i = w - c->off[len_of(c, w)], nz = 0;
            ind[++nz] = (int)lm->row[w] + 1, val[nz] = 1.0;
            for (size_t b = 0; b < V; b++) {
                size_t s = c->off[len_of(c, w) + 1] + i * V + b;
                if (c->pos[s])
                    ind[++nz] = (int)lm->row[s] + 1, val[nz] = -c->m->p[(i % V) * V + b];
            }
            glp_set_col_bnds(P, ++col, GLP_LO, 0.0, 0.0);
            glp_set_mat_col(P, col, (int)nz, ind, val);
        }
    }
    free(ind), free(val);
    return rc;
}

/* Solves the LP with GLPK's primal simplex in double precision: the rows
 * hold doubles whose sums are 1 only up to rounding (sum_b p(b|u), sum Q),
 * which the rational simplex reads as an inconsistent system, so the
 * solution is exact to the simplex tolerances (tightened to 1e-10); res
 * gets E[tau] and the reach of the optimum found (from the y columns). */
static int solve(const lp_ctx *c, const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    lp_model lm = {0};
    int rc = build(c, o, &lm, err);
    if (rc == MDSD_OK) {
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.tol_bnd = 1e-10;
        parm.tol_dj = 1e-10;
        const char *stage;
        int ret = mdsd_glpk_solve(lm.P, &parm, MDSD_GLPK_FLOAT, 0, &stage);
        if (ret != 0 || glp_get_status(lm.P) != GLP_OPT) {
            /* The LP is always feasible (any lossless verifier is a point of
             * it); at 1e-10 the simplex can judge rows whose doubles sum to 1
             * only up to rounding infeasible (sparse Dirichlet toys). GLPK's
             * own tolerances (1e-7, the LP tolerance the tests allow) from
             * the standard basis settle them. */
            parm.tol_bnd = 1e-7;
            parm.tol_dj = 1e-7;
            glp_std_basis(lm.P);
            ret = mdsd_glpk_solve(lm.P, &parm, MDSD_GLPK_FLOAT, 0, &stage);
        }
        if (ret != 0 || glp_get_status(lm.P) != GLP_OPT)
            rc = mdsd_fail(err, MDSD_ESOLVER, "block optimal-block: GLPK's simplex failed on "
                           "the LP (%d rows, %d columns; %s: %s, status %s) at tolerances 1e-10 "
                           "and 1e-7", glp_get_num_rows(lm.P), glp_get_num_cols(lm.P), stage,
                           mdsd_glpk_ret_name(ret), mdsd_glpk_status_name(glp_get_status(lm.P)));
    }
    if (rc == MDSD_OK) {
        double reach[MDSD_BLOCK_MAX_DEPTH + 1] = {0};
        int col = (int)lm.nz;
        for (size_t w = c->off[1]; w < c->off[c->L + 2]; w++) {
            if (!c->pos[w])
                continue;
            double v = glp_get_col_prim(lm.P, ++col);
            for (size_t d = 1; v > 0.0 && d < len_of(c, w); d++)
                reach[d] += v;
        }
        memset(res, 0, sizeof *res);
        mdsd_bk_finish(res, c->L, reach, 1.0);
        res->tau = glp_get_obj_val(lm.P); /* the same up to rounding */
    }
    if (lm.P)
        glp_delete_prob(lm.P);
    free(lm.row), free(lm.bal);
    return rc;
}

int mdsd_block_optimal_block(const mdsd_markov *m, const mdsd_policy *pol,
                             const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    int rc = mdsd_policy_check(pol, err);
    if (rc)
        return rc;
    lp_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m, c.pol = pol, c.root = 0, c.V = m->V, c.L = pol->depth;
    rc = strings(&c, err);
    if (rc == MDSD_OK)
        rc = mdsd_dtree_enumerate(m, pol, 0, o ? o->vopts.max_tuples : 0, visit, &c, err);
    if (rc == MDSD_OK)
        rc = solve(&c, o, res, err);
    ctx_free(&c);
    return rc;
}
