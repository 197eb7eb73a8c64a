/* Scale-out of the table job (shard.h, README "Running on a cluster"): the
 * CSV (and Markdown, LaTeX) of shards 1/3..3/3 + mdsd merge and of mpirun
 * -np 2 and -np 3 (oversubscribed) are byte-identical to one process's, with
 * every verifier by Monte Carlo (--simulate), so their streams must be keyed
 * by row, not by shard or rank; a failing rank stops the job with its message and leaves no output,
 * and resumes per rank. The refusals of mdsd merge are corpus cases
 * (tests/corpus/shard). The mpirun tests need MDSD_MPI_BIN (make test sets
 * it to build/mpi/mdsd, the MPI=1 flavour). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "testutil.h"
#include "dump.h"

#define NV 12
#define SAMPLES 9
#define ROWS 45 /* sample s (0-based) holds s + 1 rows */

/* Samples of unequal lengths, two drafters: shard boundaries fall inside
 * samples and must be moved to their starts. */
static void write_dump(const char *path)
{
    static float target[ROWS][NV], draft_a[ROWS][NV], draft_b[ROWS][NV];
    int tokens[ROWS], sample[ROWS], position[ROWS];
    gsl_rng *r = mdsd_rng_alloc(18);
    int row = 0;
    for (int s = 0; s < SAMPLES; s++)
        for (int k = 0; k <= s; k++, row++) {
            for (int v = 0; v < NV; v++) {
                target[row][v] = (float)gsl_ran_gaussian(r, 2.0);
                draft_a[row][v] = target[row][v] + (float)gsl_ran_gaussian(r, 1.0);
                draft_b[row][v] = target[row][v] + (float)gsl_ran_gaussian(r, 0.5);
            }
            tokens[row] = row % NV, sample[row] = 100 + s, position[row] = k;
        }
    gsl_rng_free(r);
    const char *names[2] = {"a", "b"};
    mdsd_dump_spec spec = {.V = NV, .dtype = MDSD_DUMP_FLOAT32, .chunk_rows = 7, .n_drafts = 2,
                           .draft_names = names};
    mdsd_dump_writer *w;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_writer_open(path, &spec, &w, &err), MDSD_OK, "%s", err.msg);
    const float *drafts[2] = {&draft_a[0][0], &draft_b[0][0]};
    cr_assert_eq(mdsd_dump_writer_append(w, ROWS, &target[0][0], drafts, tokens, sample, position,
                                         &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_commit(w, &err), MDSD_OK, "%s", err.msg);
}

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mdsd-scale-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/d.h5", dir);
    write_dump(path);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

TestSuite(scale, .init = make_dir, .fini = remove_dir);

/* The job: alpha* rows and every verifier by Monte Carlo, two dump columns,
 * two temperatures (the cut job below runs the exact forms). */
#define JOB "d.h5 -t 0.6,1.3 -d 2,3 -s iid,wor,greedy -v rrs,rrsw,kseq,greedy --trials 200 --simulate " \
            "--seed 7 --draft-model a,b --threads 1"

/* Runs a shell command in the test directory; returns its exit status and
 * (out, optional) its merged output. */
