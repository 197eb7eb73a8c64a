/* Paper-ready outputs (issue 16): LaTeX that compiles with a real TeX engine
 * (escaped labels, a \label per table, the combined table, marks), mdsd report
 * re-rendering a results CSV, the provenance sidecar, and the per-position CSV
 * of mdsd table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "csv.h"
#include "dump.h"
#include "progress.h"
#include "report.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mdsd-outputs-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

TestSuite(outputs, .init = make_dir, .fini = remove_dir);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot read %s", path);
    static char *buf;
    buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t k = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        k++;
    return k;
}

/* pdflatex (Debian's texlive-latex-base, installed by make deps) on
 * dir/name.tex; returns its exit status. */
static int compile_latex(const char *name)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && pdflatex -interaction=nonstopmode -halt-on-error %s.tex "
             "> %s.out 2>&1", dir, name, name);
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static mdsd_report_row row(const char *dump, double T, size_t n, const char *scheme,
                           const char *method, double alpha, bool exact)
{
    mdsd_report_row r = {0};
    snprintf(r.dump, sizeof r.dump, "%s", dump);
    snprintf(r.scheme, sizeof r.scheme, "%s", scheme);
    snprintf(r.method, sizeof r.method, "%s", method);
    r.temperature = T, r.n = n, r.alpha = alpha, r.se = 0.002;
    r.gap = strcmp(method, "bound") ? -0.01 : NAN, r.gap_se = 0.002;
    r.positions = 100, r.samples = 10, r.exact = exact;
    return r;
}

Test(outputs, latex_escapes_every_special_character)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    mdsd_report_latex_escape(f, "qwen_0.5b&x%y$z#w{a}b~c^d\\e<f>g|h");
    fclose(f);
    cr_assert_str_eq(buf, "qwen\\_0.5b\\&x\\%y\\$z\\#w\\{a\\}b\\textasciitilde{}c\\textasciicircum{}d"
                          "\\textbackslash{}e\\textless{}f\\textgreater{}g\\textbar{}h");
    free(buf);
}

/* A drafter named qwen_0.5b and a dump label full of TeX specials, two
 * settings, a Monte-Carlo cell and truncated is cells: the standalone
 * document (per-setting tables and the combined one) compiles with pdflatex,
 * has a \label per table and explains both marks. */
Test(outputs, latex_compiles_with_labels_marks_and_the_combined_table)
{
    const char *d1 = "qwen_0.5b", *d2 = "run#2 {50%} & ~x^y\\z";
    mdsd_report_row rows[12];
    size_t k = 0;
    for (int s = 0; s < 2; s++) {
        double T = s ? 1.0 : 0.7;
        size_t n = s ? 3 : 2;
        rows[k++] = row(d1, T, n, "iid", "bound", 0.8, true);
        rows[k++] = row(d1, T, n, "iid", "is", 0.79, true);
        rows[k++] = row(d1, T, n, "wor", "bound", 0.85, true);
        rows[k++] = row(d1, T, n, "wor", "rrsw", 0.82, false);
        rows[k++] = row(d2, T, n, "iid", "bound", 0.7, true);
        rows[k++] = row(d2, T, n, "iid", "is", 0.69, true);
    }
    mdsd_report_style st;
    mdsd_report_style_init(&st);
    st.layout = MDSD_REPORT_BOTH;
    st.is_top = 8;
    st.trials = 500;
    st.standalone = true;
    st.provenance = "made by a test";
    char path[128];
    snprintf(path, sizeof path, "%s/good.tex", dir);
    FILE *f = fopen(path, "w");
    mdsd_report_render_latex(f, rows, k, &st);
    fclose(f);
    char *tex = slurp(path);
    cr_expect_eq(count_of(tex, "\\label{"), 3, "%s", tex);
    cr_expect(strstr(tex, "\\label{tab:mdsd-T0.7-n2}") && strstr(tex, "\\label{tab:mdsd-T1-n3}") &&
              strstr(tex, "\\label{tab:mdsd-all}"), "%s", tex);
    cr_expect(strstr(tex, "\\multicolumn{4}{l}{$T = 0.7$, $n = 2$}"), "%s", tex);
    cr_expect(strstr(tex, "qwen\\_0.5b") && !strstr(tex, "qwen_0.5b"), "%s", tex);
    cr_expect(strstr(tex, "0.8200 $\\pm$ 0.0020$^{\\dagger}$") && strstr(tex, "0.7900 $\\pm$ 0.0020$^{\\ddagger}$"),
              "%s", tex);
    cr_expect(strstr(tex, "Monte-Carlo estimate, 500 trials per position") &&
              strstr(tex, "top 8 tokens"), "%s", tex);
    cr_expect(!strncmp(tex, "% made by a test\n", 17), "%s", tex);
    free(tex);
    int rc = compile_latex("good");
    char out_path[128];
    snprintf(out_path, sizeof out_path, "%s/good.out", dir);
    char *log = rc ? slurp(out_path) : NULL;
    cr_assert_eq(rc, 0, "pdflatex failed on %s/good.tex:\n%s", dir, log ? log : "");
    char pdf[128];
    snprintf(pdf, sizeof pdf, "%s/good.pdf", dir);
    struct stat sb;
    cr_assert(stat(pdf, &sb) == 0 && sb.st_size > 1000);

    /* planted error: the same document with one label printed raw must fail,
     * so the compile check above can fail */
    snprintf(path, sizeof path, "%s/bad.tex", dir);
    f = fopen(path, "w");
    fputs("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
          "\\begin{tabular}{ll}\\toprule a & qwen_0.5b \\\\ \\bottomrule\\end{tabular}\n"
          "\\end{document}\n", f);
    fclose(f);
    cr_assert_neq(compile_latex("bad"), 0, "a raw underscore compiled: the LaTeX check is blind");
}

