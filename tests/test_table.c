/* mdsd table: per-cell values equal the per-position library and CLI
 * results averaged, thread-count invariance, resume, and bad inputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "testutil.h"
#include "batch.h"
#include "bound.h"
#include "dump.h"

#define NV 10
#define SAMPLES 3
#define PER_SAMPLE 4
#define ROWS (SAMPLES * PER_SAMPLE)

static float target_logits[ROWS][NV], draft_logits[ROWS][NV];

/* Writes a dump of random logits; poison_row >= 0 gets a NaN. */
static void write_dump(const char *path, uint64_t seed, int poison_row)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    int tokens[ROWS], sample[ROWS], position[ROWS];
    for (int i = 0; i < ROWS; i++) {
        for (int v = 0; v < NV; v++) {
            target_logits[i][v] = (float)gsl_ran_gaussian(r, 2.0);
            draft_logits[i][v] = target_logits[i][v] + (float)gsl_ran_gaussian(r, 1.0);
        }
        tokens[i] = i % NV, sample[i] = 10 + i / PER_SAMPLE, position[i] = i % PER_SAMPLE;
    }
    gsl_rng_free(r);
    const char *names[1] = {"small"};
    mdsd_dump_spec spec = {.V = NV, .dtype = MDSD_DUMP_FLOAT32, .chunk_rows = 5, .n_drafts = 1,
                           .draft_names = names};
    mdsd_dump_writer *w;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_writer_open(path, &spec, &w, &err), MDSD_OK, "%s", err.msg);
    const float *drafts[1] = {&draft_logits[0][0]};
    cr_assert_eq(mdsd_dump_writer_append(w, ROWS, &target_logits[0][0], drafts, tokens, sample,
                                         position, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_commit(w, &err), MDSD_OK, "%s", err.msg);
    if (poison_row >= 0) { /* the writer refuses NaN, so patch the file with h5py-free HDF5 */
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import h5py; f = h5py.File('%s', 'r+'); "
                 "f['target/logits'][%d, 3] = float('nan'); f.close()\"", path, poison_row);
        cr_assert_eq(system(cmd), 0);
    }
}

typedef struct {
    double T;
    size_t n;
    char scheme[16], method[16];
    double alpha, se, gap;
} csv_cell;

static size_t read_csv(const char *path, csv_cell *cells, size_t max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no output %s", path);
    char line[4096];
    size_t k = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    while (k < max && fgets(line, sizeof line, f)) {
        mdsd_report_row r;
        cr_assert_eq(mdsd_report_csv_parse(line, true, &r, NULL), MDSD_OK);
        cells[k] = (csv_cell){r.temperature, r.n, "", "", r.alpha, r.se, r.gap};
        strcpy(cells[k].scheme, r.scheme);
        strcpy(cells[k].method, r.method);
        k++;
    }
    fclose(f);
    return k;
}

/* Mean over the rows of alpha* by brute force (independent of the table's
 * sort-and-scan) or of a verifier's exact acceptance. */
static double reference_mean_truncated(double T, size_t n, const char *scheme, const char *method,
                                       size_t top_k, double top_p)
{
    double sum = 0, p[NV], q[NV];
    for (int i = 0; i < ROWS; i++) {
        mdsd_softmax_float(target_logits[i], NV, T, p, "t", NULL);
        mdsd_softmax_float(draft_logits[i], NV, T, q, "d", NULL);
        cr_assert_eq(mdsd_truncate(p, NV, top_k, top_p, NULL), MDSD_OK);
        cr_assert_eq(mdsd_truncate(q, NV, top_k, top_p, NULL), MDSD_OK);
        mdsd_scheme s = {MDSD_SCHEME_IID, n, NV, q, NULL};
        cr_assert_eq(mdsd_scheme_parse(scheme, &s.kind, NULL), MDSD_OK);
        double a;
        if (!strcmp(method, "bound")) {
            mdsd_bound_result res = {0};
            cr_assert_eq(mdsd_bound_alpha(p, &s, MDSD_BOUND_BRUTE, NULL, NULL, &res, NULL), MDSD_OK);
            a = res.alpha;
        } else {
            mdsd_verifier_kind k;
            cr_assert_eq(mdsd_verifier_parse(method, &k, NULL), MDSD_OK);
            cr_assert_eq(mdsd_verifier_exact(k, p, &s, NULL, &a, NULL, NULL), MDSD_OK);
        }
        sum += a;
    }
    return sum / ROWS;
}

