/* scheme.h - draft schemes (MATH.md section 1): how the joint distribution D
 * of the n draft tokens is built from the draft distribution q.
 *
 *   iid     with replacement            D(x) = prod q(x_j)
 *   wor     sequential, no replacement  D(x) = prod q(x_j) / (1 - sum_{l<j} q(x_l))
 *   greedy  Hu et al. section 5         x_1..x_{n-1} = top n-1 of q, x_n ~ q on the rest
 *   hub     SpecHub section 4 (n = 2)   a = argmax q; D(x,a) = q(x), D(a,x) = q(a)q(x)/(1-q(a))
 *   cps     conditional Poisson         n distinct tokens w.p. prop. to prod q, random order
 *   multi   different drafters          D(x) = prod q_j(x_j)
 *   custom  a user-supplied sparse list of (tuple, probability)
 *
 * This module provides the slow, obviously-correct references: D by
 * enumeration, Q(H) = P(all drafts in H) from D, and exact samplers. */
#ifndef MDSD_SCHEME_H
#define MDSD_SCHEME_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "err.h"

/* mdsd_scheme_kind, mdsd_joint, mdsd_scheme: the public header. */
#include <mdsd/scheme.h>

/* Default guard for enumeration: at most this many tuples. */
#define MDSD_JOINT_MAX_TUPLES ((size_t)1 << 22)
/* `mdsd draft --max-tuples`'s default, also mdsd_subset_probability's for max_tuples = 0. */
#define MDSD_DRAFT_MAX_TUPLES ((size_t)1000000)
/* Drafts per position: far above any draft tree in use (the papers' n <= 16;
 * the SpecTr Lemma 1 check goes to 8,192),
 * and low enough that per-draft tables are small. */
#define MDSD_MAX_DRAFTS 65536

const char *mdsd_scheme_name(mdsd_scheme_kind kind);
/* Parses a scheme name; MDSD_EINVAL with the list of names if unknown. */
mdsd_status mdsd_scheme_parse(const char *name, mdsd_scheme_kind *kind, mdsd_err *err);

/* Checks that the scheme is well defined: n >= 1, hub has n = 2, wor and cps
 * need n <= |supp q|, greedy and hub need a token outside the fixed ones,
 * multi rows and custom tuples agree with n and V. q must already be a
 * validated probability vector (dist.h). */
int mdsd_scheme_check(const mdsd_scheme *s, mdsd_err *err);

/* Number of tuples the enumeration would produce (as a double: may be huge). */
double mdsd_scheme_joint_size(const mdsd_scheme *s);

/* Enumerates D (tuples of positive probability only). Refuses with
 * MDSD_ETOOBIG when more than max_tuples tuples would be produced. */
int mdsd_scheme_joint(const mdsd_scheme *s, size_t max_tuples, mdsd_joint *out, mdsd_err *err);

void mdsd_joint_free(mdsd_joint *D);

/* Q(H) = P(all drafts in H) = sum over tuples inside H, compensated.
 * in_H[v] != 0 marks membership. */
double mdsd_joint_Q(const mdsd_joint *D, const unsigned char *in_H);

/* Sorts the tuples lexicographically and merges repeated tuples (summing
 * their probabilities), so that mdsd_joint_find can binary-search. */
int mdsd_joint_sort(mdsd_joint *D, mdsd_err *err);
/* Index of tuple in a sorted joint, or -1. */
long mdsd_joint_find(const mdsd_joint *D, const int *tuple);

/* Validates a custom joint against V: tokens in [0, V), probabilities
 * finite, non-negative, summing to 1 within MDSD_PROB_SUM_TOL (renormalised). */
int mdsd_joint_validate(mdsd_joint *D, size_t V, mdsd_err *err);

/* Reads a custom joint from a text file: one tuple per line,
 *   x_1 x_2 ... x_n  probability
 * whitespace-separated token ids then the probability; '#' starts a comment.
 * Every line must have the same n. */
int mdsd_joint_read(const char *path, mdsd_joint *out, mdsd_err *err);

/* Exact sampler for a scheme. Draws are O(1) (GSL's Walker alias tables)
 * except wor's rare fallback and cps, which is O(V) per draw. The sampler
 * copies what it needs: the scheme's arrays may be freed afterwards. */
typedef struct mdsd_sampler mdsd_sampler;

mdsd_sampler *mdsd_sampler_alloc(const mdsd_scheme *s, mdsd_err *err);
/* Writes one tuple of n tokens. Thread-safe for distinct rngs. */
void mdsd_sampler_draw(const mdsd_sampler *sm, gsl_rng *rng, int *tuple);
void mdsd_sampler_free(mdsd_sampler *sm);

#endif
