/* mdsd block: block efficiency E[tau] (expected tokens per target call) of
 * token-level recursive verification with multi-token drafts (MATH.md §5), on
 * a Markov toy pair (mdsd_block_markov_with): exact, from sampled draft trees,
 * by plain simulation, and the optimum over all verifiers; or over tree dumps
 * (mdsd_block_run_with), both <mdsd/block.h>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdsd/block.h>
#include <mdsd/merge.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd block --markov FILE (--sequences K --depth L | --tree W1,W2,...\n"
    "                  [--scheme S]) --verifier V [--exact] [--trials T --seed S]\n"
    "                  [--simulate] [--optimal] [--force] [--live N|inf]\n"
    "                  [--cost C1,C2,...] [--json]\n"
    "       mdsd block DUMP... [--verifiers V1,V2] [--sequences K1,K2,...]\n"
    "                  [--depth L1,L2,...] [--cost C1,...] [-o CSV] [--markdown FILE]\n"
    "                  [--latex FILE] [--threads N] [--engine-metrics FILE.json]\n"
    "Block efficiency E[tau], tau = accepted draft tokens + 1 (the correction or\n"
    "bonus token), of token-level recursive verification: at each node the\n"
    "verifier sees the drafts' tokens there and outputs y ~ p(.|node); a drafted y\n"
    "is accepted and verification goes on at that child with the drafts through\n"
    "it; otherwise the step ends. Or of a block verifier, which sees the whole\n"
    "draft and accepts a drafted prefix and one next token jointly. Per-depth rate\n"
    "d = P(depth d accepted | depth d-1 accepted). In vLLM's words: its mean\n"
    "acceptance length (1 + accepted / drafts) is E[tau], and its per-position\n"
    "acceptance rate at d (accepted at d / drafts) is the unconditional\n"
    "P(at least d accepted), the product of the rates 1..d.\n\n"
    "  --markov FILE      Markov toy pair: a line 'V', the target's V x V\n"
    "                     transition rows, a blank line, the draft's rows;\n"
    "                     the context is token 0\n"
    "  --sequences K      seq policy: K i.i.d. draft sequences of length L\n"
    "  --depth L          their length\n"
    "  --tree W1,...,WL   tree policy: a node at depth d-1 draws W_d children\n"
    "  --scheme S         the tree's per-node scheme: iid (default), wor, greedy,\n"
    "                     hub (W = 2); equal tokens are one child\n"
    "  -v, --verifier V   token-level: sd, rrs, rrsw, kseq, spechub, greedy, is,\n"
    "                     otm, ot (each must accept the node's scheme: seq: iid with\n"
    "                     the surviving drafts; tree: S with W_d); block: bv\n"
    "                     (Sun et al., seq K = 1), gbv (Thomas & Pal, seq),\n"
    "                     traversal (Weng et al., seq, iid and wor trees);\n"
    "                     optima (--exact only): optimal-token (the best\n"
    "                     token-level verifier), otm-tiebreak (alpha* at every\n"
    "                     node, ties broken by the children's values),\n"
    "                     optimal-block (the best lossless verifier that sees the\n"
    "                     whole draft: an LP over draft outcomes; toy sizes)\n"
    "  --exact            enumerate every draft outcome (the default without\n"
    "                     --trials)\n"
    "  --trials T         sample T draft trees and integrate the verifier's own\n"
    "                     randomness out exactly on each; prints stderr. The same\n"
    "                     trees for every verifier; independent of --threads\n"
    "  --seed S           seed of the trials (default 1)\n"
    "  --threads N        OpenMP threads (default: all)\n"
    "  --simulate         with --trials: plain speculative steps instead (the\n"
    "                     verifier's randomness sampled too; a slower reference)\n"
    "  --optimal          also optimal-token: the largest E[tau] of any token-level\n"
    "                     verifier (backward induction, one OTM LP per node, GLPK)\n"
    "                     and the gap to it (optimal-block: -v optimal-block)\n"
    "  --force            optimal-block: solve an LP above the cost guard anyway\n"
    "  --live N|inf       also live decoding (exact; MATH.md 5.9; token-level\n"
    "                     verifiers): blocks one after another, each from the last\n"
    "                     token of the one before, over a run of N tokens from\n"
    "                     token 0 (inf: the long run): live tokens per target\n"
    "                     call, and beside it the mean of E[tau | context] over the\n"
    "                     run's positions (what trees at fixed positions estimate)\n"
    "  --cost C1,...      draft-step cost c relative to a target call: speed-up\n"
    "                     E[tau] / (1 + c L) (L draft steps, each drafting a whole\n"
    "                     level at once; Leviathan et al. / SpecTr)\n"
    "      --json         one JSON object\n"
    "\nTree dumps (data/README.md, 'Tree dumps'; made by mdsd-runner --tree-policy):\n"
    "E[tau] per verifier and sub-policy, the mean over trees of E[tau | tree] (the\n"
    "verifier's randomness integrated out at every node), standard error clustered\n"
    "by sample, per-depth rates, speed-up per cost. Deterministic and independent of\n"
    "--threads. A seq dump of K sequences answers every K' <= K and L' <= L; an iid\n"
    "or wor tree dump its width prefixes; greedy and hub trees their own widths.\n"
    "A directory is a tree dump split across its *.h5 files (name order), read as\n"
    "one dataset: samples of different files are distinct; every file must match\n"
    "the first (vocabulary, models, tokenizer, tree attributes).\n"
    "Trees at fixed response positions (contexts = positions) give the mean of\n"
    "E[tau | context] over those positions, not live decoding, which starts each\n"
    "block where the last one stopped (MATH.md 5.9). A dump made at the block\n"
    "starts of live runs (mdsd-runner --tree-live V; contexts = live) gives live\n"
    "tokens per target call for V and its policy: it evaluates that case only.\n"
    "  --verifiers LIST   default: sd (one draft), rrs, kseq on seq and iid trees;\n"
    "                     rrsw on wor, greedy on greedy, spechub on hub trees; the\n"
    "                     block verifiers bv, gbv, traversal where defined\n"
    "  --sequences LIST   seq dumps: K' values (default 1,2,4,.. up to K, and K)\n"
    "  --depth LIST       L' values (default 1..L)\n"
    "  -o, --output CSV   tidy CSV (one row per case and cost), written atomically;\n"
    "                     without it a Markdown table goes to stdout. Columns:\n"
    "                     dump, verifier, policy, scheme, sequences, widths,\n"
    "                     depth, tree_size, trees, samples, block_efficiency,\n"
    "                     stderr, per_depth (rates d = 1..L, ';'), cost,\n"
    "                     speedup, per_depth_stderr (delta method, clustered),\n"
    "                     contexts (positions or live, above),\n"
    "                     mean_acceptance_length (vLLM's; = block_efficiency),\n"
    "                     per_position_acceptance_rate (vLLM's, unconditional,\n"
    "                     d = 1..L, ';'), per_position_acceptance_rate_stderr\n"
    "                     (clustered, d = 1..L, ';')\n"
    "  --markdown FILE, --latex FILE   the table as Markdown / LaTeX\n"
    "  --engine-metrics FILE.json   what a serving engine reports (vLLM, SGLang:\n"
    "                     mean acceptance length or SGLang's accept rate,\n"
    "                     per-position acceptance rates, K or widths, L, verifier,\n"
    "                     steps; keys: data/README.md, 'Engine counters'), set\n"
    "                     beside the toolkit's E[tau] for the same verifier and\n"
    "                     policy on each dump and the best verifier the job\n"
    "                     evaluated at that policy (widen --verifiers to search\n"
    "                     more), with the gap toolkit - engine and its s.e.: a\n"
    "                     second table after the Markdown/LaTeX one, and CSV\n"
    "                     columns after the others: engine, engine_verifier,\n"
    "                     engine_role (same, best, same;best; empty on other rows),\n"
    "                     engine_steps, engine_mean_acceptance_length(_stderr),\n"
    "                     engine_gap(_stderr), engine_per_position_acceptance_rate,\n"
    "                     engine_per_position_gap(_stderr) (';' lists, d = 1..L).\n"
    "                     Refused: a file that is malformed, an engine policy the\n"
    "                     dump does not answer or the job does not evaluate;\n"
    "                     not with --shard or mpirun\n"
    "  --is-top S         is: free LP weights only among the top S tokens (needed\n"
    "                     at large V; see mdsd accept --help)\n"
    "  --resume           go on from CSV.partial: each finished dump is kept\n"
    "                     there (results as exact hex floats, a row count and a\n"
    "                     checksum per dump), so an interrupted job loses at most\n"
    "                     the dump it was on; refused if options or dumps changed\n"
    "  --discard-partial  delete CSV.partial and start over (without one of the\n"
    "                     two, an existing CSV.partial stops the job)\n"
    "  --shard I/N        evaluate the trees of shard I of N only (whole samples)\n"
    "                     and write its partial aggregates to -o FILE; mdsd merge\n"
    "                     -o CSV FILE... writes the CSV of the whole job, byte for\n"
    "                     byte. Built with MPI (make MPI=1) and run under mpirun,\n"
    "                     rank r is shard r+1 of N and rank 0 writes the outputs\n"
    "  -h, --help         this help\n"
    "\nJSON keys: verifier, policy, depth, sequences (seq) or widths and scheme\n"
    "(tree), tree_size (draft tokens), V, route (exact, sampled, simulated),\n"
    "block_efficiency, stderr (0 exact), trials, seed, reach ([L+1],\n"
    "P(at least d accepted)), per_depth ([L], the rates), mean_acceptance_length\n"
    "(vLLM's name; = block_efficiency), per_position_acceptance_rate ([L], vLLM's\n"
    "name for reach 1..L), with --optimal:\n"
    "optimal_token_block_efficiency, gap_to_optimal_token (optimal-token -\n"
    "block_efficiency); with --live: live_horizon (N, 0 = inf),\n"
    "live_block_efficiency (live tokens per target call),\n"
    "position_block_efficiency (the position mean), live_calls (E[calls] in N\n"
    "tokens; inf: per token); with --cost: speedup [{cost, speedup}].\n";

enum {
    OPT_MARKOV = CLI_OPT_COMMAND,
    OPT_SEQUENCES,
    OPT_DEPTH,
    OPT_TREE,
    OPT_EXACT,
    OPT_TRIALS,
    OPT_SEED,
    OPT_THREADS,
    OPT_SIMULATE,
    OPT_OPTIMAL,
    OPT_COST,
    OPT_VERIFIERS,
    OPT_MARKDOWN,
    OPT_LATEX,
    OPT_IS_TOP,
    OPT_RESUME,
    OPT_DISCARD_PARTIAL,
    OPT_SHARD,
    OPT_FORCE,
    OPT_LIVE,
    OPT_ENGINE_METRICS
};

typedef struct {
    const char *markov, *verifier, *tree, *scheme, *cost, *live;
    const char *sequences_spec, *depth_spec, *verifiers, *output, *markdown, *latex;
    const char *engine_metrics;
    size_t sequences, depth, threads, is_top, live_n;
    char **dumps;
    size_t n_dumps;
    bool exact, simulate, optimal, force, json, help, resume, discard_partial;
    unsigned long long trials, seed;
    /* scale-out: shard I of N (0: the whole job), its aggregate to -o, or
     * to *shard_data (MPI ranks: mdsd_run_opts.shard_text) */
    size_t shard, shards;
    char **shard_data;
    size_t *shard_size;
    mdsd_err *shard_err;       /* MPI ranks: the failure goes here, unprinted */
    const char *tool;          /* the provenance's "tool" (NULL: none written) */
} block_opts;

