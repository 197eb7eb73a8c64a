/* mdsd plot: figures from a results CSV of `mdsd table` or a block CSV of
 * `mdsd block -o`, a thin program over the public API (mdsd/plot.h): it
 * parses the options and runs the library's steps in order, reporting an
 * option's error as a usage error (exit 2), any other as exit 1. */
#include <mdsd/plot.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "labels.h"
#include "outfile.h"

static const char usage_text[] =
    "Usage: mdsd plot RESULTS.csv [--kind K] -o FILE.{png,svg,pdf}\n"
    "                 [--dump D] [--n N] [--temperature T] [--scheme LIST]\n"
    "                 [--method LIST] [--title TEXT] [--size PRESET] [--legend WHERE]\n"
    "                 [--terminal TERM] [--scripts DIR]\n"
    "Draws a figure from a results CSV (columns dump, temperature, n, scheme,\n"
    "method, alpha, stderr, gap, gap_stderr, per_draft_1.., as `mdsd table`\n"
    "writes them; method `bound` is the scheme's optimal alpha*) with the gnuplot\n"
    "script plots/KIND.gp. One line per (scheme, method) in the fixed style of\n"
    "plots/styles.gp (each verifier its colour and filled marker; alpha* black or\n"
    "grey, open marker, dashed).\n\n"
    "  -k, --kind K          vs-temperature  alpha against T (Hu et al. Fig. 1)\n"
    "                        vs-drafts       alpha against n (Hu et al. Fig. 2)\n"
    "                        per-draft       per-draft acceptance against the draft\n"
    "                                        index (SpecHub Fig. 9)\n"
    "                        gap             gap to alpha* against T, with its s.e.\n"
    "                        block-depth     E[tau] against the draft depth L, from a\n"
    "                                        block CSV (mdsd block -o; the default kind\n"
    "                                        for one): a line per verifier and policy,\n"
    "                                        seq at one K (--n K, else the largest)\n"
    "                        block-speedup   E[tau] / (1 + c L) against L, the cost c\n"
    "                                        sets the dash\n"
    "                        block-reach     P(at least d accepted) against the\n"
    "                                        position d, at the deepest L"
    "  -o, --output FILE     .png (pngcairo, else png), .svg or .pdf (pdfcairo)\n"
    "      --dump D          rows of this dump only\n"
    "      --dumps LIST|all  overlay several dumps or drafters (comma list, or all);\n"
    "                        each method keeps its style, the dump sets the dash\n"
    "      --n N             rows with this number of drafts only\n"
    "      --temperature T   rows at this temperature only\n"
    "      --scheme LIST     comma-separated schemes to draw (default all)\n"
    "      --method LIST     comma-separated methods to draw (default all)\n"
    "      --title TEXT      figure title (default: the fixed dump / n / T)\n"
    "      --label OLD=NEW   show the CSV's name OLD (a dump, dump:drafter, method,\n"
    "                        verifier or scheme; it ends at the first '=') as NEW\n"
    "                        in the legend and title (repeatable; recorded in the\n"
    "                        provenance; OLD must be in the figure)\n"
    "      --size PRESET     screen (default: 900x600 px, 6x4 in), column (one\n"
    "                        column of a two-column paper, 3.4x2.6 in) or full\n"
    "                        (full text width, 7x3 in)\n"
    "      --legend WHERE    outside (right), below, inside (bottom right),\n"
    "                        top-left, top-right, bottom-left, bottom-right or none\n"
    "                        (default: outside; below for --size column)\n"
    "      --terminal TERM   gnuplot terminal (default from the extension)\n"
    "      --scripts DIR     where KIND.gp lives (default: $MDSD_PLOTS, plots/\n"
    "                        beside the mdsd binary, PREFIX/share/mdsd/plots of\n"
    "                        an installed PREFIX/bin/mdsd, the repository's plots/,\n"
    "                        ./plots)\n"
    "  -h, --help            this help\n\n"
    "A column the figure holds fixed (dump and n for vs-temperature, dump and T\n"
    "for vs-drafts, all three for per-draft, dump and n for gap) that has several\n"
    "values and no option takes the first value in the file, with a note.\n"
    "Error bars and bands are 95% confidence intervals (1.96 s.e.), as the key's\n"
    "title says.\n"
    "The figure's provenance (command, source CSV and that CSV's own provenance)\n"
    "goes to FILE.provenance.json beside it.\n";

enum { OPT_DUMP = CLI_OPT_COMMAND, OPT_N, OPT_TEMP, OPT_SCHEME, OPT_METHOD, OPT_TITLE, OPT_TERM, OPT_SCRIPTS,
       OPT_SIZE, OPT_LEGEND, OPT_DUMPS, OPT_LABEL };

typedef struct {
    mdsd_plot_opts pub;
    const char *csv, *output;
    const char *labels[CLI_MAX_LABELS]; /* --label OLD=NEW, as given (labels.h) */
} plot_args;

