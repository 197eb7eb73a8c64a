/* mdsd plot's block kinds (src/plot/plot_block.c): a block CSV of the shipped
 * tree dump drawn as E[tau], speed-up and reach against the depth; a fake
 * gnuplot first on PATH keeps the data file it was given, and its points are
 * the CSV's values exactly (y, and the s.e. column: the scripts scale it).
 * Malformed block CSVs and misused options are refused naming what is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"

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

/* Field `name` (a number) of the CSV line at `line` (csv: the header's text). */
static double value_at(const char *csv, const char *line, const char *name)
{
    int col = 0;
    for (const char *p = csv; *p && *p != '\n'; p = strchr(p, ',') ? strchr(p, ',') + 1 : "", col++)
        if (!strncmp(p, name, strlen(name)) && strchr(",\n", p[strlen(name)]))
            break;
    for (int c = 0; c < col; c++)
        line = strchr(line, ',') + 1;
    return strtod(line, NULL);
}

/* The same of the first line that contains `prefix`. */
static double csv_value(const char *csv, const char *prefix, const char *name)
{
    const char *line = strstr(csv, prefix);
    cr_assert(line, "no line %s", prefix);
    return value_at(csv, line + 1, name);
}

/* The fake gnuplot: appends its arguments to DIR/args and copies the data
 * file (datafile='...' of its -e) to DIR/data, then runs the real one. */
static void fake_gnuplot(const char *dir)
{
    char *real = test_shell_ok("command -v gnuplot"), path[300];
    real[strcspn(real, "\n")] = '\0';
    snprintf(path, sizeof path, "%s/bin", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/bin/gnuplot", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\necho \"$@\" >> %s/args\nfor a in \"$@\"; do\n  case \"$a\" in *datafile=*)\n"
               "    d=${a#*datafile=\\'}; d=${d%%%%\\'*}; cp \"$d\" %s/data ;;\n  esac\ndone\n"
               "exec %s \"$@\"\n", dir, dir, real);
    fclose(f);
    chmod(path, 0700);
    free(real);
}

static char *plot(const char *dir, const char *args, int *rc)
{
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "cd %s && rm -f data args && PATH=%s/bin:$PATH %s plot %s", dir, dir,
             test_mdsd_bin(), args);
    *rc = test_run_shell(cmd, &out);
    return out;
}