static int parse_args(int argc, char **argv, block_opts *o)
{
    static const struct option longopts[] = {
        {"markov", required_argument, NULL, OPT_MARKOV},
        {"sequences", required_argument, NULL, OPT_SEQUENCES},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"tree", required_argument, NULL, OPT_TREE},
        {"scheme", required_argument, NULL, 's'},
        {"verifier", required_argument, NULL, 'v'},
        {"exact", no_argument, NULL, OPT_EXACT},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"simulate", no_argument, NULL, OPT_SIMULATE},
        {"optimal", no_argument, NULL, OPT_OPTIMAL},
        {"force", no_argument, NULL, OPT_FORCE},
        {"cost", required_argument, NULL, OPT_COST},
        {"verifiers", required_argument, NULL, OPT_VERIFIERS},
        {"output", required_argument, NULL, 'o'},
        {"markdown", required_argument, NULL, OPT_MARKDOWN},
        {"latex", required_argument, NULL, OPT_LATEX},
        {"is-top", required_argument, NULL, OPT_IS_TOP},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"discard-partial", no_argument, NULL, OPT_DISCARD_PARTIAL},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"live", required_argument, NULL, OPT_LIVE},
        {"engine-metrics", required_argument, NULL, OPT_ENGINE_METRICS},
        {"json", no_argument, NULL, CLI_OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "s:v:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_MARKOV: o->markov = optarg; break;
        case OPT_SEQUENCES: o->sequences_spec = optarg; break;
        case OPT_DEPTH: o->depth_spec = optarg; break;
        case OPT_VERIFIERS: o->verifiers = optarg; break;
        case 'o': o->output = optarg; break;
        case OPT_MARKDOWN: o->markdown = optarg; break;
        case OPT_LATEX: o->latex = optarg; break;
        case OPT_IS_TOP: if (cli_parse_size(optarg, "--is-top", "block", &o->is_top)) return -1; break;
        case OPT_TREE: o->tree = optarg; break;
        case 's': o->scheme = optarg; break;
        case 'v': o->verifier = optarg; break;
        case OPT_EXACT: o->exact = true; break;
        case OPT_TRIALS: if (cli_parse_u64(optarg, "--trials", "block", &o->trials)) return -1; break;
        case OPT_SEED: if (cli_parse_u64(optarg, "--seed", "block", &o->seed)) return -1; break;
        case OPT_THREADS: if (cli_parse_size(optarg, "--threads", "block", &o->threads)) return -1; break;
        case OPT_SIMULATE: o->simulate = true; break;
        case OPT_RESUME: o->resume = true; break;
        case OPT_DISCARD_PARTIAL: o->discard_partial = true; break;
        case OPT_SHARD:
            if (cli_parse_shard(optarg, "block", &o->shard, &o->shards))
                return -1;
            break;
        case OPT_OPTIMAL: o->optimal = true; break;
        case OPT_FORCE: o->force = true; break;
        case OPT_COST: o->cost = optarg; break;
        case OPT_LIVE: o->live = optarg; break;
        case OPT_ENGINE_METRICS: o->engine_metrics = optarg; break;
        case CLI_OPT_JSON: o->json = true; break;
        case 'h': o->help = true; break;
        default: cli_usage_error("block", "unrecognised option"); return -1;
        }
    }
    o->dumps = argv + optind;
    o->n_dumps = (size_t)(argc - optind);
    if (o->markov) {
        if (o->n_dumps) {
            cli_usage_error("block", "--markov and dumps (%s) are two routes: give one",
                            argv[optind]);
            return -1;
        }
        if (o->sequences_spec && cli_parse_size(o->sequences_spec, "--sequences", "block",
                                                &o->sequences))
            return -1;
        if (o->depth_spec && cli_parse_size(o->depth_spec, "--depth", "block", &o->depth))
            return -1;
    }
    return 0;
}

