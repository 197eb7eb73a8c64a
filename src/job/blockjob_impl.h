/* blockjob_impl.h - what the block job's files share (blockjob.h): the job's
 * options as the library runs them, the parsed set-up, the cases of a dump,
 * a shard's run, the rows and their writers. */
#ifndef MDSD_BLOCKJOB_IMPL_H
#define MDSD_BLOCKJOB_IMPL_H

#include <stdbool.h>
#include <stdio.h>

#include <mdsd/block.h>

#include "outfile.h"
#include "shard.h"
#include "treedump.h"

typedef struct mdsd_engine_metrics mdsd_engine_metrics; /* blockengine.h */
typedef struct mdsd_engine_cmp mdsd_engine_cmp;

typedef struct {
    mdsd_block_job_opts pub;    /* the public options */
    /* while the job runs, what pub.engine_metrics holds (blockengine.h) */
    const mdsd_engine_metrics *engine;
    /* the provenance sidecar OUTPUT.provenance.json: tool NULL = none */
    const char *tool;
    int argc;
    char *const *argv;
    /* told when a failed job keeps its finished dumps in OUTPUT.partial */
    void (*note)(const char *message, void *ctx);
    void *note_ctx;
    bool progress;           /* progress bars on stderr (when a terminal) */
    bool cleanup_signals;    /* install mdsd_cleanup_signals once the checkpoint is open */
    /* test hook (set by the CLI only): SIGINT after this many finished dumps */
    size_t stop_after;
    /* scale-out: pub.shard I of pub.shards N, its aggregate to output, or
     * to *shard_data (MPI ranks: checkpoint OUTPUT.shard-I-of-N.partial, kept
     * when keep_partial); merge: the shards to fold instead of evaluating */
    char **shard_data;
    size_t *shard_size;
    bool keep_partial;
    const mdsd_shard_file *merge;
    size_t merge_n;
    /* out: the failure is a usage error (a refused option; err says which) */
    bool usage;
} mdsd_block_job;

/* The verifiers and costs of the job, parsed. */
typedef struct {
    mdsd_block_case verifiers[MDSD_BLOCK_CASE_VERIFIERS]; /* .v and .block of each */
    size_t n_verifiers;   /* 0 = each dump's defaults */
    double zero;
    double *cost;         /* [n_cost]: &zero or malloc'd */
    size_t n_cost;
} mdsd_block_setup;

/* At most this many cases per dump. */
#define MDSD_BLOCK_MAX_CASES (MDSD_BLOCK_CASE_VERIFIERS * MDSD_BLOCK_MAX_DEPTH * 8)

/* The cases of dump t (cases[MDSD_BLOCK_MAX_CASES]); a refused --depth or
 * --sequences is a usage error (j->usage). */
int mdsd_block_dump_cases(mdsd_block_job *j, const mdsd_block_setup *s, const mdsd_tree_dump *t,
                          mdsd_block_case *cases, size_t *ncases, mdsd_err *err);
/* The options of the job as its checkpoint signature records them. */
void mdsd_block_options_text(const mdsd_block_job_opts *o, char *buf, size_t size);
int mdsd_block_shard_run(mdsd_block_job *j, const mdsd_block_setup *s, mdsd_err *err);

/* One result row: a case of a dump and its result. */
typedef struct {
    const char *dump;
    mdsd_block_case c;
    mdsd_block_dump_result r;
    int live;  /* trees at the block starts of live decoding (treedump.h) */
} mdsd_block_row;

/* kind 0: the results CSV, 1: Markdown, 2: LaTeX; written and synced to a
 * temporary file (*out), published by the caller with the job's others.
 * eng: the engine comparison (NULL = none): its CSV columns after the
 * others, its table after the table. */
int mdsd_block_write_file(const char *path, int kind, const mdsd_block_row *rows, size_t n,
                          const double *cost, size_t ncost, const mdsd_engine_cmp *eng,
                          mdsd_outfile *out, mdsd_err *err);
void mdsd_block_write_table(FILE *f, int latex, const mdsd_block_row *rows, size_t n,
                            const double *cost, size_t ncost, const mdsd_engine_cmp *eng);

#endif
