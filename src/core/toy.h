/* toy.h - toy distribution families: random (target, drafts) instances for
 * the theorem checks (`mdsd check`) and for synthetic logit dumps
 * (`mdsd toy`). One instance is a target p and n_q draft distributions
 * q_1..q_{n_q} over V tokens, produced from (family, V, parameters, index,
 * rng) as logits (-inf = probability 0) or as probabilities.
 *
 * Families (parameter names as accepted by mdsd_toy_set / --param):
 *   bernoulli    V = 2, token 1 = "heads": p = Ber(b), q = Ber(a) (SpecTr's
 *                closed form). a, b fixed, or NaN = drawn U(0,1) per
 *                instance; grid = m > 0 puts (a, b) on {0, 1/m, .., 1}^2,
 *                instance index i -> a = (i mod (m+1))/m, b = (i div (m+1) mod (m+1))/m
 *                (drafter j uses a of index i + j).
 *   uniform      q uniform on d tokens, p uniform on d/r of those (SpecTr:
 *                alpha*_iid = 1 - (1 - 1/r)^n); supports placed by a random
 *                permutation. Defaults d = V (even part), r = 2.
 *   spechub-toy  SpecHub App. D: u_p, u_q ~ U(0,1)^V, logits u_p/T and
 *                (lambda u_p + (1 - lambda) u_q)/T; T = 1, lambda = 0.5. For dumps
 *                keep T = 1 and let the analysis temperature play T's role.
 *   dirichlet    p, q_j ~ Dirichlet(alpha, .., alpha) independently; alpha = 1.
 *   zipf         LLM-like heavy tails: per instance c = s exp(spread Z), target
 *                logits -c log(rank) + sigma Z_x on a random permutation of the
 *                ranks, draft logits = target logits + tau Z'_x (a correlated,
 *                noisier draft). s = 2, spread = 0.6, sigma = 0.5, tau = 0.5.
 *   degenerate   kind 0: q = p; 1: one-hot q; 2: disjoint supports; 3: zeros in
 *                p and in q (about 40% each, at least one kept); kind = -1
 *                (default) cycles with the instance index. Non-degenerate parts
 *                are Dirichlet(1).
 * Every drafter of an instance is an independent draw given the target
 * (identical for `uniform` and for degenerate kind 0). */
#ifndef MDSD_TOY_H
#define MDSD_TOY_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "err.h"

typedef enum {
    MDSD_TOY_BERNOULLI,
    MDSD_TOY_UNIFORM,
    MDSD_TOY_SPECHUB,
    MDSD_TOY_DIRICHLET,
    MDSD_TOY_ZIPF,
    MDSD_TOY_DEGENERATE,
    MDSD_TOY_FAMILIES
} mdsd_toy_family;

enum { MDSD_DEGEN_EQUAL, MDSD_DEGEN_ONE_HOT_Q, MDSD_DEGEN_DISJOINT, MDSD_DEGEN_ZEROS, MDSD_DEGEN_KINDS };

typedef struct {
    mdsd_toy_family family;
    size_t V;
    double a, b;          /* bernoulli: draft and target P(token 1); NaN = random */
    size_t grid;          /* bernoulli: grid resolution m, 0 = off */
    size_t d;             /* uniform: draft support size */
    double r;             /* uniform: ratio, target support d/r (an integer) */
    double T, lambda;     /* spechub-toy */
    double alpha;         /* dirichlet concentration */
    double s, spread, sigma, tau; /* zipf */
    int kind;             /* degenerate kind, -1 = by instance index */
} mdsd_toy;

/* "bernoulli", "uniform", "spechub-toy", "dirichlet", "zipf", "degenerate". */
const char *mdsd_toy_family_name(mdsd_toy_family f);
int mdsd_toy_family_parse(const char *name, mdsd_toy_family *out, mdsd_err *err);

/* The family's default parameters for vocabulary V. */
void mdsd_toy_init(mdsd_toy *t, mdsd_toy_family f, size_t V);
/* Sets one parameter by name (a, b, grid, d, r, T, lambda, alpha, s, spread,
 * sigma, tau, kind); error if the family has no such parameter. */
int mdsd_toy_set(mdsd_toy *t, const char *name, double value, mdsd_err *err);
/* Parses "name=value,name=value" through mdsd_toy_set. */
int mdsd_toy_set_list(mdsd_toy *t, const char *spec, mdsd_err *err);
/* Checks V and the parameters (bernoulli needs V = 2, uniform d <= V with
 * d/r an integer >= 1, lambda in [0,1], T > 0, ...). */
int mdsd_toy_check(const mdsd_toy *t, mdsd_err *err);
/* The family's parameters as "name=value,..." (for dump attributes). */
void mdsd_toy_describe(const mdsd_toy *t, char *buf, size_t size);

/* One instance: target logits lp[V] and draft logits lq[n_q * V] (row j =
 * drafter j). `index` selects grid points and degenerate kinds; randomness
 * comes from r only. */
int mdsd_toy_logits(const mdsd_toy *t, size_t index, gsl_rng *r, double *lp, size_t n_q,
                    double *lq, mdsd_err *err);
/* The same instance as probabilities p[V], q[n_q * V] (exact for families
 * defined by probabilities; softmax at temperature 1 of the logits
 * otherwise). Consumes r exactly as mdsd_toy_logits does. */
int mdsd_toy_probs(const mdsd_toy *t, size_t index, gsl_rng *r, double *p, size_t n_q, double *q,
                   mdsd_err *err);

#endif
