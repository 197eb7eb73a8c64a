/* xsum.h - exact sums of non-negative doubles (probability masses).
 *
 * Every double >= 0 is an integer multiple of 2^-1074 (the smallest
 * subnormal), so a sum of them is held exactly as a fixed-point integer in
 * those units: additions never round, a sum compares with a threshold
 * exactly (the top-p cut, MATH.md §0.3), and the value rounds once, to the
 * nearest double (ties to even). Subnormal masses count in full, whatever
 * the size of the others. Cost: a few word operations per term. */
#ifndef MDSD_XSUM_H
#define MDSD_XSUM_H

#include <stdint.h>

/* 1280 bits: terms below 2^64, sums below 2^206. */
#define MDSD_XSUM_WORDS 20

typedef struct {
    uint64_t w[MDSD_XSUM_WORDS]; /* little-endian words of the sum / 2^-1074 */
} mdsd_xsum;

/* s = 0. */
void mdsd_xsum_init(mdsd_xsum *s);
/* s += x, exactly; x must be finite, >= 0 and below 2^64 (else ignored). */
void mdsd_xsum_add(mdsd_xsum *s, double x);
/* The sign of a - b: -1, 0 or 1, exactly. */
int mdsd_xsum_cmp(const mdsd_xsum *a, const mdsd_xsum *b);
/* The sum rounded to the nearest double, ties to even (one rounding). */
double mdsd_xsum_round(const mdsd_xsum *s);

#endif
