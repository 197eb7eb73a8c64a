#include "report.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "cluster.h"
#include "csv.h"
#include "outfile.h"

/* Gaps this small are solver tolerance, not a difference: alpha* and the
 * closed-form rates are exact to ~1e-12, the LP-based verifiers (is, otm) to
 * GLPK's 1e-7; a verifier that attains alpha* shows "(=)" and no marker. */
#define GAP_ROUNDING 1e-7

/* A t test with C - 1 degrees of freedom for a standard error clustered over C
 * samples (a normal law would overstate the evidence with few clusters). One
 * sample: the s.e. treats positions as independent, which they are not (tokens
 * of one response are correlated), so no stars at all. */
const char *mdsd_report_significance(double gap, double gap_se, size_t samples)
{
    if (!isfinite(gap) || !(gap_se > 0) || fabs(gap) < GAP_ROUNDING || samples < 2)
        return "";
    double p = 2 * gsl_cdf_tdist_Q(fabs(gap) / gap_se, (double)(samples - 1));
    return p < 0.001 ? "***" : p < 0.01 ? "**" : p < 0.05 ? "*" : "";
}

void mdsd_report_notes(void (*fn)(const char *message, void *ctx), void *ctx,
                       const mdsd_report_row *rows, size_t count)
{
    for (size_t i = 0; fn && i < count; i++) {
        bool first = rows[i].samples < 2;
        for (size_t k = 0; k < i && first; k++)
            first = !(rows[k].samples < 2 && !strcmp(rows[k].dump, rows[i].dump));
        if (!first)
            continue;
        char msg[512];
        snprintf(msg, sizeof msg, "note: %s has one sample: its standard errors treat the positions "
                 "as independent (no clustering is possible) and are likely too small; no "
                 "significance stars for it", rows[i].dump);
        fn(msg, ctx);
    }
}

typedef struct {
    FILE *f;
    const char *prog;
} note_file;

static void note_to_file(const char *message, void *ctx)
{
    const note_file *n = ctx;
    fprintf(n->f, "%s: %s\n", n->prog, message);
}

void mdsd_report_note_one_sample(FILE *err, const char *prog, const mdsd_report_row *rows, size_t count)
{
    note_file n = {err, prog};
    mdsd_report_notes(note_to_file, &n, rows, count);
}

#define CSV_HEAD "dump,temperature,n,scheme,method,alpha,stderr,gap,gap_stderr,significance," \
                 "positions,samples,exact"
#define CSV_INTERVALS ",alpha_low,alpha_low_stderr,alpha_high,alpha_high_stderr"

void mdsd_report_csv_header(FILE *out, size_t max_drafts)
{
    fputs(CSV_HEAD CSV_INTERVALS, out);
    for (size_t j = 1; j <= max_drafts; j++)
        fprintf(out, ",per_draft_%zu", j);
    fputc('\n', out);
}

static void csv_number(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, ",%.10g", x);
    else
        fputc(',', out);
}

void mdsd_report_csv_row(FILE *out, const mdsd_report_row *r, size_t max_drafts)
{
    mdsd_csv_write_field(out, r->dump);
    fprintf(out, ",%.10g,%zu,%s,%s", r->temperature, r->n, r->scheme, r->method);
    csv_number(out, r->alpha);
    csv_number(out, r->se);
    csv_number(out, r->gap);
    csv_number(out, r->gap_se);
    fprintf(out, ",%s,%zu,%zu,%d", mdsd_report_significance(r->gap, r->gap_se, r->samples),
            r->positions, r->samples, r->exact ? 1 : 0);
    csv_number(out, r->alpha_low);
    csv_number(out, r->alpha_low_se);
    csv_number(out, r->alpha_high);
    csv_number(out, r->alpha_high_se);
    for (size_t j = 0; j < max_drafts; j++)
        csv_number(out, j < r->n_per_draft ? r->per_draft[j] : NAN);
    fputc('\n', out);
}

static double parse_number(const char *s)
{
    return *s ? strtod(s, NULL) : NAN;
}

int mdsd_report_csv_layout(const char *header, bool *intervals, mdsd_err *err)
{
    size_t n = strlen(CSV_HEAD);
    if (strncmp(header, CSV_HEAD, n) != 0)
        return mdsd_fail(err, MDSD_EFORMAT, "not a results CSV header (expected '%s...')", CSV_HEAD);
    *intervals = strncmp(header + n, CSV_INTERVALS, strlen(CSV_INTERVALS)) == 0;
    return MDSD_OK;
}

