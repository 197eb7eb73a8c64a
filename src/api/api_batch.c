/* api_batch.c - per-position evaluation of [N, V] logit arrays
 * (mdsd/batch.h): the evaluator of `mdsd table` (job/position.h: softmax at
 * T, top-k / top-p of both models, alpha* by the auto method, the verifier's
 * exact rate or Monte Carlo) over rows in memory, OpenMP over rows; and the
 * table job (mdsd_table_run). */
#include <mdsd/mdsd.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "batch.h"
#include "engine.h"
#include "opts.h"
#include "position.h"
#include "runopts.h"
#include "shard.h"

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_batch_eval_opts_init)(mdsd_batch_eval_opts *opts, size_t size)
{
    mdsd_batch_eval_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.temperature = 1.0;
    d.top_p = 1.0;
    d.scheme = MDSD_SCHEME_IID;
    d.n = 2;
    d.verifier = -1;
    mdsd_verifier_opts_init(&d.verifier_opts);
    d.seed = 1;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

typedef mdsd_position_worker worker;

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
    if (!(o->top_p > 0.0 && o->top_p <= 1.0)) /* the API's one convention (mdsd/common.h) */
        return mdsd_fail(err, MDSD_EINVAL, "batch: top_p %g is not in (0, 1]", o->top_p);
    if ((unsigned)o->scheme >= MDSD_SCHEME_COUNT || o->scheme == MDSD_SCHEME_MULTI ||
        o->scheme == MDSD_SCHEME_CUSTOM)
        return mdsd_fail(err, MDSD_EINVAL, "batch: scheme %d is not one of iid, wor, greedy, "
                         "hub, cps", (int)o->scheme);
    if (o->n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "batch: n = 0 drafts");
    if (o->verifier >= (int)MDSD_VERIFIER_KINDS || o->verifier < -1)
        return mdsd_fail(err, MDSD_EINVAL, "batch: unknown verifier %d", o->verifier);
    if (o->simulate && o->trials == 0)
        return mdsd_fail(err, MDSD_EINVAL, "batch: simulate needs trials > 0");
    return MDSD_OK;
}

/* One row through the evaluator (position.h): (p, q), then alpha* and the
 * verifier. err is never NULL here (each row has its own). */
