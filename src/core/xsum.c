/* xsum.c - exact sums of non-negative doubles (xsum.h). */
#include "xsum.h"

#include <math.h>
#include <string.h>

void mdsd_xsum_init(mdsd_xsum *s)
{
    memset(s, 0, sizeof *s);
}

void mdsd_xsum_add(mdsd_xsum *s, double x)
{
    if (!(x >= 0.0 && x < 0x1p64))
        return;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint64_t e = bits >> 52, m = bits & ((UINT64_C(1) << 52) - 1);
    /* x = m 2^-1074 (subnormal, e = 0) or (2^52 + m) 2^(e - 1075): in units
     * of 2^-1074 the mantissa shifted left by e - 1 */
    unsigned shift = 0;
    if (e) {
        m |= UINT64_C(1) << 52;
        shift = (unsigned)e - 1;
    }
    unsigned word = shift / 64, bit = shift % 64;
    uint64_t lo = m << bit, hi = bit ? m >> (64 - bit) : 0;
    uint64_t old = s->w[word];
    s->w[word] += lo;
    uint64_t carry = hi + (s->w[word] < old); /* hi < 2^53: no wrap */
    for (unsigned i = word + 1; carry && i < MDSD_XSUM_WORDS; i++) {
        old = s->w[i];
        s->w[i] += carry;
        carry = s->w[i] < old;
    }
}

int mdsd_xsum_cmp(const mdsd_xsum *a, const mdsd_xsum *b)
{
    for (unsigned i = MDSD_XSUM_WORDS; i-- > 0;)
        if (a->w[i] != b->w[i])
            return a->w[i] > b->w[i] ? 1 : -1;
    return 0;
}

/* The 64 bits of s from bit lo up. */
static uint64_t window(const mdsd_xsum *s, unsigned lo)
{
    unsigned word = lo / 64, bit = lo % 64;
    uint64_t v = s->w[word] >> bit;
    if (bit && word + 1 < MDSD_XSUM_WORDS)
        v |= s->w[word + 1] << (64 - bit);
    return v;
}

/* Whether any bit of s below bit `below` is set. */
static int any_below(const mdsd_xsum *s, unsigned below)
{
    unsigned word = below / 64, bit = below % 64;
    for (unsigned i = 0; i < word; i++)
        if (s->w[i])
            return 1;
    return bit && (s->w[word] & ((UINT64_C(1) << bit) - 1)) != 0;
}

double mdsd_xsum_round(const mdsd_xsum *s)
{
    unsigned top = MDSD_XSUM_WORDS;
    while (top > 0 && s->w[top - 1] == 0)
        top--;
    if (top == 0)
        return 0.0;
    unsigned h = 64 * (top - 1) + 63 - (unsigned)__builtin_clzll(s->w[top - 1]); /* top bit */
    if (h <= 52) /* below 2^53 units: a subnormal or the smallest binade, exact */
        return ldexp((double)s->w[0], -1074);
    uint64_t mant = window(s, h - 52) & ((UINT64_C(1) << 53) - 1);
    int half = (int)(window(s, h - 53) & 1), sticky = h >= 54 && any_below(s, h - 53);
    if (half && (sticky || (mant & 1)))
        mant++; /* may reach 2^53: still exact as a double */
    return ldexp((double)mant, (int)h - 52 - 1074);
}
