#include "dist.h"
#include "simd.h"
#include "vexp.h"
#include "xsum.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MDSD_LANES lanes of Neumaier's sum (they vectorise), then Neumaier over
 * the lane sums and their corrections: the error stays about eps |sum| +
 * n eps^2 sum |x| as for the serial loop. */
MDSD_SIMD_CLONES double mdsd_sum(const double *x, size_t n)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0};
    size_t i = 0;
    for (; i + MDSD_LANES <= n; i += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++)
            MDSD_NEUMAIER_ADD(s[j], c[j], x[i + j]);
    }
    for (size_t j = 0; i < n; i++, j++)
        MDSD_NEUMAIER_ADD(s[j], c[j], x[i]);
    double total = 0.0, comp = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++)
        MDSD_NEUMAIER_ADD(total, comp, s[j]);
    for (size_t j = 0; j < MDSD_LANES; j++)
        comp += c[j];
    return total + comp;
}

size_t mdsd_argmax(const double *x, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

MDSD_SIMD_CLONES size_t mdsd_support_size(const double *p, size_t V)
{
    size_t k = 0;
#pragma omp simd reduction(+ : k)
    for (size_t i = 0; i < V; i++)
        k += p[i] > 0.0;
    return k;
}

/* Whether every p[i] is finite and >= 0, without early exits (vectorises). */
MDSD_SIMD_CLONES static int all_finite_nonneg(const double *p, size_t V)
{
    int ok = 1;
#pragma omp simd reduction(& : ok)
    for (size_t i = 0; i < V; i++)
        ok &= p[i] >= 0.0 && p[i] < INFINITY;
    return ok;
}

MDSD_SIMD_CLONES static void scale(double *p, size_t V, double by)
{
#pragma omp simd
    for (size_t i = 0; i < V; i++)
        p[i] *= by;
}

/* out = p with the lanes' compensated sum of p and whether every p[i] is
 * finite and >= 0, in one pass. */
MDSD_SIMD_CLONES static double copy_checked_sum(const double *p, size_t V, double *out, int *ok)
{
    double s[MDSD_LANES] = {0}, c[MDSD_LANES] = {0};
    int good[MDSD_LANES];
    for (size_t j = 0; j < MDSD_LANES; j++)
        good[j] = 1;
    size_t i = 0;
    for (; i + MDSD_LANES <= V; i += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double x = p[i + j];
            out[i + j] = x;
            good[j] &= x >= 0.0 && x < INFINITY;
            MDSD_NEUMAIER_ADD(s[j], c[j], x);
        }
    }
    for (size_t j = 0; i < V; i++, j++) {
        double x = p[i];
        out[i] = x;
        good[j] &= x >= 0.0 && x < INFINITY;
        MDSD_NEUMAIER_ADD(s[j], c[j], x);
    }
    double total = 0.0, comp = 0.0;
    *ok = 1;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        MDSD_NEUMAIER_ADD(total, comp, s[j]);
        *ok &= good[j];
    }
    for (size_t j = 0; j < MDSD_LANES; j++)
        comp += c[j];
    return total + comp;
}

int mdsd_probs_validate_copy(const double *p, size_t V, double *out, const char *what,
                             mdsd_err *err)
{
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty distribution", what);
    int ok;
    double s = copy_checked_sum(p, V, out, &ok);
    if (!ok) /* the checks in order, for the message */
        return mdsd_probs_validate(out, V, what, err);
    if (fabs(s - 1.0) > MDSD_PROB_SUM_TOL)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LOGITS,
                                "%s: probabilities sum to %.9g, not 1 (tolerance %g); "
                                "pass `logits` if these are logits", what, s, MDSD_PROB_SUM_TOL);
    if (s != 1.0)
        scale(out, V, 1.0 / s);
    return MDSD_OK;
}

mdsd_status mdsd_probs_validate(double *p, size_t V, const char *what, mdsd_err *err)
{
    return mdsd_probs_validate_hint(p, V, what, "pass `logits` if these are logits", err);
}

int mdsd_probs_validate_hint(double *p, size_t V, const char *what, const char *hint, mdsd_err *err)
{
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty distribution", what);
    int ok = all_finite_nonneg(p, V);
    for (size_t i = 0; !ok && i < V; i++) {
        if (isnan(p[i]))
            return mdsd_fail(err, MDSD_EINVAL, "%s: probability at index %zu is NaN", what, i);
        if (isinf(p[i]))
            return mdsd_fail(err, MDSD_EINVAL, "%s: probability at index %zu is infinite", what, i);
        if (p[i] < 0.0)
            return mdsd_fail(err, MDSD_EINVAL, "%s: probability at index %zu is negative (%g)",
                             what, i, p[i]);
    }
    double s = mdsd_sum(p, V);
    if (fabs(s - 1.0) > MDSD_PROB_SUM_TOL)
        return mdsd_fail(err, MDSD_EINVAL, "%s: probabilities sum to %.9g, not 1 (tolerance %g); %s",
                         what, s, MDSD_PROB_SUM_TOL, hint);
    if (s != 1.0) /* s is within 1e-6 of 1: p * (1/s) is p / s to within an ulp */
        scale(p, V, 1.0 / s);
    return MDSD_OK;
}

