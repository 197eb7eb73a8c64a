/* The public plot API (mdsd/plot.h): the series of a small results CSV are its rows
 * (x, y, s.e., half-width 1.96 s.e.), in gnuplot's order, with their legend texts,
 * style keys and dashes; notes go to the caller's callback; mdsd_plot draws a whole
 * SVG with its sidecar; bad options and inputs are refused naming what is wrong, with
 * nothing written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/plot.h>

#include "testutil.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static const char results[] =
    "dump,temperature,n,scheme,method,alpha,stderr,positions\n"
    "a.h5,1,3,iid,rrs,0.75,0.02,10\n"
    "a.h5,1,2,iid,rrs,0.7,0.01,10\n"
    "a.h5,1,2,iid,bound,0.8,0,10\n"
    "a.h5,1,3,iid,bound,0.85,0.005,10\n"
    "a.h5,1,2,iid,Odd Name,0.5,0.1,10\n"
    "b.h5,1,2,iid,rrs,0.6,0.01,10\n";

typedef struct {
    int count;
    char last[512];
} notes;

static void on_note(const char *note, void *ctx)
{
    notes *n = ctx;
    n->count++;
    snprintf(n->last, sizeof n->last, "%s", note);
}

Test(plot_api, series_are_the_rows_in_gnuplot_order)
{
    char dir[] = "/tmp/mdsd-plotapi-XXXXXX", csv[300];
    cr_assert(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    write_file(csv, results);
    mdsd_plot_opts o;
    mdsd_plot_opts_init(&o);
    notes n = {0, ""};
    const char *labels[] = {"rrs=RRS"};
    o.kind = "vs-drafts", o.on_note = on_note, o.note_ctx = &n, o.n_labels = 1, o.labels = labels;
    mdsd_plot_series *s = NULL;
    mdsd_err err;
    cr_assert_eq(mdsd_plot_series_read(csv, &o, &s, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_plot_check_labels(s, &o, &err), MDSD_OK, "%s", err.msg);
    /* b.h5 is left out (the first dump is drawn), with a note to the callback */
    cr_expect_eq(n.count, 1);
    cr_expect(strstr(n.last, "has several dumps; plotting a.h5") && !strstr(n.last, "mdsd plot:"), "%s", n.last);
    mdsd_plot_figure fig;
    mdsd_plot_series_figure(s, &fig);
    cr_expect_str_eq(fig.kind, "vs-drafts");
    cr_expect_str_eq(fig.title, "a.h5, T = 1");
    cr_expect_str_eq(fig.xlabel, "number of drafts n");
    cr_expect_str_eq(fig.interval, "95% CI (±1.96 s.e.)");
    cr_assert_eq(fig.lines, 3);
    const mdsd_plot_line *rrs = mdsd_plot_series_line(s, 0), *odd = mdsd_plot_series_line(s, 1),
                         *bound = mdsd_plot_series_line(s, 2);
    cr_assert(rrs && odd && bound && !mdsd_plot_series_line(s, 3));
    cr_expect_str_eq(rrs->label, "RRS (iid)");
    cr_expect_str_eq(rrs->style, "rrs");
    cr_expect_str_eq(rrs->method, "rrs");
    cr_expect(!rrs->bound && rrs->dash == 1 && rrs->points == 2);
    /* sorted by x: n = 2 then 3 */
    cr_expect(rrs->x[0] == 2 && rrs->y[0] == 0.7 && rrs->se[0] == 0.01 && rrs->half[0] == 1.96 * 0.01);
    cr_expect(rrs->x[1] == 3 && rrs->y[1] == 0.75 && rrs->se[1] == 0.02);
    cr_expect_str_eq(odd->style, "other"); /* a name outside the style table */
    cr_expect_str_eq(bound->label, "α* iid");
    cr_expect_str_eq(bound->style, "iid");
    cr_expect(bound->bound && bound->points == 2 && bound->y[1] == 0.85 && bound->half[1] == 1.96 * 0.005);
    mdsd_plot_series_free(s);
    /* a label that names nothing of the figure */
    const char *typo[] = {"rss=RRS"};
    o.labels = typo;
    cr_assert_eq(mdsd_plot_series_read(csv, &o, &s, &err), MDSD_OK, "%s", err.msg);
    cr_expect_eq(mdsd_plot_check_labels(s, &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "'rss' names no dump"), "%s", err.msg);
    mdsd_plot_series_free(s);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