static int eval_row(const mdsd_batch_eval_opts *o, const mdsd_position_settings *st, worker *w,
                    const float *tf, const float *df, const double *td, const double *dd, size_t V,
                    size_t row, double *alpha_star, double *rate, double *per_draft,
                    unsigned char *exact, mdsd_err *err)
{
    int rc = mdsd_position_pq(st, w, tf, td, df, dd, V, err);
    mdsd_scheme s = {o->scheme, o->n, V, w->q, NULL};
    if (rc == MDSD_OK && alpha_star)
        rc = mdsd_position_alpha(w, &s, &alpha_star[row], err);
    if (rc == MDSD_OK && o->verifier >= 0 && (rate || per_draft || exact)) {
        double r = 0.0, pd_local[64], *pd = per_draft ? per_draft + row * o->n : pd_local;
        if (!per_draft && o->n > 64)
            return mdsd_fail(err, MDSD_EINVAL, "batch: n = %zu above 64 without per_draft", o->n);
        bool is_exact;
        rc = mdsd_position_rate(st, w, (mdsd_verifier_kind)o->verifier, &s, o->row0 + row, &r, pd,
                                &is_exact, err);
        if (rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG)
            rc = mdsd_position_no_exact(st, w, (mdsd_verifier_kind)o->verifier, &s, rc, true,
                                        "set trials for Monte Carlo", err);
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
    if (opts && (mdsd_opts_check(opts->size, sizeof *opts, "mdsd_batch_eval_opts", NULL, err) ||
                 mdsd_opts_check(opts->verifier_opts.size, sizeof opts->verifier_opts,
                                 "mdsd_verifier_opts", "verifier_opts", err)))
        return MDSD_EINVAL;
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
    mdsd_position_settings st = {o.temperature, o.top_k, o.top_p, o.trials, o.simulate != 0,
                                 o.seed, &o.verifier_opts, "batch"};
    worker *workers = mdsd_position_workers_alloc(threads, V, o.n + 1, "batch", err);
    int *row_rc = calloc(N, sizeof *row_rc);
    mdsd_err *first = calloc((size_t)threads, sizeof *first);
    size_t *first_row = calloc((size_t)threads, sizeof *first_row);
    rc = !workers ? MDSD_ENOMEM
         : row_rc && first && first_row ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "batch: out of memory");
    for (int t = 0; t < threads && rc == MDSD_OK; t++) {
        mdsd_err_clear(&first[t]);
        first_row[t] = N;
    }
    if (rc == MDSD_OK) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
        for (size_t i = 0; i < N; i++) {
            int t = omp_get_thread_num();
            if (first_row[t] < N)
                continue; /* this thread already failed: its first error is kept */
            if (mdsd_interrupted()) { /* the remaining rows are skipped (mdsd_interrupt) */
                row_rc[i] = MDSD_EINTERRUPTED;
                continue;
            }
            mdsd_err e;
            mdsd_err_clear(&e);
            row_rc[i] = eval_row(&o, &st, &workers[t], tf ? tf + i * V : NULL, df ? df + i * V : NULL,
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
        bool stopped = false; /* rows left unevaluated: none of the results may look final */
        for (size_t i = 0; i < N && !stopped; i++)
            stopped = row_rc[i] == MDSD_EINTERRUPTED;
        if (stopped)
            rc = mdsd_fail_interrupted(err, "batch");
        else if (bad_t >= 0) {
            rc = row_rc[bad];
            if (err)
                *err = first[bad_t];
        }
    }
    mdsd_position_workers_free(workers, threads);
    free(row_rc);
    free(first);
    free(first_row);
    return rc;
}

mdsd_status mdsd_batch_eval(const float *target, const float *draft, size_t N, size_t V,
                    const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                    double *per_draft, unsigned char *exact, mdsd_err *err)
{
    return eval(target, draft, NULL, NULL, N, V, opts, alpha_star, rate, per_draft, exact, err);
}

mdsd_status mdsd_batch_eval_double(const double *target, const double *draft, size_t N, size_t V,
                           const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                           double *per_draft, unsigned char *exact, mdsd_err *err)
{
    return eval(NULL, NULL, target, draft, N, V, opts, alpha_star, rate, per_draft, exact, err);
}

/* ---- the `mdsd table` job ---- */

void (mdsd_table_opts_init)(mdsd_table_opts *opts, size_t size)
{
    mdsd_table_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.top_p = 1.0;
    d.seed = 1;
    mdsd_verifier_opts_init(&d.verifier_opts);
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

int api_table_opts_check(const mdsd_table_opts *t, mdsd_err *err)
{
    if (!t)
        return mdsd_fail(err, MDSD_EINVAL, "table: no options given (NULL)");
    if (mdsd_opts_check(t->size, sizeof *t, "mdsd_table_opts", NULL, err) ||
        mdsd_opts_check(t->verifier_opts.size, sizeof t->verifier_opts, "mdsd_verifier_opts",
                        "verifier_opts", err))
        return MDSD_EINVAL;
    if (!(t->top_p > 0.0 && t->top_p <= 1.0)) /* the API's one convention (mdsd/common.h) */
        return mdsd_fail(err, MDSD_EINVAL, "table: top-p %g is not in (0, 1]", t->top_p);
    if (!isfinite(t->checkpoint_seconds))
        return mdsd_fail(err, MDSD_EINVAL, "table: checkpoint_seconds %g is not a finite number",
                         t->checkpoint_seconds);
    return MDSD_OK;
}

/* The internal job of the public options and a front end's run options
 * (runopts.h: checked, never NULL). */
static void table_job(const mdsd_table_opts *t, const mdsd_run_opts *run, mdsd_batch_opts *o)
{
    *o = (mdsd_batch_opts){.pub = *t, .per_position = t->per_position};
    o->progress = run->progress_bar != 0;
    o->note = run->on_note, o->note_ctx = run->note_ctx;
    o->shard_data = run->shard_text, o->shard_size = run->shard_size;
    o->keep_partial = run->shard_text != NULL; /* the MPI driver removes it once the outputs exist */
    o->test = (mdsd_batch_hooks){.fail = run->test_fail != 0, .fail_column = run->test_fail_column,
                                 .fail_row = run->test_fail_row, .block_rows = run->test_block_rows};
}

/* The outputs beside the CSV (tablerender.c) of the job o. */
static mdsd_table_outputs table_outputs(const mdsd_batch_opts *o, const mdsd_run_opts *run)
{
    return (mdsd_table_outputs){.job = o, .tool = run->tool, .argc = (int)run->n_words,
                                /* the words are only read: the provenance's argv is the CLI's type */
                                .argv = (char *const *)run->words,
                                .stdout_output = run->stdout_used != 0};
}

/* The checks before any work: the public options, the job's, then its files. */
static int table_check(const mdsd_table_opts *t, const mdsd_run_opts *run, mdsd_batch_opts *o,
                       mdsd_table_outputs *out, mdsd_err *err)
{
    int rc = api_table_opts_check(t, err);
    if (rc)
        return rc;
    table_job(t, run, o);
    *out = table_outputs(o, run);
    /* the job's option checks first (mdsd_batch_run makes them again), so that the
     * rendered files are checked, with the job's, only for options that stand */
    rc = mdsd_plan_check_options(o, err);
    return rc ? rc : mdsd_table_outputs_check(out, err);
}

/* The job with its rendered tables and, with run->tool, its provenance sidecar
 * (tablerender.c, as `mdsd table` writes them); run is checked (runopts.h). */
int api_table_run(const mdsd_table_opts *t, const mdsd_run_opts *run, mdsd_err *err)
{
    if (!t)
        return api_table_opts_check(t, err);
    mdsd_batch_opts o;
    if (run->shard_text && t->shards) { /* an MPI rank's shard: its aggregate in memory only */
        int rc = api_table_opts_check(t, err);
        table_job(t, run, &o);
        return rc ? rc : mdsd_batch_run(&o, NULL, NULL, err);
    }
    mdsd_table_outputs out;
    int rc = table_check(t, run, &o, &out, err);
    if (rc)
        return rc;
    o.before_publish = mdsd_table_outputs_before;
    o.publish_ctx = &out;
    mdsd_report_row *rows = NULL;
    size_t count = 0;
    rc = mdsd_batch_run(&o, &rows, &count, err);
    if (rc == MDSD_OK && !t->shards) { /* --shard I/N wrote its aggregate: nothing to render */
        rc = mdsd_table_outputs_publish(&out, rows, count, err);
        if (rc == MDSD_OK) /* rows from one sample: their s.e. is not clustered */
            mdsd_report_notes(run->on_note, run->note_ctx, rows, count);
    }
    mdsd_table_outputs_abort(&out);
    free(rows);
    return rc;
}

mdsd_status mdsd_table_run(const mdsd_table_opts *t, mdsd_err *err)
{
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    return (mdsd_status)api_table_run(t, &run, err);
}

mdsd_status mdsd_table_run_with(const mdsd_table_opts *t, mdsd_run_opts *run, mdsd_err *err)
{
    mdsd_run_opts r;
    int rc = mdsd_run_opts_take(run, "table", &r, err);
    return (mdsd_status)(rc ? rc : api_table_run(t, &r, err));
}

mdsd_status mdsd_table_check(const mdsd_table_opts *t, const mdsd_run_opts *run, mdsd_err *err)
{
    mdsd_run_opts r;
    mdsd_batch_opts o;
    mdsd_table_outputs out;
    /* the check changes nothing in run (its usage flag is the calls' that run) */
    mdsd_run_opts copy;
    if (run)
        copy = *run;
    int rc = mdsd_run_opts_take(run ? &copy : NULL, "table", &r, err);
    return (mdsd_status)(rc ? rc : table_check(t, &r, &o, &out, err));
}

mdsd_status mdsd_table_merge_texts(const mdsd_table_opts *t, mdsd_run_opts *run,
                                   const mdsd_shard_text *in, size_t n, mdsd_err *err)
{
    mdsd_run_opts r;
    int rc = mdsd_run_opts_take(run, "table", &r, err);
    if (rc == MDSD_OK)
        rc = api_table_opts_check(t, err);
    if (rc)
        return (mdsd_status)rc;
    if (!in || n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "table: no shard given");
    mdsd_batch_opts o;
    table_job(t, &r, &o);
    mdsd_table_outputs out = table_outputs(&o, &r);
    mdsd_report_row *rows = NULL;
    size_t count = 0;
    /* the files were checked before the shards ran (mdsd_table_check) */
    mdsd_merge_opts m = {n, in, t->output, NULL, mdsd_table_outputs_before, &out, NULL};
    rc = mdsd_batch_merge(&m, &rows, &count, err);
    if (rc == MDSD_OK)
        rc = mdsd_table_outputs_publish(&out, rows, count, err);
    mdsd_table_outputs_abort(&out);
    free(rows);
    return (mdsd_status)rc;
}
