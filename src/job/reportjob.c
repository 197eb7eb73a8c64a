/* reportjob.c - mdsd_report (mdsd/report.h), the `mdsd report` job: the
 * results CSV of `mdsd table` re-rendered as Markdown or LaTeX tables without
 * recomputing anything (its temperatures, draft counts, schemes, methods and
 * dumps selected and ordered as the lists say), or the paired differences of
 * the per-position CSV; the CSV's provenance (FILE.provenance.json) carried
 * forward into the output. The renderers are report.c's; this file is the
 * job around them, which the CLI (cmd_report.c) and Python both call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdsd/plot.h> /* mdsd_labels_check */
#include <mdsd/report.h>

#include "csv.h"
#include "opts.h"
#include "outfile.h"
#include "pathset.h"
#include "provenance.h"
#include "report.h"

#define MAX_ITEMS 64

typedef struct {
    char *items[MAX_ITEMS];
    size_t count;
    char *buf;
} name_list;

/* The options, checked, with the lists split. */
typedef struct {
    const mdsd_report_opts *o;
    const char *csv, *output;
    name_list lists[5]; /* temperatures, drafts, schemes, methods, dumps */
} job;

static const char *const list_opt[5] = {"`temperatures`", "`drafts`", "`schemes`", "`methods`", "`dumps`"};

