/* ot_plan.h - the optimal verifier's plan for i.i.d. drafts (MATH.md §3.10):
 * a "race of keys" in which every draft draw gets an independent random key
 * and the draw with the largest key is selected, then accepted with
 * probability min(1, p / r) of its token.
 *
 * The keys live on a line [0, 1) cut into bins, one per token with q > 0, in
 * the q/p order of sort-and-scan (qporder.h) from the bottom: bin b has the
 * length q(tok[b]) (q normalised). A draw's key is "bin b, uniform inside
 * it", where the draw's token y picks bin b with probability m(y, b) / q(y):
 * its allocation, with sum_y m(y, b) = len(b), so that a draw's key is
 * uniform on the line whatever its token. The largest of n such keys is then
 * at u with density n u^(n-1), and the token selected has inflow
 *
 *   r(y) = sum_b m(y, b) wbar(b),  wbar(b) = (S_{b+1}^n - S_b^n) / len(b),
 *
 * linear in the allocation (S_b = the line's position of bin b). The
 * allocation is built from the vertex one (m(y, b) = len(b) on the token's
 * own bin) by the exchanges of MATH.md §3.10, after which r <= p on the
 * tokens above the minimum cut H of sort-and-scan and r >= p on H: the
 * acceptance sum_y min(p, r) is alpha*. Whatever the exchanges did, the
 * output law is exactly p: the selected token y is accepted with
 * min(1, p(y)/r(y)) and the rest comes from the residual (p - min(p, r))+. */
#ifndef MDSD_OT_PLAN_H
#define MDSD_OT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "err.h"

/* Most drafts a plan takes (= MDSD_LAW_MAX_DRAFTS of verifier.h). */
#define MDSD_OT_MAX_DRAFTS 64

typedef struct {
    void *mem, *piece_mem; /* own every array below */
    size_t V, n;      /* vocabulary, drafts */
    size_t K;         /* bins = tokens with q > 0 */
    size_t m;         /* bins [0, m) are H (the saturated tier), [m, K) the rest */
    uint32_t *tok;    /* [V] the layout: the token of bin b < K, then the q = 0 tokens */
    int32_t *bin_of;  /* [V] the bin of a token, -1 where q = 0 */
    double *len;      /* [K] bin lengths: q(tok[b]) / q's total */
    double *pos;      /* [K + 1] S_b, the line's position of bin b (S_K = 1) */
    double *wbar;     /* [K] mean of n u^(n-1) over bin b */
    double *p;        /* [V] p along the layout */
    /* the allocation, token by token (a token is named by its own bin):
     * pieces piece_start[t] .. piece_start[t + 1], bins ascending */
    size_t *piece_start;  /* [K + 1] */
    uint32_t *piece_bin;  /* [pieces] */
    double *piece_mass;   /* [pieces] m(t, bin) */
    double *piece_cum;    /* [pieces] cumulative mass within the token (sampling) */
    size_t pieces;
    double *r;        /* [K] inflow of each token */
    double *beta;     /* [K] min(1, p / r): acceptance of a selected token */
    double alpha;     /* sum over tokens of min(p, r) */
    double alpha_cut; /* 1 + p(H) - Q(H) of the scan that chose H */
    double residual_mass;   /* sum of the residual weights */
    double *res_w;    /* [V] residual weights along the layout: (p - min(p, r))+, all of
                       * p past K (the tokens with q = 0) */
    double *res_cum;  /* [V] their running sums, for drawing by bisection */
    size_t exchanges; /* exchange steps the construction took */
} mdsd_ot_plan;

/* Builds the plan for target p[0..V) and i.i.d. drafts from q[0..V) (both
 * validated distributions), n >= 1 drafts. */
int mdsd_ot_plan_build(mdsd_ot_plan *plan, const double *p, const double *q, size_t V, size_t n,
                       mdsd_err *err);
/* The same with the tokens ordered by the logits p and q are the softmaxes
 * of (at one temperature; NULL: by q/p as above): p(x)/q(x) is increasing
 * in zp(x) - zq(x), formed exactly (a two-sum), so mathematically tied
 * ratios stay tied whatever exp rounded p and q to, and the tie goes by
 * index. The plan's acceptance is alpha* either way; which tokens are
 * accepted can change with the order among tied tokens, so on tree dumps
 * (logits at hand) E[tau] is then the same under every exp. */
int mdsd_ot_plan_build_logits(mdsd_ot_plan *plan, const double *p, const double *q, size_t V,
                              size_t n, const float *zp, const float *zq, mdsd_err *err);
/* The same with, if `planted`, the two tokens on either side of the cut
 * swapped in the layout: the tests' planted wrong tier split (the output law
 * stays p, the acceptance falls below alpha*). */
int mdsd_ot_plan_build_planted(mdsd_ot_plan *plan, const double *p, const double *q, size_t V,
                               size_t n, int planted, mdsd_err *err);
void mdsd_ot_plan_free(mdsd_ot_plan *plan);

/* One verification of the drafts x[0..n): the index of the selected draw in
 * *winner (-1 if no draw has a key: every draft has q = 0), and the output
 * token: the winner's token if accepted, else a residual draw. */
int mdsd_ot_plan_verify(const mdsd_ot_plan *plan, const int *x, gsl_rng *rng, int *winner);

/* The conditional law given the drafts x[0..n) (n <= 64): py[j] = P(output
 * == x[j] | x), equal drafts getting their token's probability. */
void mdsd_ot_plan_law(const mdsd_ot_plan *plan, const int *x, double *py);

/* The whole conditional law given the drafts: out[v] = P(output == v | x)
 * for every token v < V. */
void mdsd_ot_plan_law_full(const mdsd_ot_plan *plan, const int *x, double *out);

/* Exact per-draft rates: per_draft[j] = P(the output is accepted and x_j is
 * its first occurrence among the drafts), j < n; they sum to plan->alpha up
 * to rounding. MDSD_ENOMEM on failure. */
int mdsd_ot_plan_per_draft(const mdsd_ot_plan *plan, double *per_draft, mdsd_err *err);

#endif