static void print_json(const block_opts *o, const mdsd_block_policy *pol,
                       const mdsd_block_markov_result *r, const mdsd_block_markov_live_result *live,
                       const double *cost, size_t ncost)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "verifier", r->verifier);
    mdsd_json_kv_string(&j, "policy", pol->tree ? "tree" : "seq");
    mdsd_json_kv_integer(&j, "depth", (long long)pol->depth);
    if (!pol->tree) {
        mdsd_json_kv_integer(&j, "sequences", (long long)pol->sequences);
    } else {
        mdsd_json_key(&j, "widths");
        mdsd_json_array_begin(&j);
        for (size_t d = 0; d < pol->depth; d++)
            mdsd_json_integer(&j, (long long)pol->widths[d]);
        mdsd_json_array_end(&j);
        mdsd_json_kv_string(&j, "scheme", pol->scheme);
    }
    mdsd_json_kv_number(&j, "tree_size", r->tree_size);
    mdsd_json_kv_integer(&j, "V", (long long)r->V);
    mdsd_json_kv_string(&j, "route", r->route);
    mdsd_json_kv_number(&j, "block_efficiency", r->block_efficiency);
    mdsd_json_kv_number(&j, "stderr", r->se);
    mdsd_json_kv_integer(&j, "trials", (long long)r->trials);
    mdsd_json_kv_integer(&j, "seed", (long long)o->seed);
    mdsd_json_key(&j, "reach");
    mdsd_json_number_array(&j, r->reach, pol->depth + 1);
    mdsd_json_key(&j, "per_depth");
    mdsd_json_number_array(&j, r->per_depth + 1, pol->depth);
    /* vLLM's names for E[tau] and the unconditional reaches (MATH.md §5.2) */
    mdsd_json_kv_number(&j, "mean_acceptance_length", r->block_efficiency);
    mdsd_json_key(&j, "per_position_acceptance_rate");
    mdsd_json_number_array(&j, r->reach + 1, pol->depth);
    if (o->optimal) {
        mdsd_json_kv_number(&j, "optimal_token_block_efficiency", r->optimal_token);
        mdsd_json_kv_number(&j, "gap_to_optimal_token", r->optimal_token - r->block_efficiency);
    }
    if (live) {
        mdsd_json_kv_integer(&j, "live_horizon", (long long)live->horizon);
        mdsd_json_kv_number(&j, "live_block_efficiency", live->live_block_efficiency);
        mdsd_json_kv_number(&j, "position_block_efficiency", live->position_block_efficiency);
        mdsd_json_kv_number(&j, "live_calls", live->live_calls);
    }
    if (ncost) {
        mdsd_json_key(&j, "speedup");
        mdsd_json_array_begin(&j);
        for (size_t i = 0; i < ncost; i++) {
            mdsd_json_object_begin(&j);
            mdsd_json_kv_number(&j, "cost", cost[i]);
            mdsd_json_kv_number(&j, "speedup", r->block_efficiency / (1.0 + cost[i] * (double)pol->depth));
            mdsd_json_object_end(&j);
        }
        mdsd_json_array_end(&j);
    }
    mdsd_json_object_end(&j);
}

