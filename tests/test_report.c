/* Clustered standard errors and the result renderers. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"
#include "cluster.h"
#include "report.h"

/* Two-pass CR1 reference on stored data. */
static double cr1_reference(const double *x, const long long *id, size_t N)
{
    double mean = 0;
    for (size_t i = 0; i < N; i++)
        mean += x[i] / (double)N;
    double ss = 0, A = 0;
    size_t C = 0;
    for (size_t i = 0; i < N; i++) {
        A += x[i] - mean;
        if (i + 1 == N || id[i + 1] != id[i]) {
            ss += A * A;
            A = 0;
            C++;
        }
    }
    return sqrt((double)C / (double)(C - 1) * ss) / (double)N;
}

Test(cluster, stderr_matches_two_pass_cr1)
{
    gsl_rng *r = mdsd_rng_alloc(3);
    for (int trial = 0; trial < 50; trial++) {
        size_t N = 50 + gsl_rng_uniform_int(r, 400);
        double *x = malloc(N * sizeof *x);
        long long *id = malloc(N * sizeof *id);
        long long c = 7;
        mdsd_cluster_stats s;
        mdsd_cluster_init(&s);
        for (size_t i = 0; i < N; i++) {
            if (gsl_rng_uniform(r) < 0.1)
                c += 1 + gsl_rng_uniform_int(r, 3);
            id[i] = c;
            x[i] = 0.6 + 0.3 * gsl_rng_uniform(r) + 0.01 * (double)(c % 5);
            mdsd_cluster_add(&s, id[i], x[i]);
        }
        double want = cr1_reference(x, id, N);
        if (id[0] == id[N - 1])
            continue;
        cr_assert_float_eq(mdsd_cluster_stderr(&s), want, 1e-12 * (1 + want));
        double mean = 0;
        for (size_t i = 0; i < N; i++)
            mean += x[i];
        cr_assert_float_eq(mdsd_cluster_mean(&s), mean / (double)N, 1e-12);
        cr_assert_eq(mdsd_cluster_count(&s), N);
        free(x), free(id);
    }
    gsl_rng_free(r);
}

Test(cluster, single_cluster_falls_back_to_iid)
{
    mdsd_cluster_stats s;
    mdsd_cluster_init(&s);
    double x[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++)
        mdsd_cluster_add(&s, 0, x[i]);
    cr_assert_eq(mdsd_cluster_groups(&s), 1);
    cr_assert_float_eq(mdsd_cluster_stderr(&s), sqrt((5.0 / 3.0) / 4.0), 1e-12);
}

Test(cluster, correlated_clusters_widen_the_error)
{
    /* Identical values within a cluster: the clustered s.e. must exceed the iid one. */
    mdsd_cluster_stats s;
    mdsd_welford iid;
    mdsd_cluster_init(&s);
    mdsd_welford_init(&iid);
    for (int c = 0; c < 20; c++)
        for (int i = 0; i < 10; i++) {
            mdsd_cluster_add(&s, c, (double)(c % 2));
            mdsd_welford_add(&iid, (double)(c % 2));
        }
    cr_assert_gt(mdsd_cluster_stderr(&s), 2 * mdsd_welford_stderr(&iid));
}

static mdsd_report_row row(const char *dump, const char *scheme, const char *method, double alpha,
                           double gap)
{
    mdsd_report_row r = {0};
    snprintf(r.dump, sizeof r.dump, "%s", dump);
    snprintf(r.scheme, sizeof r.scheme, "%s", scheme);
    snprintf(r.method, sizeof r.method, "%s", method);
    r.temperature = 0.7, r.n = 3, r.alpha = alpha, r.se = 0.001, r.gap = gap, r.gap_se = 0.001;
    r.positions = 100, r.samples = 10, r.exact = true;
    r.alpha_low = r.alpha_high = alpha, r.alpha_low_se = r.alpha_high_se = r.se;
    if (!isnan(gap)) {
        r.n_per_draft = 3;
        r.per_draft[0] = 0.5, r.per_draft[1] = 0.2, r.per_draft[2] = 0.1;
    }
    return r;
}