/* pdflatex on NAME.tex (rows rendered standalone in LAYOUT); its log, which must not say
 * "Float too large" nor "Overfull \hbox". */
static char *compile_fitting(const char *name, const mdsd_report_row *rows, size_t k,
                             mdsd_report_layout layout)
{
    mdsd_report_style st;
    mdsd_report_style_init(&st);
    st.layout = layout;
    st.standalone = true;
    char path[128];
    snprintf(path, sizeof path, "%s/%s.tex", dir, name);
    FILE *f = fopen(path, "w");
    mdsd_report_render_latex(f, rows, k, &st);
    fclose(f);
    int rc = compile_latex(name);
    snprintf(path, sizeof path, "%s/%s.log", dir, name);
    char *log = slurp(path);
    cr_assert_eq(rc, 0, "pdflatex failed on %s:\n%s", name, log ? log : "");
    cr_assert(log && !strstr(log, "Float too large") && !strstr(log, "Overfull \\hbox"),
              "%s.tex does not fit the page:\n%s", name, log ? log : "(no log)");
    return log;
}

/* What fits on the page: the drafter sweep's shape (4 temperatures x 3 draft counts, 2
 * schemes, 2 verifiers, 2 drafters) as per-setting tables and the combined one (which ran
 * 293 pt off the page: now shrunk to it), and one setting over 9 dumps with long names
 * (wider than the text: shrunk to it). */
Test(outputs, long_and_wide_latex_tables_fit_the_page)
{
    mdsd_report_row rows[16 * 12];
    size_t k = 0;
    const double temps[] = {0.3, 0.5, 0.7, 1.0};
    for (int t = 0; t < 4; t++)
        for (size_t n = 2; n <= 4; n++)
            for (int d = 0; d < 2; d++) {
                const char *dump = d ? "kjv-ngram.h5:kn3" : "kjv-ngram.h5:kn2";
                rows[k++] = row(dump, temps[t], n, "iid", "bound", 0.8, true);
                rows[k++] = row(dump, temps[t], n, "iid", "rrs", 0.75, true);
                rows[k++] = row(dump, temps[t], n, "iid", "kseq", 0.76, true);
                rows[k++] = row(dump, temps[t], n, "wor", "bound", 0.82, true);
            }
    char *log = compile_fitting("long", rows, k, MDSD_REPORT_BOTH);
    char *tex = slurp(strcat(strcpy((char[160]){0}, dir), "/long.tex"));
    cr_expect(strstr(tex, "\\usepackage{booktabs,graphicx}") && strstr(tex, "\\resizebox*{!}") &&
              strstr(tex, "\\label{tab:mdsd-all}"), "%s", tex);
    free(tex);
    free(log);
    k = 0;
    for (int d = 0; d < 9; d++) {
        char name[64];
        snprintf(name, sizeof name, "a-rather-long-dump-name-%d.h5:drafter", d);
        rows[k++] = row(name, 0.9, 5, "iid", "bound", 0.8, true);
        rows[k++] = row(name, 0.9, 5, "iid", "rrs", 0.7, false);
    }
    free(compile_fitting("wide", rows, k, MDSD_REPORT_PER_SETTING));
}

Test(outputs, markdown_escapes_labels_and_explains_marks)
{
    mdsd_report_row rows[3] = {row("qwen_0.5b|x", 0.7, 2, "wor", "bound", 0.85, true),
                               row("qwen_0.5b|x", 0.7, 2, "wor", "rrsw", 0.82, false),
                               row("qwen_0.5b|x", 0.7, 2, "iid", "is", 0.8, true)};
    mdsd_report_style st;
    mdsd_report_style_init(&st);
    st.is_top = 4;
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    mdsd_report_render_markdown(f, rows, 3, &st);
    fclose(f);
    cr_expect(strstr(buf, "| scheme | method | qwen\\_0.5b\\|x |"), "%s", buf);
    cr_expect(strstr(buf, "0.8200 ± 0.0020†") && strstr(buf, "0.8000 ± 0.0020‡"), "%s", buf);
    cr_expect(strstr(buf, "† Monte-Carlo estimate") && strstr(buf, "‡ `is` with weights optimised only among the top 4"),
              "%s", buf);
    free(buf);
}

static void run_ok(const char *fmt, const char *a, const char *b, const char *c)
{
    char args[2048], *out;
    snprintf(args, sizeof args, fmt, a, b, c);
    int rc = test_run_mdsd(args, 1, &out);
    cr_assert_eq(rc, 0, "mdsd %s: exit %d\n%s", args, rc, out);
    free(out);
}

static void make_dump(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    run_ok("toy --family dirichlet --vocab 12 --positions 40 --samples 5 --seed 3 --drafts small_d,big_d -o %s%s%s",
           path, "", "");
}

/* The job's sidecar names its command, seed, trials, is-top and each dump's
 * size and SHA-256 (checked against sha256sum); mdsd report re-renders the
 * same Markdown as the job, selects and orders rows, and carries the
 * provenance forward. */
