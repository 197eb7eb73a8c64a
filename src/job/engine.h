/* engine.h - the table job's engine (mdsd_batch_run, batch.h), a file per
 * concern; what those files share. Data flows one way:
 *   plan.c      options checked; the cells (n, scheme, method) of a unit
 *   column.c    a dump column: the dump's files, its drafter, its rows
 *   position.c  one row: (p, q) at T, truncated -> every cell's value
 *   unit.c      one (column, temperature) unit: blocks of rows evaluated in
 *               parallel, folded in row order (fold.c) -> the unit's rows
 *   perpos.c    the per-position CSV (--per-position)
 *   partial.c   OUTPUT.partial: finished units and finer checkpoints, resume
 *   rows.c      result rows: lists, unit keys, the results CSV
 *   shardjob.c  a shard of the job (--shard I/N, MPI ranks): shard.h's text
 *   batch.c     mdsd_batch_run: the orchestration of the above
 * Each file calls only files listed above it (and fold.c, shard.c's readers). */
#ifndef MDSD_ENGINE_H
#define MDSD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bound.h"
#include "dump.h"
#include "fold.h"
#include "position.h"
#include "progress.h"

typedef mdsd_batch_cell cell;

typedef mdsd_batch_plan plan;

/* Everything a worker needs to evaluate one row. */
typedef struct {
    const mdsd_batch_opts *o;
    const plan *pl;
    const char *label;   /* dump label for messages */
    size_t V;
    double T;
    mdsd_position_settings set; /* the job's, at T, Monte Carlo seeded by the unit */
    size_t fail_row;     /* test hook (see test_hook_row); SIZE_MAX = none */
    size_t row_offset;   /* rows of the dump's files before the one being read */
    const mdsd_dump_model *target, *draft; /* the file being read: its truncation record */
} unit_ctx;

typedef mdsd_position_worker worker;

/* One column of the table: a dump with one of its drafters. */
typedef struct {
    mdsd_dump *dump;          /* the first file's (V, drafters) */
    int draft;                /* drafter index in the dump */
    /* A dump split across files (a directory, mdsd_dump_parts): its files'
     * dumps, drafter indices and first rows in the concatenation ([n_parts + 1]);
     * one file: n_parts = 1. Rows are numbered across the files. */
    size_t n_parts;
    mdsd_dump **parts;
    int *part_draft;
    size_t *part_row0;
    char label[512];          /* dump label, ":drafter" when several drafters are compared */
    size_t begin, end;        /* rows */
    size_t index;             /* job index: a stream coordinate for Monte Carlo */
    size_t all_begin, all_end; /* shard jobs: the rows of every shard (begin, end: this one's) */
    struct per_position_out *per_position; /* NULL = no per-position output */
} dump_job;

/* The rows are streamed to PERPOS.partial, renamed to PERPOS when the job
 * succeeds. Every marker of the results' .partial file (a finished unit, a
 * finer checkpoint) is preceded by "#perpos bytes=N fnv1a=H": the length and
 * FNV-1a hash of the per-position stream that the marker covers (synced
 * first). --resume checks the stream against the last marker's record,
 * truncates it there and goes on appending, so the file equals an
 * uninterrupted run's byte for byte. */
typedef struct per_position_out {
    FILE *f;
    char path[4096];      /* final name */
    char partial[4200];   /* PERPOS.partial */
    size_t bytes;         /* written so far, and their hash */
    uint64_t hash;
    size_t mark_bytes;    /* up to the open sample's first row (what a */
    uint64_t mark_hash;   /* finer checkpoint covers) */
} per_position_out;

/* A "#perpos" record: the per-position stream a marker covers. */
typedef struct {
    bool set;
    size_t bytes;
    uint64_t hash;
} perpos_mark;

/* Per-block results, filled in parallel, consumed in row order. */
typedef struct {
    size_t cap, cells, max_n;
    double *alpha;      /* [cap * cells] */
    double *lo, *hi;    /* [cap * cells] the certified interval (= alpha on complete rows) */
    double *per_draft;  /* [cap * cells * max_n] */
    bool *exact;        /* [cap * cells] */
    double *stats;      /* [cap * 3] entropy_p, entropy_q, tv (per-position output only) */
    int *rc;            /* [cap] */
    mdsd_err *err;      /* [cap] */
} block_results;

/* A unit's checkpointed part read back (mdsd_partial_read). */
typedef struct {
    char key[600];
    char *text;           /* the summary lines */
    size_t len, groups, next;
} unit_progress;

typedef struct {
    unit_progress *items;
    size_t count;
} progress_list;

typedef struct {
    mdsd_report_row *rows;
    size_t count, cap;
} row_list;

/* A shard job's units (shard.h): the text of each finished (column,
 * temperature) unit, resumed or computed; [job * temperatures + t]. */
typedef struct {
    char **text;
    size_t *len;
} shard_units;

/* ---- plan.c ---- */
int mdsd_plan_check_options(const mdsd_batch_opts *o, mdsd_err *err);
int mdsd_plan_make(const mdsd_batch_opts *o, size_t V, plan *pl, mdsd_err *err);
void mdsd_plan_warn_monte_carlo(const mdsd_batch_opts *o, const plan *pl, size_t V, size_t positions);