Test(plot, block_kinds_draw_the_csv_values, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-plotblock-XXXXXX", cmd[2048], want[256], path[300];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "%s block data/kjv-trees.h5 --verifiers sd,kseq --sequences 1,2 --depth 1,2 "
             "--cost 0,0.5 -o %s/b.csv", test_mdsd_bin(), dir);
    free(test_shell_ok(cmd));
    fake_gnuplot(dir);
    snprintf(path, sizeof path, "%s/b.csv", dir);
    char *csv = slurp(path);
    int rc;
    /* the default kind of a block CSV: E[tau] against L, kseq at its largest K */
    char *out = plot(dir, "b.csv -o d.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/data", dir);
    char *data = slurp(path);
    const char *kseq = strstr(data, "\"kseq (K = 2)\"\n");
    cr_assert(strstr(data, "\"sd (K = 1)\"\n") && kseq && !strstr(data, "K = 1)\"\n1 1.7"), "%s", data);
    for (int L = 1; L <= 2; L++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "\ndata/kjv-trees.h5,kseq,seq,iid,2,,%d,", L);
        snprintf(want, sizeof want, "%d %.17g %.17g\n", L, csv_value(csv, prefix, "block_efficiency"),
                 csv_value(csv, prefix, "stderr"));
        cr_expect(strstr(kseq, want), "no '%s' in\n%s", want, data);
    }
    free(data);
    snprintf(path, sizeof path, "%s/d.png", dir);
    cr_expect_eq(access(path, F_OK), 0);
    /* the speed-up: one series per cost, titled at the first cost only, the costs' key */
    out = plot(dir, "b.csv --kind block-speedup -o s.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/data", dir);
    data = slurp(path);
    snprintf(path, sizeof path, "%s/args", dir);
    char *args = slurp(path);
    cr_expect(strstr(args, "nseries=4;") && strstr(args, "costlist='0 0.5'") && strstr(args, "overlay=1"),
              "%s", args);
    /* kseq K = 2 at cost 0.5, L = 2: the speed-up, its s.e. over 1 + c L */
    const char *prefix = "\ndata/kjv-trees.h5,kseq,seq,iid,2,,2,";
    const char *row = strstr(strstr(csv, prefix) + 1, prefix); /* the second cost's line */
    cr_assert(row);
    cr_expect(strstr(data, "\"\"\n1 ") && value_at(csv, row + 1, "cost") == 0.5,
              "the second cost's series have no title:\n%s", data);
    snprintf(want, sizeof want, "2 %.17g %.17g\n", value_at(csv, row + 1, "speedup"),
             value_at(csv, row + 1, "stderr") / 2.0);
    cr_expect(strstr(data, want), "no '%s' in\n%s", want, data);
    free(data), free(args);
    /* the reach at the deepest L: P(at least d accepted), d = 1, 2 */
    out = plot(dir, "b.csv --kind block-reach --method kseq -o r.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/data", dir);
    data = slurp(path);
    cr_expect(strstr(data, "\"kseq (K = 2)\"\n1 0.") && strstr(data, "\n2 0.") && !strstr(data, "sd ("),
              "%s", data);
    free(data);
    free(csv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

Test(plot, block_csv_errors_are_refused, .timeout = 60)
{
    char dir[] = "/tmp/mdsd-plotblock-XXXXXX", cmd[4096], *out;
    cr_assert(mkdtemp(dir));
    const char *head = "dump,verifier,policy,scheme,sequences,widths,depth,tree_size,trees,samples,"
                       "block_efficiency,stderr,per_depth,cost,speedup,per_depth_stderr,contexts,"
                       "mean_acceptance_length,per_position_acceptance_rate,"
                       "per_position_acceptance_rate_stderr";
    const char *good = "t.h5,rrs,seq,iid,2,,1,2,10,10,1.6,0.03,0.6,0,1.6,0.03,positions,1.6,0.6,0.03";
    struct { const char *rows, *args, *msg; int rc; } cases[] = {
        {"t.h5,rrs,seq,iid,2,,1,2,10,10,2.6,0.03,0.6,0,1.6,0.03,positions,1.6,0.6,0.03", "",
         "c.csv: line 2, column block_efficiency: '2.6' is not a number in [1, 2]", 1},
        {"t.h5,rrs,seq,iid,2,,1,2,10,10,1.6,0.03,0.6,0,1.6,0.03,positions,1.6,0.6,0.03\n"
         "t.h5,rrs,seq,iid,2,,1,2,10,10,1.6,0.03,0.6,0,1.6,0.03,positions,1.6,0.6,0.03", "",
         "c.csv: line 3: a second row for the point of verifier rrs, seq 2 at depth 1", 1},
        {"t.h5,rrs,seq,iid,2,,1,2,10,10,1.6,0.03,0.6,0,1.6,0.03,positions,1.6,1.6,0.03",
         "--kind block-reach", "line 2, column per_position_acceptance_rate: '1.6' has no number in [0, 1] at position 1", 1},
        {NULL, "--n 3", "--n: no seq rows with 3 sequences", 1},
        {NULL, "--method kseq", "--method: 'kseq' matches no row", 1},
        {NULL, "--kind block-depth --temperature 1", "--temperature, --scheme and --dumps are not for a block CSV", 2},
        {NULL, "--kind nope", "--kind: 'nope' is not vs-temperature", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, "cd %s && rm -f c.png && printf '%s\\n%s\\n' > c.csv && %s plot c.csv %s -o c.png; "
                 "echo rc=$?; ls c.png 2>/dev/null || true", dir, head, cases[i].rows ? cases[i].rows : good,
                 test_mdsd_bin(), cases[i].args);
        cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
        char rc[16];
        snprintf(rc, sizeof rc, "rc=%d\n", cases[i].rc);
        cr_expect(strstr(out, cases[i].msg) && strstr(out, rc) && !strstr(out, "c.png\n"), "case %zu: %s", i, out);
        free(out);
    }
    /* a results CSV of mdsd table has no default kind; a block CSV without a column is refused */
    snprintf(cmd, sizeof cmd, "cd %s && printf 'dump,temperature,n,scheme,method,alpha,stderr\\nd,1,2,iid,rrs,0.5,0.01\\n' "
             "> t.csv && %s plot t.csv -o t.png; echo rc=$?; printf '%s\\n%s\\n' | cut -d, -f1-14 > m.csv && "
             "%s plot m.csv --kind block-depth -o m.png; echo rc=$?", dir, test_mdsd_bin(), head, good, test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "missing --kind (only a block CSV has a default, block-depth)\n") &&
              strstr(out, "rc=2\n") && strstr(out, "m.csv: no column 'speedup'") && strstr(out, "rc=1\n"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

/* --label OLD=NEW renames dumps (and dump:drafter names), methods and schemes in the
 * legend and title, keeps each method's style (the key of styles.gp is the CSV's
 * name), and is recorded in the figure's provenance. Shown once to catch a planted
 * error: the relabelling skipped for the dump part of an overlaid key fails the
 * "KN-2: RRS (i.i.d.)" check. */
Test(plot, labels_rename_legends_and_titles_and_are_recorded, .timeout = 60)
{
    char dir[] = "/tmp/mdsd-plotblock-XXXXXX", path[300];
    cr_assert(mkdtemp(dir));
    fake_gnuplot(dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("dump,temperature,n,scheme,method,alpha,stderr,positions\n"
          "kjv.h5:kn2,1,2,iid,rrs,0.7,0.01,10\nkjv.h5:kn2,1,2,iid,bound,0.8,0,10\n"
          "kjv.h5:kn3,1,2,iid,rrs,0.72,0.01,10\nkjv.h5:kn3,1,2,iid,bound,0.82,0,10\n", f);
    fclose(f);
    int rc;
    char *out = plot(dir, "r.csv --kind vs-drafts --dump kjv.h5:kn2 --label kjv.h5:kn2=KN-2 --label rrs=RRS "
                     "--label 'iid=i.i.d.' -o one.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/args", dir);
    char *args = slurp(path);
    cr_expect(strstr(args, "plottitle='KN-2, T = 1'") && strstr(args, "seriesmethods='rrs'") &&
              strstr(args, "boundschemes='iid'"), "the title relabelled, the styles the CSV's: %s", args);
    free(args);
    snprintf(path, sizeof path, "%s/data", dir);
    char *data = slurp(path);
    cr_expect(strstr(data, "\"RRS (i.i.d.)\"\n2 0.69999999999999996 0.01"), "%s", data);
    free(data);
    snprintf(path, sizeof path, "%s/one.png.provenance.json", dir);
    char *side = slurp(path);
    cr_expect(strstr(side, "\"labels\":{\"kjv.h5:kn2\":\"KN-2\",\"rrs\":\"RRS\",\"iid\":\"i.i.d.\"}"), "%s", side);
    free(side);
    /* overlaid drafters: the dump part of each legend entry */
    out = plot(dir, "r.csv --kind vs-drafts --dumps all --label kjv.h5:kn2=KN-2 --label kjv.h5:kn3=KN-3 "
               "--label rrs=RRS --label 'iid=i.i.d.' -o two.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/data", dir);
    data = slurp(path);
    cr_expect(strstr(data, "\"KN-2: RRS (i.i.d.)\"\n") && strstr(data, "\"KN-3: RRS (i.i.d.)\"\n") &&
              !strstr(data, "kjv.h5"), "%s", data);
    free(data);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

/* A key below a column-wide figure gets the bottom margin its rows need (a fixed 0.25
 * let the 6-row key of overlaid drafters cover the x label): 4 series and the band
 * in 2 columns + the interval title = 4 rows, 0.13 + 0.035 x 4 of the height. */
Test(plot, a_key_below_gets_the_margin_its_rows_need, .timeout = 60)
{
    char dir[] = "/tmp/mdsd-plotblock-XXXXXX", path[300];
    cr_assert(mkdtemp(dir));
    fake_gnuplot(dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("dump,temperature,n,scheme,method,alpha,stderr,positions\n"
          "kjv.h5:kn2,1,2,iid,rrs,0.7,0.01,10\nkjv.h5:kn2,1,2,iid,bound,0.8,0,10\n"
          "kjv.h5:kn3,1,2,iid,rrs,0.72,0.01,10\nkjv.h5:kn3,1,2,iid,bound,0.82,0,10\n", f);
    fclose(f);
    int rc;
    char *out = plot(dir, "r.csv --kind vs-drafts --dumps all --size column -o c.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/args", dir);
    char *args = slurp(path);
    cr_expect(strstr(args, "maxcols 3 samplen 2; set bmargin at screen 0.270'"), "%s", args);
    free(args);
    out = plot(dir, "r.csv --kind vs-drafts --dump kjv.h5:kn2 --method rrs --size column -o d.png", &rc);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    args = slurp(path);
    cr_expect(strstr(args, "set bmargin at screen 0.250'"), "never below 0.25: %s", args);
    free(args);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}
