/* wor_q.h - Q(H) = P(all n drafts lie in H) for the `wor` scheme (sequential
 * sampling without replacement, proportional to q), exactly and fast, and the
 * minimum of p(H_i) - Q(H_i) over the prefixes of a chain H_0 ⊂ H_1 ⊂ ...
 * (Hu et al.'s sort-and-scan for wor, MATH.md §2.4).
 *
 * Hu et al.'s generating-function formula W_{n,H} / W_{n,all} is NOT this Q
 * (it is the cps scheme's); this module computes the sequential probability.
 *
 * The route. Sampling without replacement is the arrival order of independent
 * exponential clocks with rates q(x), so with r = 1 - q(H)
 *     Q(H) = 1 - integral_0^inf r e^{-rt} R_H(t) dt,  R_H(t) = P(N_H(t) < n),
 * where N_H(t) counts the clocks of H that rang by t (a Poisson-binomial).
 * All exponential rates in the integrand are at most 1, and it decays at least
 * like e^{-lambda t} with lambda = mass of q outside its n-1 largest tokens,
 * so Gauss-Legendre panels [0,2], [2,4], [4,8], ... up to t_max >= 64/lambda
 * integrate it to about 1e-15. At each node:
 *   - the "big" tokens (q(x) t_max > rho, rho = min(1, 4/(n-1)): at most
 *     n - 1 + 64/rho of them, since the tokens outside the top n-1 have mass
 *     lambda) enter a Poisson-binomial DP exactly;
 *   - the "small" tokens enter through their power sums S_m = sum (q t_max)^m:
 *     P_l(t) = sum_x (e^{q(x) t} - 1)^l = sum_m a_{l,m} (t/t_max)^m S_m with
 *     a_{l,m} = [z^m] (e^z - 1)^l, each token's series cut where its tail is
 *     below 1e-17 of its own size (orders <= 8 for every token, branch-free;
 *     more only where needed), and the counts j < n follow from
 *     pi(z) = exp(-q(S) t + sum_l (-1)^{l+1} P_l z^l / l) (Newton's identities;
 *     the cancellation stays below 1e-15 because e^{q t} - 1 <= e - 1).
 * Power sums of any prefix come from block prefix tables, so one Q(H_i) costs
 * O(K (n M + n |big|)) with K ~ 14 log2(t_max) nodes and M ~ 10-40 orders,
 * independent of |H_i|. The truncation at t_max is checked on every call
 * (tail <= e^{-r T} R(T) <= 1e-16; otherwise t_max grows and the call is
 * repeated).
 *
 * The scan minimises p(H_i) - Q(H_i) by branch and bound over prefixes: on
 * [a, b] with Q(H_a), Q(H_b) known, Q(H_i) <= the chord in the q-mass
 * coordinate (Q is q-convex along any chain - Hu's Theorem 5 structure,
 * proved for the sequential Q in MATH.md §2.4, and the same property that
 * makes sort-and-scan valid for wor; Hu et al. prove it for their generating
 * function only). Along the q/p
 * order p(H_i) is convex in the same coordinate, so the bound's minimum over
 * the interval is found by bisection. An interval whose bound cannot beat the
 * best value found (minus tol) is dropped; otherwise Q is evaluated inside it
 * (at the bound's minimiser) and it is split. Typically 10-20 evaluations. */
#ifndef MDSD_WOR_Q_H
#define MDSD_WOR_Q_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct mdsd_wor_chain mdsd_wor_chain;

/* Workspace for chains of up to V tokens and n drafts. */
mdsd_wor_chain *mdsd_wor_chain_alloc(size_t V, size_t n, mdsd_err *err);
void mdsd_wor_chain_free(mdsd_wor_chain *c);

/* Switches the workspace to n drafts (small tables only; the chain must then
 * be set again). */
int mdsd_wor_chain_set_drafts(mdsd_wor_chain *c, size_t n, mdsd_err *err);

/* Sets the chain H_i = {chain[0..i)}, 0 <= i <= N: chain[0..N) must list every
 * token with q > 0 exactly once (and no other), so that H_N = supp q. q and
 * chain are referenced, not copied, until the next set. Requires N >= n. */
int mdsd_wor_chain_set(mdsd_wor_chain *c, const double *q, const uint32_t *chain, size_t N,
                       mdsd_err *err);

/* Q(H_i), exact to about 1e-15, in [0, 1]. */
int mdsd_wor_chain_Q(mdsd_wor_chain *c, size_t i, double *Q, mdsd_err *err);

/* min over 0 <= i <= N of p(H_i) - Q(H_i) for the target p (indexed like q),
 * to within tol (plus the evaluation error); argmin is the prefix length
 * attaining it (0 = empty set), evaluations the number of Q(H_i) computed.
 * The chain must be in the sort-and-scan order (qporder.h: p/q of the
 * added tokens non-decreasing), which the interval bound relies on. */
int mdsd_wor_chain_min(mdsd_wor_chain *c, const double *p, double tol, double *fmin,
                       size_t *argmin, size_t *evaluations, mdsd_err *err);

/* Q(H) for any subset (in_H[x] != 0), through a chain with H first. */
int mdsd_wor_Q(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
               mdsd_err *err);

/* Independent reference: the same integral by GSL adaptive Gauss-Kronrod on
 * dyadic panels [0,1], [1,2], [2,4], ... up to 100/lambda, with the
 * Poisson-binomial DP over every token of H at each point (O(|H| n) per
 * point). Slow; for tests and checks. */
int mdsd_wor_Q_quad(const double *q, size_t V, size_t n, const unsigned char *in_H, double *Q,
                    mdsd_err *err);

#endif
