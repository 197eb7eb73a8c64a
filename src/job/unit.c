/* unit.c - one (column, temperature) unit of the table job: blocks of rows
 * read (the next one prefetched) and evaluated in parallel, folded in row
 * order, checkpointed; and every unit of one column (engine.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "checkpoint.h"
#include "engine.h"
#include "fnv.h"
#include "rng.h"

/* Float logits per block of rows; two blocks are held (one read while the
 * other is evaluated), so memory is about 2 x this, whatever the dump's size. */
#define BLOCK_BYTES ((size_t)16 << 20)

/* A unit being accumulated: the fold of its closed samples, the open one,
 * and (shard jobs) the closed samples' lines. */
typedef struct {
    mdsd_batch_fold fold;
    mdsd_batch_group open;
    FILE *groups;        /* shard jobs: each closed sample as a line; NULL = none */
    size_t n_groups;
    size_t open_row;     /* the open sample's first row (rows before it are closed) */
    /* finer checkpoints (single-process jobs): the samples closed since the
     * last one, as lines; NULL = none */
    FILE *ckpt;
    char *ckpt_text;
    size_t ckpt_len, ckpt_groups;
} unit_acc;

static void block_results_free(block_results *b)
{
    free(b->alpha), free(b->lo), free(b->hi), free(b->per_draft), free(b->exact), free(b->rc), free(b->err), free(b->stats);
}

static int block_results_alloc(block_results *b, size_t cap, const plan *pl, mdsd_err *err)
{
    b->cap = cap, b->cells = pl->count, b->max_n = pl->max_n;
    b->alpha = malloc(cap * pl->count * sizeof *b->alpha);
    b->lo = malloc(cap * pl->count * sizeof *b->lo);
    b->hi = malloc(cap * pl->count * sizeof *b->hi);
    b->per_draft = malloc(cap * pl->count * pl->max_n * sizeof *b->per_draft);
    b->exact = malloc(cap * pl->count * sizeof *b->exact);
    b->rc = malloc(cap * sizeof *b->rc);
    b->err = malloc(cap * sizeof *b->err);
    b->stats = malloc(cap * 3 * sizeof *b->stats);
    if (!b->alpha || !b->lo || !b->hi || !b->per_draft || !b->exact || !b->rc || !b->err || !b->stats) {
        block_results_free(b);
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory for a block of %zu rows", cap);
    }
    return MDSD_OK;
}

/* Closes the open sample: folded, and (shard jobs) written as a line. */
static void close_group(unit_acc *acc, const plan *pl)
{
    if (acc->open.rows == 0)
        return;
    mdsd_batch_fold_group(&acc->fold, pl, &acc->open);
    if (acc->groups)
        mdsd_batch_group_write(acc->groups, pl, &acc->open);
    if (acc->ckpt)
        mdsd_batch_group_write(acc->ckpt, pl, &acc->open), acc->ckpt_groups++;
    acc->n_groups++;
    acc->open.rows = 0;
}

static void accumulate(unit_acc *acc, const plan *pl, const block_results *br, size_t i,
                       long long sample, size_t row)
{
    if (acc->open.rows == 0 || sample != acc->open.sample) {
        close_group(acc, pl);
        mdsd_batch_group_reset(&acc->open, pl, sample);
        acc->open_row = row;
    }
    mdsd_batch_group *g = &acc->open;
    const double *alpha = br->alpha + i * pl->count;
    g->rows++;
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_welford_add(&g->alpha[c], alpha[c]);
        if (ce->verifier >= 0)
            mdsd_welford_add(&g->gap[c], alpha[c] - alpha[ce->bound_cell]);
        else
            mdsd_welford_add(&g->lo[c], br->lo[i * pl->count + c]),
                mdsd_welford_add(&g->hi[c], br->hi[i * pl->count + c]);
        for (size_t j = 0; j < ce->n; j++)
            g->per_draft[c][j] += br->per_draft[(i * pl->count + c) * pl->max_n + j];
        g->exact[c] = g->exact[c] && br->exact[i * pl->count + c];
    }
}

/* The next block to read while one is evaluated. */
typedef struct {
    mdsd_dump *dump;
    mdsd_dump_block *block; /* NULL: nothing to read */
    size_t row0;
    int rc;
    mdsd_err err;
} prefetch;

/* Evaluates one block's rows in parallel, while one thread first reads the
 * next block (HDF5 is called from that thread only); returns the first
 * failing row's error (the read's error is left in pf). */