Test(plot_api, mdsd_plot_writes_the_figure_or_nothing, .timeout = 60)
{
    char dir[] = "/tmp/mdsd-plotapi-XXXXXX", csv[300], out[300], side[340], block[300];
    cr_assert(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    snprintf(out, sizeof out, "%s/f.svg", dir);
    snprintf(side, sizeof side, "%s.provenance.json", out);
    write_file(csv, results);
    mdsd_plot_opts o;
    mdsd_plot_opts_init(&o);
    o.kind = "vs-drafts", o.dump = "a.h5", o.scripts = "plots";
    const char *words[] = {"my-tool", "x=1"};
    o.tool = "my.plot", o.n_words = 2, o.words = words;
    mdsd_err err;
    cr_assert_eq(mdsd_plot(csv, out, &o, &err), MDSD_OK, "%s", err.msg);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "tail -n 2 %s | grep -c '</svg>'; grep -c '\"tool\":\"my.plot\"' %s; "
             "grep -c '\"command\":\\[\"mdsd\",\"my-tool\",\"x=1\"\\]' %s", out, side, side);
    char *got = test_shell_ok(cmd);
    cr_expect_str_eq(got, "1\n1\n1\n");
    free(got);
    /* refusals: nothing new written */
    unlink(out), unlink(side);
    const char *kind = "x";
    cr_expect_eq(mdsd_plot_default_kind(csv, &kind, &err), MDSD_OK);
    cr_expect_null(kind, "a results CSV has no default kind");
    o.kind = NULL;
    cr_expect_eq(mdsd_plot(csv, out, &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "r.csv: missing `kind`"), "%s", err.msg);
    o.kind = "histogram";
    cr_expect_eq(mdsd_plot(csv, out, &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "'histogram' is not vs-temperature"), "%s", err.msg);
    o.kind = "vs-drafts";
    cr_expect_neq(mdsd_plot(csv, csv, &o, &err), MDSD_OK);
    cr_expect(strstr(err.msg, "is the input") && strstr(err.msg, "r.csv"), "%s", err.msg);
    o.paper_size = "poster";
    cr_expect_eq(mdsd_plot_check_opts(&o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "'poster' is not screen"), "%s", err.msg);
    o.paper_size = NULL, o.dumps = "all";
    cr_expect_eq(mdsd_plot(csv, out, &o, &err), MDSD_EINVAL, "dump with dumps");
    o.dumps = NULL, o.method = "RRS";
    cr_expect_eq(mdsd_plot(csv, out, &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "'RRS' matches no row of") && strstr(err.msg, "r.csv"), "%s", err.msg);
    o.method = NULL;
    const char *twice[] = {"rrs=A", "rrs=B"};
    o.n_labels = 2, o.labels = twice;
    cr_expect_eq(mdsd_plot(csv, out, &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "'rrs' is relabelled twice"), "%s", err.msg);
    o.n_labels = 0, o.labels = NULL;
    snprintf(block, sizeof block, "%s/bad.csv", dir);
    write_file(block, "dump,temperature,n,scheme,method,alpha,stderr\na.h5,1,2,iid,rrs,1.5,0.1\n");
    cr_expect_eq(mdsd_plot(block, out, &o, &err), MDSD_EFORMAT, "%s", err.msg);
    cr_expect(strstr(err.msg, "bad.csv: line 2, column alpha"), "%s", err.msg);
    cr_expect_neq(access(out, F_OK), 0, "a refused call left %s", out);
    cr_expect_neq(access(side, F_OK), 0, "a refused call left %s", side);
    cr_expect_eq(mdsd_plot(NULL, out, &o, &err), MDSD_EINVAL);
    cr_expect_eq(mdsd_plot_series_read(csv, &o, NULL, &err), MDSD_EINVAL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}
