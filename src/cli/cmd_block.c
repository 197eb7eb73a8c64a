/* mdsd block: block efficiency E[tau] (expected tokens per target call) of
 * token-level recursive verification with multi-token drafts (block.h,
 * MATH.md §5), on a Markov toy pair: exact, from sampled
 * draft trees, by plain simulation, and the optimum over all verifiers. */
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block.h"
#include "blockv.h"
#include "checkpoint.h"
#include "cli.h"
#include "provenance.h"
#include "outfile.h"
#include "progress.h"
#include "treedump.h"
#include "fnv.h"
#include "shard.h"

static const char usage_text[] =
    "Usage: mdsd block --markov FILE (--sequences K --depth L | --tree W1,W2,...\n"
    "                  [--scheme S]) --verifier V [--exact] [--trials T --seed S]\n"
    "                  [--simulate] [--optimal] [--force] [--cost C1,C2,...] [--json]\n"
    "       mdsd block DUMP... [--verifiers V1,V2] [--sequences K1,K2,...]\n"
    "                  [--depth L1,L2,...] [--cost C1,...] [-o CSV] [--markdown FILE]\n"
    "                  [--latex FILE] [--threads N]\n"
    "Block efficiency E[tau], tau = accepted draft tokens + 1 (the correction or\n"
    "bonus token), of token-level recursive verification: at each node the\n"
    "verifier sees the drafts' tokens there and outputs y ~ p(.|node); a drafted y\n"
    "is accepted and verification goes on at that child with the drafts through\n"
    "it; otherwise the step ends. Or of a block verifier, which sees the whole\n"
    "draft and accepts a drafted prefix and one next token jointly. Per-depth rate\n"
    "d = P(depth d accepted | depth d-1 accepted).\n\n"
    "  --markov FILE      Markov toy pair: a line 'V', the target's V x V\n"
    "                     transition rows, a blank line, the draft's rows;\n"
    "                     the context is token 0\n"
    "  --sequences K      seq policy: K i.i.d. draft sequences of length L\n"
    "  --depth L          their length\n"
    "  --tree W1,...,WL   tree policy: a node at depth d-1 draws W_d children\n"
    "  --scheme S         the tree's per-node scheme: iid (default), wor, greedy,\n"
    "                     hub (W = 2); equal tokens are one child\n"
    "  -v, --verifier V   token-level: sd, rrs, rrsw, kseq, spechub, greedy, is,\n"
    "                     otm (each must accept the node's scheme: seq: iid with\n"
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
    "                     speedup, per_depth_stderr (delta method, clustered)\n"
    "  --markdown FILE, --latex FILE   the table as Markdown / LaTeX\n"
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
    "P(at least d accepted)), per_depth ([L], the rates), with --optimal:\n"
    "optimal_token_block_efficiency, gap_to_optimal_token (optimal-token -\n"
    "block_efficiency); with --cost: speedup [{cost, speedup}].\n";

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
    OPT_FORCE
};

typedef struct {
    const char *markov, *verifier, *tree, *scheme, *cost;
    const char *sequences_spec, *depth_spec, *verifiers, *output, *markdown, *latex;
    size_t sequences, depth, threads, is_top;
    char **dumps;
    size_t n_dumps;
    bool exact, simulate, optimal, force, json, help, resume, discard_partial;
    unsigned long long trials, seed;
    /* scale-out (shard.h): shard I of N (0: the whole job), its aggregate
     * to -o, or to *shard_data (MPI ranks: checkpoint OUTPUT.shard-I-of-N.partial,
     * kept when keep_partial); merge: the shards to fold instead of evaluating */
    size_t shard, shards;
    char **shard_data;
    size_t *shard_size;
    mdsd_err *shard_err;       /* MPI ranks: the failure goes here, unprinted */
    bool keep_partial;
    const mdsd_shard_file *merge;
    size_t merge_n;
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
        case OPT_SHARD: {
            unsigned long long i, n;
            int used = 0;
            if (sscanf(optarg, "%llu/%llu%n", &i, &n, &used) != 2 || optarg[used] || n < 1 || i < 1 ||
                i > n) {
                cli_usage_error("block", "--shard: '%s' is not I/N with 1 <= I <= N", optarg);
                return -1;
            }
            o->shard = (size_t)i, o->shards = (size_t)n;
            break;
        }
        case OPT_OPTIMAL: o->optimal = true; break;
        case OPT_FORCE: o->force = true; break;
        case OPT_COST: o->cost = optarg; break;
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

/* "2,2,1" into pol->width; 0 or a usage error (printed). */
static int parse_widths(const char *spec, mdsd_policy *pol)
{
    double *w = NULL;
    size_t n = 0;
    mdsd_err err;
    if (mdsd_parse_vector(spec, "--tree", &w, &n, &err) != MDSD_OK) {
        cli_usage_error("block", "%s", err.msg);
        return -1;
    }
    int bad = n < 1 || n > MDSD_BLOCK_MAX_DEPTH;
    for (size_t d = 0; !bad && d < n; d++) {
        bad = !(w[d] >= 1.0 && w[d] <= MDSD_BLOCK_MAX_DRAFTS && w[d] == floor(w[d]));
        pol->width[d] = bad ? 0 : (size_t)w[d];
    }
    free(w);
    if (bad) {
        cli_usage_error("block", "--tree %s: give 1 to %d widths, integers in [1, %d]", spec,
                        MDSD_BLOCK_MAX_DEPTH, MDSD_BLOCK_MAX_DRAFTS);
        return -1;
    }
    pol->depth = n;
    return 0;
}

static void print_json(const block_opts *o, const mdsd_policy *pol, size_t V, const char *vname,
                       const char *route, const mdsd_block_result *r, const mdsd_block_result *opt,
                       const double *cost, size_t ncost)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "verifier", vname);
    mdsd_json_kv_string(&j, "policy", pol->kind == MDSD_POLICY_SEQ ? "seq" : "tree");
    mdsd_json_kv_integer(&j, "depth", (long long)pol->depth);
    if (pol->kind == MDSD_POLICY_SEQ) {
        mdsd_json_kv_integer(&j, "sequences", (long long)pol->sequences);
    } else {
        mdsd_json_key(&j, "widths");
        mdsd_json_array_begin(&j);
        for (size_t d = 0; d < pol->depth; d++)
            mdsd_json_integer(&j, (long long)pol->width[d]);
        mdsd_json_array_end(&j);
        mdsd_json_kv_string(&j, "scheme", mdsd_scheme_name(pol->scheme));
    }
    mdsd_json_kv_number(&j, "tree_size", mdsd_policy_size(pol));
    mdsd_json_kv_integer(&j, "V", (long long)V);
    mdsd_json_kv_string(&j, "route", route);
    mdsd_json_kv_number(&j, "block_efficiency", r->tau);
    mdsd_json_kv_number(&j, "stderr", r->se);
    mdsd_json_kv_integer(&j, "trials", (long long)r->trials);
    mdsd_json_kv_integer(&j, "seed", (long long)o->seed);
    mdsd_json_key(&j, "reach");
    mdsd_json_number_array(&j, r->reach, pol->depth + 1);
    mdsd_json_key(&j, "per_depth");
    mdsd_json_number_array(&j, r->rate + 1, pol->depth);
    if (opt) {
        mdsd_json_kv_number(&j, "optimal_token_block_efficiency", opt->tau);
        mdsd_json_kv_number(&j, "gap_to_optimal_token", opt->tau - r->tau);
    }
    if (ncost) {
        mdsd_json_key(&j, "speedup");
        mdsd_json_array_begin(&j);
        for (size_t i = 0; i < ncost; i++) {
            mdsd_json_object_begin(&j);
            mdsd_json_kv_number(&j, "cost", cost[i]);
            mdsd_json_kv_number(&j, "speedup", r->tau / (1.0 + cost[i] * (double)pol->depth));
            mdsd_json_object_end(&j);
        }
        mdsd_json_array_end(&j);
    }
    mdsd_json_object_end(&j);
}

