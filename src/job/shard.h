/* shard.h - scale-out of the table job (README, "Running on a cluster"):
 * `mdsd table --shard I/N` and the ranks of an MPI run each evaluate whole
 * samples of every dump and write partial aggregates; mdsd_batch_merge folds
 * them into the CSV a single process writes, byte for byte.
 *
 * Which rows: of every dump column's rows [a, b), shard I of N takes the
 * samples that start in [a + (b-a)(I-1)/N, a + (b-a)I/N) (a sample cut by --positions
 * counts from a), so shards are contiguous runs of whole samples, in shard
 * order. Each sample is summarised on its own (fold.h) and the unit's
 * rows are the fold of the summaries in sample order, in one process or
 * after a merge alike; Monte-Carlo streams are keyed by (seed, column,
 * temperature, row), never by shard or rank.
 *
 * The aggregate file (text):
 *   #mdsd-table-shard 3
 *   shard I/N
 *   job SIGNATURE                  (options and cells, as the .partial's)
 *   seed S / trials K / simulate 0|1 / top_k K / top_p P / is_top S /
 *   positions A:B / max_n M        (one a line, "key value")
 *   cell N SCHEME METHOD           (one per result row of a unit)
 *   temperature T                  (C99 hex float, one per temperature)
 *   dump SIZE MTIME_NS SHA256 PATH (each file of each dump as the shard saw
 *                                  it; a merge checks size and content)
 *   column LABEL                   (each dump column)
 *   end
 * then per (column, temperature) unit, in job order:
 *   #unit J T_INDEX rows=B:E       (the shard's rows of column J)
 *   g SAMPLE ROWS ...              (one per sample, fold.h)
 *   #done LABEL,T groups=K fnv1a=H (FNV-1a over the #unit and g lines)
 * (the job layer's one checkpoint format, checkpoint.h).
 * A shard's .partial checkpoint is the same text, unit by unit as they
 * finish. Every header line but `shard` must agree among the files merged. */
#ifndef MDSD_SHARD_H
#define MDSD_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "err.h"
#include "pathset.h"
#include "report.h"

#define MDSD_SHARD_MAGIC "#mdsd-table-shard 3\n"

#include <mdsd/merge.h>

/* One aggregate: a file's name (for messages) and its text (the public
 * mdsd_shard_text, mdsd/merge.h). */
typedef mdsd_shard_text mdsd_shard_input;

/* The job's settings as the shards recorded them (for the provenance and
 * the rendered tables). */
typedef struct {
    uint64_t seed, trials;
    bool simulate;
    size_t top_k;
    double top_p;
    size_t is_top;
    size_t row_begin, row_end;
    size_t n_dumps;
    char **dumps;
} mdsd_shard_job;

void mdsd_shard_job_free(mdsd_shard_job *job);

typedef struct {
    size_t n_inputs;
    const mdsd_shard_input *inputs;  /* the N shards, in any order */
    const char *output;              /* results CSV, written atomically */
    /* filled in before before_publish runs */
    mdsd_shard_job *job;
    int (*before_publish)(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err);
    void *publish_ctx;
    /* the caller's other files (rendered tables), checked (pathset.h) with
     * the shards, the dumps they name and the CSV with its provenance
     * before anything is written; NULL = none */
    const mdsd_pathset *paths;
} mdsd_merge_opts;

/* Checks that the inputs are shards 1..N of one job, each once, whose dumps
 * are unchanged, and writes the job's CSV. A missing, duplicated, foreign or
 * altered shard is refused, naming the file. rows (optional) as
 * mdsd_batch_run's. */
int mdsd_batch_merge(const mdsd_merge_opts *m, mdsd_report_row **rows, size_t *count, mdsd_err *err);

/* ---- for batch.c ---- */

/* One unit block of an aggregate or checkpoint: [text, text + len) from its
 * #unit line through its #done line. */
typedef struct {
    size_t job, temp, begin, end, groups;
    char key[600];        /* LABEL,T of its marker */
    const char *text;
    size_t len;
} mdsd_shard_unit;

/* Parses the unit blocks of body (after the header); each marker's count
 * and checksum are checked. drop_tail (a checkpoint file): a last block
 * without its marker (a unit cut short) is dropped, and the lines of finer
 * checkpoints between units ("g ..." and "#checkpoint ...") are skipped;
 * else both are errors. */
int mdsd_shard_units_parse(const char *name, const char *body, size_t len, bool drop_tail,
                           mdsd_shard_unit **units, size_t *count, mdsd_err *err);

/* A shard file split: its shard line, header (the lines after the shard
 * line through "end", which all shards of a job share) and unit blocks. */
typedef struct {
    const mdsd_shard_input *in;
    size_t shard, shards;
    const char *header;
    size_t header_len;
    const char *body;
    size_t body_len;
    mdsd_shard_unit *units;
    size_t n_units;
} mdsd_shard_file;

/* Checks that the inputs (first line `magic`) are shards 1..N of one job,
 * each once (else an error naming the file), and returns them in shard
 * order with their units parsed and checked (free with
 * mdsd_shard_files_free(*out, *shards)). The table's and the block job's. */
int mdsd_shard_collect(const mdsd_shard_input *inputs, size_t n, const char *magic,
                       mdsd_shard_file **out, size_t *shards, mdsd_err *err);
void mdsd_shard_files_free(mdsd_shard_file *files, size_t n);

#define MDSD_BLOCK_SHARD_MAGIC "#mdsd-block-shard 1\n"

#endif