static void print_text(const block_opts *o, const mdsd_block_policy *pol,
                       const mdsd_block_markov_result *r, const mdsd_block_markov_live_result *live,
                       const double *cost, size_t ncost)
{
    printf("verifier %s, policy %s, V = %zu, %s\n", r->verifier, pol->text, r->V, r->route);
    if (r->trials)
        printf("block efficiency E[tau] = %.9f +- %.2g (stderr, %llu trees)\n", r->block_efficiency,
               r->se, (unsigned long long)r->trials);
    else
        printf("block efficiency E[tau] = %.12g\n", r->block_efficiency);
    printf("per-depth acceptance:");
    for (size_t d = 1; d <= pol->depth; d++)
        printf(" %.6g", r->per_depth[d]);
    printf("\nvLLM's mean acceptance length (= E[tau]): %.12g\n"
           "vLLM's per-position acceptance rate (unconditional):", r->block_efficiency);
    for (size_t d = 1; d <= pol->depth; d++)
        printf(" %.6g", r->reach[d]);
    printf("\n");
    if (o->optimal)
        printf("optimal token-level verifier: E[tau] = %.12g (gap %.6g)\n", r->optimal_token,
               r->optimal_token - r->block_efficiency);
    if (live && live->horizon)
        printf("live decoding, %zu tokens from token 0: %.12g tokens per target call (%.9g "
               "calls); mean over the positions of E[tau | context]: %.12g\n", live->horizon,
               live->live_block_efficiency, live->live_calls, live->position_block_efficiency);
    else if (live)
        printf("live decoding, the long run: %.12g tokens per target call; stationary mean over "
               "positions of E[tau | context]: %.12g\n", live->live_block_efficiency,
               live->position_block_efficiency);
    for (size_t i = 0; i < ncost; i++)
        printf("speed-up at draft cost c = %g: %.6g\n", cost[i],
               r->block_efficiency / (1.0 + cost[i] * (double)pol->depth));
}

