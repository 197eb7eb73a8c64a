/* iws.c - importance weighted sampling weights (see iws.h).
 *
 * The truncated LP's order. Khisti et al. sort the vocabulary "in decreasing
 * order" of a key that the plain-text extraction of the paper lost, and fix
 * W(i, j) = 1 for i in Omega_1, j in Omega_2 and, inside Omega_2, W(i, j) = 1
 * for i before j (eq. 12; Appendix G states the rule in words), "to increase
 * r(i) further so as to decrease the difference between" the target and r(i).
 * The default order here follows that intuition: the deficit p(i) - a(i)b(i)
 * (target mass not covered by the pair (i, i) itself) decreasing, so the
 * neediest token wins a fixed pair. MDSD_IWS_RANK_DRAFT orders by the draft
 * instead. Either way acceptance is exact for the weights used: r is
 * recomputed from the weights, not read from the LP. */
#include "iws.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "dist.h"
#include "glpk_solve.h"

typedef struct {
    double key;
    int idx;
} keyed;

/* Decreasing key, ties (and never-drawn tokens, key -inf) to the lower index. */
static int keyed_cmp(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Orders the tokens of a stage; returns the number of drawn tokens. */
static size_t rank_tokens(const double *p, const double *a, const double *b, size_t V,
                          mdsd_iws_rank kind, keyed *tmp, int *order, size_t *rank)
{
    size_t active = 0;
    for (size_t i = 0; i < V; i++) {
        int drawn = a[i] > 0.0 || b[i] > 0.0;
        active += drawn;
        tmp[i].idx = (int)i;
        tmp[i].key = !drawn ? -INFINITY
                     : kind == MDSD_IWS_RANK_DRAFT ? a[i] + b[i] : p[i] - a[i] * b[i];
    }
    qsort(tmp, V, sizeof *tmp, keyed_cmp);
    for (size_t k = 0; k < V; k++) {
        order[k] = tmp[k].idx;
        rank[tmp[k].idx] = k;
    }
    return active;
}

double mdsd_iws_keep(const mdsd_iws_stage *st, int u, int v)
{
    if (st->pass)
        return 1.0;
    size_t ru = st->rank[u], rv = st->rank[v];
    if (ru < st->s && rv < st->s)
        return st->w[ru * st->s + rv];
    return ru < rv ? 1.0 : 0.0;
}

void mdsd_iws_beaten(const mdsd_iws_stage *st, size_t V, const double *b, bool first,
                     double *out)
{
    if (st->pass) { /* the first slot always wins */
        double total = mdsd_sum(b, V);
        for (size_t i = 0; i < V; i++)
            out[i] = first ? total - b[i] : 0.0;
        return;
    }
    size_t s = st->s;
    const int *order = st->order;
    double later = 0.0; /* Omega_2 tokens beat every later token */
    for (size_t k = V; k-- > s;) {
        out[order[k]] = later;
        later += b[order[k]];
    }
    for (size_t x = 0; x < s; x++) {
        double sum = later; /* Omega_1 beats all of Omega_2 */
        for (size_t y = 0; y < s; y++)
            if (y != x)
                sum += b[order[y]] * st->w[x * s + y];
        out[order[x]] = sum;
    }
}

/* The GLPK part of a stage: fills st->w for the free pairs. base[x] is the
 * fixed mass of top[x]; m[x*s+y] the mass of pair {order[x], order[y]}. GLPK
 * keeps its environment in thread-local storage, so stages may be solved in
 * parallel. */
static int stage_glpk(const double *p, const double *base, const double *m,
                      mdsd_iws_stage *st, size_t pairs, mdsd_err *err)
{
    size_t s = st->s, nz = s + 2 * pairs;
    int *ia = malloc((nz + 1) * sizeof *ia), *ja = malloc((nz + 1) * sizeof *ja);
    double *ar = malloc((nz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia), free(ja), free(ar);
        return mdsd_fail(err, MDSD_ENOMEM, "importance weights: out of memory for %zu pairs", pairs);
    }
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_rows(lp, (int)s);
    glp_add_cols(lp, (int)(s + pairs));
    size_t k = 0;
    for (size_t x = 0; x < s; x++) {
        /* t_x <= r(order[x]) = base + pairs won: t_x - sum u_xy + sum u_yx <= base + sum_{y<x} m */
        double ub = base[x];
        for (size_t y = 0; y < x; y++)
            ub += m[y * s + x];
        glp_set_row_bnds(lp, (int)x + 1, GLP_UP, 0.0, ub);
        double px = p[st->order[x]];
        glp_set_col_bnds(lp, (int)x + 1, px > 0.0 ? GLP_DB : GLP_FX, 0.0, px);
        glp_set_obj_coef(lp, (int)x + 1, 1.0);
        k++, ia[k] = (int)x + 1, ja[k] = (int)x + 1, ar[k] = 1.0;
    }
    int col = (int)s;
    for (size_t x = 0; x < s; x++)
        for (size_t y = x + 1; y < s; y++) {
            if (m[x * s + y] <= 0.0)
                continue;
            col++; /* u_xy: the mass of the pair sent to order[x] */
            glp_set_col_bnds(lp, col, GLP_DB, 0.0, m[x * s + y]);
            k++, ia[k] = (int)x + 1, ja[k] = col, ar[k] = -1.0;
            k++, ia[k] = (int)y + 1, ja[k] = col, ar[k] = 1.0;
        }
    glp_load_matrix(lp, (int)nz, ia, ja, ar);
    free(ia), free(ja), free(ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    const char *stage;
    int rc = mdsd_glpk_solve(lp, &parm, MDSD_GLPK_FLOAT, 0, &stage);
    if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
        int status = glp_get_status(lp);
        glp_delete_prob(lp);
        return mdsd_fail(err, MDSD_ESOLVER,
                         "importance weights: GLPK simplex failed (code %d, status %d) "
                         "on %zu free tokens", rc, status, s);
    }
    col = (int)s;
    for (size_t x = 0; x < s; x++)
        for (size_t y = x + 1; y < s; y++) {
            double wxy = 1.0; /* a pair that never occurs: the fixed rule */
            if (m[x * s + y] > 0.0) {
                wxy = glp_get_col_prim(lp, ++col) / m[x * s + y];
                wxy = wxy < 0.0 ? 0.0 : wxy > 1.0 ? 1.0 : wxy;
            }
            st->w[x * s + y] = wxy;
            st->w[y * s + x] = 1.0 - wxy;
        }
    glp_delete_prob(lp);
    return MDSD_OK;
}

/* Chooses Omega_1 and solves the stage's LP for pair laws (a, b). */
static int stage_solve(const double *p, const double *a, const double *b, size_t V,
                       const mdsd_iws_opts *o, keyed *tmp, mdsd_iws_stage *st, size_t *vars,
                       mdsd_err *err)
{
    st->rank = malloc(V * sizeof *st->rank);
    st->order = malloc(V * sizeof *st->order);
    if (!st->rank || !st->order)
        return mdsd_fail(err, MDSD_ENOMEM, "importance weights: out of memory (V = %zu)", V);
    int *order = st->order;
    size_t active = rank_tokens(p, a, b, V, o->rank, tmp, order, st->rank);
    size_t s = o->top && o->top < active ? o->top : active;
    size_t guard = o->max_vars ? o->max_vars : MDSD_IWS_MAX_VARS;
    *vars = s + s * (s - (s > 0)) / 2;
    if (*vars > guard)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_IS_TOP,
                                "importance weights: the LP over %zu free tokens needs %zu variables, "
                                "above the guard of %zu; free fewer tokens (`is_top S`, S <= %zu)",
                                s, *vars, guard, (size_t)(sqrt(2.0 * (double)guard)) - 1);
    st->s = s;
    st->w = malloc((s ? s * s : 1) * sizeof *st->w);
    double *m = malloc((s ? s * s : 1) * sizeof *m), *base = malloc((s ? s : 1) * sizeof *base);
    if (!st->w || !m || !base) {
        free(m), free(base);
        return mdsd_fail(err, MDSD_ENOMEM, "importance weights: out of memory (s = %zu)", s);
    }
    double A2 = 0.0, B2 = 0.0; /* mass of Omega_2 under a and b */
    for (size_t k = s; k < V; k++)
        A2 += a[order[k]], B2 += b[order[k]];
    size_t pairs = 0;
    for (size_t x = 0; x < s; x++) {
        int i = order[x];
        base[x] = a[i] * b[i] + a[i] * B2 + b[i] * A2;
        for (size_t y = 0; y < s; y++) {
            int j = order[y];
            m[x * s + y] = a[i] * b[j] + a[j] * b[i];
            pairs += y > x && m[x * s + y] > 0.0;
        }
    }
    int rc = MDSD_OK;
    if (pairs == 0) {
        for (size_t x = 0; x < s; x++)
            for (size_t y = 0; y < s; y++)
                st->w[x * s + y] = x < y;
    } else {
        rc = stage_glpk(p, base, m, st, pairs, err);
    }
    free(m), free(base);
    return rc;
}

