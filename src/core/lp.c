#include "lp.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "dist.h"
#include "glpk_solve.h"
#include "keysort.h"
#include "lp_model.h"

/* How far the LP optimum may leave [0, 1] (simplex tolerances) before it is
 * treated as a solver failure rather than rounding. */
#define LP_ALPHA_SLACK 1e-9
/* How far the masses of p and D may be from 1. Both are validated upstream,
 * but an enumerated D can be off by more than rounding where it divides by
 * 1 - q(prefix) (cancellation when q(prefix) is close to 1; e.g. greedy),
 * so the LPs accept the project's sum tolerance and rescale p and D to sum
 * to 1, which keeps the two marginal equalities of the full LP consistent. */
#define LP_MASS_TOL MDSD_PROB_SUM_TOL

static const char too_big_hint_full[] =
    "try mdsd bound `method sort` (iid, wor, cps, greedy, hub), maxflow or lp-reduced";
static const char too_big_hint_reduced[] =
    "try mdsd bound `method sort` (iid, wor, cps, greedy, hub) or maxflow";

/* ---------------------------------------------------------------------------
 * Input checks */

/* Checks (p, D); *p_scale and *d_scale are the factors that make each sum to 1. */
int mdsd_lp_check_input(const double *p, size_t V, const mdsd_joint *D, double *p_scale,
                        double *d_scale, mdsd_err *err)
{
    if (V == 0 || !p)
        return mdsd_fail(err, MDSD_EINVAL, "LP: empty target distribution (V = 0)");
    if (!D || D->count == 0 || D->n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "LP: empty draft law D (no tuples)");
    for (size_t y = 0; y < V; y++)
        if (!(p[y] >= 0.0) || isinf(p[y]))
            return mdsd_fail(err, MDSD_EINVAL, "LP: target p[%zu] = %g is not a probability", y, p[y]);
    for (size_t t = 0; t < D->count; t++) {
        if (!(D->prob[t] >= 0.0) || isinf(D->prob[t]))
            return mdsd_fail(err, MDSD_EINVAL, "LP: D of tuple %zu is %g, not a probability", t,
                             D->prob[t]);
        for (size_t j = 0; j < D->n; j++) {
            int x = D->tokens[t * D->n + j];
            if (x < 0 || (size_t)x >= V)
                return mdsd_fail(err, MDSD_EINVAL,
                                 "LP: tuple %zu, draft %zu: token %d is outside [0, %zu)", t, j, x, V);
        }
    }
    double sp = mdsd_sum(p, V), sd = mdsd_sum(D->prob, D->count);
    if (fabs(sp - 1.0) > LP_MASS_TOL)
        return mdsd_fail(err, MDSD_EINVAL, "LP: target p sums to %.17g, not 1", sp);
    if (fabs(sd - 1.0) > LP_MASS_TOL)
        return mdsd_fail(err, MDSD_EINVAL, "LP: draft law D sums to %.17g, not 1", sd);
    *p_scale = 1.0 / sp;
    *d_scale = 1.0 / sd;
    return MDSD_OK;
}

static bool tuple_has(const mdsd_joint *D, size_t t, int y)
{
    const int *x = D->tokens + t * D->n;
    for (size_t j = 0; j < D->n; j++)
        if (x[j] == y)
            return true;
    return false;
}

/* ---------------------------------------------------------------------------
 * Tuples aggregated by their token set S(x), with mass Dbar(S). */

typedef mdsd_set_law lp_sets;

typedef struct {
    const int *key;  /* sorted distinct tokens */
    size_t len;
    double prob;
} set_entry;

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int entry_cmp(const void *a, const void *b)
{
    const set_entry *u = a, *v = b;
    if (u->len != v->len)
        return u->len < v->len ? -1 : 1;
    for (size_t i = 0; i < u->len; i++)
        if (u->key[i] != v->key[i])
            return u->key[i] < v->key[i] ? -1 : 1;
    return 0;
}

static void sets_free(lp_sets *S)
{
    free(S->start);
    free(S->members);
    free(S->mass);
    memset(S, 0, sizeof *S);
}