static void print_text(const mdsd_policy *pol, size_t V, const char *vname, const char *route,
                       const mdsd_block_result *r, const mdsd_block_result *opt,
                       const double *cost, size_t ncost)
{
    char desc[256];
    printf("verifier %s, policy %s, V = %zu, %s\n", vname,
           mdsd_policy_describe(pol, desc, sizeof desc), V, route);
    if (r->trials)
        printf("block efficiency E[tau] = %.9f +- %.2g (stderr, %llu trees)\n", r->tau, r->se,
               (unsigned long long)r->trials);
    else
        printf("block efficiency E[tau] = %.12g\n", r->tau);
    printf("per-depth acceptance:");
    for (size_t d = 1; d <= pol->depth; d++)
        printf(" %.6g", r->rate[d]);
    printf("\n");
    if (opt)
        printf("optimal token-level verifier: E[tau] = %.12g (gap %.6g)\n", opt->tau,
               opt->tau - r->tau);
    for (size_t i = 0; i < ncost; i++)
        printf("speed-up at draft cost c = %g: %.6g\n", cost[i],
               r->tau / (1.0 + cost[i] * (double)pol->depth));
}

static int run(const block_opts *o, mdsd_err *err)
{
    mdsd_policy pol = {0};
    if (o->tree) {
        pol.kind = MDSD_POLICY_TREE;
        if (parse_widths(o->tree, &pol))
            return -1;
        pol.scheme = MDSD_SCHEME_IID;
        if (o->scheme && mdsd_scheme_parse(o->scheme, &pol.scheme, err))
            return err->code;
    } else {
        pol.kind = MDSD_POLICY_SEQ;
        pol.sequences = o->sequences;
        pol.depth = o->depth;
    }
    /* the verifier: token-level, a block verifier, or one of the optima */
    const char *vn = o->verifier;
    int opt_token = !strcmp(vn, "optimal-token"), tiebreak = !strcmp(vn, "otm-tiebreak");
    int opt_block = !strcmp(vn, "optimal-block");
    mdsd_verifier_kind kind = MDSD_VERIFIER_OTM;
    mdsd_blockv_kind bkind = MDSD_BLOCKV_COUNT;
    int rc = MDSD_OK;
    if (!opt_token && !tiebreak && !opt_block && mdsd_blockv_parse(vn, &bkind, NULL) != MDSD_OK &&
        mdsd_verifier_parse(vn, &kind, err) != MDSD_OK)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s; or a block verifier (bv, gbv, traversal), or "
                       "optimal-token, otm-tiebreak, optimal-block", err->msg);
    const mdsd_blockv_ops *bv = mdsd_blockv(bkind);
    double *cost = NULL;
    size_t ncost = 0;
    if (rc == MDSD_OK && o->cost)
        rc = mdsd_parse_vector(o->cost, "--cost", &cost, &ncost, err);
    for (size_t i = 0; rc == MDSD_OK && i < ncost; i++)
        if (!(cost[i] >= 0.0 && isfinite(cost[i])))
            rc = mdsd_fail(err, MDSD_EINVAL, "--cost: value %zu is %g, not a cost >= 0", i + 1,
                           cost[i]);
    mdsd_markov m = {0};
    if (rc == MDSD_OK)
        rc = mdsd_markov_read(o->markov, &m, err);
    mdsd_block_opts bo;
    mdsd_block_opts_init(&bo);
    bo.trials = o->trials;
    bo.seed = o->seed;
    bo.threads = (int)o->threads;
    bo.max_seconds = o->force ? INFINITY : 0.0;
    mdsd_block_result r = {0}, opt = {0};
    const char *route = o->trials > 0 ? (o->simulate ? "simulated" : "sampled") : "exact";
    if (rc == MDSD_OK && o->optimal)
        rc = mdsd_block_optimal_token(&m, &pol, &bo, &opt, err);
    if (rc != MDSD_OK || (opt_token && o->optimal))
        r = opt; /* nothing to do, or done */
    else if (opt_token)
        rc = mdsd_block_optimal_token(&m, &pol, &bo, &r, err);
    else if (tiebreak)
        rc = mdsd_block_otm_tiebreak(&m, &pol, &bo, &r, err);
    else if (opt_block)
        rc = mdsd_block_optimal_block(&m, &pol, &bo, &r, err);
    else if (bv && o->trials > 0)
        rc = (o->simulate ? mdsd_blockv_simulate : mdsd_blockv_sampled)(&m, &pol, bv, &bo, &r, err);
    else if (bv)
        rc = mdsd_blockv_exact(&m, &pol, bv, &bo, &r, err);
    else if (o->trials > 0)
        rc = (o->simulate ? mdsd_block_simulate : mdsd_block_sampled)(&m, &pol, kind, &bo, &r, err);
    else
        rc = mdsd_block_exact(&m, &pol, kind, &bo, &r, err);
    if (rc == MDSD_OK) {
        const char *vname = bv || opt_token || tiebreak || opt_block ? vn : mdsd_verifier_name(kind);
        const mdsd_block_result *po = o->optimal ? &opt : NULL;
        if (o->json)
            print_json(o, &pol, m.V, vname, route, &r, po, cost, ncost);
        else
            print_text(&pol, m.V, vname, route, &r, po, cost, ncost);
    }
    mdsd_markov_free(&m);
    free(cost);
    return rc;
}

