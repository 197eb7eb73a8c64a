/* mdsd/run.h - how a front end runs the jobs (the table job, mdsd/batch.h; the
 * block job and its Markov route, mdsd/block.h; the merge, mdsd/merge.h): what
 * a command line adds to a job's options without changing its results. The
 * `mdsd` program is a front end of this kind: it parses its options into the
 * job's options struct and these, and calls the _with functions, so that the
 * library and the command line are one code path. Every field is optional:
 * mdsd_run_opts_init's defaults run a job exactly as its plain function does
 * (mdsd_table_run, mdsd_block_run, mdsd_merge_run, mdsd_block_markov). */
#ifndef MDSD_PUBLIC_RUN_H
#define MDSD_PUBLIC_RUN_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    /* The provenance sidecar OUTPUT.provenance.json beside the results: "tool" is
     * `tool` ("mdsd table"), "command" is "mdsd" then words[0..n_words); NULL = none
     * (the _recorded functions set these three). */
    const char *tool;
    size_t n_words;
    const char *const *words;
    /* Notes (not failures), in the calling thread: a combination of the options that
     * does not apply and is skipped; where finished work was kept after a failure;
     * after a table job, results from a single sample (s.e. not clustered). NULL = none. */
    void (*on_note)(const char *message, void *ctx);
    void *note_ctx;
    int progress_bar;     /* a progress bar on stderr while the job runs (a terminal only) */
    int stdout_used;      /* the caller writes standard output too: a file that is standard
                           * output is then one more output of the path check (a job never
                           * writes over its own input); the block job without any output
                           * file may then print its Markdown table there */
    int cleanup_signals;  /* block job: SIGINT / SIGTERM remove the job's temporary files
                           * and keep its checkpoint (the table job's caller installs its own) */
    /* One shard in memory (an MPI rank; mdsd_table_run_with, mdsd_block_run_with with
     * the options' shards > 0): the shard's aggregate is handed to *shard_text (malloc'd,
     * release with free(); *shard_size bytes) instead of written to the output, and its
     * checkpoint is OUTPUT.shard-I-of-N.partial, kept for the caller to remove once the
     * merged outputs exist (mdsd_table_merge_texts, mdsd_merge_texts); NULL = none. */
    char **shard_text;
    size_t *shard_size;
    /* Test hooks (the toolkit's own tests reach failure and resume paths with them,
     * without timing races); 0 = off. The table job: the row test_fail_row of dump
     * column test_fail_column fails as a malformed row would (with test_fail), and
     * blocks of at most test_block_rows rows; the block job: an interrupt
     * (mdsd_interrupt) after test_stop_after finished dumps. */
    int test_fail;
    size_t test_fail_column, test_fail_row;
    size_t test_block_rows;
    size_t test_stop_after;
    /* Out: set to 1 when a call fails because an option is refused (an invalid
     * combination or value; what a command line reports as a usage error), else 0. */
    int usage;
} mdsd_run_opts;

/* Writes the defaults (all off) and size. */
MDSD_API void mdsd_run_opts_init(mdsd_run_opts *opts, size_t size);
#define mdsd_run_opts_init(opts) mdsd_run_opts_init((opts), sizeof *(opts))

#ifdef __cplusplus
}
#endif
#endif
