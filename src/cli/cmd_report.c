/* mdsd report: re-renders the results CSV of `mdsd table` as Markdown or
 * LaTeX tables without recomputing anything. A thin parser over the public
 * call mdsd_report (mdsd/report.h), which selects, orders, renders, checks the
 * files and carries the CSV's provenance forward; Python's mdsd.report is the
 * same call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdsd/report.h>

#include "cli.h"
#include "labels.h"

static const char usage_text[] =
    "Usage: mdsd report RESULTS.csv [--markdown | --latex] [-o FILE] [options]\n"
    "Renders the results CSV of `mdsd table` as tables (rows scheme x method with\n"
    "each scheme's alpha*, columns dumps) without recomputing.\n\n"
    "  -o, --output FILE       write here (atomically; default standard output)\n"
    "      --markdown          Markdown (default)\n"
    "      --latex             LaTeX (booktabs, graphicx); every label escaped, a \\label per\n"
    "                          table, marks for Monte-Carlo and --is-top cells\n"
    "      --standalone        LaTeX: a whole document (article, booktabs, graphicx)\n"
    "      --layout L          per-setting, combined (T x n as row groups) or both\n"
    "                          (default)\n"
    "      --label-prefix P    LaTeX labels P-T<T>-n<n> and P-all (default tab:mdsd)\n"
    "      --label OLD=NEW     show the CSV's dump, scheme or method OLD (it ends at\n"
    "                          the first '=') as NEW in the tables (repeatable;\n"
    "                          recorded in the provenance; OLD must be in the table)\n"
    "  -t, --temperatures LIST keep these temperatures, in this order\n"
    "  -d, --drafts LIST       keep these numbers of drafts, in this order\n"
    "  -s, --schemes LIST      keep these schemes, in this order\n"
    "  -m, --methods LIST      keep these methods (verifiers; alpha* rows stay), in\n"
    "                          this order\n"
    "      --dumps LIST        keep these dump columns, in this order\n"
    "      --is-top S          mark is cells as truncated (default: from the\n"
    "                          provenance file, else none)\n"
    "      --paired LIST       read RESULTS.csv as the per-position CSV of `mdsd\n"
    "                          table --per-position` instead, and give for each\n"
    "                          A:B of LIST the paired difference A - B over the\n"
    "                          same positions (s.e. clustered by sample) per dump\n"
    "                          and temperature; A, B are column names, or stems\n"
    "                          without _n<N> (rate_rrsw:rate_rrs,\n"
    "                          alpha_star_wor:alpha_star_iid) for every n present\n"
    "      --csv               with --paired: CSV (dump,temperature,a,b,difference,\n"
    "                          stderr,z,significance,positions,samples)\n"
    "  -h, --help              this help\n\n"
    "The --is-top and trials of the job come from RESULTS.csv.provenance.json when\n"
    "it exists; the output starts with a comment line naming it, and with -o a\n"
    "FILE.provenance.json is written that embeds it.\n";

enum { OPT_MARKDOWN = CLI_OPT_COMMAND, OPT_LATEX, OPT_STANDALONE, OPT_LAYOUT, OPT_LABEL, OPT_RELABEL, OPT_DUMPS,
       OPT_IS_TOP, OPT_PAIRED, OPT_CSV };

typedef struct {
    mdsd_report_opts pub;
    const char *csv, *output;
    const char *labels[CLI_MAX_LABELS + 1]; /* --label OLD=NEW, checked by the library */
} report_args;

static void print_note(const char *message, void *ctx)
{
    (void)ctx;
    char words[CLI_WORDS_MAX];
    fprintf(stderr, "mdsd report: %s\n", cli_words(message, words, sizeof words));
}

