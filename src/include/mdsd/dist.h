/* mdsd/dist.h - probability vectors from logits: softmax with temperature,
 * validation, decoding truncation (top-k / top-p). p = target, q = draft. */
#ifndef MDSD_PUBLIC_DIST_H
#define MDSD_PUBLIC_DIST_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* p[0..V) = softmax(logits / T), accumulated in double with the max
 * subtracted. T = 0 means argmax one-hot (ties to the lowest index). NaN and
 * +inf logits are errors naming `what` and the index; -inf is probability 0. */
MDSD_API mdsd_status mdsd_softmax(const double *logits, size_t V, double T, double *p, const char *what,
                 mdsd_err *err);
MDSD_API mdsd_status mdsd_softmax_float(const float *logits, size_t V, double T, double *p, const char *what,
                       mdsd_err *err);

/* Checks that p[0..V) is a probability vector and renormalises it IN PLACE. */
MDSD_API mdsd_status mdsd_probs_validate(double *p, size_t V, const char *what, mdsd_err *err);

/* Decoding truncation of a valid distribution, IN PLACE, as decoders do: keep
 * the top_k most likely tokens (0 = no limit; ties to the lower index) and
 * renormalise, then the smallest prefix by decreasing probability whose mass
 * reaches top_p, in (0, 1] (1 = no limit; 0 is refused), and renormalise.
 * Masses are summed exactly; probability-0 tokens are never kept (MATH.md §0.3). */
MDSD_API mdsd_status mdsd_truncate(double *p, size_t V, size_t top_k, double top_p, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