int mdsd_report_csv_parse(const char *line, bool intervals, mdsd_report_row *r, mdsd_err *err)
{
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", line);
    buf[strcspn(buf, "\r\n")] = '\0';
    char **field;
    size_t k;
    int rc = mdsd_csv_split(buf, &field, &k, err);
    if (rc)
        return rc;
    size_t first_draft = intervals ? 17 : 13;
    if (k < first_draft || k > first_draft + MDSD_REPORT_MAX_DRAFTS || strlen(field[0]) >= sizeof r->dump ||
        strlen(field[3]) >= sizeof r->scheme || strlen(field[4]) >= sizeof r->method) {
        mdsd_csv_fields_free(field, k);
        return mdsd_fail(err, MDSD_EFORMAT, "malformed results line: '%s'", buf);
    }
    memset(r, 0, sizeof *r);
    strcpy(r->dump, field[0]);
    r->temperature = parse_number(field[1]);
    r->n = (size_t)strtoul(field[2], NULL, 10);
    strcpy(r->scheme, field[3]);
    strcpy(r->method, field[4]);
    r->alpha = parse_number(field[5]);
    r->se = parse_number(field[6]);
    r->gap = parse_number(field[7]);
    r->gap_se = parse_number(field[8]);
    r->positions = (size_t)strtoul(field[10], NULL, 10);
    r->samples = (size_t)strtoul(field[11], NULL, 10);
    r->exact = atoi(field[12]) != 0;
    r->alpha_low = intervals ? parse_number(field[13]) : NAN;
    r->alpha_low_se = intervals ? parse_number(field[14]) : NAN;
    r->alpha_high = intervals ? parse_number(field[15]) : NAN;
    r->alpha_high_se = intervals ? parse_number(field[16]) : NAN;
    for (size_t j = first_draft; j < k && isfinite(parse_number(field[j])); j++)
        r->per_draft[r->n_per_draft++] = parse_number(field[j]);
    mdsd_csv_fields_free(field, k);
    return MDSD_OK;
}

/* ---- rendering ------------------------------------------------------------ */

typedef struct {
    const char *labels[256];
    size_t count;
} label_set;

static size_t label_index(label_set *set, const char *label)
{
    for (size_t i = 0; i < set->count; i++)
        if (!strcmp(set->labels[i], label))
            return i;
    if (set->count < 256)
        set->labels[set->count++] = label;
    return set->count - 1;
}

typedef enum { STYLE_MARKDOWN, STYLE_LATEX } style;

void mdsd_report_style_init(mdsd_report_style *s)
{
    memset(s, 0, sizeof *s);
    s->layout = MDSD_REPORT_PER_SETTING;
}

const char *mdsd_report_relabel(const char *const *labels, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(labels[i], name, len) && labels[i][len] == '=')
            return labels[i] + len + 1;
    return name;
}

mdsd_status mdsd_report_layout_parse(const char *name, mdsd_report_layout *layout, mdsd_err *err)
{
    if (name && !strcmp(name, "per-setting"))
        *layout = MDSD_REPORT_PER_SETTING;
    else if (name && !strcmp(name, "combined"))
        *layout = MDSD_REPORT_COMBINED;
    else if (name && !strcmp(name, "both"))
        *layout = MDSD_REPORT_BOTH;
    else
        return (mdsd_status)mdsd_fail(err, MDSD_EINVAL, "'%s' is not per-setting, combined or both",
                                      name ? name : "(null)");
    return MDSD_OK;
}

void mdsd_report_latex_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\\': fputs("\\textbackslash{}", out); break;
        case '~': fputs("\\textasciitilde{}", out); break;
        case '^': fputs("\\textasciicircum{}", out); break;
        case '&': case '%': case '$': case '#': case '_': case '{': case '}':
            fputc('\\', out);
            fputc(*s, out);
            break;
        case '<': fputs("\\textless{}", out); break;
        case '>': fputs("\\textgreater{}", out); break;
        case '|': fputs("\\textbar{}", out); break;
        default: fputc(*s, out);
        }
    }
}

/* Markdown table text: '|' would end the cell, '\' and '*', '_', '`' would
 * start escapes or emphasis. */
static void markdown_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (strchr("|\\*_`[]<>", *s))
            fputc('\\', out);
        fputc(*s, out);
    }
}

static void text(FILE *out, const char *s, style st)
{
    if (st == STYLE_LATEX)
        mdsd_report_latex_escape(out, s);
    else
        markdown_escape(out, s);
}

