/* api_batch.c - per-position evaluation of [N, V] logit arrays
 * (mdsd/batch.h): the pipeline of `mdsd table` (batch.c: softmax at T,
 * top-k / top-p of both models, alpha* by the auto method, the verifier's
 * exact rate or Monte Carlo) over rows in memory, OpenMP over rows. */
#include <mdsd/mdsd.h>

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "bound.h"
#include "dist.h"
#include "montecarlo.h"
#include "rng.h"
#include "verifier.h"

void mdsd_batch_eval_opts_init(mdsd_batch_eval_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->temperature = 1.0;
    opts->top_p = 1.0;
    opts->scheme = MDSD_SCHEME_IID;
    opts->n = 2;
    opts->verifier = -1;
    opts->seed = 1;
}

typedef struct {
    double *p, *q;
    mdsd_bound_workspace *ws;
    uint64_t pq_tag;
} worker;

static int check_opts(const mdsd_batch_eval_opts *o, size_t N, size_t V, const void *target,
                      const void *draft, mdsd_err *err)
{
    if (!target || !draft)
        return mdsd_fail(err, MDSD_EINVAL, "batch: no %s logits given (NULL)",
                         !target ? "target" : "draft");
    if (N == 0 || V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "batch: empty input (N = %zu, V = %zu)", N, V);
    if (!(o->temperature >= 0.0))
        return mdsd_fail(err, MDSD_EINVAL, "batch: temperature %g is not >= 0", o->temperature);
    if (!(o->top_p >= 0.0 && o->top_p <= 1.0))
        return mdsd_fail(err, MDSD_EINVAL, "batch: top_p %g is outside [0, 1]", o->top_p);
    if ((unsigned)o->scheme >= MDSD_SCHEME_COUNT || o->scheme == MDSD_SCHEME_MULTI ||
        o->scheme == MDSD_SCHEME_CUSTOM)
        return mdsd_fail(err, MDSD_EINVAL, "batch: scheme %d is not one of iid, wor, greedy, "
                         "hub, cps", (int)o->scheme);
    if (o->n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "batch: n = 0 drafts");
    if (o->verifier >= (int)MDSD_VERIFIER_COUNT || o->verifier < -1)
        return mdsd_fail(err, MDSD_EINVAL, "batch: unknown verifier %d", o->verifier);
    if (o->simulate && o->trials == 0)
        return mdsd_fail(err, MDSD_EINVAL, "batch: simulate needs trials > 0");
    return MDSD_OK;
}

static int simulate(const mdsd_batch_eval_opts *o, const worker *w, const mdsd_scheme *s,
                    size_t row, double *rate, double *per_draft, mdsd_err *err)
{
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc((mdsd_verifier_kind)o->verifier, w->p, s,
                                           &o->verifier_opts, &e);
    if (!v)
        return mdsd_fail_from(err, &e, "batch: verifier");
    mdsd_mc_opts mc;
    mdsd_mc_opts_init(&mc);
    mc.trials = o->trials;
    mc.seed = o->seed;
    mc.position = o->row0 + row;
    mc.threads = 1;
    mc.histogram = false;
    mdsd_mc_result res;
    int rc = mdsd_mc_run(v, &mc, &res, err);
    if (rc == MDSD_OK) {
        *rate = res.alpha;
        for (size_t j = 0; j < s->n; j++)
            per_draft[j] = (double)res.per_draft[j] / (double)res.trials;
        mdsd_mc_result_free(&res);
    }
    mdsd_verifier_free(v);
    return rc;
}

/* One row: (p, q) from the logits, then alpha* and the verifier. err is
 * never NULL here (each row has its own). */
static int eval_row(const mdsd_batch_eval_opts *o, worker *w, const float *tf, const float *df,
                    const double *td, const double *dd, size_t V, size_t row, double *alpha_star,
                    double *rate, double *per_draft, unsigned char *exact, mdsd_err *err)
{
    int rc = tf ? mdsd_softmax_float(tf, V, o->temperature, w->p, "target", err)
                : mdsd_softmax(td, V, o->temperature, w->p, "target", err);
    if (rc == MDSD_OK)
        rc = df ? mdsd_softmax_float(df, V, o->temperature, w->q, "draft", err)
                : mdsd_softmax(dd, V, o->temperature, w->q, "draft", err);
    double top_p = o->top_p > 0.0 ? o->top_p : 1.0;
    if (rc == MDSD_OK && (o->top_k > 0 || top_p < 1.0)) {
        rc = mdsd_truncate(w->p, V, o->top_k, top_p, err);
        if (rc == MDSD_OK)
            rc = mdsd_truncate(w->q, V, o->top_k, top_p, err);
    }
    w->pq_tag++;
    mdsd_scheme s = {o->scheme, o->n, V, w->q, NULL};
    if (rc == MDSD_OK && alpha_star) {
        mdsd_bound_result res = {0};
        mdsd_bound_opts bo = {.pq_tag = w->pq_tag};
        rc = mdsd_bound_alpha(w->p, &s, MDSD_BOUND_AUTO, &bo, w->ws, &res, err);
        alpha_star[row] = res.alpha;
    }
    if (rc == MDSD_OK && o->verifier >= 0 && (rate || per_draft || exact)) {
        double r = 0.0, pd_local[64], *pd = per_draft ? per_draft + row * o->n : pd_local;
        if (!per_draft && o->n > 64)
            return mdsd_fail(err, MDSD_EINVAL, "batch: n = %zu above 64 without per_draft", o->n);
        int is_exact = !o->simulate;
        if (is_exact) {
            rc = mdsd_verifier_exact((mdsd_verifier_kind)o->verifier, w->p, &s,
                                     &o->verifier_opts, &r, pd, err);
            if ((rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG) && o->trials > 0)
                is_exact = 0;
            else if (rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG) {
                char what[512];
                snprintf(what, sizeof what, "%s", err->msg);
                rc = mdsd_fail(err, rc, "%s; set trials for Monte Carlo", what);
            }
        }
        if (!is_exact)
            rc = simulate(o, w, &s, row, &r, pd, err);
        if (rate)
            rate[row] = r;
        if (exact)
            exact[row] = (unsigned char)is_exact;
    }
    if (rc) {
        char what[512];
        snprintf(what, sizeof what, "%s", err->msg);
        mdsd_fail(err, rc, "row %zu (T = %g, n = %zu, %s%s%s): %s", o->row0 + row,
                  o->temperature, o->n, mdsd_scheme_name(o->scheme), o->verifier >= 0 ? ", " : "",
                  o->verifier >= 0 ? mdsd_verifier_name((mdsd_verifier_kind)o->verifier) : "",
                  what);
    }
    return rc;
}

