/* batch.h - the batch job behind `mdsd table`: stream the rows of logit
 * dumps, turn each row into (p, q) at every temperature, and compute per
 * position the optimal acceptance alpha* of every draft scheme and the
 * acceptance of every verifier (exact where a closed form exists, Monte
 * Carlo otherwise), then aggregate per (dump, temperature, n, scheme,
 * method) into report rows (report.h): mean, standard error clustered by
 * sample, gap to the scheme's alpha* with its paired standard error, and
 * per-draft acceptance.
 *
 * Data flow is one-way: dump block -> distributions -> per-position values
 * (in parallel, OpenMP over rows) -> aggregates fed in row order (so results
 * do not depend on the thread count) -> rows. Memory is one block of rows,
 * independent of the number of positions.
 *
 * Resumable: each finished (dump, temperature) unit is appended to
 * OUTPUT.partial with a marker line "#done LABEL,T rows=K fnv1a=H" (its row
 * count and the FNV-1a hash of its row lines) and fsync'd; --resume checks
 * every finished unit against its marker (a missing, extra, reordered or
 * altered row is refused, naming the unit) and skips it. Without --resume an
 * existing OUTPUT.partial stops the job (resume it, or discard it
 * explicitly). OUTPUT.lock (flock) keeps two jobs off one output. The final
 * CSV is written atomically. Inside a unit, the samples finished so far are
 * checkpointed every checkpoint_seconds: their summary lines (fold.h)
 * and "#checkpoint LABEL,T next=R groups=K fnv1a=H"; --resume folds them
 * back and goes on from row R, with the same bits as an uninterrupted run. */
#ifndef MDSD_BATCH_H
#define MDSD_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "outfile.h"
#include "pathset.h"
#include "report.h"
#include "scheme.h"
#include "verifier.h"

#include <mdsd/batch.h>

/* Test hooks, off when zeroed. The library reads no environment for them:
 * the CLI sets them through mdsd_run_opts' test fields (src/cli/cli_hooks.c:
 * MDSD_TABLE_FAIL=COLUMN:ROW, MDSD_TABLE_BLOCK_ROWS=K; tests/test_scale.c). */
typedef struct {
    bool fail;                 /* row fail_row of dump column fail_column fails as a bad row would */
    size_t fail_column, fail_row;
    size_t block_rows;         /* > 0: blocks of at most this many rows (several blocks, checkpoints) */
} mdsd_batch_hooks;

typedef struct {
    /* The public options (mdsd/batch.h): dumps, temperatures, draft counts,
     * schemes, verifiers, drafters (each a column, labelled DUMP:NAME when
     * several are compared or the dump has several), rows, top-k / top-p
     * truncation of p and q, trials, simulate, seed, threads, verifier
     * options, the results CSV (its .partial file lives beside it) and resume. */
    mdsd_table_opts pub;
    /* Per-position results: a CSV streamed row by row (written to a temporary
     * name, renamed at the end), one line per (dump column, temperature, row):
     *   dump,temperature,row,sample,position,entropy_p,entropy_q,tv,
     *   alpha_star_<scheme>_n<n>...,rate_<verifier>_n<n>...
     * (entropies in nats, after temperature and truncation; tv = TV(p, q)).
     * NULL = none. Not with resume (finished units' rows are not kept). */
    const char *per_position;
    bool progress;                       /* progress bar on stderr (when a terminal) */
    /* Told about (scheme, method, n) combinations that do not apply and are
     * skipped, e.g. hub at n = 3; NULL = silent. */
    void (*note)(const char *message, void *ctx);
    void *note_ctx;
    /* Called with the final rows once the results CSV is written to its
     * temporary file and before it is renamed into place; a failure leaves
     * no CSV. NULL = none. (api_table_run writes the markdown/latex files here,
     * so that either every output appears or none.) */
    int (*before_publish)(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err);
    void *publish_ctx;
    /* Scale-out (shard.h): pub.shard of pub.shards (mdsd/batch.h), its
     * partial aggregates handed to *shard_data / *shard_size instead of
     * written to `output` (malloc'd; MPI ranks, whose checkpoints are then
     * OUTPUT.shard-I-of-N.partial). mdsd_batch_merge makes the CSV.
     * keep_partial: leave the checkpoint for the caller to remove once the
     * CSV exists. (discard_partial and checkpoint_seconds: pub's.) */
    char **shard_data;
    size_t *shard_size;
    bool keep_partial;
    mdsd_batch_hooks test;
} mdsd_batch_opts;

/* Every file the job reads (the dumps, each file of a split one) and
 * writes (the output, its .partial, .lock and .provenance.json, the
 * per-position file and its .partial; an MPI rank's checkpoint), for the
 * output-safety check (pathset.h) that mdsd_batch_run makes before any work;
 * a caller writing more files adds them and checks the whole set first. */
void mdsd_batch_paths(const mdsd_batch_opts *opts, mdsd_pathset *s);

/* ---- the rendered tables and the provenance (tablerender.c) ----
 * What `mdsd table` writes beside the CSV, for the CLI and mdsd_table_run
 * alike: pub.markdown / pub.latex rendered in pub.layout, marked as the job
 * ran, each written and finished before the CSV appears (its before_publish:
 * with the provenance sidecar when `tool` is set), published after it; "-"
 * printed on standard output then. */
typedef struct {
    const mdsd_batch_opts *job;
    const char *tool;          /* provenance "tool" ("mdsd table"); NULL: no sidecar */
    int argc;
    char *const *argv;         /* the command after "mdsd" */
    bool stdout_output;        /* the caller writes standard output (checked with the files) */
    mdsd_outfile markdown_out, latex_out; /* rendered, not yet published */
} mdsd_table_outputs;

/* The job's files (mdsd_batch_paths) with the rendered ones, checked before any work. */
int mdsd_table_outputs_check(const mdsd_table_outputs *t, mdsd_err *err);
/* A before_publish (ctx: the mdsd_table_outputs): provenance, then the files. */
int mdsd_table_outputs_before(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err);
/* After the CSV: the files published, the "-" ones printed. */
int mdsd_table_outputs_publish(mdsd_table_outputs *t, const mdsd_report_row *rows, size_t count,
                               mdsd_err *err);
/* Removes what was rendered and not published (safe to call always). */
void mdsd_table_outputs_abort(mdsd_table_outputs *t);

/* Runs the job and writes opts->output atomically. rows/count (optional)
 * receive the result rows (free with free()). */
int mdsd_batch_run(const mdsd_batch_opts *opts, mdsd_report_row **rows, size_t *count,
                   mdsd_err *err);

#endif