/* The marks a cell carries (bit 1: Monte Carlo, bit 2: truncated is, bit 3:
 * one sample, s.e. over positions as if independent). */
enum { MARK_MC = 1, MARK_IS_TOP = 2, MARK_ONE_SAMPLE = 4, MARK_INTERVAL = 8 };

/* A cell over truncated rows: its interval differs from the point. */
static bool has_interval(const mdsd_report_row *r)
{
    return isfinite(r->alpha_low) && isfinite(r->alpha_high) && r->alpha_low <= r->alpha &&
           r->alpha <= r->alpha_high && (r->alpha_low < r->alpha || r->alpha_high > r->alpha);
}

static int cell_marks(const mdsd_report_row *r, const mdsd_report_style *ss)
{
    int m = 0;
    if (!r->exact)
        m |= MARK_MC;
    if (ss->is_top > 0 && !strcmp(r->method, "is"))
        m |= MARK_IS_TOP;
    if (r->samples < 2)
        m |= MARK_ONE_SAMPLE;
    if (has_interval(r))
        m |= MARK_INTERVAL;
    return m;
}

static void marks(FILE *out, int m, style st)
{
    if (st == STYLE_LATEX) {
        if (m & (MARK_MC | MARK_IS_TOP | MARK_ONE_SAMPLE)) /* the interval has no glyph */
            fprintf(out, "$^{%s%s%s}$", m & MARK_MC ? "\\dagger" : "",
                    m & MARK_IS_TOP ? "\\ddagger" : "", m & MARK_ONE_SAMPLE ? "\\S" : "");
    } else {
        fprintf(out, "%s%s%s", m & MARK_MC ? "†" : "", m & MARK_IS_TOP ? "‡" : "",
                m & MARK_ONE_SAMPLE ? "§" : "");
    }
}

static void cell(FILE *out, const mdsd_report_row *r, const mdsd_report_style *ss, style st)
{
    const char *pm = st == STYLE_LATEX ? " $\\pm$ " : " ± ";
    fprintf(out, "%.4f%s%.4f", r->alpha, pm, r->se);
    if (has_interval(r))
        fprintf(out, " [%.4f, %.4f]", r->alpha_low, r->alpha_high);
    marks(out, cell_marks(r, ss), st);
    if (!isfinite(r->gap))
        return;
    if (fabs(r->gap) < GAP_ROUNDING) {
        fputs(" (=)", out);
        return;
    }
    const char *arrow = r->gap < 0 ? (st == STYLE_LATEX ? "$\\downarrow$" : "↓")
                                   : (st == STYLE_LATEX ? "$\\uparrow$" : "↑");
    const char *sig = mdsd_report_significance(r->gap, r->gap_se, r->samples);
    if (st == STYLE_LATEX && *sig)
        fprintf(out, " (%s%.4f$^{%s}$)", arrow, fabs(r->gap), sig);
    else
        fprintf(out, " (%s%.4f%s)", arrow, fabs(r->gap), sig);
}

static bool same_setting(const mdsd_report_row *r, double T, size_t n)
{
    return r->temperature == T && r->n == n;
}

static const mdsd_report_row *find(const mdsd_report_row *rows, size_t count, double T, size_t n,
                                   const char *scheme, const char *method, const char *dump)
{
    for (size_t i = 0; i < count; i++)
        if (same_setting(&rows[i], T, n) && !strcmp(rows[i].scheme, scheme) &&
            !strcmp(rows[i].method, method) && !strcmp(rows[i].dump, dump))
            return &rows[i];
    return NULL;
}

/* Index of the first row of (T, n) with rows[i]'s scheme. */
static size_t first_of_scheme(const mdsd_report_row *rows, size_t i, double T, size_t n)
{
    for (size_t k = 0; k < i; k++)
        if (same_setting(&rows[k], T, n) && !strcmp(rows[k].scheme, rows[i].scheme))
            return k;
    return i;
}

/* Index of the first row of (T, n) with rows[i]'s scheme and method. */
static size_t first_of_method(const mdsd_report_row *rows, size_t i, double T, size_t n)
{
    for (size_t k = 0; k < i; k++)
        if (same_setting(&rows[k], T, n) && !strcmp(rows[k].scheme, rows[i].scheme) &&
            !strcmp(rows[k].method, rows[i].method))
            return k;
    return i;
}

/* What one rendering call needs. */
typedef struct {
    FILE *out;
    const mdsd_report_row *rows;
    size_t count;
    label_set dumps;
    const mdsd_report_style *ss;
    style st;
    int used_marks; /* marks printed in the current table (for its legend) */
} renderer;