Test(outputs, report_rerenders_selects_and_carries_provenance)
{
    make_dump("a_1.h5");
    char csv[128], md[128], cmd[512];
    snprintf(csv, sizeof csv, "%s/res.csv", dir);
    snprintf(md, sizeof md, "%s/job.md", dir);
    snprintf(cmd, sizeof cmd, "table %s/a_1.h5 -o %s -t 0.5,0.7 -d 2 -s iid -v rrs,kseq,is --is-top 3 "
             "--draft-model small_d,big_d --seed 9 --markdown=%s", dir, csv, md);
    run_ok("%s%s%s", cmd, "", "");
    char side[160];
    snprintf(side, sizeof side, "%s.provenance.json", csv);
    char *prov = slurp(side);
    cr_expect(strstr(prov, "\"tool\":\"mdsd table\"") && strstr(prov, "\"seed\":9") &&
              strstr(prov, "\"is_top\":3") && strstr(prov, "\"trials\":0") &&
              strstr(prov, "\"--draft-model\",\"small_d,big_d\""), "%s", prov);
    /* the command line as typed: the dump before the options (getopt permutes argv) */
    char typed[256];
    snprintf(typed, sizeof typed, "\"command\":[\"mdsd\",\"table\",\"%s/a_1.h5\",\"-o\"", dir);
    cr_expect(strstr(prov, typed), "not the command as typed: %s", prov);
    /* checksum and size against coreutils and stat */
    char sum_cmd[256], want[80] = "";
    snprintf(sum_cmd, sizeof sum_cmd, "sha256sum %s/a_1.h5 | cut -c1-64", dir);
    FILE *p = popen(sum_cmd, "r");
    cr_assert(fgets(want, sizeof want, p));
    pclose(p);
    want[64] = '\0';
    char dumppath[128];
    snprintf(dumppath, sizeof dumppath, "%s/a_1.h5", dir);
    struct stat sb;
    cr_assert_eq(stat(dumppath, &sb), 0);
    char size_key[64];
    snprintf(size_key, sizeof size_key, "\"size_bytes\":%lld", (long long)sb.st_size);
    cr_expect(strstr(prov, want) && strstr(prov, size_key), "want %s %s in %s", want, size_key, prov);

    /* re-render: the same Markdown as the job wrote (after the provenance comment) */
    char *out;
    snprintf(cmd, sizeof cmd, "report %s", csv);
    cr_assert_eq(test_run_mdsd(cmd, 0, &out), 0);
    char *job_md = slurp(md);
    cr_expect(!strncmp(out, "<!-- rendered by mdsd report", 28), "%s", out);
    cr_expect_str_eq(strchr(out, '\n') + 1, job_md);
    free(out);
    free(job_md);

    /* selection and order, LaTeX to a file with its own sidecar */
    char tex[128];
    snprintf(tex, sizeof tex, "%s/sel.tex", dir);
    snprintf(cmd, sizeof cmd, "report %s --latex -t 0.7,0.5 -m is --dumps a_1.h5:big_d -o %s", csv, tex);
    run_ok("%s%s%s", cmd, "", "");
    char *t = slurp(tex);
    cr_expect(strstr(t, "$T = 0.7$") && strstr(t, "$T = 0.5$") && strstr(t, "$T = 0.7$") < strstr(t, "$T = 0.5$"),
              "%s", t);
    cr_expect(!strstr(t, "rrs") && !strstr(t, "kseq") && !strstr(t, "small\\_d") && strstr(t, "a\\_1.h5:big\\_d"),
              "%s", t);
    cr_expect(strstr(t, "$^{\\ddagger}$") && strstr(t, "top 3 tokens"), "is-top from the provenance: %s", t);
    free(t);
    char tex_side[160];
    snprintf(tex_side, sizeof tex_side, "%s.provenance.json", tex);
    char *tp = slurp(tex_side);
    cr_expect(strstr(tp, "\"tool\":\"mdsd report\"") && strstr(tp, "\"source_provenance\":{\"tool\":\"mdsd table\""),
              "%s", tp);
    free(tp);
    free(prov);

    /* bad input: exit 1, nothing written */
    char bad[128];
    snprintf(bad, sizeof bad, "%s/bad.csv", dir);
    FILE *f = fopen(bad, "w");
    fputs("dump,temperature,n,scheme,method,alpha,stderr,gap,gap_stderr,significance,positions,samples,exact\n"
          "a,0.7,2,iid,rrs,zz\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "report %s -o %s/bad.md", bad, dir);
    cr_expect_eq(test_run_mdsd(cmd, 1, &out), 1, "%s", out);
    cr_expect(strstr(out, "bad.csv, line 2"), "%s", out);
    free(out);
    snprintf(bad, sizeof bad, "%s/bad.md", dir);
    cr_expect_neq(access(bad, F_OK), 0, "a failed report left %s", bad);
    snprintf(cmd, sizeof cmd, "report %s -t 0.9", csv);
    cr_expect_eq(test_run_mdsd(cmd, 1, &out), 1, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "report %s --standalone", csv);
    cr_expect_eq(test_run_mdsd(cmd, 1, &out), 2, "%s", out);
    free(out);
}

/* Softmax at T in long double, straight from the definition. */
static void softmax_ref(const float *x, size_t V, double T, long double *p)
{
    long double m = x[0], z = 0;
    for (size_t v = 1; v < V; v++)
        m = x[v] > m ? x[v] : m;
    for (size_t v = 0; v < V; v++)
        z += p[v] = expl(((long double)x[v] - m) / T);
    for (size_t v = 0; v < V; v++)
        p[v] /= z;
}

/* Per-position rows: their column means equal the table's cells (exact
 * cells to 1e-9), entropies and TV equal a long-double reference from the
 * raw logits, and sample/position come from the dump. */
Test(outputs, per_position_rows_match_the_table_and_a_reference)
{
    make_dump("pp.h5");
    char csv[128], pp[128], cmd[512];
    snprintf(csv, sizeof csv, "%s/pp.csv", dir);
    snprintf(pp, sizeof pp, "%s/rows.csv", dir);
    snprintf(cmd, sizeof cmd, "table %s/pp.h5 -o %s -t 0.6,1 -d 2,3 -s iid,wor -v rrs,kseq --per-position %s",
             dir, csv, pp);
    run_ok("%s%s%s", cmd, "", "");
    mdsd_csv *rows, *tab;
    mdsd_err err;
    cr_assert_eq(mdsd_csv_read(pp, &rows, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_csv_read(csv, &tab, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(rows->n_rows, 80);
    const char *cols[] = {"dump", "temperature", "row", "sample", "position", "entropy_p", "entropy_q", "tv",
                          "alpha_star_iid_n2", "alpha_star_wor_n2", "rate_rrs_n2", "rate_kseq_n2",
                          "alpha_star_iid_n3", "rate_rrs_n3"};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        cr_assert_geq(mdsd_csv_col(rows, cols[i]), 0, "no column %s", cols[i]);
    /* table cells = column means */
    size_t checked = 0;
    for (size_t r = 0; r < tab->n_rows; r++) {
        double T, n, alpha;
        mdsd_csv_number(tab, r, mdsd_csv_col(tab, "temperature"), &T, NULL);
        mdsd_csv_number(tab, r, mdsd_csv_col(tab, "n"), &n, NULL);
        mdsd_csv_number(tab, r, mdsd_csv_col(tab, "alpha"), &alpha, NULL);
        const char *scheme = mdsd_csv_cell(tab, r, mdsd_csv_col(tab, "scheme"));
        const char *method = mdsd_csv_cell(tab, r, mdsd_csv_col(tab, "method"));
        char col[64];
        if (!strcmp(method, "bound"))
            snprintf(col, sizeof col, "alpha_star_%s_n%d", scheme, (int)n);
        else
            snprintf(col, sizeof col, "rate_%s_n%d", method, (int)n);
        int c = mdsd_csv_col(rows, col);
        cr_assert_geq(c, 0, "no column %s", col);
        double sum = 0;
        size_t k = 0;
        for (size_t i = 0; i < rows->n_rows; i++) {
            double Ti, x;
            mdsd_csv_number(rows, i, mdsd_csv_col(rows, "temperature"), &Ti, NULL);
            if (Ti != T)
                continue;
            mdsd_csv_number(rows, i, c, &x, NULL);
            sum += x, k++;
        }
        cr_assert_eq(k, 40);
        cr_expect_float_eq(sum / 40, alpha, 1e-9, "%s at T = %g: %.12g vs %.12g", col, T, sum / 40, alpha);
        checked++;
    }
    cr_assert_geq(checked, 12);
    /* entropies, TV, sample and position against the raw logits */
    char path[128];
    snprintf(path, sizeof path, "%s/pp.h5", dir);
    mdsd_dump *d;
    cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK, "%s", err.msg);
    size_t V = d->V;
    float *tl = malloc(40 * V * sizeof *tl), *dl = malloc(40 * V * sizeof *dl);
    int tok[40], sid[40], pos[40];
    cr_assert_eq(mdsd_dump_read_logits(d, -1, 0, 40, tl, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_read_logits(d, 0, 0, 40, dl, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_read_meta(d, 0, 40, tok, sid, pos, &err), MDSD_OK, "%s", err.msg);
    long double p[64], q[64];
    for (size_t i = 0; i < rows->n_rows; i++) {
        double T, row, s, ps, hp, hq, tv;
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "temperature"), &T, NULL);
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "row"), &row, NULL);
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "sample"), &s, NULL);
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "position"), &ps, NULL);
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "entropy_p"), &hp, NULL);
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "entropy_q"), &hq, NULL);
        mdsd_csv_number(rows, i, mdsd_csv_col(rows, "tv"), &tv, NULL);
        size_t r = (size_t)row;
        cr_assert_eq((int)s, sid[r]);
        cr_assert_eq((int)ps, pos[r]);
        softmax_ref(tl + r * V, V, T, p);
        softmax_ref(dl + r * V, V, T, q);
        long double Hp = 0, Hq = 0, TV = 0;
        for (size_t v = 0; v < V; v++) {
            Hp -= p[v] > 0 ? p[v] * logl(p[v]) : 0;
            Hq -= q[v] > 0 ? q[v] * logl(q[v]) : 0;
            TV += fabsl(p[v] - q[v]);
        }
        cr_expect_float_eq(hp, (double)Hp, 1e-9);
        cr_expect_float_eq(hq, (double)Hq, 1e-9);
        cr_expect_float_eq(tv, (double)(TV / 2), 1e-9);
    }
    free(tl), free(dl);
    mdsd_dump_close(d);
    mdsd_csv_free(rows);
    mdsd_csv_free(tab);
    /* --resume with nothing to resume writes the same rows (interrupted
     * jobs: scale/per_position_resumes_to_the_same_bytes) */
    char pp2[128];
    snprintf(pp2, sizeof pp2, "%s/rows2.csv", dir);
    snprintf(cmd, sizeof cmd, "table %s/pp.h5 -o %s -t 0.6,1 -d 2,3 -s iid,wor -v rrs,kseq --per-position %s "
             "--resume", dir, csv, pp2);
    run_ok("%s%s%s", cmd, "", "");
    char *a = slurp(pp), *b = slurp(pp2);
    cr_expect_str_eq(a, b);
    free(a), free(b);
    /* still refused with shards */
    char *out;
    snprintf(cmd, sizeof cmd, "table %s/pp.h5 -o %s.agg -d 2 --per-position %s --shard 1/2", dir, csv, pp2);
    cr_expect_eq(test_run_mdsd(cmd, 1, &out), 1, "%s", out);
    cr_expect(strstr(out, "--per-position cannot be combined with --shard"), "%s", out);
    free(out);
}

