/* report.h - the batch job's results: one tidy row per
 * (dump, temperature, n, scheme, method), written as CSV and rendered as
 * Hu-et-al.-Table-1-style Markdown or LaTeX (rows scheme x method with the
 * alpha* rows, columns dumps; alpha +- s.e. and the gap to alpha* with an
 * arrow and a significance marker).
 *
 * CSV columns (stable: other tools script against them):
 *   dump,temperature,n,scheme,method,alpha,stderr,gap,gap_stderr,significance,
 *   positions,samples,exact,alpha_low,alpha_low_stderr,alpha_high,
 *   alpha_high_stderr,per_draft_1..per_draft_K
 * method is a verifier name or "bound" (the scheme's alpha*); gap is
 * alpha - alpha*(scheme) over the same positions (empty on bound rows).
 * alpha_low, alpha_high: the means of the certified interval's ends over the
 * completions of truncated top-k rows (MATH.md §2.9), each with its own
 * clustered standard error; equal to alpha on complete rows. Files written
 * before these columns existed read with them NaN (mdsd_report_csv_layout). */
#ifndef MDSD_REPORT_H
#define MDSD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "csv.h"
#include "err.h"

#include <mdsd/report.h>

#define MDSD_REPORT_MAX_DRAFTS 16

typedef struct {
    char dump[256];       /* dump label (the file's base name) */
    double temperature;
    size_t n;             /* drafts */
    char scheme[16];
    char method[16];      /* verifier name, or "bound" */
    double alpha;         /* mean acceptance over positions */
    double se;            /* standard error, clustered by sample */
    double gap;           /* alpha - alpha*(scheme); NaN on bound rows */
    double gap_se;        /* paired, clustered standard error of the gap */
    double alpha_low, alpha_low_se;   /* the interval's ends (= alpha on complete rows) */
    double alpha_high, alpha_high_se; /* NaN: read from a file without them */
    size_t positions;
    size_t samples;
    bool exact;           /* per-position values exact (else Monte-Carlo) */
    size_t n_per_draft;   /* entries of per_draft used (n, or 0 for bound rows) */
    double per_draft[MDSD_REPORT_MAX_DRAFTS]; /* P(draft j is the accepted one) */
} mdsd_report_row;

/* "***" (p < 0.001), "**" (< 0.01), "*" (< 0.05) or "" for a two-sided t
 * test of gap = 0 with samples - 1 degrees of freedom (gap_se clustered over
 * that many samples); "" for one sample, whose s.e. treats positions as
 * independent. */
const char *mdsd_report_significance(double gap, double gap_se, size_t samples);

/* "PROG: note: DUMP has one sample: ..." on err, once per dump whose rows have
 * samples < 2. */
void mdsd_report_note_one_sample(FILE *err, const char *prog, const mdsd_report_row *rows,
                                 size_t count);
/* The same notes, "note: DUMP has one sample: ..." each, told to fn (NULL: none). */
void mdsd_report_notes(void (*fn)(const char *message, void *ctx), void *ctx,
                       const mdsd_report_row *rows, size_t count);

void mdsd_report_csv_header(FILE *out, size_t max_drafts);
void mdsd_report_csv_row(FILE *out, const mdsd_report_row *r, size_t max_drafts);

/* Whether a results CSV header line has the interval columns (files of
 * earlier versions do not); MDSD_EFORMAT if it is not a results header. */
int mdsd_report_csv_layout(const char *header, bool *intervals, mdsd_err *err);
/* Parses one CSV data line written by mdsd_report_csv_row (for --resume),
 * of a file with or without the interval columns. */
int mdsd_report_csv_parse(const char *line, bool intervals, mdsd_report_row *r, mdsd_err *err);

/* ---- rendering ----
 * Tables of rows scheme x method (each scheme's alpha* row first), columns =
 * dumps in order of first appearance; settings (temperature, n) in order of
 * first appearance, either one table each or one combined table with a row
 * group per setting. Every label is escaped for the format; each LaTeX table
 * has a \label; Monte-Carlo cells (exact = 0) carry a dagger and cells of the
 * is verifier truncated by --is-top a double dagger, explained under the
 * table. */
/* mdsd_report_layout: <mdsd/report.h>. */

/* The LaTeX packages the rendered tables use (a standalone document loads them;
 * a snippet names them in its first comment): every tabular is shrunk to the
 * line width and 0.8 of the text height when larger (graphicx's \resizebox). */
