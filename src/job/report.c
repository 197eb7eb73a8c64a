#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "csv.h"

/* Gaps this small are solver tolerance, not a difference: alpha* and the
 * closed-form rates are exact to ~1e-12, the LP-based verifiers (is, otm) to
 * GLPK's 1e-7; a verifier that attains alpha* shows "(=)" and no marker. */
#define GAP_ROUNDING 1e-7

const char *mdsd_report_significance(double gap, double gap_se)
{
    if (!isfinite(gap) || !(gap_se > 0) || fabs(gap) < GAP_ROUNDING)
        return "";
    double p = 2 * gsl_cdf_ugaussian_Q(fabs(gap) / gap_se);
    return p < 0.001 ? "***" : p < 0.01 ? "**" : p < 0.05 ? "*" : "";
}

void mdsd_report_csv_header(FILE *out, size_t max_drafts)
{
    fputs("dump,temperature,n,scheme,method,alpha,stderr,gap,gap_stderr,significance,"
          "positions,samples,exact", out);
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
    fprintf(out, ",%s,%zu,%zu,%d", mdsd_report_significance(r->gap, r->gap_se), r->positions,
            r->samples, r->exact ? 1 : 0);
    for (size_t j = 0; j < max_drafts; j++)
        csv_number(out, j < r->n_per_draft ? r->per_draft[j] : NAN);
    fputc('\n', out);
}

static double parse_number(const char *s)
{
    return *s ? strtod(s, NULL) : NAN;
}