/* ---- tree dumps ------------------------------------------------------- */

/* "1,2,4" into out[*n] (each in [lo, hi]); 0, or -1 after a usage error. */
static int parse_sizes(const char *spec, const char *opt, size_t lo, size_t hi, size_t *out,
                       size_t *n)
{
    double *v = NULL;
    size_t len = 0;
    mdsd_err err;
    if (mdsd_parse_vector(spec, opt, &v, &len, &err) != MDSD_OK) {
        cli_usage_error("block", "%s", err.msg);
        return -1;
    }
    int bad = len < 1 || len > MDSD_BLOCK_MAX_DEPTH;
    for (size_t i = 0; !bad && i < len; i++) {
        bad = !(v[i] >= (double)lo && v[i] <= (double)hi && v[i] == floor(v[i]));
        out[i] = bad ? 0 : (size_t)v[i];
    }
    free(v);
    if (bad) {
        cli_usage_error("block", "%s %s: give 1 to %d integers in [%zu, %zu]", opt, spec,
                        MDSD_BLOCK_MAX_DEPTH, lo, hi);
        return -1;
    }
    *n = len;
    return 0;
}

typedef struct {
    const char *dump;
    mdsd_block_case c;
    mdsd_block_dump_result r;
} dump_row;

static void widths_text(const mdsd_policy *pol, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t d = 0; pol->kind == MDSD_POLICY_TREE && d < pol->depth && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, d ? ";%zu" : "%zu", pol->width[d]);
}

static void write_csv(FILE *f, const dump_row *rows, size_t n, const double *cost, size_t ncost)
{
    fprintf(f, "dump,verifier,policy,scheme,sequences,widths,depth,tree_size,trees,samples,"
               "block_efficiency,stderr,per_depth,cost,speedup,per_depth_stderr\n");
    for (size_t i = 0; i < n; i++) {
        const mdsd_policy *pol = &rows[i].c.pol;
        char w[256], rates[1024], rates_se[1024];
        widths_text(pol, w, sizeof w);
        size_t at = 0, at_se = 0;
        rates[0] = rates_se[0] = 0;
        for (size_t d = 1; d <= pol->depth && at < sizeof rates; d++)
            at += (size_t)snprintf(rates + at, sizeof rates - at, d > 1 ? ";%.9g" : "%.9g",
                                   rows[i].r.rate[d]);
        for (size_t d = 1; d <= pol->depth && at_se < sizeof rates_se; d++)
            at_se += (size_t)snprintf(rates_se + at_se, sizeof rates_se - at_se,
                                      d > 1 ? ";%.9g" : "%.9g", rows[i].r.rate_se[d]);
        for (size_t k = 0; k < ncost; k++) {
            mdsd_csv_write_field(f, rows[i].dump);
            fprintf(f, ",%s,%s,%s,", mdsd_block_case_name(&rows[i].c),
                    pol->kind == MDSD_POLICY_SEQ ? "seq" : "tree",
                    mdsd_scheme_name(pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pol->scheme));
            if (pol->kind == MDSD_POLICY_SEQ)
                fprintf(f, "%zu", pol->sequences);
            fprintf(f, ",%s,%zu,%.17g,%zu,%zu,%.17g,%.17g,%s,%.17g,%.17g,%s\n", w, pol->depth,
                    mdsd_policy_size(pol), rows[i].r.trees, rows[i].r.samples, rows[i].r.tau,
                    rows[i].r.se, rates, cost[k],
                    rows[i].r.tau / (1.0 + cost[k] * (double)pol->depth), rates_se);
        }
    }
}

static void write_table(FILE *f, int latex, const dump_row *rows, size_t n, const double *cost,
                        size_t ncost)
{
    if (latex) {
        fprintf(f, "\\begin{tabular}{llrrl");
        for (size_t k = 0; k < ncost; k++)
            fprintf(f, "r");
        fprintf(f, "}\n\\hline\nverifier & policy & $L$ & $E[\\tau]$ & per-depth rates");
        for (size_t k = 0; k < ncost; k++)
            fprintf(f, " & speed-up $c=%g$", cost[k]);
        fprintf(f, " \\\\\n\\hline\n");
    } else {
        fprintf(f, "| dump | verifier | policy | L | E[tau] (s.e.) | per-depth rates |");
        for (size_t k = 0; k < ncost; k++)
            fprintf(f, " speed-up c=%g |", cost[k]);
        fprintf(f, "\n|---|---|---|---:|---:|---|");
        for (size_t k = 0; k < ncost; k++)
            fprintf(f, "---:|");
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < n; i++) {
        const mdsd_policy *pol = &rows[i].c.pol;
        char desc[256];
        if (pol->kind == MDSD_POLICY_SEQ)
            snprintf(desc, sizeof desc, "seq K=%zu", pol->sequences);
        else
            mdsd_policy_describe(pol, desc, sizeof desc);
        if (latex)
            fprintf(f, "%s & %s & %zu & %.4f (%.4f) & ", mdsd_block_case_name(&rows[i].c), desc,
                    pol->depth, rows[i].r.tau, rows[i].r.se);
        else
            fprintf(f, "| %s | %s | %s | %zu | %.4f (%.4f) | ", rows[i].dump,
                    mdsd_block_case_name(&rows[i].c), desc, pol->depth, rows[i].r.tau,
                    rows[i].r.se);
        for (size_t d = 1; d <= pol->depth; d++)
            fprintf(f, d > 1 ? " %.3f" : "%.3f", rows[i].r.rate[d]);
        for (size_t k = 0; k < ncost; k++)
            fprintf(f, latex ? " & %.3f" : " | %.3f",
                    rows[i].r.tau / (1.0 + cost[k] * (double)pol->depth));
        fprintf(f, latex ? " \\\\\n" : " |\n");
    }
    if (latex)
        fprintf(f, "\\hline\n\\end{tabular}\n");
}

