/* The files written beside an output (issue 36): `mdsd table --per-position
 * FILE` writes FILE.partial, which is locked with FILE (FILE.lock) and never
 * opened through a symlink or over a file that no checkpoint of this job's
 * -o records: a second job on another -o with the same --per-position is
 * refused, while the first holds the lock or after it was interrupted, and
 * the first job's checkpoint survives and resumes. A job refused because
 * another holds the lock does not offer that job's units as its own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mdsd-sidecar-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && %s toy -f dirichlet -V 12 -N 60 --samples 6 -s 3 -o d.h5 "
             ">/dev/null", dir, test_mdsd_bin());
    free(test_shell_ok(cmd));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

/* Runs a shell command in the test's directory; returns its status, output in *out. */
static int sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...)
{
    char body[4096], cmd[4300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, body);
    return test_run_shell(cmd, out);
}

#define JOB "d.h5 -t 0.6,1 -d 2 -s iid -v rrs --trials 200"
/* job 1, interrupted at row 30 with finer checkpoints before it */
#define JOB1_FAILS "MDSD_TABLE_BLOCK_ROWS=7 MDSD_TABLE_FAIL=0:30 %s table " JOB " -o a.csv " \
                   "--per-position pp.csv --checkpoint-seconds 0"

TestSuite(sidecar, .init = make_dir, .fini = remove_dir);

/* Job 1 is interrupted (a bad row) with its checkpoint in a.csv.partial and
 * pp.csv.partial; job 2 on -o b.csv with the same --per-position is refused
 * naming pp.csv.partial, which stays byte for byte; job 1 then resumes to
 * the bytes of an uninterrupted run. */
Test(sidecar, per_position_checkpoint_survives_a_second_job, .timeout = 120)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "%s table " JOB " -o ref.csv --per-position ref.pp", m), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, JOB1_FAILS, m), 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "test -s pp.csv.partial && cp pp.csv.partial keep"), 0, "%s", o);
    free(o);
    /* without --resume, and with it (b.csv has no checkpoint: nothing to resume) */
    const char *flags[] = {"", "--resume"};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(sh(&o, "%s table " JOB " -o b.csv --per-position pp.csv %s", m, flags[k]), 1, "%s", o);
        cr_assert(strstr(o, "'pp.csv.partial' already exists"), "%s", o);
        free(o);
        cr_assert_eq(sh(&o, "cmp keep pp.csv.partial && ! test -e b.csv && ! test -e pp.csv"), 0,
                     "the first job's per-position checkpoint changed: %s", o);
        free(o);
    }
    cr_assert_eq(sh(&o, "%s table " JOB " -o a.csv --per-position pp.csv --resume", m), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "cmp ref.csv a.csv && cmp ref.pp pp.csv"), 0, "%s", o);
    free(o);
}

/* While a job holds pp.csv.lock (flock(1) stands in for it), a job on
 * another -o with the same --per-position is refused by name and touches
 * neither file; the refusal does not say "finished units are kept" (they
 * would be the other job's). */
Test(sidecar, per_position_is_locked_with_its_output, .timeout = 120)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, JOB1_FAILS, m), 1, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "cp pp.csv.partial keep"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "flock pp.csv.lock %s table " JOB " -o b.csv --per-position pp.csv", m), 1, "%s", o);
    cr_assert(strstr(o, "another job is writing 'pp.csv' (--per-position)"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "cmp keep pp.csv.partial && ! test -e b.csv.partial"), 0, "%s", o);
    free(o);
    /* the output's own lock held: the refused resume offers nothing */
    cr_assert_eq(sh(&o, "flock a.csv.lock %s table " JOB " -o a.csv --per-position pp.csv --resume", m), 1,
                 "%s", o);
    cr_assert(strstr(o, "another job is writing 'a.csv'"), "%s", o);
    cr_assert(!strstr(o, "finished units are kept"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "cmp keep pp.csv.partial"), 0, "%s", o);
    free(o);
}

/* A symlink at the per-position checkpoint or at a lock file is not
 * followed: the job is refused and the link's target is unchanged. */
Test(sidecar, symlinks_at_sidecars_are_not_followed, .timeout = 120)
{
    const char *m = test_mdsd_bin();
    char *o;
    cr_assert_eq(sh(&o, "echo precious > target && ln -s target pp.csv.partial"), 0, "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB " -o a.csv --per-position pp.csv", m), 1, "%s", o);
    cr_assert(strstr(o, "pp.csv.partial"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "test \"$(cat target)\" = precious && test -L pp.csv.partial"), 0, "%s", o);
    free(o);
    /* at the lock file of the per-position file, and of -o (a dangling link: not created) */
    cr_assert_eq(sh(&o, "rm pp.csv.partial && ln -s target pp.csv.lock && ln -s nowhere c.csv.lock"), 0,
                 "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB " -o a.csv --per-position pp.csv", m), 1, "%s", o);
    cr_assert(strstr(o, "'pp.csv.lock': it is a symbolic link (not followed)"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "%s table " JOB " -o c.csv", m), 1, "%s", o);
    cr_assert(strstr(o, "'c.csv.lock': it is a symbolic link (not followed)"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "test \"$(cat target)\" = precious && ! test -e nowhere && ! test -e pp.csv "
                    "&& ! test -e c.csv"), 0, "%s", o);
    free(o);
}

/* The concurrent case, for real: job 1 (slow: Monte Carlo) holds
 * pp.csv while job 2, another -o with the same --per-position, starts; job
 * 2 is refused by name and writes nothing, and job 1's per-position CSV
 * holds its own rows only (no other job's rows, no NUL hole). */
Test(sidecar, concurrent_jobs_on_one_per_position_file, .timeout = 180)
{
    const char *m = test_mdsd_bin();
    char *o;
    /* (": ;" ends the "cd DIR &&" that sh() puts first, so that "&" sends job 1 alone) */
    cr_assert_eq(sh(&o, ": ; %s table " JOB " -o ref.csv --per-position ref.pp --simulate --trials 1000000 "
                    "--threads 1 & job=$!; n=0; while ! test -e ref.csv.lock && [ $n -lt 600 ]; do "
                    "sleep 0.05; n=$((n+1)); done; %s table " JOB " -o b.csv --per-position ref.pp; "
                    "second=$?; wait $job; first=$?; echo \"first=$first second=$second\"",
                    m, m), 0, "%s", o);
    cr_assert(strstr(o, "first=0 second=1"), "%s", o);
    cr_assert(strstr(o, "another job is writing 'ref.pp' (--per-position)"), "%s", o);
    free(o);
    cr_assert_eq(sh(&o, "! test -e b.csv && ! test -e b.csv.partial && test $(wc -l < ref.pp) = 121 && "
                    "! grep -q -P '\\x00' ref.pp && ! test -e ref.pp.partial && ! test -e ref.pp.lock"), 0,
                 "%s", o);
    free(o);
}
