/* mdsd table: the batch job over logit dumps (mdsd_table_run_with,
 * <mdsd/batch.h>), with the results as a tidy CSV and, on request, Markdown /
 * LaTeX tables; MPI ranks run its shards (cli_mpi.c). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mdsd/batch.h>

#include "cli.h"
#include "parse.h"
#include "outfile.h"

static const char usage_text[] =
    "Usage: mdsd table DUMP... -o results.csv [options]\n"
    "Acceptance rates over the positions of logit dumps: per (dump, temperature, n,\n"
    "scheme, method) the mean acceptance, its standard error clustered by sample,\n"
    "the gap to the scheme's optimal alpha* (paired, clustered s.e., significance\n"
    "marker) and per-draft rates. method is a verifier, or 'bound' for alpha*.\n"
    "A DUMP that is a directory is one dump split across its *.h5 files (read in\n"
    "name order as one dataset).\n\n"
    "  -o, --output FILE        results CSV (written atomically)\n"
    "  -t, --temperatures LIST  comma list or a:b:step (default 0.7; 0 = argmax)\n"
    "  -d, --drafts LIST        numbers of drafts n (default 3)\n"
    "  -s, --schemes LIST       schemes whose alpha* to report (default iid,wor,greedy)\n"
    "  -v, --verifiers LIST     verifiers (default rrs,kseq,greedy); each runs\n"
    "                           on its own scheme (rrs/kseq/is/ot: iid, rrsw: wor,\n"
    "                           greedy: greedy, spechub: hub, sd: n = 1), whose alpha*\n"
    "                           is then reported too; 'none' for bounds only.\n"
    "                           rrsw is exact (certified to 1e-9) up to n = 3 at\n"
    "                           LLM vocabularies; rrsw at n >= 4 there (and is/otm\n"
    "                           at large V) need --trials\n"
    "      --draft-model LIST   drafter groups under /drafts to compare, each a table\n"
    "                           column DUMP:NAME (default: the first drafter by\n"
    "                           name, with a note; the column is DUMP:NAME whenever\n"
    "                           the dump has several drafters)\n"
    "      --trials K           Monte-Carlo trials per position where a verifier has\n"
    "                           no exact form (default 0: exact only)\n"
    "      --simulate           Monte Carlo for every verifier, even where an exact\n"
    "                           form exists (needs --trials)\n"
    "      --seed S             seed of the Monte-Carlo streams (default 1)\n"
    "      --positions a:b      rows a (inclusive) to b (exclusive) of every dump\n"
    "      --top-k K            decoding truncation of p and q: keep the K most likely\n"
    "      --top-p P            then the smallest most-likely set of mass >= P of the\n"
    "                           renormalised top-K, 0 < P <= 1 (MATH.md 0.3)\n"
    "      --threads N          OpenMP threads (default: all cores); results do not\n"
    "                           depend on N\n"
    "      --resume             continue an interrupted job from FILE.partial (each\n"
    "                           finished unit is checked against its row count and\n"
    "                           checksum)\n"
    "      --discard-partial    delete an existing FILE.partial and start over (without\n"
    "                           --resume or this, an existing FILE.partial stops the job)\n"
    "      --checkpoint-seconds S  inside a (dump, temperature) unit, save the\n"
    "                           samples finished so far to FILE.partial every S\n"
    "                           seconds (default 60; 0 = after every block of rows):\n"
    "                           --resume goes on from there, with the same results\n"
    "      --is-top S           is verifier: free weights only among the top S tokens\n"
    "      --max-paths M        rrsw's exact rate: guard on draw-path visits (default\n"
    "                           1e7; a position above it fails the job); raise it for\n"
    "                           n = 4 at LLM vocabularies (tens of seconds a position)\n"
    "      --markdown[=FILE]    also render a Hu-et-al.-Table-1-style Markdown table\n"
    "                           (to standard output without FILE)\n"
    "      --latex[=FILE]       the same table in LaTeX (booktabs, graphicx; labels\n"
    "                           escaped, \\label{tab:mdsd-T<T>-n<n>}; marks: dagger =\n"
    "                           Monte Carlo, double dagger = is truncated by\n"
    "                           --is-top, section = one sample, s.e. not clustered;\n"
    "                           stars: t test, samples - 1 degrees of freedom)\n"
    "      --layout L           per-setting (a table per T, n), combined (one table,\n"
    "                           T x n as row groups) or both (default)\n"
    "      --per-position FILE  per-row CSV, streamed: dump,temperature,row,sample,\n"
    "                           position,entropy_p,entropy_q,tv,alpha_star_<scheme>_n<n>\n"
    "                           ...,rate_<verifier>_n<n>... (to FILE.partial until\n"
    "                           the job ends; --resume goes on from its checkpoint)\n"
    "      --shard I/N          evaluate shard I of N only (whole samples of every\n"
    "                           dump) and write its partial aggregates to -o FILE;\n"
    "                           mdsd merge -o CSV FILE... writes the CSV of the whole\n"
    "                           job, byte for byte (not with --per-position,\n"
    "                           --markdown, --latex)\n"
    "  -h, --help               this help\n\n"
    "CSV columns: dump,temperature,n,scheme,method,alpha,stderr,gap,gap_stderr,\n"
    "significance,positions,samples,exact,alpha_low,alpha_low_stderr,alpha_high,\n"
    "alpha_high_stderr,per_draft_1..per_draft_K\n"
    "alpha_low/alpha_high: the certified interval of alpha* on truncated top-k rows\n"
    "(data/README.md, \"Truncated rows\"; only -t 1 -s iid -v none there); = alpha on\n"
    "complete rows.\n"
    "How the file was made (command, seed, trials, truncation, is-top, each dump's\n"
    "size and SHA-256) goes to FILE.provenance.json beside it; mdsd report and\n"
    "mdsd plot carry it forward.\n";

enum {
    OPT_DRAFT_MODEL = CLI_OPT_COMMAND, OPT_TRIALS, OPT_SEED, OPT_POSITIONS, OPT_THREADS,
    OPT_RESUME, OPT_IS_TOP, OPT_MAX_PATHS, OPT_MARKDOWN, OPT_LATEX, OPT_SIMULATE, OPT_TOP_K, OPT_TOP_P,
    OPT_PER_POSITION, OPT_LAYOUT, OPT_DISCARD_PARTIAL, OPT_SHARD, OPT_CHECKPOINT_SECONDS
};

#define MAX_LIST 64

typedef struct {
    mdsd_table_opts job;  /* --markdown/--latex "-" = standard output */
    mdsd_run_opts run;    /* provenance, notes, progress bar, test hooks */
    double *temperatures;
    size_t counts[MAX_LIST];
    mdsd_scheme_kind schemes[MAX_LIST];
    mdsd_verifier_kind verifiers[MAX_LIST];
    char draft_names[MAX_LIST][32];
    const char *draft_models[MAX_LIST];
} table_opts;