int mdsd_report_csv_parse(const char *line, mdsd_report_row *r, mdsd_err *err)
{
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", line);
    buf[strcspn(buf, "\r\n")] = '\0';
    char **field;
    size_t k;
    int rc = mdsd_csv_split(buf, &field, &k, err);
    if (rc)
        return rc;
    if (k < 13 || k > 13 + MDSD_REPORT_MAX_DRAFTS || strlen(field[0]) >= sizeof r->dump ||
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
    for (size_t j = 13; j < k && isfinite(parse_number(field[j])); j++)
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

static void cell(FILE *out, const mdsd_report_row *r, style st)
{
    const char *pm = st == STYLE_LATEX ? " $\\pm$ " : " ± ";
    fprintf(out, "%.4f%s%.4f", r->alpha, pm, r->se);
    if (!isfinite(r->gap))
        return;
    if (fabs(r->gap) < GAP_ROUNDING) {
        fputs(" (=)", out);
        return;
    }
    const char *arrow = r->gap < 0 ? (st == STYLE_LATEX ? "$\\downarrow$" : "↓")
                                   : (st == STYLE_LATEX ? "$\\uparrow$" : "↑");
    const char *sig = mdsd_report_significance(r->gap, r->gap_se);
    if (st == STYLE_LATEX && *sig)
        fprintf(out, " (%s%.4f$^{%s}$)", arrow, fabs(r->gap), sig);
    else
        fprintf(out, " (%s%.4f%s)", arrow, fabs(r->gap), sig);
}

static const mdsd_report_row *find(const mdsd_report_row *rows, size_t count, double T, size_t n,
                                   const char *scheme, const char *method, const char *dump)
{
    for (size_t i = 0; i < count; i++)
        if (rows[i].temperature == T && rows[i].n == n && !strcmp(rows[i].scheme, scheme) &&
            !strcmp(rows[i].method, method) && !strcmp(rows[i].dump, dump))
            return &rows[i];
    return NULL;
}

/* Index of the first row of (T, n) with rows[i]'s scheme. */
static size_t first_of_scheme(const mdsd_report_row *rows, size_t i, double T, size_t n)
{
    for (size_t k = 0; k < i; k++)
        if (rows[k].temperature == T && rows[k].n == n && !strcmp(rows[k].scheme, rows[i].scheme))
            return k;
    return i;
}

/* Index of the first row of (T, n) with rows[i]'s scheme and method. */
static size_t first_of_method(const mdsd_report_row *rows, size_t i, double T, size_t n)
{
    for (size_t k = 0; k < i; k++)
        if (rows[k].temperature == T && rows[k].n == n && !strcmp(rows[k].scheme, rows[i].scheme) &&
            !strcmp(rows[k].method, rows[i].method))
            return k;
    return i;
}

/* One table row: (scheme, method) across the dumps; nothing if no dump has it. */
static void render_row(FILE *out, const mdsd_report_row *rows, size_t count, double T, size_t n,
                       const char *scheme, const char *method_name, const label_set *dumps, style st)
{
    const mdsd_report_row *any = NULL;
    for (size_t d = 0; d < dumps->count && !any; d++)
        any = find(rows, count, T, n, scheme, method_name, dumps->labels[d]);
    if (!any)
        return;
    const char *sep = st == STYLE_LATEX ? " & " : " | ";
    const char *method = strcmp(method_name, "bound") ? method_name
                                                      : (st == STYLE_LATEX ? "$\\alpha^*$" : "α*");
    fprintf(out, st == STYLE_LATEX ? "%s & %s" : "| %s | %s", scheme, method);
    for (size_t d = 0; d < dumps->count; d++) {
        fputs(sep, out);
        const mdsd_report_row *c = find(rows, count, T, n, scheme, method_name, dumps->labels[d]);
        if (c)
            cell(out, c, st);
        else
            fputs("–", out);
    }
    fputs(st == STYLE_LATEX ? " \\\\\n" : " |\n", out);
}

static void render_block(FILE *out, const mdsd_report_row *rows, size_t count, double T, size_t n,
                         const label_set *dumps, style st)
{
    const char *sep = st == STYLE_LATEX ? " & " : " | ";
    if (st == STYLE_LATEX) {
        fprintf(out, "\\begin{table}[t]\n\\centering\n\\caption{Acceptance rate, $T = %g$, $n = %zu$ "
                     "drafts (mean $\\pm$ s.e.\\ clustered by sample; arrows: gap to the scheme's "
                     "$\\alpha^*$).}\n\\begin{tabular}{ll", T, n);
        for (size_t d = 0; d < dumps->count; d++)
            fputc('c', out);
        fputs("}\n\\toprule\nscheme & method", out);
    } else {
        fprintf(out, "\n**T = %g, n = %zu** (α ± s.e. clustered by sample; (↓Δ) = gap to the "
                     "scheme's α*, * p<0.05, ** p<0.01, *** p<0.001)\n\n| scheme | method", T, n);
    }
    for (size_t d = 0; d < dumps->count; d++)
        fprintf(out, "%s%s", sep, dumps->labels[d]);
    fputs(st == STYLE_LATEX ? " \\\\\n\\midrule\n" : " |\n|---|---", out);
    if (st == STYLE_MARKDOWN) {
        for (size_t d = 0; d < dumps->count; d++)
            fputs("|---", out);
        fputs("|\n", out);
    }
    /* schemes in order of first appearance; each: its alpha* row, then its methods */
    for (size_t i = 0; i < count; i++) {
        const mdsd_report_row *r = &rows[i];
        if (r->temperature != T || r->n != n || first_of_scheme(rows, i, T, n) != i)
            continue;
        render_row(out, rows, count, T, n, r->scheme, "bound", dumps, st);
        for (size_t k = i; k < count; k++)
            if (rows[k].temperature == T && rows[k].n == n && !strcmp(rows[k].scheme, r->scheme) &&
                strcmp(rows[k].method, "bound") && first_of_method(rows, k, T, n) == k)
                render_row(out, rows, count, T, n, r->scheme, rows[k].method, dumps, st);
    }
    if (st == STYLE_LATEX)
        fputs("\\bottomrule\n\\end{tabular}\n\\end{table}\n", out);
}

static void render(FILE *out, const mdsd_report_row *rows, size_t count, style st)
{
    label_set dumps = {0};
    for (size_t i = 0; i < count; i++)
        label_index(&dumps, rows[i].dump);
    for (size_t i = 0; i < count; i++) {
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = rows[k].temperature == rows[i].temperature && rows[k].n == rows[i].n;
        if (!seen)
            render_block(out, rows, count, rows[i].temperature, rows[i].n, &dumps, st);
    }
}

void mdsd_report_markdown(FILE *out, const mdsd_report_row *rows, size_t count)
{
    render(out, rows, count, STYLE_MARKDOWN);
}

void mdsd_report_latex(FILE *out, const mdsd_report_row *rows, size_t count)
{
    render(out, rows, count, STYLE_LATEX);
}