/* One table row: (scheme, method) across the dumps; nothing if no dump has it. */
static void render_row(renderer *R, double T, size_t n, const char *scheme, const char *method_name)
{
    FILE *out = R->out;
    const mdsd_report_row *any = NULL;
    for (size_t d = 0; d < R->dumps.count && !any; d++)
        any = find(R->rows, R->count, T, n, scheme, method_name, R->dumps.labels[d]);
    if (!any)
        return;
    style st = R->st;
    fputs(st == STYLE_LATEX ? "" : "| ", out);
    /* the names shown: --label's (the rows keep the CSV's) */
    text(out, mdsd_report_relabel(R->ss->labels, R->ss->n_labels, scheme), st);
    fputs(st == STYLE_LATEX ? " & " : " | ", out);
    if (!strcmp(method_name, "bound"))
        fputs(st == STYLE_LATEX ? "$\\alpha^*$" : "α*", out);
    else
        text(out, mdsd_report_relabel(R->ss->labels, R->ss->n_labels, method_name), st);
    for (size_t d = 0; d < R->dumps.count; d++) {
        fputs(st == STYLE_LATEX ? " & " : " | ", out);
        const mdsd_report_row *c = find(R->rows, R->count, T, n, scheme, method_name, R->dumps.labels[d]);
        if (c) {
            cell(out, c, R->ss, st);
            R->used_marks |= cell_marks(c, R->ss);
        } else {
            fputs(st == STYLE_LATEX ? "--" : "–", out);
        }
    }
    fputs(st == STYLE_LATEX ? " \\\\\n" : " |\n", out);
}

/* The rows of one setting: schemes in order of first appearance; each: its
 * alpha* row, then its methods. */
static void render_setting_rows(renderer *R, double T, size_t n)
{
    const mdsd_report_row *rows = R->rows;
    for (size_t i = 0; i < R->count; i++) {
        const mdsd_report_row *r = &rows[i];
        if (!same_setting(r, T, n) || first_of_scheme(rows, i, T, n) != i)
            continue;
        render_row(R, T, n, r->scheme, "bound");
        for (size_t k = i; k < R->count; k++)
            if (same_setting(&rows[k], T, n) && !strcmp(rows[k].scheme, r->scheme) &&
                strcmp(rows[k].method, "bound") && first_of_method(rows, k, T, n) == k)
                render_row(R, T, n, r->scheme, rows[k].method);
    }
}

/* A LaTeX label: the prefix with characters LaTeX labels dislike replaced. */
static void latex_label(FILE *out, const char *prefix, const char *suffix)
{
    fputs("\\label{", out);
    for (const char *s = prefix && *prefix ? prefix : "tab:mdsd"; *s; s++)
        fputc(isalnum((unsigned char)*s) || strchr(":-.+/", *s) ? *s : '-', out);
    fprintf(out, "%s}\n", suffix);
}

/* LaTeX: the column specification "{llc..c}\n". */
static void latex_spec(renderer *R)
{
    fputs("{ll", R->out);
    for (size_t d = 0; d < R->dumps.count; d++)
        fputc('c', R->out);
    fputs("}\n", R->out);
}

/* LaTeX: "\toprule\nscheme & method & DUMPS \\\n\midrule\n". */
static void latex_head(renderer *R)
{
    FILE *out = R->out;
    fputs("\\toprule\nscheme & method", out);
    for (size_t d = 0; d < R->dumps.count; d++) {
        fputs(" & ", out);
        mdsd_report_latex_escape(out, mdsd_report_relabel(R->ss->labels, R->ss->n_labels, R->dumps.labels[d]));
    }
    fputs(" \\\\\n\\midrule\n", out);
}

/* The tabular is shrunk (never enlarged) to fit the page: to \linewidth when wider, and
 * to 0.8\textheight (room for the caption and legend) when taller (graphicx: \width and
 * \totalheight are the box's natural size). A many-column or many-setting table stays on
 * the page, a float LaTeX can place in one- and two-column documents alike. */
static const char fit_open[] =
    "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"
    "\\resizebox*{!}{\\ifdim\\totalheight>0.8\\textheight 0.8\\textheight\\else\\totalheight\\fi}{%\n";
static const char fit_close[] = "}}\n";

