/* vexp.h - exp for arguments <= 0 in plain arithmetic, so that loops of it
 * vectorise and every clone (simd.h) gives the same bits (internal). Used by
 * the softmax (dist.c) and the wor quadrature's node tables (wor_bucket.c). */
#ifndef MDSD_VEXP_H
#define MDSD_VEXP_H

#include <stdint.h>
#include <string.h>

#include "simd.h"

/* exp(x) for x <= 0 (-inf included), written so that a loop of it
 * vectorises (glibc's exp is a scalar call, ~5 ns, and the softmax is 2V of
 * them per position). x = k ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2_hi
 * has 11 trailing zero bits, so k ln2_hi is exact); e^r by its Taylor series
 * to r^13 (truncation below 4e-18 relative); 2^k by building the exponent
 * bits, in two factors so that results down to the subnormals are rounded
 * once. Error about 1 ulp (tests/test_dist.c checks it against exp over the
 * whole range). x below -746 gives 0, as exp does. */
MDSD_NO_TRAP static inline double mdsd_exp_nonpos(double x)
{
    const double shift = 0x1.8p52, log2e = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    x = x < -746.0 ? -746.0 : x;
    double t = x * log2e + shift; /* k + 1.5 2^52, rounded to the nearest integer k */
    double k = t - shift;
    double r = (x - k * ln2_hi) - k * ln2_lo;
    /* e^r = 1 + (r + r^2 P(r)), P by Estrin's scheme (a dependency chain of
     * ~10 operations instead of Horner's 26); the 1 added last keeps the
     * error near half an ulp plus that of the small part. */
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double c23 = 0.5 + r * (1.0 / 6.0), c45 = 1.0 / 24.0 + r * (1.0 / 120.0);
    double c67 = 1.0 / 720.0 + r * (1.0 / 5040.0), c89 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    double c1011 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    double c1213 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    double P = ((c23 + r2 * c45) + r4 * (c67 + r2 * c89)) + r8 * (c1011 + r2 * c1213);
    double e = 1.0 + (r + r2 * P);
    /* 2^k = 2^k1 2^k2 with k1 >= -1000 normal, k2 in [-77, 0]. */
    double k1 = k < -1000.0 ? -1000.0 : k, k2 = k - k1;
    double t1 = k1 + shift, t2 = k2 + shift;
    uint64_t b1, b2, bs;
    memcpy(&b1, &t1, sizeof b1);
    memcpy(&b2, &t2, sizeof b2);
    memcpy(&bs, &shift, sizeof bs);
    b1 = (b1 - bs + 1023) << 52;
    b2 = (b2 - bs + 1023) << 52;
    double s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return e * s1 * s2;
}

#endif