typedef void (*table_writer)(FILE *, const dump_row *, size_t, const double *, size_t);

static int write_file(const char *path, int kind, const dump_row *rows, size_t n,
                      const double *cost, size_t ncost, mdsd_err *err)
{
    mdsd_outfile of;
    int rc = mdsd_outfile_open(&of, path, err);
    if (rc)
        return rc;
    if (kind == 0)
        write_csv(of.f, rows, n, cost, ncost);
    else
        write_table(of.f, kind == 2, rows, n, cost, ncost);
    return mdsd_outfile_commit(&of, err);
}

/* The default verifiers of a dump's policy (n: drafts at the root). */
static size_t default_verifiers(const mdsd_policy *pol, mdsd_verifier_kind *out)
{
    size_t k = 0;
    mdsd_scheme_kind s = pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pol->scheme;
    if (s == MDSD_SCHEME_IID) {
        out[k++] = MDSD_VERIFIER_SD;
        out[k++] = MDSD_VERIFIER_RRS;
        out[k++] = MDSD_VERIFIER_KSEQ;
    } else if (s == MDSD_SCHEME_WOR) {
        out[k++] = MDSD_VERIFIER_RRSW;
    } else if (s == MDSD_SCHEME_GREEDY) {
        out[k++] = MDSD_VERIFIER_GREEDY;
    } else if (s == MDSD_SCHEME_HUB) {
        out[k++] = MDSD_VERIFIER_SPECHUB;
    }
    return k;
}

/* Whether the case's verifier runs on its policy (a token-level one: its
 * scheme at the root's n; seq nodes further down have fewer drafts, which
 * every iid verifier takes). */
static int case_applies(const mdsd_block_case *c)
{
    mdsd_err e;
    return mdsd_block_case_check(c, &e) != MDSD_EUNSUPPORTED;
}

static int dump_cases(const block_opts *o, const mdsd_tree_dump *t, mdsd_block_case *cases,
                      size_t *ncases, const mdsd_block_case *vlist, size_t nv)
{
    size_t Ls[MDSD_BLOCK_MAX_DEPTH], nL = 0, Ks[MDSD_BLOCK_MAX_DEPTH], nK = 0;
    if (o->depth_spec) {
        if (parse_sizes(o->depth_spec, "--depth", 1, t->pol.depth, Ls, &nL))
            return -1;
    } else {
        for (size_t d = 1; d <= t->pol.depth; d++)
            Ls[nL++] = d;
    }
    if (t->pol.kind == MDSD_POLICY_SEQ) {
        if (o->sequences_spec) {
            if (parse_sizes(o->sequences_spec, "--sequences", 1, t->pol.sequences, Ks, &nK))
                return -1;
        } else {
            for (size_t k = 1; k < t->pol.sequences; k *= 2)
                Ks[nK++] = k;
            Ks[nK++] = t->pol.sequences;
        }
    } else {
        if (o->sequences_spec) {
            cli_usage_error("block", "--sequences is for seq dumps; %s holds trees", t->path);
            return -1;
        }
        Ks[nK++] = 0;
    }
    mdsd_verifier_kind defaults[8];
    mdsd_block_case dv[8] = {{0}};
    if (!nv) {
        nv = default_verifiers(&t->pol, defaults);
        for (size_t k = 0; k < nv; k++)
            dv[k].v = defaults[k];
        vlist = dv;
    }
    size_t n = 0;
    for (size_t iv = 0; iv < nv; iv++)
        for (size_t ik = 0; ik < nK; ik++)
            for (size_t il = 0; il < nL; il++) {
                mdsd_policy pol = t->pol;
                pol.depth = Ls[il];
                if (pol.kind == MDSD_POLICY_SEQ)
                    pol.sequences = Ks[ik];
                cases[n] = vlist[iv];
                cases[n].pol = pol;
                if (case_applies(&cases[n]))
                    n++;
            }
    *ncases = n;
    return 0;
}

static void dump_progress(size_t done, size_t total, void *ctx)
{
    (void)total;
    mdsd_progress *pr = ctx;
    mdsd_progress_add(pr, done - pr->done);
}

/* ---- scale-out (shard.h) ------------------------------------------------- */

/* The options of the job as its checkpoint signature records them. */
static void options_text(const block_opts *o, char *buf, size_t size)
{
    snprintf(buf, size, "verifiers=%s sequences=%s depth=%s is-top=%zu",
             o->verifiers ? o->verifiers : "default", o->sequences_spec ? o->sequences_spec : "default",
             o->depth_spec ? o->depth_spec : "default", o->is_top);
}

/* A block shard's header: the job (options, each dump's path, size and
 * modification time) and what a merge needs to redo its set-up. */
static char *shard_header(const block_opts *o, mdsd_err *err)
{
    char opts[2048], *sig = NULL, *text = NULL;
    size_t len = 0;
    options_text(o, opts, sizeof opts);
    if (mdsd_block_signature(opts, o->dumps, o->n_dumps, &sig, err))
        return NULL;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        free(sig);
        mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        return NULL;
    }
    fprintf(f, "%sshard %zu/%zu\njob %s\nverifiers %s\nsequences %s\ndepth %s\nis_top %zu\ncost %s\n",
            MDSD_BLOCK_SHARD_MAGIC, o->shard, o->shards, sig, o->verifiers ? o->verifiers : "-",
            o->sequences_spec ? o->sequences_spec : "-", o->depth_spec ? o->depth_spec : "-",
            o->is_top, o->cost ? o->cost : "-");
    for (size_t i = 0; i < o->n_dumps; i++)
        fprintf(f, "dump %s\n", o->dumps[i]);
    fputs("end\n", f);
    fclose(f);
    free(sig);
    return text;
}

/* A finished dump of a shard as its unit block (shard.h), appended to the
 * checkpoint and synced. */