/* The library's Markov route (mdsd_block_markov_with), printed as text or JSON;
 * -1: a refused option (told, exit 2). */
static int run(const block_opts *o, mdsd_err *err)
{
    mdsd_block_markov_opts mo;
    mdsd_block_markov_opts_init(&mo);
    mo.markov = o->markov, mo.verifier = o->verifier;
    mo.tree = o->tree, mo.scheme = o->scheme;
    mo.sequences = o->sequences, mo.depth = o->depth;
    mo.trials = o->trials, mo.simulate = o->simulate, mo.seed = o->seed;
    mo.threads = (int)o->threads, mo.optimal = o->optimal, mo.force = o->force;
    double *cost = NULL;
    size_t ncost = 0;
    int rc = MDSD_OK;
    if (o->cost)
        rc = mdsd_parse_vector(o->cost, "--cost", &cost, &ncost, err);
    for (size_t i = 0; rc == MDSD_OK && i < ncost; i++)
        if (!(cost[i] >= 0.0 && isfinite(cost[i])))
            rc = mdsd_fail(err, MDSD_EINVAL, "--cost: value %zu is %g, not a cost >= 0", i + 1,
                           cost[i]);
    if (rc == MDSD_OK)
        rc = cli_check_paths(o->markov, "the Markov pair (--markov)", err);
    mdsd_run_opts how;
    mdsd_run_opts_init(&how);
    mdsd_block_markov_result r;
    mdsd_block_markov_live_result live;
    mdsd_block_policy pol;
    if (rc == MDSD_OK &&
        (rc = mdsd_block_markov_with(&mo, &how, o->live_n, &r, o->live ? &live : NULL, &pol,
                                     err)) != MDSD_OK &&
        how.usage) {
        cli_usage_error("block", "%s", err->msg);
        free(cost);
        return -1;
    }
    if (rc == MDSD_OK) {
        if (o->json)
            print_json(o, &pol, &r, o->live ? &live : NULL, cost, ncost);
        else
            print_text(o, &pol, &r, o->live ? &live : NULL, cost, ncost);
    }
    free(cost);
    return rc;
}