#define LANES MDSD_LANES

/* p[i] = exp((x[i] - top) * inv_t) for i < V and the sum of p, accumulated
 * in LANES fixed lanes (so the bits do not depend on the vector width). */
#define EXP_SHIFTED(NAME, T)                                                          \
    MDSD_SIMD_CLONES static double NAME(const T *x, size_t V, double top, double inv_t, \
                                        double *p)                                    \
    {                                                                                 \
        double acc[LANES] = {0};                                                      \
        size_t i = 0;                                                                 \
        for (; i + LANES <= V; i += LANES) {                                          \
            _Pragma("omp simd")                                                       \
            for (size_t j = 0; j < LANES; j++) {                                      \
                double e = mdsd_exp_nonpos(((double)x[i + j] - top) * inv_t);              \
                p[i + j] = e;                                                         \
                acc[j] += e;                                                          \
            }                                                                         \
        }                                                                             \
        for (size_t j = 0; i < V; i++, j++) {                                         \
            p[i] = mdsd_exp_nonpos(((double)x[i] - top) * inv_t);                          \
            acc[j] += p[i];                                                           \
        }                                                                             \
        return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])); \
    }

/* The largest logit (-inf if none is finite) and whether any is NaN or
 * +inf, without early exits so that the loop vectorises. */
#define SCAN_LOGITS(NAME, T)                                                          \
    MDSD_SIMD_CLONES static double NAME(const T *x, size_t V, int *bad)                                \
    {                                                                                 \
        T mx[LANES];                                                                  \
        int b[LANES] = {0};                                                           \
        for (size_t j = 0; j < LANES; j++)                                            \
            mx[j] = -(T)INFINITY;                                                     \
        size_t i = 0;                                                                 \
        for (; i + LANES <= V; i += LANES)                                            \
            _Pragma("omp simd")                                                       \
            for (size_t j = 0; j < LANES; j++) {                                      \
                T l = x[i + j];                                                       \
                b[j] |= !(l < (T)INFINITY);                                           \
                mx[j] = l > mx[j] ? l : mx[j];                                        \
            }                                                                         \
        for (; i < V; i++) {                                                          \
            b[0] |= !(x[i] < (T)INFINITY);                                            \
            mx[0] = x[i] > mx[0] ? x[i] : mx[0];                                      \
        }                                                                             \
        T m = mx[0];                                                                  \
        for (size_t j = 0; j < LANES; j++) {                                          \
            m = mx[j] > m ? mx[j] : m;                                                \
            *bad |= b[j];                                                             \
        }                                                                             \
        return (double)m;                                                             \
    }

EXP_SHIFTED(exp_shifted_double_own, double)
EXP_SHIFTED(exp_shifted_float_own, float)