/* ---- figures: one style per method ---------------------------------------- */

static char *svg_of(const char *csv, const char *args)
{
    static int k;
    char svg[128], cmd[1024];
    snprintf(svg, sizeof svg, "%s/fig%d.svg", dir, k++);
    snprintf(cmd, sizeof cmd, "plot %s %s -o %s", csv, args, svg);
    char *out;
    int rc = test_run_mdsd(cmd, 1, &out);
    cr_assert_eq(rc, 0, "mdsd %s: %s", cmd, out);
    free(out);
    return slurp(svg);
}

/* A results CSV of two drafters, two temperatures, n = 2 and 3. */
static void write_results(const char *path)
{
    FILE *f = fopen(path, "w");
    mdsd_report_csv_header(f, 3);
    const char *methods[][2] = {{"iid", "bound"}, {"iid", "rrs"}, {"iid", "kseq"}, {"wor", "bound"}, {"wor", "rrsw"}};
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++)
            for (size_t n = 2; n <= 3; n++)
                for (int m = 0; m < 5; m++) {
                    mdsd_report_row r = row(d ? "x.h5:big" : "x.h5:small", 0.5 + 0.5 * t, n, methods[m][0],
                                            methods[m][1], 0.6 + 0.1 * t + 0.02 * d - 0.01 * m, true);
                    if (strcmp(methods[m][1], "bound")) {
                        r.n_per_draft = n;
                        for (size_t j = 0; j < n; j++)
                            r.per_draft[j] = 0.5 / (double)(j + 1);
                    }
                    mdsd_report_csv_row(f, &r, 3);
                }
    fclose(f);
}

