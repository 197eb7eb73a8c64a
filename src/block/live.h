/* live.h - live decoding on a Markov toy pair (MATH.md §5.9): tokens per
 * target call when blocks follow one another, each starting where the last
 * one stopped, against the average over fixed positions that a tree dump
 * drawn at fixed response positions estimates.
 *
 * One block from context token s (a token-level verifier under a policy,
 * block.h) yields tau tokens, the last of them (the correction or the bonus
 * token) the next block's context. With B_s(j, s') = P(tau = j, last token
 * s' | s) (a forward pass over the nodes, see live.c):
 *   horizon N >= 1  a live run of N tokens from token 0: blocks start at
 *                   positions t < N; live = E[sum of tau] / E[calls] over the
 *                   calls of the run (every token of a call counted, also past
 *                   N), positions = (1/N) sum_{t < N} E[tau | token at t - 1]
 *                   along the target's own chain from token 0;
 *   horizon 0       the long run: live = sum_s pi_B(s) E[tau | s], pi_B the
 *                   stationary law of the block-start chain M = sum_j B(j);
 *                   positions = sum_s pi_p(s) E[tau | s], pi_p the target
 *                   chain's (both must be unique: else MDSD_EINVAL).
 * The verifier must be lossless (the correction law is p(b|s) minus the
 * accepted mass of b, which a valid verifier never exceeds: checked). */
#ifndef MDSD_LIVE_H
#define MDSD_LIVE_H

#include "block.h"

typedef struct {
    size_t horizon;     /* N tokens; 0 = the long run */
    double live;        /* live tokens per target call */
    double calls;       /* E[calls] in the N tokens (horizon 0: 1 / live, calls per token) */
    double positions;   /* the position average of E[tau | context] */
    double first;       /* E[tau | context token 0] (mdsd_block_exact's value) */
} mdsd_block_live_result;

/* Guard: V * V * (L + 2) block-law entries and N * V block-start entries at
 * most (MDSD_ETOOBIG beyond). */
#define MDSD_LIVE_MAX_ENTRIES ((size_t)1 << 25)

/* tau_by_token (may be NULL): [V], E[tau | context token s]. */
int mdsd_block_live_exact(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                          size_t horizon, const mdsd_block_opts *o, mdsd_block_live_result *res,
                          double *tau_by_token, mdsd_err *err);

#endif