static int shard_unit(size_t i, const char *path, size_t tb, size_t te, const char *lines,
                      size_t lines_len, size_t n_lines, FILE *partial, char **text, size_t *len,
                      mdsd_err *err)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    fprintf(f, "#unit %zu 0 rows=%zu:%zu\n", i, tb, te);
    if (lines_len)
        fwrite(lines, 1, lines_len, f);
    fflush(f);
    uint64_t hash = mdsd_fnv1a(MDSD_FNV_OFFSET, buf, n);
    fprintf(f, "#done %s groups=%zu fnv1a=%016llx\n", path, n_lines, (unsigned long long)hash);
    fclose(f);
    *text = buf;
    *len = n;
    if (fwrite(buf, 1, n, partial) != n || fflush(partial) != 0 || fsync(fileno(partial)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return MDSD_OK;
}

static char *join_units(const char *header, char **text, const size_t *len, size_t n, size_t *size)
{
    size_t total = strlen(header), at = total;
    for (size_t i = 0; i < n; i++)
        total += len[i];
    char *out = malloc(total + 1);
    if (!out)
        return NULL;
    memcpy(out, header, at);
    for (size_t i = 0; i < n; i++) {
        if (len[i]) /* unfinished dumps have no text yet */
            memcpy(out + at, text[i], len[i]);
        at += len[i];
    }
    out[at] = '\0';
    *size = total;
    return out;
}

/* mdsd block DUMP... --shard I/N -o FILE (and MPI ranks): each dump's trees
 * of the shard, summarised per sample; checkpointed per dump. */
static int run_shard(const block_opts *o, const mdsd_block_case *vlist, size_t nv, int *usage,
                     mdsd_err *err)
{
    char partial_path[4300], lock_path[4300], what[4300];
    if (o->shard_data) {
        snprintf(partial_path, sizeof partial_path, "%s.shard-%zu-of-%zu.partial", o->output, o->shard,
                 o->shards);
        snprintf(lock_path, sizeof lock_path, "%s.shard-%zu-of-%zu.lock", o->output, o->shard, o->shards);
    } else {
        snprintf(partial_path, sizeof partial_path, "%s.partial", o->output);
        snprintf(lock_path, sizeof lock_path, "%s.lock", o->output);
    }
    snprintf(what, sizeof what, "'%s'", o->output);
    mdsd_lock lock;
    int rc = mdsd_lock_acquire(&lock, lock_path, what, err);
    if (rc)
        return rc;
    char *header = shard_header(o, err), **text = calloc(o->n_dumps, sizeof *text);
    size_t *len = calloc(o->n_dumps, sizeof *len);
    mdsd_shard_unit *done = NULL;
    size_t n_done = 0;
    char *old = NULL;
    if (!header)
        rc = err->code ? err->code : MDSD_ENOMEM;
    else if (!text || !len)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    struct stat st;
    if (rc == MDSD_OK && stat(partial_path, &st) == 0) {
        size_t size = 0, hl = strlen(header);
        if (o->discard_partial) {
            if (unlink(partial_path) != 0)
                rc = mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", partial_path, strerror(errno));
        } else if (!o->resume) {
            rc = mdsd_fail(err, MDSD_EINVAL, "'%s' holds the finished dumps of an interrupted job on "
                           "this output: pass --resume to continue it, or --discard-partial to delete "
                           "it and start over", partial_path);
        } else if ((rc = mdsd_shard_read_file(partial_path, &old, &size, err)) == MDSD_OK) {
            if (size < hl || memcmp(old, header, hl) != 0)
                rc = mdsd_fail(err, MDSD_EINVAL, "'%s' was made by a different block job, shard or "
                               "dump; pass --discard-partial to delete it and start over", partial_path);
            else
                rc = mdsd_shard_units_parse(partial_path, old + hl, size - hl, true, &done, &n_done, err);
        }
    }
    for (size_t k = 0; k < n_done && rc == MDSD_OK; k++) {
        const mdsd_shard_unit *u = &done[k];
        if (u->job >= o->n_dumps || u->temp != 0 || text[u->job])
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s is not one of this shard's, or appears "
                           "twice; pass --discard-partial to start over", partial_path, u->key);
        else if (!(text[u->job] = malloc(u->len + 1)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else
            memcpy(text[u->job], u->text, u->len), text[u->job][u->len] = '\0', len[u->job] = u->len;
    }
    FILE *partial = NULL;
    if (rc == MDSD_OK) {
        size_t size;
        char *kept = join_units(header, text, len, o->n_dumps, &size);
        mdsd_outfile out;
        if (!kept)
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else if ((rc = mdsd_outfile_open(&out, partial_path, err)) == MDSD_OK) {
            fwrite(kept, 1, size, out.f);
            rc = mdsd_outfile_commit(&out, err);
            mdsd_outfile_abort(&out);
        }
        free(kept);
        if (rc == MDSD_OK && !(partial = fopen(partial_path, "a")))
            rc = mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", partial_path, strerror(errno));
    }
    for (size_t i = 0; rc == MDSD_OK && !*usage && i < o->n_dumps; i++) {
        mdsd_tree_dump *t;
        if ((rc = mdsd_tree_dump_open(o->dumps[i], &t, err)))
            break;
        size_t tb, te;
        mdsd_tree_dump_shard_trees(t, o->shard, o->shards, &tb, &te);
        mdsd_block_case cases[MDSD_BLOCK_CASE_VERIFIERS * MDSD_BLOCK_MAX_DEPTH * 8];
        size_t nc = 0;
        if (dump_cases(o, t, cases, &nc, vlist, nv)) {
            *usage = 1;
        } else if (text[i]) { /* resumed: the same trees */
            unsigned long long b = 0, e = 0;
            if (sscanf(text[i], "#unit %*u 0 rows=%llu:%llu", &b, &e) != 2 || b != tb || e != te)
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': the unit of %s covers other trees than "
                               "this shard's; pass --discard-partial to start over", partial_path,
                               o->dumps[i]);
        } else {
            mdsd_verifier_opts vo;
            mdsd_verifier_opts_init(&vo);
            vo.is_top = o->is_top;
            mdsd_block_dump_result *res = calloc(nc ? nc : 1, sizeof *res);
            char *lines = NULL;
            size_t lines_len = 0, n_lines = 0;
            FILE *m = open_memstream(&lines, &lines_len);
            if (!res || !m)
                rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            else
                rc = mdsd_tree_dump_eval_part(t, cases, nc, &vo, (int)o->threads, NULL, NULL, o->shard,
                                              o->shards, m, &n_lines, res, err);
            if (m)
                fclose(m);
            if (rc == MDSD_OK)
                rc = shard_unit(i, o->dumps[i], tb, te, lines, lines_len, n_lines, partial, &text[i],
                                &len[i], err);
            free(lines);
            free(res);
        }
        mdsd_tree_dump_close(t);
    }
    if (partial)
        fclose(partial);
    size_t size = 0;
    char *agg = rc == MDSD_OK && !*usage ? join_units(header, text, len, o->n_dumps, &size) : NULL;
    if (rc == MDSD_OK && !*usage && !agg)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (agg && o->shard_data) {
        *o->shard_data = agg, *o->shard_size = size;
        agg = NULL;
    } else if (agg) {
        mdsd_outfile out;
        if ((rc = mdsd_outfile_open(&out, o->output, err)) == MDSD_OK) {
            fwrite(agg, 1, size, out.f);
            rc = mdsd_outfile_commit(&out, err);
            mdsd_outfile_abort(&out);
        }
    }
    bool kept = false;
    for (size_t i = 0; i < o->n_dumps && text; i++)
        kept = kept || text[i];
    if (partial && ((rc == MDSD_OK && !*usage && !o->keep_partial) || (rc != MDSD_OK && !kept)))
        unlink(partial_path);
    else if (partial && rc != MDSD_OK && !o->shard_data)
        fprintf(stderr, "mdsd block: finished dumps are kept in %s: rerun with --resume to "
                "continue\n", partial_path);
    for (size_t i = 0; text && i < o->n_dumps; i++)
        free(text[i]);
    free(text), free(len), free(done), free(old), free(agg), free(header);
    mdsd_lock_release(&lock);
    return rc;
}

static int run_dumps(const block_opts *o)
{
    mdsd_err err;
    mdsd_err_clear(&err);
    if (o->markov || o->tree || o->scheme || o->verifier || o->exact || o->trials ||
        o->simulate || o->optimal || o->json)
        return cli_usage_error("block", "with tree dumps: --verifiers, --sequences, --depth, "
                               "--cost, -o, --markdown, --latex, --threads only");
    mdsd_block_case vlist[MDSD_BLOCK_CASE_VERIFIERS] = {{0}};
    size_t nv = 0;
    if (o->verifiers) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", o->verifiers);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (nv == MDSD_BLOCK_CASE_VERIFIERS || mdsd_block_case_parse(tok, &vlist[nv++], &err))
                return cli_usage_error("block", "--verifiers %s: %s", o->verifiers,
                                       err.msg[0] ? err.msg : "too many");
        }
    }
    double zero = 0.0, *cost = &zero;
    size_t ncost = 1;
    if (o->cost) {
        if (mdsd_parse_vector(o->cost, "--cost", &cost, &ncost, &err))
            return cli_usage_error("block", "%s", err.msg);
        for (size_t i = 0; i < ncost; i++)
            if (!(cost[i] >= 0.0 && isfinite(cost[i]))) {
                free(cost);
                return cli_usage_error("block", "--cost %s: costs are numbers >= 0", o->cost);
            }
    }
    int rc = MDSD_OK, usage = 0;
    if (!o->output && (o->resume || o->discard_partial))
        return cli_usage_error("block", "--resume and --discard-partial need -o CSV");
    if (o->resume && o->discard_partial)
        return cli_usage_error("block", "--resume and --discard-partial: give one");
    /* Every output is checked before any work: not a directory, not an input. */
    const char *outs[3] = {o->output, o->markdown, o->latex};
    for (int k = 0; k < 3 && rc == MDSD_OK; k++) {
        if (outs[k])
            rc = mdsd_output_check(outs[k], (const char *const *)o->dumps, o->n_dumps, &err);
        for (int l = 0; l < k && rc == MDSD_OK; l++)
            if (outs[k] && outs[l] && !strcmp(outs[k], outs[l]))
                rc = mdsd_fail(&err, MDSD_EINVAL, "%s names two outputs of the same job", outs[k]);
    }
    if (o->shards) {
        if (rc == MDSD_OK && (o->markdown || o->latex) && !o->shard_data)
            return cli_usage_error("block", "--shard writes partial aggregates: render the tables "
                                   "with mdsd merge --markdown/--latex");
        if (rc == MDSD_OK && !o->output)
            return cli_usage_error("block", "--shard needs -o FILE");
        if (rc == MDSD_OK)
            rc = run_shard(o, vlist, nv, &usage, &err);
        if (cost != &zero)
            free(cost);
        if (usage)
            return CLI_EXIT_USAGE;
        if (rc && o->shard_err) { /* an MPI rank: its driver reports */
            *o->shard_err = err;
            return CLI_EXIT_ERROR;
        }
        return rc ? cli_report("block", &err) : CLI_EXIT_OK;
    }
    /* The checkpoint: one writer per output, and CSV.partial never dropped
     * silently. */
    mdsd_lock lock = {-1, ""};
    char partial_path[4200] = "", *signature = NULL;
    mdsd_block_unit *units = calloc(o->n_dumps ? o->n_dumps : 1, sizeof *units);
    FILE *partial = NULL;
    if (!units && rc == MDSD_OK)
        rc = mdsd_fail(&err, MDSD_ENOMEM, "out of memory");
    if (o->output && rc == MDSD_OK && !o->merge) {
        char lock_path[4200], what[4300], opts[2048];
        snprintf(partial_path, sizeof partial_path, "%s.partial", o->output);
        snprintf(lock_path, sizeof lock_path, "%s.lock", o->output);
        snprintf(what, sizeof what, "'%s'", o->output);
        snprintf(opts, sizeof opts, "verifiers=%s sequences=%s depth=%s is-top=%zu",
                 o->verifiers ? o->verifiers : "default",
                 o->sequences_spec ? o->sequences_spec : "default",
                 o->depth_spec ? o->depth_spec : "default", o->is_top);
        rc = mdsd_lock_acquire(&lock, lock_path, what, &err);
        if (rc == MDSD_OK)
            rc = mdsd_block_signature(opts, o->dumps, o->n_dumps, &signature, &err);
        struct stat st;
        if (rc == MDSD_OK && stat(partial_path, &st) == 0) {
            if (o->discard_partial) {
                if (unlink(partial_path) != 0)
                    rc = mdsd_fail(&err, MDSD_EIO, "cannot delete '%s': %s", partial_path,
                                   strerror(errno));
            } else if (o->resume) {
                rc = mdsd_block_partial_read(partial_path, signature, units, o->n_dumps, &err);
            } else {
                rc = mdsd_fail(&err, MDSD_EINVAL, "'%s' holds the finished dumps of an "
                               "interrupted job on this output: pass --resume to continue it, or "
                               "--discard-partial to delete it and start over", partial_path);
            }
        }
        if (rc == MDSD_OK) {
            static char hint[4400];
            snprintf(hint, sizeof hint, "finished dumps are kept in %s: rerun the same command "
                     "with --resume to continue", partial_path);
            mdsd_cleanup_signals("mdsd block", hint);
            partial = mdsd_block_partial_start(partial_path, signature, units, o->n_dumps, &err);
            if (!partial)
                rc = err.code ? err.code : MDSD_EIO;
        }
    }
    size_t cap = 0, n = 0, finished = 0;
    dump_row *rows = NULL;
    for (size_t i = 0; rc == MDSD_OK && !usage && i < o->n_dumps; i++) {
        mdsd_tree_dump *t;
        if ((rc = mdsd_tree_dump_open(o->dumps[i], &t, &err)))
            break;
        mdsd_block_case cases[MDSD_BLOCK_CASE_VERIFIERS * MDSD_BLOCK_MAX_DEPTH * 8];
        size_t nc = 0;
        if (dump_cases(o, t, cases, &nc, vlist, nv)) {
            usage = 1;
        } else {
            mdsd_block_dump_result *res = calloc(nc ? nc : 1, sizeof *res);
            if (n + nc > cap) {
                cap = 2 * (n + nc);
                dump_row *grown = realloc(rows, cap * sizeof *rows);
                if (grown)
                    rows = grown;
                else
                    rc = mdsd_fail(&err, MDSD_ENOMEM, "out of memory");
            }
            if (!res)
                rc = mdsd_fail(&err, MDSD_ENOMEM, "out of memory");
            mdsd_verifier_opts vo;
            mdsd_verifier_opts_init(&vo);
            vo.is_top = o->is_top;
            if (rc == MDSD_OK && o->merge) {
                /* mdsd merge: every shard's samples of this dump, in shard order */
                const char **parts = calloc(o->merge_n, sizeof *parts), **names = calloc(o->merge_n, sizeof *names);
                for (size_t k = 0; parts && names && k < o->merge_n && rc == MDSD_OK; k++) {
                    const mdsd_shard_file *f = &o->merge[k];
                    if (f->n_units != o->n_dumps || f->units[i].job != i)
                        rc = mdsd_fail(&err, MDSD_EFORMAT, "'%s' does not hold the units of the job's "
                                       "%zu dumps in order (cut short or damaged)", f->in->name, o->n_dumps);
                    else
                        parts[k] = f->units[i].text + strcspn(f->units[i].text, "\n") + 1,
                        names[k] = f->in->name;
                }
                if (!parts || !names)
                    rc = mdsd_fail(&err, MDSD_ENOMEM, "out of memory");
                if (rc == MDSD_OK)
                    rc = mdsd_tree_dump_fold(t, cases, nc, parts, names, o->merge_n, res, &err);
                free(parts), free(names);
            } else if (rc == MDSD_OK && units[i].done) {
                /* resumed: the recorded cases must be the ones this job makes */
                int same = units[i].count == nc;
                for (size_t c = 0; same && c < nc; c++)
                    same = units[i].cases[c].v == cases[c].v &&
                           units[i].cases[c].block == cases[c].block &&
                           units[i].cases[c].pol.depth == cases[c].pol.depth &&
                           units[i].cases[c].pol.sequences ==
                               (cases[c].pol.kind == MDSD_POLICY_SEQ ? cases[c].pol.sequences : 0);
                if (!same)
                    rc = mdsd_fail(&err, MDSD_EFORMAT, "'%s': the results of %s are not the cases "
                                   "this job makes; pass --discard-partial to start over",
                                   partial_path, o->dumps[i]);
                else
                    memcpy(res, units[i].res, nc * sizeof *res);
            } else if (rc == MDSD_OK) {
                mdsd_progress pr;
                char label[96];
                snprintf(label, sizeof label, "mdsd block %zu/%zu", i + 1, o->n_dumps);
                mdsd_progress_start(&pr, label, t->n_trees);
                rc = mdsd_tree_dump_eval(t, cases, nc, &vo, (int)o->threads, dump_progress, &pr,
                                         res, &err);
                mdsd_progress_finish(&pr);
                if (rc == MDSD_OK && partial)
                    rc = mdsd_block_partial_append(partial, i, cases, res, nc, &err);
                if (rc == MDSD_OK)
                    finished = i + 1;
                /* Tests interrupt the job after a given number of dumps
                 * (the real SIGINT path, without timing races). */
                const char *stop = getenv("MDSD_TEST_BLOCK_STOP_AFTER");
                if (rc == MDSD_OK && stop && strtoul(stop, NULL, 10) == finished)
                    raise(SIGINT);
            }
            for (size_t c = 0; rc == MDSD_OK && c < nc; c++)
                rows[n++] = (dump_row){o->dumps[i], cases[c], res[c]};
            free(res);
        }
        mdsd_tree_dump_close(t);
    }
    if (partial)
        fclose(partial);
    if (rc == MDSD_OK && !usage && o->output && o->tool) {
        mdsd_provenance pv = {.tool = o->tool, .argc = cli_argc(), .argv = cli_argv(), .output = o->output,
                              .is_block = true, .is_top = o->is_top, .n_dumps = o->n_dumps,
                              .dumps = (const char *const *)o->dumps};
        rc = mdsd_provenance_write(&pv, &err);
    }
    if (rc == MDSD_OK && !usage && o->output)
        rc = write_file(o->output, 0, rows, n, cost, ncost, &err);
    if (rc == MDSD_OK && !usage && o->markdown)
        rc = write_file(o->markdown, 1, rows, n, cost, ncost, &err);
    if (rc == MDSD_OK && !usage && o->latex)
        rc = write_file(o->latex, 2, rows, n, cost, ncost, &err);
    if (rc == MDSD_OK && !usage && !o->output && !o->markdown && !o->latex)
        write_table(stdout, 0, rows, n, cost, ncost);
    size_t kept = 0;
    for (size_t i = 0; i < o->n_dumps; i++)
        kept += units[i].done || i < finished;
    if (partial && ((rc == MDSD_OK && !usage) || !kept))
        unlink(partial_path); /* done, or nothing worth keeping */
    else if (partial)
        fprintf(stderr, "mdsd block: finished dumps are kept in %s: rerun with --resume to "
                "continue\n", partial_path);
    if (lock.fd >= 0)
        mdsd_lock_release(&lock);
    mdsd_block_units_free(units, o->n_dumps);
    free(units);
    free(signature);
    free(rows);
    if (cost != &zero)
        free(cost);
    if (usage)
        return CLI_EXIT_USAGE;
    if (rc && o->shard_err) { /* merge, MPI: the caller reports */
        *o->shard_err = err;
        return CLI_EXIT_ERROR;
    }
    return rc ? cli_report("block", &err) : CLI_EXIT_OK;
}

