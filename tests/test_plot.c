/* mdsd plot and the CSV reader it uses: every kind draws a non-empty figure
 * in each format from a small results file; bad input leaves no file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "report.h"

static const char results[] =
    "dump,temperature,n,scheme,method,alpha,stderr,positions,gap,gap_stderr,per_draft_1,per_draft_2,per_draft_3\n"
    "toy.h5,0.5,3,iid,bound,0.80,0,1000,,,,,\n"
    "toy.h5,0.5,3,iid,rrs,0.74,0.01,1000,-0.06,0.004,0.6,0.25,0.1\n"
    "toy.h5,1.0,3,iid,bound,0.70,0,1000,,,,,\n"
    "toy.h5,1.0,3,iid,rrs,0.62,0.012,1000,-0.08,0.005,0.5,0.2,0.1\n"
    "toy.h5,1.0,3,wor,bound,0.74,0,1000,,,,,\n"
    "toy.h5,1.0,3,wor,rrsw,0.69,0.011,1000,-0.05,0.004,0.5,0.3,0.17\n"
    "toy.h5,0.5,3,wor,rrsw,0.79,0.01,1000,-0.04,0.004,0.6,0.28,0.15\n"
    "toy.h5,1.0,2,iid,bound,0.62,0,1000,,,,,\n"
    "toy.h5,1.0,2,iid,rrs,0.57,0.012,1000,-0.05,0.005,0.5,0.2,\n"
    "\"other, dump.h5\",1.0,2,iid,rrs,0.5,0.01,10,-0.1,0.01,0.4,0.1,\n";

static char *make_dir(void)
{
    char *dir = strdup("/tmp/mdsd-test-plot-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void rm_tree(char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* The first bytes of a file and its size (-1 if absent). */
static long head(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return size;
}

static int count_files(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    cr_assert_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

Test(plot, every_kind_draws_a_figure)
{
    char *dir = make_dir(), csv[600], args[1500], out_path[600], buf[16], *out;
    snprintf(csv, sizeof csv, "%s/results.csv", dir);
    write_file(csv, results);
    const char *kinds[] = {"vs-temperature", "vs-drafts", "per-draft", "gap"};
    for (int k = 0; k < 4; k++) {
        snprintf(out_path, sizeof out_path, "%s/%s.png", dir, kinds[k]);
        snprintf(args, sizeof args, "plot %s --kind %s --dump toy.h5 -o %s", csv, kinds[k], out_path);
        cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s: %s", kinds[k], out);
        free(out);
        long size = head(out_path, buf, sizeof buf);
        cr_assert_gt(size, 2000, "%s: %ld bytes", kinds[k], size);
        cr_assert(!memcmp(buf, "\x89PNG", 4), "%s is not a PNG", kinds[k]);
    }
    snprintf(out_path, sizeof out_path, "%s/t.svg", dir);
    snprintf(args, sizeof args, "plot %s --kind vs-temperature --n 3 --title 'my \"title\"' -o %s", csv, out_path);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s", out);
    free(out);
    char svg[4096];
    cr_assert_gt(head(out_path, svg, sizeof svg), 1000);
    cr_assert(strstr(svg, "<svg"), "%s", svg);
    snprintf(out_path, sizeof out_path, "%s/t.pdf", dir);
    snprintf(args, sizeof args, "plot %s --kind vs-drafts --dump 'other, dump.h5' -o %s", csv, out_path);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s", out);
    free(out);
    cr_assert_gt(head(out_path, buf, sizeof buf), 1000);
    cr_assert(!memcmp(buf, "%PDF", 4));
    /* several n and no --n: a note names the choice */
    snprintf(args, sizeof args, "plot %s --kind gap -o %s/g.png", csv, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s", out);
    cr_assert(strstr(out, "several dumps; plotting toy.h5") && strstr(out, "several n; plotting n = 3"), "%s", out);
    free(out);
    /* the CSV, 7 figures and their 7 FILE.provenance.json */
    cr_assert_eq(count_files(dir), 15, "temporary files left behind");
    rm_tree(dir);
}

Test(plot, bad_input_leaves_no_file)
{
    char *dir = make_dir(), csv[600], bad[600], args[1500], *out;
    snprintf(csv, sizeof csv, "%s/results.csv", dir);
    write_file(csv, results);
    snprintf(args, sizeof args, "plot %s --kind vs-temperature --scheme cps -o %s/x.png", csv, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "--scheme: 'cps' matches no row"), "%s", out);
    free(out);
    snprintf(bad, sizeof bad, "%s/nocol.csv", dir);
    write_file(bad, "dump,temperature,n,scheme,method,stderr\nd,1,2,iid,rrs,0.1\n");
    snprintf(args, sizeof args, "plot %s --kind vs-drafts -o %s/x.png", bad, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "no column 'alpha'"), "%s", out);
    free(out);
    snprintf(bad, sizeof bad, "%s/nan.csv", dir);
    write_file(bad, "dump,temperature,n,scheme,method,alpha,stderr\nd,1,2,iid,rrs,0.5,0.1\nd,1,2,iid,rrs,high,0.1\n");
    snprintf(args, sizeof args, "plot %s --kind vs-drafts -o %s/x.png", bad, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "line 3, column alpha: 'high' is not a number"), "%s", out);
    free(out);
    snprintf(bad, sizeof bad, "%s/ragged.csv", dir);
    write_file(bad, "dump,temperature,n,scheme,method,alpha,stderr\nd,1,2,iid\n");
    snprintf(args, sizeof args, "plot %s --kind vs-drafts -o %s/x.png", bad, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "line 2 has 4 fields, the header has 7"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "plot %s --kind vs-drafts -o %s/x.gif", csv, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "extension must be .png, .svg or .pdf"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "plot %s --kind vs-drafts --scripts %s -o %s/x.png", csv, dir, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "no gnuplot script"), "%s", out);
    free(out);
    /* a script that fails inside gnuplot: its message is passed on */
    snprintf(bad, sizeof bad, "%s/vs-drafts.gp", dir);
    write_file(bad, "set terminal @term\nset output outfile\nplot nosuchfunction(x)\n");
    snprintf(args, sizeof args, "plot %s --kind vs-drafts --scripts %s -o %s/x.png", csv, dir, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "gnuplot failed") && strstr(out, "undefined function"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "plot %s/none.csv --kind gap -o %s/x.png", dir, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 1);
    cr_assert(strstr(out, "cannot open"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "plot %s --kind histogram -o %s/x.png", csv, dir);
    cr_assert_eq(test_run_mdsd(args, 1, &out), 2);
    free(out);
    /* results.csv and the four bad inputs written above, nothing else */
    cr_assert_eq(count_files(dir), 5);
    rm_tree(dir);
}

