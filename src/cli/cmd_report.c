/* mdsd report: re-renders the results CSV of `mdsd table` as Markdown or
 * LaTeX tables without recomputing anything: selects temperatures, draft
 * counts, schemes, methods and dumps, in the order given, and carries the
 * CSV's provenance (FILE.provenance.json) forward into the output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "outfile.h"
#include "pathset.h"
#include "labels.h"
#include "provenance.h"

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

#define MAX_ITEMS 64

typedef struct {
    char *items[MAX_ITEMS];
    size_t count;
    char *buf;
} name_list;

typedef struct {
    const char *csv, *output, *label_prefix, *paired;
    bool latex, standalone, is_top_given, csv_out, layout_given;
    size_t is_top;
    mdsd_report_layout layout;
    name_list temperatures, drafts, schemes, methods, dumps;
    const char *labels[CLI_MAX_LABELS]; /* --label OLD=NEW (labels.h) */
    size_t n_labels;
} report_opts;

int cli_parse_layout(const char *arg, const char *cmd, mdsd_report_layout *out)
{
    if (!strcmp(arg, "per-setting"))
        *out = MDSD_REPORT_PER_SETTING;
    else if (!strcmp(arg, "combined"))
        *out = MDSD_REPORT_COMBINED;
    else if (!strcmp(arg, "both"))
        *out = MDSD_REPORT_BOTH;
    else
        return cli_usage_error(cmd, "--layout: '%s' is not per-setting, combined or both", arg);
    return 0;
}

int cli_render_report(const char *dest, cli_report_renderer fn, const mdsd_report_row *rows,
                      size_t count, const mdsd_report_style *style, mdsd_err *err)
{
    if (!strcmp(dest, "-")) {
        fn(stdout, rows, count, style);
        return fflush(stdout) == 0 ? MDSD_OK : mdsd_fail(err, MDSD_EIO, "error writing the table");
    }
    return mdsd_report_render_file(dest, fn, rows, count, style, err);
}

static int split(const char *arg, const char *opt, name_list *l)
{
    free(l->buf);
    l->buf = strdup(arg);
    l->count = 0;
    if (!l->buf)
        return cli_usage_error("report", "out of memory");
    char *save = NULL;
    for (char *tok = strtok_r(l->buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (l->count == MAX_ITEMS)
            return cli_usage_error("report", "%s: more than %d entries", opt, MAX_ITEMS);
        l->items[l->count++] = tok;
    }
    for (size_t i = 0; i < l->count; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(l->items[i], l->items[k]))
                return cli_usage_error("report", "%s: '%s' is given twice", opt, l->items[i]);
    return l->count ? 0 : cli_usage_error("report", "%s: empty list", opt);
}

/* Position of a row's value in a list; -1 = filtered out; 0 when no list. */
static long rank_name(const name_list *l, const char *s)
{
    if (!l->count)
        return 0;
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->items[i], s))
            return (long)i;
    return -1;
}

static long rank_number(const name_list *l, double x)
{
    if (!l->count)
        return 0;
    for (size_t i = 0; i < l->count; i++)
        if (fabs(strtod(l->items[i], NULL) - x) <= 1e-9 * (1 + fabs(x)))
            return (long)i;
    return -1;
}

static int check_numbers(const name_list *l, const char *opt)
{
    for (size_t i = 0; i < l->count; i++) {
        char *end;
        double x = strtod(l->items[i], &end);
        if (end == l->items[i] || *end || !isfinite(x))
            return cli_usage_error("report", "%s: '%s' is not a number", opt, l->items[i]);
        for (size_t k = 0; k < i; k++) /* one value twice: only its first entry would match */
            if (fabs(strtod(l->items[k], NULL) - x) <= 1e-9 * (1 + fabs(x)))
                return cli_usage_error("report", "%s: '%s' and '%s' are the same value", opt,
                                       l->items[k], l->items[i]);
    }
    return 0;
}

typedef struct {
    mdsd_report_row row;
    long key[5]; /* T, n, scheme, method, dump ranks */
    size_t index;
} ranked_row;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked_row *x = a, *y = b;
    for (int k = 0; k < 5; k++)
        if (x->key[k] != y->key[k])
            return x->key[k] < y->key[k] ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Reads the CSV's rows (lines starting with '#' are comments), keeps the
 * selected ones and orders them as the lists say (else as in the file). */
