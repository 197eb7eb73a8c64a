/* batch.c - mdsd_batch_run (batch.h): the table job orchestrated over the
 * engine's files (engine.h). */
#include "batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "outfile.h"

/* The columns' dumps, opened; total: rows x temperatures to evaluate. */
static int open_columns(const mdsd_batch_opts *o, dump_job *jobs, size_t n_jobs, size_t *total,
                        mdsd_err *err)
{
    int rc = MDSD_OK;
    *total = 0;
    for (size_t i = 0; i < n_jobs && rc == MDSD_OK; i++)
        if ((rc = mdsd_column_open(o, i, &jobs[i], err)) == MDSD_OK)
            *total += (jobs[i].end - jobs[i].begin) * o->pub.n_temperatures;
    return rc;
}

/* What a single-process job resumes from: the finished units and the
 * checkpointed parts of unfinished ones in OUTPUT.partial (--resume). */
typedef struct {
    row_list done;
    progress_list prog;
    perpos_mark last;     /* the per-position record of the file's last marker */
    char last_key[600];   /* that marker's unit */
} resume_state;

static int read_resume(const mdsd_batch_opts *o, const plan *pl, const dump_job *jobs, size_t n_jobs,
                       const char *partial_path, const job_signature *sig, resume_state *rs,
                       mdsd_err *err)
{
    int rc = MDSD_OK;
    if (o->pub.resume)
        rc = mdsd_partial_read(partial_path, sig, o->pub.n_dumps, pl->count, &rs->done, &rs->prog,
                               &rs->last, rs->last_key, err);
    if (rc == MDSD_OK)
        rc = mdsd_partial_check_done(partial_path, o, jobs, n_jobs, &rs->done, sig->changed, err);
    if (rc == MDSD_OK)
        rc = mdsd_partial_check_progress(partial_path, o, jobs, n_jobs, &rs->prog, pl, sig->changed, err);
    bool resumed = rs->done.count > 0 || rs->prog.count > 0;
    if (rc == MDSD_OK && o->per_position && resumed && !rs->last.set)
        rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                              "'%s' records no per-position rows (its job ran without "
                              "`per_position`); pass `discard_partial` to start over", partial_path);
    return rc;
}

/* The per-position CSV at the end of the job: renamed into place when the
 * job succeeded; else deleted unless the partial results it goes with stay. */
static int close_per_position(per_position_out *pp, int rc, bool keep, mdsd_err *err)
{
    if (rc == MDSD_OK)
        rc = mdsd_perpos_sync(pp, err);
    if (fclose(pp->f) != 0 && rc == MDSD_OK)
        rc = mdsd_fail(err, MDSD_EIO, "error writing '%s': %s", pp->partial, strerror(errno));
    if (rc == MDSD_OK && rename(pp->partial, pp->path) != 0)
        rc = mdsd_fail(err, MDSD_EIO, "cannot rename '%s' to '%s': %s", pp->partial, pp->path,
                       strerror(errno));
    else if (rc != MDSD_OK && !keep)
        unlink(pp->partial);
    return rc;
}

/* The single-process job over opened columns: resume, run every unit
 * (appended to OUTPUT.partial as it finishes), write the CSV. */
static int run_table(const mdsd_batch_opts *o, const plan *pl, dump_job *jobs, size_t n_jobs,
                     size_t total, const job_signature *sig, const char *partial_path, row_list *all,
                     mdsd_err *err)
{
    resume_state rs = {.last = {false, 0, 0}, .last_key = ""};
    row_list fresh = {0};
    const char *signature = sig->text;
    int rc = read_resume(o, pl, jobs, n_jobs, partial_path, sig, &rs, err);
    bool resumed = rs.done.count > 0 || rs.prog.count > 0;
    per_position_out pp;
    bool pp_open = false;
    if (rc == MDSD_OK && o->per_position &&
        (rc = mdsd_perpos_open(&pp, o->per_position, pl, resumed ? &rs.last : NULL, partial_path,
                               err)) == MDSD_OK) {
        pp_open = true;
        for (size_t i = 0; i < n_jobs; i++)
            jobs[i].per_position = &pp;
    }
    if (rc == MDSD_OK)
        mdsd_plan_warn_monte_carlo(o, pl, jobs[0].dump->V, total);
    /* Rewrite the partial file with what is kept, then append as units finish. */
    mdsd_err e;
    mdsd_err_clear(&e);
    FILE *partial = rc == MDSD_OK ? mdsd_partial_start(partial_path, signature, &rs.done, &rs.prog, pl,
                                                       o->per_position ? &rs.last : NULL, rs.last_key, &e)
                                  : NULL;
    if (rc == MDSD_OK && !partial)
        rc = mdsd_fail_from(err, &e, partial_path);
    mdsd_progress progress;
    mdsd_progress_start(&progress, "mdsd table", total);
    if (!o->progress)
        progress.enabled = false;
    progress.callback = o->pub.on_progress;
    progress.ctx = o->pub.progress_ctx;
    for (size_t i = 0; i < n_jobs && rc == MDSD_OK; i++)
        rc = mdsd_unit_run_column(o, pl, &jobs[i], &rs.done, &rs.prog, &fresh, partial, &progress, NULL,
                                  err);
    mdsd_progress_finish(&progress);
    if (partial)
        fclose(partial);
    /* Keep the partial file only if it holds finished work to resume from
     * (and the per-position rows with it). */
    bool dropped = partial && rc != MDSD_OK && rs.done.count == 0 && fresh.count == 0 &&
                   !mdsd_partial_has_checkpoint(partial_path);
    if (dropped)
        unlink(partial_path);
    if (rc == MDSD_OK)
        rc = mdsd_rows_collect(o, jobs, n_jobs, &rs.done, &fresh, all, err);
    if (rc == MDSD_OK)
        rc = mdsd_rows_write_output(o, all, pl->max_n, err);
    if (pp_open)
        rc = close_per_position(&pp, rc, !(dropped || !partial), err);
    if (rc == MDSD_OK)
        unlink(partial_path);
    free(rs.done.rows), free(fresh.rows);
    mdsd_partial_progress_free(&rs.prog);
    return rc;
}