/* glibc's vector exp (libmvec, documented within 4 ulp): the AVX-512 variant
 * _ZGVeN8v_exp computes 8 exps in about the time our polynomial takes for
 * 4, and halves the softmax. It is called directly (math.h declares the
 * vector variants only under -ffast-math) from a function compiled for
 * AVX-512, chosen once by the CPU. The lanes and their sums are those of the
 * loop above, and the tail is padded with -inf (exp = 0, and x + 0 = x), so
 * each p[i] is a function of x[i] alone and the sum's order is fixed: the
 * same bits for any thread count, on a given machine. Machines without
 * AVX-512, or MDSD_PORTABLE_EXP=1 in the environment, use our polynomial,
 * whose bits are the same on every machine; the two differ by a few ulp. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(MDSD_LIBMVEC)
#include <immintrin.h>
#include <stdatomic.h>
__m512d _ZGVeN8v_exp(__m512d x);

#define EXP_SHIFTED_MVEC(NAME, T, LOAD)                                               \
    __attribute__((target("avx512f"))) static double NAME(const T *x, size_t V, double top, \
                                                          double inv_t, double *p)      \
    {                                                                                 \
        __m512d acc = _mm512_setzero_pd(), vt = _mm512_set1_pd(top);                  \
        __m512d vi = _mm512_set1_pd(inv_t);                                           \
        size_t i = 0;                                                                 \
        for (; i + LANES <= V; i += LANES) {                                          \
            __m512d e = _ZGVeN8v_exp(_mm512_mul_pd(_mm512_sub_pd(LOAD(x + i), vt), vi)); \
            _mm512_storeu_pd(p + i, e);                                               \
            acc = _mm512_add_pd(acc, e);                                              \
        }                                                                             \
        if (i < V) {                                                                  \
            T pad[LANES];                                                             \
            double out[LANES];                                                        \
            for (size_t j = 0; j < LANES; j++)                                        \
                pad[j] = i + j < V ? x[i + j] : -(T)INFINITY;                         \
            __m512d e = _ZGVeN8v_exp(_mm512_mul_pd(_mm512_sub_pd(LOAD(pad), vt), vi)); \
            _mm512_storeu_pd(out, e);                                                 \
            memcpy(p + i, out, (V - i) * sizeof *p);                                  \
            acc = _mm512_add_pd(acc, e);                                              \
        }                                                                             \
        double a[LANES];                                                              \
        _mm512_storeu_pd(a, acc);                                                     \
        return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));     \
    }
#define LOAD_DOUBLE(ptr) _mm512_loadu_pd(ptr)
#define LOAD_FLOAT(ptr) _mm512_cvtps_pd(_mm256_loadu_ps(ptr))
EXP_SHIFTED_MVEC(exp_shifted_double_mvec, double, LOAD_DOUBLE)
EXP_SHIFTED_MVEC(exp_shifted_float_mvec, float, LOAD_FLOAT)

static int use_mvec(void)
{
    static _Atomic int use = -1; /* racing first calls store the same value */
    int u = atomic_load_explicit(&use, memory_order_relaxed);
    if (u < 0) {
        const char *portable = getenv("MDSD_PORTABLE_EXP");
        __builtin_cpu_init();
        u = __builtin_cpu_supports("avx512f") && !(portable && *portable && *portable != '0');
        atomic_store_explicit(&use, u, memory_order_relaxed);
    }
    return u;
}
#define EXP_PICK(OWN, MVEC) (use_mvec() ? MVEC : OWN)
#else
#define EXP_PICK(OWN, MVEC) OWN
#endif

static double exp_shifted_double(const double *x, size_t V, double top, double inv_t, double *p)
{
    return EXP_PICK(exp_shifted_double_own, exp_shifted_double_mvec)(x, V, top, inv_t, p);
}

static double exp_shifted_float(const float *x, size_t V, double top, double inv_t, double *p)
{
    return EXP_PICK(exp_shifted_float_own, exp_shifted_float_mvec)(x, V, top, inv_t, p);
}
SCAN_LOGITS(scan_logits_double, double)
SCAN_LOGITS(scan_logits_float, float)

/* One body for double and float logits: the element type is the only change. */
#define SOFTMAX_BODY(logits, SCAN, EXP)                                               \
    if (V == 0)                                                                       \
        return mdsd_fail(err, MDSD_EINVAL, "%s: empty logit vector", what);           \
    if (!(T >= 0.0) || isinf(T))                                                      \
        return mdsd_fail(err, MDSD_EINVAL, "%s: temperature %g is not a finite value >= 0", \
                         what, T);                                                    \
    if (T > 0.0 && T < MDSD_MIN_TEMPERATURE)                                          \
        return mdsd_fail(err, MDSD_EINVAL, "%s: temperature %g is below %g, where 1/T " \
                         "overflows (0 means argmax)", what, T, MDSD_MIN_TEMPERATURE);  \
    int bad = 0;                                                                      \
    double top = SCAN(logits, V, &bad);                                               \
    for (size_t i = 0; bad && i < V; i++) {                                           \
        double l = (double)logits[i];                                                 \
        if (isnan(l))                                                                 \
            return mdsd_fail(err, MDSD_EINVAL, "%s: logit at index %zu is NaN", what, i); \
        if (isinf(l) && l > 0)                                                        \
            return mdsd_fail(err, MDSD_EINVAL, "%s: logit at index %zu is +inf", what, i); \
    }                                                                                 \
    if (top == -INFINITY)                                                             \
        return mdsd_fail(err, MDSD_EINVAL, "%s: every logit is -inf", what);          \
    if (T == 0.0) {                                                                   \
        size_t best = 0;                                                              \
        while ((double)logits[best] != top)                                           \
            best++;                                                                   \
        for (size_t i = 0; i < V; i++)                                                \
            p[i] = i == best;                                                         \
        return MDSD_OK;                                                               \
    }                                                                                 \
    double s = EXP(logits, V, top, 1.0 / T, p);                                       \
    scale(p, V, 1.0 / s);                                                             \
    return MDSD_OK;