static int eval(const float *tf, const float *df, const double *td, const double *dd, size_t N,
                size_t V, const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                double *per_draft, unsigned char *exact, mdsd_err *err)
{
    mdsd_batch_eval_opts o;
    mdsd_batch_eval_opts_init(&o);
    if (opts)
        o = *opts;
    int rc = check_opts(&o, N, V, tf ? (const void *)tf : td, df ? (const void *)df : dd, err);
    if (rc)
        return rc;
    int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    if ((size_t)threads > N)
        threads = (int)N;
    worker *workers = calloc((size_t)threads, sizeof *workers);
    int *row_rc = calloc(N, sizeof *row_rc);
    mdsd_err *first = calloc((size_t)threads, sizeof *first);
    size_t *first_row = calloc((size_t)threads, sizeof *first_row);
    rc = workers && row_rc && first && first_row ? MDSD_OK
         : mdsd_fail(err, MDSD_ENOMEM, "batch: out of memory");
    for (int t = 0; t < threads && rc == MDSD_OK; t++) {
        mdsd_err_clear(&first[t]);
        first_row[t] = N;
        workers[t].p = malloc(V * sizeof(double));
        workers[t].q = malloc(V * sizeof(double));
        workers[t].ws = mdsd_bound_workspace_alloc(V, o.n + 1, &first[t]);
        if (!workers[t].p || !workers[t].q || !workers[t].ws)
            rc = mdsd_fail(err, MDSD_ENOMEM, "batch: out of memory for V = %zu", V);
    }
    if (rc == MDSD_OK) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
        for (size_t i = 0; i < N; i++) {
            int t = omp_get_thread_num();
            if (first_row[t] < N)
                continue; /* this thread already failed: its first error is kept */
            mdsd_err e;
            mdsd_err_clear(&e);
            row_rc[i] = eval_row(&o, &workers[t], tf ? tf + i * V : NULL, df ? df + i * V : NULL,
                                 td ? td + i * V : NULL, dd ? dd + i * V : NULL, V, i,
                                 alpha_star, rate, per_draft, exact, &e);
            if (row_rc[i]) {
                first[t] = e;
                first_row[t] = i;
            }
        }
        /* The lowest failing row, whatever the thread count. */
        size_t bad = N;
        int bad_t = -1;
        for (int t = 0; t < threads; t++)
            if (first_row[t] < bad) {
                bad = first_row[t];
                bad_t = t;
            }
        if (bad_t >= 0) {
            rc = row_rc[bad];
            if (err)
                *err = first[bad_t];
        }
    }
    for (int t = 0; workers && t < threads; t++) {
        free(workers[t].p);
        free(workers[t].q);
        mdsd_bound_workspace_free(workers[t].ws);
    }
    free(workers);
    free(row_rc);
    free(first);
    free(first_row);
    return rc;
}

int mdsd_batch_eval(const float *target, const float *draft, size_t N, size_t V,
                    const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                    double *per_draft, unsigned char *exact, mdsd_err *err)
{
    return eval(target, draft, NULL, NULL, N, V, opts, alpha_star, rate, per_draft, exact, err);
}

int mdsd_batch_eval_double(const double *target, const double *draft, size_t N, size_t V,
                           const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                           double *per_draft, unsigned char *exact, mdsd_err *err)
{
    return eval(NULL, NULL, target, draft, N, V, opts, alpha_star, rate, per_draft, exact, err);
}

/* ---- the `mdsd table` job ---- */

void mdsd_table_opts_init(mdsd_table_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->top_p = 1.0;
    opts->seed = 1;
}

int mdsd_table_run(const mdsd_table_opts *t, mdsd_err *err)
{
    if (!t)
        return mdsd_fail(err, MDSD_EINVAL, "table: no options given (NULL)");
    mdsd_batch_opts o = {
        .n_dumps = t->n_dumps, .dumps = t->dumps, .n_temperatures = t->n_temperatures,
        .temperatures = t->temperatures, .n_counts = t->n_counts, .draft_counts = t->draft_counts,
        .n_schemes = t->n_schemes, .schemes = t->schemes, .n_verifiers = t->n_verifiers,
        .verifiers = t->verifiers, .n_draft_models = t->n_draft_models,
        .draft_models = t->draft_models, .row_begin = t->row_begin, .row_end = t->row_end,
        .top_k = t->top_k, .top_p = t->top_p, .trials = t->trials, .simulate = t->simulate != 0,
        .seed = t->seed, .threads = t->threads, .verifier_opts = t->verifier_opts,
        .output = t->output, .resume = t->resume != 0,
    };
    return mdsd_batch_run(&o, NULL, NULL, err);
}