static int evaluate_block(const unit_ctx *u, worker *workers, const mdsd_dump_block *b,
                          size_t rows, block_results *br, prefetch *pf, mdsd_err *err)
{
    size_t V = u->V, cells = u->pl->count, max_n = u->pl->max_n;
    int threads = u->o->pub.threads > 0 ? u->o->pub.threads : omp_get_max_threads();
    pf->rc = MDSD_OK;
#pragma omp parallel num_threads(threads)
    {
#pragma omp single nowait
        if (pf->block)
            pf->rc = mdsd_dump_block_read(pf->dump, pf->block, pf->row0, 0, &pf->err);
#pragma omp for schedule(dynamic, 4)
        for (size_t i = 0; i < rows; i++) {
            worker *w = &workers[omp_get_thread_num()];
            mdsd_err_clear(&br->err[i]);
            if (mdsd_interrupted()) { /* the block is dropped whole (run_part) */
                br->rc[i] = mdsd_fail_interrupted(&br->err[i], "table");
                continue;
            }
            size_t r = b->row0 + i; /* the file's own row number */
            mdsd_position_truncation tr = {
                u->target->row_truncated && u->target->row_truncated[r],
                u->draft->row_truncated && u->draft->row_truncated[r],
                u->target->row_missing ? u->target->row_missing[r] : 0,
                u->draft->row_missing ? u->draft->row_missing[r] : 0};
            br->rc[i] = mdsd_position_eval(u, w, b->target + i * V, b->draft[0] + i * V,
                                           u->row_offset + r, &tr, br->alpha + i * cells,
                                           br->lo + i * cells, br->hi + i * cells,
                                           br->per_draft + i * cells * max_n,
                                           br->exact + i * cells, &br->err[i]);
            if (u->o->per_position && br->rc[i] == MDSD_OK)
                mdsd_position_stats(w->p, w->q, V, br->stats + 3 * i);
        }
    }
    for (size_t i = 0; i < rows; i++)
        if (br->rc[i]) {
            *err = br->err[i];
            return br->rc[i];
        }
    return MDSD_OK;
}

/* The logits of a block's rows [first, last) checked as mdsd_dump_block_read
 * checks them (target, then each drafter): the same message for the same
 * bad value. */
static int check_block_logits(const mdsd_dump *d, const mdsd_dump_block *b, size_t first,
                              size_t last, mdsd_err *err)
{
    if (first >= last)
        return MDSD_OK;
    size_t V = b->V;
    int rc = mdsd_dump_check_logits(d, MDSD_DUMP_TARGET, b->row0 + first, last - first,
                                    b->target + first * V, err);
    for (size_t j = 0; rc == MDSD_OK && j < b->n_drafts; j++)
        rc = mdsd_dump_check_logits(d, b->which[j], b->row0 + first, last - first,
                                    b->draft[j] + first * V, err);
    return rc;
}

/* The logits are validated in the compute pass: blocks are read unchecked,
 * and the softmax of every evaluated row refuses what the check refuses
 * (NaN, +inf, every logit -inf). A block whose metadata check or evaluation
 * fails is checked as a whole first, so that a bad logit gives the read
 * check's message, as before; rows read but not evaluated (past the end of
 * a range) are checked on their own. */
static int check_block_rest(const mdsd_dump *d, const mdsd_dump_block *b, size_t rows, int rc,
                            mdsd_err *err)
{
    if (rc != MDSD_OK) {
        mdsd_err e;
        mdsd_err_clear(&e);
        int bad = check_block_logits(d, b, 0, b->rows, &e);
        if (bad)
            *err = e;
        return bad ? bad : rc;
    }
    return check_block_logits(d, b, rows, b->rows, err);
}

/* The streaming validation of a block's metadata (the logits are checked in
 * the compute pass, check_block_rest): the rows [b->row0, b->row0 + rows) only. */
static int check_block_meta(mdsd_dump *d, const mdsd_dump_block *b, size_t rows,
                            mdsd_dump_meta_check *meta, mdsd_err *err)
{
    mdsd_dump_block part = *b;
    part.rows = rows;
    return mdsd_dump_check_meta(d, &part, meta, err);
}

/* Test hook (batch.h): that row of that dump column fails as a bad row
 * would, so that a test can stop one shard or rank after others have
 * finished units. */
static size_t test_hook_row(const mdsd_batch_opts *o, size_t column)
{
    return o->test.fail && o->test.fail_column == column ? o->test.fail_row : SIZE_MAX;
}

/* A sample's key in the fold: its id, made distinct per file of a split
 * dump (a sample never spans two files). */
