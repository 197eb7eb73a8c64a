/* bench_bound - speed of alpha* by sort-and-scan (not a test; `make bench-bound`).
 *
 * Positions per second per core of mdsd_bound_alpha(..., MDSD_BOUND_SORT, ...)
 * with the softmax of both models included (float logits, as in dumps, at
 * T = 0.7), single-threaded, for every scheme at n = 2, 3, 5, on two families
 * of LLM-like logit pairs:
 *   gauss  z ~ N(0, 2.5^2), draft logits z + N(0, 1)  (as bench-accept)
 *   zipf   z = -1.2 log(rank) + N(0, 0.5^2) over a random ranking, draft
 *          logits z + N(0, 1)  (heavier head: top target token ~0.3-0.5)
 * Also the softmax alone, the mean alpha*, and for wor (n >= 3) the mean
 * number of exact Q(H) evaluations of the branch and bound, without the full
 * q/p order (the default route) and over it (the reference). Times are thread
 * CPU time, best batch of 16 positions.
 * Usage: bench-bound [V ...]   (default 32000 152064) */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "bound.h"
#include "mdsd.h"

enum { POSITIONS = 16 };
#define MIN_SECONDS 0.4

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *name;
    float *target, *draft; /* [POSITIONS * V] */
} family;

static void make_family(family *f, const char *name, size_t V, uint64_t seed)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    f->name = name;
    f->target = malloc(POSITIONS * V * sizeof *f->target);
    f->draft = malloc(POSITIONS * V * sizeof *f->draft);
    size_t *rank = malloc(V * sizeof *rank);
    for (size_t pos = 0; pos < POSITIONS; pos++) {
        float *z = f->target + pos * V, *e = f->draft + pos * V;
        if (!strcmp(name, "zipf")) {
            for (size_t x = 0; x < V; x++)
                rank[x] = x + 1;
            gsl_ran_shuffle(r, rank, V, sizeof *rank);
        }
        for (size_t x = 0; x < V; x++) {
            double zx = !strcmp(name, "zipf") ? -1.2 * log((double)rank[x]) + gsl_ran_gaussian(r, 0.5)
                                              : gsl_ran_gaussian(r, 2.5);
            z[x] = (float)zx;
            e[x] = (float)(zx + gsl_ran_gaussian(r, 1.0));
        }
    }
    free(rank);
    gsl_rng_free(r);
}

/* Runs the positions through softmax (+ sort if tmpl != NULL) in batches
 * until MIN_SECONDS of CPU time; the rate is that of the fastest batch (the
 * machine is shared: slower batches measure the neighbours, not the code). */
static double run(const family *f, size_t V, const mdsd_scheme *tmpl, const mdsd_bound_opts *opts,
                  mdsd_bound_workspace *ws, double *mean_alpha, double *mean_evals)
{
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    mdsd_err err;
    size_t done = 0;
    double alpha = 0.0, evals = 0.0, t0 = now(), t = t0, best = INFINITY;
    while (t - t0 < MIN_SECONDS) {
        double tb = now();
        for (size_t pos = 0; pos < POSITIONS; pos++) {
            mdsd_softmax_float(f->target + pos * V, V, 0.7, p, "target", NULL);
            mdsd_softmax_float(f->draft + pos * V, V, 0.7, q, "draft", NULL);
            if (tmpl) {
                mdsd_scheme s = *tmpl;
                s.q = q;
                mdsd_bound_result res = {0};
                if (mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, opts, ws, &res, &err)) {
                    fprintf(stderr, "bench-bound: %s\n", err.msg);
                    exit(1);
                }
                alpha += res.alpha;
                evals += (double)res.evaluations;
            }
            done++;
        }
        t = now();
        best = fmin(best, t - tb);
    }
    free(p), free(q);
    if (mean_alpha)
        *mean_alpha = alpha / (double)done;
    if (mean_evals)
        *mean_evals = evals / (double)done;
    return (double)POSITIONS / best;
}

int main(int argc, char **argv)
{
    size_t Vs[8] = {32000, 152064}, nV = 2;
    if (argc > 1) {
        nV = 0;
        for (int i = 1; i < argc && nV < 8; i++)
            Vs[nV++] = (size_t)strtoull(argv[i], NULL, 10);
    }
    static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR, MDSD_SCHEME_GREEDY,
                                             MDSD_SCHEME_HUB, MDSD_SCHEME_CPS};
    static const size_t ns[] = {2, 3, 5};
    printf("| V | logits | scheme | n | positions/s/core | mean alpha* | wor Q evals |\n"
           "| ---: | --- | --- | ---: | ---: | ---: | ---: |\n");
    for (size_t iv = 0; iv < nV; iv++) {
        size_t V = Vs[iv];
        family fams[2];
        make_family(&fams[0], "gauss", V, 7);
        make_family(&fams[1], "zipf", V, 8);
        mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(V, 5, NULL);
        for (int fi = 0; fi < 2; fi++) {
            double rate = run(&fams[fi], V, NULL, NULL, ws, NULL, NULL);
            printf("| %zu | %s | (softmax of p and q only) | | %.0f | | |\n", V, fams[fi].name, rate);
            for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
                for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
                    if (kinds[k] == MDSD_SCHEME_HUB && ns[in] != 2)
                        continue;
                    mdsd_scheme s = {kinds[k], ns[in], V, NULL, NULL};
                    /* wor with n >= 3 also over the full q/p order (the reference
                     * route of the one without it) */
                    bool both = kinds[k] == MDSD_SCHEME_WOR && ns[in] >= 3;
                    for (int full = 0; full <= both; full++) {
                        mdsd_bound_opts o = {.full_sort = full};
                        double alpha, evals;
                        rate = run(&fams[fi], V, &s, &o, ws, &alpha, &evals);
                        printf("| %zu | %s | %s%s | %zu | %.0f | %.4f |", V, fams[fi].name,
                               mdsd_scheme_name(kinds[k]), full ? " (full order)" : "", ns[in],
                               rate, alpha);
                        if (both)
                            printf(" %.1f |\n", evals);
                        else
                            printf(" |\n");
                        fflush(stdout);
                    }
                }
        }
        mdsd_bound_workspace_free(ws);
        for (int fi = 0; fi < 2; fi++)
            free(fams[fi].target), free(fams[fi].draft);
    }
    return 0;
}
