/* mdsd_interrupt / mdsd_interrupt_clear (mdsd/common.h): set before a long call, the
 * call returns MDSD_EINTERRUPTED at once and writes nothing; set while it runs (from a
 * SIGALRM handler, as a C program's SIGINT handler would, or from the table job's
 * progress callback), it stops within a row (or a MiB of a dump being hashed); the table job keeps a checkpoint that
 * resume = 1 finishes to the bytes of an uninterrupted run; after mdsd_interrupt_clear
 * the next call runs. (Python's Ctrl-C path: tests/python/test_mdsd_interrupt.py.) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

#include "testutil.h"

#define NGRAM "data/kjv-ngram.h5"
#define TREES "data/kjv-trees.h5"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_alarm(int sig)
{
    (void)sig;
    mdsd_interrupt(); /* async-signal-safe */
}

/* mdsd_interrupt from a SIGALRM handler `seconds` from now. */
static void interrupt_in(double seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {(time_t)seconds, (suseconds_t)((seconds - (time_t)seconds) * 1e6)}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

Test(interrupt, batch_before_and_during_the_call_then_cleared, .timeout = 120)
{
    /* about a minute uninterrupted on one core: Monte Carlo, 20000 trials a row */
    size_t N = 20000, V = 100;
    float *t = malloc(N * V * sizeof *t), *d = malloc(N * V * sizeof *d);
    double *alpha = malloc(N * sizeof *alpha), *rate = malloc(N * sizeof *rate);
    srand(5);
    for (size_t i = 0; i < N * V; i++)
        t[i] = (float)(rand() % 1000) / 250.0f, d[i] = (float)(rand() % 1000) / 250.0f;
    mdsd_batch_eval_opts o;
    mdsd_batch_eval_opts_init(&o);
    o.n = 3, o.verifier = MDSD_VERIFIER_RRS, o.trials = 20000, o.simulate = 1, o.threads = 1;
    mdsd_err err;
    mdsd_interrupt();
    cr_assert_eq(mdsd_batch_eval(t, d, 10, V, &o, alpha, rate, NULL, NULL, &err), MDSD_EINTERRUPTED);
    cr_assert(strstr(err.msg, "interrupted"), "%s", err.msg);
    cr_assert_str_eq(mdsd_strerror(MDSD_EINTERRUPTED), "interrupted");
    mdsd_interrupt_clear();
    cr_assert_eq(mdsd_batch_eval(t, d, 10, V, &o, alpha, rate, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    double t0 = now();
    interrupt_in(0.5);
    int rc = mdsd_batch_eval(t, d, N, V, &o, alpha, rate, NULL, NULL, &err);
    double took = now() - t0;
    cr_log_info("batch: interrupted after %.3f s", took);
    cr_assert_eq(rc, MDSD_EINTERRUPTED, "%s", err.msg);
    cr_assert(took >= 0.4 && took < 2.0, "stopped %.3f s after the start (signal at 0.5 s)", took);
    mdsd_interrupt_clear();
    cr_assert_eq(mdsd_batch_eval(t, d, 10, V, &o, alpha, rate, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    free(t), free(d), free(alpha), free(rate);
}

/* on_progress: the interrupt after the job's first block of rows (of three) */
static void stop_after_first_block(uint64_t done, uint64_t total, void *ctx)
{
    (void)done, (void)total, (void)ctx;
    mdsd_interrupt();
}

Test(interrupt, table_stops_keeps_a_checkpoint_and_resumes_to_the_same_bytes, .timeout = 300)
{
    char dir[] = "/tmp/mdsd-interrupt-XXXXXX", ref[300], out[300], part[320], lock[320];
    cr_assert(mkdtemp(dir));
    snprintf(ref, sizeof ref, "%s/ref.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(part, sizeof part, "%s.partial", out);
    snprintf(lock, sizeof lock, "%s.lock", out);
    /* a fresh copy: its SHA-256 (the checkpoint's signature) is computed, not cached */
    char dump[300], cmd[700], *log = NULL;
    snprintf(dump, sizeof dump, "%s/ngram.h5", dir);
    snprintf(cmd, sizeof cmd, "cp %s %s", NGRAM, dump);
    cr_assert_eq(test_run_shell(cmd, &log), 0, "%s", log);
    free(log);
    const char *dumps[] = {dump};
    double temps[] = {1.0};
    size_t counts[] = {2};
    mdsd_verifier_kind vs[] = {MDSD_VERIFIER_RRS};
    mdsd_table_opts o;
    mdsd_table_opts_init(&o);
    o.n_dumps = 1, o.dumps = dumps, o.n_temperatures = 1, o.temperatures = temps;
    o.n_counts = 1, o.draft_counts = counts, o.n_verifiers = 1, o.verifiers = vs;
    mdsd_err err;
    /* before: stopped while hashing the dump, nothing done, nothing left */
    o.output = out;
    mdsd_interrupt();
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_EINTERRUPTED, "%s", err.msg);
    cr_assert(strstr(err.msg, "ngram.h5: interrupted"), "%s", err.msg);
    cr_assert(!exists(out) && !exists(part) && !exists(lock), "files left by a job interrupted before its first row");
    mdsd_interrupt_clear();
    o.output = ref;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_OK, "%s", err.msg);
    o.output = out;
    /* during: stopped in the second block, the samples the first closed checkpointed */
    o.on_progress = stop_after_first_block;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_EINTERRUPTED, "%s", err.msg);
    mdsd_interrupt_clear();
    cr_assert(!exists(out) && !exists(lock), "an interrupted job published or kept its lock");
    char *ck = slurp(part);
    cr_assert(ck && strstr(ck, "#checkpoint "), "no checkpoint in %s:\n%s", part, ck ? ck : "(none)");
    free(ck);
    o.on_progress = NULL, o.resume = 1;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_OK, "%s", err.msg);
    char *a = slurp(ref), *b = slurp(out);
    cr_assert(a && b && !strcmp(a, b), "the resumed CSV differs from an uninterrupted run's");
    free(a), free(b);
    cr_assert(!exists(part), "checkpoint left after the resumed job");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(test_run_shell(cmd, &log), 0);
    free(log);
}

Test(interrupt, block_before_and_during_the_job_then_cleared, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-interrupt-XXXXXX", out[300];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/b.csv", dir);
    const char *dumps[] = {TREES};
    mdsd_block_job_opts o;
    mdsd_block_job_opts_init(&o);
    o.n_dumps = 1, o.dumps = dumps, o.output = out, o.threads = 1;
    o.verifiers = "ot"; /* about 2 s on one core */
    mdsd_err err;
    mdsd_interrupt();
    cr_assert_eq(mdsd_block_run(&o, &err), MDSD_EINTERRUPTED, "%s", err.msg);
    cr_assert(strstr(err.msg, "interrupted"), "%s", err.msg);
    mdsd_interrupt_clear();
    double t0 = now();
    interrupt_in(0.3);
    int rc = mdsd_block_run(&o, &err);
    double took = now() - t0;
    cr_log_info("block: interrupted after %.3f s", took);
    cr_assert_eq(rc, MDSD_EINTERRUPTED, "%s", err.msg);
    cr_assert(took < 1.3, "stopped %.3f s after the start (signal at 0.3 s)", took);
    mdsd_interrupt_clear();
    char cmd[400], *log = NULL;
    snprintf(cmd, sizeof cmd, "ls -A %s", dir);
    cr_assert_eq(test_run_shell(cmd, &log), 0);
    cr_assert_str_eq(log, "", "files left by the interrupted job: %s", log);
    free(log);
    o.verifiers = "kseq";
    cr_assert_eq(mdsd_block_run(&o, &err), MDSD_OK, "%s", err.msg);
    cr_assert(exists(out));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(test_run_shell(cmd, &log), 0);
    free(log);
}