void mdsd_iws_free(mdsd_iws *w)
{
    if (!w)
        return;
    for (size_t k = 0; w->stage && k < w->stages; k++) {
        free(w->stage[k].order);
        free(w->stage[k].rank);
        free(w->stage[k].w);
    }
    free(w->stage);
    free(w->r);
    free(w->from);
    memset(w, 0, sizeof *w);
}

/* sum_i min(p(i), r(i)), compensated; tmp has V entries. */
static double accept_of(const double *p, const double *r, size_t V, double *tmp)
{
    for (size_t i = 0; i < V; i++)
        tmp[i] = fmin(p[i], r[i]);
    return mdsd_sum(tmp, V);
}

/* Law of the token stage st keeps from (u ~ a, v ~ b), and the beaten masses
 * it needs: r = a b + a beaten_b (u kept) + b beaten_a (v kept). */
static void stage_law(const mdsd_iws_stage *st, size_t V, const double *a, const double *b,
                      double *wa, double *wb, double *r)
{
    mdsd_iws_beaten(st, V, b, true, wb);
    mdsd_iws_beaten(st, V, a, false, wa);
    for (size_t i = 0; i < V; i++)
        r[i] = a[i] * b[i] + a[i] * wb[i] + b[i] * wa[i];
}

/* Advances r and its split by draft through stage k, whose weights are set.
 * A truncated stage can do worse than not pairing at all (its fixed rule may
 * lose mass that keeping u_k would not): then the stage passes u_k through. */
