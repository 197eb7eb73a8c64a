/* The public report call (mdsd/report.h) and the table job's rendered outputs
 * from C (mdsd_table_opts.markdown/latex/layout/per_position, mdsd_merge_run):
 * the text and files the CLI writes for the same options, byte for byte; the
 * output written atomically with its provenance; options refused with
 * option_error set (the CLI's usage errors), file problems without it; no
 * file left by a refused call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

#include "testutil.h"

static char dir[] = "/tmp/mdsd-report-api-XXXXXX";

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* `cd DIR && mdsd ARGS`, its stdout (exit 0 asserted). */
static char *cli(const char *args)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd %s && %s %s 2>/dev/null", dir, test_mdsd_bin(), args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, p)) > 0)
        fwrite(buf, 1, k, m);
    fclose(m);
    cr_assert_eq(pclose(p), 0, "mdsd %s failed", args);
    return out;
}

/* Two dumps and the CLI's results and per-position CSVs, in dir (the paths
 * as the CLI names them: the calls below run in dir too). */
static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    free(cli("toy --family zipf --vocab 48 --positions 40 --samples 4 --seed 3 -o d.h5"));
    free(cli("toy --family dirichlet --vocab 24 --positions 30 --seed 4 -o e.h5"));
    free(cli("table d.h5 e.h5 -o r.csv -t 0.7,1 -d 2,3 -s iid,wor -v rrs,kseq --markdown=t.md "
             "--latex=t.tex --layout per-setting --per-position pp.csv"));
    cr_assert_eq(chdir(dir), 0);
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Tables in a Markdown text, and whether the combined one is among them. */
static size_t tables(const char *md, bool *combined)
{
    size_t n = 0;
    for (const char *p = md; (p = strstr(p, "| scheme | method")); p++)
        n++;
    *combined = strstr(md, "**All settings**") != NULL;
    return n;
}

static char *report(const char *csv, const mdsd_report_opts *o)
{
    char *text = NULL;
    int usage = -1;
    mdsd_err err;
    mdsd_status s = mdsd_report(csv, NULL, o, &text, &usage, &err);
    cr_assert_eq(s, MDSD_OK, "%s", err.msg);
    cr_assert_eq(usage, 0);
    cr_assert_not_null(text);
    return text;
}

TestSuite(report_api, .init = setup, .fini = teardown);

Test(report_api, text_is_the_cli_output)
{
    mdsd_report_opts o;
    mdsd_report_opts_init(&o);
    cr_assert_eq(o.size, sizeof o);
    cr_assert_eq(o.is_top, -1);
    char *want = cli("report r.csv"), *got = report("r.csv", &o);
    cr_expect_str_eq(got, want);
    bool combined;
    /* the default layout, both: a table per (T, n) of the 2 x 2, then the combined one */
    cr_expect_eq(tables(got, &combined), 5, "%s", got);
    cr_expect(combined);
    mdsd_report_free(got), free(want);
    got = report("r.csv", NULL); /* NULL options: the defaults */
    want = cli("report r.csv");
    cr_expect_str_eq(got, want);
    mdsd_report_free(got), free(want);

    const char *labels[] = {"d.h5=Zipf", "kseq=K-SEQ"};
    o.latex = 1, o.standalone = 1, o.layout = MDSD_REPORT_COMBINED, o.label_prefix = "tab:c";
    o.n_labels = 2, o.labels = labels, o.temperatures = "1,0.7", o.drafts = "3,2";
    o.schemes = "wor,iid", o.methods = "kseq", o.dumps = "e.h5,d.h5", o.is_top = 5;
    want = cli("report r.csv --latex --standalone --layout combined --label-prefix tab:c --label "
               "d.h5=Zipf --label kseq=K-SEQ -t 1,0.7 -d 3,2 -s wor,iid -m kseq --dumps e.h5,d.h5 "
               "--is-top 5");
    got = report("r.csv", &o);
    cr_expect_str_eq(got, want);
    cr_expect(strstr(got, "Zipf") && strstr(got, "K-SEQ") && strstr(got, "\\documentclass"), "%s", got);
    mdsd_report_free(got), free(want);
}

