/* plan.c - the table job's options checked, its plan of cells (n, scheme,
 * method) per unit, and the up-front warning about Monte-Carlo cost (engine.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "engine.h"
#include "montecarlo.h"
#include "outfile.h"

#define MAX_CELLS MDSD_BATCH_MAX_CELLS

static void note(const mdsd_batch_opts *o, const char *fmt, const char *a, size_t n, const char *why)
{
    if (!o->note)
        return;
    char msg[768];
    snprintf(msg, sizeof msg, fmt, a, n, why);
    o->note(msg, o->note_ctx);
}

/* Whether scheme `kind` with n drafts is defined at all (with a full-support
 * q; a given position may still fail on support, which is then an error). */
static int scheme_applies(mdsd_scheme_kind kind, size_t n, const double *uniform, size_t V,
                          mdsd_err *err)
{
    mdsd_scheme s = {kind, n, V, uniform, NULL};
    return mdsd_scheme_check(&s, err);
}

static int find_bound_cell(const plan *pl, mdsd_scheme_kind kind, size_t n)
{
    for (size_t c = 0; c < pl->count; c++)
        if (pl->cells[c].verifier < 0 && pl->cells[c].scheme == kind && pl->cells[c].n == n)
            return (int)c;
    return -1;
}

static int add_cell(plan *pl, cell c, mdsd_err *err)
{
    if (pl->count == MAX_CELLS)
        return mdsd_fail(err, MDSD_ETOOBIG, "table: more than %d (n, scheme, method) rows per "
                         "temperature; split the job", MAX_CELLS);
    pl->cells[pl->count++] = c;
    if (c.n > pl->max_n)
        pl->max_n = c.n;
    return MDSD_OK;
}

static int add_bound(plan *pl, mdsd_scheme_kind kind, size_t n, mdsd_err *err)
{
    if (find_bound_cell(pl, kind, n) >= 0)
        return MDSD_OK;
    return add_cell(pl, (cell){n, kind, -1, -1}, err);
}

int mdsd_plan_make(const mdsd_batch_opts *o, size_t V, plan *pl, mdsd_err *err)
{
    memset(pl, 0, sizeof *pl);
    double *uniform = malloc(V * sizeof *uniform);
    if (!uniform)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t v = 0; v < V; v++)
        uniform[v] = 1.0 / (double)V;
    int rc = MDSD_OK;
    mdsd_err why;
    for (size_t k = 0; k < o->pub.n_counts && rc == MDSD_OK; k++) {
        size_t n = o->pub.draft_counts[k];
        for (size_t i = 0; i < o->pub.n_schemes && rc == MDSD_OK; i++) {
            mdsd_scheme_kind kind = o->pub.schemes[i];
            if (scheme_applies(kind, n, uniform, V, &why) == MDSD_OK)
                rc = add_bound(pl, kind, n, err);
            else
                note(o, "skipping the %s scheme at n = %zu: %s", mdsd_scheme_name(kind), n, why.msg);
        }
        for (size_t i = 0; i < o->pub.n_verifiers && rc == MDSD_OK; i++) {
            mdsd_verifier_kind v = o->pub.verifiers[i];
            mdsd_scheme s = {mdsd_verifier_scheme(v), n, V, uniform, NULL};
            if (mdsd_verifier_check(v, &s, &why) != MDSD_OK) {
                note(o, "skipping verifier %s at n = %zu: %s", mdsd_verifier_name(v), n, why.msg);
                continue;
            }
            if ((rc = add_bound(pl, s.kind, n, err)))
                break;
            rc = add_cell(pl, (cell){n, s.kind, (int)v, find_bound_cell(pl, s.kind, n)}, err);
        }
    }
    free(uniform);
    if (rc == MDSD_OK && pl->count == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "table: no (scheme, verifier, n) combination applies");
    if (rc == MDSD_OK && pl->max_n > MDSD_REPORT_MAX_DRAFTS)
        rc = mdsd_fail(err, MDSD_EINVAL, "table: n = %zu is above the limit of %d drafts", pl->max_n,
                       MDSD_REPORT_MAX_DRAFTS);
    return rc;
}