static int sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...)
{
    char cmd[4096], full[4500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd %s && export OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 && %s", dir, cmd);
    char *o = NULL;
    int rc = test_run_shell(full, &o);
    if (out)
        *out = o;
    else
        free(o);
    return rc;
}

static void assert_same_file(const char *a, const char *b)
{
    char *o;
    int rc = sh(&o, "cmp %s %s", a, b);
    cr_assert_eq(rc, 0, "%s and %s differ: %s", a, b, o);
    free(o);
}

static const char *mpi_bin(void)
{
    const char *bin = getenv("MDSD_MPI_BIN");
    if (!bin || access(bin, X_OK) != 0)
        cr_skip_test("MDSD_MPI_BIN (the MPI=1 build, set by make test) is not given");
    return bin;
}

#define MPIRUN "mpirun --oversubscribe"

Test(scale, shards_and_merge_write_the_single_process_bytes, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB " -o one.csv --markdown=one.md --latex=one.tex", m), 0, "%s", o);
    free(o);
    for (int i = 1; i <= 3; i++) {
        cr_assert_eq(sh(&o, "%s table " JOB " -o p%d.agg --shard %d/3", m, i, i), 0, "%s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "%s merge -o all.csv --markdown=all.md --latex=all.tex p3.agg p1.agg p2.agg", m),
                 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "all.csv");
    assert_same_file("one.md", "all.md");
    assert_same_file("one.tex", "all.tex");
    /* the shards hold whole samples: no two summaries of one sample */
    cr_assert_eq(sh(&o, "grep -h '^g ' p1.agg p2.agg p3.agg | wc -l"), 0);
    cr_assert_eq(atoi(o), 2 * 2 * SAMPLES, "%s", o); /* per unit: every sample once */
    free(o);
    /* rows cut inside a sample, and more shards than samples (empty shards) */
    const char *cut = "--positions 4:41 -d 2 -v rrsw,kseq -t 0.9";
    cr_assert_eq(sh(&o, "%s table d.h5 %s --trials 100 -o cut.csv", m, cut), 0, "%s", o);
    free(o);
    for (int i = 1; i <= 12; i++) {
        cr_assert_eq(sh(&o, "%s table d.h5 %s --trials 100 -o c%02d.agg --shard %d/12", m, cut, i, i),
                     0, "%s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "%s merge -o cutm.csv c*.agg", m), 0, "%s", o);
    free(o);
    assert_same_file("cut.csv", "cutm.csv");
}

Test(scale, mpirun_2_and_3_ranks_write_the_single_process_bytes, .timeout = 300)
{
    const char *mpi = mpi_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB " -o one.csv --markdown=one.md", test_mdsd_bin()), 0, "%s", o);
    free(o);
    for (int np = 2; np <= 3; np++) {
        cr_assert_eq(sh(&o, MPIRUN " -np %d %s table " JOB " -o r%d.csv --markdown=r%d.md", np, mpi,
                        np, np), 0, "mpirun -np %d: %s", np, o);
        free(o);
        char a[32], b[32];
        snprintf(a, sizeof a, "r%d.csv", np);
        snprintf(b, sizeof b, "r%d.md", np);
        assert_same_file("one.csv", a);
        assert_same_file("one.md", b);
        cr_assert_eq(sh(&o, "grep -c '\"tool\":\"mdsd table\"' r%d.csv.provenance.json", np), 0, "%s", o);
        free(o);
    }
    /* the ranks' checkpoints and locks are gone */
    cr_assert_eq(sh(&o, "ls | grep -E 'partial|lock|tmp'"), 1, "left behind: %s", o);
    free(o);
}

Test(scale, a_failing_rank_stops_the_job_and_the_ranks_resume, .timeout = 300)
{
    const char *mpi = mpi_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB " -o one.csv", test_mdsd_bin()), 0, "%s", o);
    free(o);
    /* row 40 of column b (d.h5:b) is in the last rank's samples; column a
     * is finished and checkpointed first */
    int rc = sh(&o, "MDSD_TABLE_FAIL=1:40 " MPIRUN " -np 3 %s table " JOB " -o r.csv", mpi);
    cr_assert_neq(rc, 0, "%s", o);
    cr_assert_not_null(strstr(o, "rank 2 of 3"), "%s", o);
    cr_assert_not_null(strstr(o, "d.h5:b, row 40: failed on purpose"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "ls | grep -E '^r\\.csv($|\\.tmp|\\.prov)'"), 1, "half-written: %s", o);
    free(o);
    cr_assert_eq(sh(&o, "grep -c '^#done d.h5:a' r.csv.shard-3-of-3.partial"), 0, "%s", o);
    cr_assert_eq(atoi(o), 2, "%s", o); /* both temperatures of column a */
    free(o);
    /* without --resume the checkpoints stop the job; with it every rank goes on */
    cr_assert_eq(sh(&o, MPIRUN " -np 3 %s table " JOB " -o r.csv", mpi), 1, "%s", o);
    cr_assert_not_null(strstr(o, "--resume"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, MPIRUN " -np 3 %s table " JOB " -o r.csv --resume", mpi), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "r.csv");
    cr_assert_eq(sh(&o, "ls | grep -E 'partial|lock|tmp'"), 1, "left behind: %s", o);
    free(o);
}

