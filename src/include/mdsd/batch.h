/* mdsd/batch.h - per-position evaluation of many positions at once: rows of
 * target and draft logits [N, V] -> (p, q) at a temperature, with optional
 * top-k / top-p truncation of both -> alpha* of a scheme and, optionally, a
 * verifier's acceptance (exact where a closed form exists, Monte Carlo
 * otherwise). The same pipeline as `mdsd table` (one row of a dump gives
 * the same numbers), in parallel over rows (OpenMP); results do not depend on
 * the thread count. Below: the same over dumps, the `mdsd table` job. */
#ifndef MDSD_PUBLIC_BATCH_H
#define MDSD_PUBLIC_BATCH_H

#include <mdsd/alpha.h>
#include <mdsd/dump.h>
#include <mdsd/merge.h>
#include <mdsd/run.h>
#include <mdsd/verifier.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    double temperature;        /* default 1; 0 = argmax */
    size_t top_k;              /* 0 = none */
    double top_p;              /* in (0, 1]; 1 = none (0 is refused: mdsd/common.h) */
    mdsd_scheme_kind scheme;   /* default iid (not multi or custom) */
    size_t n;                  /* drafts; default 2 */
    int verifier;              /* an mdsd_verifier_kind, or -1 (default) for alpha* only */
    mdsd_verifier_opts verifier_opts;
    uint64_t trials;           /* Monte Carlo where no exact form; 0 = refuse such rows */
    int simulate;              /* Monte Carlo even where an exact form exists */
    uint64_t seed;             /* default 1; row i uses stream coordinate row0 + i */
    size_t row0;               /* row number of the first row (stream coordinate) */
    int threads;               /* 0 = OpenMP's default */
} mdsd_batch_eval_opts;

/* Writes the defaults and size (verifier_opts: mdsd_verifier_opts_init's). */
MDSD_API void mdsd_batch_eval_opts_init(mdsd_batch_eval_opts *opts, size_t size);
#define mdsd_batch_eval_opts_init(opts) mdsd_batch_eval_opts_init((opts), sizeof *(opts))

/* Evaluates N rows. target, draft: [N * V] row-major logits. Outputs (each
 * NULL to skip): alpha_star[N]; rate[N] and per_draft[N * n] (the verifier's
 * acceptance, needs opts->verifier >= 0); exact[N] (1 where rate is exact, 0
 * where it is a Monte-Carlo estimate). On failure the error names the row. */
MDSD_API mdsd_status mdsd_batch_eval(const float *target, const float *draft, size_t N, size_t V,
                    const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                    double *per_draft, unsigned char *exact, mdsd_err *err);
/* The same for double logits. */
MDSD_API mdsd_status mdsd_batch_eval_double(const double *target, const double *draft, size_t N, size_t V,
                           const mdsd_batch_eval_opts *opts, double *alpha_star, double *rate,
                           double *per_draft, unsigned char *exact, mdsd_err *err);

/* ---- the batch job over dumps (`mdsd table`) ----
 * Streams the rows of HDF5 logit dumps (mdsd/dump.h), or of arrays in memory
 * (mdsd_row_arrays, mdsd/dump.h), and writes, per (dump,
 * temperature, n, scheme or verifier), the mean acceptance with its standard
 * error clustered by sample, the gap to alpha* and per-draft rates, as the
 * tidy results CSV of `mdsd table` (atomically; resumable). */
typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    size_t n_dumps;
    const char *const *dumps;              /* [n_dumps] paths */
    size_t n_temperatures;
    const double *temperatures;            /* [n_temperatures]; 0 = argmax */
    size_t n_counts;
    const size_t *draft_counts;            /* [n_counts] values of n */
    size_t n_schemes;
    const mdsd_scheme_kind *schemes;       /* [n_schemes]: alpha* rows */
    size_t n_verifiers;
    const mdsd_verifier_kind *verifiers;   /* [n_verifiers] */
    size_t n_draft_models;
    const char *const *draft_models;       /* drafter groups to compare; 0 = the first */
    size_t row_begin, row_end;             /* rows [row_begin, row_end); row_end 0 = all */
    size_t top_k;                          /* 0 = none */
    double top_p;                          /* in (0, 1]; 1 = none (0 is refused) */
    uint64_t trials;                       /* Monte Carlo where no exact form; 0 = none */
    int simulate;                          /* Monte Carlo for every verifier (needs trials) */
    uint64_t seed;                         /* default 1 */
    int threads;                           /* 0 = OpenMP's default */
    mdsd_verifier_opts verifier_opts;
    const char *output;                    /* the results CSV */
    int resume;                            /* continue from OUTPUT.partial */
    /* Called as blocks of rows finish (in the calling thread): rows done and
     * rows in all, over every (dump, temperature) unit; NULL = none. */
    void (*on_progress)(uint64_t done, uint64_t total, void *ctx);
    void *progress_ctx;
    /* Rows in memory: each a column after the dumps, as a one-file dump
     * would be (the same numbers, bit for bit); no resume or shards with
     * them (nothing on disk identifies them). */
    size_t n_arrays;
    const mdsd_row_arrays *arrays;         /* [n_arrays] */
    int discard_partial;                   /* delete an existing OUTPUT.partial and start
                                            * over (not with resume); without either, an
                                            * existing OUTPUT.partial is refused */
    /* Finer checkpoints inside a (dump, temperature) unit (not with shards): every this
     * many seconds the samples finished so far go to OUTPUT.partial, so resume loses at
     * most that much work. 0 = every 60 s; < 0 = after every block of rows (the CLI's
     * --checkpoint-seconds 0); finite. */
    double checkpoint_seconds;
    /* shards > 0: evaluate shard `shard` (1..shards) of the job only (whole samples of
     * every dump) and write its partial aggregates to output instead of the CSV
     * (`--shard I/N`): mdsd_merge (mdsd/merge.h) folds the N files into the job's CSV,
     * the bytes of one run. 0 = the whole job. */
    size_t shard, shards;
    /* The tables of `mdsd table --markdown/--latex` (mdsd/report.h's renderers,
     * marked as the job ran: is_top, trials): files written atomically before
     * the CSV appears (all outputs appear, or none); "-" = standard output,
     * printed once the CSV is in place; NULL = none. */
    const char *markdown;
    const char *latex;
    int layout;                            /* an mdsd_report_layout; 0 (_init): both */
    /* The per-position CSV of `mdsd table --per-position FILE`, streamed:
     * dump,temperature,row,sample,position,entropy_p,entropy_q,tv,
     * alpha_star_<scheme>_n<n>...,rate_<verifier>_n<n>... (to PER_POSITION.partial
     * until the job ends; resume goes on from its checkpoint); NULL = none. */
    const char *per_position;
} mdsd_table_opts;

/* Writes the defaults and size (verifier_opts: mdsd_verifier_opts_init's). */
MDSD_API void mdsd_table_opts_init(mdsd_table_opts *opts, size_t size);
#define mdsd_table_opts_init(opts) mdsd_table_opts_init((opts), sizeof *(opts))
/* Runs the job and writes opts->output (nothing on failure). */
MDSD_API mdsd_status mdsd_table_run(const mdsd_table_opts *opts, mdsd_err *err);
/* The same, also writing the provenance sidecar OUTPUT.provenance.json of
 * `mdsd table` (its keys: settings, each dump's size and SHA-256), finished
 * before the CSV appears: "tool" is `tool` ("mdsd.table"), "command" "mdsd"
 * then words[0..n_words) (how the caller was called). */
MDSD_API mdsd_status mdsd_table_run_recorded(const mdsd_table_opts *opts, const char *tool, size_t n_words,
                                     const char *const *words, mdsd_err *err);
/* The job as a front end runs it (`mdsd table`; mdsd/run.h, NULL = the defaults):
 * mdsd_table_run with run's provenance (tool, words), notes, progress bar, test hooks
 * and standard output in the path check. With run->shard_text and opts->shards > 0
 * (an MPI rank): shard `shard` of `shards` only, its aggregate in memory, nothing
 * rendered (mdsd_table_merge_texts renders). */
MDSD_API mdsd_status mdsd_table_run_with(const mdsd_table_opts *opts, mdsd_run_opts *run,
                                         mdsd_err *err);
/* The checks mdsd_table_run_with makes before any work: the options, then every
 * file the job reads and writes (the dumps, the output and its sidecars, the
 * rendered tables; no file both read and written, no two outputs on one path).
 * For a front end that runs the job in parts (MPI ranks), to refuse up front. */
MDSD_API mdsd_status mdsd_table_check(const mdsd_table_opts *opts, const mdsd_run_opts *run,
                                      mdsd_err *err);
/* Rank 0 of a job run in shards: every shard's aggregate (in[0..n), from
 * mdsd_table_run_with with run->shard_text) folded into the outputs the whole job
 * writes in one process (opts->output, markdown, latex, the provenance of run->tool),
 * the same bytes. */
MDSD_API mdsd_status mdsd_table_merge_texts(const mdsd_table_opts *opts, mdsd_run_opts *run,
                                            const mdsd_shard_text *in, size_t n, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