static double seconds_now(void)
{
    return omp_get_wtime();
}

/* Warns (through o->note) about each verifier cell that will run by Monte
 * Carlo at the dump's V, with its cost measured on a probe position where
 * every draft is rejected (p uniform on half the vocabulary, q on the other
 * half: each trial draws all n drafts and then the residual), a few trials
 * scaled to --trials: a Monte-Carlo verifier costs trials x (n draws + a
 * verification) per position, which at large V can be far above the single
 * pass of the exact ones (rrsw at V = 32,000: about 3 rows/s with 2,000
 * trials). The estimate is for that verifier alone. */
void mdsd_plan_warn_monte_carlo(const mdsd_batch_opts *o, const plan *pl, size_t V, size_t positions)
{
    if (!o->note || o->pub.trials == 0 || V < 2)
        return;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    if (!p || !q) {
        free(p), free(q);
        return;
    }
    size_t half = V / 2;
    for (size_t v = 0; v < V; v++) {
        p[v] = v < half ? 1.0 / (double)half : 0.0;
        q[v] = v < half ? 0.0 : 1.0 / (double)(V - half);
    }
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        if (ce->verifier < 0)
            continue;
        mdsd_verifier_kind kind = (mdsd_verifier_kind)ce->verifier;
        mdsd_scheme s = {ce->scheme, ce->n, V, q, NULL};
        mdsd_err err;
        double alpha, per_draft[MDSD_REPORT_MAX_DRAFTS];
        int rc = o->pub.simulate ? MDSD_EUNSUPPORTED
                             : mdsd_verifier_exact(kind, p, &s, &o->pub.verifier_opts, &alpha, per_draft, &err);
        if (rc != MDSD_EUNSUPPORTED && rc != MDSD_ETOOBIG)
            continue;
        mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, &o->pub.verifier_opts, &err);
        if (!v)
            continue;
        mdsd_mc_opts mc;
        mdsd_mc_opts_init(&mc);
        mc.trials = o->pub.trials < 64 ? o->pub.trials : 64;
        mc.threads = 1;
        mc.histogram = false;
        mdsd_mc_result res;
        double t0 = seconds_now();
        rc = mdsd_mc_run(v, &mc, &res, &err);
        double per_position = (seconds_now() - t0) * (double)o->pub.trials / (double)mc.trials;
        mdsd_verifier_free(v);
        if (rc)
            continue;
        mdsd_mc_result_free(&res);
        int threads = o->pub.threads > 0 ? o->pub.threads : omp_get_max_threads();
        double total = per_position * (double)positions / (double)threads;
        char msg[768];
        snprintf(msg, sizeof msg, "verifier %s at n = %zu has no exact form at V = %zu and runs by Monte "
                 "Carlo, %llu trials per position: up to about %.3g s per position (%.3g rows/s per "
                 "thread, measured on a probe position where every draft is rejected), so up to about "
                 "%.2g %s for this verifier alone over the %zu positions x temperatures on %d thread%s%s",
                 mdsd_verifier_name(kind), ce->n, V, (unsigned long long)o->pub.trials, per_position,
                 1.0 / per_position, total > 3600 ? total / 3600 : total > 60 ? total / 60 : total,
                 total > 3600 ? "hours" : total > 60 ? "minutes" : "seconds", positions, threads,
                 threads == 1 ? "" : "s",
                 total > 60 ? ". Lower `trials`, subsample with `row_begin a:b`, or leave it out" : "");
        o->note(msg, o->note_ctx);
    }
    free(p), free(q);
}