/* Neumaier-compensated accumulation (many small tuple masses per set). */
static void acc_add(double *sum, double *comp, double x)
{
    double t = *sum + x;
    *comp += fabs(*sum) >= fabs(x) ? (*sum - t) + x : (x - t) + *sum;
    *sum = t;
}

/* The fast path of sets_build for short tuples of small tokens: each tuple's
 * sorted distinct tokens packed into one 64-bit key, `bits` bits per token
 * with the first token highest, under the length in the top 4 bits, so that
 * the numeric order of keys is entry_cmp's order (length, then
 * lexicographic). A stable LSD radix sort (keysort.h; 16-bit digits, 8-bit
 * for fewer than 65,536 tuples so that small laws do not pay for a large
 * histogram) keeps the tuples of a set in their order, so the
 * sets, their order and their compensated sums are those of the qsort path. */
static int sets_build_packed(const mdsd_joint *D, double d_scale, unsigned bits, lp_sets *S,
                             mdsd_err *err)
{
    size_t n = D->n, T = D->count;
    uint64_t *key = malloc(2 * T * sizeof *key);
    uint32_t *idx = malloc(2 * T * sizeof *idx);
    unsigned width = T < 65536 ? 8 : 16;
    uint32_t *count = malloc(MDSD_RADIX_COUNT(0, 64, width) * sizeof *count);
    if (!key || !idx || !count) {
        free(key), free(idx), free(count);
        return mdsd_fail(err, MDSD_ENOMEM, "set law: out of memory aggregating %zu tuples", T);
    }
    for (size_t t = 0; t < T; t++) {
        int tk[15];
        size_t len = 0;
        for (size_t j = 0; j < n; j++) { /* insertion of each token, duplicates dropped */
            int x = D->tokens[t * n + j];
            size_t at = len;
            while (at > 0 && tk[at - 1] > x)
                at--;
            if (at > 0 && tk[at - 1] == x)
                continue;
            memmove(tk + at + 1, tk + at, (len - at) * sizeof *tk);
            tk[at] = x;
            len++;
        }
        uint64_t k = (uint64_t)len << 60;
        for (size_t j = 0; j < len; j++)
            k |= (uint64_t)tk[j] << (60 - (j + 1) * bits);
        key[t] = k;
        idx[t] = (uint32_t)t;
    }
    uint32_t *iin = idx;
    uint64_t *kin = mdsd_radix_sort(key, key + T, &iin, idx + T, T, 0, 64, width, count);
    free(count);
    size_t K = 0, M = 0;
    for (size_t t = 0; t < T; t++)
        if (t == 0 || kin[t] != kin[t - 1])
            K++, M += (size_t)(kin[t] >> 60);
    S->start = malloc((K + 1) * sizeof *S->start);
    S->members = malloc((M ? M : 1) * sizeof *S->members);
    S->mass = malloc(K * sizeof *S->mass);
    if (!S->start || !S->members || !S->mass) {
        free(key), free(idx);
        sets_free(S);
        return mdsd_fail(err, MDSD_ENOMEM, "set law: out of memory for %zu token sets", K);
    }
    uint64_t field = ((uint64_t)1 << bits) - 1;
    size_t k = 0, m = 0;
    double sum = 0.0, comp = 0.0;
    for (size_t t = 0; t < T; t++) {
        if (t > 0 && kin[t] != kin[t - 1]) {
            S->mass[k++] = (sum + comp) * d_scale;
            sum = comp = 0.0;
        }
        if (t == 0 || kin[t] != kin[t - 1]) {
            S->start[k] = m;
            size_t len = (size_t)(kin[t] >> 60);
            for (size_t j = 0; j < len; j++)
                S->members[m++] = (int)(kin[t] >> (60 - (j + 1) * bits) & field);
        }
        acc_add(&sum, &comp, D->prob[iin[t]]);
    }
    S->mass[k++] = (sum + comp) * d_scale;
    S->start[k] = m;
    S->count = K;
    free(key), free(idx);
    return MDSD_OK;
}

