/* mdsd/block.h - the block-efficiency job over tree dumps (`mdsd block
 * DUMP...`), from C (the merge of its shards: mdsd/merge.h).
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
#include <mdsd/run.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Lists are the CLI's: comma-separated text, NULL for the default. */
typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
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
    /* Called as trees finish (in the calling thread): trees done and trees in all of the
     * dump being evaluated, each dump starting again from 0 (a dump resumed from
     * OUTPUT.partial reports nothing); NULL = none. */
    void (*on_progress)(uint64_t done, uint64_t total, void *ctx);
    void *progress_ctx;
    /* What a serving engine reports (vLLM, SGLang: FILE.json, data/README.md "Engine
     * counters"), set beside the toolkit's E[tau] for the same verifier and policy and
     * the best verifier the job evaluated there: CSV columns after the others and a
     * second table (`--engine-metrics`); NULL = none. Not with shards. */
    const char *engine_metrics;
    /* shards > 0: evaluate shard `shard` (1..shards) of the job only (whole samples
     * of every dump) and write its partial aggregate to output instead of the CSV
     * (`--shard I/N`; no markdown or latex): mdsd_merge (mdsd/merge.h) folds the N
     * files into the job's CSV, the bytes of one run. 0 = the whole job. */
    size_t shard, shards;
} mdsd_block_job_opts;

/* Writes the defaults and size. */
MDSD_API void mdsd_block_job_opts_init(mdsd_block_job_opts *opts, size_t size);
#define mdsd_block_job_opts_init(opts) mdsd_block_job_opts_init((opts), sizeof *(opts))
/* Runs the job and writes its outputs (each atomically; none on failure, an
 * interrupted job's finished dumps stay in OUTPUT.partial). */
MDSD_API mdsd_status mdsd_block_run(const mdsd_block_job_opts *opts, mdsd_err *err);
/* The same, also writing the provenance sidecar OUTPUT.provenance.json of
 * `mdsd block` (is_top, each dump's size and SHA-256), published with the
 * outputs: "tool" is `tool` ("mdsd.block"), "command" "mdsd" then
 * words[0..n_words). */
MDSD_API mdsd_status mdsd_block_run_recorded(const mdsd_block_job_opts *opts, const char *tool,
                                     size_t n_words, const char *const *words, mdsd_err *err);
/* The job as a front end runs it (`mdsd block DUMP...`; mdsd/run.h, NULL = the
 * defaults): mdsd_block_run with run's provenance, notes, progress bar, signal
 * clean-up and test hook; run->usage tells a refused option. With
 * run->stdout_used and no output, markdown or latex, the Markdown table goes to
 * standard output. With run->shard_text and opts->shards > 0 (an MPI rank): the
 * shard's aggregate in memory (mdsd_merge_texts folds them). */
MDSD_API mdsd_status mdsd_block_run_with(const mdsd_block_job_opts *opts, mdsd_run_opts *run,
                                         mdsd_err *err);

/* ---- a Markov toy pair (`mdsd block --markov FILE ...`) ----
 * E[tau] of one verifier under one drafting policy on a toy pair of Markov
 * chains, exactly, from sampled draft trees or by plain speculative steps;
 * optionally the best token-level verifier's E[tau] beside it (MATH.md §5). */
#define MDSD_BLOCK_MARKOV_MAX_DEPTH 32

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    const char *markov;     /* the toy file: a line V, the target's V x V transition
                             * rows, a blank line, the draft's rows; context token 0 */
    size_t sequences;       /* seq policy: K i.i.d. draft sequences ... */
    size_t depth;           /* ... of length L */
    const char *tree;       /* or a tree policy "W1,W2,...,WL" (sequences, depth 0) */
    const char *scheme;     /* the tree's per-node scheme: iid (NULL), wor, greedy, hub */
    const char *verifier;   /* token-level (sd, rrs, rrsw, kseq, spechub, greedy, is,
                             * otm), block (bv, gbv, traversal), or optimal-token,
                             * otm-tiebreak, optimal-block (exact only) */
    uint64_t trials;        /* 0 = exact; T sampled draft trees */
    int simulate;           /* with trials: plain speculative steps instead */
    uint64_t seed;          /* default 1 */
    int threads;            /* 0 = OpenMP's default; results do not depend on it */
    int optimal;            /* also optimal-token's E[tau] */
    int force;              /* optimal-block: solve above the LP cost guard */
    /* Or the pair as arrays (markov NULL; not both): V and the target's and
     * the draft's transition matrices p, q [V * V], row-major (row i = the
     * law after token i), each row checked as a row of the file. */
    size_t V;
    const double *p, *q;
} mdsd_block_markov_opts;

