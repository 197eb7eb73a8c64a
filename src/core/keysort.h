/* keysort.h - the one sort kernel of tokens by a double key, and the stable
 * LSD radix sort of 64-bit words under it. Used by the q/p order
 * (qporder.c), rrsw's tables (verify_rrsw_exact.c) and the set law's tuple
 * aggregation (lp.c, the radix sort alone).
 *
 * Tokens by a double key: key[t] >= 0 (+inf allowed, -0 taken as +0, no
 * NaN), ascending or descending, ties by increasing token. An LSD radix
 * sort on the float image of the key, which is monotone in the double and
 * so orders the keys up to runs of equal floats; then each run of equal
 * floats put in the exact order of the doubles: a counting sort on the
 * distance in double ulps where the run spans at most 255 of them (ties up
 * to rounding, as the softmax of quantised logits makes), a radix sort on
 * that distance where it fits 32 bits, qsort beyond (keys whose float
 * overflows or underflows). */
#ifndef MDSD_KEYSORT_H
#define MDSD_KEYSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"

/* Counters mdsd_radix_sort needs for bits [lo, hi) in `width`-bit digits. */
#define MDSD_RADIX_COUNT(lo, hi, width) ((((hi) - (lo) + (width) - 1) / (width)) << (width))

/* Stable LSD radix sort of w[0..m) by bits [lo, hi) of each word (0 <= lo <
 * hi <= 64), in digits of `width` bits (1..16; the last one may be
 * narrower), histograms of every digit in one read, passes whose digit all
 * words share skipped. It ping-pongs between w and tmp and returns the one
 * holding the result. idx (NULL: none) points to an array [m] that moves
 * with the words, ping-ponging with idx_tmp; *idx is set to the one holding
 * the result. count: MDSD_RADIX_COUNT(lo, hi, width) counters. */
uint64_t *mdsd_radix_sort(uint64_t *w, uint64_t *tmp, uint32_t **idx, uint32_t *idx_tmp, size_t m,
                          unsigned lo, unsigned hi, unsigned width, uint32_t *count);

/* Scratch for up to cap tokens. */
typedef struct {
    size_t cap;
    uint64_t *w, *tmp; /* [cap] words (float key << 32 | token), ping-pong */
    void *run;         /* [cap] 16-byte entries: the run fix-up's scratch */
} mdsd_keysort;

int mdsd_keysort_init(mdsd_keysort *ks, size_t cap, mdsd_err *err);
void mdsd_keysort_destroy(mdsd_keysort *ks);

/* The float key of a double key: words (this << 32 | token) in increasing
 * order are the keys ascending (desc: descending) up to runs of equal floats. */
static inline uint32_t mdsd_keysort_float_key(double key, bool desc)
{
    float f = (float)(key + 0.0); /* -0 + 0 = +0 */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return desc ? ~bits : bits;
}

/* The tokens of the words w[0..m) (mdsd_keysort_float_key(key[t], desc) << 32
 * | t, in increasing order of t: the sort is stable, so that is the order of
 * ties) into out[0..m), by key[t] ascending or descending, ties by token.
 * w is overwritten; it may be ks->w but not ks->tmp or ks->run. Bits of the
 * float key above varying_bits (32, or 17 for words of one bucket of
 * qporder.h's sort-free route, which share the key's top 15 bits) must be
 * the same in every word. */
void mdsd_keysort_words(mdsd_keysort *ks, const double *key, bool desc, uint64_t *w, size_t m,
                        unsigned varying_bits, uint32_t *out);

/* The tokens tok[0..m) (m <= ks->cap), given by increasing token, put in
 * increasing order of zp[t] - zq[t] computed exactly (mdsd_logit_gap's
 * (hi, lo) compared in turn: at one temperature the order of p/q, without
 * exp), ties by increasing token; every zp[t], zq[t] finite. A radix sort
 * on hi's bits, then the rare runs of equal hi by lo. The one sort of the
 * logit order (ot's layout, gbv's ranks on tree dumps). */
void mdsd_keysort_logit_gap(mdsd_keysort *ks, const float *zp, const float *zq, uint32_t *tok,
                            size_t m);

/* Tokens 0..m-1 by key[0..m) ascending or descending, ties by token, into
 * out[0..m) (m <= ks->cap). */
void mdsd_keysort_tokens(mdsd_keysort *ks, const double *key, bool desc, size_t m, uint32_t *out);

#endif
