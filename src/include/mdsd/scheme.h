/* mdsd/scheme.h - draft schemes: how the joint law D of the n draft tokens is
 * built from the draft distribution q, and exact samplers of D.
 *
 *   iid     with replacement            D(x) = prod q(x_j)
 *   wor     sequential, no replacement  D(x) = prod q(x_j) / (1 - sum_{l<j} q(x_l))
 *   greedy  Hu et al. section 5         x_1..x_{n-1} = top n-1 of q, x_n ~ q on the rest
 *   hub     SpecHub section 4 (n = 2)
 *   cps     conditional Poisson         n distinct tokens w.p. prop. to prod q
 *   multi   different drafters          D(x) = prod q_j(x_j)
 *   custom  a sparse list of (tuple, probability) */
#ifndef MDSD_PUBLIC_SCHEME_H
#define MDSD_PUBLIC_SCHEME_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MDSD_SCHEME_IID,
    MDSD_SCHEME_WOR,
    MDSD_SCHEME_GREEDY,
    MDSD_SCHEME_HUB,
    MDSD_SCHEME_CPS,
    MDSD_SCHEME_MULTI,
    MDSD_SCHEME_CUSTOM,
    MDSD_SCHEME_COUNT
} mdsd_scheme_kind;

/* A sparse joint law over draft tuples (custom scheme). */
typedef struct {
    size_t n;            /* tuple length (number of drafts) */
    size_t count;        /* number of tuples */
    mdsd_token *tokens;  /* [count * n]: tuple t is tokens[t*n .. t*n+n) */
    double *prob;        /* [count] */
} mdsd_joint;

/* A draft scheme. The arrays stay the caller's; functions that keep a scheme
 * (samplers, verifiers) copy what they need. */
typedef struct {
    mdsd_scheme_kind kind;
    size_t n;                  /* number of drafts */
    size_t V;                  /* vocabulary size */
    const double *q;           /* [V]; multi: [n * V], row j = drafter j; custom: unused */
    const mdsd_joint *custom;  /* custom only */
} mdsd_scheme;

/* "iid", "wor", "greedy", "hub", "cps", "multi", "custom". */
MDSD_API const char *mdsd_scheme_name(mdsd_scheme_kind kind);
MDSD_API mdsd_status mdsd_scheme_parse(const char *name, mdsd_scheme_kind *kind, mdsd_err *err);

/* An exact sampler of D. Validates q; copies what it needs. */
typedef struct mdsd_sampler mdsd_sampler;
MDSD_API mdsd_sampler *mdsd_sampler_new(const mdsd_scheme *s, mdsd_err *err);
/* Draws one tuple of n draft tokens into drafts[0..n). */
MDSD_API void mdsd_sampler_draw_drafts(const mdsd_sampler *sm, mdsd_rng *rng, mdsd_token *drafts);
MDSD_API void mdsd_sampler_free(mdsd_sampler *sm);

/* draft --subset: Q(H) = P(all n drafts lie in H) under D, H the `count` token
 * ids tokens[] (each < V; repeats allowed), by enumerating D: MDSD_ETOOBIG past
 * max_tuples tuples (draft --max-tuples; 0 = the CLI's default, 10^6). */
MDSD_API mdsd_status mdsd_subset_probability(const mdsd_scheme *s, const size_t *tokens,
                                             size_t count, size_t max_tuples, double *Q,
                                             mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