static long long sample_key(size_t part, int sample)
{
    return part == 0 ? (long long)sample : (long long)(((uint64_t)part << 32) | (uint32_t)sample);
}

/* Finer checkpoints than a unit (single-process jobs): every `seconds`
 * (after a block of rows), the samples closed since the last checkpoint go
 * to the .partial file as their summary lines and a marker
 * "#checkpoint LABEL,T next=R groups=K fnv1a=H" (R: the first row not
 * covered), synced; --resume folds them back (the same bits) and goes on
 * from row R. */
typedef struct {
    FILE *partial;
    const char *key;
    double seconds;       /* < 0: after every block */
    double last;          /* time of the last checkpoint */
    per_position_out *pp; /* NULL = no per-position output */
} unit_checkpoint;

static int checkpoint_maybe(unit_acc *acc, unit_checkpoint *ck, bool now, mdsd_err *err)
{
    if (!ck || !acc->ckpt || acc->ckpt_groups == 0 ||
        (!now && ck->seconds >= 0 && omp_get_wtime() - ck->last < ck->seconds))
        return MDSD_OK;
    if (fflush(acc->ckpt) != 0)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    perpos_mark mark = {false, 0, 0};
    if (ck->pp) {
        int rc = mdsd_perpos_sync(ck->pp, err);
        if (rc)
            return rc;
        mark = (perpos_mark){true, ck->pp->mark_bytes, ck->pp->mark_hash};
    }
    int rc = mdsd_partial_checkpoint(ck->partial, ck->key, acc->ckpt_text, acc->ckpt_len, acc->ckpt_groups,
                                     acc->open_row, &mark, err);
    fclose(acc->ckpt);
    free(acc->ckpt_text);
    acc->ckpt_text = NULL, acc->ckpt_len = 0, acc->ckpt_groups = 0;
    acc->ckpt = open_memstream(&acc->ckpt_text, &acc->ckpt_len);
    if (rc == MDSD_OK && !acc->ckpt)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    ck->last = omp_get_wtime();
    return rc;
}

/* Test hook (batch.h): blocks of at most test.block_rows rows, so that a
 * small dump has several blocks (and checkpoints). */
static size_t block_rows_cap(const mdsd_batch_opts *o, size_t cap)
{
    size_t k = o->test.block_rows;
    return k > 0 && k < cap ? k : cap;
}

/* Rows [begin, end) of file p of the dump (its own row numbers), into acc. */
static int run_part(unit_ctx *u, const dump_job *job, size_t p, size_t begin, size_t end,
                    worker *workers, block_results *br, unit_acc *acc, mdsd_progress *progress,
                    unit_checkpoint *ck, mdsd_err *err)
{
    mdsd_dump *d = job->parts[p];
    size_t cap = block_rows_cap(u->o, mdsd_dump_block_rows(d, 1, BLOCK_BYTES));
    cap = cap < br->cap ? cap : br->cap;
    const plan *pl = u->pl;
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_dump_block *blk[2] = {mdsd_dump_block_alloc(d, cap, 1, &job->part_draft[p], &e), NULL};
    if (blk[0])
        blk[1] = mdsd_dump_block_alloc(d, cap, 1, &job->part_draft[p], &e);
    int rc = !blk[0] || !blk[1] ? mdsd_fail_from(err, &e, "table: row block") : MDSD_OK;
    u->row_offset = job->part_row0[p];
    u->target = &d->target, u->draft = &d->drafts[job->part_draft[p]];
    if (rc == MDSD_OK)
        rc = mdsd_dump_block_read(d, blk[0], begin, 0, err);
    mdsd_dump_meta_check meta;
    mdsd_dump_meta_check_init(&meta);
    size_t k = 0;
    for (size_t row0 = begin; row0 < end && rc == MDSD_OK; row0 += cap, k++) {
        mdsd_dump_block *b = blk[k % 2];
        size_t rows = b->rows < end - row0 ? b->rows : end - row0;
        prefetch pf = {d, row0 + cap < end ? blk[(k + 1) % 2] : NULL, row0 + cap, MDSD_OK, {0}};
        rc = check_block_meta(d, b, rows, &meta, err);
        if (rc == MDSD_OK)
            rc = evaluate_block(u, workers, b, rows, br, &pf, err);
        if ((rc = check_block_rest(d, b, rows, rc, err))) {
            /* Interrupted: the rows before this block are what a periodic
             * checkpoint would record here, so the samples they closed are
             * checkpointed now and a resume loses only the open sample. */
            mdsd_err ce;
            mdsd_err_clear(&ce);
            if (rc == MDSD_EINTERRUPTED && !u->o->pub.shards && checkpoint_maybe(acc, ck, true, &ce))
                *err = ce, rc = ce.code;
            break;
        }
        for (size_t i = 0; i < rows; i++)
            accumulate(acc, pl, br, i, sample_key(p, b->sample_id[i]), u->row_offset + b->row0 + i);
        if (job->per_position &&
            (rc = mdsd_perpos_rows(job->per_position, pl, job->label, u->T, u->row_offset, b, rows,
                                   br, acc->open_row, err)))
            break;
        mdsd_progress_add(progress, rows);
        if (pf.rc) {
            *err = pf.err;
            rc = pf.rc;
        }
        if (rc == MDSD_OK)
            rc = checkpoint_maybe(acc, ck, false, err);
    }
    /* a dump rewritten while it was read gives void results */
    if (rc == MDSD_OK)
        rc = mdsd_dump_check_unchanged(d, err);
    mdsd_dump_block_free(blk[0]);
    mdsd_dump_block_free(blk[1]);
    return rc;
}