/* Aggregates D by set; masses are multiplied by d_scale. */
static int sets_build(const mdsd_joint *D, double d_scale, lp_sets *S, mdsd_err *err)
{
    memset(S, 0, sizeof *S);
    size_t n = D->n, T = D->count;
    int top = 0;
    for (size_t i = 0; i < T * n; i++)
        top = D->tokens[i] > top ? D->tokens[i] : top;
    unsigned bits = 1;
    while (bits < 31 && (top >> bits) != 0)
        bits++;
    if (T > 0 && T < UINT32_MAX && n <= 15 && 4 + n * bits <= 64)
        return sets_build_packed(D, d_scale, bits, S, err);
    int *keys = malloc(T * n * sizeof *keys);
    set_entry *e = malloc(T * sizeof *e);
    if (!keys || !e) {
        free(keys), free(e);
        return mdsd_fail(err, MDSD_ENOMEM, "set law: out of memory aggregating %zu tuples", T);
    }
    for (size_t t = 0; t < T; t++) {
        int *k = keys + t * n;
        memcpy(k, D->tokens + t * n, n * sizeof *k);
        qsort(k, n, sizeof *k, int_cmp);
        size_t len = 1;
        for (size_t j = 1; j < n; j++)
            if (k[j] != k[len - 1])
                k[len++] = k[j];
        e[t] = (set_entry){k, len, D->prob[t]};
    }
    qsort(e, T, sizeof *e, entry_cmp);
    size_t K = 0, M = 0;
    for (size_t t = 0; t < T; t++)
        if (t == 0 || entry_cmp(&e[t - 1], &e[t]) != 0)
            K++, M += e[t].len;
    S->start = malloc((K + 1) * sizeof *S->start);
    S->members = malloc(M * sizeof *S->members);
    S->mass = malloc(K * sizeof *S->mass);
    if (!S->start || !S->members || !S->mass) {
        free(keys), free(e);
        sets_free(S);
        return mdsd_fail(err, MDSD_ENOMEM, "set law: out of memory for %zu token sets", K);
    }
    size_t k = 0, m = 0;
    double sum = 0.0, comp = 0.0;
    for (size_t t = 0; t < T; t++) {
        if (t > 0 && entry_cmp(&e[t - 1], &e[t]) != 0) {
            S->mass[k++] = (sum + comp) * d_scale;
            sum = comp = 0.0;
        }
        if (t == 0 || entry_cmp(&e[t - 1], &e[t]) != 0) {
            S->start[k] = m;
            memcpy(S->members + m, e[t].key, e[t].len * sizeof *S->members);
            m += e[t].len;
        }
        acc_add(&sum, &comp, e[t].prob);
    }
    S->mass[k++] = (sum + comp) * d_scale;
    S->start[k] = m;
    S->count = K;
    free(keys), free(e);
    return MDSD_OK;
}

int mdsd_set_law_build(const mdsd_joint *D, double scale, mdsd_set_law *S, mdsd_err *err)
{
    return sets_build(D, scale, S, err);
}

void mdsd_set_law_free(mdsd_set_law *S)
{
    sets_free(S);
}

/* ---------------------------------------------------------------------------
 * Building the GLPK problems */

static size_t full_vars(size_t V, const mdsd_joint *D)
{
    return D->count > SIZE_MAX / V ? SIZE_MAX : V * D->count;
}

/* Row of the target constraint of token y: 1 .. V. Draft rows follow; the row
 * of tuple `drop` is left out (see build_full). */
static size_t full_drop(const mdsd_joint *D)
{
    size_t drop = 0;
    for (size_t t = 1; t < D->count; t++)
        if (D->prob[t] > D->prob[drop])
            drop = t;
    return drop;
}

/* Full OTM LP. Column t*V + y + 1 is pi(y, x_t), so the plan comes out in the
 * layout of mdsd_lp_result.plan. The two families of equalities are linearly
 * dependent (both sum to 1), and in exact arithmetic sum p and sum D differ by
 * rounding, which would make the rational simplex report infeasibility. So the
 * draft row of the heaviest tuple is omitted: its column sum is then implied,
 * 1 - (the other D), equal to its D(x) up to rounding. */