Test(scale, a_shard_resumes_from_its_checkpoint, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB " -o ref.agg --shard 3/3", m), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "MDSD_TABLE_FAIL=1:44 %s table " JOB " -o p.agg --shard 3/3", m), 1, "%s", o);
    cr_assert_not_null(strstr(o, "failed on purpose"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "test ! -e p.agg && grep -c '^#done' p.agg.partial"), 0, "%s", o);
    cr_assert_eq(atoi(o), 2, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB " -o p.agg --shard 3/3 --resume", m), 0, "%s", o);
    free(o);
    assert_same_file("ref.agg", "p.agg");
}

/* ---- mdsd block over the shipped tree dump ---- */

static void copy_tree_dump(void)
{
    char cwd[4096], *o;
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(sh(&o, "cp '%s/data/kjv-trees.h5' t.h5", cwd), 0, "run from the repository root: %s", o);
    free(o);
}

#define BLOCK_JOB "t.h5 --cost 0,0.1 --threads 1"

Test(scale, block_shards_merge_and_mpirun_write_the_single_process_bytes, .timeout = 300)
{
    copy_tree_dump();
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s block " BLOCK_JOB " -o one.csv --markdown one.md --latex one.tex", m), 0,
                 "%s", o);
    free(o);
    for (int i = 1; i <= 3; i++) {
        cr_assert_eq(sh(&o, "%s block " BLOCK_JOB " --shard %d/3 -o b%d.agg", m, i, i), 0, "%s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "%s merge -o all.csv --markdown=all.md --latex=all.tex b2.agg b3.agg b1.agg", m),
                 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "all.csv");
    assert_same_file("one.md", "all.md");
    assert_same_file("one.tex", "all.tex");
    /* a missing block shard is refused */
    cr_assert_eq(sh(&o, "%s merge -o no.csv b1.agg b3.agg", m), 1, "%s", o);
    cr_assert_not_null(strstr(o, "shard 2/3 is missing"), "%s", o);
    free(o);
    const char *mpi = mpi_bin();
    for (int np = 2; np <= 3; np++) {
        cr_assert_eq(sh(&o, MPIRUN " -np %d %s block " BLOCK_JOB " -o r%d.csv --markdown r%d.md", np,
                        mpi, np, np), 0, "mpirun -np %d: %s", np, o);
        free(o);
        char a[32], b[32];
        snprintf(a, sizeof a, "r%d.csv", np);
        snprintf(b, sizeof b, "r%d.md", np);
        assert_same_file("one.csv", a);
        assert_same_file("one.md", b);
    }
    cr_assert_eq(sh(&o, "ls | grep -E 'partial|lock|tmp|no.csv'"), 1, "left behind: %s", o);
    free(o);
}