mdsd_status mdsd_softmax(const double *logits, size_t V, double T, double *p,
                 const char *what, mdsd_err *err)
{
    SOFTMAX_BODY(logits, scan_logits_double, exp_shifted_double)
}

mdsd_status mdsd_softmax_float(const float *logits, size_t V, double T, double *p,
                       const char *what, mdsd_err *err)
{
    SOFTMAX_BODY(logits, scan_logits_float, exp_shifted_float)
}

typedef struct {
    double prob;
    size_t token;
} ranked_token;

/* Decreasing probability, ties to the lower index. */
static int by_prob_desc(const void *a, const void *b)
{
    const ranked_token *x = a, *y = b;
    if (x->prob != y->prob)
        return x->prob > y->prob ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

/* One cut of the ranked tokens, in place: keep ranks [0, m), m the smallest
 * count <= limit whose exact mass (xsum.h) reaches `mass` (> 0, so rank 0 is
 * kept; > 1: no mass cut), never a token of probability 0; zero the other
 * ranks and divide the kept ones by their exact mass, rounded once. */
static size_t cut_prefix(double *p, const ranked_token *order, size_t V, size_t limit, double mass)
{
    mdsd_xsum kept, want;
    mdsd_xsum_init(&kept);
    mdsd_xsum_init(&want);
    mdsd_xsum_add(&want, mass);
    size_t m = 0;
    while (m < limit && p[order[m].token] > 0.0 && mdsd_xsum_cmp(&kept, &want) < 0)
        mdsd_xsum_add(&kept, p[order[m++].token]);
    for (size_t r = m; r < V; r++)
        p[order[r].token] = 0.0;
    double total = mdsd_xsum_round(&kept);
    for (size_t r = 0; r < m; r++)
        p[order[r].token] /= total;
    return m;
}

mdsd_status mdsd_truncate(double *p, size_t V, size_t top_k, double top_p, mdsd_err *err)
{
    if (!(top_p > 0.0 && top_p <= 1.0))
        return mdsd_fail(err, MDSD_EINVAL, "top-p %g is not in (0, 1]", top_p);
    int cut_k = top_k > 0 && top_k < V, cut_p = top_p < 1.0;
    if (!cut_k && !cut_p)
        return MDSD_OK;
    for (size_t i = 0; i < V; i++)
        if (!(p[i] >= 0.0 && p[i] <= 1.0))
            return mdsd_fail(err, MDSD_EINVAL, "top-k/top-p: probability %g at index %zu is not in "
                             "[0, 1]", p[i], i);
    ranked_token *order = malloc(V * sizeof *order);
    if (!order)
        return mdsd_fail(err, MDSD_ENOMEM, "top-k/top-p: out of memory for V = %zu", V);
    for (size_t i = 0; i < V; i++)
        order[i] = (ranked_token){p[i], i};
    qsort(order, V, sizeof *order, by_prob_desc);
    int rc = MDSD_OK;
    if (!(order[0].prob > 0.0))
        rc = mdsd_fail(err, MDSD_EINVAL, "top-k/top-p: every probability is 0");
    /* As decoders do (HF transformers, vLLM): top-k and renormalise, then
     * top-p on the renormalised distribution, in the untruncated order. */
    size_t m = V;
    if (rc == MDSD_OK && cut_k)
        m = cut_prefix(p, order, V, top_k, 2.0);
    if (rc == MDSD_OK && cut_p)
        cut_prefix(p, order, V, m, top_p);
    free(order);
    return rc;
}

void mdsd_top_indices(const double *x, size_t n, size_t k, int *top)
{
    if (k <= 64) {
        /* One pass: a value enters the kept list only if strictly larger than
         * its last entry, and moves up past strictly smaller ones only, so
         * equal values keep their index order. */
        double kept[64];
        size_t have = 0;
        for (size_t i = 0; i < n && k > 0; i++) {
            double v = x[i];
            if (have == k && !(v > kept[k - 1]))
                continue;
            size_t j = have < k ? have++ : k - 1;
            while (j > 0 && kept[j - 1] < v) {
                kept[j] = kept[j - 1];
                top[j] = top[j - 1];
                j--;
            }
            kept[j] = v;
            top[j] = (int)i;
        }
        return;
    }
    for (size_t r = 0; r < k; r++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (size_t s = 0; s < r && !taken; s++)
                taken = top[s] == (int)i;
            if (!taken && (best == n || x[i] > x[best]))
                best = i;
        }
        top[r] = (int)best;
    }
}