/* mdsd merge of block shards: the job's set-up redone from the header (the
 * dumps must be here and unchanged), each dump's samples folded in shard
 * order, the outputs written as the single run writes them. */
int cli_block_merge(const mdsd_shard_input *in, size_t n, const char *output, const char *markdown,
                    const char *latex, mdsd_err *err)
{
    mdsd_shard_file *files = NULL;
    size_t N = 0;
    int rc = mdsd_shard_collect(in, n, MDSD_BLOCK_SHARD_MAGIC, &files, &N, err);
    if (rc)
        return rc;
    /* the header's lines, as the shards wrote them */
    char *copy = strndup(files[0].header, files[0].header_len), *save = NULL, *job = NULL;
    char **dumps = calloc(files[0].header_len, sizeof *dumps);
    block_opts o = {.seed = 1};
    o.output = output, o.markdown = markdown, o.latex = latex;
    o.tool = "mdsd merge";
    if (!copy || !dumps)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; line && rc == MDSD_OK;
         line = strtok_r(NULL, "\n", &save)) {
        char *v = strchr(line, ' ');
        const char *val = v ? v + 1 : "";
        const char *opt = !strcmp(val, "-") ? NULL : val;
        if (v)
            *v = '\0';
        if (!strcmp(line, "job"))
            job = (char *)val;
        else if (!strcmp(line, "verifiers"))
            o.verifiers = opt;
        else if (!strcmp(line, "sequences"))
            o.sequences_spec = opt;
        else if (!strcmp(line, "depth"))
            o.depth_spec = opt;
        else if (!strcmp(line, "cost"))
            o.cost = opt;
        else if (!strcmp(line, "is_top"))
            o.is_top = (size_t)strtoull(val, NULL, 10);
        else if (!strcmp(line, "dump"))
            dumps[o.n_dumps++] = (char *)val;
        else if (strcmp(line, "end") != 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': '%.80s' is not a header line of a block shard",
                           files[0].in->name, line);
    }
    o.dumps = dumps;
    char opts[2048], *sig = NULL;
    options_text(&o, opts, sizeof opts);
    if (rc == MDSD_OK && (!job || o.n_dumps == 0))
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': the header names no job or dump", files[0].in->name);
    if (rc == MDSD_OK)
        rc = mdsd_block_signature(opts, o.dumps, o.n_dumps, &sig, err);
    if (rc == MDSD_OK && strcmp(sig, job) != 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "a dump of the shards changed since they read it (size or "
                       "modification time differ): rerun the shards");
    free(sig);
    o.merge = files, o.merge_n = N;
    o.shard_err = err;
    int code = rc == MDSD_OK ? run_dumps(&o) : CLI_EXIT_ERROR;
    mdsd_shard_files_free(files, N);
    free(copy), free(dumps);
    if (rc == MDSD_OK && code == CLI_EXIT_USAGE)
        rc = mdsd_fail(err, MDSD_EINVAL, "the options the shards recorded are refused (above)");
    else if (rc == MDSD_OK && code != CLI_EXIT_OK)
        rc = err->code ? err->code : MDSD_EINVAL;
    return rc;
}