/* ---- tree dumps: the library's block job (job/blockjob.h) ---------------- */

static void note_stderr(const char *message, void *ctx)
{
    (void)ctx;
    char words[CLI_WORDS_MAX];
    fprintf(stderr, "mdsd block: %s\n", cli_words(message, words, sizeof words));
}

/* The library's block job over tree dumps (mdsd_block_run_with); with the test
 * hook MDSD_TEST_BLOCK_STOP_AFTER (cli_hooks.c). */
static int run_dumps(const block_opts *o)
{
    if (o->markov || o->tree || o->scheme || o->verifier || o->exact || o->trials ||
        o->simulate || o->optimal || o->json || o->live)
        return cli_usage_error("block", "with tree dumps: --verifiers, --sequences, --depth, "
                               "--cost, -o, --markdown, --latex, --threads, --engine-metrics only");
    mdsd_block_job_opts p;
    mdsd_block_job_opts_init(&p);
    p.n_dumps = o->n_dumps, p.dumps = (const char *const *)o->dumps;
    p.verifiers = o->verifiers, p.sequences = o->sequences_spec, p.depths = o->depth_spec;
    p.costs = o->cost, p.is_top = o->is_top, p.threads = (int)o->threads;
    p.output = o->output, p.markdown = o->markdown, p.latex = o->latex;
    p.resume = o->resume, p.discard_partial = o->discard_partial;
    p.engine_metrics = o->engine_metrics;
    p.shard = o->shard, p.shards = o->shards;
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    run.tool = o->tool, run.n_words = (size_t)cli_argc(), run.words = (const char *const *)cli_argv();
    run.on_note = note_stderr, run.progress_bar = 1, run.cleanup_signals = 1;
    run.stdout_used = 1; /* without -o, --markdown or --latex the table goes to stdout */
    run.test_stop_after = cli_block_stop_after();
    run.shard_text = o->shard_data, run.shard_size = o->shard_size;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_block_run_with(&p, &run, &err);
    if (run.usage)
        return cli_usage_error("block", "%s", err.msg);
    if (rc && o->shard_err) { /* an MPI rank: its driver reports */
        *o->shard_err = err;
        return CLI_EXIT_ERROR;
    }
    return rc ? cli_report("block", &err) : CLI_EXIT_OK;
}

