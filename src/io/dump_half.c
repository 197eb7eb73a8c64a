/* dump_half.c - float <-> float16 / bfloat16 bit patterns (round to nearest
 * even, as numpy and torch do). */
#include "dump_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

unsigned short mdsd_float_to_bfloat16(float x)
{
    uint32_t u = float_bits(x);
    if (isnan(x))
        return (unsigned short)((u >> 16) | 0x40); /* keep it a quiet NaN */
    u += 0x7fff + ((u >> 16) & 1);                  /* round to nearest even */
    return (unsigned short)(u >> 16);
}

float mdsd_bfloat16_to_float(unsigned short b)
{
    return bits_float((uint32_t)b << 16);
}

unsigned short mdsd_float_to_half(float x)
{
    uint32_t u = float_bits(x);
    uint32_t sign = (u >> 16) & 0x8000;
    uint32_t a = u & 0x7fffffff;
    if (a > 0x7f800000)
        return (unsigned short)(sign | 0x7e00);     /* NaN */
    if (a >= 0x477ff000)                            /* rounds to >= 65520: inf */
        return (unsigned short)(sign | 0x7c00);
    if (a < 0x38800000) {                           /* below 2^-14: subnormal half */
        /* value = a as float; half subnormal unit is 2^-24: scale and round
         * to nearest even in float arithmetic, which is exact here. */
        float f = bits_float(a) * 16777216.0f;      /* 2^24 */
        float r = nearbyintf(f);                    /* default mode: ties to even */
        return (unsigned short)(sign | (uint32_t)r);
    }
    uint32_t mant = a & 0x7fffff;
    uint32_t exp = (a >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++;                                        /* carries into the exponent correctly */
    return (unsigned short)(sign | h);
}

float mdsd_half_to_float(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        float f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    }
    if (exp == 31)
        return bits_float(sign | 0x7f800000 | (mant << 13));
    return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}