static int split_list(const char *spec, const char *opt, char items[][32], size_t *count)
{
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", spec);
    *count = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*count == MAX_LIST || strlen(tok) >= 32)
            return cli_usage_error("table", "%s: too many or too long entries", opt);
        strcpy(items[(*count)++], tok);
    }
    return *count ? 0 : cli_usage_error("table", "%s: empty list", opt);
}

static int parse_counts(const char *spec, table_opts *t)
{
    char items[MAX_LIST][32];
    if (split_list(spec, "--drafts", items, &t->job.n_counts))
        return -1;
    for (size_t i = 0; i < t->job.n_counts; i++)
        if (cli_parse_size(items[i], "--drafts", "table", &t->counts[i]))
            return -1;
    return 0;
}

static int parse_schemes(const char *spec, table_opts *t)
{
    char items[MAX_LIST][32];
    if (split_list(spec, "--schemes", items, &t->job.n_schemes))
        return -1;
    for (size_t i = 0; i < t->job.n_schemes; i++) {
        mdsd_err err;
        if (mdsd_scheme_parse(items[i], &t->schemes[i], &err))
            return cli_usage_error("table", "--schemes: %s", err.msg);
    }
    return 0;
}

static int parse_verifiers(const char *spec, table_opts *t)
{
    char items[MAX_LIST][32];
    if (!strcmp(spec, "none")) {
        t->job.n_verifiers = 0;
        return 0;
    }
    if (split_list(spec, "--verifiers", items, &t->job.n_verifiers))
        return -1;
    for (size_t i = 0; i < t->job.n_verifiers; i++) {
        mdsd_err err;
        if (mdsd_verifier_parse(items[i], &t->verifiers[i], &err))
            return cli_usage_error("table", "--verifiers: %s", err.msg);
    }
    return 0;
}