Test(csv, quoted_fields_numbers_and_writing)
{
    char *dir = make_dir(), path[600];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    write_file(path, "a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",1.5\n\n,2e-3,\n");
    mdsd_csv *t;
    mdsd_err err;
    cr_assert_eq(mdsd_csv_read(path, &t, &err), MDSD_OK, "%s", err.msg);
    cr_assert(t->n_cols == 3 && t->n_rows == 2);
    cr_assert_str_eq(mdsd_csv_cell(t, 0, 0), "x, y");
    cr_assert_str_eq(mdsd_csv_cell(t, 0, 1), "say \"hi\"");
    cr_assert_eq(t->line[1], 4);
    double x;
    cr_assert_eq(mdsd_csv_number(t, 0, mdsd_csv_col(t, "c"), &x, &err), MDSD_OK);
    cr_assert_eq(x, 1.5);
    cr_assert_eq(mdsd_csv_number(t, 1, 0, &x, &err), MDSD_OK);
    cr_assert(x != x, "empty is NaN");
    cr_assert_eq(mdsd_csv_number(t, 0, 0, &x, &err), MDSD_EFORMAT);
    cr_assert(strstr(err.msg, "line 2, column a: 'x, y' is not a number"), "%s", err.msg);
    cr_assert_eq(mdsd_csv_col(t, "d"), -1);
    mdsd_csv_free(t);
    write_file(path, "a,b\n\"open,1\n");
    cr_assert_eq(mdsd_csv_read(path, &t, &err), MDSD_EFORMAT);
    cr_assert(strstr(err.msg, "line 2: unterminated quote in field 1"), "%s", err.msg);
    write_file(path, "");
    cr_assert_eq(mdsd_csv_read(path, &t, &err), MDSD_EFORMAT);
    cr_assert(strstr(err.msg, "empty file"), "%s", err.msg);
    /* writing quotes what needs it, and reads back */
    FILE *f = fopen(path, "w");
    const char *fields[] = {"plain", "with,comma", "with \"quote\""};
    for (int k = 0; k < 3; k++) {
        if (k)
            fputc(',', f);
        mdsd_csv_write_field(f, fields[k]);
    }
    fputc('\n', f);
    fclose(f);
    cr_assert_eq(mdsd_csv_read(path, &t, &err), MDSD_OK);
    for (int k = 0; k < 3; k++)
        cr_assert_str_eq(t->header[k], fields[k]);
    mdsd_csv_free(t);
    rm_tree(dir);
}

/* The CSV that report.h writes (the batch table job's output) plots as is. */
Test(plot, plots_the_csv_written_by_report_h)
{
    char *dir = make_dir(), csv[600], args[1500], *out;
    snprintf(csv, sizeof csv, "%s/report.csv", dir);
    FILE *f = fopen(csv, "w");
    mdsd_report_csv_header(f, 3);
    const char *methods[] = {"bound", "rrs", "kseq"};
    for (int t = 0; t < 3; t++)
        for (int m = 0; m < 3; m++) {
            mdsd_report_row r = {.temperature = 0.5 + 0.25 * t, .n = 3, .alpha = 0.9 - 0.05 * m - 0.1 * t,
                                 .se = m ? 0.01 : 0.0, .positions = 100, .samples = 4, .exact = true,
                                 .n_per_draft = m ? 3 : 0, .per_draft = {0.5, 0.2, 0.1}};
            strcpy(r.dump, "toy-v1.h5"); /* report.c does not quote commas (yet) */
            strcpy(r.scheme, "iid");
            strcpy(r.method, methods[m]);
            r.gap = m ? -0.05 * m : NAN;
            r.gap_se = m ? 0.004 : NAN;
            mdsd_report_csv_row(f, &r, 3);
        }
    fclose(f);
    const char *kinds[] = {"vs-temperature", "per-draft", "gap"};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "plot %s --kind %s -o %s/%s.svg", csv, kinds[k], dir, kinds[k]);
        cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s: %s", kinds[k], out);
        free(out);
        char path[700], svg[2048];
        snprintf(path, sizeof path, "%s/%s.svg", dir, kinds[k]);
        cr_assert_gt(head(path, svg, sizeof svg), 1000);
    }
    rm_tree(dir);
}