typedef struct {
    size_t V, depth;
    double tree_size;       /* draft tokens in a whole draft */
    /* route and verifier point to the library's static strings (valid for the whole
     * process, not to be freed), never into the options: the result outlives them. */
    const char *route;      /* "exact", "sampled" or "simulated" */
    const char *verifier;   /* the verifier's name */
    double block_efficiency;/* E[tau] = vLLM's mean acceptance length */
    double se;              /* its standard error (0 exact) */
    uint64_t trials;
    /* reach[d] = P(at least d accepted), reach[0] = 1: vLLM's per-position
     * acceptance rate at d; per_depth[d] = reach[d] / reach[d-1] (d = 1..L) */
    double reach[MDSD_BLOCK_MARKOV_MAX_DEPTH + 1];
    double per_depth[MDSD_BLOCK_MARKOV_MAX_DEPTH + 1];
    double optimal_token;   /* with optimal: optimal-token's E[tau]; else NaN */
} mdsd_block_markov_result;

/* Writes the defaults and size. */
MDSD_API void mdsd_block_markov_opts_init(mdsd_block_markov_opts *opts, size_t size);
#define mdsd_block_markov_opts_init(opts) mdsd_block_markov_opts_init((opts), sizeof *(opts))
MDSD_API mdsd_status mdsd_block_markov(const mdsd_block_markov_opts *opts, mdsd_block_markov_result *res,
                               mdsd_err *err);

/* Live decoding (`mdsd block --markov ... --live N|inf`, MATH.md 5.9): blocks one after
 * another, each from the last token of the one before, over a run of N tokens from
 * token 0 (N = horizon; 0 = the long run), exactly, for token-level verifiers. */
typedef struct {
    size_t horizon;                   /* N; 0 = the long run */
    double live_block_efficiency;     /* live tokens per target call */
    double position_block_efficiency; /* the mean of E[tau | context] over the run's positions
                                       * (what trees at fixed positions estimate) */
    double live_calls;                /* E[target calls] in the N tokens (0: per token) */
} mdsd_block_markov_live_result;

/* mdsd_block_markov (res), and live decoding over horizon tokens (live). Refused
 * (MDSD_EINVAL) with trials, (MDSD_EUNSUPPORTED) for block verifiers and optima. */
MDSD_API mdsd_status mdsd_block_markov_live(const mdsd_block_markov_opts *opts, size_t horizon,
                                            mdsd_block_markov_result *res,
                                            mdsd_block_markov_live_result *live, mdsd_err *err);

/* The drafting policy a Markov run evaluated, as read from its options (for a
 * caller that prints it beside the result). */
typedef struct {
    int tree;              /* 0: seq, `sequences` i.i.d. sequences of length depth;
                            * 1: a tree, widths[d] children at depth d + 1 */
    size_t sequences, depth;
    size_t widths[MDSD_BLOCK_MARKOV_MAX_DEPTH];
    const char *scheme;    /* the tree's per-node scheme's name (static storage) */
    char text[256];        /* "seq K=4 L=3" or "tree 2,2 iid" */
} mdsd_block_policy;

/* mdsd_block_markov (live NULL) or mdsd_block_markov_live (live: over horizon
 * tokens, 0 = the long run) as a front end runs it: run->usage (run may be NULL)
 * tells a refused option; policy (NULL = not wanted) receives the policy. */
MDSD_API mdsd_status mdsd_block_markov_with(const mdsd_block_markov_opts *opts, mdsd_run_opts *run,
                                            size_t horizon, mdsd_block_markov_result *res,
                                            mdsd_block_markov_live_result *live,
                                            mdsd_block_policy *policy, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