#define MDSD_REPORT_LATEX_PACKAGES "booktabs,graphicx"

typedef struct {
    mdsd_report_layout layout;
    size_t is_top;             /* the job's --is-top (0 = none): marks the is cells */
    unsigned long long trials; /* Monte-Carlo trials per position, for the legend (0 = unknown) */
    const char *label_prefix;  /* LaTeX \label prefix (default "tab:mdsd") */
    bool standalone;           /* LaTeX: a whole document (article + booktabs) */
    const char *provenance;    /* one line said as a comment on top ("% ...", "<!-- -->"), or NULL */
    size_t n_labels;           /* --label "OLD=NEW": a dump, scheme or method shown as NEW */
    const char *const *labels;
} mdsd_report_style;

void mdsd_report_style_init(mdsd_report_style *s); /* per setting, no marks, no provenance */

void mdsd_report_render_markdown(FILE *out, const mdsd_report_row *rows, size_t count,
                                 const mdsd_report_style *style);
void mdsd_report_render_latex(FILE *out, const mdsd_report_row *rows, size_t count,
                              const mdsd_report_style *style);
/* One of the renderers above into the file at path, atomically. */
typedef void (*mdsd_report_renderer)(FILE *, const mdsd_report_row *, size_t,
                                     const mdsd_report_style *);
int mdsd_report_render_file(const char *path, mdsd_report_renderer fn, const mdsd_report_row *rows,
                            size_t count, const mdsd_report_style *style, mdsd_err *err);

/* The default style (one table per setting). */
void mdsd_report_markdown(FILE *out, const mdsd_report_row *rows, size_t count);
void mdsd_report_latex(FILE *out, const mdsd_report_row *rows, size_t count);

/* NEW of the first "OLD=NEW" of labels[n] whose OLD is name (OLD ends at
 * the first '='), else name itself: the --label lookup of report and plot. */
const char *mdsd_report_relabel(const char *const *labels, size_t n, const char *name);

/* s as LaTeX text: \ { } $ & # ^ _ ~ % escaped; bytes >= 0x80 passed on (UTF-8). */
void mdsd_report_latex_escape(FILE *out, const char *s);

/* The pieces of the renderers' LaTeX float, for other jobs' tables (the block job's) so
 * that every table the toolkit writes has one look: "% needs \usepackage{...}",
 * "\begin{table}[t]\n\centering\n\caption{CAPTION}\n\label{PREFIX SUFFIX}\n" (the caption
 * written as given: LaTeX already), the shrink-to-fit box around "\begin{tabular}{SPEC}\n
 * \toprule\n", and "\bottomrule\n\end{tabular}" with the box and float closed. */
void mdsd_report_latex_preamble(FILE *out);
void mdsd_report_latex_table_open(FILE *out, const char *caption, const char *label_prefix,
                                  const char *label_suffix, const char *spec);
void mdsd_report_latex_table_close(FILE *out);

/* ---- paired differences (mdsd report --paired) ----
 * From the per-position CSV of `mdsd table --per-position` (columns dump,
 * temperature, sample, then one value column per alpha* and verifier): for
 * every (dump, temperature) group, in the file's order, and every pair of
 * columns (a, b), the mean of a - b over the group's positions and its
 * standard error clustered by sample: the estimator of the results CSV's gap
 * column, for any two columns measured on the same positions. The rows of a
 * group must be contiguous and its samples in increasing order; every value
 * must be a finite number (else an error naming file, line and column).
 * dump, a and b point into the table: valid while it lives. */
typedef struct {
    const char *dump;
    double temperature;
    const char *a, *b;    /* column names */
    double diff, se;      /* mean of a - b; clustered standard error */
    size_t positions, samples;
} mdsd_report_paired_row;

int mdsd_report_paired(const mdsd_csv *t, const int *col_a, const int *col_b, size_t pairs,
                       mdsd_report_paired_row **rows, size_t *count, mdsd_err *err);
/* CSV columns: dump,temperature,a,b,difference,stderr,z,significance,positions,samples */
void mdsd_report_paired_csv(FILE *out, const mdsd_report_paired_row *rows, size_t count);
/* A Markdown table; provenance (may be NULL) said in a comment on top. */
void mdsd_report_paired_markdown(FILE *out, const mdsd_report_paired_row *rows, size_t count,
                                 const char *provenance);

#endif