Test(scale, a_block_rank_on_a_bad_row_stops_the_job, .timeout = 300)
{
    copy_tree_dump();
    const char *mpi = mpi_bin();
    char *o;
    /* a NaN in row 1240 (the last sample's trees: the last rank's) */
    cr_assert_eq(sh(&o, "/usr/bin/python3 -c \"import h5py; f = h5py.File('t.h5', 'r+'); "
                    "f['target/logits'][1240, 5] = float('nan'); f.close()\""), 0, "%s", o);
    free(o);
    int rc = sh(&o, MPIRUN " -np 3 %s block " BLOCK_JOB " -o r.csv --markdown r.md", mpi);
    cr_assert_neq(rc, 0, "%s", o);
    cr_assert_not_null(strstr(o, "rank 2 of 3: t.h5: row 1240 of /target/logits: logit 5 is NaN"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "ls | grep -E '^r\\.(csv|md)($|\\.tmp|\\.prov)'"), 1, "half-written: %s", o);
    free(o);
    /* the ranks that finished keep their checkpoints for --resume */
    cr_assert_eq(sh(&o, "test -s r.csv.shard-1-of-3.partial && test ! -e r.csv.shard-3-of-3.partial"), 0,
                 "%s", o);
    free(o);
}

/* ---- a dump split across files (a directory of them) ---- */

