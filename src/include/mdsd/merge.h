/* mdsd/merge.h - the merge of shard aggregates (`mdsd merge`), from C: one
 * fold for both jobs, the table job (mdsd/batch.h) and the block job
 * (mdsd/block.h), so it belongs to neither job's header. */
#ifndef MDSD_PUBLIC_MERGE_H
#define MDSD_PUBLIC_MERGE_H

#include <mdsd/common.h>
#include <mdsd/run.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Folds the aggregates written by `mdsd table ... --shard I/N` or `mdsd block
 * ... --shard I/N` (all N shards of one job, in any order) into the job's
 * results CSV `output`: the same bytes as one process writes. markdown, latex:
 * also the rendered tables (NULL = none). A missing, duplicated, foreign or
 * altered shard is refused, naming the file. */
MDSD_API mdsd_status mdsd_merge(const char *const *shards, size_t n, const char *output,
                                const char *markdown, const char *latex, mdsd_err *err);

/* mdsd_merge with the options of `mdsd merge`: markdown, latex as above,
 * and the layout of a table job's tables (block tables have one). */
typedef struct {
    size_t size;           /* set by the _init below; checked by the library (mdsd/common.h) */
    const char *markdown;  /* also the tables in Markdown; NULL = none */
    const char *latex;     /* ... and in LaTeX; NULL = none */
    int layout;            /* table shards: an mdsd_report_layout (mdsd/report.h); 0 (_init): both */
} mdsd_merge_job_opts;

/* Zeroes opts and sets size. */
MDSD_API void mdsd_merge_job_opts_init(mdsd_merge_job_opts *opts, size_t size);
#define mdsd_merge_job_opts_init(opts) mdsd_merge_job_opts_init((opts), sizeof *(opts))
/* mdsd_merge (NULL opts: no tables). markdown or latex "-": the table on
 * standard output (table shards; block shards take files), printed once the
 * CSV is in place. */
MDSD_API mdsd_status mdsd_merge_run(const char *const *shards, size_t n, const char *output,
                                    const mdsd_merge_job_opts *opts, mdsd_err *err);
/* mdsd_merge_run as a front end runs it (`mdsd merge`; mdsd/run.h, NULL = the
 * defaults): run->tool writes the provenance sidecar OUTPUT.provenance.json,
 * run->stdout_used adds standard output to the path check, run->on_note and
 * run->progress_bar are the block job's notes and progress bar. */
MDSD_API mdsd_status mdsd_merge_with(const char *const *shards, size_t n, const char *output,
                                     const mdsd_merge_job_opts *opts, mdsd_run_opts *run,
                                     mdsd_err *err);

/* One shard's aggregate in memory: what mdsd_table_run_with and mdsd_block_run_with
 * hand to run->shard_text (an MPI rank's), and a name for messages ("rank 3"). */
typedef struct {
    const char *name;
    const char *text;
    size_t size;           /* bytes of text */
} mdsd_shard_text;

/* mdsd_merge_with over aggregates in memory (in[0..n): all N shards of one job,
 * in any order) instead of files. A table job's shards gathered by its own
 * front end fold with mdsd_table_merge_texts (mdsd/batch.h), which writes the
 * table job's provenance and tables. */
MDSD_API mdsd_status mdsd_merge_texts(const mdsd_shard_text *in, size_t n, const char *output,
                                      const mdsd_merge_job_opts *opts, mdsd_run_opts *run,
                                      mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
