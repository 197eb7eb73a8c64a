/* block.h - block efficiency: what one target call yields when the drafts
 * are several tokens long (MATH.md §5).
 *
 * Drafting policies (mdsd_policy):
 *   seq   K i.i.d. draft sequences of length L (SpecTr Alg. 3, Khisti et al.)
 *   tree  widths w_1..w_L: a node at depth d-1 draws w_d children from
 *         q(.|node) by a draft scheme (iid, wor, greedy, hub); equal tokens
 *         are one child (a token tree is a trie), with one subtree.
 * Token-level recursive verification: at a node the verifier sees the
 * tokens of the drafts through it (draft order), p(.|node), q(.|node), and
 * outputs y ~ p(.|node). A drafted y is accepted and verification goes on
 * at child y with the drafts whose token there is y; otherwise y is the
 * correction token and the step ends; past depth L one bonus token comes
 * from p. tau = accepted tokens + 1; block efficiency = E[tau]; per-depth
 * rate d = P(depth d accepted | depth d-1 accepted).
 *
 * A seq node with m surviving drafts runs the verifier on the iid scheme
 * with n = m (their next tokens are fresh i.i.d. draws); a tree node at
 * depth d-1 on the policy's scheme with n = w_d.
 *
 * Three routes on a Markov toy pair, all built on the verifier's conditional
 * output law given the drafts (mdsd_verifier_law):
 *   exact      backward recursion over (depth, token, drafts left),
 *              enumerating every draft tuple at every node;
 *   sampled    T draft trees, the verifier's randomness integrated out
 *              exactly on each (an unbiased estimate with its s.e.);
 *   simulate   T plain speculative steps calling mdsd_verifier_verify: the
 *              slow, independent reference of the tests.
 * And the optimum over all token-level verifiers (mdsd_block_optimal_token):
 * backward induction with one OTM LP per node (GLPK); the optimum over every
 * lossless verifier that sees the whole draft (mdsd_block_optimal_block, an
 * LP); and the block verifiers of blockv.h (bv, gbv, traversal). */
#ifndef MDSD_BLOCK_H
#define MDSD_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "scheme.h"
#include "verifier.h"

#define MDSD_BLOCK_MAX_DEPTH 32
#define MDSD_BLOCK_MAX_DRAFTS 16   /* K, and every tree width */
#define MDSD_MARKOV_MAX_V 4096

/* ---- Markov toy pair --------------------------------------------------- */

/* Next-token laws after each token; the context is token 0. */
typedef struct {
    size_t V;
    double *p;  /* [V * V]: row i = target's next-token law after token i */
    double *q;  /* [V * V]: the draft's */
} mdsd_markov;

/* Reads a Markov toy file: first line V, then V rows of V whitespace-separated
 * probabilities (the target's transition matrix), one or more blank lines,
 * then the draft's V rows; nothing else. Each row must be a probability
 * vector (dist.h's tolerance; renormalised). Errors name the file and line. */
int mdsd_markov_read(const char *path, mdsd_markov *m, mdsd_err *err);
/* The same pair from two V x V row-major matrices (copied), each row
 * checked as a row of the file (errors name the matrix, row and value). */
int mdsd_markov_from_arrays(size_t V, const double *p, const double *q, mdsd_markov *m,
                            mdsd_err *err);
void mdsd_markov_free(mdsd_markov *m);

/* ---- drafting policy --------------------------------------------------- */

typedef enum { MDSD_POLICY_SEQ, MDSD_POLICY_TREE } mdsd_policy_kind;

typedef struct {
    mdsd_policy_kind kind;
    size_t depth;                       /* L >= 1 */
    size_t sequences;                   /* seq: K >= 1 */
    size_t width[MDSD_BLOCK_MAX_DEPTH]; /* tree: width[d] = w_{d+1} >= 1 */
    mdsd_scheme_kind scheme;            /* tree: the children's scheme */
} mdsd_policy;

/* Checks the sizes (not the verifier: that is checked at every node). */
int mdsd_policy_check(const mdsd_policy *pol, mdsd_err *err);
/* "seq K=3 L=2" or "tree 2,2,1 iid" into buf. */
const char *mdsd_policy_describe(const mdsd_policy *pol, char *buf, size_t size);
/* Draft tokens in a whole draft (seq: K L; tree: w_1 + w_1 w_2 + ..., the
 * most a trie can hold): the tree size of the cost model. */
double mdsd_policy_size(const mdsd_policy *pol);

/* ---- results ----------------------------------------------------------- */

typedef struct {
    size_t depth;                          /* L */
    double tau;                            /* E[tau] = 1 + sum_d reach[d] */
    double se;                             /* standard error (0 for exact routes) */
    uint64_t trials;                       /* 0 for exact routes */
    double reach[MDSD_BLOCK_MAX_DEPTH + 1];/* reach[d] = P(at least d accepted); reach[0] = 1 */
    double rate[MDSD_BLOCK_MAX_DEPTH + 1]; /* rate[d] = reach[d] / reach[d-1], d = 1..L */
} mdsd_block_result;

typedef struct {
    uint64_t trials;    /* sampled / simulate */
    uint64_t seed;
    int threads;        /* 0 = OpenMP default; the result does not depend on it */
    mdsd_verifier_opts vopts;
    double max_seconds; /* optimal-block: the LP cost guard (lp.h); 0 = MDSD_LP_MAX_SECONDS,
                         * INFINITY = none (--force) */
} mdsd_block_opts;

void mdsd_block_opts_init(mdsd_block_opts *o); /* trials 10^4, seed 1, threads 0 */

/* Exact E[tau] and per-depth rates of a verifier under a policy. */
int mdsd_block_exact(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                     const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

/* T sampled draft trees (blocks of MDSD_BLOCK_TRIAL_BLOCK trials, block b
 * from the stream mdsd_seed_mix(seed, b, mdsd_seed_name("block-trees")):
 * the same trees for every verifier), the verifier's randomness integrated
 * out on each. */
#define MDSD_BLOCK_TRIAL_BLOCK 4096
int mdsd_block_sampled(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                       const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

/* T plain speculative steps (draw the drafts, run mdsd_verifier_verify down
 * the tree): the independent reference (stream name "block-simulate"). */
int mdsd_block_simulate(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                        const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

/* The largest E[tau] of any token-level verifier under the policy: at each
 * node the OTM LP whose reward for accepting y is 1 + the optimal expected
 * accepted tokens of child y with its surviving drafts (GLPK, rational
 * simplex). reach/rate are those of the optimal plan found (the optimum
 * need not be unique; tau is). */
int mdsd_block_optimal_token(const mdsd_markov *m, const mdsd_policy *pol,
                             const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

/* otm-tiebreak (MATH.md §5.4): the token-level verifier that, at every node,
 * takes among the couplings reaching alpha* (the OTM LP's optimal face) one
 * of largest 1 + value of the accepted child, its own values below
 * (backward induction, GLPK's rational simplex twice per node). */
int mdsd_block_otm_tiebreak(const mdsd_markov *m, const mdsd_policy *pol,
                            const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

/* optimal-block (MATH.md §5.8): the largest E[tau] of any lossless verifier
 * that sees the whole draft (its sequences or tree) - an LP over the joint
 * law of the draft and the step's output (GLPK, rational simplex), refused
 * past the LP cost guard (o->max_seconds) and the enumeration guard
 * (o->vopts.max_tuples). reach/rate are those of the optimum found. */
int mdsd_block_optimal_block(const mdsd_markov *m, const mdsd_policy *pol,
                             const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err);

#endif
