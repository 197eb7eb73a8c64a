/* mdsd toy and mdsd info end to end: dumps of every family validate, are
 * reproducible from the seed whatever the thread count, are readable by
 * h5dump and h5py (and h5py-written dumps by mdsd), and bad inputs exit 1
 * with a named problem and no output file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"

/* Debian's python3-h5py lives under the system interpreter. */
#define PYTHON "/usr/bin/python3"

static char *make_dir(void)
{
    char *dir = strdup("/tmp/mdsd-test-cli-XXXXXX");
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

static int run(const char *fmt, const char *a, const char *b, char **out)
{
    char args[2048];
    snprintf(args, sizeof args, fmt, a, b);
    return test_run_mdsd(args, 1, out);
}

/* Output of a shell command (stdout and stderr), and its exit status. */
static int shell(const char *cmd, char **out)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    cr_assert_not_null(f);
    size_t cap = 1 << 16, used = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + used, 1, cap - used - 1, f)) > 0) {
        used += got;
        if (cap - used < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[used] = '\0';
    *out = buf;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int dir_entries(const char *dir)
{
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    shell(cmd, &out);
    int n = atoi(out);
    free(out);
    return n;
}

Test(dump_cli, every_family_writes_a_valid_dump)
{
    char *dir = make_dir();
    const char *families[] = {"bernoulli", "uniform", "spechub-toy", "dirichlet", "zipf", "degenerate"};
    const char *dtypes[] = {"float32", "float16", "bfloat16", "float32", "float16", "bfloat16"};
    for (int k = 0; k < 6; k++) {
        char path[600], args[1200], *out;
        snprintf(path, sizeof path, "%s/%s.h5", dir, families[k]);
        snprintf(args, sizeof args, "toy --family %s --vocab %d --positions 70 --seed 4 --drafts a,b --samples 3 "
                 "--dtype %s --chunk-rows 16 -o %s", families[k], k == 0 ? 2 : 64, dtypes[k], path);
        cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s", out);
        cr_assert(strstr(out, "70 rows in 3 samples"), "%s", out);
        free(out);
        cr_assert_eq(run("info %s --validate --json", path, "", &out), 0, "%s", out);
        cr_assert(strstr(out, "\"rows\":70,\"samples\":3,\"max_sample_rows\":24"), "%s", out);
        cr_assert(strstr(out, "\"validated\":true") && strstr(out, "\"name\":\"b\""), "%s", out);
        char want[64];
        snprintf(want, sizeof want, "\"dtype\":\"%s\"", dtypes[k]);
        cr_assert(strstr(out, want), "%s", out);
        snprintf(want, sizeof want, "\"toy_family\":\"%s\"", families[k]);
        cr_assert(strstr(out, want), "%s", out);
        free(out);
    }
    char *out;
    cr_assert_eq(run("info %s/zipf.h5", dir, "", &out), 0);
    cr_assert(strstr(out, "format        1") && strstr(out, "chunks of 16 rows") &&
              strstr(out, "model 'toy-zipf-a'"), "%s", out);
    free(out);
    rm_tree(dir);
}

/* All logits of a dump, for comparisons. */
static float *read_all(const char *path, size_t *count)
{
    mdsd_dump *d;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK, "%s", err.msg);
    size_t n = d->N * d->V;
    float *x = malloc((1 + d->n_drafts) * n * sizeof *x);
    for (int m = -1; m < (int)d->n_drafts; m++)
        cr_assert_eq(mdsd_dump_read_logits(d, m, 0, d->N, x + (size_t)(m + 1) * n, &err), MDSD_OK);
    *count = (1 + d->n_drafts) * n;
    mdsd_dump_close(d);
    return x;
}

Test(dump_cli, toy_dumps_are_reproducible_from_the_seed)
{
    char *dir = make_dir(), *out;
    char a[600], b[600], c[600];
    snprintf(a, sizeof a, "%s/a.h5", dir);
    snprintf(b, sizeof b, "%s/b.h5", dir);
    snprintf(c, sizeof c, "%s/c.h5", dir);
    cr_assert_eq(run("toy -f zipf -V 500 -N 90 -s 11 --drafts x,y --threads 1 --chunk-rows 8 -o %s", a, "", &out), 0);
    free(out);
    cr_assert_eq(run("toy -f zipf -V 500 -N 90 -s 11 --drafts x,y --threads 2 --gzip 3 -o %s", b, "", &out), 0);
    free(out);
    cr_assert_eq(run("toy -f zipf -V 500 -N 90 -s 12 --drafts x,y -o %s", c, "", &out), 0);
    free(out);
    size_t na, nb, nc;
    float *xa = read_all(a, &na), *xb = read_all(b, &nb), *xc = read_all(c, &nc);
    cr_assert(na == nb && na == nc);
    cr_assert(!memcmp(xa, xb, na * sizeof *xa), "same seed, different threads/chunks: different logits");
    cr_assert(memcmp(xa, xc, na * sizeof *xa), "different seeds, same logits");
    free(xa);
    free(xb);
    free(xc);
    rm_tree(dir);
}

Test(dump_cli, h5dump_reads_a_toy_dump)
{
    char *dir = make_dir(), *out, path[600], cmd[800];
    snprintf(path, sizeof path, "%s/t.h5", dir);
    cr_assert_eq(run("toy -f spechub-toy -V 50 -N 20 --dtype bfloat16 --drafts small -o %s", path, "", &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "h5dump -H '%s'", path);
    cr_assert_eq(shell(cmd, &out), 0, "%s", out);
    cr_assert(strstr(out, "GROUP \"target\"") && strstr(out, "DATASET \"logits\"") &&
              strstr(out, "DATASPACE  SIMPLE { ( 20, 50 ) / ( H5S_UNLIMITED, 50 ) }") &&
              strstr(out, "ATTRIBUTE \"mdsd_format\"") && strstr(out, "GROUP \"small\"") &&
              strstr(out, "ATTRIBUTE \"dtype\""), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "h5dump -a /drafts/small/logits/dtype '%s'", path);
    cr_assert_eq(shell(cmd, &out), 0, "%s", out);
    cr_assert(strstr(out, "\"bfloat16\""), "%s", out);
    free(out);
    rm_tree(dir);
}

static double expected_value(int model, size_t r, size_t c)
{
    if ((r + c + (size_t)model) % 13 == 0)
        return -INFINITY;
    return (double)((r * 31 + c * 17 + (size_t)model * 5) % 97) / 8.0 - 6.0;
}

/* The model runner writes dumps with h5py: mdsd must read exactly what it
 * wrote (float16 gzip-chunked, bfloat16 as uint16, contiguous float32,
 * fixed- and variable-length string attributes). */
Test(dump_cli, mdsd_reads_a_dump_written_by_h5py)
{
    char *dir = make_dir(), *out, path[600], cmd[1000];
    snprintf(path, sizeof path, "%s/py.h5", dir);
    snprintf(cmd, sizeof cmd, PYTHON " tests/h5py_dump.py write '%s' 30 20", path);
    cr_assert_eq(shell(cmd, &out), 0, "%s", out);
    free(out);
    mdsd_dump *d;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK, "%s", err.msg);
    cr_assert(d->N == 30 && d->V == 20 && d->n_drafts == 2 && d->n_samples == 8);
    cr_assert_eq(d->target.dtype, MDSD_DUMP_FLOAT16);
    cr_assert_eq(d->target.gzip, 4);
    cr_assert_eq(d->target.dropped_padding, 3);
    cr_assert_eq(d->target.vocab_size, 23);
    cr_assert_str_eq(d->drafts[0].name, "bf");
    cr_assert_eq(d->drafts[0].dtype, MDSD_DUMP_BFLOAT16);
    cr_assert_eq(d->drafts[1].dtype, MDSD_DUMP_FLOAT32);
    cr_assert_eq(d->drafts[1].chunk_rows, 0);
    cr_assert_str_eq(d->tokenizer, "none");
    cr_assert_str_eq(d->creator, "h5py_dump.py");
    cr_assert_str_eq(d->drafts[1].model, "py-draft-f32");
    float x[600];
    for (int m = -1; m < 2; m++) {
        cr_assert_eq(mdsd_dump_read_logits(d, m, 0, 30, x, &err), MDSD_OK, "%s", err.msg);
        for (size_t r = 0; r < 30; r++)
            for (size_t c = 0; c < 20; c++)
                cr_assert_eq(x[r * 20 + c], (float)expected_value(m + 1, r, c), "model %d (%zu, %zu)", m, r, c);
    }
    cr_assert_eq(mdsd_dump_validate(d, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    mdsd_dump_close(d);
    rm_tree(dir);
}

/* ... and h5py reads what mdsd wrote: the same -inf counts and sums. */
Test(dump_cli, h5py_reads_a_dump_written_by_mdsd)
{
    char *dir = make_dir(), *out, path[600], cmd[1000];
    const char *dtypes[] = {"float16", "bfloat16", "float32"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s.h5", dir, dtypes[k]);
        cr_assert_eq(run("toy -f degenerate -V 40 -N 33 --drafts d1,d2 --dtype %s -o %s", dtypes[k], path, &out), 0,
                     "%s", out);
        free(out);
        snprintf(cmd, sizeof cmd, PYTHON " tests/h5py_dump.py read '%s'", path);
        cr_assert_eq(shell(cmd, &out), 0, "%s", out);
        mdsd_dump *d;
        mdsd_err err;
        cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK);
        float x[33 * 40];
        const char *line = out;
        for (int m = -1; m < 2; m++) {
            cr_assert_eq(mdsd_dump_read_logits(d, m, 0, 33, x, &err), MDSD_OK);
            double sum = 0;
            long ninf = 0;
            for (size_t i = 0; i < 33 * 40; i++) {
                if (isinf(x[i]))
                    ninf++;
                else
                    sum += x[i];
            }
            char name[64];
            int rows;
            long pinf;
            double psum;
            cr_assert_eq(sscanf(line, "%63s %d %ld %lf", name, &rows, &pinf, &psum), 4, "%s", out);
            cr_assert_str_eq(name, m < 0 ? "target" : m == 0 ? "drafts/d1" : "drafts/d2");
            cr_assert(rows == 33 && pinf == ninf, "%s: %ld vs %ld -inf", name, pinf, ninf);
            cr_assert_float_eq(psum, sum, 1e-9 * (1 + fabs(sum)), "%s: %.17g vs %.17g", name, psum, sum);
            line = strchr(line, '\n') + 1;
        }
        mdsd_dump_close(d);
        free(out);
    }
    rm_tree(dir);
}

Test(dump_cli, bad_inputs_exit_1_with_the_problem_named)
{
    char *dir = make_dir(), *out, path[600], text[600];
    snprintf(path, sizeof path, "%s/out.h5", dir);
    snprintf(text, sizeof text, "%s/notes.txt", dir);
    FILE *f = fopen(text, "w");
    fputs("not a dump\n", f);
    fclose(f);
    cr_assert_eq(run("info %s/missing.h5", dir, "", &out), 1);
    cr_assert(strstr(out, "mdsd info: cannot open dump") && strstr(out, "No such file"), "%s", out);
    free(out);
    cr_assert_eq(run("info %s", text, "", &out), 1);
    cr_assert(strstr(out, "is not an HDF5 file"), "%s", out);
    cr_assert(!strstr(out, "HDF5-DIAG"), "HDF5 printed its error stack: %s", out);
    free(out);
    cr_assert_eq(run("info", "", "", &out), 2);
    free(out);
    /* toy: errors before and during writing leave nothing behind */
    cr_assert_eq(run("toy --family bernoulli --vocab 3 --positions 5 -o %s", path, "", &out), 1);
    cr_assert(strstr(out, "needs V = 2"), "%s", out);
    free(out);
    cr_assert_eq(run("toy --family zipf --vocab 3 --positions 5 --dtype float8 -o %s", path, "", &out), 1);
    cr_assert(strstr(out, "unknown dtype 'float8'"), "%s", out);
    free(out);
    cr_assert_eq(run("toy --family zipf --vocab 3 --positions 5 --param q=1 -o %s", path, "", &out), 1);
    cr_assert(strstr(out, "has no parameter 'q'"), "%s", out);
    free(out);
    cr_assert_eq(run("toy --family zipf --vocab 3 --positions 5 --drafts a,a -o %s", path, "", &out), 1);
    cr_assert(strstr(out, "given twice"), "%s", out);
    free(out);
    /* huge logits overflow float16: the error surfaces mid-write */
    cr_assert_eq(run("toy --family spechub-toy --vocab 4 --positions 5 --param T=1e-5 --dtype float16 -o %s", path, "",
                     &out), 1);
    cr_assert(strstr(out, "overflows float16"), "%s", out);
    free(out);
    cr_assert_eq(run("toy --family zipf --vocab 3 --positions 5 -o %s/no/such/dir.h5", dir, "", &out), 1);
    cr_assert(strstr(out, "cannot create"), "%s", out);
    free(out);
    cr_assert_eq(run("toy --family zipf --vocab 3 -o %s", path, "", &out), 2);
    cr_assert(strstr(out, "missing --positions"), "%s", out);
    free(out);
    cr_assert_eq(run("toy --family zipf --vocab 3 --positions 5 --samples 6 -o %s", path, "", &out), 2);
    free(out);
    cr_assert_eq(dir_entries(dir), 1, "a failed toy left files behind"); /* notes.txt */
    /* info --validate names the bad row */
    cr_assert_eq(run("toy --family dirichlet --vocab 8 --positions 12 --drafts d -o %s", path, "", &out), 0);
    free(out);
    char cmd[1000];
    snprintf(cmd, sizeof cmd,
             PYTHON " -c \"import h5py, numpy as np; f = h5py.File('%s', 'r+'); f['drafts/d/logits'][7, 3] = np.nan\"",
             path);
    cr_assert_eq(shell(cmd, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(run("info %s", path, "", &out), 0); /* the structure is fine */
    free(out);
    cr_assert_eq(run("info %s --validate", path, "", &out), 1);
    cr_assert(strstr(out, "row 7 of /drafts/d/logits: logit 3 is NaN"), "%s", out);
    free(out);
    rm_tree(dir);
}

/* The dump shipped by the model runner (data/kjv-ngram.h5) is valid for mdsd. */
Test(dump_cli, the_shipped_runner_dump_validates)
{
    char *out;
    cr_assert_eq(test_run_mdsd("info data/kjv-ngram.h5 --validate --json", 1, &out), 0, "%s", out);
    cr_assert(strstr(out, "\"validated\":true") && strstr(out, "\"dtype\":\"float16\""), "%s", out);
    free(out);
}