Test(scale, a_directory_of_dump_files_is_read_as_one_dataset, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "mkdir parts && for s in 1 2 3; do %s toy --family zipf --vocab 48 "
                    "--positions 25 --samples 4 --seed $s -o parts/part-00$s.h5 || exit 1; done", m), 0,
                 "%s", o);
    free(o);
    /* per position: the directory's rows are its files' rows, in name order */
    const char *pp = "-d 2,3 -t 0.7 -v rrs,kseq --positions 0:75";
    cr_assert_eq(sh(&o, "%s table parts %s -o all.csv --per-position all.pp", m, pp), 0, "%s", o);
    free(o);
    for (int s = 1; s <= 3; s++) {
        cr_assert_eq(sh(&o, "%s table parts/part-00%d.h5 -d 2,3 -t 0.7 -v rrs,kseq -o p%d.csv "
                        "--per-position p%d.pp", m, s, s, s), 0, "%s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "tail -n +2 all.pp | cut -d, -f5- > a.txt && "
                    "for s in 1 2 3; do tail -n +2 p$s.pp | cut -d, -f5-; done > b.txt && cmp a.txt b.txt"),
                 0, "per-position values differ: %s", o);
    free(o);
    cr_assert_eq(sh(&o, "tail -n +2 all.pp | cut -d, -f3 | tr '\\n' ' ' | grep -q '^0 1 2 .* 74 $'"), 0,
                 "rows are numbered across the files: %s", o);
    free(o);
    /* every sample of every file counted once (the toy numbers them from 0 in each file) */
    cr_assert_eq(sh(&o, "grep -c ',75,12,' all.csv"), 0, "%s", o);
    free(o);
    /* shards (boundaries inside and between files) and MPI ranks */
    const char *job = "-d 2,3 -t 0.5,0.9 -v rrs,rrsw,kseq --trials 100 --simulate --threads 1";
    cr_assert_eq(sh(&o, "%s table parts %s -o one.csv", m, job), 0, "%s", o);
    free(o);
    for (int i = 1; i <= 5; i++) {
        cr_assert_eq(sh(&o, "%s table parts %s --shard %d/5 -o s%d.agg", m, job, i, i), 0, "%s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "%s merge -o merged.csv s*.agg", m), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "merged.csv");
    cr_assert_eq(sh(&o, "grep -c '\"path\":\"parts/part-00' merged.csv.provenance.json one.csv.provenance.json"),
                 0, "%s", o);
    free(o);
    const char *mpi = mpi_bin();
    cr_assert_eq(sh(&o, MPIRUN " -np 2 %s table parts %s -o r2.csv", mpi, job), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "r2.csv");
}

/* A tree dump split across files: the shipped tree dump cut by whole samples
 * into 3 files (tests/corpus/tools/split_trees.py), each numbering its
 * samples from the previous file's last number, so the last sample of a file
 * and the first of the next carry the same number. `mdsd block DIR` must give
 * the bytes of the shipped file (the same trees, samples distinct) - the same
 * arithmetic in the same order, as one file - and so must shards + merge,
 * --resume and MPI ranks. Both are run as `trees` (a directory in one
 * folder, the file in another) so that the CSV's dump column agrees. */
Test(scale, block_reads_a_directory_of_tree_dumps_as_one, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char cwd[4096], *o;
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(sh(&o, "/usr/bin/python3 %s/tests/corpus/tools/split_trees.py %s/data/kjv-trees.h5 trees 3 "
                    "&& mkdir one && cp %s/data/kjv-trees.h5 one/trees", cwd, cwd, cwd), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "/usr/bin/python3 -c \"import h5py; print(*(h5py.File('trees/part-%%d.h5' %% i)"
                    "['tree_sample'][s] for i in (1, 2) for s in (-1, 0)))\""), 0, "%s", o);
    cr_assert_str_eq(o, "12 0 24 12\n", "the files share sample numbers at their boundaries: %s", o);
    free(o);
    const char *job = "--cost 0,0.1 --threads 2", *tables = "--markdown=r.md --latex=r.tex";
    cr_assert_eq(sh(&o, "cd one && %s block trees %s %s -o one.csv", m, job, tables), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s block trees %s %s -o dir.csv", m, job, tables), 0, "%s", o);
    free(o);
    assert_same_file("one/one.csv", "dir.csv");
    assert_same_file("one/r.md", "r.md");
    assert_same_file("one/r.tex", "r.tex");
    /* 101 trees in 40 samples: no two files' samples were taken as one */
    cr_assert_eq(sh(&o, "grep -c '^trees,kseq,seq,iid,4,,4,[0-9]*,101,40,' dir.csv"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "grep -o '\"path\":\"trees/part-[123].h5\"' dir.csv.provenance.json | wc -l"), 0, "%s",
                 o);
    cr_assert_str_eq(o, "3\n", "the provenance lists each file: %s", o);
    free(o);
    /* shards (boundaries inside and between files) + merge */
    for (int i = 1; i <= 5; i++) {
        cr_assert_eq(sh(&o, "%s block trees %s --shard %d/5 -o s%d.agg", m, job, i, i), 0, "%s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "%s merge -o merged.csv --markdown=merged.md s3.agg s1.agg s5.agg s2.agg s4.agg", m), 0,
                 "%s", o);
    free(o);
    assert_same_file("dir.csv", "merged.csv");
    assert_same_file("r.md", "merged.md");
    cr_assert_eq(sh(&o, "cp -r trees t3 && cd t3 && for i in 1 2; do %s block . --shard $i/2 -o ../u$i.agg "
                    "|| exit 2; done && touch -r part-3.h5 ../stamp && printf X | dd of=part-3.h5 bs=1 "
                    "seek=100000 conv=notrunc 2>/dev/null && touch -r ../stamp part-3.h5 && "
                    "%s merge -o ../u.csv ../u1.agg ../u2.agg", m, m), 1,
                 "%s", o);
    cr_assert_not_null(strstr(o, "changed since they read it"), "a file of the directory changed: %s", o);
    free(o);
    /* --resume: the directory is one unit of the job; a file of it changed is a different job */
    cr_assert_eq(sh(&o, "cp -r trees t2 && %s block trees t2 -o ref.csv", m), 0, "%s", o);
    free(o);
    cr_assert_neq(sh(&o, "MDSD_TEST_BLOCK_STOP_AFTER=1 %s block trees t2 -o r.csv", m), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s block trees t2 -o r.csv --resume", m), 0, "%s", o);
    free(o);
    assert_same_file("ref.csv", "r.csv");
    cr_assert_neq(sh(&o, "MDSD_TEST_BLOCK_STOP_AFTER=1 %s block trees t2 -o r2.csv", m), 0, "%s", o);
    free(o);
    /* one byte of a file of the directory changed, its size and time kept */
    cr_assert_eq(sh(&o, "touch -r t2/part-2.h5 stamp && printf X | dd of=t2/part-2.h5 bs=1 seek=100000 "
                    "conv=notrunc 2>/dev/null && touch -r stamp t2/part-2.h5 && "
                    "%s block trees t2 -o r2.csv --resume", m), 1, "%s", o);
    cr_assert_not_null(strstr(o, "different block job"), "%s", o);
    free(o);
    const char *mpi = mpi_bin();
    for (int np = 2; np <= 3; np++) {
        cr_assert_eq(sh(&o, MPIRUN " -np %d %s block trees %s -o mpi%d.csv", np, mpi, job, np), 0, "%s", o);
        free(o);
        char name[32];
        snprintf(name, sizeof name, "mpi%d.csv", np);
        assert_same_file("dir.csv", name);
    }
}

/* ---- checkpoints finer than a (dump, temperature) unit ---- */

/* One temperature: the failure hook names a column and a row. */
#define JOB1 "d.h5 -t 0.6 -d 2,3 -s iid,wor,greedy -v rrs,rrsw,kseq,greedy --trials 200 --simulate " \
             "--seed 7 --draft-model a,b --threads 1"

Test(scale, a_unit_resumes_from_its_last_checkpoint, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o one.csv", m), 0, "%s", o);
    free(o);
    /* 7-row blocks, a checkpoint after each; column a fails at row 30 */
    const char *env = "MDSD_TABLE_BLOCK_ROWS=7";
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:30 %s table " JOB1 " -o r.csv --checkpoint-seconds 0", env, m),
                 1, "%s", o);
    free(o);
    /* samples start at rows 0, 1, 3, 6, 10, 15, 21, 28, 36: after the block of
     * rows 21..27 the sample of rows 21..27 is still open (its end is not seen
     * before row 28), so the samples before row 21 are safe */
    cr_assert_eq(sh(&o, "grep '^#checkpoint d.h5:a,0.6 ' r.csv.partial | tail -1"), 0, "%s", o);
    cr_assert_not_null(strstr(o, "next=21 "), "%s", o);
    free(o);
    /* resumed, the rows before 21 are not evaluated again (row 20 would fail) */
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:20 %s table " JOB1 " -o r.csv --checkpoint-seconds 0 --resume",
                    env, m), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "r.csv");
    /* an altered summary in a checkpoint is refused, naming the unit */
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:30 %s table " JOB1 " -o s.csv --checkpoint-seconds 0", env, m),
                 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "sed -i '0,/^g /s/^\\(g [0-9]* [0-9]* 0x1\\.\\)[0-9a-f]/\\10/' s.csv.partial"), 0,
                 "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o s.csv --resume", m), 1, "%s", o);
    cr_assert_not_null(strstr(o, "unit d.h5:a,0.6: the sample summaries before its checkpoint"), "%s", o);
    free(o);
}