static void header_row(renderer *R)
{
    FILE *out = R->out;
    if (R->st == STYLE_LATEX) {
        fputs(fit_open, out);
        fputs("\\begin{tabular}", out);
        latex_spec(R);
        latex_head(R);
        return;
    }
    fputs("| scheme | method", out);
    for (size_t d = 0; d < R->dumps.count; d++) {
        fputs(" | ", out);
        markdown_escape(out, mdsd_report_relabel(R->ss->labels, R->ss->n_labels, R->dumps.labels[d]));
    }
    fputs(" |\n|---|---", out);
    for (size_t d = 0; d < R->dumps.count; d++)
        fputs("|---", out);
    fputs("|\n", out);
}

/* The legend of the marks used in the table just ended. */
static void legend(renderer *R)
{
    FILE *out = R->out;
    int m = R->used_marks;
    if (!m)
        return;
    char trials[64] = "";
    if (R->ss->trials)
        snprintf(trials, sizeof trials, ", %llu trials per position", R->ss->trials);
    if (R->st == STYLE_LATEX) {
        fputs("\\par\\smallskip{\\footnotesize\n", out);
        if (m & MARK_MC)
            fprintf(out, "$^\\dagger$~Monte-Carlo estimate%s; the rest are exact.\n", trials);
        if (m & MARK_IS_TOP)
            fprintf(out, "%s$^\\ddagger$~\\texttt{is} with weights optimised only among "
                         "the top %zu tokens (\\texttt{is\\_top} = %zu), not over the "
                         "whole vocabulary.\n", m & MARK_MC ? "\\\\\n" : "", R->ss->is_top, R->ss->is_top);
        if (m & MARK_ONE_SAMPLE)
            fprintf(out, "%s$^\\S$~one sample: s.e.\\ over positions as if independent (no "
                         "clustering possible), likely too small; no significance stars.\n",
                    m & (MARK_MC | MARK_IS_TOP) ? "\\\\\n" : "");
        if (m & MARK_INTERVAL)
            fprintf(out, "%s[lo, hi]: means over the positions of the certified interval of $\\alpha^*$ "
                         "over every completion of the truncated top-$k$ rows (MATH.md \\S 2.9); the point value is the "
                         "plug-in completion (missing mass spread evenly).\n",
                    m & (MARK_MC | MARK_IS_TOP | MARK_ONE_SAMPLE) ? "\\\\\n" : "");
        fputs("\\par}\n", out);
    } else {
        if (m & MARK_MC)
            fprintf(out, "\n† Monte-Carlo estimate%s; the rest are exact.\n", trials);
        if (m & MARK_IS_TOP)
            fprintf(out, "%s‡ `is` with weights optimised only among the top %zu tokens (`is_top` = %zu), "
                         "not over the whole vocabulary.\n", m & MARK_MC ? "" : "\n",
                    R->ss->is_top, R->ss->is_top);
        if (m & MARK_ONE_SAMPLE)
            fprintf(out, "%s§ one sample: s.e. over positions as if independent (no clustering "
                         "possible), likely too small; no significance stars.\n",
                    m & (MARK_MC | MARK_IS_TOP) ? "" : "\n");
        if (m & MARK_INTERVAL)
            fprintf(out, "%s[lo, hi]: means over the positions of the certified interval of α* over "
                         "every completion of the truncated top-k rows (MATH.md §2.9); the point value is the plug-in "
                         "completion (missing mass spread evenly).\n",
                    m & (MARK_MC | MARK_IS_TOP | MARK_ONE_SAMPLE) ? "" : "\n");
    }
    R->used_marks = 0;
}

static const char *caption_text(style st)
{
    return st == STYLE_LATEX
               ? "mean $\\pm$ s.e.\\ clustered by sample; arrows: gap to the scheme's $\\alpha^*$, "
                 "$^{*}p<0.05$, $^{**}p<0.01$, $^{***}p<0.001$ (two-sided $t$ test, samples $-$ 1 "
                 "degrees of freedom); (=): attains $\\alpha^*$"
               : "α ± s.e. clustered by sample; (↓Δ) = gap to the scheme's α*, * p<0.05, "
                 "** p<0.01, *** p<0.001 (two-sided t test, samples − 1 degrees of freedom); "
                 "(=) attains α*";
}

