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
    cr_assert_eq(mdsd_report_csv_parse(line3, &back, NULL), MDSD_OK);
    cr_assert_str_eq(back.method, "rrs");
    cr_assert_float_eq(back.alpha, 0.8, 1e-12);
    cr_assert_float_eq(back.gap, -0.01, 1e-12);
    cr_assert_eq(back.n_per_draft, 3);
    cr_assert_eq(mdsd_report_csv_parse(line2, &back, NULL), MDSD_OK);
    cr_assert(isnan(back.gap));
    cr_assert_eq(back.n_per_draft, 0);
    cr_assert_eq(mdsd_report_csv_parse("garbage", &back, NULL), MDSD_EFORMAT);
    /* a dump label with a comma and a quote survives the round trip */
    mdsd_report_row odd = row("my,\"dump\".h5", "iid", "rrs", 0.5, -0.1);
    FILE *g = open_memstream(&buf2, &len2);
    mdsd_report_csv_row(g, &odd, 3);
    fclose(g);
    cr_assert_eq(mdsd_report_csv_parse(buf2, &back, NULL), MDSD_OK, "%s", buf2);
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