Test(report_api, paired_is_the_cli_output)
{
    mdsd_report_opts o;
    mdsd_report_opts_init(&o);
    o.paired = "rate_rrs:rate_kseq,alpha_star_wor:alpha_star_iid";
    char *want = cli("report pp.csv --paired rate_rrs:rate_kseq,alpha_star_wor:alpha_star_iid");
    char *got = report("pp.csv", &o);
    cr_expect_str_eq(got, want);
    mdsd_report_free(got), free(want);
    o.csv = 1;
    want = cli("report pp.csv --paired rate_rrs:rate_kseq,alpha_star_wor:alpha_star_iid --csv");
    got = report("pp.csv", &o);
    cr_expect_str_eq(got, want);
    cr_expect(!strncmp(got, "dump,temperature,a,b,difference,stderr,z,significance", 52), "%s", got);
    mdsd_report_free(got), free(want);
}

Test(report_api, output_is_written_with_its_provenance)
{
    mdsd_report_opts o;
    mdsd_report_opts_init(&o);
    const char *words[] = {"my-tool", "--x"};
    o.tool = "my.report", o.n_words = 2, o.words = words, o.latex = 1;
    mdsd_err err;
    cr_assert_eq(mdsd_report("r.csv", "out.tex", &o, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    char *got = slurp("out.tex"), *want = cli("report r.csv --latex");
    cr_expect_str_eq(got, want);
    free(got), free(want);
    char *prov = slurp("out.tex.provenance.json");
    cr_expect(strstr(prov, "\"tool\":\"my.report\"") && strstr(prov, "\"command\":[\"mdsd\",\"my-tool\",\"--x\"]") &&
              strstr(prov, "\"source\":\"r.csv\"") && strstr(prov, "\"source_provenance\":{\"tool\":\"mdsd table\""),
              "%s", prov);
    free(prov);
}

Test(report_api, refusals_say_whether_an_option_is_at_fault)
{
    static const char *const none[] = {NULL};
    struct {
        const char *temperatures, *methods, *paired, *label, *output, *csv;
        int latex, standalone, csv_out, layout;
        int usage;
        const char *message;
    } cases[] = {
        {"0.7,0.70", NULL, NULL, NULL, NULL, "r.csv", 0, 0, 0, 0, 1, "--temperatures: '0.7' and '0.70' are the same value"},
        {"x", NULL, NULL, NULL, NULL, "r.csv", 0, 0, 0, 0, 1, "--temperatures: 'x' is not a number"},
        {NULL, "rrs,rrs", NULL, NULL, NULL, "r.csv", 0, 0, 0, 0, 1, "--methods: 'rrs' is given twice"},
        {NULL, NULL, NULL, "kseq", NULL, "r.csv", 0, 0, 0, 0, 1, "expected OLD=NEW"},
        {NULL, NULL, NULL, "zz=Y", NULL, "r.csv", 0, 0, 0, 0, 1, "'zz' names no dump, scheme or method"},
        {NULL, NULL, NULL, NULL, NULL, "r.csv", 0, 1, 0, 0, 1, "--standalone needs --latex"},
        {NULL, NULL, NULL, NULL, NULL, "r.csv", 0, 0, 1, 0, 1, "--csv needs --paired"},
        {NULL, NULL, NULL, NULL, NULL, "r.csv", 0, 0, 0, 7, 1, "is not an mdsd_report_layout"},
        {NULL, NULL, "rate_rrs", NULL, NULL, "pp.csv", 0, 0, 0, 0, 1, "'rate_rrs' is not A:B"},
        {NULL, NULL, "a:b", NULL, NULL, "pp.csv", 1, 0, 0, 0, 1, "--paired takes only"},
        {"0.8", NULL, NULL, NULL, NULL, "r.csv", 0, 0, 0, 0, 0, "--temperatures: '0.8' matches no row of r.csv"},
        {NULL, NULL, "x:y", NULL, NULL, "pp.csv", 0, 0, 0, 0, 0, "pp.csv: no columns x and y"},
        {NULL, NULL, NULL, NULL, NULL, "d.h5", 0, 0, 0, 0, 0, "d.h5, line 1: not a results CSV"},
        {NULL, NULL, NULL, NULL, NULL, "no.csv", 0, 0, 0, 0, 0, "cannot read 'no.csv'"},
        {NULL, NULL, NULL, NULL, "r.csv", "r.csv", 0, 0, 0, 0, 0, "output 'r.csv' is the input 'r.csv'"},
        {NULL, NULL, NULL, NULL, "r.csv.provenance.json", "r.csv", 0, 0, 0, 0, 0, "is the input 'r.csv.provenance.json'"},
        {NULL, NULL, NULL, NULL, "/nonexistent-dir/x.md", "r.csv", 0, 0, 0, 0, 0, "'/nonexistent-dir' does not exist"},
        {NULL, NULL, NULL, "zz=Y", "x.md", "r.csv", 0, 0, 0, 0, 1, "--label 'zz=Y': 'zz' names no"},
    };
    char *before = slurp("r.csv");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mdsd_report_opts o;
        mdsd_report_opts_init(&o);
        const char *label[] = {cases[i].label};
        o.temperatures = cases[i].temperatures, o.methods = cases[i].methods, o.paired = cases[i].paired;
        o.labels = label[0] ? label : none, o.n_labels = label[0] ? 1 : 0;
        o.latex = cases[i].latex, o.standalone = cases[i].standalone, o.csv = cases[i].csv_out;
        o.layout = cases[i].layout;
        char *text = (char *)"untouched";
        int usage = -1;
        mdsd_err err;
        mdsd_status s = mdsd_report(cases[i].csv, cases[i].output, &o, &text, &usage, &err);
        cr_expect_neq(s, MDSD_OK, "case %zu passed", i);
        cr_expect_null(text, "case %zu: text set on failure", i);
        cr_expect_eq(usage, cases[i].usage, "case %zu (%s): option_error %d", i, err.msg, usage);
        /* the expected texts are the CLI's: the message in its spelling (mdsd/option.h) */
        char cli[1024];
        mdsd_option_words(err.msg, MDSD_SPELL_CLI, cli, sizeof cli);
        cr_expect(strstr(cli, cases[i].message), "case %zu: '%s' lacks '%s'", i, cli, cases[i].message);
    }
    char *after = slurp("r.csv");
    cr_expect_str_eq(after, before, "an input was changed");
    cr_expect(!exists("x.md") && !exists("x.md.provenance.json"), "a refused call left its output");
    free(before), free(after);
    /* a struct of another size, and neither an output nor text */
    mdsd_report_opts o;
    mdsd_report_opts_init(&o);
    o.size = sizeof o - 1;
    mdsd_err err;
    int usage = 0;
    char *text = NULL;
    cr_expect_eq(mdsd_report("r.csv", NULL, &o, &text, &usage, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "mdsd_report_opts") && usage == 1, "%s", err.msg);
    cr_expect_eq(mdsd_report("r.csv", NULL, NULL, NULL, NULL, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "neither an output file nor text"), "%s", err.msg);
    mdsd_report_layout l;
    cr_expect_eq(mdsd_report_layout_parse("combined", &l, &err), MDSD_OK);
    cr_expect_eq(l, MDSD_REPORT_COMBINED);
    cr_expect_eq(mdsd_report_layout_parse("rows", &l, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "'rows' is not per-setting, combined or both"), "%s", err.msg);
}

/* The table job's rendered files and per-position CSV from mdsd_table_run: the CLI's
 * bytes; a clash of two rendered files refused before any work. */
Test(report_api, table_run_renders_what_the_cli_renders)
{
    const char *dumps[] = {"d.h5", "e.h5"};
    double temps[] = {0.7, 1};
    size_t counts[] = {2, 3};
    mdsd_scheme_kind schemes[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR};
    mdsd_verifier_kind verifiers[] = {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ};
    mdsd_table_opts t;
    mdsd_table_opts_init(&t);
    cr_assert_eq(t.layout, 0);
    t.n_dumps = 2, t.dumps = dumps, t.n_temperatures = 2, t.temperatures = temps;
    t.n_counts = 2, t.draft_counts = counts, t.n_schemes = 2, t.schemes = schemes;
    t.n_verifiers = 2, t.verifiers = verifiers;
    t.output = "api.csv", t.markdown = "api.md", t.latex = "api.tex";
    t.layout = MDSD_REPORT_PER_SETTING, t.per_position = "api_pp.csv";
    mdsd_err err;
    cr_assert_eq(mdsd_table_run(&t, &err), MDSD_OK, "%s", err.msg);
    const char *pairs[][2] = {{"api.csv", "r.csv"}, {"api.md", "t.md"}, {"api.tex", "t.tex"},
                              {"api_pp.csv", "pp.csv"}};
    char *md = slurp("api.md");
    bool combined;
    cr_expect_eq(tables(md, &combined), 4, "layout per-setting not applied: %s", md);
    cr_expect(!combined, "%s", md);
    free(md);
    for (size_t i = 0; i < 4; i++) {
        char *a = slurp(pairs[i][0]), *b = slurp(pairs[i][1]);
        cr_expect_str_eq(a, b, "%s differs from the CLI's %s", pairs[i][0], pairs[i][1]);
        free(a), free(b);
    }
    cr_expect(!exists("api.csv.provenance.json"), "mdsd_table_run wrote a provenance");
    /* _recorded: the provenance too; a clash and a bad layout refused, nothing written */
    t.output = "rec.csv", t.markdown = "rec.md", t.latex = NULL, t.per_position = NULL;
    const char *words[] = {"x"};
    cr_assert_eq(mdsd_table_run_recorded(&t, "t.table", 1, words, &err), MDSD_OK, "%s", err.msg);
    cr_expect(exists("rec.csv.provenance.json") && exists("rec.md"));
    t.output = "bad.csv", t.markdown = "same.md", t.latex = "same.md";
    cr_expect_eq(mdsd_table_run(&t, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "are the same file"), "%s", err.msg);
    t.latex = NULL, t.layout = 9;
    cr_expect_eq(mdsd_table_run(&t, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "layout 9"), "%s", err.msg);
    t.layout = 0, t.markdown = "d.h5";
    cr_expect_eq(mdsd_table_run(&t, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "output 'd.h5' is the input 'd.h5'"), "%s", err.msg);
    cr_expect(!exists("bad.csv") && !exists("same.md"), "a refused job left files");
}

Test(report_api, merge_run_takes_the_layout)
{
    free(cli("table d.h5 -o s1.agg -t 0.7,1 -d 2 -s iid -v rrs --shard 1/2"));
    free(cli("table d.h5 -o s2.agg -t 0.7,1 -d 2 -s iid -v rrs --shard 2/2"));
    free(cli("merge -o m.csv s1.agg s2.agg --markdown=m.md --layout combined"));
    const char *shards[] = {"s2.agg", "s1.agg"};
    mdsd_merge_job_opts o;
    mdsd_merge_job_opts_init(&o);
    cr_assert_eq(o.size, sizeof o);
    o.markdown = "pm.md", o.layout = MDSD_REPORT_COMBINED;
    mdsd_err err;
    cr_assert_eq(mdsd_merge_run(shards, 2, "pm.csv", &o, &err), MDSD_OK, "%s", err.msg);
    char *a = slurp("pm.md"), *b = slurp("m.md");
    cr_expect_str_eq(a, b);
    bool combined;
    cr_expect_eq(tables(a, &combined), 1, "layout combined not applied: %s", a);
    cr_expect(combined, "%s", a);
    free(a), free(b);
    o.layout = 4;
    cr_expect_eq(mdsd_merge_run(shards, 2, "pm2.csv", &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "layout 4"), "%s", err.msg);
    o.layout = 0, o.size = 3;
    cr_expect_eq(mdsd_merge_run(shards, 2, "pm2.csv", &o, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "mdsd_merge_job_opts"), "%s", err.msg);
    cr_expect(!exists("pm2.csv"));
}