#ifdef MDSD_MPI
static int mpi_part(void *ctx, size_t shard, size_t shards, char **text, size_t *len, mdsd_err *err)
{
    block_opts o = *(const block_opts *)ctx;
    o.shard = shard, o.shards = shards;
    o.shard_data = text, o.shard_size = len, o.shard_err = err;
    mdsd_err_clear(err);
    int code = run_dumps(&o);
    if (code == CLI_EXIT_OK)
        return MDSD_OK;
    return err->code ? err->code : mdsd_fail(err, MDSD_EINVAL, "the options are refused (above)");
}

/* Rank 0: the shards folded as mdsd merge folds them (its provenance). */
static int mpi_merge(void *ctx, const mdsd_shard_text *in, size_t n, mdsd_err *err)
{
    const block_opts *o = ctx;
    mdsd_merge_job_opts m;
    mdsd_merge_job_opts_init(&m);
    m.markdown = o->markdown, m.latex = o->latex;
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    run.tool = "mdsd merge";
    run.n_words = (size_t)cli_argc(), run.words = (const char *const *)cli_argv();
    run.on_note = note_stderr, run.progress_bar = 1;
    return mdsd_merge_texts(in, n, o->output, &m, &run, err);
}
#endif

int cmd_block(int argc, char **argv)
{
    block_opts o = {.seed = 1, .tool = "mdsd block"};
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
#ifdef MDSD_MPI
    if (!o.markov && o.n_dumps && o.shards && cli_mpi_launched())
        return cli_usage_error("block", "--shard: under mpirun the ranks are the shards; drop --shard");
    if (!o.markov && o.n_dumps && !o.output && cli_mpi_launched())
        return cli_usage_error("block", "under mpirun give -o CSV (rank 0 writes it)");
    if (!o.markov && o.n_dumps && cli_mpi_launched())
        return cli_mpi_run("block", argc, argv, o.output, mpi_part, mpi_merge, &o);
#endif
    if (!o.markov && o.n_dumps)
        return run_dumps(&o);
    if (!o.markov)
        return cli_usage_error("block", "missing --markov FILE or tree dumps");
    if (o.resume || o.discard_partial)
        return cli_usage_error("block", "--resume and --discard-partial are for tree dumps");
    if (o.engine_metrics)
        return cli_usage_error("block", "--engine-metrics is for tree dumps (a toy pair is no engine's)");
    if (o.exact && o.trials)
        return cli_usage_error("block", "--exact and --trials are two routes: give one");
    if (o.live && o.trials)
        return cli_usage_error("block", "--live is exact: drop --trials");
    if (o.live && strcmp(o.live, "inf")) {
        if (cli_parse_size(o.live, "--live", "block", &o.live_n))
            return CLI_EXIT_USAGE;
        if (o.live_n < 1)
            return cli_usage_error("block", "--live 0: a horizon of at least 1 token, or inf");
    }
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = run(&o, &err);
    if (rc < 0)
        return CLI_EXIT_USAGE;
    return rc ? cli_report("block", &err) : CLI_EXIT_OK;
}