void mdsd_batch_paths(const mdsd_batch_opts *o, mdsd_pathset *s)
{
    for (size_t i = 0; i < o->pub.n_dumps; i++)
        mdsd_pathset_dump(s, o->pub.dumps[i]);
    if (o->pub.shards && o->shard_data) { /* an MPI rank: its checkpoint beside the CSV */
        mdsd_pathset_output_family(s, o->pub.output, "`output`", mdsd_suffixes_provenance);
        const char *const rank[] = {".partial", ".lock"};
        for (size_t k = 0; k < 2; k++) {
            char name[4200];
            snprintf(name, sizeof name, "%s.shard-%zu-of-%zu%s", o->pub.output, o->pub.shard, o->pub.shards,
                     rank[k]);
            mdsd_pathset_output(s, name, "the %s of rank %zu of `output %s`", k ? "lock file" : "checkpoint",
                                o->pub.shard - 1, o->pub.output);
        }
    } else if (o->pub.shards) { /* --shard I/N: the aggregate, no provenance */
        const char *const shard[] = {".partial", ".lock", NULL};
        mdsd_pathset_output_family(s, o->pub.output, "`output`", shard);
    } else {
        mdsd_pathset_output_family(s, o->pub.output, "`output`", mdsd_suffixes_job);
    }
    const char *const partial[] = {".partial", ".lock", NULL};
    mdsd_pathset_output_family(s, o->per_position, "`per_position`", partial);
}

/* A dump (by name or as the same file), temperature (to the CSV's 10
 * digits), n, scheme or verifier given twice would make its rows twice (two
 * temperatures that print alike: two units of one name). */
static int check_twice(const mdsd_batch_opts *o, mdsd_err *err)
{
    const mdsd_table_opts *p = &o->pub;
    for (size_t i = 0; i < p->n_dumps; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(p->dumps[i], p->dumps[k]) || mdsd_path_same(p->dumps[i], p->dumps[k]))
                return mdsd_fail(err, MDSD_EINVAL, "table: dump '%s' is given twice (as '%s' and '%s')",
                                 p->dumps[i], p->dumps[k], p->dumps[i]);
    for (size_t i = 0; i < p->n_arrays; i++) /* two columns of one name */
        for (size_t k = 0; k < p->n_dumps + i; k++) {
            const char *other = k < p->n_dumps ? p->dumps[k] : p->arrays[k - p->n_dumps].label;
            const char *base = k < p->n_dumps && strrchr(other, '/') ? strrchr(other, '/') + 1 : other;
            if (p->arrays[i].label && base && !strcmp(p->arrays[i].label, base))
                return mdsd_fail(err, MDSD_EINVAL, "table: the label '%s' of row arrays %zu is also "
                                 "the name of %s", base, i, k < p->n_dumps ? "a dump" : "other arrays");
        }
    for (size_t i = 0; i < p->n_temperatures; i++)
        for (size_t k = 0; k < i; k++)
            if (mdsd_partial_same_temperature(p->temperatures[k], p->temperatures[i]))
                return mdsd_fail(err, MDSD_EINVAL, "table: temperature %.10g is given twice%s",
                                 p->temperatures[i], p->temperatures[k] == p->temperatures[i] ? ""
                                 : " (two values the results CSV, at 10 digits, cannot tell apart)");
    for (size_t i = 0; i < p->n_counts; i++)
        for (size_t k = 0; k < i; k++)
            if (p->draft_counts[i] == p->draft_counts[k])
                return mdsd_fail(err, MDSD_EINVAL, "table: n = %zu is given twice", p->draft_counts[i]);
    for (size_t i = 0; i < p->n_schemes; i++)
        for (size_t k = 0; k < i; k++)
            if (p->schemes[i] == p->schemes[k])
                return mdsd_fail(err, MDSD_EINVAL, "table: scheme %s is given twice",
                                 mdsd_scheme_name(p->schemes[i]));
    for (size_t i = 0; i < p->n_verifiers; i++)
        for (size_t k = 0; k < i; k++)
            if (p->verifiers[i] == p->verifiers[k])
                return mdsd_fail(err, MDSD_EINVAL, "table: verifier %s is given twice",
                                 mdsd_verifier_name(p->verifiers[i]));
    return MDSD_OK;
}

