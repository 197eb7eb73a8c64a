/* The front end's calls (mdsd/run.h) from C, without MPI: a job run as N shards,
 * each rank's aggregate kept in memory (run.shard_text), folded by rank 0's call
 * (mdsd_table_merge_texts, mdsd_merge_texts) gives the bytes of the job run in one
 * process, for the table job (CSV and Markdown) and the block job (CSV); the
 * shards' checkpoints are left for the caller; a missing or altered shard is
 * refused and writes nothing. The CLI's MPI driver (src/cli/cli_mpi.c) is these
 * calls around MPI's transfers (tests/test_scale.c runs it under mpirun). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void same_file(const char *a, const char *b)
{
    char *x = slurp(a), *y = slurp(b);
    cr_assert_str_eq(x, y, "%s and %s differ", a, b);
    free(x), free(y);
}

#define SHARDS 3

static const char *const dumps[] = {"data/kjv-ngram.h5"};
static const double temps[] = {0.7, 1.0};
static const size_t counts[] = {2};
static const mdsd_scheme_kind schemes[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR};
static const mdsd_verifier_kind verifiers[] = {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ};

static void table_job(mdsd_table_opts *t, const char *output, const char *markdown)
{
    mdsd_table_opts_init(t);
    t->n_dumps = 1, t->dumps = dumps;
    t->n_temperatures = 2, t->temperatures = temps;
    t->n_counts = 1, t->draft_counts = counts;
    t->n_schemes = 2, t->schemes = schemes;
    t->n_verifiers = 2, t->verifiers = verifiers;
    t->row_end = 120;
    t->output = output, t->markdown = markdown;
}

Test(run_api, table_shards_in_memory_fold_to_the_single_run_bytes, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-run-api-XXXXXX", one[64], md1[64], all[64], mdn[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(one, sizeof one, "%s/one.csv", dir), snprintf(md1, sizeof md1, "%s/one.md", dir);
    snprintf(all, sizeof all, "%s/all.csv", dir), snprintf(mdn, sizeof mdn, "%s/all.md", dir);
    mdsd_err err;
    mdsd_table_opts t;
    table_job(&t, one, md1);
    cr_assert_eq(mdsd_table_run(&t, &err), MDSD_OK, "%s", err.msg);

    table_job(&t, all, mdn);
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    cr_assert_eq(mdsd_table_check(&t, &run, &err), MDSD_OK, "%s", err.msg);
    char *text[SHARDS] = {0};
    size_t size[SHARDS];
    mdsd_shard_text in[SHARDS];
    for (size_t r = 0; r < SHARDS; r++) {
        mdsd_table_opts part = t;
        part.shard = r + 1, part.shards = SHARDS;
        mdsd_run_opts rank = run;
        rank.shard_text = &text[r], rank.shard_size = &size[r];
        cr_assert_eq(mdsd_table_run_with(&part, &rank, &err), MDSD_OK, "shard %zu: %s", r + 1,
                     err.msg);
        cr_assert_not_null(text[r]);
        cr_assert_eq(access(all, F_OK), -1, "a shard wrote the output");
        char ckpt[128];
        snprintf(ckpt, sizeof ckpt, "%s.shard-%zu-of-%d.partial", all, r + 1, SHARDS);
        cr_assert_eq(access(ckpt, F_OK), 0, "%s: the rank's checkpoint is the caller's", ckpt);
        unlink(ckpt);
        in[SHARDS - 1 - r] = (mdsd_shard_text){"rank", text[r], size[r]}; /* any order */
    }
    /* a missing shard is refused, and nothing is written */
    cr_assert_eq(mdsd_table_merge_texts(&t, &run, in, SHARDS - 1, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "missing"), "%s", err.msg);
    cr_assert_eq(access(all, F_OK), -1);
    cr_assert_eq(mdsd_table_merge_texts(&t, &run, in, SHARDS, &err), MDSD_OK, "%s", err.msg);
    same_file(one, all);
    same_file(md1, mdn);
    for (size_t r = 0; r < SHARDS; r++)
        free(text[r]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(run_api, block_shards_in_memory_fold_to_the_single_run_bytes, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-run-api-XXXXXX", one[64], all[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(one, sizeof one, "%s/one.csv", dir), snprintf(all, sizeof all, "%s/all.csv", dir);
    const char *trees[] = {"data/kjv-trees.h5"};
    mdsd_err err;
    mdsd_block_job_opts b;
    mdsd_block_job_opts_init(&b);
    b.n_dumps = 1, b.dumps = trees, b.verifiers = "rrs,kseq", b.depths = "1,2";
    b.output = one;
    cr_assert_eq(mdsd_block_run(&b, &err), MDSD_OK, "%s", err.msg);
    b.output = all;
    char *text[2] = {0};
    size_t size[2];
    mdsd_shard_text in[2];
    for (size_t r = 0; r < 2; r++) {
        mdsd_block_job_opts part = b;
        part.shard = r + 1, part.shards = 2;
        mdsd_run_opts rank;
        mdsd_run_opts_init(&rank);
        rank.shard_text = &text[r], rank.shard_size = &size[r];
        cr_assert_eq(mdsd_block_run_with(&part, &rank, &err), MDSD_OK, "shard %zu: %s", r + 1,
                     err.msg);
        cr_assert_eq(rank.usage, 0);
        cr_assert_not_null(text[r]);
        char ckpt[128];
        snprintf(ckpt, sizeof ckpt, "%s.shard-%zu-of-2.partial", all, r + 1);
        unlink(ckpt);
        in[r] = (mdsd_shard_text){r ? "rank 1" : "rank 0", text[r], size[r]};
    }
    /* an altered aggregate is refused, naming the rank, and nothing is written */
    char *bad = strdup(text[1]);
    bad[size[1] - 2] ^= 1;
    mdsd_shard_text altered[2] = {in[0], {"rank 1", bad, size[1]}};
    cr_assert_neq(mdsd_merge_texts(altered, 2, all, NULL, NULL, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "rank 1"), "%s", err.msg);
    cr_assert_eq(access(all, F_OK), -1);
    free(bad);
    cr_assert_eq(mdsd_merge_texts(in, 2, all, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    same_file(one, all);
    /* a refused option is told apart: run.usage */
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    b.depths = "99";
    cr_assert_neq(mdsd_block_run_with(&b, &run, &err), MDSD_OK);
    cr_assert_eq(run.usage, 1, "%s", err.msg);
    for (size_t r = 0; r < 2; r++)
        free(text[r]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
