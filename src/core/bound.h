/* bound.h - the optimal acceptance rate alpha*(p, D) of MATH.md section 2: the
 * largest P(output in the drafts) any verifier whose output follows p can
 * reach, for a draft scheme D built from q. Independent routes that must agree:
 *
 *   lp-full     full OTM LP (SpecTr eq. 4) through GLPK (lp.h)
 *   lp-reduced  reduced LP, tuples aggregated by token set (SpecHub 3.2, Hu eq. 9)
 *   brute       1 + min over all 2^V subsets H of p(H) - Q(H) (Hu section 3,
 *               subset.h), any scheme, V <= 24
 *   sort        Hu's sort-and-scan over prefixes of the q/p order (qporder.h)
 *               for iid (Q = q(H)^n), wor (exact sequential Q, wor_q.h) and
 *               cps (Hu's generating function W_{n,H} / W_{n,all}, exact for
 *               cps only); closed forms for greedy (Hu Thm 7) and hub.
 *               iid, cps and wor (n >= 3 and V >= 4,096, wor_bucket.h)
 *               without the full order: tokens bucketed by q/p, only the
 *               buckets that can hold the minimum sorted (MATH.md §2.4)
 *   k2          Khisti et al. Thm 3 (iid, n = 2):
 *               alpha* = min_S { p(S) + q(S^c)^2 + 2 q(S) q(S^c) },
 *               with Thm 2's condition for alpha* = 1 (p(S) >= q(S)^2 for all S)
 *   maxflow     the reduced LP as a maximum flow source -> set S (Dbar(S)) ->
 *               token y in S -> sink (p(y)), push-relabel certified by its
 *               minimum cut (maxflow.h), any scheme
 *   auto        the fastest exact method for the scheme
 *
 * The per-position entry point is mdsd_bound_alpha with a reusable workspace
 * (no allocation on the hot path once the workspace has warmed up). */
#ifndef MDSD_BOUND_H
#define MDSD_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "scheme.h"

#include <mdsd/alpha.h>

/* The public methods (mdsd/alpha.h), and what the CLI adds after them. */
typedef enum {
    MDSD_BOUND_AUTO = MDSD_ALPHA_AUTO,
    MDSD_BOUND_LP_FULL = MDSD_ALPHA_LP_FULL,
    MDSD_BOUND_LP_REDUCED = MDSD_ALPHA_LP_REDUCED,
    MDSD_BOUND_BRUTE = MDSD_ALPHA_BRUTE,
    MDSD_BOUND_SORT = MDSD_ALPHA_SORT,
    MDSD_BOUND_K2 = MDSD_ALPHA_K2,
    MDSD_BOUND_MAXFLOW = MDSD_ALPHA_MAXFLOW,
    MDSD_BOUND_ALL, /* every applicable method: a CLI notion, refused by mdsd_bound_alpha */
    MDSD_BOUND_METHOD_COUNT
} mdsd_bound_method;

typedef struct {
    bool exact_arith;   /* LP methods: certify with GLPK's rational simplex */
    size_t max_tuples;  /* enumeration guard for D (brute, LPs); 0 = MDSD_JOINT_MAX_TUPLES */
    size_t max_vars;    /* LP size guard; 0 = MDSD_LP_MAX_VARS */
    size_t max_brute_V; /* brute-force guard; 0 = MDSD_SUBSET_MAX_V */
    double tol;         /* wor branch and bound: accepted slack; 0 = 1e-14 */
    double lp_max_seconds; /* LP methods: cost guard (lp.h); 0 = default, INFINITY = none */
    /* sort: calls on one workspace passing the same nonzero pq_tag promise
     * the same p and s->q (and V), so the q/p order computed by the first is
     * reused (e.g. iid, wor and cps at one position); 0 = no reuse. */
    uint64_t pq_tag;
    /* sort, iid, cps and wor (n != 2): scan the full q/p order instead of
     * the sort-free bucket route (the reference it is tested against).
     * Calls with a nonzero pq_tag always use the full order, which they
     * then share (wor with n = 2 or V < 4,096 always takes it). */
    bool full_sort;
} mdsd_bound_opts;

typedef struct {
    double alpha;             /* alpha*, in [0, 1] */
    mdsd_bound_method method; /* the method that produced it (auto resolved) */
    unsigned char *subset;    /* caller-owned [V] or NULL: an optimal H (1 = in H) */
    bool has_subset;          /* subset was filled (every method but the LPs) */
    int alpha_one;            /* k2: Khisti Thm 2 condition holds (alpha* = 1): 1 / 0; else -1 */
    double k2_margin;         /* k2: min over S of p(S) - q(S)^2 (0 iff alpha* = 1) */
    size_t evaluations;       /* sort for wor, n >= 3: exact Q(H) evaluations */
    size_t lp_vars;           /* LP methods: structural variables */
    size_t maxflow_sets;      /* maxflow: set nodes (distinct token sets of D) */
    double maxflow_gap;       /* maxflow: cut value - feasible flow value (the certified width) */
} mdsd_bound_result;