static double reference_mean_top_k(double T, size_t n, const char *scheme, const char *method,
                                   size_t top_k)
{
    return reference_mean_truncated(T, n, scheme, method, top_k, 1.0);
}

static double reference_mean(double T, size_t n, const char *scheme, const char *method)
{
    return reference_mean_top_k(T, n, scheme, method, 0);
}

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mdsd-table-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

TestSuite(table, .init = make_dir, .fini = remove_dir);

Test(table, cells_equal_the_per_position_results_averaged)
{
    char dump[128], out[128], args[512];
    snprintf(dump, sizeof dump, "%s/a.h5", dir);
    snprintf(out, sizeof out, "%s/r.csv", dir);
    write_dump(dump, 5, -1);
    snprintf(args, sizeof args, "table %s -o %s -t 0.7,1.5 -d 2,3 -s iid,wor,greedy,cps "
             "-v rrs,kseq,greedy,spechub,sd", dump, out);
    char *log;
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    csv_cell cells[128];
    size_t k = read_csv(out, cells, 128);
    cr_assert_gt(k, 20);
    for (size_t i = 0; i < k; i++) {
        double want = reference_mean(cells[i].T, cells[i].n, cells[i].scheme, cells[i].method);
        cr_assert_float_eq(cells[i].alpha, want, 1e-9, "%s/%s T=%g n=%zu: %.12g vs %.12g",
                           cells[i].scheme, cells[i].method, cells[i].T, cells[i].n,
                           cells[i].alpha, want);
        if (strcmp(cells[i].method, "bound"))
            cr_assert_lt(cells[i].gap, 1e-9, "a verifier above alpha*");
    }
}

/* `mdsd table` on a fresh dump NAME.h5 (seed 11) with OPTIONS; the cells of its CSV. */
static size_t table_on_seed_11(const char *name, const char *options, csv_cell *cells, size_t max)
{
    char dump[128], out[128], args[512];
    snprintf(dump, sizeof dump, "%s/%s.h5", dir, name);
    snprintf(out, sizeof out, "%s/%s.csv", dir, name);
    write_dump(dump, 11, -1);
    snprintf(args, sizeof args, "table %s -o %s %s", dump, out, options);
    char *log;
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    return read_csv(out, cells, max);
}

Test(table, top_k_truncates_both_models_before_every_method)
{
    csv_cell cells[16];
    size_t k = table_on_seed_11("a", "-t 1 -d 2 -s iid,greedy -v rrs,greedy --top-k 4", cells, 16);
    cr_assert_eq(k, 4);
    for (size_t i = 0; i < k; i++) {
        double want = reference_mean_top_k(cells[i].T, cells[i].n, cells[i].scheme, cells[i].method, 4);
        double untruncated = reference_mean(cells[i].T, cells[i].n, cells[i].scheme, cells[i].method);
        cr_assert_float_eq(cells[i].alpha, want, 1e-9, "%s/%s", cells[i].scheme, cells[i].method);
        cr_assert_gt(fabs(want - untruncated), 1e-6, "the truncation must matter on this dump");
    }
}

/* --top-p alone and after --top-k (on the renormalised top-k, MATH.md §0.3),
 * against the per-position reference over mdsd_truncate (tests/test_truncate.c
 * checks it against an exact slow one). */
