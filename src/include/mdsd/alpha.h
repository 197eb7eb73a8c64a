/* mdsd/alpha.h - the optimal acceptance rate alpha*(p, D): the largest
 * P(output is one of the drafts) any verifier whose output follows p exactly
 * can reach, for drafts drawn from scheme D built from q (MATH.md section 2).
 *
 *   auto        the fastest exact method for the scheme
 *   lp-full     the full optimal-transport LP (GLPK)
 *   lp-reduced  the LP with tuples aggregated by token set (GLPK)
 *   brute       1 + min over all 2^V subsets H of p(H) - Q(H), V <= 24
 *   sort        Hu et al.'s sort-and-scan (iid, wor, greedy, hub, cps)
 *   k2          Khisti et al.'s Theorem 3 (iid, n = 2)
 *   maxflow     the reduced LP as a maximum flow (push-relabel, certified by
 *               its minimum cut), any scheme */
#ifndef MDSD_PUBLIC_ALPHA_H
#define MDSD_PUBLIC_ALPHA_H

#include <mdsd/scheme.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MDSD_ALPHA_AUTO,
    MDSD_ALPHA_LP_FULL,
    MDSD_ALPHA_LP_REDUCED,
    MDSD_ALPHA_BRUTE,
    MDSD_ALPHA_SORT,
    MDSD_ALPHA_K2,
    MDSD_ALPHA_MAXFLOW /* appended (ABI): the values above are unchanged */
} mdsd_alpha_method;

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    int exact_arith;     /* LP methods: certify with GLPK's rational simplex (0 = no) */
    size_t max_tuples;   /* enumeration guard for D (brute, LPs); 0 = 2^22 */
    size_t max_vars;     /* LP size guard; 0 = 4,000,000 */
    size_t max_brute_V;  /* brute-force guard; 0 = 24 */
    int force;           /* LP methods: solve an LP estimated to take more than a minute
                            (0 = refuse it, with the estimate; mdsd bound --force) */
} mdsd_alpha_opts;

/* Zeroes opts (every field then means its default) and sets size. */
MDSD_API void mdsd_alpha_opts_init(mdsd_alpha_opts *opts, size_t size);
#define mdsd_alpha_opts_init(opts) mdsd_alpha_opts_init((opts), sizeof *(opts))

typedef struct {
    double alpha;              /* alpha*, in [0, 1] */
    mdsd_alpha_method method;  /* the method that ran (auto resolved) */
    int has_subset;            /* the optimal H was written (every method but the LPs) */
    int alpha_one;             /* k2: Khisti Thm 2 condition (alpha* = 1) holds: 1 / 0; else -1 */
    double k2_margin;          /* k2: min over S of p(S) - q(S)^2 */
    size_t lp_vars;            /* LP methods: structural variables */
} mdsd_alpha_result;

/* "auto", "lp-full", "lp-reduced", "brute", "sort", "k2", "maxflow". */
MDSD_API const char *mdsd_alpha_method_name(mdsd_alpha_method m);
MDSD_API mdsd_status mdsd_alpha_method_parse(const char *name, mdsd_alpha_method *m, mdsd_err *err);

/* alpha*(p, D(s)) by method m. p[0..s->V) and the scheme's q are validated
 * (not modified). opts may be NULL. subset (NULL, or [s->V]) receives an
 * optimal H (1 = in H) where res->has_subset. MDSD_EUNSUPPORTED when m does
 * not apply to the scheme, MDSD_ETOOBIG past a size guard. */
MDSD_API mdsd_status mdsd_alpha(const double *p, const mdsd_scheme *s, mdsd_alpha_method m,
               const mdsd_alpha_opts *opts, mdsd_alpha_result *res, unsigned char *subset,
               mdsd_err *err);

/* alpha* by every method that applies (mdsd bound --method all): sort, k2,
 * maxflow, brute, lp-reduced, lp-full, each timed, and their largest
 * disagreement. */
#define MDSD_ALPHA_ROUTES 6

typedef struct {
    mdsd_alpha_method method;
    int applies;            /* the method is defined for the scheme (else not run) */
    mdsd_status status;     /* MDSD_OK: alpha is set; MDSD_ETOOBIG or MDSD_EUNSUPPORTED:
                               skipped (a size guard); else the method failed */
    char why[512];          /* status's message ("" when MDSD_OK) */
    double seconds;         /* wall time of the method */
    double alpha;           /* alpha*, in [0, 1] */
    int has_subset;         /* the optimal H was written (every method but the LPs) */
    int alpha_one;          /* k2: Khisti Thm 2 condition holds: 1 / 0; else -1 */
    double k2_margin;       /* k2: min over S of p(S) - q(S)^2 */
    size_t evaluations;     /* sort for wor, n >= 3: exact Q(H) evaluations (else 0) */
    size_t lp_vars;         /* LP methods: structural variables (else 0) */
    size_t maxflow_sets;    /* maxflow: set nodes (distinct token sets of D) */
    double certificate_gap; /* maxflow: cut value - feasible flow value */
} mdsd_alpha_route;

typedef struct {
    size_t size;             /* set by the _init below; checked by the library */
    size_t ran;              /* routes that gave a value */
    double alpha;            /* auto's method's value, else the first route's that ran */
    double max_disagreement; /* largest |alpha_a - alpha_b| over the routes that ran */
    int failures;            /* a route failed, or two disagree beyond tolerance */
    mdsd_alpha_route routes[MDSD_ALPHA_ROUTES]; /* in the order above */
} mdsd_alpha_routes;

/* Zeroes routes and sets size. */
MDSD_API void mdsd_alpha_routes_init(mdsd_alpha_routes *routes, size_t size);
#define mdsd_alpha_routes_init(routes) mdsd_alpha_routes_init((routes), sizeof *(routes))

/* Every route that applies to s, as mdsd_alpha runs each (opts may be NULL).
 * subsets: NULL or [MDSD_ALPHA_ROUTES * V], route k's optimal H at
 * subsets + k V. Returns MDSD_OK; or, when no route ran, the first failure
 * (routes->ran = 0); or, with routes filled, the first route's failure or
 * else MDSD_ESOLVER when two routes disagree by more than 1e-9 (1e-7 where an
 * LP is one of them), the message naming the pair. */
MDSD_API mdsd_status mdsd_alpha_all(const double *p, const mdsd_scheme *s,
                                    const mdsd_alpha_opts *opts, mdsd_alpha_routes *routes,
                                    unsigned char *subsets, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