/* ---- column.c ---- */
size_t mdsd_column_count(const mdsd_batch_opts *o);
int mdsd_column_open(const mdsd_batch_opts *o, size_t j, dump_job *job, mdsd_err *err);
void mdsd_column_close(dump_job *job);

/* ---- position.c ---- */
/* Whether a row of each model is a truncated top-k row, and its missing mass. */
typedef struct {
    bool target, draft;
    double target_missing, draft_missing;
} mdsd_position_truncation;
/* Every cell at one row: alpha[cells] (truncated rows: at the plug-in
 * completion), the certified interval lo[cells], hi[cells] (= alpha on
 * complete rows; MATH.md §2.9), per_draft[cells * max_n], exact[cells]. */
int mdsd_position_eval(const unit_ctx *u, worker *w, const float *target, const float *draft,
                       size_t row, const mdsd_position_truncation *tr, double *alpha, double *lo,
                       double *hi, double *per_draft, bool *exact, mdsd_err *err);
void mdsd_position_stats(const double *p, const double *q, size_t V, double out[3]);

/* ---- perpos.c ---- */
int mdsd_perpos_mark_write(FILE *partial, const perpos_mark *mark);
int mdsd_perpos_sync(per_position_out *pp, mdsd_err *err);
int mdsd_perpos_open(per_position_out *pp, const char *path, const plan *pl,
                     const perpos_mark *from, const char *results_partial, mdsd_err *err);
int mdsd_perpos_rows(per_position_out *pp, const plan *pl, const char *label, double T,
                     size_t row_offset, const mdsd_dump_block *b, size_t rows,
                     const block_results *br, size_t open_row, mdsd_err *err);

/* ---- rows.c ---- */
int mdsd_rows_push(row_list *l, const mdsd_report_row *r, size_t k, mdsd_err *err);
bool mdsd_rows_unit_done(const row_list *done, const char *label, double T);
void mdsd_rows_unit_key(const mdsd_report_row *r, char *key, size_t size);
int mdsd_rows_write_output(const mdsd_batch_opts *o, const row_list *all, size_t max_n, mdsd_err *err);
int mdsd_rows_collect(const mdsd_batch_opts *o, const dump_job *jobs, size_t n_jobs,
                      const row_list *done, const row_list *fresh, row_list *out, mdsd_err *err);

/* ---- partial.c ---- */
/* The job a checkpoint belongs to: its options, cells and dumps' paths
 * (text[0, base_len)), then " sha256=" and each dump's content digest;
 * changed[n_dumps] (malloc'd): dump i's digest differs from the resumed
 * .partial's (set by mdsd_partial_read). */
typedef struct {
    char text[16384];
    size_t base_len;
    bool *changed;
} job_signature;
int mdsd_partial_signature(const mdsd_batch_opts *o, const plan *pl, job_signature *sig, mdsd_err *err);
bool mdsd_partial_same_temperature(double job_T, double row_T);
int mdsd_partial_policy(const mdsd_batch_opts *o, const char *partial_path, mdsd_err *err);
int mdsd_partial_read(const char *path, const job_signature *sig, size_t n_dumps, size_t cells,
                      row_list *done, progress_list *prog, perpos_mark *last, char last_key[600],
                      mdsd_err *err);
/* changed (NULL: none): from the signature, a unit of a changed dump is refused */
int mdsd_partial_check_done(const char *path, const mdsd_batch_opts *o, const dump_job *jobs,
                            size_t n_jobs, row_list *done, const bool *changed, mdsd_err *err);
int mdsd_partial_check_progress(const char *path, const mdsd_batch_opts *o, const dump_job *jobs,
                                size_t n_jobs, const progress_list *prog, const plan *pl,
                                const bool *changed, mdsd_err *err);
FILE *mdsd_partial_start(const char *partial_path, const char *signature, const row_list *done,
                         const progress_list *prog, const plan *pl, const perpos_mark *last,
                         const char *last_key, mdsd_err *err);
int mdsd_partial_append_unit(FILE *partial, const mdsd_report_row *rows, size_t k, size_t max_n,
                             const perpos_mark *mark, mdsd_err *err);
int mdsd_partial_checkpoint(FILE *partial, const char *key, const char *text, size_t len,
                            size_t groups, size_t next, const perpos_mark *mark, mdsd_err *err);
int mdsd_partial_accept_checkpoint(const char *path, size_t lineno, const char *marker, const char *text,
                                   size_t len, size_t groups, uint64_t hash, progress_list *prog,
                                   mdsd_err *err);
bool mdsd_partial_has_checkpoint(const char *path);
unit_progress *mdsd_partial_progress_find(const progress_list *l, const char *key);
void mdsd_partial_progress_drop(progress_list *prog, const char *key);
void mdsd_partial_progress_free(progress_list *prog);

/* ---- unit.c ---- */
/* Runs every temperature of one column, appending finished units to partial
 * (done: units resumed, skipped; shard jobs: su gets each unit's text). */
int mdsd_unit_run_column(const mdsd_batch_opts *o, const plan *pl, const dump_job *job,
                         const row_list *done, const progress_list *prog, row_list *all, FILE *partial,
                         mdsd_progress *progress, shard_units *su, mdsd_err *err);

/* ---- shardjob.c ---- */
int mdsd_shardjob_run(const mdsd_batch_opts *o, const plan *pl, dump_job *jobs, size_t n_jobs,
                      const char *signature, const char *partial_path, mdsd_err *err);

#endif