static void render_setting(renderer *R, double T, size_t n)
{
    FILE *out = R->out;
    if (R->st == STYLE_LATEX) {
        fprintf(out, "\\begin{table}[t]\n\\centering\n\\caption{Acceptance rate, $T = %g$, "
                     "$n = %zu$ drafts (%s).}\n", T, n, caption_text(STYLE_LATEX));
        char suffix[64];
        snprintf(suffix, sizeof suffix, "-T%g-n%zu", T, n);
        latex_label(out, R->ss->label_prefix, suffix);
    } else {
        fprintf(out, "\n**T = %g, n = %zu** (%s)\n\n", T, n, caption_text(STYLE_MARKDOWN));
    }
    header_row(R);
    render_setting_rows(R, T, n);
    if (R->st == STYLE_LATEX)
        fprintf(out, "\\bottomrule\n\\end{tabular}%s", fit_close);
    legend(R);
    if (R->st == STYLE_LATEX)
        fputs("\\end{table}\n\n", out);
}

static bool first_of_setting(const mdsd_report_row *rows, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (same_setting(&rows[k], rows[i].temperature, rows[i].n))
            return false;
    return true;
}

static void render_combined(renderer *R)
{
    FILE *out = R->out;
    size_t cols = 2 + R->dumps.count;
    if (R->st == STYLE_LATEX) {
        fprintf(out, "\\begin{table}[t]\n\\centering\n\\caption{Acceptance rate by temperature $T$ "
                     "and number of drafts $n$ (%s).}\n", caption_text(STYLE_LATEX));
        latex_label(out, R->ss->label_prefix, "-all");
    } else {
        fprintf(out, "\n**All settings** (%s)\n\n", caption_text(STYLE_MARKDOWN));
    }
    header_row(R);
    bool first = true;
    for (size_t i = 0; i < R->count; i++) {
        if (!first_of_setting(R->rows, i))
            continue;
        double T = R->rows[i].temperature;
        size_t n = R->rows[i].n;
        if (R->st == STYLE_LATEX)
            fprintf(out, "%s\\multicolumn{%zu}{l}{$T = %g$, $n = %zu$} \\\\\n", first ? "" : "\\midrule\n",
                    cols, T, n);
        else {
            fprintf(out, "| **T = %g, n = %zu** |", T, n);
            for (size_t c = 1; c < cols; c++)
                fputs(" |", out);
            fputc('\n', out);
        }
        first = false;
        render_setting_rows(R, T, n);
    }
    if (R->st == STYLE_LATEX)
        fprintf(out, "\\bottomrule\n\\end{tabular}%s", fit_close);
    legend(R);
    if (R->st == STYLE_LATEX)
        fputs("\\end{table}\n\n", out);
}

static size_t setting_count(const mdsd_report_row *rows, size_t count)
{
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        k += first_of_setting(rows, i);
    return k;
}

static void render(FILE *out, const mdsd_report_row *rows, size_t count, style st,
                   const mdsd_report_style *ss)
{
    renderer R = {out, rows, count, {{0}, 0}, ss, st, 0};
    for (size_t i = 0; i < count; i++)
        label_index(&R.dumps, rows[i].dump);
    if (st == STYLE_LATEX && ss->provenance)
        fprintf(out, "%% %s\n", ss->provenance);
    else if (ss->provenance)
        fprintf(out, "<!-- %s -->\n", ss->provenance);
    if (st == STYLE_LATEX && ss->standalone)
        fputs("\\documentclass{article}\n\\usepackage{" MDSD_REPORT_LATEX_PACKAGES "}\n"
              "\\begin{document}\n\n", out);
    else if (st == STYLE_LATEX)
        mdsd_report_latex_preamble(out);
    bool per_setting = ss->layout & MDSD_REPORT_PER_SETTING;
    /* one setting: the combined table would repeat the per-setting one */
    bool combined = (ss->layout & MDSD_REPORT_COMBINED) && (!per_setting || setting_count(rows, count) > 1);
    if (per_setting)
        for (size_t i = 0; i < count; i++)
            if (first_of_setting(rows, i))
                render_setting(&R, rows[i].temperature, rows[i].n);
    if (combined)
        render_combined(&R);
    if (st == STYLE_LATEX && ss->standalone)
        fputs("\\end{document}\n", out);
}

void mdsd_report_latex_preamble(FILE *out)
{
    fputs("% needs \\usepackage{" MDSD_REPORT_LATEX_PACKAGES "}\n", out);
}

void mdsd_report_latex_table_open(FILE *out, const char *caption, const char *label_prefix,
                                  const char *label_suffix, const char *spec)
{
    fprintf(out, "\\begin{table}[t]\n\\centering\n\\caption{%s}\n", caption);
    latex_label(out, label_prefix, label_suffix);
    fprintf(out, "%s\\begin{tabular}{%s}\n\\toprule\n", fit_open, spec);
}

void mdsd_report_latex_table_close(FILE *out)
{
    fprintf(out, "\\bottomrule\n\\end{tabular}%s\\end{table}\n", fit_close);
}