int mdsd_batch_run(const mdsd_batch_opts *o, mdsd_report_row **rows_out, size_t *count_out,
                   mdsd_err *err)
{
    /* The job reads its own messages back (row labels): it always has one. */
    mdsd_err local;
    if (!err)
        err = &local;
    mdsd_err_clear(err);
    int rc = mdsd_plan_check_options(o, err);
    if (rc)
        return rc;
    size_t max_n = 1;
    for (size_t k = 0; k < o->pub.n_counts; k++)
        max_n = o->pub.draft_counts[k] > max_n ? o->pub.draft_counts[k] : max_n;
    plan pl;
    if ((rc = mdsd_plan_make(o, max_n + 1, &pl, err)))
        return rc;
    job_signature sig = {.changed = NULL};
    char partial_path[4200], lock_path[4200];
    if (o->pub.shards && o->shard_data) { /* MPI ranks: one checkpoint each beside the CSV */
        snprintf(partial_path, sizeof partial_path, "%s.shard-%zu-of-%zu.partial", o->pub.output,
                 o->pub.shard, o->pub.shards);
        snprintf(lock_path, sizeof lock_path, "%s.shard-%zu-of-%zu.lock", o->pub.output, o->pub.shard,
                 o->pub.shards);
    } else {
        snprintf(partial_path, sizeof partial_path, "%s.partial", o->pub.output);
        snprintf(lock_path, sizeof lock_path, "%s.lock", o->pub.output);
    }
    mdsd_lock lock;
    char what[4300];
    snprintf(what, sizeof what, "'%s'", o->pub.output);
    if ((rc = mdsd_lock_acquire(&lock, lock_path, what, err)))
        return rc;
    /* The per-position file and its checkpoint are locked with the output:
     * a job on another -o with the same --per-position waits for none. */
    mdsd_lock pp_lock = {.fd = -1};
    if (o->per_position) {
        char pp_lock_path[4200], pp_what[4300];
        snprintf(pp_lock_path, sizeof pp_lock_path, "%s.lock", o->per_position);
        snprintf(pp_what, sizeof pp_what, "'%s' (`per_position`)", o->per_position);
        if ((rc = mdsd_lock_acquire(&pp_lock, pp_lock_path, pp_what, err))) {
            mdsd_lock_release(&lock);
            return rc;
        }
    }
    rc = mdsd_partial_policy(o, partial_path, err);
    if (rc == MDSD_OK) /* after --discard-partial has done what it was asked */
        rc = mdsd_partial_signature(o, &pl, &sig, err);

    row_list all = {0};
    size_t n_jobs = mdsd_column_count(o), total = 0;
    dump_job *jobs = calloc(n_jobs, sizeof *jobs);
    if (!jobs && rc == MDSD_OK)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    if (rc == MDSD_OK)
        rc = open_columns(o, jobs, n_jobs, &total, err);
    if (rc == MDSD_OK && o->pub.shards)
        rc = mdsd_shardjob_run(o, &pl, jobs, n_jobs, sig.text, partial_path, err);
    else if (rc == MDSD_OK)
        rc = run_table(o, &pl, jobs, n_jobs, total, &sig, partial_path, &all, err);
    for (size_t i = 0; jobs && i < n_jobs; i++)
        mdsd_column_close(&jobs[i]);
    free(jobs);
    free(sig.changed);
    mdsd_lock_release(&pp_lock);
    mdsd_lock_release(&lock);
    if (rc == MDSD_OK && rows_out && !o->pub.shards) {
        *rows_out = all.rows;
        *count_out = all.count;
        return rc;
    }
    if (rows_out && o->pub.shards)
        *rows_out = NULL, *count_out = 0;
    free(all.rows);
    return rc;
}