Test(report, csv_round_trips)
{
    mdsd_report_row rows[2] = {row("a.h5", "iid", "bound", 0.81, NAN), row("a.h5", "iid", "rrs", 0.8, -0.01)};
    char *buf, *buf2;
    size_t len, len2;
    FILE *f = open_memstream(&buf, &len);
    mdsd_report_csv_header(f, 3);
    for (int i = 0; i < 2; i++)
        mdsd_report_csv_row(f, &rows[i], 3);
    fclose(f);
    cr_assert(strncmp(buf, "dump,temperature,n,scheme,method,alpha,stderr,positions", 10) == 0);
    cr_assert(strstr(buf, "per_draft_3\n"));
    char *line2 = strchr(buf, '\n') + 1, *line3 = strchr(line2, '\n') + 1;
    mdsd_report_row back;
    cr_assert_eq(mdsd_report_csv_parse(line3, true, &back, NULL), MDSD_OK);
    cr_assert_str_eq(back.method, "rrs");
    cr_assert_float_eq(back.alpha, 0.8, 1e-12);
    cr_assert_float_eq(back.gap, -0.01, 1e-12);
    cr_assert_eq(back.n_per_draft, 3);
    cr_assert_eq(mdsd_report_csv_parse(line2, true, &back, NULL), MDSD_OK);
    cr_assert(isnan(back.gap));
    cr_assert_eq(back.n_per_draft, 0);
    cr_assert_eq(mdsd_report_csv_parse("garbage", true, &back, NULL), MDSD_EFORMAT);
    /* a dump label with a comma and a quote survives the round trip */
    mdsd_report_row odd = row("my,\"dump\".h5", "iid", "rrs", 0.5, -0.1);
    FILE *g = open_memstream(&buf2, &len2);
    mdsd_report_csv_row(g, &odd, 3);
    fclose(g);
    cr_assert_eq(mdsd_report_csv_parse(buf2, true, &back, NULL), MDSD_OK, "%s", buf2);
    cr_assert_str_eq(back.dump, "my,\"dump\".h5");
    cr_assert_float_eq(back.alpha, 0.5, 1e-12);
    free(buf2);
    free(buf);
}

/* Two-sided t tests with samples - 1 degrees of freedom; the p-values in the
 * comments are scipy's (stats.t.sf), an independent reference. */
Test(report, significance_levels)
{
    cr_assert_str_eq(mdsd_report_significance(0.0, 1.0, 1000), "");
    cr_assert_str_eq(mdsd_report_significance(2.0, 1.0, 1000), "*");    /* p = 0.0458 */
    cr_assert_str_eq(mdsd_report_significance(-2.7, 1.0, 1000), "**");  /* p = 0.0071 */
    cr_assert_str_eq(mdsd_report_significance(3.5, 1.0, 1000), "***");  /* p = 0.00049 */
    cr_assert_str_eq(mdsd_report_significance(NAN, 1.0, 1000), "");
    /* 8 samples, 7 d.f.: a normal law would give *, ** and *** here */
    cr_assert_str_eq(mdsd_report_significance(2.0, 1.0, 8), "");        /* p = 0.0856 */
    cr_assert_str_eq(mdsd_report_significance(2.36, 1.0, 8), "");       /* p = 0.0503 */
    cr_assert_str_eq(mdsd_report_significance(2.37, 1.0, 8), "*");      /* p = 0.0496 */
    cr_assert_str_eq(mdsd_report_significance(-2.7, 1.0, 8), "*");      /* p = 0.0306 */
    cr_assert_str_eq(mdsd_report_significance(3.5, 1.0, 8), "**");      /* p = 0.00999 */
    cr_assert_str_eq(mdsd_report_significance(4.0, 1.0, 8), "**");      /* p = 0.0052 */
    cr_assert_str_eq(mdsd_report_significance(5.5, 1.0, 8), "***");     /* p = 0.00091 */
    /* one sample: the s.e. is the i.i.d. fallback, no stars however large the gap */
    cr_assert_str_eq(mdsd_report_significance(50.0, 1.0, 1), "");
    cr_assert_str_eq(mdsd_report_significance(50.0, 1.0, 0), "");
}

/* One-sample rows: marked §, explained under the table, no stars, and a note. */
Test(report, one_sample_rows_are_marked_and_have_no_stars)
{
    mdsd_report_row rows[2] = {row("solo.h5", "iid", "bound", 0.81, NAN),
                               row("solo.h5", "iid", "rrs", 0.70, -0.11)};
    rows[0].samples = rows[1].samples = 1;
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    mdsd_report_markdown(f, rows, 2);
    fclose(f);
    cr_assert(strstr(buf, "| iid | rrs | 0.7000 ± 0.0010§ (↓0.1100) |"), "%s", buf);
    cr_assert(strstr(buf, "§ one sample: s.e. over positions as if independent"), "%s", buf);
    cr_assert(strstr(buf, "two-sided t test, samples − 1 degrees of freedom"), "%s", buf);
    free(buf);
    f = open_memstream(&buf, &len);
    mdsd_report_csv_row(f, &rows[1], 2);
    mdsd_report_note_one_sample(f, "prog", rows, 2);
    fclose(f);
    cr_assert(strstr(buf, ",-0.11,0.001,,"), "a one-sample row has no significance:\n%s", buf);
    cr_assert_eq(strstr(buf, "prog: note: solo.h5 has one sample") != NULL, 1, "%s", buf);
    cr_assert(!strstr(strstr(buf, "prog: note:") + 1, "prog: note:"), "one note per dump:\n%s", buf);
    free(buf);
}

