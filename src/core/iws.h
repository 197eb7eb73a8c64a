/* iws.h - importance weighted sampling (IWS) weights of Khisti et al.
 * (NeurIPS 2024, Def. 1 and section 4): the first step of their canonical
 * multi-draft architecture, the `is` verifier of MATH.md §3.8.
 *
 * Two tokens u ~ a and v ~ b are drawn independently; the scheme keeps one of
 * them. When u = v it keeps u; otherwise it keeps token i of the unordered pair
 * {i, j} with probability W(i, j), W(i, j) + W(j, i) = 1. The kept token
 * follows
 *     r(i) = a(i)b(i) + sum_{j != i} (a(i)b(j) + a(j)b(i)) W(i, j),
 * and single-draft speculative sampling between r and the target p then
 * accepts with probability sum_i min(p(i), r(i)). For n = 2 iid drafts
 * (a = b = q) the weights maximising that sum give the optimal acceptance
 * alpha*_iid (Khisti Thm 1).
 *
 * The weights come from an LP solved with GLPK. Variables: for each free pair
 * the mass sent to its first token, in [0, a(i)b(j) + a(j)b(i)]; for each free
 * token t(i) <= p(i), t(i) <= r(i); maximise sum t.
 *   - full LP: every token of positive draft mass is free;
 *   - truncated LP (opts.top = s): only the first s tokens of the stage's
 *     order are free (Omega_1); the other weights are fixed (Khisti eq. 12,
 *     Alg. 1): a token of Omega_1 beats a token of Omega_2, and inside Omega_2
 *     the earlier token in the order wins. See iws.c for the order.
 * For n > 2 drafts (Khisti Remark 4) the drafts are paired up successively:
 * stage 1 selects u_2 from (x_1, x_2); stage k selects u_{k+1} from
 * (u_k, x_{k+1}), with a = law of u_k and b = q. Each stage's weights maximise
 * sum_i min(p(i), r_k(i)) for that stage, greedily; the selection's
 * acceptance is that of the last stage. A stage whose weights do worse than
 * always keeping u_k (a truncated LP's fixed rule can) keeps u_k instead, so
 * the acceptance never decreases with n; it is not alpha*_iid in general.
 * Stage LPs have ties: opts.face (n = 3) picks, among stage 1's optimal
 * solutions, the one after which stage 2 accepts most (papers/khisti). */
#ifndef MDSD_IWS_H
#define MDSD_IWS_H

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "err.h"

/* Default guard: refuse weight LPs with more structural variables than this. */
#define MDSD_IWS_MAX_VARS ((size_t)500000)

/* The order of the tokens of a stage with laws (a, b); ties to the lower
 * index; tokens with a(i) = b(i) = 0 (never drawn) come last. */
typedef enum {
    MDSD_IWS_RANK_DEFICIT, /* p(i) - a(i)b(i) decreasing: the target mass that
                              the pair mass must still supply (default) */
    MDSD_IWS_RANK_DRAFT    /* a(i) + b(i) decreasing: top-s of q at stage 1 */
} mdsd_iws_rank;

typedef struct {
    size_t top;           /* s: free tokens per stage; 0 = all drawn tokens (full LP) */
    mdsd_iws_rank rank;   /* order defining Omega_1 and the fixed rule */
    size_t max_vars;      /* guard on LP variables per stage; 0 = MDSD_IWS_MAX_VARS */
    bool face;            /* n = 3, full LP: of stage 1's optimal solutions take the one
                             whose stage 2 accepts most (one joint LP, iws.c) */
    double face_tol;      /* stage-1 objective within this of its optimum;
                             0 = MDSD_IWS_FACE_TOL */
} mdsd_iws_opts;

/* Default slack of the optimal-face search on stage 1's optimum. */
#define MDSD_IWS_FACE_TOL 1e-9

/* Weights of one pairing stage. */
typedef struct {
    size_t s;        /* free tokens (|Omega_1|) */
    int *order;      /* [V] the tokens in the stage's order; order[0..s) = Omega_1 */
    size_t *rank;    /* [V] inverse of order */
    double *w;       /* [s * s] w[x*s + y] = W(order[x], order[y]); diagonal unused */
    bool pass;       /* the LP's weights did worse than always keeping u_k, so the
                        stage keeps u_k (only possible for a truncated LP) */
} mdsd_iws_stage;

typedef struct {
    size_t V, n;
    size_t stages;          /* n - 1 (no stage for n = 1: r = q) */
    mdsd_iws_stage *stage;  /* [stages] */
    double *r;              /* [V] law of the selected token */
    double *from;           /* [n * V] from[j*V + i] = P(selected token is i and was
                               draft j), the earlier draft when several hold i */
    double accept;          /* sum_i min(p(i), r(i)) */
    size_t lp_vars;         /* structural variables of the largest stage LP */
    double face_stage1;     /* face search: stage 1's LP optimum (GLPK) */
    double face_stage1_kept;/* face search: sum min(p, r_1) of the weights kept */
} mdsd_iws;

/* Solves the weight LPs for target p[0..V) and n >= 1 independent drafts:
 * iid from q[0..V), or (multi) draft j from row j of q[n*V] (Khisti App. G:
 * stage k then pairs u_k with a draft of law q_{k+1}). p and q must be
 * validated probability vectors. MDSD_ETOOBIG when a stage LP exceeds the
 * guard, MDSD_ESOLVER when GLPK fails. */
int mdsd_iws_solve(const double *p, const double *q, size_t V, size_t n, bool multi,
                   const mdsd_iws_opts *opts, mdsd_iws *out, mdsd_err *err);

void mdsd_iws_free(mdsd_iws *w);

/* out[i] = sum_{j != i} b(j) P(the stage keeps i over j), i in the first slot
 * (u_k) if `first`, else in the second (the new draft): the b-mass that i
 * beats. The same for both slots unless the stage passes. O(V + s^2). */
void mdsd_iws_beaten(const mdsd_iws_stage *st, size_t V, const double *b, bool first,
                     double *out);

/* Probability that the stage keeps u (first slot) over v (second), u != v:
 * W(u, v), or 1 if the stage passes. */
double mdsd_iws_keep(const mdsd_iws_stage *st, int u, int v);

/* Runs the selection stages on the n drafts x[0..n); returns the selected
 * token and sets *from to the draft it came from (the earlier one on ties). */
int mdsd_iws_select(const mdsd_iws *w, const int *x, gsl_rng *rng, size_t *from);

/* per_draft[j] = P(the selected token came from draft j and speculative
 * sampling against p accepts it); sums to w->accept. */
void mdsd_iws_per_draft(const mdsd_iws *w, const double *p, double *per_draft);

#endif