static void stage_advance(mdsd_iws *w, size_t k, const double *p, const double *b, double *buf)
{
    size_t V = w->V;
    mdsd_iws_stage *st = &w->stage[k];
    double *wa = buf, *wb = buf + V, *r = buf + 2 * V, *scratch = buf + 3 * V;
    stage_law(st, V, w->r, b, wa, wb, r);
    double acc = accept_of(p, r, V, scratch);
    if (acc < w->accept) {
        st->pass = true; /* r and the split stay; draft k+1 is never selected */
        return;
    }
    for (size_t i = 0; i < V; i++) {
        for (size_t j = 0; j <= k; j++)
            w->from[j * V + i] *= b[i] + wb[i];
        w->from[(k + 1) * V + i] = b[i] * wa[i];
    }
    memcpy(w->r, r, V * sizeof *r);
    w->accept = acc;
}

/* Solves stage k (new draft of law b) and advances through it. */
static int stage_run(mdsd_iws *w, size_t k, const double *p, const double *b,
                     const mdsd_iws_opts *o, keyed *tmp, double *buf, mdsd_err *err)
{
    size_t vars = 0;
    int rc = stage_solve(p, w->r, b, w->V, o, tmp, &w->stage[k], &vars, err);
    if (rc != MDSD_OK)
        return rc;
    w->lp_vars = vars > w->lp_vars ? vars : w->lp_vars;
    stage_advance(w, k, p, b, buf);
    return MDSD_OK;
}