void mdsd_lp_build_full(glp_prob *P, const double *p, double p_scale, size_t V,
                        const mdsd_joint *D, double d_scale, bool named)
{
    size_t T = D->count, drop = full_drop(D);
    char name[64];
    glp_set_prob_name(P, "otm_full");
    glp_set_obj_name(P, "alpha");
    glp_set_obj_dir(P, GLP_MAX);
    glp_add_rows(P, (int)(V + T - 1));
    for (size_t y = 0; y < V; y++) {
        glp_set_row_bnds(P, (int)(y + 1), GLP_FX, p[y] * p_scale, p[y] * p_scale);
        if (named) {
            snprintf(name, sizeof name, "target_%zu", y);
            glp_set_row_name(P, (int)(y + 1), name);
        }
    }
    for (size_t t = 0; t < T; t++) {
        if (t == drop)
            continue;
        int r = (int)(V + 1 + t - (t > drop));
        glp_set_row_bnds(P, r, GLP_FX, D->prob[t] * d_scale, D->prob[t] * d_scale);
        if (named) {
            snprintf(name, sizeof name, "draft_%zu", t + 1);
            glp_set_row_name(P, r, name);
        }
    }
    glp_add_cols(P, (int)(V * T));
    for (size_t t = 0; t < T; t++) {
        int ind[3] = {0, 0, (int)(V + 1 + t - (t > drop))};
        double val[3] = {0.0, 1.0, 1.0};
        for (size_t y = 0; y < V; y++) {
            int j = (int)(t * V + y + 1);
            glp_set_col_bnds(P, j, GLP_LO, 0.0, 0.0);
            if (tuple_has(D, t, (int)y))
                glp_set_obj_coef(P, j, 1.0);
            ind[1] = (int)(y + 1);
            glp_set_mat_col(P, j, t == drop ? 1 : 2, ind, val);
            if (named) {
                snprintf(name, sizeof name, "pi_%zu_%zu", y, t + 1);
                glp_set_col_name(P, j, name);
            }
        }
    }
}

static size_t sets_vars(const lp_sets *S) { return S->start[S->count]; }

/* Reduced LP: rows 1..K are the sets (<= Dbar), then one row (<= p(y)) per
 * token that occurs in some set; column s(y, S_k) for each member y of S_k. */
int mdsd_lp_build_reduced(glp_prob *P, const double *p, double p_scale, size_t V,
                          const lp_sets *S, bool named, size_t *rows, mdsd_err *err)
{
    size_t K = S->count;
    int *row_of = calloc(V, sizeof *row_of);
    if (!row_of)
        return mdsd_fail(err, MDSD_ENOMEM, "LP: out of memory");
    size_t used = 0;
    for (size_t m = 0; m < sets_vars(S); m++)
        if (!row_of[S->members[m]])
            row_of[S->members[m]] = 1, used++;
    char name[64];
    glp_set_prob_name(P, "otm_reduced");
    glp_set_obj_name(P, "alpha");
    glp_set_obj_dir(P, GLP_MAX);
    glp_add_rows(P, (int)(K + used));
    for (size_t k = 0; k < K; k++) {
        glp_set_row_bnds(P, (int)(k + 1), GLP_UP, 0.0, S->mass[k]);
        if (named) {
            snprintf(name, sizeof name, "set_%zu", k + 1);
            glp_set_row_name(P, (int)(k + 1), name);
        }
    }
    size_t r = K;
    for (size_t y = 0; y < V; y++) {
        if (!row_of[y])
            continue;
        row_of[y] = (int)++r;
        glp_set_row_bnds(P, (int)r, GLP_UP, 0.0, p[y] * p_scale);
        if (named) {
            snprintf(name, sizeof name, "target_%zu", y);
            glp_set_row_name(P, (int)r, name);
        }
    }
    glp_add_cols(P, (int)sets_vars(S));
    for (size_t k = 0; k < K; k++)
        for (size_t m = S->start[k]; m < S->start[k + 1]; m++) {
            int j = (int)(m + 1);
            int ind[3] = {0, (int)(k + 1), row_of[S->members[m]]};
            double val[3] = {0.0, 1.0, 1.0};
            glp_set_col_bnds(P, j, GLP_LO, 0.0, 0.0);
            glp_set_obj_coef(P, j, 1.0);
            glp_set_mat_col(P, j, 2, ind, val);
            if (named) {
                snprintf(name, sizeof name, "s_%d_%zu", S->members[m], k + 1);
                glp_set_col_name(P, j, name);
            }
        }
    free(row_of);
    *rows = K + used;
    return MDSD_OK;
}

