/* The block job's Markdown and LaTeX tables as a paper takes them: the table
 * job's float (booktabs rules, caption, label, report.h's fit box), every
 * fact once (E[tau] was printed three times: as itself, as vLLM's mean
 * acceptance length and as the speed-up at cost 0), and a natural width
 * that a two-column paper's column holds (measured by pdflatex: the old
 * table was 810 pt wide, 580 pt over the column). The values are the CSV's,
 * rounded. Shown once to catch a planted error: the E[tau] column printed a
 * second time fails the header and width checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "report.h"
#include "testutil.h"

#define SHIPPED "data/kjv-trees.h5"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static size_t count(const char *hay, const char *needle)
{
    size_t k = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        k++;
    return k;
}

/* The line of text that starts with `start`, copied into buf. */
static const char *line_of(const char *text, const char *start, char *buf, size_t size)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, start, strlen(start))) {
            size_t len = strcspn(p, "\n");
            snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), p);
            return buf;
        }
    return NULL;
}

/* Field `name` of a CSV line under header `head` (no quoted fields here). */
static double field(const char *head, const char *line, const char *name)
{
    int col = 0;
    for (const char *p = head; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL, col++)
        if (!strncmp(p, name, strlen(name)) && (p[strlen(name)] == ',' || p[strlen(name)] == '\n'))
            break;
    const char *q = line;
    for (int c = 0; c < col && q; c++)
        q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL;
    cr_assert(q, "no field %s", name);
    return strtod(q, NULL);
}

Test(block_tables, latex_is_a_booktabs_float_that_fits_a_column, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-blocktab-XXXXXX", cmd[2048], path[256], line[1024], *out;
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "block " SHIPPED " --cost 0,0.1,0.3 -o %s/b.csv --markdown %s/b.md "
             "--latex %s/b.tex", dir, dir, dir);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/b.tex", dir);
    char *tex = slurp(path);
    snprintf(path, sizeof path, "%s/b.md", dir);
    char *md = slurp(path);
    /* the table job's float */
    cr_expect(strstr(tex, "% needs \\usepackage{" MDSD_REPORT_LATEX_PACKAGES "}\n\\begin{table}[t]\n"
                          "\\centering\n\\caption{Block efficiency of \\texttt{data/kjv-trees.h5}."),
              "%s", tex);
    cr_expect(strstr(tex, "}\n\\label{tab:mdsd-block}\n\\resizebox{"), "%s", tex);
    cr_expect(count(tex, "\\toprule") == 1 && count(tex, "\\midrule") == 1 &&
              count(tex, "\\bottomrule") == 1 && !strstr(tex, "\\hline") &&
              strstr(tex, "\\end{tabular}}}\n\\end{table}\n"), "%s", tex);
    /* every fact once: E[tau] in one column, no speed-up at cost 0 */
    cr_assert(line_of(tex, "verifier & ", line, sizeof line), "%s", tex);
    cr_expect_str_eq(line, "verifier & policy & $L$ & $E[\\tau]$ (s.e.) & $r_L$ & $S_{0.1}$ & $S_{0.3}$ \\\\");
    cr_assert(line_of(md, "| verifier |", line, sizeof line), "%s", md);
    cr_expect_str_eq(line, "| verifier | policy | L | E[tau] (s.e.) | reach | S(0.1) | S(0.3) |");
    cr_expect(!strstr(md, "mean acceptance length |") && !strstr(md, "| dump |"), "%s", md);
    /* one row against the CSV: kseq K = 4 L = 3 */
    snprintf(path, sizeof path, "%s/b.csv", dir);
    char *csv = slurp(path), head[2048];
    cr_assert(line_of(csv, "dump,", head, sizeof head));
    strcat(head, "\n");
    const char *row = strstr(csv, "\ndata/kjv-trees.h5,kseq,seq,iid,4,,3,");
    cr_assert(row, "%s", csv);
    row++;
    double tau = field(head, row, "block_efficiency"), se = field(head, row, "stderr");
    char want[256];
    snprintf(want, sizeof want, "kseq & K=4 & 3 & %.3f (%.3f) & ", tau, se);
    cr_expect(strstr(tex, want), "LaTeX lacks '%s':\n%s", want, tex);
    snprintf(want, sizeof want, "| kseq | seq K=4 | 3 | %.4f (%.4f) | ", tau, se);
    cr_expect(strstr(md, want), "Markdown lacks '%s':\n%s", want, md);
    /* the natural width of the tabular in a two-column article, and the float compiles */
    const char *tab = strstr(tex, "\\begin{tabular}"), *end = strstr(tex, "\\end{tabular}");
    cr_assert(tab && end);
    snprintf(path, sizeof path, "%s/w.tex", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "\\documentclass[twocolumn]{article}\n\\usepackage{" MDSD_REPORT_LATEX_PACKAGES "}\n"
               "\\newsavebox\\tb\n\\begin{document}\n\\sbox\\tb{%.*s\\end{tabular}}\n"
               "\\typeout{TABWIDTH=\\the\\wd\\tb}\n\\input{b.tex}\n\\end{document}\n",
            (int)(end - tab), tab);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd %s && pdflatex -interaction=nonstopmode -halt-on-error w.tex "
             "| grep -o 'TABWIDTH=[0-9.]*'", dir);
    out = test_shell_ok(cmd);
    double width = strtod(out + strlen("TABWIDTH="), NULL);
    /* ACM's column is 241 pt, IEEE's 252, article's 229.5; the fit box shrinks
     * what is left by at most 0.88 */
    cr_expect(width > 100 && width <= 262, "the block table is %.1f pt wide (%s)", width, out);
    free(out);
    free(csv), free(md), free(tex);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

/* Several dumps (two copies of the shipped one under other names): the dump
 * is a column, not the caption's. */
Test(block_tables, several_dumps_get_a_dump_column, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-blocktab-XXXXXX", cmd[2048], path[256], line[1024];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp " SHIPPED " %s/a.h5 && cp " SHIPPED " %s/b_x.h5 && cd %s && "
             "%s block a.h5 b_x.h5 --verifiers rrs --sequences 2 --depth 2 --latex t.tex --markdown t.md",
             dir, dir, dir, test_mdsd_bin());
    free(test_shell_ok(cmd));
    snprintf(path, sizeof path, "%s/t.tex", dir);
    char *tex = slurp(path);
    snprintf(path, sizeof path, "%s/t.md", dir);
    char *md = slurp(path);
    cr_expect(strstr(tex, "\\caption{Block efficiency. ") && strstr(tex, "{@{}lllrrr@{}}"), "%s", tex);
    cr_expect(line_of(tex, "\\texttt{b\\_x.h5} & rrs & K=2 & 2 & ", line, sizeof line), "%s", tex);
    cr_expect(line_of(md, "| b_x.h5 | rrs | seq K=2 | 2 | ", line, sizeof line), "%s", md);
    free(tex), free(md);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}