#ifdef MDSD_MPI
static int mpi_part(void *ctx, size_t shard, size_t shards, char **text, size_t *len, mdsd_err *err)
{
    block_opts o = *(const block_opts *)ctx;
    o.shard = shard, o.shards = shards;
    o.shard_data = text, o.shard_size = len, o.shard_err = err;
    o.keep_partial = true;
    mdsd_err_clear(err);
    int code = run_dumps(&o);
    if (code == CLI_EXIT_OK)
        return MDSD_OK;
    return err->code ? err->code : mdsd_fail(err, MDSD_EINVAL, "the options are refused (above)");
}

static int mpi_merge(void *ctx, const mdsd_shard_input *in, size_t n, mdsd_err *err)
{
    const block_opts *o = ctx;
    return cli_block_merge(in, n, o->output, o->markdown, o->latex, err);
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
    if (!o.verifier)
        return cli_usage_error("block", "missing --verifier");
    if (!strcmp(o.verifier, "optimal"))
        return cli_usage_error("block", "-v optimal names no class: give -v optimal-token (the "
                               "best token-level verifier) or -v optimal-block (the best lossless "
                               "verifier that sees the whole draft)");
    if ((!strcmp(o.verifier, "optimal-token") || !strcmp(o.verifier, "otm-tiebreak") ||
         !strcmp(o.verifier, "optimal-block")) && o.trials)
        return cli_usage_error("block", "-v %s is computed exactly: drop --trials", o.verifier);
    if (o.tree && (o.sequences || o.depth))
        return cli_usage_error("block", "--tree excludes --sequences and --depth");
    if (!o.tree && (!o.sequences || !o.depth))
        return cli_usage_error("block", "give --sequences K and --depth L, or --tree W1,W2,...");
    if (o.scheme && !o.tree)
        return cli_usage_error("block", "--scheme is for --tree (seq drafts are iid)");
    if (o.exact && o.trials)
        return cli_usage_error("block", "--exact and --trials are two routes: give one");
    if (o.simulate && !o.trials)
        return cli_usage_error("block", "--simulate needs --trials T");
    if (o.trials == 1)
        return cli_usage_error("block", "--trials must be at least 2 (for the standard error)");
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = run(&o, &err);
    if (rc < 0)
        return CLI_EXIT_USAGE;
    return rc ? cli_report("block", &err) : CLI_EXIT_OK;
}