static int parse_draft_models(const char *spec, table_opts *t)
{
    if (split_list(spec, "--draft-model", t->draft_names, &t->job.n_draft_models))
        return -1;
    for (size_t i = 0; i < t->job.n_draft_models; i++)
        t->draft_models[i] = t->draft_names[i];
    t->job.draft_models = t->draft_models;
    return 0;
}

static int parse_positions(const char *spec, mdsd_table_opts *b)
{
    unsigned long long a = 0, e = 0;
    const char *colon;
    if (mdsd_parse_uint(spec, SIZE_MAX, &a, &colon) || *colon != ':' ||
        (colon[1] && mdsd_parse_uint(colon + 1, SIZE_MAX, &e, NULL)))
        return cli_usage_error("table", "--positions: '%s' is not a:b (decimal integers; b may be "
                               "left out)", spec);
    if (colon[1] && e <= a)
        return cli_usage_error("table", "--positions: '%s' needs a < b", spec);
    b->row_begin = (size_t)a;
    b->row_end = (size_t)e;
    return 0;
}

static int parse_temperatures(const char *spec, table_opts *t)
{
    mdsd_err err;
    free(t->temperatures);
    t->temperatures = NULL;
    if (mdsd_parse_range(spec, "--temperatures", &t->temperatures, &t->job.n_temperatures, &err))
        return cli_usage_error("table", "%s", err.msg);
    return 0;
}

static int parse_option(int opt, const char *arg, table_opts *t)
{
    mdsd_table_opts *b = &t->job;
    unsigned long long u;
    switch (opt) {
    case 'o': b->output = arg; return 0;
    case 't': return parse_temperatures(arg, t);
    case 'd': return parse_counts(arg, t);
    case 's': return parse_schemes(arg, t);
    case 'v': return parse_verifiers(arg, t);
    case OPT_DRAFT_MODEL: return parse_draft_models(arg, t);
    case OPT_TRIALS:
        if (cli_parse_u64(arg, "--trials", "table", &u))
            return -1;
        b->trials = u;
        return 0;
    case OPT_SEED:
        if (cli_parse_u64(arg, "--seed", "table", &u))
            return -1;
        b->seed = u;
        return 0;
    case OPT_POSITIONS: return parse_positions(arg, b);
    case OPT_THREADS:
        if (cli_parse_u64(arg, "--threads", "table", &u))
            return -1;
        b->threads = (int)u;
        return 0;
    case OPT_RESUME: b->resume = true; return 0;
    case OPT_DISCARD_PARTIAL: b->discard_partial = true; return 0;
    case OPT_SIMULATE: b->simulate = true; return 0;
    case OPT_TOP_K: return cli_parse_size(arg, "--top-k", "table", &b->top_k);
    case OPT_TOP_P:
        if (cli_parse_double(arg, "--top-p", "table", &b->top_p))
            return -1;
        return b->top_p > 0.0 && b->top_p <= 1.0
                   ? 0 : cli_usage_error("table", "--top-p: %s is not in (0, 1]", arg);
    case OPT_IS_TOP: return cli_parse_size(arg, "--is-top", "table", &b->verifier_opts.is_top);
    case OPT_MAX_PATHS: return cli_parse_max_paths(arg, "table", &b->verifier_opts.max_paths);
    case OPT_MARKDOWN: b->markdown = arg ? arg : "-"; return 0;
    case OPT_LATEX: b->latex = arg ? arg : "-"; return 0;
    case OPT_PER_POSITION: b->per_position = arg; return 0;
    case OPT_LAYOUT: {
        mdsd_report_layout layout;
        int bad = cli_parse_layout(arg, "table", &layout);
        b->layout = (int)layout;
        return bad;
    }
    case OPT_CHECKPOINT_SECONDS:
        if (cli_parse_double(arg, "--checkpoint-seconds", "table", &b->checkpoint_seconds))
            return -1;
        if (!(b->checkpoint_seconds >= 0) || isinf(b->checkpoint_seconds))
            return cli_usage_error("table", "--checkpoint-seconds: %s is not a number >= 0", arg);
        if (b->checkpoint_seconds == 0)
            b->checkpoint_seconds = -1; /* after every block */
        return 0;
    case OPT_SHARD: return cli_parse_shard(arg, "table", &b->shard, &b->shards) ? CLI_EXIT_USAGE : 0;
    default: return cli_usage_error("table", "unrecognised option");
    }
}

