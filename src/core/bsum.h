/* bsum.h - long sums that are fast and nearly as accurate as compensated ones.
 *
 * A Neumaier-compensated sum is a serial chain of three dependent additions
 * per term (~12 cycles), which dominates a scan over 32,000+ tokens. Here
 * terms go into a plain running sum for blocks of MDSD_BSUM_BLOCK terms (one
 * addition per term) and each block total enters a compensated offset, so
 * the error of a running value is about eps |offset| + MDSD_BSUM_BLOCK eps
 * (mass of the current block) instead of N eps |total|. The running value is
 * available after every term, which the prefix scans need. */
#ifndef MDSD_BSUM_H
#define MDSD_BSUM_H

#include <math.h>

#define MDSD_BSUM_BLOCK 64

typedef struct {
    double off, comp; /* compensated sum of the finished blocks */
    double local;     /* plain sum of the current block */
    unsigned count;   /* terms in the current block */
} mdsd_bsum;

static inline void mdsd_bsum_init(mdsd_bsum *b)
{
    b->off = b->comp = b->local = 0.0;
    b->count = 0;
}

static inline void mdsd_bsum_flush(mdsd_bsum *b)
{
    double t = b->off + b->local;
    b->comp += fabs(b->off) >= fabs(b->local) ? (b->off - t) + b->local : (b->local - t) + b->off;
    b->off = t;
    b->local = 0.0;
    b->count = 0;
}

static inline void mdsd_bsum_add(mdsd_bsum *b, double x)
{
    b->local += x;
    if (++b->count == MDSD_BSUM_BLOCK)
        mdsd_bsum_flush(b);
}

/* The running sum of every term added so far. */
static inline double mdsd_bsum_value(const mdsd_bsum *b)
{
    return b->off + (b->comp + b->local);
}

#endif