/* ---------------------------------------------------------------------------
 * Solving */

/* glp_simplex, then glp_exact from its basis when exact; GLPK stays silent. */
static int solve(glp_prob *P, const char *what, bool exact, bool best_effort, double *alpha,
                 mdsd_err *err)
{
    int old_out = glp_term_out(GLP_OFF);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    /* GLPK's default 1e-7 feasibility tolerances let alpha* drift by ~5e-7 on
     * badly scaled toys (probabilities near 1e-8 beside 0.99); the suite
     * holds the LPs to 1e-7, so ask for more. */
    parm.tol_bnd = 1e-10;
    parm.tol_dj = 1e-10;
    /* The rational simplex can take hours on subnormal or widely scaled
     * masses: bounded, it either fails naming the limit or (best effort)
     * falls back to the floating-point optimum. */
    const char *stage;
    int ret = mdsd_glpk_solve(P, &parm, exact ? MDSD_GLPK_EXACT_AFTER_OPTIMUM : MDSD_GLPK_FLOAT,
                              MDSD_LP_EXACT_SECONDS * 1000, &stage);
    if (ret == GLP_ETMLIM && !strcmp(stage, "glp_exact") && best_effort) {
        stage = "glp_simplex";
        ret = glp_simplex(P, &parm);
    } else if (ret == GLP_ETMLIM && !strcmp(stage, "glp_exact")) {
        glp_term_out(old_out);
        return mdsd_fail(err, MDSD_ETOOBIG, "%s: GLPK's rational simplex (exact arithmetic) "
                         "ran past %d s (masses that are subnormal or span a wide range make "
                         "its rationals huge); solve without exact arithmetic", what,
                         MDSD_LP_EXACT_SECONDS);
    }
    int status = glp_get_status(P);
    double obj = glp_get_obj_val(P);
    glp_term_out(old_out);
    if (ret)
        return mdsd_fail(err, MDSD_ESOLVER, "%s: GLPK %s failed (code %d: %s)", what, stage, ret,
                         mdsd_glpk_ret_name(ret));
    if (status != GLP_OPT)
        return mdsd_fail(err, MDSD_ESOLVER, "%s: GLPK %s ended with status '%s'", what, stage,
                         mdsd_glpk_status_name(status));
    if (!(obj >= -LP_ALPHA_SLACK && obj <= 1.0 + LP_ALPHA_SLACK))
        return mdsd_fail(err, MDSD_ESOLVER,
                         "%s: optimum %.17g is outside [0, 1] by more than %g (solver failure)",
                         what, obj, LP_ALPHA_SLACK);
    *alpha = obj < 0.0 ? 0.0 : obj > 1.0 ? 1.0 : obj;
    return MDSD_OK;
}

static size_t max_vars(const mdsd_lp_opts *opts)
{
    size_t m = opts && opts->max_vars ? opts->max_vars : MDSD_LP_MAX_VARS;
    return m < (size_t)INT_MAX / 2 ? m : (size_t)INT_MAX / 2; /* GLPK indexes with int */
}

size_t mdsd_lp_full_vars(size_t V, const mdsd_joint *D)
{
    return V && D ? full_vars(V, D) : 0;
}

double mdsd_lp_seconds_estimate(size_t vars, size_t rows)
{
    return 2e-8 * (double)vars * (double)rows;
}

/* The cost guard: ETOOBIG naming the estimate and how to force it. */
static int check_cost(const char *what, size_t vars, size_t rows, const mdsd_lp_opts *opts,
                      const char *hint, mdsd_err *err)
{
    double limit = opts && opts->max_seconds > 0.0 ? opts->max_seconds : MDSD_LP_MAX_SECONDS;
    double est = mdsd_lp_seconds_estimate(vars, rows);
    if (est > limit)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_FORCE,
                                "%s: %zu variables x %zu rows, about %.0f s of "
                                "simplex (limit %.0f s); %s, or pass `force` to solve it anyway", what,
                                vars, rows, est, limit, hint);
    return MDSD_OK;
}