/* k-Seq is vermillion in every kind of figure, whatever else is drawn (it
 * used to take the colour of its series index); rrs is blue; alpha* is black;
 * legends say α*; several dumps overlay with their names in the legend. */
Test(outputs, every_figure_draws_a_method_in_its_fixed_style)
{
    char csv[128];
    snprintf(csv, sizeof csv, "%s/res.csv", dir);
    write_results(csv);
    const char *kseq = "rgb(213,  94,   0)", *rrs = "rgb(  0, 114, 178)";
    const char *args[] = {"--kind vs-temperature --n 3", "--kind vs-drafts --temperature 1",
                          "--kind gap --n 2 --method kseq", "--kind per-draft --n 3 --temperature 0.5",
                          "--kind vs-temperature --n 3 --method kseq,rrsw --size column",
                          "--kind vs-drafts --method kseq --size full --legend top-left"};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        char *svg = svg_of(csv, args[i]);
        cr_expect(strstr(svg, kseq), "%s: k-Seq not in its colour", args[i]);
        bool has_rrs = !strstr(args[i], "--method");
        cr_expect(has_rrs == (strstr(svg, rrs) != NULL), "%s: rrs colour %s", args[i], has_rrs ? "missing" : "leaked");
        if (strstr(args[i], "vs-") && !strstr(args[i], "--method"))
            cr_expect(strstr(svg, "α* iid") || strstr(svg, "α* wor"), "%s: no α* legend", args[i]);
        free(svg);
    }
    char *svg = svg_of(csv, "--kind vs-temperature --n 2 --dumps all --method kseq");
    cr_expect(strstr(svg, "x.h5:small: kseq (iid)") && strstr(svg, "x.h5:big: kseq (iid)"), "overlay legend");
    cr_expect(strstr(svg, "stroke-dasharray"), "the second dump is dashed");
    free(svg);
    /* vector output and the figure's provenance */
    char pdf[128], cmd[512], *out;
    snprintf(pdf, sizeof pdf, "%s/f.pdf", dir);
    snprintf(cmd, sizeof cmd, "plot %s --kind gap --n 3 --size column -o %s", csv, pdf);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    free(out);
    char *head = slurp(pdf);
    cr_expect(!strncmp(head, "%PDF", 4));
    free(head);
    char side[160];
    snprintf(side, sizeof side, "%s.provenance.json", pdf);
    char *prov = slurp(side);
    cr_expect(strstr(prov, "\"tool\":\"mdsd plot\"") && strstr(prov, "\"source_provenance\":null"), "%s", prov);
    free(prov);
    snprintf(cmd, sizeof cmd, "plot %s --kind gap -o %s --size a4", csv, pdf);
    cr_expect_eq(test_run_mdsd(cmd, 1, &out), 2, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "plot %s --kind gap -o %s --legend middle", csv, pdf);
    cr_expect_eq(test_run_mdsd(cmd, 1, &out), 2, "%s", out);
    free(out);
}

/* ---- sweeps for one (p, q) ----------------------------------------------- */

/* The number after "key": in text, or NAN. */
static double json_number(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = text ? strstr(text, pat) : NULL;
    return at ? strtod(at + strlen(pat), NULL) : NAN;
}

/* Every entry of `mdsd bound -n 1:4 --scheme all` and `mdsd accept -n 2:3
 * --verifier all` equals the single-combination command's value, bit for
 * bit; combinations that do not apply are listed as skipped, exit 0. */