/* 0, 1 for --help, -1 for a usage error (printed). */
static int parse_args(int argc, char **argv, report_args *a)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},       {"markdown", no_argument, NULL, OPT_MARKDOWN},
        {"latex", no_argument, NULL, OPT_LATEX},        {"standalone", no_argument, NULL, OPT_STANDALONE},
        {"layout", required_argument, NULL, OPT_LAYOUT}, {"label-prefix", required_argument, NULL, OPT_LABEL},
        {"label", required_argument, NULL, OPT_RELABEL},
        {"temperatures", required_argument, NULL, 't'}, {"drafts", required_argument, NULL, 'd'},
        {"schemes", required_argument, NULL, 's'},      {"methods", required_argument, NULL, 'm'},
        {"dumps", required_argument, NULL, OPT_DUMPS},  {"is-top", required_argument, NULL, OPT_IS_TOP},
        {"paired", required_argument, NULL, OPT_PAIRED}, {"csv", no_argument, NULL, OPT_CSV},
        {"help", no_argument, NULL, 'h'},               {0, 0, 0, 0}};
    mdsd_report_opts *o = &a->pub;
    int opt;
    while ((opt = getopt_long(argc, argv, "o:t:d:s:m:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': a->output = optarg; break;
        case OPT_MARKDOWN: o->latex = 0; break;
        case OPT_LATEX: o->latex = 1; break;
        case OPT_STANDALONE: o->standalone = 1; break;
        case OPT_LAYOUT: {
            mdsd_report_layout layout;
            if (cli_parse_layout(optarg, "report", &layout))
                return -1;
            o->layout = (int)layout;
            break;
        }
        case OPT_LABEL: o->label_prefix = optarg; break;
        case OPT_RELABEL:
            if (o->n_labels > CLI_MAX_LABELS) /* the library says "at most" for the one past it */
                break;
            a->labels[o->n_labels++] = optarg;
            break;
        case 't': o->temperatures = optarg; break;
        case 'd': o->drafts = optarg; break;
        case 's': o->schemes = optarg; break;
        case 'm': o->methods = optarg; break;
        case OPT_DUMPS: o->dumps = optarg; break;
        case OPT_IS_TOP: {
            size_t k;
            if (cli_parse_size(optarg, "--is-top", "report", &k))
                return -1;
            o->is_top = k > INT64_MAX ? INT64_MAX : (int64_t)k;
            break;
        }
        case OPT_PAIRED: o->paired = optarg; break;
        case OPT_CSV: o->csv = 1; break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: cli_usage_error("report", "unrecognised option"); return -1;
        }
    }
    if (optind + 1 != argc) {
        cli_usage_error("report", optind == argc ? "missing RESULTS.csv" : "give exactly one RESULTS.csv");
        return -1;
    }
    a->csv = argv[optind];
    if (a->output && !strcmp(a->output, "-"))
        a->output = NULL; /* standard output, as without -o */
    return 0;
}

int cmd_report(int argc, char **argv)
{
    report_args a;
    memset(&a, 0, sizeof a);
    mdsd_report_opts_init(&a.pub);
    int r = parse_args(argc, argv, &a);
    if (r)
        return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    mdsd_report_opts *o = &a.pub;
    o->labels = a.labels;
    o->to_stdout = a.output == NULL;
    o->tool = "mdsd report";
    o->n_words = (size_t)cli_argc(), o->words = (const char *const *)cli_argv();
    o->on_note = print_note;
    mdsd_err err;
    mdsd_err_clear(&err);
    char *text = NULL;
    int option_error = 0;
    int rc = mdsd_report(a.csv, a.output, o, a.output ? NULL : &text, &option_error, &err);
    if (rc == MDSD_OK && text) {
        fputs(text, stdout);
        if (fflush(stdout) != 0)
            rc = mdsd_fail(&err, MDSD_EIO, "error writing the table");
    }
    mdsd_report_free(text);
    if (rc && option_error)
        return cli_usage_error("report", "%s", err.msg);
    return rc ? cli_report("report", &err) : CLI_EXIT_OK;
}