void mdsd_report_render_markdown(FILE *out, const mdsd_report_row *rows, size_t count,
                                 const mdsd_report_style *style)
{
    render(out, rows, count, STYLE_MARKDOWN, style);
}

void mdsd_report_render_latex(FILE *out, const mdsd_report_row *rows, size_t count,
                              const mdsd_report_style *style)
{
    render(out, rows, count, STYLE_LATEX, style);
}

void mdsd_report_markdown(FILE *out, const mdsd_report_row *rows, size_t count)
{
    mdsd_report_style s;
    mdsd_report_style_init(&s);
    render(out, rows, count, STYLE_MARKDOWN, &s);
}

void mdsd_report_latex(FILE *out, const mdsd_report_row *rows, size_t count)
{
    mdsd_report_style s;
    mdsd_report_style_init(&s);
    render(out, rows, count, STYLE_LATEX, &s);
}

int mdsd_report_render_file(const char *path, mdsd_report_renderer fn, const mdsd_report_row *rows,
                            size_t count, const mdsd_report_style *style, mdsd_err *err)
{
    mdsd_outfile out;
    int rc = mdsd_outfile_open(&out, path, err);
    if (rc)
        return rc;
    fn(out.f, rows, count, style);
    return mdsd_outfile_commit(&out, err);
}

/* ---- paired differences ----------------------------------------------------- */

typedef struct {
    const mdsd_csv *t;
    const int *ca, *cb;
    size_t pairs;
    mdsd_cluster_stats *acc;  /* [pairs] the open group's differences */
    mdsd_report_paired_row *rows;
    size_t count, cap;
} paired_job;

/* Closes the open group (dump, T): one row per pair. */
static int paired_flush(paired_job *j, const char *dump, double T, mdsd_err *err)
{
    if (j->count + j->pairs > j->cap) {
        size_t cap = 2 * j->cap + j->pairs;
        mdsd_report_paired_row *g = realloc(j->rows, cap * sizeof *g);
        if (!g)
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        j->rows = g, j->cap = cap;
    }
    for (size_t k = 0; k < j->pairs; k++)
        j->rows[j->count++] = (mdsd_report_paired_row){
            dump, T, j->t->header[j->ca[k]], j->t->header[j->cb[k]], mdsd_cluster_mean(&j->acc[k]),
            mdsd_cluster_stderr(&j->acc[k]), (size_t)mdsd_cluster_count(&j->acc[k]),
            (size_t)mdsd_cluster_groups(&j->acc[k])};
    return MDSD_OK;
}

/* Row r's sample id (an integer >= 0) and its values a - b into the group. */
static int paired_add(paired_job *j, size_t r, int c_sample, long long *sample, mdsd_err *err)
{
    const char *s = mdsd_csv_cell(j->t, r, c_sample);
    char *end;
    long long id = strtoll(s, &end, 10);
    if (end == s || *end || id < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu, column sample: '%s' is not a sample id",
                         j->t->path, j->t->line[r], s);
    if (id < *sample)
        return mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: sample %lld after sample %lld (the rows "
                         "of a sample must be contiguous, samples in increasing order)",
                         j->t->path, j->t->line[r], id, *sample);
    *sample = id;
    for (size_t k = 0; k < j->pairs; k++) {
        double x, y;
        int rc = mdsd_csv_number(j->t, r, j->ca[k], &x, err);
        if (rc == MDSD_OK)
            rc = mdsd_csv_number(j->t, r, j->cb[k], &y, err);
        if (rc != MDSD_OK)
            return rc;
        if (!isfinite(x) || !isfinite(y))
            return mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu, column %s: %s", j->t->path, j->t->line[r],
                             j->t->header[isfinite(x) ? j->cb[k] : j->ca[k]],
                             "an empty or non-finite value");
        mdsd_cluster_add(&j->acc[k], id, x - y);
    }
    return MDSD_OK;
}