/* ---- The optimal face of stage 1 (n = 3, full LP) --------------------------
 *
 * Stage 1's LP (maximise sum_i min(p(i), r_1(i))) has in general many optimal
 * solutions, and the acceptance after stage 2 depends on which one is taken.
 * One LP finds the best of them: the variables are both stages' pair masses
 *   u(i,j) in [0, 2 q(i) q(j)]   stage-1 mass of {i, j} kept as i (i < j),
 *   v(i,j) >= 0, v(i,j) <= q(j) r_1(i) + q(i) r_1(j)   the same at stage 2,
 * with r_1 (linear in u) and r_2 (linear in r_1 and v) as in iws.h, and
 *   s(i) <= min(p(i), r_1(i)),  sum_i s(i) >= opt_1 - tol,
 *   t(i) <= min(p(i), r_2(i)),  maximise sum_i t(i).
 * opt_1 is stage 1's optimum, found by the same LP with objective sum s first.
 * Every pair mass is linear in the previous stage's law, so the feasible set
 * is exactly {stage-1 solutions within tol of optimal} x {stage-2 weights};
 * at the optimum the stage-2 weights are optimal for the chosen r_1, so the
 * result is a legitimate run of Remark 4 (both stages optimal for their own
 * LPs). For n > 3 the stage-2 optimum depends on r_1 and the problem becomes
 * bilevel; it is not attempted. Weights are read back as fractions of the
 * pair masses and r, the split by draft and the acceptance are recomputed
 * from them (stage_advance), not read from the LP. */

/* Column / row indices of the face LP, 1-based as GLPK wants them. */
typedef struct {
    size_t V, P;  /* tokens, unordered pairs */
} face_ix;
static int f_u(const face_ix *f, size_t k) { (void)f; return (int)(1 + k); }
static int f_r(const face_ix *f, size_t i) { return (int)(1 + f->P + i); }
static int f_s(const face_ix *f, size_t i) { return (int)(1 + f->P + f->V + i); }
static int f_v(const face_ix *f, size_t k) { return (int)(1 + f->P + 2 * f->V + k); }
static int f_t(const face_ix *f, size_t i) { return (int)(1 + 2 * f->P + 2 * f->V + i); }
static int row_r(const face_ix *f, size_t i) { (void)f; return (int)(1 + i); }
static int row_s(const face_ix *f, size_t i) { return (int)(1 + f->V + i); }
static int row_face(const face_ix *f) { return (int)(1 + 2 * f->V); }
static int row_m(const face_ix *f, size_t k) { return (int)(2 + 2 * f->V + k); }
static int row_t(const face_ix *f, size_t i) { return (int)(2 + 2 * f->V + f->P + i); }

/* Index of the unordered pair {i, j}, i < j, in row-major upper-triangle order. */
static size_t pair_ix(size_t V, size_t i, size_t j)
{
    return i * V - i * (i + 1) / 2 + (j - i - 1);
}