/* The style table's rules, evaluated by gnuplot itself: methods outside the table get
 * styles of their own (is-top5 and is-top50 were drawn alike), alpha* is never solid
 * when dumps are overlaid, and markers are scaled down for the PDF presets. */
Test(plot, style_rules)
{
    char *out;
    cr_assert_eq(test_run_shell("gnuplot -e \"othermethods='rrs is-top5 kseq is-top50'\" "
                                "-e \"load 'plots/styles.gp'; print method_lt('is-top5'), "
                                "method_lt('is-top50'), method_lt('rrs'), method_lt('kseq'); "
                                "print bound_dump_dt('1'), bound_dump_dt('2'), dump_dt('1'); "
                                "print pointscale\" 2>&1", &out), 0, "%s", out);
    cr_assert(strstr(out, "22 24 2 4\n2 3 1\n1.0\n"), "%s", out);
    free(out);
    cr_assert_eq(test_run_shell("gnuplot -e \"pointscale=0.4\" -e \"load 'plots/styles.gp'; "
                                "show linetype 2\" 2>&1", &out), 0, "%s", out);
    cr_assert(strstr(out, "pointsize 0.520"), "%s", out);
    free(out);
}

/* mdsd plot passes the other methods and the PDF presets' marker scale; a fake gnuplot
 * first on PATH records the -e it was given, then runs the real one. */