int mdsd_lp_full(const double *p, size_t V, const mdsd_joint *D, const mdsd_lp_opts *opts,
                 mdsd_lp_result *res, mdsd_err *err)
{
    memset(res, 0, sizeof *res);
    double p_scale, d_scale;
    int rc = mdsd_lp_check_input(p, V, D, &p_scale, &d_scale, err);
    if (rc)
        return rc;
    res->vars = full_vars(V, D);
    res->rows = V + D->count - 1;
    if (res->vars > max_vars(opts))
        return mdsd_fail(err, MDSD_ETOOBIG,
                         "full OTM LP: %zu variables (V = %zu tokens x %zu draft tuples) exceed "
                         "the limit of %zu; %s",
                         res->vars, V, D->count, max_vars(opts), too_big_hint_full);
    if ((rc = check_cost("full OTM LP", res->vars, res->rows, opts, too_big_hint_full, err)))
        return rc;
    bool want_plan = opts && opts->want_plan;
    if (want_plan && !(res->plan = malloc(res->vars * sizeof *res->plan)))
        return mdsd_fail(err, MDSD_ENOMEM, "full OTM LP: out of memory for the plan (%zu entries)",
                         res->vars);
    glp_prob *P = glp_create_prob();
    mdsd_lp_build_full(P, p, p_scale, V, D, d_scale, false);
    rc = solve(P, "full OTM LP", opts && opts->exact_arith,
               opts && opts->exact_best_effort, &res->alpha, err);
    /* Primal values may be slightly negative within the solver's tolerance;
     * the plan is used as sampling weights, so they are clipped at 0. */
    for (size_t j = 0; rc == MDSD_OK && want_plan && j < res->vars; j++) {
        double v = glp_get_col_prim(P, (int)(j + 1));
        res->plan[j] = v > 0.0 ? v : 0.0;
    }
    glp_delete_prob(P);
    if (rc) {
        free(res->plan);
        res->plan = NULL;
    }
    return rc;
}

int mdsd_lp_reduced_size(const mdsd_joint *D, size_t *vars, size_t *sets, mdsd_err *err)
{
    if (!D || D->count == 0 || D->n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "LP: empty draft law D (no tuples)");
    lp_sets S;
    int rc = sets_build(D, 1.0, &S, err);
    if (rc)
        return rc;
    *vars = sets_vars(&S);
    *sets = S.count;
    sets_free(&S);
    return MDSD_OK;
}

int mdsd_lp_reduced(const double *p, size_t V, const mdsd_joint *D, const mdsd_lp_opts *opts,
                    mdsd_lp_result *res, mdsd_err *err)
{
    memset(res, 0, sizeof *res);
    double p_scale, d_scale;
    int rc = mdsd_lp_check_input(p, V, D, &p_scale, &d_scale, err);
    if (rc)
        return rc;
    lp_sets S;
    if ((rc = sets_build(D, d_scale, &S, err)))
        return rc;
    res->vars = sets_vars(&S);
    if (res->vars > max_vars(opts)) {
        rc = mdsd_fail(err, MDSD_ETOOBIG,
                       "reduced LP: %zu variables (%zu token sets) exceed the limit of %zu; %s",
                       res->vars, S.count, max_vars(opts), too_big_hint_reduced);
        sets_free(&S);
        return rc;
    }
    /* rows: V target rows and one per token set */
    if ((rc = check_cost("reduced LP", res->vars, V + S.count, opts, too_big_hint_reduced, err))) {
        sets_free(&S);
        return rc;
    }
    glp_prob *P = glp_create_prob();
    rc = mdsd_lp_build_reduced(P, p, p_scale, V, &S, false, &res->rows, err);
    if (rc == MDSD_OK)
        rc = solve(P, "reduced LP", opts && opts->exact_arith,
                   opts && opts->exact_best_effort, &res->alpha, err);
    glp_delete_prob(P);
    sets_free(&S);
    return rc;
}

void mdsd_lp_result_free(mdsd_lp_result *res)
{
    if (!res)
        return;
    free(res->plan);
    res->plan = NULL;
}