/* The face LP into lp (its matrix built in ia, ja, ar: cap + 1 entries). */
static void face_build(glp_prob *lp, const face_ix *fx, const double *p, const double *q,
                       int *ia, int *ja, double *ar)
{
    size_t V = fx->V, P = fx->P;
    face_ix f = *fx;
    size_t cols = 2 * P + 3 * V, rows = 3 * V + P + 1;
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_rows(lp, (int)rows);
    glp_add_cols(lp, (int)cols);
    size_t nz = 0;
#define PUT(r, c, x) (nz++, ia[nz] = (r), ja[nz] = (c), ar[nz] = (x))
    for (size_t i = 0; i < V; i++)
        for (size_t j = i + 1; j < V; j++) {
            size_t k = pair_ix(V, i, j);
            double m = 2.0 * q[i] * q[j];
            glp_set_col_bnds(lp, f_u(&f, k), m > 0.0 ? GLP_DB : GLP_FX, 0.0, m);
            glp_set_col_bnds(lp, f_v(&f, k), GLP_LO, 0.0, 0.0);
            PUT(row_r(&f, i), f_u(&f, k), -1.0); /* r_1(i) gains what i keeps */
            PUT(row_r(&f, j), f_u(&f, k), 1.0);  /* r_1(j) = ... + (m - u) */
            glp_set_row_bnds(lp, row_m(&f, k), GLP_UP, 0.0, 0.0);
            PUT(row_m(&f, k), f_v(&f, k), 1.0);
            PUT(row_m(&f, k), f_r(&f, i), -q[j]);
            PUT(row_m(&f, k), f_r(&f, j), -q[i]);
            PUT(row_t(&f, i), f_v(&f, k), -1.0);
            PUT(row_t(&f, j), f_v(&f, k), 1.0);
        }
    for (size_t i = 0; i < V; i++) {
        /* r_1(i) - sum_{j>i} u(i,j) + sum_{j<i} u(j,i) = q(i)^2 + sum_{j<i} 2 q(i) q(j) */
        double rhs = q[i] * q[i];
        for (size_t j = 0; j < i; j++)
            rhs += 2.0 * q[i] * q[j];
        glp_set_row_bnds(lp, row_r(&f, i), GLP_FX, rhs, rhs);
        PUT(row_r(&f, i), f_r(&f, i), 1.0);
        glp_set_col_bnds(lp, f_r(&f, i), GLP_FR, 0.0, 0.0);
        int pb = p[i] > 0.0 ? GLP_DB : GLP_FX;
        glp_set_col_bnds(lp, f_s(&f, i), pb, 0.0, p[i]);
        glp_set_col_bnds(lp, f_t(&f, i), pb, 0.0, p[i]);
        glp_set_row_bnds(lp, row_s(&f, i), GLP_UP, 0.0, 0.0);
        PUT(row_s(&f, i), f_s(&f, i), 1.0);
        PUT(row_s(&f, i), f_r(&f, i), -1.0);
        PUT(row_face(&f), f_s(&f, i), 1.0);
        /* t(i) - r_2(i) <= 0 with r_2(i) = q(i) r_1(i) + sum_{j>i} v(i,j)
         *                     + sum_{j<i} (q(i) r_1(j) + q(j) r_1(i) - v(j,i)) */
        double own = q[i];
        for (size_t j = 0; j < i; j++) {
            own += q[j];
            PUT(row_t(&f, i), f_r(&f, j), -q[i]);
        }
        PUT(row_t(&f, i), f_r(&f, i), -own);
        PUT(row_t(&f, i), f_t(&f, i), 1.0);
        glp_set_row_bnds(lp, row_t(&f, i), GLP_UP, 0.0, 0.0);
        glp_set_obj_coef(lp, f_s(&f, i), 1.0);
    }
#undef PUT
    glp_set_row_bnds(lp, row_face(&f), GLP_FR, 0.0, 0.0);
    glp_load_matrix(lp, (int)nz, ia, ja, ar);
}