static void print_note(const char *message, void *ctx)
{
    (void)ctx;
    char words[CLI_WORDS_MAX];
    fprintf(stderr, "mdsd table: %s\n", cli_words(message, words, sizeof words));
}

/* After a failure: say how to go on from the units that were finished. */
static void note_kept_units(const mdsd_table_opts *b, const mdsd_err *err)
{
    char partial[4200], lock[4200], pp_lock[4200];
    struct stat st;
    snprintf(partial, sizeof partial, "%s.partial", b->output ? b->output : "");
    snprintf(lock, sizeof lock, "%s.lock", b->output ? b->output : "");
    snprintf(pp_lock, sizeof pp_lock, "%s.lock", b->per_position ? b->per_position : "");
    /* not when another job holds the lock (the units there are that job's,
     * and the message says so), nor when the partial file itself is the
     * problem (the message says what to do) */
    if (mdsd_lock_busy(lock) || (b->per_position && mdsd_lock_busy(pp_lock)))
        return;
    if (b->output && stat(partial, &st) == 0 && !strstr(err->msg, partial)) {
        char rows[4200] = "";
        if (b->per_position)
            snprintf(rows, sizeof rows, " (their per-position rows in %s.partial)", b->per_position);
        fprintf(stderr, "mdsd table: finished units are kept in %s%s: fix the problem and rerun the "
                "same command with --resume to continue\n", partial, rows);
    }
}

#ifdef MDSD_MPI
/* An MPI rank's share: shard r+1 of N, its aggregate kept in memory. */
static int mpi_part(void *ctx, size_t shard, size_t shards, char **text, size_t *len, mdsd_err *err)
{
    table_opts *t = ctx;
    mdsd_table_opts b = t->job;
    mdsd_run_opts run = t->run;
    b.shard = shard, b.shards = shards;
    run.shard_text = text, run.shard_size = len;
    if (shard != 1)
        run.on_note = NULL, run.progress_bar = 0;
    return mdsd_table_run_with(&b, &run, err);
}

/* Rank 0: the CSV (and --markdown/--latex, provenance) from every rank's. */
static int mpi_merge(void *ctx, const mdsd_shard_text *in, size_t n, mdsd_err *err)
{
    table_opts *t = ctx;
    return mdsd_table_merge_texts(&t->job, &t->run, in, n, err);
}
#endif