static int read_rows(const report_opts *o, mdsd_report_row **rows_out, size_t *count_out, mdsd_err *err)
{
    FILE *f = fopen(o->csv, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot read '%s'", o->csv);
    char *line = NULL; /* lines of any length */
    size_t count = 0, cap = 0, lineno = 0, line_cap = 0;
    ranked_row *rr = NULL;
    int rc = MDSD_OK;
    bool header = false, intervals = false, seen[5][MAX_ITEMS] = {{false}};
    const name_list *lists[5] = {&o->temperatures, &o->drafts, &o->schemes, &o->methods, &o->dumps};
    ssize_t len;
    while (rc == MDSD_OK && (len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: a NUL byte", o->csv, lineno);
            break;
        }
        if (line[0] == '#' || line[strspn(line, " \r\n")] == '\0')
            continue;
        if (!header) {
            header = true;
            /* a file of an earlier version has no interval columns: read without them */
            if (strncmp(line, "dump,temperature,n,scheme,method,alpha,stderr,", 46) != 0 ||
                mdsd_report_csv_layout(line, &intervals, NULL) != MDSD_OK)
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: not a results CSV of mdsd table "
                               "(header must start dump,temperature,n,scheme,method,alpha,stderr,...)",
                               o->csv, lineno);
            continue;
        }
        mdsd_report_row r;
        mdsd_err why;
        if (mdsd_report_csv_parse(line, intervals, &r, &why) != MDSD_OK || !isfinite(r.temperature) || !isfinite(r.alpha)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: malformed results row", o->csv, lineno);
            break;
        }
        long key[5] = {rank_number(&o->temperatures, r.temperature), rank_number(&o->drafts, (double)r.n),
                       rank_name(&o->schemes, r.scheme),
                       strcmp(r.method, "bound") ? rank_name(&o->methods, r.method) : -2,
                       rank_name(&o->dumps, r.dump)};
        for (int k = 0; k < 5; k++) /* which entries name something in the file */
            if (key[k] >= 0 && lists[k]->count)
                seen[k][key[k]] = true;
        if (key[0] < 0 || key[1] < 0 || key[2] < 0 || key[3] == -1 || key[4] < 0)
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 256;
            ranked_row *g = realloc(rr, cap * sizeof *g);
            if (!g) {
                rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
                break;
            }
            rr = g;
        }
        rr[count] = (ranked_row){r, {key[0], key[1], key[2], key[3], key[4]}, count};
        count++;
    }
    free(line);
    fclose(f);
    if (rc == MDSD_OK && !header)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: empty file (no header)", o->csv);
    /* an entry that names nothing (a typo: -m RRS) is an error, not a table without it */
    static const char *const opts[5] = {"--temperatures", "--drafts", "--schemes", "--methods", "--dumps"};
    for (int k = 0; k < 5 && rc == MDSD_OK; k++)
        for (size_t i = 0; i < lists[k]->count && rc == MDSD_OK; i++)
            if (!seen[k][i])
                rc = mdsd_fail(err, MDSD_EINVAL, "%s: '%s' matches no row of %s%s", opts[k],
                               lists[k]->items[i], o->csv,
                               k == 3 ? " (methods are verifier names; the alpha* rows always stay)" : "");
    if (rc == MDSD_OK && count == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: no rows left after the selection", o->csv);
    mdsd_report_row *rows = rc == MDSD_OK ? malloc(count * sizeof *rows) : NULL;
    if (rc == MDSD_OK && !rows)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK) {
        qsort(rr, count, sizeof *rr, cmp_ranked);
        for (size_t i = 0; i < count; i++)
            rows[i] = rr[i].row;
        *rows_out = rows;
        *count_out = count;
    }
    free(rr);
    return rc;
}

/* --paired LIST: A:B,C:D,... with non-empty names. */
static int check_pairs(const char *list)
{
    const char *p = list;
    do {
        size_t len = strcspn(p, ","), colon = strcspn(p, ":");
        if (len == 0 || colon == 0 || colon >= len - 1 || memchr(p + colon + 1, ':', len - colon - 1))
            return cli_usage_error("report", "--paired: '%.*s' is not A:B (two column names)", (int)len, p);
        p += len;
    } while (*p++ == ',');
    return 0;
}

/* Columns of pair A:B: both names as given, else every N with columns A_n<N>
 * and B_n<N>, in the file's column order. */
static int resolve_pair(const mdsd_csv *t, const char *a, const char *b, int *ca, int *cb, size_t *n,
                        size_t cap, mdsd_err *err)
{
    int ia = mdsd_csv_col(t, a), ib = mdsd_csv_col(t, b);
    size_t before = *n;
    if (ia >= 0 && ib >= 0 && *n < cap) {
        ca[*n] = ia, cb[(*n)++] = ib;
        return MDSD_OK;
    }
    size_t la = strlen(a);
    for (size_t c = 0; c < t->n_cols && *n < cap; c++) {
        const char *h = t->header[c], *suffix = h + la;
        if (strncmp(h, a, la) || strncmp(suffix, "_n", 2) || !suffix[2] ||
            strspn(suffix + 2, "0123456789") != strlen(suffix + 2))
            continue;
        char name[512];
        snprintf(name, sizeof name, "%s%s", b, suffix);
        if ((ib = mdsd_csv_col(t, name)) >= 0)
            ca[*n] = (int)c, cb[(*n)++] = ib;
    }
    if (*n == before)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no columns %s and %s (nor %s_n<N> and %s_n<N> for one N)",
                         t->path, a, b, a, b);
    return MDSD_OK;
}

