#include "montecarlo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "rng.h"
#include "scheme.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void mdsd_mc_opts_init(mdsd_mc_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->trials = 1000000;
    opts->seed = 1;
    opts->histogram = true;
}

void mdsd_mc_wilson(uint64_t successes, uint64_t trials, double level, double *low,
                    double *high)
{
    if (trials == 0) {
        *low = 0.0, *high = 1.0;
        return;
    }
    double z = gsl_cdf_ugaussian_Pinv(0.5 + level / 2.0), n = (double)trials;
    double phat = (double)successes / n, z2n = z * z / n;
    double centre = (phat + z2n / 2.0) / (1.0 + z2n);
    double half = z * sqrt(phat * (1.0 - phat) / n + z2n / (4.0 * n)) / (1.0 + z2n);
    *low = fmax(0.0, centre - half);
    *high = fmin(1.0, centre + half);
}

void mdsd_mc_result_free(mdsd_mc_result *res)
{
    if (!res)
        return;
    free(res->per_draft);
    free(res->histogram);
    res->per_draft = NULL;
    res->histogram = NULL;
}

/* What one thread accumulates; counts are integers, so merging them in any
 * order gives the same totals. */
typedef struct {
    gsl_rng *rng;
    int *drafts;
    uint64_t *per_draft;
    uint64_t *histogram;
} worker;

static void run_block(const mdsd_verifier *v, const mdsd_sampler *sm, worker *w,
                      uint64_t trials, mdsd_welford *acc)
{
    mdsd_welford_init(acc);
    uint64_t hits = 0;
    for (uint64_t t = 0; t < trials; t++) {
        int j;
        mdsd_sampler_draw(sm, w->rng, w->drafts);
        int y = mdsd_verifier_verify(v, w->drafts, w->rng, &j);
        if (w->histogram)
            w->histogram[y]++;
        if (j >= 0) {
            w->per_draft[j]++;
            hits++;
        }
    }
    /* Welford over a block of 0/1 outcomes, in closed form (same result as
     * adding them one by one, without a branch per trial). */
    acc->count = trials;
    acc->mean = trials ? (double)hits / (double)trials : 0.0;
    acc->m2 = (double)hits * (1.0 - acc->mean);
}

static int worker_init(worker *w, size_t n, size_t V, bool histogram)
{
    memset(w, 0, sizeof *w);
    w->rng = mdsd_rng_alloc(0);
    w->drafts = malloc(n * sizeof *w->drafts);
    w->per_draft = calloc(n, sizeof *w->per_draft);
    w->histogram = histogram ? calloc(V, sizeof *w->histogram) : NULL;
    return w->rng && w->drafts && w->per_draft && (!histogram || w->histogram) ? MDSD_OK
                                                                                : MDSD_ENOMEM;
}

static void worker_free(worker *w)
{
    if (w->rng)
        gsl_rng_free(w->rng);
    free(w->drafts);
    free(w->per_draft);
    free(w->histogram);
}

static int threads_for(int requested, uint64_t blocks)
{
#ifdef _OPENMP
    int t = requested > 0 ? requested : omp_get_max_threads();
#else
    int t = 1;
    (void)requested;
#endif
    if ((uint64_t)t > blocks)
        t = (int)blocks;
    return t > 0 ? t : 1;
}

int mdsd_mc_run(const mdsd_verifier *v, const mdsd_mc_opts *opts, mdsd_mc_result *res,
                mdsd_err *err)
{
    const mdsd_scheme *s = mdsd_verifier_scheme_of(v);
    size_t n = s->n, V = s->V;
    memset(res, 0, sizeof *res);
    res->n = n, res->V = V, res->trials = opts->trials;
    if (opts->trials > MDSD_MC_MAX_TRIALS)
        return mdsd_fail(err, MDSD_EINVAL, "Monte Carlo: %llu trials is above the limit of %.0e "
                         "per run (days of work); run several seeds and pool them",
                         (unsigned long long)opts->trials, (double)MDSD_MC_MAX_TRIALS);
    mdsd_welford_init(&res->accept);
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_sampler *sm = mdsd_sampler_alloc(s, &e);
    if (!sm)
        return mdsd_fail_from(err, &e, "Monte Carlo: sampler");
    uint64_t blocks = (opts->trials + MDSD_MC_BLOCK - 1) / MDSD_MC_BLOCK;
    int nthreads = threads_for(opts->threads, blocks);
    uint64_t base = mdsd_seed_mix(opts->seed, opts->position,
                                  mdsd_seed_name(mdsd_verifier_name_of(v)));
    worker *workers = calloc((size_t)nthreads, sizeof *workers);
    mdsd_welford *acc = calloc(blocks ? blocks : 1, sizeof *acc);
    res->per_draft = calloc(n, sizeof *res->per_draft);
    res->histogram = opts->histogram ? calloc(V, sizeof *res->histogram) : NULL;
    int rc = workers && acc && res->per_draft && (!opts->histogram || res->histogram)
                 ? MDSD_OK : MDSD_ENOMEM;
    for (int t = 0; t < nthreads && rc == MDSD_OK && workers; t++)
        rc = worker_init(&workers[t], n, V, opts->histogram);
    if (rc == MDSD_OK) {
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
        for (uint64_t b = 0; b < blocks; b++) {
#ifdef _OPENMP
            worker *w = &workers[omp_get_thread_num()];
#else
            worker *w = &workers[0];
#endif
            if (mdsd_interrupted())
                continue; /* mdsd_interrupt: acc[b] stays empty, the run fails below */
            mdsd_rng_reseed(w->rng, b == 0 ? base : mdsd_seed_mix(base, b, 0));
            uint64_t first = b * MDSD_MC_BLOCK;
            uint64_t count = opts->trials - first < MDSD_MC_BLOCK ? opts->trials - first
                                                                  : MDSD_MC_BLOCK;
            run_block(v, sm, w, count, &acc[b]);
        }
        for (uint64_t b = 0; b < blocks && rc == MDSD_OK; b++)
            if (acc[b].count == 0) /* a skipped block: no estimate may look final */
                rc = mdsd_fail_interrupted(err, "Monte Carlo");
    }
    if (rc == MDSD_OK) {
        for (uint64_t b = 0; b < blocks; b++)
            mdsd_welford_merge(&res->accept, &acc[b]);
        for (int t = 0; t < nthreads; t++) {
            for (size_t j = 0; j < n; j++)
                res->per_draft[j] += workers[t].per_draft[j];
            for (size_t y = 0; res->histogram && y < V; y++)
                res->histogram[y] += workers[t].histogram[y];
        }
        res->alpha = res->accept.mean;
        res->se = mdsd_welford_stderr(&res->accept);
        uint64_t hits = 0;
        for (size_t j = 0; j < n; j++)
            hits += res->per_draft[j];
        mdsd_mc_wilson(hits, opts->trials, 0.95, &res->ci_low, &res->ci_high);
    } else if (rc == MDSD_ENOMEM) {
        mdsd_fail(err, rc, "Monte Carlo: out of memory (n = %zu, V = %zu)", n, V);
    }
    for (int t = 0; workers && t < nthreads; t++)
        worker_free(&workers[t]);
    free(workers);
    free(acc);
    mdsd_sampler_free(sm);
    if (rc)
        mdsd_mc_result_free(res);
    return rc;
}

mdsd_gof mdsd_mc_check_output(const mdsd_mc_result *res, const double *p)
{
    return mdsd_chisq_gof(res->histogram, p, res->V, 5.0);
}