Test(table, top_p_truncates_both_models_before_every_method)
{
    const char *cuts[] = {"--top-p 0.8", "--top-k 6 --top-p 0.7"};
    size_t ks[] = {0, 6};
    double ps[] = {0.8, 0.7};
    for (int c = 0; c < 2; c++) {
        char name[16], options[128];
        snprintf(name, sizeof name, "p%d", c);
        snprintf(options, sizeof options, "-t 1 -d 2 -s iid -v rrs,kseq %s", cuts[c]);
        csv_cell cells[16];
        size_t k = table_on_seed_11(name, options, cells, 16);
        cr_assert_eq(k, 3);
        for (size_t i = 0; i < k; i++) {
            double want = reference_mean_truncated(cells[i].T, cells[i].n, cells[i].scheme,
                                                   cells[i].method, ks[c], ps[c]);
            double top_k_only = reference_mean_top_k(cells[i].T, cells[i].n, cells[i].scheme,
                                                     cells[i].method, ks[c]);
            cr_assert_float_eq(cells[i].alpha, want, 1e-9, "%s: %s/%s", cuts[c], cells[i].scheme,
                               cells[i].method);
            cr_assert_gt(fabs(want - top_k_only), 1e-6, "%s: the top-p cut must matter", cuts[c]);
        }
    }
}

/* `mdsd table DUMP JOB` (results and --per-position files NAME0.*) and the same
 * with EXTRA added (NAME1.*) write the same bytes: EXTRA is an option that must
 * not change any value. */
static void assert_same_bytes_with(const char *dump, const char *name, const char *job,
                                   const char *extra)
{
    char args[1024], *log;
    for (int with = 0; with < 2; with++) {
        snprintf(args, sizeof args, "table %s -o %s/%s%d.csv --per-position %s/%s%d-pos.csv %s %s",
                 dump, dir, name, with, dir, name, with, job, with ? extra : "");
        cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
        free(log);
    }
    snprintf(args, sizeof args, "cmp %s/%s0.csv %s/%s1.csv && cmp %s/%s0-pos.csv %s/%s1-pos.csv",
             dir, name, dir, name, dir, name, dir, name);
    cr_assert_eq(test_run_shell(args, &log), 0, "%s (%s)", log, extra);
    free(log);
}

/* --top-p 1 is no truncation: the same bytes as the job without it (exact
 * and Monte-Carlo cells, the per-position rows too). */
Test(table, top_p_one_is_no_truncation)
{
    char dump[128];
    snprintf(dump, sizeof dump, "%s/one.h5", dir);
    write_dump(dump, 12, -1);
    assert_same_bytes_with(dump, "one", "-t 0.05,0.7 -d 2,3 -s iid,wor -v rrs,kseq,rrsw --trials 200",
                           "--top-p 1");
}

/* --max-paths: rrsw's guard on draw-path visits reaches the job. Raised, it
 * lets n = 4 at V = 8,000 run exactly (refused by default: the corpus case
 * range/table-rrsw-beyond-max-paths); it never changes a value the default
 * guard lets through (n = 3, same bytes). */
Test(table, max_paths_raises_the_rrsw_guard_without_changing_values)
{
    char dump[128], a[128], args[768], *log;
    snprintf(dump, sizeof dump, "%s/mp.h5", dir);
    snprintf(args, sizeof args, "toy --family zipf --vocab 8000 --positions 1 --seed 1 -o %s", dump);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    snprintf(a, sizeof a, "%s/mp4.csv", dir);
    snprintf(args, sizeof args, "table %s -o %s -t 1 -d 4 -s wor -v rrsw --max-paths 1e9", dump, a);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    snprintf(args, sizeof args, "awk -F, '$5 == \"rrsw\" { print $6 }' %s", a);
    cr_assert_eq(test_run_shell(args, &log), 0, "%s", log);
    double job = strtod(log, NULL);
    free(log);
    cr_assert(job > 0.0 && job < 1.0, "rrsw at n = 4: %.17g", job);
    assert_same_bytes_with(dump, "mp3", "-t 0.7 -d 3 -s wor -v rrsw", "--max-paths 1e9");
}

