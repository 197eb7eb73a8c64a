/* mdsd merge: the partial aggregates of `mdsd table --shard I/N` or `mdsd
 * block --shard I/N` folded into the results CSV a single run writes, byte for
 * byte (mdsd_merge_with, <mdsd/merge.h>). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdsd/merge.h>

#include "cli.h"
#include "outfile.h"

static const char usage_text[] =
    "Usage: mdsd merge -o results.csv SHARD... [--markdown[=FILE]] [--latex[=FILE]]\n"
    "                  [--layout L]\n"
    "Combines the partial aggregates written by `mdsd table ... --shard I/N -o SHARD`\n"
    "or `mdsd block ... --shard I/N -o SHARD` (all N shards of one job, in any\n"
    "order) into the job's results CSV: the same bytes as the CSV of the same\n"
    "command run in one process. A missing or duplicated shard, a shard of another\n"
    "job (options, cells, dumps) or a damaged one is refused, naming the file. The\n"
    "dumps must be readable here and unchanged since the shards read them\n"
    "(FILE.provenance.json records their SHA-256, as mdsd table does).\n\n"
    "  -o, --output FILE        results CSV (written atomically)\n"
    "      --markdown[=FILE]    also the tables in Markdown (table shards: stdout\n"
    "                           without FILE)\n"
    "      --latex[=FILE]       ... and in LaTeX, as mdsd table renders them\n"
    "      --layout L           per-setting, combined or both (default)\n"
    "  -h, --help               this help\n";

enum { OPT_MARKDOWN = CLI_OPT_COMMAND, OPT_LATEX, OPT_LAYOUT };

typedef struct {
    const char *output, *markdown, *latex;
    mdsd_report_layout layout;
} merge_opts;

static void note_stderr(const char *message, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "mdsd merge: %s\n", message);
}

int cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"markdown", optional_argument, NULL, OPT_MARKDOWN},
        {"latex", optional_argument, NULL, OPT_LATEX},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    merge_opts o = {0};
    o.layout = MDSD_REPORT_BOTH;
    int opt, bad = 0;
    while (!bad && (opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h': fputs(usage_text, stdout); return CLI_EXIT_OK;
        case 'o': o.output = optarg; break;
        case OPT_MARKDOWN: o.markdown = optarg ? optarg : "-"; break;
        case OPT_LATEX: o.latex = optarg ? optarg : "-"; break;
        case OPT_LAYOUT: bad = cli_parse_layout(optarg, "merge", &o.layout) != 0; break;
        default: bad = cli_usage_error("merge", "unrecognised option") != 0; break;
        }
    }
    if (!bad && !o.output)
        bad = cli_usage_error("merge", "missing -o/--output FILE") != 0;
    if (!bad && optind == argc)
        bad = cli_usage_error("merge", "no shard given") != 0;
    if (bad)
        return CLI_EXIT_USAGE;
    size_t n = (size_t)(argc - optind);
    mdsd_merge_job_opts m;
    mdsd_merge_job_opts_init(&m);
    m.markdown = o.markdown, m.latex = o.latex, m.layout = (int)o.layout;
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    run.tool = "mdsd merge";
    run.n_words = (size_t)cli_argc(), run.words = (const char *const *)cli_argv();
    run.on_note = note_stderr, run.progress_bar = 1;
    run.stdout_used = 1;
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_cleanup_signals("mdsd merge", NULL);
    int rc = mdsd_merge_with((const char *const *)argv + optind, n, o.output, &m, &run, &err);
    return rc ? cli_report("merge", &err) : CLI_EXIT_OK;
}