Test(report, markdown_and_latex_tables)
{
    mdsd_report_row rows[4] = {row("a", "iid", "bound", 0.81, NAN), row("a", "iid", "rrs", 0.78, -0.03),
                               row("b", "iid", "bound", 0.71, NAN), row("b", "iid", "rrs", 0.70, -0.01)};
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    mdsd_report_markdown(f, rows, 4);
    fclose(f);
    cr_assert(strstr(buf, "| scheme | method | a | b |"), "%s", buf);
    cr_assert(strstr(buf, "| iid | α* | 0.8100 ± 0.0010 | 0.7100 ± 0.0010 |"), "%s", buf);
    cr_assert(strstr(buf, "| iid | rrs | 0.7800 ± 0.0010 (↓0.0300***) |"), "%s", buf);
    free(buf);
    f = open_memstream(&buf, &len);
    mdsd_report_latex(f, rows, 4);
    fclose(f);
    cr_assert(strstr(buf, "\\begin{tabular}{llcc}") && strstr(buf, "$\\alpha^*$"), "%s", buf);
    free(buf);
}

/* ---- paired differences (mdsd report --paired) ---------------------------- */

/* Random per-position tables (two groups, clusters of random sizes, one
 * column pair): the library's difference and s.e. against the two-pass CR1
 * reference on the stored differences. */
Test(report, paired_differences_match_a_two_pass_reference)
{
    gsl_rng *r = mdsd_rng_alloc(29);
    for (int trial = 0; trial < 20; trial++) {
        size_t N[2] = {30 + gsl_rng_uniform_int(r, 200), 30 + gsl_rng_uniform_int(r, 200)};
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        fputs("dump,temperature,row,sample,position,rate_x_n2,rate_y_n2\n", f);
        double *d[2];
        long long *id[2];
        for (int g = 0; g < 2; g++) {
            d[g] = malloc(N[g] * sizeof *d[g]);
            id[g] = malloc(N[g] * sizeof *id[g]);
            long long s = 0;
            for (size_t i = 0; i < N[g]; i++) {
                if (i > 0 && gsl_rng_uniform(r) < 0.1)
                    s += 1 + (long long)gsl_rng_uniform_int(r, 3);
                double x = gsl_rng_uniform(r), y = 0.5 * x + 0.5 * gsl_rng_uniform(r);
                /* the values as written, so the reference sees what the reader sees */
                char xs[32], ys[32];
                snprintf(xs, sizeof xs, "%.17g", x);
                snprintf(ys, sizeof ys, "%.17g", y);
                d[g][i] = strtod(xs, NULL) - strtod(ys, NULL);
                id[g][i] = s;
                fprintf(f, "t.h5,%s,%zu,%lld,%zu,%s,%s\n", g ? "0.3" : "0.7", i, s, i, xs, ys);
            }
        }
        fclose(f);
        FILE *in = fmemopen(text, len, "rb");
        mdsd_csv *t = NULL;
        cr_assert_eq(mdsd_csv_read_stream(in, "mem.csv", &t, NULL), MDSD_OK);
        fclose(in);
        int ca = mdsd_csv_col(t, "rate_x_n2"), cb = mdsd_csv_col(t, "rate_y_n2");
        mdsd_report_paired_row *rows = NULL;
        size_t count = 0;
        cr_assert_eq(mdsd_report_paired(t, &ca, &cb, 1, &rows, &count, NULL), MDSD_OK);
        cr_assert_eq(count, 2);
        for (int g = 0; g < 2; g++) {
            double mean = 0;
            for (size_t i = 0; i < N[g]; i++)
                mean += d[g][i] / (double)N[g];
            double se = cr1_reference(d[g], id[g], N[g]);
            cr_assert_float_eq(rows[g].diff, mean, 1e-13, "group %d: %.17g vs %.17g", g, rows[g].diff, mean);
            cr_assert(fabs(rows[g].se - se) <= 1e-12 * se, "group %d: s.e. %.17g vs %.17g", g, rows[g].se, se);
            cr_assert_eq(rows[g].positions, N[g]);
            cr_assert_eq(rows[g].temperature, g ? 0.3 : 0.7);
            free(d[g]), free(id[g]);
        }
        free(rows);
        mdsd_csv_free(t);
        free(text);
    }
    gsl_rng_free(r);
}