Test(table, a_cell_equals_mdsd_accept_on_the_same_positions)
{
    char dump[128], out[128], args[1024], tfile[128], dfile[128];
    snprintf(dump, sizeof dump, "%s/a.h5", dir);
    snprintf(out, sizeof out, "%s/r.csv", dir);
    write_dump(dump, 6, -1);
    snprintf(args, sizeof args, "table %s -o %s -t 0.7 -d 3 -s iid -v rrs", dump, out);
    char *log;
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    csv_cell cells[8];
    size_t k = read_csv(out, cells, 8);
    double table_rrs = NAN;
    for (size_t i = 0; i < k; i++)
        if (!strcmp(cells[i].method, "rrs"))
            table_rrs = cells[i].alpha;
    double sum = 0;
    snprintf(tfile, sizeof tfile, "%s/t.txt", dir);
    snprintf(dfile, sizeof dfile, "%s/d.txt", dir);
    for (int i = 0; i < ROWS; i++) {
        FILE *ft = fopen(tfile, "w"), *fd = fopen(dfile, "w");
        for (int v = 0; v < NV; v++) {
            fprintf(ft, "%.9g\n", target_logits[i][v]);
            fprintf(fd, "%.9g\n", draft_logits[i][v]);
        }
        fclose(ft), fclose(fd);
        snprintf(args, sizeof args, "accept -p @%s -q @%s --logits -T 0.7 -n 3 --verifier rrs "
                 "--exact --json", tfile, dfile);
        cr_assert_eq(test_run_mdsd(args, 0, &log), 0, "%s", log);
        char *a = strstr(log, "\"alpha\":");
        cr_assert_not_null(a, "%s", log);
        sum += strtod(a + 8, NULL);
        free(log);
    }
    cr_assert_float_eq(table_rrs, sum / ROWS, 1e-9);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

Test(table, monte_carlo_results_do_not_depend_on_threads)
{
    char dump[128], out1[128], out2[128], args[512];
    snprintf(dump, sizeof dump, "%s/a.h5", dir);
    snprintf(out1, sizeof out1, "%s/r1.csv", dir);
    snprintf(out2, sizeof out2, "%s/r2.csv", dir);
    write_dump(dump, 7, -1);
    char *log;
    snprintf(args, sizeof args, "table %s -o %s -d 2 -s wor -v rrsw --trials 3000 --simulate "
             "--seed 4 --threads 1", dump, out1);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    snprintf(args, sizeof args, "table %s -o %s -d 2 -s wor -v rrsw --trials 3000 --simulate "
             "--seed 4 --threads 2", dump, out2);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    char *a = slurp(out1), *b = slurp(out2);
    cr_assert_str_eq(a, b);
    cr_assert(strstr(a, ",0,") != NULL, "rrsw rows must be marked not exact: %s", a);
    free(a), free(b);
}

Test(table, resume_skips_finished_units_and_keeps_their_values)
{
    char good[128], bad[128], out[128], partial[160], args[512];
    snprintf(good, sizeof good, "%s/good.h5", dir);
    snprintf(bad, sizeof bad, "%s/second.h5", dir);
    snprintf(out, sizeof out, "%s/r.csv", dir);
    snprintf(partial, sizeof partial, "%s.partial", out);
    write_dump(good, 8, -1);
    write_dump(bad, 9, 6);
    char *log;
    snprintf(args, sizeof args, "table %s %s -o %s -d 2 -s iid -v rrs", good, bad, out);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 1, "%s", log);
    cr_assert(strstr(log, "second.h5") && strstr(log, "row 6"), "%s", log);
    free(log);
    struct stat st;
    cr_assert_neq(stat(out, &st), 0, "no output may appear after a failure");
    cr_assert_eq(stat(partial, &st), 0, "the finished unit must be kept for --resume");
    /* Replace the first dump: its finished unit no longer stands for it, and
     * the resume is refused naming it (dumps are identified by content). */
    char kept[160];
    snprintf(kept, sizeof kept, "%s.kept", good);
    cr_assert_eq(rename(good, kept), 0);
    write_dump(good, 100, -1);
    write_dump(bad, 9, -1);
    snprintf(args, sizeof args, "table %s %s -o %s -d 2 -s iid -v rrs --resume", good, bad, out);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 1, "%s", log);
    cr_assert(strstr(log, "unit good.h5,0.7 was computed from") && strstr(log, "content has changed"),
              "%s", log);
    free(log);
    /* The first dump as it was: a resumed job must not recompute its unit
     * (a failure planted in its rows is never reached). */
    cr_assert_eq(rename(kept, good), 0);
    snprintf(args, sizeof args, "table %s %s -o %s -d 2 -s iid -v rrs --resume", good, bad, out);
    setenv("MDSD_TABLE_FAIL", "0:0", 1);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    unsetenv("MDSD_TABLE_FAIL");
    free(log);
    char *resumed = slurp(out);
    cr_assert_neq(stat(partial, &st), 0, "the partial file is removed at the end");
    write_dump(good, 8, -1);
    snprintf(args, sizeof args, "table %s %s -o %s -d 2 -s iid -v rrs", good, bad, out);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    char *fresh = slurp(out);
    cr_assert_str_eq(resumed, fresh);
    free(resumed), free(fresh);
}

