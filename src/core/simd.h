/* simd.h - how the library's hot loops are vectorised (internal).
 *
 * MDSD_SIMD_CLONES on a function compiles it for SSE2 (the x86-64 baseline),
 * AVX2 and AVX-512 and picks the clone when the program loads (GCC
 * target_clones, an ifunc). Clones give the same bits: the build's -std=c11
 * forbids contracting a * b + c into an FMA, and reductions go through
 * MDSD_LANES explicit accumulators, so the order of the additions is the
 * code's, not the vector width's. Such loops carry `#pragma omp simd`
 * (the build has -fopenmp), which vectorises them at -O2.
 *
 * MDSD_NO_TRAP (part of MDSD_SIMD_CLONES) compiles without -ftrapping-math,
 * so that GCC turns conditionals such as x < c ? c : x into vector blends;
 * no value changes (nothing in the library reads the FP exception flags).
 * Functions inlined into a clone must carry MDSD_NO_TRAP too. */
#ifndef MDSD_SIMD_H
#define MDSD_SIMD_H

#define MDSD_LANES 8

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MDSD_NO_TRAP __attribute__((optimize("no-trapping-math")))
#define MDSD_SIMD_CLONES \
    __attribute__((target_clones("default", "avx2", "avx512f"), optimize("no-trapping-math")))
#else
#define MDSD_NO_TRAP
#define MDSD_SIMD_CLONES
#endif

/* Neumaier's compensated addition of x to (*s, *c), as used by the lanes. */
#define MDSD_NEUMAIER_ADD(s, c, x)                                         \
    do {                                                                   \
        double t_ = (s) + (x);                                             \
        (c) += fabs(s) >= fabs(x) ? ((s) - t_) + (x) : ((x) - t_) + (s);  \
        (s) = t_;                                                          \
    } while (0)

/* Kahan's compensated addition of x to (s, c): the one copy of the step the
 * lanes and the scalar sums use (a macro, so that it vectorises inside the
 * omp simd loops over lanes). s + c is the sum. */
#define MDSD_KAHAN_ADD(s, c, x)                                            \
    do {                                                                   \
        double y_ = (x) - (c), t_ = (s) + y_;                              \
        (c) = (t_ - (s)) - y_;                                             \
        (s) = t_;                                                          \
    } while (0)

#endif