/* -o FILE, written to its temporary name: finished, then its provenance
 * sidecar finished, then both published (a failure leaves neither new). */
static int publish_with_provenance(const report_opts *o, mdsd_outfile *out, mdsd_err *err)
{
    mdsd_outfile sidecar;
    memset(&sidecar, 0, sizeof sidecar);
    mdsd_provenance pv = {.tool = "mdsd report", .argc = cli_argc(), .argv = cli_argv(),
                          .output = o->output, .source = o->csv, .n_labels = o->n_labels,
                          .labels = o->labels};
    int rc = mdsd_outfile_finish(out, err);
    if (rc == MDSD_OK)
        rc = mdsd_provenance_prepare(&pv, &sidecar, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&sidecar, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(out, err);
    mdsd_outfile_abort(&sidecar);
    mdsd_outfile_abort(out);
    return rc;
}

/* mdsd report --paired: paired differences from a per-position CSV. */
static int run_paired(const report_opts *o, const char *provenance_note, mdsd_err *err)
{
    mdsd_csv *t = NULL;
    int rc = mdsd_csv_read(o->csv, &t, err);
    if (rc != MDSD_OK)
        return rc;
    size_t cap = 4 * t->n_cols + 1, n = 0;
    int *ca = malloc(cap * sizeof *ca), *cb = malloc(cap * sizeof *cb);
    char *list = strdup(o->paired);
    if (!ca || !cb || !list)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    char *save = NULL;
    for (char *tok = rc ? NULL : strtok_r(list, ",", &save); tok && rc == MDSD_OK; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        *colon = '\0';
        rc = resolve_pair(t, tok, colon + 1, ca, cb, &n, cap, err);
    }
    mdsd_report_paired_row *rows = NULL;
    size_t count = 0;
    if (rc == MDSD_OK)
        rc = mdsd_report_paired(t, ca, cb, n, &rows, &count, err);
    if (rc == MDSD_OK) {
        mdsd_outfile out = {0};
        FILE *f = stdout;
        if (o->output && (rc = mdsd_outfile_open(&out, o->output, err)) == MDSD_OK)
            f = out.f;
        if (rc == MDSD_OK) {
            if (o->csv_out)
                mdsd_report_paired_csv(f, rows, count);
            else
                mdsd_report_paired_markdown(f, rows, count, provenance_note);
            rc = o->output ? publish_with_provenance(o, &out, err)
                 : fflush(stdout) == 0 ? MDSD_OK : mdsd_fail(err, MDSD_EIO, "error writing the table");
        }
    }
    free(rows);
    free(list);
    free(ca);
    free(cb);
    mdsd_csv_free(t);
    return rc;
}

static int parse_args(int argc, char **argv, report_opts *o)
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
    int opt;
    while ((opt = getopt_long(argc, argv, "o:t:d:s:m:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (opt) {
        case 'o': o->output = optarg; break;
        case OPT_MARKDOWN: o->latex = false; break;
        case OPT_LATEX: o->latex = true; break;
        case OPT_STANDALONE: o->standalone = true; break;
        case OPT_LAYOUT:
            bad = cli_parse_layout(optarg, "report", &o->layout);
            o->layout_given = true;
            break;
        case OPT_LABEL: o->label_prefix = optarg; break;
        case OPT_RELABEL:
            if (cli_label_add("report", optarg, o->labels, &o->n_labels))
                return -1;
            break;
        case 't': bad = split(optarg, "--temperatures", &o->temperatures) ||
                        check_numbers(&o->temperatures, "--temperatures"); break;
        case 'd': bad = split(optarg, "--drafts", &o->drafts) || check_numbers(&o->drafts, "--drafts"); break;
        case 's': bad = split(optarg, "--schemes", &o->schemes); break;
        case 'm': bad = split(optarg, "--methods", &o->methods); break;
        case OPT_DUMPS: bad = split(optarg, "--dumps", &o->dumps); break;
        case OPT_IS_TOP:
            bad = cli_parse_size(optarg, "--is-top", "report", &o->is_top);
            o->is_top_given = true;
            break;
        case OPT_PAIRED: o->paired = optarg; bad = check_pairs(optarg); break;
        case OPT_CSV: o->csv_out = true; break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: cli_usage_error("report", "unrecognised option"); return -1;
        }
        if (bad)
            return -1;
    }
    if (optind + 1 != argc) {
        cli_usage_error("report", optind == argc ? "missing RESULTS.csv" : "give exactly one RESULTS.csv");
        return -1;
    }
    if (o->standalone && !o->latex) {
        cli_usage_error("report", "--standalone needs --latex");
        return -1;
    }
    if (o->csv_out && !o->paired) {
        cli_usage_error("report", "--csv needs --paired");
        return -1;
    }
    if (o->paired && (o->latex || o->layout_given || o->label_prefix || o->is_top_given || o->n_labels ||
                      o->temperatures.count || o->drafts.count || o->schemes.count ||
                      o->methods.count || o->dumps.count)) {
        cli_usage_error("report", "--paired takes only -o, --markdown and --csv");
        return -1;
    }
    o->csv = argv[optind];
    if (o->output && !strcmp(o->output, "-"))
        o->output = NULL; /* standard output, as without -o */
    return 0;
}

static void free_lists(report_opts *o)
{
    name_list *l[] = {&o->temperatures, &o->drafts, &o->schemes, &o->methods, &o->dumps};
    for (size_t i = 0; i < 5; i++)
        free(l[i]->buf);
}

int cmd_report(int argc, char **argv)
{
    report_opts o;
    memset(&o, 0, sizeof o);
    o.layout = MDSD_REPORT_BOTH;
    int r = parse_args(argc, argv, &o);
    if (r) {
        free_lists(&o);
        return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_report_row *rows = NULL;
    size_t count = 0;
    char *prov = NULL, note[4400], side[4200];
    mdsd_provenance_path(o.csv, side, sizeof side);
    /* every file written (pathset.h): the output and its provenance against
     * the CSV read and its provenance */
    mdsd_pathset paths;
    mdsd_pathset_init(&paths);
    mdsd_pathset_input(&paths, o.csv, o.paired ? "the per-position CSV" : "the results CSV");
    mdsd_pathset_input(&paths, side, "the provenance of %s", o.csv);
    mdsd_pathset_output_family(&paths, o.output, "-o", mdsd_suffixes_provenance);
    if (!o.output)
        mdsd_pathset_stdout(&paths);
    int rc = mdsd_pathset_check(&paths, &err);
    mdsd_pathset_free(&paths);
    if (rc == MDSD_OK)
        rc = mdsd_provenance_read(o.csv, &prov, &err);
    if (rc == MDSD_OK && o.paired) {
        snprintf(note, sizeof note, "paired differences by mdsd report %s from %s; how it was made: %s",
                 MDSD_VERSION, o.csv, prov ? side : "no provenance file");
        rc = run_paired(&o, note, &err);
    } else if (rc == MDSD_OK)
        rc = read_rows(&o, &rows, &count, &err);
    /* every --label names a dump, scheme or method of the rows kept (a typo
     * would leave the name unchanged) */
    for (size_t i = 0; rc == MDSD_OK && !o.paired && i < o.n_labels; i++) {
        size_t len = cli_label_old_length(o.labels[i]);
        bool found = false;
        for (size_t k = 0; k < count && !found; k++) {
            const char *names[3] = {rows[k].dump, rows[k].scheme, rows[k].method};
            for (int f = 0; f < 3 && !found; f++)
                found = strlen(names[f]) == len && !strncmp(names[f], o.labels[i], len);
        }
        if (!found) {
            free(prov);
            free(rows);
            free_lists(&o);
            return cli_usage_error("report", "--label '%s': '%.*s' names no dump, scheme or method of the "
                                   "table", o.labels[i], (int)len, o.labels[i]);
        }
    }
    if (rc == MDSD_OK && !o.paired)
        mdsd_report_note_one_sample(stderr, "mdsd report", rows, count);
    if (rc == MDSD_OK && !o.paired) {
        mdsd_report_style style;
        mdsd_report_style_init(&style);
        style.layout = o.layout;
        style.standalone = o.standalone;
        style.label_prefix = o.label_prefix;
        style.n_labels = o.n_labels, style.labels = o.labels;
        style.is_top = o.is_top_given ? o.is_top : (size_t)mdsd_provenance_integer(prov, "is_top", 0);
        style.trials = mdsd_provenance_integer(prov, "trials", 0);
        snprintf(note, sizeof note, "rendered by mdsd report %s from %s; how it was made: %s", MDSD_VERSION,
                 o.csv, prov ? side : "no provenance file");
        style.provenance = note;
        cli_report_renderer fn = o.latex ? mdsd_report_render_latex : mdsd_report_render_markdown;
        if (!o.output) {
            rc = cli_render_report("-", fn, rows, count, &style, &err);
        } else {
            mdsd_outfile out;
            if ((rc = mdsd_outfile_open(&out, o.output, &err)) == MDSD_OK) {
                fn(out.f, rows, count, &style);
                rc = publish_with_provenance(&o, &out, &err);
            }
        }
    }
    free(prov);
    free(rows);
    free_lists(&o);
    return rc ? cli_report("report", &err) : CLI_EXIT_OK;
}