Test(table, bad_inputs_fail_cleanly)
{
    char dump[128], out[128], args[512];
    snprintf(dump, sizeof dump, "%s/a.h5", dir);
    snprintf(out, sizeof out, "%s/r.csv", dir);
    write_dump(dump, 5, -1);
    struct { const char *extra; const char *dump; int status; const char *message; } cases[] = {
        {"-d 2", "/nonexistent.h5", 1, "nonexistent.h5"},
        {"-d 2 -t -0.5", NULL, 1, "temperature"},
        {"-d 2 -t 0 -s wor -v none", NULL, 1, "row 0"},
        {"-d 20 -s wor -v none", NULL, 1, "n = 20"},
        {"-d 2 --positions 5:500", NULL, 1, "rows 5:500"},
        {"-d 2 --draft-model nope", NULL, 1, "nope"},
        {"-d 2 -s multi", NULL, 1, "multi"},
        {"-d 2 -v bogus", NULL, 2, "bogus"},
        {"-d 2 --draft-model small,small", NULL, 1, "given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(args, sizeof args, "table %s -o %s %s", cases[i].dump ? cases[i].dump : dump, out,
                 cases[i].extra);
        char *log;
        cr_assert_eq(test_run_mdsd(args, 1, &log), cases[i].status, "%s: %s", args, log);
        cr_assert(strstr(log, cases[i].message), "%s: expected '%s' in: %s", args,
                  cases[i].message, log);
        free(log);
        struct stat st;
        cr_assert_neq(stat(out, &st), 0, "%s left an output file", args);
        char partial[160];
        snprintf(partial, sizeof partial, "%s.partial", out);
        cr_assert_neq(stat(partial, &st), 0, "%s left a partial file", args);
    }
}

/* Column labels name the drafter wherever a dump has several (DUMP:NAME), and the
 * default choice (the first by name) is said on stderr with how to choose; a dump of
 * one drafter keeps its plain label and gets no note. */
Test(table, the_drafter_is_named_and_a_default_choice_is_said)
{
    char out[128], args[512], *log, *csv;
    snprintf(out, sizeof out, "%s/drafters.csv", dir);
    snprintf(args, sizeof args, "table data/kjv-ngram.h5 -o %s -d 2 -v none -s iid --positions 0:60", out);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    cr_assert(strstr(log, "data/kjv-ngram.h5 has 2 drafters (kn2, kn3); using kn2, the first by "
                          "name (column kjv-ngram.h5:kn2); --draft-model NAME picks one"), "%s", log);
    free(log);
    csv = slurp(out);
    cr_assert(strstr(csv, "\nkjv-ngram.h5:kn2,0.7,2,iid,bound,"), "%s", csv);
    free(csv);
    snprintf(args, sizeof args, "table data/kjv-ngram.h5 -o %s -d 2 -v none -s iid --positions 0:60 "
             "--draft-model kn3 --markdown", out);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    cr_assert(!strstr(log, "drafters (") && strstr(log, "| scheme | method | kjv-ngram.h5:kn3 |"),
              "%s", log);
    free(log);
    char one[128];
    snprintf(one, sizeof one, "%s/one.h5", dir);
    write_dump(one, 3, -1);
    snprintf(args, sizeof args, "table %s -o %s -d 2 -v none -s iid", one, out);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    cr_assert(!strstr(log, "drafters ("), "%s", log);
    free(log);
    csv = slurp(out);
    cr_assert(strstr(csv, "\none.h5,0.7,2,iid,bound,"), "%s", csv);
    free(csv);
}