int mdsd_plan_check_options(const mdsd_batch_opts *o, mdsd_err *err)
{
    if (o->pub.n_dumps == 0 && o->pub.n_arrays == 0)
        return mdsd_fail(err, MDSD_EINVAL, "table: no dump given");
    if (o->pub.n_arrays && !o->pub.arrays)
        return mdsd_fail(err, MDSD_EINVAL, "table: %zu row arrays and none given (NULL)", o->pub.n_arrays);
    /* Rows in memory leave nothing on disk that a checkpoint or a shard could
     * be checked against on another run. */
    if (o->pub.n_arrays && (o->pub.resume || o->pub.shards))
        return mdsd_fail(err, MDSD_EINVAL, "table: rows in memory cannot be %s (nothing on disk "
                         "identifies them on the next run): write them to a dump for that",
                         o->pub.resume ? "resumed" : "sharded");
    if (o->pub.n_temperatures == 0 || o->pub.n_counts == 0)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_TEMPERATURES,
                                "table: give `temperatures` and `draft_counts`");
    for (size_t i = 0; i < o->pub.n_temperatures; i++)
        if (!(o->pub.temperatures[i] >= 0) || isinf(o->pub.temperatures[i]))
            return mdsd_fail(err, MDSD_EINVAL, "table: temperature %g is not a finite value >= 0 "
                             "(0 means argmax)", o->pub.temperatures[i]);
    for (size_t i = 0; i < o->pub.n_counts; i++)
        if (o->pub.draft_counts[i] < 1)
            return mdsd_fail(err, MDSD_EINVAL, "table: the number of drafts must be >= 1");
    for (size_t i = 0; i < o->pub.n_schemes; i++)
        if (o->pub.schemes[i] == MDSD_SCHEME_MULTI || o->pub.schemes[i] == MDSD_SCHEME_CUSTOM)
            return mdsd_fail(err, MDSD_EUNSUPPORTED, "table: the %s scheme is not available in "
                             "batch jobs (one drafter per dump)", mdsd_scheme_name(o->pub.schemes[i]));
    int rc = check_twice(o, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < o->pub.n_draft_models; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(o->pub.draft_models[i], o->pub.draft_models[k]))
                return mdsd_fail(err, MDSD_EINVAL, "table: drafter '%s' is given twice",
                                 o->pub.draft_models[i]);
    if (!o->pub.output)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_OUTPUT, "table: no output file (`output`)");
    mdsd_pathset paths; /* every file read and written (pathset.h) */
    mdsd_pathset_init(&paths);
    mdsd_batch_paths(o, &paths);
    rc = mdsd_pathset_check(&paths, err);
    mdsd_pathset_free(&paths);
    if (rc)
        return rc;
    if (o->pub.resume && o->pub.discard_partial)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_RESUME,
                                "table: `resume` and `discard_partial` exclude each other");
    if (o->pub.top_p < 0.0 || o->pub.top_p > 1.0 || isnan(o->pub.top_p))
        return mdsd_fail(err, MDSD_EINVAL, "table: top-p %g is not in (0, 1]", o->pub.top_p);
    if (o->pub.simulate && o->pub.trials == 0)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_SIMULATE, "table: `simulate` needs `trials K`");
    if (o->pub.shards && (o->pub.shard < 1 || o->pub.shard > o->pub.shards))
        return mdsd_fail(err, MDSD_EINVAL, "table: shard %zu/%zu: I must be in 1..N", o->pub.shard,
                         o->pub.shards);
    if (o->pub.shard && !o->pub.shards)
        return mdsd_fail(err, MDSD_EINVAL, "table: shard %zu without the number of shards",
                         o->pub.shard);
    if (o->pub.shards && o->per_position)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_PER_POSITION,
                                "table: `per_position` cannot be combined with `shard` "
                                "or MPI ranks (each would hold a part of the rows)");
    return MDSD_OK;
}