int mdsd_report_paired(const mdsd_csv *t, const int *col_a, const int *col_b, size_t pairs,
                       mdsd_report_paired_row **rows, size_t *count, mdsd_err *err)
{
    int c_dump = mdsd_csv_col(t, "dump"), c_T = mdsd_csv_col(t, "temperature"),
        c_sample = mdsd_csv_col(t, "sample");
    if (c_dump < 0 || c_T < 0 || c_sample < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: not a per-position CSV of mdsd table (it needs the "
                         "columns dump, temperature and sample)", t->path);
    if (t->n_rows == 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: no data rows", t->path);
    paired_job j = {t, col_a, col_b, pairs, calloc(pairs ? pairs : 1, sizeof *j.acc), NULL, 0, 0};
    if (!j.acc)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    int rc = MDSD_OK;
    const char *dump = NULL;
    double T = NAN;
    long long sample = -1;
    size_t group_start = 0; /* first row of the open group */
    for (size_t r = 0; rc == MDSD_OK && r < t->n_rows; r++) {
        const char *d = mdsd_csv_cell(t, r, c_dump);
        double x;
        if ((rc = mdsd_csv_number(t, r, c_T, &x, err)) != MDSD_OK)
            break;
        if (!isfinite(x)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu, column temperature: an empty or "
                           "non-finite value", t->path, t->line[r]);
            break;
        }
        if (!dump || strcmp(d, dump) || x != T) {
            if (dump && (rc = paired_flush(&j, dump, T, err)) != MDSD_OK)
                break;
            for (size_t q = 0; q < group_start && rc == MDSD_OK; q++) /* a group seen before */
                if (!strcmp(mdsd_csv_cell(t, q, c_dump), d) && strtod(mdsd_csv_cell(t, q, c_T), NULL) == x)
                    rc = mdsd_fail(err, MDSD_EFORMAT, "%s, line %zu: the rows of dump '%s' at "
                                   "temperature %g are not contiguous (also at line %zu)",
                                   t->path, t->line[r], d, x, t->line[q]);
            dump = d, T = x, sample = -1, group_start = r;
            for (size_t k = 0; k < pairs; k++)
                mdsd_cluster_init(&j.acc[k]);
        }
        if (rc == MDSD_OK)
            rc = paired_add(&j, r, c_sample, &sample, err);
    }
    if (rc == MDSD_OK)
        rc = paired_flush(&j, dump, T, err);
    free(j.acc);
    if (rc != MDSD_OK) {
        free(j.rows);
        return rc;
    }
    *rows = j.rows;
    *count = j.count;
    return MDSD_OK;
}

static double paired_z(const mdsd_report_paired_row *r)
{
    return r->se > 0 ? r->diff / r->se : NAN;
}

void mdsd_report_paired_csv(FILE *out, const mdsd_report_paired_row *rows, size_t count)
{
    fputs("dump,temperature,a,b,difference,stderr,z,significance,positions,samples\n", out);
    for (size_t i = 0; i < count; i++) {
        const mdsd_report_paired_row *r = &rows[i];
        mdsd_csv_write_field(out, r->dump);
        fprintf(out, ",%.10g,", r->temperature);
        mdsd_csv_write_field(out, r->a);
        fputc(',', out);
        mdsd_csv_write_field(out, r->b);
        csv_number(out, r->diff);
        csv_number(out, r->se);
        csv_number(out, paired_z(r));
        fprintf(out, ",%s,%zu,%zu\n", mdsd_report_significance(r->diff, r->se, r->samples), r->positions,
                r->samples);
    }
}

void mdsd_report_paired_markdown(FILE *out, const mdsd_report_paired_row *rows, size_t count,
                                 const char *provenance)
{
    if (provenance)
        fprintf(out, "<!-- %s -->\n\n", provenance);
    fputs("Paired differences a − b over the same positions (mean ± s.e. clustered by sample; "
          "z = difference / s.e.; * p<0.05, ** p<0.01, *** p<0.001, two-sided t test with "
          "samples − 1 degrees of freedom)\n\n"
          "| dump | T | a | b | a − b | z | positions | samples |\n"
          "|---|---:|---|---|---:|---:|---:|---:|\n", out);
    for (size_t i = 0; i < count; i++) {
        const mdsd_report_paired_row *r = &rows[i];
        fputs("| ", out);
        markdown_escape(out, r->dump);
        fprintf(out, " | %g | ", r->temperature);
        markdown_escape(out, r->a);
        fputs(" | ", out);
        markdown_escape(out, r->b);
        double z = paired_z(r);
        /* 4 decimals as the results tables, more where the s.e. is below them */
        fprintf(out, r->se >= 5e-5 ? " | %+.4f ± %.4f%s | " : " | %+.3g ± %.2g%s | ", r->diff, r->se,
                mdsd_report_significance(r->diff, r->se, r->samples));
        if (isfinite(z))
            fprintf(out, "%.1f", z);
        else
            fputs("–", out);
        fprintf(out, " | %zu | %zu |\n", r->positions, r->samples);
    }
    fputc('\n', out);
}