/* Folds a checkpointed part of a unit back into acc; the next row to run. */
static int resume_progress(const unit_progress *from, const plan *pl, const dump_job *job,
                           const char *path, unit_acc *acc, size_t *next, mdsd_err *err)
{
    mdsd_batch_group *g = malloc(sizeof *g);
    if (!g)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    int rc = MDSD_OK;
    size_t rows = 0;
    for (const char *s = from->text; rc == MDSD_OK && s < from->text + from->len;
         s += strcspn(s, "\n") + 1) {
        if (mdsd_batch_group_parse(s, pl, g) != MDSD_OK)
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s.partial': unit %s: a checkpointed sample summary is "
                                  "not one of this job's cells; pass `discard_partial` to start over", path,
                                  from->key);
        else
            mdsd_batch_fold_group(&acc->fold, pl, g), acc->n_groups++, rows += g->rows;
    }
    free(g);
    if (rc == MDSD_OK && (from->next <= job->begin || from->next > job->end ||
                          rows != from->next - job->begin))
        rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                              "'%s.partial': unit %s: its checkpoint covers %zu rows up to "
                              "row %zu, not the job's rows from %zu; pass `discard_partial` to start over", path,
                              from->key, rows, from->next, job->begin);
    *next = from->next;
    return rc;
}