/* --per-position with --resume: interrupted inside a unit (finer
 * checkpoints) and at a unit boundary, the resumed per-position file equals
 * an uninterrupted run's byte for byte (Monte-Carlo verifiers included);
 * a cut or altered per-position partial is refused; --discard-partial
 * deletes it. */
Test(scale, per_position_resumes_to_the_same_bytes, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o one.csv --per-position one.pp", m), 0, "%s", o);
    free(o);
    const char *env = "MDSD_TABLE_BLOCK_ROWS=7";
    /* inside unit d.h5:a,0.6: rows up to 27 were streamed, the checkpoint covers rows < 21 */
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:30 %s table " JOB1 " -o r.csv --per-position r.pp "
                    "--checkpoint-seconds 0", env, m), 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "test -s r.pp.partial && ! test -e r.pp && grep -q '^#perpos ' r.csv.partial"), 0,
                 "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:20 %s table " JOB1 " -o r.csv --per-position r.pp "
                    "--checkpoint-seconds 0 --resume", env, m), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "r.csv");
    assert_same_file("one.pp", "r.pp");
    cr_assert_eq(sh(&o, "test ! -e r.pp.partial"), 0, "the per-position partial is left behind");
    free(o);
    /* at a unit boundary: column a finished, column b fails at its row 30 */
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=1:30 %s table " JOB1 " -o u.csv --per-position u.pp", env, m),
                 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "grep -c '^#done' u.csv.partial"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o u.csv --per-position u.pp --resume", m), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "u.csv");
    assert_same_file("one.pp", "u.pp");
    /* a per-position partial cut short, or altered, is refused naming it */
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=1:30 %s table " JOB1 " -o s.csv --per-position s.pp", env, m),
                 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "cp s.pp.partial s.keep && truncate -s 2000 s.pp.partial"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o s.csv --per-position s.pp --resume", m), 1, "%s", o);
    cr_assert_not_null(strstr(o, "'s.pp.partial': its per-position rows do not match the checkpoint"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "cp s.keep s.pp.partial && sed -i '2s/,0\\.[0-9]/,0.9/' s.pp.partial && "
                    "! cmp -s s.keep s.pp.partial"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o s.csv --per-position s.pp --resume", m), 1, "%s", o);
    cr_assert_not_null(strstr(o, "'s.pp.partial': its per-position rows do not match the checkpoint"), "%s", o);
    free(o);
    /* --discard-partial deletes both partials (the job then stops on a missing dump) */
    cr_assert_eq(sh(&o, "%s table " JOB1 " missing.h5 -o s.csv --per-position s.pp --discard-partial", m), 1,
                 "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "ls s.*"), 0, "%s", o);
    cr_assert(!strstr(o, "s.pp.partial") && !strstr(o, "s.csv.partial"), "%s", o);
    free(o);
}

Test(scale, shards_and_ranks_resume_inside_a_unit, .timeout = 300)
{
    const char *m = test_mdsd_bin();
    char *o;
    const char *env = "MDSD_TABLE_BLOCK_ROWS=7";
    /* shard 2/2 holds rows 28..44 (its share starts at row 22, inside the sample of rows
     * 21..27); column a fails at row 44, in the third 7-row block: the checkpoint
     * after the second holds the sample of rows 28..35 */
    cr_assert_eq(sh(&o, "%s table " JOB1 " --shard 2/2 -o ref.agg", m), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:44 %s table " JOB1 " --shard 2/2 -o p.agg "
                    "--checkpoint-seconds 0", env, m), 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "grep '^#checkpoint d.h5:a,0.6 ' p.agg.partial | tail -1"), 0, "%s", o);
    cr_assert_not_null(strstr(o, "next=36 "), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:30 %s table " JOB1 " --shard 2/2 -o p.agg "
                    "--checkpoint-seconds 0 --resume", env, m), 0, "%s", o);
    free(o);
    assert_same_file("ref.agg", "p.agg");
    /* MPI: the second rank (the same rows) stops at row 44, then resumes from row 36 */
    const char *mpi = mpi_bin();
    cr_assert_eq(sh(&o, "%s table " JOB1 " -o one.csv", m), 0, "%s", o);
    free(o);
    cr_assert_neq(sh(&o, "%s MDSD_TABLE_FAIL=0:44 " MPIRUN " -np 2 %s table " JOB1 " -o r.csv "
                     "--checkpoint-seconds 0", env, mpi), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "grep -c '^#checkpoint d.h5:a,0.6 next=36 ' r.csv.shard-2-of-2.partial"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s MDSD_TABLE_FAIL=0:30 " MPIRUN " -np 2 %s table " JOB1 " -o r.csv "
                    "--checkpoint-seconds 0 --resume", env, mpi), 0, "%s", o);
    free(o);
    assert_same_file("one.csv", "r.csv");
    cr_assert_eq(sh(&o, "ls | grep -E 'partial|lock|tmp'"), 1, "left behind: %s", o);
    free(o);
}