Test(outputs, sweeps_equal_the_single_runs)
{
    const char *pq = "-p 0.35,0.25,0.2,0.1,0.06,0.04 -q 0.1,0.3,0.25,0.15,0.12,0.08";
    char cmd[512], *sweep, *one;
    snprintf(cmd, sizeof cmd, "bound %s -n 1:4 --scheme all --json", pq);
    cr_assert_eq(test_run_mdsd(cmd, 0, &sweep), 0, "%s", sweep);
    const char *schemes[] = {"iid", "wor", "greedy", "hub", "cps"};
    size_t evaluated = 0;
    for (int n = 1; n <= 4; n++)
        for (int k = 0; k < 5; k++) {
            char key[64];
            snprintf(key, sizeof key, "{\"n\":%d,\"scheme\":\"%s\"", n, schemes[k]);
            const char *entry = strstr(sweep, key);
            cr_assert_not_null(entry, "no entry %s in %s", key, sweep);
            snprintf(cmd, sizeof cmd, "bound %s -n %d -s %s --json", pq, n, schemes[k]);
            int rc = test_run_mdsd(cmd, 0, &one);
            bool skipped = strstr(entry, "\"skipped\"") && strstr(entry, "\"skipped\"") < strchr(entry, '}');
            if (rc != 0) {
                cr_expect(skipped, "%s fails alone (exit %d) but not in the sweep", key, rc);
            } else {
                cr_expect(!skipped, "%s skipped", key);
                double a = json_number(entry, "alpha"), b = json_number(one, "alpha");
                cr_expect(a == b, "%s: sweep %.17g, alone %.17g", key, a, b);
                evaluated++;
            }
            free(one);
        }
    cr_expect_geq(evaluated, 15);
    free(sweep);

    snprintf(cmd, sizeof cmd, "accept %s -n 2:3 --verifier all --json", pq);
    cr_assert_eq(test_run_mdsd(cmd, 0, &sweep), 0, "%s", sweep);
    const char *verifiers[] = {"rrs", "rrsw", "kseq", "spechub", "greedy", "is", "otm"};
    evaluated = 0;
    for (int n = 2; n <= 3; n++)
        for (int k = 0; k < 7; k++) {
            char key[64];
            snprintf(key, sizeof key, "\"n\":%d,\"scheme\":", n);
            const char *entry = sweep;
            char vkey[64];
            snprintf(vkey, sizeof vkey, "\"verifier\":\"%s\"", verifiers[k]);
            /* the entry with this n and verifier */
            for (entry = strstr(sweep, key); entry; entry = strstr(entry + 1, key)) {
                const char *end = strchr(entry, '}'), *v = strstr(entry, vkey);
                if (v && v < end)
                    break;
            }
            cr_assert_not_null(entry, "no entry n = %d %s", n, verifiers[k]);
            snprintf(cmd, sizeof cmd, "accept %s -n %d -v %s --json", pq, n, verifiers[k]);
            int rc = test_run_mdsd(cmd, 0, &one);
            const char *end = strchr(entry, '}');
            bool skipped = strstr(entry, "\"skipped\"") && strstr(entry, "\"skipped\"") < end;
            if (rc != 0) {
                cr_expect(skipped, "n = %d %s fails alone but not in the sweep", n, verifiers[k]);
            } else {
                double a = json_number(entry, "alpha"), b = json_number(one, "alpha");
                cr_expect(a == b, "n = %d %s: sweep %.17g, alone %.17g", n, verifiers[k], a, b);
                snprintf(cmd, sizeof cmd, "bound %s -n %d -s %s --json", pq, n,
                         !strcmp(verifiers[k], "rrsw") ? "wor" : !strcmp(verifiers[k], "spechub") ? "hub"
                         : !strcmp(verifiers[k], "greedy") ? "greedy" : "iid");
                char *star;
                cr_assert_eq(test_run_mdsd(cmd, 0, &star), 0);
                cr_expect(json_number(entry, "alpha_star") == json_number(star, "alpha"), "n = %d %s alpha*", n,
                          verifiers[k]);
                free(star);
                evaluated++;
            }
            free(one);
        }
    cr_expect_geq(evaluated, 13);
    free(sweep);
    /* one table, skipped rows named; a failing combination exits 1 */
    snprintf(cmd, sizeof cmd, "accept %s -n 2:3 -v rrs,spechub", pq);
    cr_assert_eq(test_run_mdsd(cmd, 0, &sweep), 0, "%s", sweep);
    cr_expect(strstr(sweep, "spechub   skipped: hub") && strstr(sweep, "rrs       0."), "%s", sweep);
    free(sweep);
    snprintf(cmd, sizeof cmd, "accept -p @/nonexistent -q 0.5,0.5 -n 2:3 -v all");
    cr_expect_eq(test_run_mdsd(cmd, 1, &sweep), 1, "%s", sweep);
    free(sweep);
    snprintf(cmd, sizeof cmd, "bound %s -n 2:3 -s all --method lp-full", pq);
    cr_expect_eq(test_run_mdsd(cmd, 1, &sweep), 2, "%s", sweep);
    free(sweep);
}

/* ---- long jobs ------------------------------------------------------------- */

/* The rate counts only rows computed in this run: 1000 rows skipped on
 * resume and 10 computed in 10 s show 1.0/s (not 101/s) and an ETA from
 * that rate; finishing erases the line. */
Test(outputs, progress_rate_ignores_resumed_rows_and_clears_its_line)
{
    char path[128];
    snprintf(path, sizeof path, "%s/progress.txt", dir);
    cr_assert_not_null(freopen(path, "w", stderr));
    mdsd_progress pr;
    mdsd_progress_start(&pr, "job", 1020);
    pr.enabled = true;
    pr.started -= 10.0;
    mdsd_progress_skip(&pr, 1000);
    pr.last_draw = 0;
    mdsd_progress_add(&pr, 10);
    mdsd_progress_finish(&pr);
    fflush(stderr);
    char *text = slurp(path);
    const char *last = NULL;
    for (const char *p = strstr(text, "job ["); p; p = strstr(p + 1, "job ["))
        last = p;
    cr_assert_not_null(last, "%s", text);
    cr_expect(strstr(last, "1010/1020") && strstr(last, " 1.0/s") && strstr(last, "eta 10s"), "%s", last);
    size_t len = strlen(text);
    cr_expect(len > 4 && !strcmp(text + len - 4, "\r\033[K"), "the line is not cleared at the end");
    free(text);
}

/* Monte Carlo at a cost: warned about up front, naming the verifier, V and the trials. */
Test(outputs, monte_carlo_cost_is_announced_before_the_job)
{
    char dump[128], cmd[512], *out;
    snprintf(dump, sizeof dump, "%s/mc.h5", dir);
    run_ok("toy --family zipf --vocab 2000 --positions 8 --seed 2 -o %s%s%s", dump, "", "");
    snprintf(cmd, sizeof cmd, "table %s -o %s/mc.csv -d 5 -v rrs,rrsw --trials 200", dump, dir);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    cr_expect(strstr(out, "verifier rrsw at n = 5 has no exact form at V = 2000 and runs by Monte Carlo, 200 "
                          "trials per position: up to about"), "%s", out);
    cr_expect(!strstr(out, "verifier rrs at"), "an exact verifier was announced: %s", out);
    free(out);
}