Test(plot, passes_other_methods_and_the_pdf_marker_scale)
{
    char *dir = make_dir(), cmd[4096], *out;
    snprintf(cmd, sizeof cmd,
             "set -e; cd %s; mkdir bin; real=$(command -v gnuplot); "
             "printf '#!/bin/sh\\necho \"$@\" >> %s/args\\nexec %%s \"$@\"\\n' \"$real\" > bin/gnuplot; "
             "chmod +x bin/gnuplot; "
             "printf 'dump,temperature,n,scheme,method,alpha,stderr,positions\\n"
             "d,1,2,iid,bound,0.9,0,10\\nd,1,2,iid,is-top5,0.8,0.01,10\\nd,1,2,iid,rrs,0.7,0.01,10\\n"
             "d,1,2,iid,is-top50,0.85,0.01,10\\nd,1,3,iid,is-top5,0.82,0.01,10\\n' > r.csv; "
             "PATH=%s/bin:$PATH %s plot r.csv --kind vs-drafts --size column -o c.pdf; "
             "PATH=%s/bin:$PATH %s plot r.csv --kind vs-drafts --size full -o f.png; "
             "grep -o \"pointscale=[0-9.]*\\|othermethods='[^']*'\" args",
             dir, dir, dir, test_mdsd_bin(), dir, test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    cr_assert(strstr(out, "pointscale=0.4\nothermethods='is-top5 rrs is-top50'\npointscale=1\n"
                          "othermethods='is-top5 rrs is-top50'\n"), "%s", out);
    free(out);
    rm_tree(dir);
}

/* Discrete axes (n, j, L) span the data's values and half a step either side, ticks at
 * whole numbers: data at n = 2..4 gives [1.5, 4.5], not gnuplot's [1, 5]. */
Test(plot, discrete_axes_span_the_data)
{
    char *dir = make_dir(), cmd[4096], *out;
    snprintf(cmd, sizeof cmd,
             "cd %s && printf '\"rrs (iid)\"\\n2 0.6 0.01\\n3 0.7 0.01\\n4 0.75 0.01\\n' > d && "
             "printf '\"alpha* iid\"\\n2 0.7 0\\n4 0.8 0\\n' > b && "
             "for s in vs-drafts per-draft; do gnuplot -e \"datafile='d'; boundfile='b'; nseries=1; "
             "nbounds=1; outfile='x.png'; term='pngcairo'; plottitle='t'; stylefile='%s/plots/styles.gp'; "
             "seriesmethods='rrs'; seriesdumps='1'; boundschemes='iid'; bounddumps='1'; overlay=0; "
             "keyspec='off'\" %s/plots/$s.gp -e 'print GPVAL_X_MIN, GPVAL_X_MAX'; done 2>&1",
             dir, getenv("PWD"), getenv("PWD"));
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    cr_assert(strstr(out, "1.5 4.5\n1.5 4.5\n"), "%s", out);
    free(out);
    rm_tree(dir);
}

/* One interval convention for every figure (styles.gp's ci_z, ci_note): each script's
 * error bars are ci_z = 1.96 s.e. (95% CI), as the alpha* bands are, and each says so
 * in its key's title, or a corner label with the key off. Shown once to catch a planted
 * error: gap.gp's bars back at 1:2:3 (+-1 s.e.) fail the first check. */
Test(plot, one_stated_interval_convention)
{
    const char *scripts[] = {"vs-temperature", "vs-drafts", "gap", "block-depth"};
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
        char path[256], *text;
        snprintf(path, sizeof path, "plots/%s.gp", scripts[i]);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f, "%s", path);
        text = calloc(1, 1 << 16);
        cr_assert(fread(text, 1, (1 << 16) - 1, f) > 0);
        fclose(f);
        cr_expect(strstr(text, "using 1:2:(ci_z * $3) with yerrorlines") && !strstr(text, "2:3 with yerrorlines"),
                  "%s: error bars not ci_z s.e.", path);
        cr_expect(strstr(text, "set key @keyspec\neval ci_key\n"), "%s does not state the interval", path);
        const char *band = strstr(text, "filledcurves");
        cr_expect(!band || strstr(text, "using 1:($2 - ci_z * $3):($2 + ci_z * $3)"), "%s: band", path);
        free(text);
    }
    char *dir = make_dir(), cmd[4096], *out;
    snprintf(cmd, sizeof cmd,
             "cd %s && printf '\"rrs (iid)\"\\n2 0.6 0.01\\n3 0.7 0.01\\n' > d && "
             "printf '\"alpha* iid\"\\n2 0.7 0\\n' > b && for k in off 'inside right bottom'; do "
             "gnuplot -e \"datafile='d'; boundfile='b'; nseries=1; nbounds=1; outfile='x.png'; term='pngcairo'; "
             "plottitle='t'; stylefile='%s/plots/styles.gp'; seriesmethods='rrs'; seriesdumps='1'; "
             "boundschemes='iid'; bounddumps='1'; overlay=0; keyspec='$k'\" %s/plots/vs-drafts.gp "
             "-e 'print ci_z; show key; show label'; done 2>&1",
             dir, getenv("PWD"), getenv("PWD"));
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    const char *note = "\"bars, bands: 95% CI (±1.96 s.e.)\"";
    const char *first = strstr(out, "key title is "), *label = strstr(out, "label 101 ");
    cr_expect(strstr(out, "1.96\n") && first && !strncmp(first + 13, note, strlen(note)) && label &&
              !strncmp(label + 10, note, strlen(note)) && strstr(first + 1, "key title is ") &&
              !strstr(label + 1, "label 101"), "%s", out);
    free(out);
    rm_tree(dir);
}