int cmd_table(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"temperatures", required_argument, NULL, 't'},
        {"drafts", required_argument, NULL, 'd'},
        {"schemes", required_argument, NULL, 's'},
        {"verifiers", required_argument, NULL, 'v'},
        {"draft-model", required_argument, NULL, OPT_DRAFT_MODEL},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"positions", required_argument, NULL, OPT_POSITIONS},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"discard-partial", no_argument, NULL, OPT_DISCARD_PARTIAL},
        {"simulate", no_argument, NULL, OPT_SIMULATE},
        {"top-k", required_argument, NULL, OPT_TOP_K},
        {"top-p", required_argument, NULL, OPT_TOP_P},
        {"is-top", required_argument, NULL, OPT_IS_TOP},
        {"max-paths", required_argument, NULL, OPT_MAX_PATHS},
        {"markdown", optional_argument, NULL, OPT_MARKDOWN},
        {"latex", optional_argument, NULL, OPT_LATEX},
        {"per-position", required_argument, NULL, OPT_PER_POSITION},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"checkpoint-seconds", required_argument, NULL, OPT_CHECKPOINT_SECONDS},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    table_opts t = {0};
    mdsd_table_opts *b = &t.job;
    mdsd_table_opts_init(b);
    mdsd_run_opts_init(&t.run);
    t.run.tool = "mdsd table";
    t.run.n_words = (size_t)cli_argc(), t.run.words = (const char *const *)cli_argv();
    t.run.stdout_used = 1;
    t.run.progress_bar = 1;
    t.run.on_note = print_note;
    cli_table_hooks(&t.run);
    int bad = parse_temperatures("0.7", &t) || parse_counts("3", &t) ||
              parse_schemes("iid,wor,greedy", &t) || parse_verifiers("rrs,kseq,greedy", &t);
    int opt;
    while (!bad && (opt = getopt_long(argc, argv, "o:t:d:s:v:h", longopts, NULL)) != -1) {
        if (opt == 'h') {
            fputs(usage_text, stdout);
            free(t.temperatures);
            return CLI_EXIT_OK;
        }
        bad = opt == '?' ? cli_usage_error("table", "unrecognised option") : parse_option(opt, optarg, &t);
    }
    if (!bad && optind == argc)
        bad = cli_usage_error("table", "no dump given");
    if (!bad && !b->output)
        bad = cli_usage_error("table", "missing -o/--output FILE");
    if (!bad && b->shards && (b->markdown || b->latex))
        bad = cli_usage_error("table", "--shard writes partial aggregates: render the tables with "
                              "mdsd merge --markdown/--latex");
    if (bad) {
        free(t.temperatures);
        return CLI_EXIT_USAGE;
    }
    b->dumps = (const char *const *)argv + optind;
    b->n_dumps = (size_t)(argc - optind);
    b->temperatures = t.temperatures;
    b->draft_counts = t.counts;
    b->schemes = t.schemes;
    b->verifiers = t.verifiers;
    mdsd_err err;
    mdsd_err_clear(&err);
    /* an interrupt removes the temporary files and says how to go on */
    static char hint[8800];
    if (b->per_position)
        snprintf(hint, sizeof hint, "finished units are kept in %s.partial (their per-position "
                 "rows in %s.partial): rerun the same command with --resume to continue",
                 b->output, b->per_position);
    else
        snprintf(hint, sizeof hint, "finished units are kept in %s.partial: rerun the same "
                 "command with --resume to continue", b->output);
#ifdef MDSD_MPI
    if (cli_mpi_launched()) {
        /* every rank checks what the whole job reads and writes before any work */
        int rc = mdsd_table_check(b, &t.run, &err);
        if (rc == MDSD_OK && b->shards) {
            free(t.temperatures);
            return cli_usage_error("table", "--shard: under mpirun the ranks are the shards; "
                                   "drop --shard");
        }
        int code = CLI_EXIT_ERROR;
        if (rc == MDSD_OK) {
            mdsd_cleanup_signals("mdsd table", hint);
            code = cli_mpi_run("table", argc, argv, b->output, mpi_part, mpi_merge, &t);
        } else {
            note_kept_units(b, &err);
            code = cli_report("table", &err);
        }
        free(t.temperatures);
        return code;
    }
#endif
    mdsd_cleanup_signals("mdsd table", hint);
    int rc = mdsd_table_run_with(b, &t.run, &err);
    if (rc)
        note_kept_units(b, &err);
    free(t.temperatures);
    return rc ? cli_report("table", &err) : CLI_EXIT_OK;
}