typedef struct mdsd_bound_workspace mdsd_bound_workspace;

/* Tolerance of the [0, 1] check: alpha* outside [-tol, 1 + tol] is an error. */
#define MDSD_BOUND_RANGE_TOL 1e-12
/* Khisti Thm 2 condition: alpha* = 1 when min_S p(S) - q(S)^2 >= -this. */
#define MDSD_BOUND_K2_TOL 1e-12

const char *mdsd_bound_method_name(mdsd_bound_method m);
/* Parses auto, lp-full, lp-reduced, brute, sort, k2, maxflow, all. */
int mdsd_bound_method_parse(const char *name, mdsd_bound_method *m, mdsd_err *err);

/* Whether method m can compute alpha* for scheme s at all (size guards are
 * checked when it runs): sort for iid, wor, greedy, hub, cps; k2 for iid with
 * n = 2; brute, lp-full, lp-reduced, maxflow for every scheme; auto always. */
bool mdsd_bound_applies(mdsd_bound_method m, const mdsd_scheme *s);

/* What auto runs: sort where it applies (iid, wor, greedy, hub, cps); else
 * (multi, custom) brute for V <= 10 and maxflow above (faster than brute
 * from V of about 12 on, and than the LPs at every size). */
mdsd_bound_method mdsd_bound_auto_method(const mdsd_scheme *s);

/* Workspace for vocabularies up to V and any n (n sizes the first use). */
mdsd_bound_workspace *mdsd_bound_workspace_alloc(size_t V, size_t n, mdsd_err *err);
void mdsd_bound_workspace_free(mdsd_bound_workspace *ws);

/* alpha*(p, D(s)) by method m. p[0..s->V) must be a validated probability
 * vector (dist.h), s a scheme that passes mdsd_scheme_check. ws may be NULL
 * (a temporary one is used). opts may be NULL (defaults). res->subset, if
 * non-NULL, receives an optimal H. */
int mdsd_bound_alpha(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                     const mdsd_bound_opts *opts, mdsd_bound_workspace *ws,
                     mdsd_bound_result *res, mdsd_err *err);

/* Every method that applies, timed (mdsd bound --method all; mdsd_alpha_all):
 * route[k] for the k-th of sort, k2, maxflow, brute, lp-reduced, lp-full. */
#define MDSD_BOUND_ROUTES 6
/* Routes may differ by this much (exact routes), or this (an LP is one of them). */
#define MDSD_BOUND_ROUTES_EXACT_TOL 1e-9
#define MDSD_BOUND_ROUTES_LP_TOL 1e-7

typedef struct {
    mdsd_bound_method method;
    bool applies;           /* mdsd_bound_applies: otherwise not run, not reported */
    int rc;                 /* MDSD_OK, or why it did not give a value */
    char why[512];          /* rc's message */
    double seconds;         /* wall time of the call */
    mdsd_bound_result res;  /* res.subset: the caller's row, or NULL */
} mdsd_bound_route;

typedef struct {
    mdsd_bound_route route[MDSD_BOUND_ROUTES];
    size_t ran;              /* routes that gave a value */
    double alpha;            /* auto's route's value, else the first that ran */
    double max_disagreement; /* largest |alpha_a - alpha_b| over those that ran */
    bool failures;           /* a route failed, or two disagree beyond tolerance */
} mdsd_bound_routes;

/* A route refused by a size guard or not defined for the instance (skipped,
 * not a failure). */
bool mdsd_bound_route_skipped(int rc);

/* Runs every route that applies. subsets: NULL or [MDSD_BOUND_ROUTES * V]
 * (route k's H at subsets + k V). planted: NULL, or [MDSD_BOUND_METHOD_COUNT]
 * offsets added to each route's value (test hook: a planted disagreement).
 * Returns MDSD_OK; or, when no route ran, the first failure (out->ran = 0);
 * or, with out filled, the first failure or the largest disagreement. */
int mdsd_bound_all(const double *p, const mdsd_scheme *s, const mdsd_bound_opts *opts,
                   unsigned char *subsets, const double *planted, mdsd_bound_routes *out,
                   mdsd_err *err);

/* Hu et al.'s generating-function Q(H) = W_{n,H} / W_{n,all}, W the
 * elementary symmetric polynomial of q over the set: exactly Q(H) for the cps
 * scheme, and NOT the sequential without-replacement probability (MATH.md §1.2). */
int mdsd_cps_Q(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
               mdsd_err *err);

#endif
