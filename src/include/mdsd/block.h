/* mdsd/block.h - the block-efficiency job over tree dumps (`mdsd block
 * DUMP...`) and the merge of shard aggregates (`mdsd merge`), from C.
 *
 * A tree dump (mdsd-runner --tree-policy ...) holds draft trees sampled at
 * contexts of target responses; the job evaluates E[tau] (expected tokens per
 * target call) of token-level verifiers on them, per (dump, verifier, policy,
 * depth), and writes the results CSV of `mdsd block -o` (the same bytes),
 * optionally Markdown and LaTeX tables. Resumable: each finished dump is kept
 * in OUTPUT.partial (MATH.md §5, README "Block efficiency"). */
#ifndef MDSD_PUBLIC_BLOCK_H
#define MDSD_PUBLIC_BLOCK_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Lists are the CLI's: comma-separated text, NULL for the default. */
typedef struct {
    size_t n_dumps;
    const char *const *dumps;  /* [n_dumps] tree dump paths */
    const char *verifiers;     /* "rrs,kseq"; NULL = each dump's defaults */
    const char *sequences;     /* seq dumps: K values "1,2,4"; NULL = 1, 2, 4, ... up to the dump's */
    const char *depths;        /* L values "1,3"; NULL = 1 .. the dump's depth */
    const char *costs;         /* draft costs c, a CSV row each: "0,0.05"; NULL = 0 */
    size_t is_top;             /* verifier option (mdsd_verifier_opts.is_top) */
    int threads;               /* 0 = OpenMP's default; results do not depend on it */
    const char *output;        /* the results CSV (required) */
    const char *markdown;      /* also the table in Markdown; NULL = none */
    const char *latex;         /* ... and in LaTeX; NULL = none */
    int resume;                /* continue from OUTPUT.partial */
    int discard_partial;       /* delete OUTPUT.partial and start over */
} mdsd_block_job_opts;

MDSD_API void mdsd_block_job_opts_init(mdsd_block_job_opts *opts);
/* Runs the job and writes its outputs (each atomically; none on failure, an
 * interrupted job's finished dumps stay in OUTPUT.partial). */
MDSD_API int mdsd_block_run(const mdsd_block_job_opts *opts, mdsd_err *err);

/* Folds the aggregates written by `mdsd table ... --shard I/N` or `mdsd block
 * ... --shard I/N` (all N shards of one job, in any order) into the job's
 * results CSV `output`: the same bytes as one process writes. markdown, latex:
 * also the rendered tables (NULL = none). A missing, duplicated, foreign or
 * altered shard is refused, naming the file. */
MDSD_API int mdsd_merge(const char *const *shards, size_t n, const char *output,
                        const char *markdown, const char *latex, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
