/* mdsd merge: the partial aggregates of `mdsd table --shard I/N` (shard.h)
 * folded into the results CSV a single run writes, byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"
#include "pathset.h"
#include "provenance.h"
#include "shard.h"

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
    mdsd_shard_job job;
} merge_opts;

static void merge_style(const merge_opts *o, mdsd_report_style *style)
{
    mdsd_report_style_init(style);
    style->layout = o->layout;
    style->is_top = o->job.is_top;
    style->trials = o->job.trials;
}

/* Before the CSV appears: its provenance and the rendered files. */
static int before_publish(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err)
{
    merge_opts *o = ctx;
    const mdsd_shard_job *j = &o->job;
    mdsd_provenance pv = {.tool = "mdsd merge", .argc = cli_argc(), .argv = cli_argv(), .output = o->output,
                          .is_table = true, .seed = j->seed, .trials = j->trials,
                          .simulate = j->simulate, .top_k = j->top_k, .top_p = j->top_p,
                          .is_top = j->is_top, .row_begin = j->row_begin, .row_end = j->row_end,
                          .n_dumps = j->n_dumps, .dumps = (const char *const *)j->dumps};
    int rc = mdsd_provenance_write(&pv, err);
    mdsd_report_style style;
    merge_style(o, &style);
    if (rc == MDSD_OK && o->markdown && strcmp(o->markdown, "-") != 0)
        rc = cli_render_report(o->markdown, mdsd_report_render_markdown, rows, count, &style, err);
    if (rc == MDSD_OK && o->latex && strcmp(o->latex, "-") != 0)
        rc = cli_render_report(o->latex, mdsd_report_render_latex, rows, count, &style, err);
    return rc;
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
    mdsd_shard_input *in = calloc(n, sizeof *in);
    mdsd_err err;
    mdsd_err_clear(&err);
    /* every file written, checked now against the shards and again (merge,
     * block merge) once the shards name their dumps */
    mdsd_pathset renders, paths;
    mdsd_pathset_init(&renders);
    mdsd_pathset_init(&paths);
    if (o.markdown && strcmp(o.markdown, "-") != 0) /* "-": standard output */
        mdsd_pathset_output(&renders, o.markdown, "--markdown");
    if (o.latex && strcmp(o.latex, "-") != 0)
        mdsd_pathset_output(&renders, o.latex, "--latex");
    mdsd_pathset_stdout(&renders);
    for (size_t i = 0; i < n; i++)
        mdsd_pathset_input(&paths, argv[optind + (int)i], "a shard");
    mdsd_pathset_output_family(&paths, o.output, "-o", mdsd_suffixes_provenance);
    mdsd_pathset_add_all(&paths, &renders);
    int rc = in ? mdsd_pathset_check(&paths, &err) : mdsd_fail(&err, MDSD_ENOMEM, "out of memory");
    mdsd_pathset_free(&paths);
    for (size_t i = 0; i < n && rc == MDSD_OK; i++) {
        char *text = NULL;
        in[i].name = argv[optind + (int)i];
        rc = mdsd_ckpt_read_file(in[i].name, &text, &in[i].size, &err);
        in[i].text = text;
    }
    mdsd_report_row *rows = NULL;
    size_t count = 0;
    size_t ml = strlen(MDSD_BLOCK_SHARD_MAGIC);
    if (rc == MDSD_OK && in[0].size >= ml && !memcmp(in[0].text, MDSD_BLOCK_SHARD_MAGIC, ml)) {
        /* shards of mdsd block */
        if ((o.markdown && !strcmp(o.markdown, "-")) || (o.latex && !strcmp(o.latex, "-")))
            rc = mdsd_fail(&err, MDSD_EINVAL, "block shards: give --markdown=FILE and --latex=FILE");
        else
            rc = cli_block_merge(in, n, o.output, o.markdown, o.latex, &err);
        for (size_t i = 0; i < n; i++)
            free((char *)in[i].text);
        free(in);
        mdsd_pathset_free(&renders);
        return rc ? cli_report("merge", &err) : CLI_EXIT_OK;
    }
    if (rc == MDSD_OK) {
        mdsd_cleanup_signals("mdsd merge", NULL);
        mdsd_merge_opts m = {n, in, o.output, &o.job, before_publish, &o, &renders};
        rc = mdsd_batch_merge(&m, &rows, &count, &err);
    }
    mdsd_report_style style;
    merge_style(&o, &style);
    if (rc == MDSD_OK && o.markdown && !strcmp(o.markdown, "-"))
        mdsd_report_render_markdown(stdout, rows, count, &style);
    if (rc == MDSD_OK && o.latex && !strcmp(o.latex, "-"))
        mdsd_report_render_latex(stdout, rows, count, &style);
    for (size_t i = 0; in && i < n; i++)
        free((char *)in[i].text);
    free(in);
    free(rows);
    mdsd_pathset_free(&renders);
    mdsd_shard_job_free(&o.job);
    return rc ? cli_report("merge", &err) : CLI_EXIT_OK;
}
