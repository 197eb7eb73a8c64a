/* dist.h - probability vectors: softmax with temperature, validation,
 * decoding truncation (top-k / top-p) and compensated sums.
 *
 * A distribution is a plain double[V]: index = token id. Notation as in
 * MATH.md: p = target, q = draft. */
#ifndef MDSD_DIST_H
#define MDSD_DIST_H

#include <stddef.h>

#include "err.h"
/* mdsd_softmax, mdsd_softmax_float, mdsd_probs_validate, mdsd_truncate are public. */

/* Temperatures in (0, this) are refused: 1/T would overflow (0 = argmax). */
#define MDSD_MIN_TEMPERATURE 1e-300
#include <mdsd/dist.h>

/* Sum tolerance: a probability vector whose sum is within this of 1 is
 * renormalised silently; further away it is an error. */
#define MDSD_PROB_SUM_TOL 1e-6

/* Neumaier-compensated sum of x[0..n). */
double mdsd_sum(const double *x, size_t n);

/* Index of the largest value; ties go to the lowest index. */
size_t mdsd_argmax(const double *x, size_t n);

/* Number of strictly positive entries. */
size_t mdsd_support_size(const double *p, size_t V);

/* Checks that p[0..V) is a probability vector and renormalises it in place.
 * Errors name `what` (e.g. "target") and the offending index: NaN, +-inf,
 * negative values, a sum that is not within MDSD_PROB_SUM_TOL of 1, or V = 0. */
mdsd_status mdsd_probs_validate(double *p, size_t V, const char *what, mdsd_err *err);
/* The same, a sum away from 1 saying `hint` (what to do) instead of
 * mdsd_probs_validate's "pass `logits` if these are logits": for inputs
 * that are probabilities whatever the command's options (a `markov` file's
 * rows, a custom `joint`), where `logits` would name no remedy. */
int mdsd_probs_validate_hint(double *p, size_t V, const char *what, const char *hint, mdsd_err *err);
/* The same into out[0..V) (p untouched), in one pass over p: out = the
 * validated, renormalised p, with the same values and errors. */
int mdsd_probs_validate_copy(const double *p, size_t V, double *out, const char *what,
                             mdsd_err *err);

/* p = softmax(logits / T), accumulated in double with the max subtracted.
 * T = 0 means argmax one-hot (ties to the lowest index); T < 0 is an error.
 * NaN and +inf logits are errors naming the index; -inf logits are legal
 * (probability 0); all -inf is an error. */
mdsd_status mdsd_softmax(const double *logits, size_t V, double T, double *p,
                 const char *what, mdsd_err *err);
/* The same for float logits, as read from dumps. */
mdsd_status mdsd_softmax_float(const float *logits, size_t V, double T, double *p,
                       const char *what, mdsd_err *err);

/* Decoding truncation applied to a validated distribution, in place
 * (MATH.md §0.3): rank the tokens by decreasing probability, ties to the
 * lower index; keep the top_k first (0 = no limit) and renormalise; then keep
 * the smallest prefix of the renormalised ranks whose mass reaches top_p
 * (1 = no limit) and renormalise. Masses are summed exactly (xsum.h) and
 * rounded once; tokens of probability 0 are never kept. */
mdsd_status mdsd_truncate(double *p, size_t V, size_t top_k, double top_p, mdsd_err *err);



/* Writes the k largest entries' indices, by decreasing value with ties to the
 * lower index, into top[0..k). k must not exceed n; x must hold no NaN.
 * One pass for k <= 64 (O(n) plus O(k) per entry into the top k). */
void mdsd_top_indices(const double *x, size_t n, size_t k, int *top);

/* zp - zq = *hi + *lo exactly (Knuth's two-sum; logits that are floats, as
 * doubles, so no overflow; both finite): at one temperature p(x)/q(x) is
 * increasing in it, so (hi, lo) compared in turn rank tokens by the ratio
 * exactly and without exp (tree dumps: ot's layout, gbv's ranks). */
static inline void mdsd_logit_gap(double zp, double zq, double *hi, double *lo)
{
    double minus_zq = -zq, s = zp + minus_zq, v = s - zp;
    *hi = s;
    *lo = (zp - (s - v)) + (minus_zq - v);
}
#endif