/* Stage 1's optimum opt1, then the best final acceptance on its optimal face. */
static int face_optimize(glp_prob *lp, const face_ix *fx, const mdsd_iws_opts *o, double *opt1_out,
                         mdsd_err *err)
{
    size_t V = fx->V;
    face_ix f = *fx;
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    const char *stage;
    int rc = mdsd_glpk_solve(lp, &parm, MDSD_GLPK_FLOAT, 0, &stage);
    int old_out = glp_term_out(GLP_OFF); /* glp_scale_prob and glp_adv_basis talk */
    if (rc != 0 || glp_get_status(lp) != GLP_OPT) { /* badly scaled q: retry scaled, exact */
        glp_scale_prob(lp, GLP_SF_AUTO);
        glp_adv_basis(lp, 0);
        /* the rational simplex, bounded (lp.h) */
        rc = mdsd_glpk_solve(lp, &parm, MDSD_GLPK_EXACT_AFTER_SIMPLEX, 2000, &stage);
    }
    double opt1 = rc == 0 && glp_get_status(lp) == GLP_OPT ? glp_get_obj_val(lp) : NAN;
    if (rc == 0 && !isnan(opt1)) {
        /* Stay on stage 1's optimal face; now maximise the final acceptance.
         * The warm start can end 'no feasible solution' on a face thinner
         * than the simplex's tolerances (seen on 1 of 1000 random
         * instances): then retry from a fresh basis with the face widened
         * (x100, x10^4; still far below any reported digit). */
        for (size_t i = 0; i < V; i++) {
            glp_set_obj_coef(lp, f_s(&f, i), 0.0);
            glp_set_obj_coef(lp, f_t(&f, i), 1.0);
        }
        double widen = 1.0;
        for (int attempt = 0; attempt < 3; attempt++, widen *= 100.0) {
            glp_set_row_bnds(lp, row_face(&f), GLP_LO, opt1 - o->face_tol * widen, 0.0);
            if (attempt > 0) {
                glp_scale_prob(lp, GLP_SF_AUTO);
                glp_adv_basis(lp, 0);
            }
            if (attempt == 2)
                parm.meth = GLP_DUALP;
            rc = mdsd_glpk_solve(lp, &parm, MDSD_GLPK_FLOAT, 0, &stage);
            if (rc == 0 && glp_get_status(lp) == GLP_OPT)
                break;
        }
    }
    glp_term_out(old_out);
    if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
        int status = glp_get_status(lp);
        return mdsd_fail(err, MDSD_ESOLVER, "importance weights: GLPK failed on the optimal-face "
                         "LP (code %d, status %d)", rc, status);
    }
    *opt1_out = opt1;
    return MDSD_OK;
}

/* The stages' weights read back from the LP as fractions of the pair masses;
 * r, the split by draft and the acceptance recomputed from them. */
static int face_read(mdsd_iws *w, glp_prob *lp, const face_ix *fx, const double *p, const double *q,
                     double *buf, mdsd_err *err)
{
    size_t V = fx->V;
    face_ix f = *fx;
    /* Stage weights on the identity order, every token free. */
    for (size_t k = 0; k < 2; k++) {
        mdsd_iws_stage *st = &w->stage[k];
        st->s = V;
        st->order = malloc(V * sizeof *st->order);
        st->rank = malloc(V * sizeof *st->rank);
        st->w = malloc(V * V * sizeof *st->w);
        if (!st->order || !st->rank || !st->w)
            return mdsd_fail(err, MDSD_ENOMEM, "importance weights: out of memory (V = %zu)", V);
        for (size_t i = 0; i < V; i++)
            st->order[i] = (int)i, st->rank[i] = i;
    }
    for (size_t k = 0; k < 2; k++) {
        mdsd_iws_stage *st = &w->stage[k];
        const double *a = w->r; /* law of u_k: q at stage 1, r_1 (recomputed) at stage 2 */
        for (size_t i = 0; i < V; i++)
            for (size_t j = i + 1; j < V; j++) {
                size_t pk = pair_ix(V, i, j);
                double m = a[i] * q[j] + a[j] * q[i];
                double kept = glp_get_col_prim(lp, k == 0 ? f_u(&f, pk) : f_v(&f, pk));
                double wij = m > 0.0 ? kept / m : 1.0;
                wij = wij < 0.0 ? 0.0 : wij > 1.0 ? 1.0 : wij;
                st->w[i * V + j] = wij;
                st->w[j * V + i] = 1.0 - wij;
            }
        stage_advance(w, k, p, q, buf);
        if (k == 0)
            w->face_stage1_kept = w->accept;
    }
    return MDSD_OK;
}