/* SIGINT: finished units stay in OUTPUT.partial, the message says to rerun
 * with --resume, exit 130, no results file. The first dump's unit finishes at
 * once; the second (rrsw, n = 5, by Monte Carlo at V = 4000) is still running when the
 * signal comes, which the test waits for by watching the .partial file. */
Test(outputs, interrupt_keeps_finished_units_and_says_how_to_resume, .timeout = 120)
{
    char small[128], big[128], csv[128], partial[160], cmd[1024];
    snprintf(small, sizeof small, "%s/small.h5", dir);
    snprintf(big, sizeof big, "%s/big.h5", dir);
    snprintf(csv, sizeof csv, "%s/int.csv", dir);
    snprintf(partial, sizeof partial, "%s.partial", csv);
    run_ok("toy --family zipf --vocab 50 --positions 4 --seed 2 -o %s%s%s", small, "", "");
    run_ok("toy --family zipf --vocab 4000 --positions 2000 --seed 3 -o %s%s%s", big, "", "");
    snprintf(cmd, sizeof cmd, "%s table %s %s -o %s -d 5 -v rrsw --trials 100000 --threads 1 > %s/int.out 2>&1 & "
             "pid=$!; for i in $(seq 600); do grep -q '^#done' %s 2>/dev/null && break; sleep 0.1; done; "
             "kill -INT $pid; wait $pid; echo $? > %s/int.rc", test_mdsd_bin(), small, big, csv, dir, partial, dir);
    cr_assert_eq(system(cmd), 0);
    char rc_path[128], out_path[128];
    snprintf(rc_path, sizeof rc_path, "%s/int.rc", dir);
    snprintf(out_path, sizeof out_path, "%s/int.out", dir);
    char *rc = slurp(rc_path), *out = slurp(out_path);
    cr_expect_eq(atoi(rc), 130, "exit %s: %s", rc, out);
    cr_expect(strstr(out, "mdsd table: interrupted;") && strstr(out, "finished units are kept in") &&
              strstr(out, "rerun the same command with --resume"), "%s", out);
    cr_expect_eq(access(csv, F_OK), -1, "a results file after an interrupt");
    char *part = slurp(partial);
    cr_expect(strstr(part, "#done small.h5"), "%s", part);
    free(part), free(rc), free(out);
}

/* ---- analysis/ recipes ------------------------------------------------------ */

/* Each recipe is one command on a user's dump that writes its results CSV,
 * tables (the LaTeX compiles) and figures. */
Test(outputs, analysis_recipes_write_their_tables_and_figures, .timeout = 300)
{
    make_dump("user_dump.h5");
    const char *recipes[][2] = {{"verifiers", "verifiers.csv verifiers.md verifiers.tex per-position.csv "
                                              "verifiers-vs-drafts.png verifiers-per-draft.png"},
                                {"sweep", "sweep.csv sweep.md sweep.tex vs-temperature.png vs-drafts.png "
                                          "per-draft.png gap.png"},
                                {"drafters", "drafters.csv drafters.md drafters.tex drafters-vs-temperature.png "
                                             "drafters-vs-drafts.png"}};
    for (int r = 0; r < 3; r++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cd %s && MDSD=%s TRIALS=50 TEMPS=0.5,1 DRAFTS=2,3 T=1 N=3 "
                 "sh %s/analysis/%s.sh user_dump.h5 out-%s > %s.log 2>&1", dir, test_mdsd_bin(),
                 getenv("PWD"), recipes[r][0], recipes[r][0], recipes[r][0]);
        int status = system(cmd);
        char log[160];
        snprintf(log, sizeof log, "%s/%s.log", dir, recipes[r][0]);
        char *text = slurp(log);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: %s", recipes[r][0], text);
        free(text);
        char files[512], *save = NULL;
        snprintf(files, sizeof files, "%s", recipes[r][1]);
        for (char *f = strtok_r(files, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
            char path[256];
            struct stat sb;
            snprintf(path, sizeof path, "%s/out-%s/%s", dir, recipes[r][0], f);
            cr_expect(stat(path, &sb) == 0 && sb.st_size > 100, "%s: no %s", recipes[r][0], f);
        }
        /* the LaTeX compiles inside a document */
        char name[64], doc[256];
        snprintf(name, sizeof name, "doc-%s", recipes[r][0]);
        snprintf(doc, sizeof doc, "%s/%s.tex", dir, name);
        FILE *f = fopen(doc, "w");
        fprintf(f, "\\documentclass{article}\n\\usepackage{" MDSD_REPORT_LATEX_PACKAGES "}\n"
                   "\\begin{document}\n\\input{out-%s/%s.tex}\n\\end{document}\n", recipes[r][0],
                recipes[r][0]);
        fclose(f);
        cr_expect_eq(compile_latex(name), 0, "%s.tex does not compile", recipes[r][0]);
    }
    /* the drafter comparison has a column per drafter */
    char md[160];
    snprintf(md, sizeof md, "%s/out-drafters/drafters.md", dir);
    char *text = slurp(md);
    cr_expect(strstr(text, "| scheme | method | user\\_dump.h5:small\\_d | user\\_dump.h5:big\\_d |") ||
              strstr(text, "| scheme | method | user\\_dump.h5:big\\_d | user\\_dump.h5:small\\_d |"), "%s", text);
    free(text);
}

/* The block-efficiency recipe on the shipped tree dump: its CSV, tables (the
 * LaTeX compiles) and its three figures (mdsd plot's), in PDF (vector) at the
 * column preset. */