/* End to end: `mdsd report --paired` on the per-position file of a table job
 * reproduces the results CSV's gap and gap_stderr (computed by the job's own
 * accumulators) for verifier - alpha* of its scheme. */
Test(report, paired_cli_reproduces_the_gap_column)
{
    char *out = NULL, cmd[2048];
    const char *m = test_mdsd_bin();
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && cd $d && %s toy --family zipf --vocab 64 --positions 60 --samples 6 "
             "--seed 4 -o t.h5 >/dev/null 2>&1 && %s table t.h5 -t 0.7,1 -d 2,3 -s iid,wor -v rrs,rrsw "
             "-o r.csv --per-position p.csv >/dev/null 2>&1 && %s report p.csv --paired "
             "rate_rrs:alpha_star_iid,rate_rrsw:alpha_star_wor --csv -o q.csv && "
             "awk -F, 'NR > 1 && $8 != \"\" { g[$1 \",\" $2 \",\" $3 \",\" $5] = $8 \" \" $9 } "
             "END { while ((getline l < \"q.csv\") > 0) { split(l, f, \",\"); if (f[3] == \"a\") continue; "
             "n = substr(f[3], match(f[3], /_n[0-9]+$/) + 2); v = f[3]; sub(/^rate_/, \"\", v); "
             "sub(/_n[0-9]+$/, \"\", v); split(g[f[1] \",\" f[2] \",\" n \",\" v], e, \" \"); "
             "dd = f[5] - e[1]; ds = f[6] - e[2]; if (dd < 0) dd = -dd; if (ds < 0) ds = -ds; "
             "if (e[2] == \"\" || dd > 1e-9 || ds > 1e-9 * e[2] + 1e-12) { print \"MISMATCH\", l, e[1], e[2]; bad = 1 } "
             "k++ } print k, \"pairs\"; exit bad }' r.csv; rc=$?; rm -rf $d; exit $rc",
             m, m, m);
    int rc = test_run_shell(cmd, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "8 pairs"), "%s", out); /* 2 T x 2 n x 2 pairs */
    free(out);
}

/* --label OLD=NEW renames the dumps, schemes and methods the tables show (the header's
 * dump and the rows' names), is recorded in the provenance, and is refused naming
 * nothing in the table or with --paired. Shown once to catch a planted error: the
 * dump header printed without the lookup fails the first check. */
Test(report, labels_rename_the_tables_and_are_recorded)
{
    char dir[] = "/tmp/mdsd-report-label-XXXXXX", cmd[4096], *out;
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cd %s && printf 'dump,temperature,n,scheme,method,alpha,stderr,gap,gap_stderr,significance,positions,"
             "samples,exact\\nkjv.h5:kn2,1,2,iid,bound,0.8,0,,,,10,5,1\\nkjv.h5:kn2,1,2,iid,rrs,0.7,0.01,-0.1,"
             "0.01,,10,5,1\\n' > r.csv && "
             "%s report r.csv --layout per-setting --label kjv.h5:kn2=KN-2 --label rrs=RRS --label 'iid=i.i.d.' && "
             "%s report r.csv --latex --layout per-setting --label kjv.h5:kn2=KN_2 -o t.tex && cat t.tex.provenance.json; "
             "%s report r.csv --label kjv.h5:kn3=x; echo rc=$?; %s report r.csv --label rrs; echo rc=$?",
             dir, test_mdsd_bin(), test_mdsd_bin(), test_mdsd_bin(), test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "| scheme | method | KN-2 |\n") && strstr(out, "| i.i.d. | α* | 0.8000") &&
              strstr(out, "| i.i.d. | RRS | 0.7000") && !strstr(out, "| kjv.h5:kn2 |"), "%s", out);
    cr_expect(strstr(out, "\"labels\":{\"kjv.h5:kn2\":\"KN_2\"}"), "%s", out);
    cr_expect(strstr(out, "--label 'kjv.h5:kn3=x': 'kjv.h5:kn3' names no dump, scheme or method of the table") &&
              strstr(out, "--label 'rrs': expected OLD=NEW") && !strstr(out, "rc=0") && !strstr(out, "rc=1\n"),
              "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && grep -c 'KN\\\\_2' t.tex", dir);
    out = test_shell_ok(cmd);
    cr_expect_eq(atoi(out), 1, "the LaTeX header escapes the new name: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}