static int face_solve(mdsd_iws *w, const double *p, const double *q, const mdsd_iws_opts *o,
                      double *buf, mdsd_err *err)
{
    size_t V = w->V, P = V * (V - 1) / 2;
    face_ix f = {V, P};
    size_t cols = 2 * P + 3 * V;
    size_t guard = o->max_vars ? o->max_vars : MDSD_IWS_MAX_VARS;
    w->lp_vars = cols;
    if (cols > guard)
        return mdsd_fail(err, MDSD_ETOOBIG,
                         "importance weights: the optimal-face LP over V = %zu tokens needs %zu "
                         "variables, above the guard of %zu (a toy-vocabulary tool)", V, cols, guard);
    size_t cap = 4 * P + 2 * V + V + V + 3 * P + V * (2 + V + V) + 16;
    int *ia = malloc((cap + 1) * sizeof *ia), *ja = malloc((cap + 1) * sizeof *ja);
    double *ar = malloc((cap + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia), free(ja), free(ar);
        return mdsd_fail(err, MDSD_ENOMEM, "importance weights: out of memory (V = %zu)", V);
    }
    glp_prob *lp = glp_create_prob();
    face_build(lp, &f, p, q, ia, ja, ar);
    free(ia), free(ja), free(ar);
    double opt1 = NAN;
    int rc = face_optimize(lp, &f, o, &opt1, err);
    if (rc == MDSD_OK) {
        w->face_stage1 = opt1;
        rc = face_read(w, lp, &f, p, q, buf, err);
    }
    glp_delete_prob(lp);
    return rc;
}

int mdsd_iws_solve(const double *p, const double *q, size_t V, size_t n, bool multi,
                   const mdsd_iws_opts *opts, mdsd_iws *out, mdsd_err *err)
{
    memset(out, 0, sizeof *out);
    if (V == 0 || n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "importance weights: need V >= 1 and n >= 1 "
                         "(got V = %zu, n = %zu)", V, n);
    mdsd_iws_opts o = {0, MDSD_IWS_RANK_DEFICIT, 0, false, 0.0};
    if (opts)
        o = *opts;
    if (o.face_tol <= 0.0)
        o.face_tol = MDSD_IWS_FACE_TOL;
    out->V = V, out->n = n, out->stages = n - 1;
    out->r = malloc(V * sizeof *out->r);
    out->from = calloc(n * V, sizeof *out->from);
    out->stage = calloc(n, sizeof *out->stage);
    double *buf = malloc(4 * V * sizeof *buf);
    keyed *tmp = malloc(V * sizeof *tmp);
    int rc = MDSD_OK;
    if (!out->r || !out->from || !out->stage || !buf || !tmp) {
        rc = mdsd_fail(err, MDSD_ENOMEM, "importance weights: out of memory (V = %zu, n = %zu)",
                       V, n);
        goto done;
    }
    memcpy(out->r, q, V * sizeof *q);
    memcpy(out->from, q, V * sizeof *q);
    out->accept = accept_of(p, q, V, buf);
    if (o.face) {
        if (n != 3 || multi || o.top != 0) {
            rc = mdsd_fail(err, MDSD_EUNSUPPORTED,
                           "importance weights: the optimal-face search is implemented for "
                           "n = 3 iid drafts with the full LP (got n = %zu%s%s)", n,
                           multi ? ", multi drafts" : "", o.top ? ", a truncated LP" : "");
            goto done;
        }
        rc = face_solve(out, p, q, &o, buf, err);
        goto done;
    }
    for (size_t k = 0; k < out->stages && rc == MDSD_OK; k++)
        rc = stage_run(out, k, p, multi ? q + (k + 1) * V : q, &o, tmp, buf, err);
done:
    free(buf), free(tmp);
    if (rc != MDSD_OK)
        mdsd_iws_free(out);
    return rc;
}

int mdsd_iws_select(const mdsd_iws *w, const int *x, gsl_rng *rng, size_t *from)
{
    int u = x[0];
    size_t at = 0;
    for (size_t k = 0; k < w->stages; k++) {
        int v = x[k + 1];
        if (v == u)
            continue;
        double keep = mdsd_iws_keep(&w->stage[k], u, v);
        if (keep < 1.0 && (keep <= 0.0 || gsl_rng_uniform(rng) >= keep))
            u = v, at = k + 1;
    }
    if (from)
        *from = at;
    return u;
}

void mdsd_iws_per_draft(const mdsd_iws *w, const double *p, double *per_draft)
{
    size_t V = w->V;
    for (size_t j = 0; j < w->n; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < V; i++)
            if (w->r[i] > 0.0)
                sum += w->from[j * V + i] * fmin(1.0, p[i] / w->r[i]);
        per_draft[j] = sum;
    }
}