static int unit_run(const mdsd_batch_opts *o, const plan *pl, const dump_job *job, double T,
                    size_t t_index, worker *workers, mdsd_progress *progress, FILE *groups,
                    size_t *n_groups, const unit_progress *from, unit_checkpoint *ck,
                    mdsd_report_row *rows_out, mdsd_err *err)
{
    mdsd_position_settings set = {T, o->pub.top_k, o->pub.top_p, o->pub.trials, o->pub.simulate,
                                  mdsd_seed_mix(o->pub.seed, job->index, t_index), &o->pub.verifier_opts,
                                  "table"};
    unit_ctx u = {o, pl, job->label, job->dump->V, T, set, test_hook_row(o, job->index), 0, NULL, NULL};
    size_t cap = 0;
    for (size_t p = 0; p < job->n_parts; p++) {
        size_t c = block_rows_cap(o, mdsd_dump_block_rows(job->parts[p], 1, BLOCK_BYTES));
        cap = c > cap ? c : cap;
    }
    unit_acc *acc = calloc(1, sizeof *acc);
    block_results br = {0};
    int rc = !acc ? mdsd_fail(err, MDSD_ENOMEM, "table: out of memory")
                  : block_results_alloc(&br, cap, pl, err);
    size_t start = job->begin;
    if (rc == MDSD_OK) {
        mdsd_batch_fold_init(&acc->fold, pl);
        acc->groups = groups;
        if (ck && !(acc->ckpt = open_memstream(&acc->ckpt_text, &acc->ckpt_len)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    }
    if (rc == MDSD_OK && from && (rc = resume_progress(from, pl, job, o->pub.output, acc, &start, err)) == MDSD_OK)
        mdsd_progress_skip(progress, start - job->begin);
    /* the files that hold rows [start, end); a shard may hold none */
    for (size_t p = 0; p < job->n_parts && rc == MDSD_OK; p++) {
        size_t lo = job->part_row0[p], hi = job->part_row0[p + 1];
        size_t b = start > lo ? start : lo, e = job->end < hi ? job->end : hi;
        if (b < e)
            rc = run_part(&u, job, p, b - lo, e - lo, workers, &br, acc, progress, ck, err);
    }
    if (rc == MDSD_OK) {
        close_group(acc, pl);
        mdsd_batch_finish_rows(&acc->fold, pl, job->label, T, rows_out);
        if (n_groups)
            *n_groups = acc->n_groups;
    }
    block_results_free(&br);
    if (acc && acc->ckpt)
        fclose(acc->ckpt);
    if (acc)
        free(acc->ckpt_text);
    free(acc);
    return rc;
}

/* A finished unit of a shard job as its block of text; appended to the
 * checkpoint and synced. */
static int shard_unit_finish(const mdsd_batch_opts *o, const dump_job *job, size_t t, char *groups,
                             size_t groups_len, size_t n_groups, FILE *partial, shard_units *su,
                             mdsd_err *err)
{
    char head[128], key[MDSD_CKPT_KEY_MAX], *text = NULL;
    size_t len = 0, k = job->index * o->pub.n_temperatures + t;
    snprintf(head, sizeof head, "#unit %zu %zu rows=%zu:%zu\n", job->index, t, job->begin, job->end);
    snprintf(key, sizeof key, "%s,%.10g", job->label, o->pub.temperatures[t]);
    if (mdsd_ckpt_shard_unit(head, groups, groups_len, n_groups, key, &text, &len))
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    su->text[k] = text;
    su->len[k] = len;
    if (fwrite(text, 1, len, partial) != len)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return mdsd_ckpt_sync(partial, err);
}

/* Runs every temperature of one dump, appending finished units (shard jobs:
 * their per-sample summaries, into su). */
int mdsd_unit_run_column(const mdsd_batch_opts *o, const plan *pl, const dump_job *job,
                         const row_list *done, const progress_list *prog, row_list *all, FILE *partial,
                         mdsd_progress *progress, shard_units *su, mdsd_err *err)
{
    int threads = o->pub.threads > 0 ? o->pub.threads : omp_get_max_threads();
    mdsd_err e;
    mdsd_err_clear(&e);
    worker *workers = mdsd_position_workers_alloc(threads, job->dump->V, pl->max_n, "table", &e);
    mdsd_report_row *rows = malloc(pl->count * sizeof *rows);
    int rc = !workers ? mdsd_fail_from(err, &e, "table: workers")
             : !rows  ? mdsd_fail(err, MDSD_ENOMEM, "table: out of memory")
                      : MDSD_OK;
    for (size_t t = 0; t < o->pub.n_temperatures && rc == MDSD_OK; t++) {
        double T = o->pub.temperatures[t];
        if (su ? su->text[job->index * o->pub.n_temperatures + t] != NULL
               : mdsd_rows_unit_done(done, job->label, T)) {
            mdsd_progress_skip(progress, job->end - job->begin);
            continue;
        }
        char key[600];
        snprintf(key, sizeof key, "%s,%.10g", job->label, T);
        unit_checkpoint ck = {partial, key, o->pub.checkpoint_seconds > 0 ? o->pub.checkpoint_seconds
                                            : o->pub.checkpoint_seconds < 0 ? -1.0 : 60.0, omp_get_wtime(),
                              job->per_position};
        const unit_progress *from = mdsd_partial_progress_find(prog, key);
        if (su) {
            char *groups = NULL;
            size_t len = 0, n_groups = 0;
            FILE *m = open_memstream(&groups, &len);
            if (!m) {
                rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
                break;
            }
            if (from) /* the samples of the unit's checkpoints come first */
                fwrite(from->text, 1, from->len, m);
            rc = unit_run(o, pl, job, T, t, workers, progress, m, &n_groups, from, &ck, rows, err);
            if (fclose(m) != 0 && rc == MDSD_OK)
                rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
            if (rc == MDSD_OK)
                rc = shard_unit_finish(o, job, t, groups, len, n_groups, partial, su, err);
            free(groups);
            continue;
        }
        rc = unit_run(o, pl, job, T, t, workers, progress, NULL, NULL, from, &ck, rows, err);
        perpos_mark mark = {false, 0, 0};
        if (rc == MDSD_OK && job->per_position && (rc = mdsd_perpos_sync(job->per_position, err)) == MDSD_OK)
            mark = (perpos_mark){true, job->per_position->bytes, job->per_position->hash};
        if (rc == MDSD_OK)
            rc = mdsd_partial_append_unit(partial, rows, pl->count, pl->max_n, &mark, err);
        if (rc == MDSD_OK)
            rc = mdsd_rows_push(all, rows, pl->count, err);
    }
    free(rows);
    mdsd_position_workers_free(workers, threads);
    return rc;
}
