/* bench_accept - speed of the verifiers (not a test; `make bench-accept`).
 *
 * At V = 32,000 and n = 3 (spechub: n = 2, its scheme; sd: n = 1) on
 * LLM-like pairs (p = softmax(z / 0.7), q = softmax((z + e) / 0.7) with
 * z ~ N(0, 2.5^2), e ~ N(0, 1)) it reports, single-threaded:
 *   set-up   mdsd_verifier_alloc per position (residuals, alias tables, rho*,
 *            sorting), and the scheme's sampler set-up;
 *   trials/s Monte-Carlo trials (draw the drafts + verify) by mdsd_mc_run
 *            with one thread and no histogram;
 *   verify/s mdsd_verifier_verify alone on pre-drawn drafts.
 * Then rrsw's exact rate (the certified interval of verify_rrsw.c, width
 * <= 1e-9) in positions/s/core, at n = 3, 4, 5 on the same pairs: the median
 * thread CPU time over POSITIONS positions of one call each (softmax
 * excluded, set-up included; CPU time because this machine is shared), or
 * the refusal where the enumeration exceeds its default guard.
 * Usage: bench-accept [V] [n] [trials] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "mdsd.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void llm_like_pair(size_t V, uint64_t seed, double *p, double *q)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    double *z = malloc(V * sizeof *z), *e = malloc(V * sizeof *e);
    for (size_t x = 0; x < V; x++) {
        z[x] = gsl_ran_gaussian(r, 2.5);
        e[x] = z[x] + gsl_ran_gaussian(r, 1.0);
    }
    mdsd_softmax(z, V, 0.7, p, "target", NULL);
    mdsd_softmax(e, V, 0.7, q, "draft", NULL);
    free(z), free(e);
    gsl_rng_free(r);
}

static void bench(mdsd_verifier_kind kind, size_t V, size_t n, uint64_t trials)
{
    enum { POSITIONS = 8 };
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    mdsd_scheme s = {mdsd_verifier_scheme(kind), n, V, q, NULL};
    double setup = 0.0, sampler_setup = 0.0, alpha = 0.0;
    mdsd_err err;
    for (int pos = 0; pos < POSITIONS; pos++) {
        llm_like_pair(V, 100 + pos, p, q);
        double t0 = now();
        mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, NULL, &err);
        double t1 = now();
        mdsd_sampler *sm = mdsd_sampler_alloc(&s, &err);
        double t2 = now();
        if (!v || !sm) {
            fprintf(stderr, "%s: %s\n", mdsd_verifier_name(kind), err.msg);
            exit(1);
        }
        setup += t1 - t0;
        sampler_setup += t2 - t1;
        mdsd_verifier_free(v);
        mdsd_sampler_free(sm);
    }
    /* Throughput on the last position. */
    mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, NULL, &err);
    mdsd_mc_opts o;
    mdsd_mc_opts_init(&o);
    o.trials = trials;
    o.threads = 1;
    o.histogram = false;
    mdsd_mc_result res;
    double t0 = now();
    mdsd_mc_run(v, &o, &res, &err);
    double mc_time = now() - t0;
    alpha = res.alpha;
    mdsd_mc_result_free(&res);

    enum { BATCH = 1 << 16 };
    int *drafts = malloc((size_t)BATCH * n * sizeof *drafts);
    mdsd_sampler *sm = mdsd_sampler_alloc(&s, &err);
    gsl_rng *r = mdsd_rng_alloc(7);
    for (size_t i = 0; i < BATCH; i++)
        mdsd_sampler_draw(sm, r, drafts + i * n);
    uint64_t sink = 0, reps = trials / BATCH + 1;
    t0 = now();
    for (uint64_t k = 0; k < reps; k++)
        for (size_t i = 0; i < BATCH; i++)
            sink += (uint64_t)mdsd_verifier_verify(v, drafts + i * n, r, NULL);
    double verify_time = now() - t0;
    printf("%-8s %-6s n=%zu  setup %8.3f ms  sampler setup %7.3f ms  trials/s %7.3g  "
           "verify/s %7.3g  alpha %.4f%s\n",
           mdsd_verifier_name(kind), mdsd_scheme_name(s.kind), n, 1e3 * setup / POSITIONS,
           1e3 * sampler_setup / POSITIONS, (double)trials / mc_time,
           (double)(reps * BATCH) / verify_time, alpha, sink == 42 ? " " : "");
    free(drafts);
    gsl_rng_free(r);
    mdsd_sampler_free(sm);
    mdsd_verifier_free(v);
    free(p), free(q);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_rrsw_exact(size_t V, size_t n)
{
    enum { POSITIONS = 16 };
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q), seconds[POSITIONS];
    double per_draft[8], alpha_sum = 0.0, width_max = 0.0;
    mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
    for (int pos = 0; pos < POSITIONS; pos++) {
        llm_like_pair(V, 100 + pos, p, q);
        mdsd_err err;
        double alpha, lo, hi, t0 = cpu_now();
        int rc = mdsd_verifier_exact_bounds(MDSD_VERIFIER_RRSW, p, &s, NULL, &alpha, per_draft, &lo,
                                            &hi, &err);
        seconds[pos] = cpu_now() - t0;
        if (rc) {
            printf("rrsw exact n=%zu  position %d: %s (after %.3f s)\n", n, pos, err.msg, seconds[pos]);
            free(p), free(q);
            return;
        }
        alpha_sum += alpha;
        width_max = hi - lo > width_max ? hi - lo : width_max;
    }
    qsort(seconds, POSITIONS, sizeof *seconds, by_value);
    double median = (seconds[POSITIONS / 2 - 1] + seconds[POSITIONS / 2]) / 2;
    printf("rrsw exact n=%zu  median %8.3f ms  positions/s/core %7.1f  (slowest %.3f ms)  "
           "mean alpha %.6f  widest interval %.2g\n",
           n, 1e3 * median, 1.0 / median, 1e3 * seconds[POSITIONS - 1], alpha_sum / POSITIONS,
           width_max);
    free(p), free(q);
}

int main(int argc, char **argv)
{
    size_t V = argc > 1 ? strtoul(argv[1], NULL, 10) : 32000;
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 3;
    uint64_t trials = argc > 3 ? strtoull(argv[3], NULL, 10) : 4000000;
    printf("bench-accept: V = %zu, n = %zu, %llu trials per verifier, 1 thread, GSL %s\n", V, n,
           (unsigned long long)trials, MDSD_RNG_NAME);
    static const mdsd_verifier_kind kinds[] = {
        MDSD_VERIFIER_SD, MDSD_VERIFIER_RRS, MDSD_VERIFIER_RRSW, MDSD_VERIFIER_KSEQ,
        MDSD_VERIFIER_SPECHUB, MDSD_VERIFIER_GREEDY,
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t nk = kinds[i] == MDSD_VERIFIER_SD ? 1 : kinds[i] == MDSD_VERIFIER_SPECHUB ? 2 : n;
        bench(kinds[i], V, nk, trials);
    }
    for (size_t nk = 3; nk <= 5; nk++)
        bench_rrsw_exact(V, nk);
    return 0;
}