static int parse_args(int argc, char **argv, plot_args *a)
{
    static const struct option longopts[] = {
        {"kind", required_argument, NULL, 'k'},       {"output", required_argument, NULL, 'o'},
        {"dump", required_argument, NULL, OPT_DUMP},  {"n", required_argument, NULL, OPT_N},
        {"temperature", required_argument, NULL, OPT_TEMP}, {"scheme", required_argument, NULL, OPT_SCHEME},
        {"method", required_argument, NULL, OPT_METHOD}, {"title", required_argument, NULL, OPT_TITLE},
        {"terminal", required_argument, NULL, OPT_TERM}, {"scripts", required_argument, NULL, OPT_SCRIPTS},
        {"size", required_argument, NULL, OPT_SIZE},  {"dumps", required_argument, NULL, OPT_DUMPS},
        {"legend", required_argument, NULL, OPT_LEGEND}, {"label", required_argument, NULL, OPT_LABEL},
        {"help", no_argument, NULL, 'h'},             {0, 0, 0, 0}};
    mdsd_plot_opts *o = &a->pub;
    int opt;
    size_t n;
    while ((opt = getopt_long(argc, argv, "k:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k': o->kind = optarg; break;
        case 'o': a->output = optarg; break;
        case OPT_DUMP: o->dump = optarg, o->dumps = NULL; break; /* the last of --dump/--dumps counts */
        case OPT_N:
            if (cli_parse_size(optarg, "--n", "plot", &n))
                return -1;
            o->n = (int64_t)n;
            break;
        case OPT_TEMP: if (cli_parse_double(optarg, "--temperature", "plot", &o->temperature)) return -1; break;
        case OPT_SCHEME: o->scheme = optarg; break;
        case OPT_METHOD: o->method = optarg; break;
        case OPT_TITLE: o->title = optarg; break;
        case OPT_TERM: o->terminal = optarg; break;
        case OPT_SCRIPTS: o->scripts = optarg; break;
        case OPT_SIZE: o->paper_size = optarg; break;
        case OPT_DUMPS: o->dumps = optarg, o->dump = NULL; break;
        case OPT_LEGEND: o->legend = optarg; break;
        case OPT_LABEL:
            if (cli_label_add("plot", optarg, a->labels, &o->n_labels))
                return -1;
            break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: cli_usage_error("plot", "unrecognised option"); return -1;
        }
    }
    if (optind + 1 != argc) {
        cli_usage_error("plot", optind == argc ? "missing RESULTS.csv" : "give exactly one RESULTS.csv");
        return -1;
    }
    a->csv = argv[optind];
    o->labels = a->labels;
    return 0;
}

/* The library's notes ("choose with `dump`") in the CLI's words. */
static void print_note(const char *note, void *ctx)
{
    (void)ctx;
    char words[CLI_WORDS_MAX];
    fprintf(stderr, "mdsd plot: %s\n", cli_words(note, words, sizeof words));
}

int cmd_plot(int argc, char **argv)
{
    plot_args a;
    memset(&a, 0, sizeof a);
    mdsd_plot_opts_init(&a.pub);
    int r = parse_args(argc, argv, &a);
    if (r)
        return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    mdsd_plot_opts *o = &a.pub;
    o->tool = "mdsd plot";
    o->n_words = (size_t)cli_argc();
    o->words = (const char *const *)cli_argv();
    o->on_note = print_note;
    mdsd_err err;
    mdsd_err_clear(&err);
    /* the options alone first (usage errors), then the default kind of a
     * block CSV, which needs the file read */
    if (mdsd_plot_check_opts(o, &err))
        return cli_usage_error("plot", "%s", err.msg);
    if (!a.output)
        return cli_usage_error("plot", "missing -o/--output");
    if (!o->kind) {
        if (mdsd_plot_default_kind(a.csv, &o->kind, &err))
            return cli_report("plot", &err);
        if (!o->kind)
            return cli_usage_error("plot", "missing --kind (only a block CSV has a default, block-depth)");
        if (mdsd_plot_check_opts(o, &err))
            return cli_usage_error("plot", "%s", err.msg);
    }
    mdsd_plot_series *s = NULL;
    if (mdsd_plot_check_paths(a.csv, a.output, o, &err))
        return cli_report("plot", &err);
    mdsd_cleanup_signals("mdsd plot", NULL);
    if (mdsd_plot_series_read(a.csv, o, &s, &err))
        return cli_report("plot", &err);
    int rc = mdsd_plot_check_labels(s, o, &err) ? cli_usage_error("plot", "%s", err.msg)
             : mdsd_plot_draw(s, a.csv, a.output, o, &err) ? cli_report("plot", &err) : CLI_EXIT_OK;
    mdsd_plot_series_free(s);
    return rc;
}