Test(outputs, analysis_block_recipe_writes_its_tables_and_figures, .timeout = 300)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && MDSD=%s COSTS=0,0.2 VERIFIERS=sd,rrs SIZE=column FORMAT=pdf "
             "sh %s/analysis/block.sh %s/data/kjv-trees.h5 out-block > block.log 2>&1", dir, test_mdsd_bin(),
             getenv("PWD"), getenv("PWD"));
    int status = system(cmd);
    char log[160];
    snprintf(log, sizeof log, "%s/block.log", dir);
    char *text = slurp(log);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "block: %s", text);
    /* the figures are mdsd plot's block kinds (tests/test_plot_block.c checks their data) */
    cr_expect(strstr(text, "plot out-block/block.csv --kind block-speedup --size column -o "
                           "out-block/block-speedup.pdf"), "%s", text);
    free(text);
    const char *files[] = {"block.csv", "block.md", "block.tex", "block-vs-depth.pdf", "block-speedup.pdf",
                           "block-reach.pdf", "block-vs-depth.pdf.provenance.json",
                           "block-speedup.pdf.provenance.json", "block-reach.pdf.provenance.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[256];
        struct stat sb;
        snprintf(path, sizeof path, "%s/out-block/%s", dir, files[i]);
        cr_expect(stat(path, &sb) == 0 && sb.st_size > 100, "no %s", files[i]);
    }
    char pdf_head[8] = {0}, path[256];
    snprintf(path, sizeof path, "%s/out-block/block-vs-depth.pdf", dir);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_expect_eq(fread(pdf_head, 1, 5, f), 5);
    fclose(f);
    cr_expect_str_eq(pdf_head, "%PDF-");
    /* the figure's provenance carries the CSV's */
    snprintf(path, sizeof path, "%s/out-block/block-speedup.pdf.provenance.json", dir);
    char *side = slurp(path);
    cr_expect(strstr(side, "{\"tool\":\"mdsd plot\"") &&
              strstr(side, "\"source_provenance\":{\"tool\":\"mdsd block\""), "%s", side);
    free(side);
    /* no temporary figure left behind */
    snprintf(cmd, sizeof cmd, "ls -a %s/out-block | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    char count[16] = {0};
    cr_assert_not_null(fgets(count, sizeof count, p));
    pclose(p);
    cr_expect_eq(atoi(count), 0, "temporary files left in out-block");
    char doc[256];
    snprintf(doc, sizeof doc, "%s/doc-block.tex", dir);
    f = fopen(doc, "w");
    fprintf(f, "\\documentclass{article}\n\\usepackage{" MDSD_REPORT_LATEX_PACKAGES "}\n"
               "\\begin{document}\n"
               "\\input{out-block/block.tex}\n\\end{document}\n");
    fclose(f);
    cr_expect_eq(compile_latex("doc-block"), 0, "block.tex does not compile");
    /* a missing dump is refused naming it, with nothing written */
    snprintf(cmd, sizeof cmd, "cd %s && MDSD=%s sh %s/analysis/block.sh nope.h5 out-nope > nope.log 2>&1",
             dir, test_mdsd_bin(), getenv("PWD"));
    status = system(cmd);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    snprintf(path, sizeof path, "%s/out-nope", dir);
    cr_expect_eq(access(path, F_OK), -1, "a missing dump left an output folder");
}

/* The block job's CSV has its provenance too: tool, the command as typed,
 * is_top and the dump's size and SHA-256; a merge of its shards says "mdsd
 * merge" and lists the same dump. */
Test(outputs, block_results_carry_provenance, .timeout = 120)
{
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "cd %s && %s block %s/data/kjv-trees.h5 --verifiers sd,is --is-top 7 -o blk.csv && "
             "%s block %s/data/kjv-trees.h5 --verifiers sd,is --is-top 7 --shard 1/2 -o s1.agg && "
             "%s block %s/data/kjv-trees.h5 --verifiers sd,is --is-top 7 --shard 2/2 -o s2.agg && "
             "%s merge -o merged.csv s2.agg s1.agg && cmp blk.csv merged.csv && "
             "cat blk.csv.provenance.json && echo && cat merged.csv.provenance.json && "
             "sha256sum %s/data/kjv-trees.h5", dir, test_mdsd_bin(), getenv("PWD"), test_mdsd_bin(),
             getenv("PWD"), test_mdsd_bin(), getenv("PWD"), test_mdsd_bin(), getenv("PWD"));
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    char typed[512], sha[80];
    snprintf(typed, sizeof typed, "\"tool\":\"mdsd block\",\"version\":\"%s\",\"command\":[\"mdsd\",\"block\","
             "\"%s/data/kjv-trees.h5\",\"--verifiers\",\"sd,is\"", MDSD_VERSION, getenv("PWD"));
    const char *last = strrchr(out, '\n');
    cr_assert_not_null(last);
    const char *line = out + strlen(out);
    while (line > out && line[-1] == '\n')
        line--;
    while (line > out && line[-1] != '\n')
        line--;
    snprintf(sha, sizeof sha, "\"sha256\":\"%.64s\"", line);
    cr_expect(strstr(out, typed) && strstr(out, "\"is_top\":7"), "%s", out);
    cr_expect(strstr(out, sha) && strstr(strstr(out, sha) + 1, sha), "both sidecars name the dump's SHA-256: %s", out);
    cr_expect(strstr(out, "\"tool\":\"mdsd merge\""), "%s", out);
    free(out);
}

/* ---- mdsd-runner import (tests/python/test_import.py) ---------------------- */

Test(outputs, runner_import_from_npy_npz_and_safetensors, .timeout = 300)
{
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "cd %s && MDSD_BIN=%s PYTHONPATH=src:src/python:tests/python /usr/bin/python3 -m unittest "
             "test_import 2>&1", getenv("PWD"), test_mdsd_bin());
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    out = calloc(1, 1 << 16);
    size_t n = fread(out, 1, (1 << 16) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
    cr_expect(strstr(out, "Ran 6 tests") && !strstr(out, "skipped"), "%s", out);
    free(out);
}