void (mdsd_report_opts_init)(mdsd_report_opts *opts, size_t size)
{
    mdsd_report_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.is_top = -1;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

void mdsd_report_free(char *text)
{
    free(text);
}

static int split(const char *arg, const char *opt, name_list *l, mdsd_err *err)
{
    l->buf = strdup(arg);
    l->count = 0;
    if (!l->buf)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    char *save = NULL;
    for (char *tok = strtok_r(l->buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (l->count == MAX_ITEMS)
            return mdsd_fail(err, MDSD_EINVAL, "%s: more than %d entries", opt, MAX_ITEMS);
        l->items[l->count++] = tok;
    }
    for (size_t i = 0; i < l->count; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(l->items[i], l->items[k]))
                return mdsd_fail(err, MDSD_EINVAL, "%s: '%s' is given twice", opt, l->items[i]);
    return l->count ? MDSD_OK : mdsd_fail(err, MDSD_EINVAL, "%s: empty list", opt);
}

static bool same_number(double a, double x)
{
    return fabs(a - x) <= 1e-9 * (1 + fabs(x));
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
        if (same_number(strtod(l->items[i], NULL), x))
            return (long)i;
    return -1;
}

static int check_numbers(const name_list *l, const char *opt, mdsd_err *err)
{
    for (size_t i = 0; i < l->count; i++) {
        char *end;
        double x = strtod(l->items[i], &end);
        if (end == l->items[i] || *end || !isfinite(x))
            return mdsd_fail(err, MDSD_EINVAL, "%s: '%s' is not a number", opt, l->items[i]);
        for (size_t k = 0; k < i; k++) /* one value twice: only its first entry would match */
            if (same_number(strtod(l->items[k], NULL), x))
                return mdsd_fail(err, MDSD_EINVAL, "%s: '%s' and '%s' are the same value", opt,
                                 l->items[k], l->items[i]);
    }
    return MDSD_OK;
}

/* paired: A:B,C:D,... with non-empty names. */
static int check_pairs(const char *list, mdsd_err *err)
{
    const char *p = list;
    do {
        size_t len = strcspn(p, ","), colon = strcspn(p, ":");
        if (len == 0 || colon == 0 || colon >= len - 1 || memchr(p + colon + 1, ':', len - colon - 1))
            return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_PAIRED,
                                    "`paired`: '%.*s' is not A:B (two column names)",
                                    (int)len, p);
        p += len;
    } while (*p++ == ',');
    return MDSD_OK;
}

/* The options by themselves (no file read): every failure is an option refused. */
static int check_opts(job *j, mdsd_err *err)
{
    const mdsd_report_opts *o = j->o;
    const char *lists[5] = {o->temperatures, o->drafts, o->schemes, o->methods, o->dumps};
    int rc = MDSD_OK;
    for (int k = 0; k < 5 && rc == MDSD_OK; k++)
        if (lists[k]) {
            rc = split(lists[k], list_opt[k], &j->lists[k], err);
            if (rc == MDSD_OK && k < 2)
                rc = check_numbers(&j->lists[k], list_opt[k], err);
        }
    if (rc)
        return rc;
    if (o->layout != 0 && (o->layout < MDSD_REPORT_PER_SETTING || o->layout > MDSD_REPORT_BOTH))
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LAYOUT,
                                "`layout`: %d is not an mdsd_report_layout (1, 2, 3)",
                                o->layout);
    if (o->is_top < -1)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_IS_TOP,
                                "`is_top`: %lld is not a count (or -1: from the "
                                "provenance)", (long long)o->is_top);
    if ((rc = mdsd_labels_check(o->n_labels, o->labels, err))) /* the one form check (labels.c) */
        return rc;
    if (o->paired && (rc = check_pairs(o->paired, err)))
        return rc;
    if (o->n_words && !o->words)
        return mdsd_fail(err, MDSD_EINVAL, "report: %zu command words and none given (NULL)", o->n_words);
    if (o->standalone && !o->latex)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_STANDALONE, "`standalone` needs `latex`");
    if (o->csv && !o->paired)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_CSV, "`csv` needs `paired`");
    if (o->paired && (o->latex || o->layout || o->label_prefix || o->is_top >= 0 || o->n_labels ||
                      o->temperatures || o->drafts || o->schemes || o->methods || o->dumps))
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_PAIRED,
                                "`paired` takes only `output`, `markdown` and `csv`");
    return MDSD_OK;
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
static int read_rows(const job *j, mdsd_report_row **rows_out, size_t *count_out, mdsd_err *err)
{
    FILE *f = fopen(j->csv, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot read '%s'", j->csv);
    char *line = NULL; /* lines of any length */
    size_t count = 0, cap = 0, lineno = 0, line_cap = 0;
    ranked_row *rr = NULL;
    int rc = MDSD_OK;
    bool header = false, intervals = false, seen[5][MAX_ITEMS] = {{false}};
    const name_list *lists = j->lists;
    ssize_t len;
    while (rc == MDSD_OK && (len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: a NUL byte", j->csv, lineno);
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
                               j->csv, lineno);
            continue;
        }
        mdsd_report_row r;
        mdsd_err why;
        if (mdsd_report_csv_parse(line, intervals, &r, &why) != MDSD_OK || !isfinite(r.temperature) ||
            !isfinite(r.alpha)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: malformed results row", j->csv, lineno);
            break;
        }
        long key[5] = {rank_number(&lists[0], r.temperature), rank_number(&lists[1], (double)r.n),
                       rank_name(&lists[2], r.scheme),
                       strcmp(r.method, "bound") ? rank_name(&lists[3], r.method) : -2,
                       rank_name(&lists[4], r.dump)};
        for (int k = 0; k < 5; k++) /* which entries name something in the file */
            if (key[k] >= 0 && lists[k].count)
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
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: empty file (no header)", j->csv);
    /* an entry that names nothing (a typo: -m RRS) is an error, not a table without it */
    for (int k = 0; k < 5 && rc == MDSD_OK; k++)
        for (size_t i = 0; i < lists[k].count && rc == MDSD_OK; i++)
            if (!seen[k][i])
                rc = mdsd_fail(err, MDSD_EINVAL, "%s: '%s' matches no row of %s%s", list_opt[k],
                               lists[k].items[i], j->csv,
                               k == 3 ? " (methods are verifier names; the alpha* rows always stay)" : "");
    if (rc == MDSD_OK && count == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: no rows left after the selection", j->csv);
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

/* Paired differences from a per-position CSV, rendered to f. */
static int render_paired(const job *j, FILE *f, const char *note, mdsd_err *err)
{
    mdsd_csv *t = NULL;
    int rc = mdsd_csv_read(j->csv, &t, err);
    if (rc != MDSD_OK)
        return rc;
    size_t cap = 4 * t->n_cols + 1, n = 0;
    int *ca = malloc(cap * sizeof *ca), *cb = malloc(cap * sizeof *cb);
    char *list = strdup(j->o->paired);
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
    if (rc == MDSD_OK && j->o->csv)
        mdsd_report_paired_csv(f, rows, count);
    else if (rc == MDSD_OK)
        mdsd_report_paired_markdown(f, rows, count, note);
    free(rows);
    free(list);
    free(ca);
    free(cb);
    mdsd_csv_free(t);
    return rc;
}

/* The tables of the results CSV, rendered to f. */
static int render_tables(const job *j, FILE *f, const char *prov, const char *note, int *option_error,
                         mdsd_err *err)
{
    const mdsd_report_opts *o = j->o;
    mdsd_report_row *rows = NULL;
    size_t count = 0;
    int rc = read_rows(j, &rows, &count, err);
    /* every label names a dump, scheme or method of the rows kept (a typo
     * would leave the name unchanged) */
    for (size_t i = 0; rc == MDSD_OK && i < o->n_labels; i++) {
        size_t len = strcspn(o->labels[i], "=");
        bool found = false;
        for (size_t k = 0; k < count && !found; k++) {
            const char *names[3] = {rows[k].dump, rows[k].scheme, rows[k].method};
            for (int c = 0; c < 3 && !found; c++)
                found = strlen(names[c]) == len && !strncmp(names[c], o->labels[i], len);
        }
        if (!found) {
            *option_error = 1;
            rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS,
                                  "`labels '%s'`: '%.*s' names no dump, scheme or method of "
                                  "the table", o->labels[i], (int)len, o->labels[i]);
        }
    }
    if (rc == MDSD_OK) {
        mdsd_report_notes(o->on_note, o->note_ctx, rows, count);
        mdsd_report_style style;
        mdsd_report_style_init(&style);
        style.layout = o->layout ? (mdsd_report_layout)o->layout : MDSD_REPORT_BOTH;
        style.standalone = o->standalone != 0;
        style.label_prefix = o->label_prefix;
        style.n_labels = o->n_labels, style.labels = o->labels;
        style.is_top = o->is_top >= 0 ? (size_t)o->is_top : (size_t)mdsd_provenance_integer(prov, "is_top", 0);
        style.trials = mdsd_provenance_integer(prov, "trials", 0);
        style.provenance = note;
        (o->latex ? mdsd_report_render_latex : mdsd_report_render_markdown)(f, rows, count, &style);
    }
    free(rows);
    return rc;
}

/* output, written to its temporary name: finished, then its provenance
 * sidecar finished, then both published (a failure leaves neither new). */
static int publish(const job *j, const char *text, size_t len, mdsd_err *err)
{
    const mdsd_report_opts *o = j->o;
    mdsd_outfile out, sidecar;
    memset(&sidecar, 0, sizeof sidecar);
    int rc = mdsd_outfile_open(&out, j->output, err);
    if (rc)
        return rc;
    if (fwrite(text, 1, len, out.f) != len)
        rc = mdsd_fail(err, MDSD_EIO, "error writing '%s'", j->output);
    mdsd_provenance pv = {.tool = o->tool ? o->tool : "mdsd report", .argc = (int)o->n_words,
                          .argv = (char *const *)o->words, .output = j->output, .source = j->csv,
                          .n_labels = o->n_labels, .labels = o->labels};
    if (rc == MDSD_OK)
        rc = mdsd_outfile_finish(&out, err);
    if (rc == MDSD_OK)
        rc = mdsd_provenance_prepare(&pv, &sidecar, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&sidecar, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&out, err);
    mdsd_outfile_abort(&sidecar);
    mdsd_outfile_abort(&out);
    return rc;
}

/* Every file read and written (pathset.h): the output and its provenance
 * against the CSV read and its provenance. */
static int check_paths(const job *j, const char *side, mdsd_err *err)
{
    mdsd_pathset paths;
    mdsd_pathset_init(&paths);
    mdsd_pathset_input(&paths, j->csv, j->o->paired ? "the per-position CSV" : "the results CSV");
    mdsd_pathset_input(&paths, side, "the provenance of %s", j->csv);
    mdsd_pathset_output_family(&paths, j->output, "`output`", mdsd_suffixes_provenance);
    if (!j->output && j->o->to_stdout)
        mdsd_pathset_stdout(&paths);
    int rc = mdsd_pathset_check(&paths, err);
    mdsd_pathset_free(&paths);
    return rc;
}

mdsd_status mdsd_report(const char *results, const char *output, const mdsd_report_opts *opts,
                        char **text, int *option_error, mdsd_err *err)
{
    int usage = 0;
    if (option_error)
        *option_error = 0;
    if (text)
        *text = NULL;
    if (opts && mdsd_opts_check(opts->size, sizeof *opts, "mdsd_report_opts", NULL, err)) {
        if (option_error)
            *option_error = 1;
        return MDSD_EINVAL;
    }
    mdsd_report_opts defaults;
    mdsd_report_opts_init(&defaults);
    job j = {.o = opts ? opts : &defaults, .csv = results, .output = output};
    int rc = MDSD_OK;
    if (!results)
        rc = mdsd_fail(err, MDSD_EINVAL, "report: no results CSV given (NULL)");
    else if (!output && !text)
        rc = mdsd_fail(err, MDSD_EINVAL, "report: neither an output file nor text to fill (both NULL)");
    else if ((rc = check_opts(&j, err)) != MDSD_OK)
        usage = 1;
    char *prov = NULL, note[4400], side[4200];
    if (rc == MDSD_OK) {
        mdsd_provenance_path(results, side, sizeof side);
        rc = check_paths(&j, side, err);
    }
    if (rc == MDSD_OK)
        rc = mdsd_provenance_read(results, &prov, err);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = rc == MDSD_OK ? open_memstream(&buf, &len) : NULL;
    if (rc == MDSD_OK && !f)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK) {
        snprintf(note, sizeof note, "%s by mdsd report %s from %s; how it was made: %s",
                 j.o->paired ? "paired differences" : "rendered", MDSD_VERSION, results,
                 prov ? side : "no provenance file");
        rc = j.o->paired ? render_paired(&j, f, note, err) : render_tables(&j, f, prov, note, &usage, err);
    }
    if (f && fclose(f) != 0 && rc == MDSD_OK)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK && output)
        rc = publish(&j, buf, len, err);
    if (rc == MDSD_OK && text) {
        *text = buf;
        buf = NULL;
    }
    free(buf);
    free(prov);
    for (int k = 0; k < 5; k++)
        free(j.lists[k].buf);
    if (option_error)
        *option_error = rc != MDSD_OK && usage;
    return (mdsd_status)rc;
}
