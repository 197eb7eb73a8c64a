/* Output safety, hashing and strict numbers (issue 25; issue 27 item 1):
 * the one output-safety check (src/io/pathset.c) on links, dangling links,
 * derived files and standard output; SHA-256 in process (src/io/hash.c)
 * against coreutils' sha256sum on files with any name, its cache beside the
 * file (keyed, never trusted after a change, never clobbering, never over a
 * file the command uses, MDSD_REHASH); the strict integer and shard parsers
 * and the one-line escapes (src/io/parse.c); and dumps named with a newline
 * and a backslash through the table job, --resume and merge, byte for byte.
 * Each test fails on the code before the issue (checked against main's
 * binary and library where it applies). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "hash.h"
#include "parse.h"
#include "pathset.h"
#include "testutil.h"

static char *temp_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/mdsd-safety-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void shell_ok(const char *fmt, const char *arg)
{
    char cmd[8192], *out = NULL;
    snprintf(cmd, sizeof cmd, fmt, arg, arg, arg, arg);
    int rc = test_run_shell(cmd, &out);
    cr_assert_eq(rc, 0, "%s: %s", cmd, out);
    free(out);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* The check on one output and one input (and optionally a second output). */
static int check(const char *in, const char *out, const char *out2, mdsd_err *err)
{
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    mdsd_pathset_input(&s, in, "a dump");
    mdsd_pathset_output(&s, out, "-o");
    mdsd_pathset_output(&s, out2, "--markdown");
    int rc = mdsd_pathset_check(&s, err);
    mdsd_pathset_free(&s);
    return rc;
}

Test(safety, pathset_compares_by_identity_and_resolved_path)
{
    char *d = temp_dir(), p[8][256];
    const char *names[8] = {"in.h5", "hard.h5", "sym.h5", "dangling.csv", "target.csv", "sub",
                            "loop", "ok.csv"};
    for (int i = 0; i < 8; i++)
        snprintf(p[i], sizeof p[i], "%s/%s", d, names[i]);
    write_text(p[0], "dump");
    cr_assert_eq(link(p[0], p[1]), 0);
    cr_assert_eq(symlink("in.h5", p[2]), 0);
    cr_assert_eq(symlink("target.csv", p[3]), 0); /* dangling: creating it creates target.csv */
    cr_assert_eq(mkdir(p[5], 0755), 0);
    cr_assert_eq(symlink("loop", p[6]), 0);
    mdsd_err err;
    cr_assert_neq(check(p[0], p[1], NULL, &err), MDSD_OK, "a hard link to the input");
    cr_assert(strstr(err.msg, "is the input"), "%s", err.msg);
    cr_assert_neq(check(p[0], p[2], NULL, &err), MDSD_OK, "a symlink to the input");
    cr_assert_neq(check(p[0], p[3], p[4], &err), MDSD_OK, "a dangling link and its target");
    cr_assert(strstr(err.msg, "are the same file"), "%s", err.msg);
    /* the same file through another directory spelling */
    char other[300];
    snprintf(other, sizeof other, "%s/sub/../ok.csv", d);
    cr_assert_neq(check(p[0], p[7], other, &err), MDSD_OK, "dir/../name");
    cr_assert_neq(check(p[0], p[5], NULL, &err), MDSD_OK, "a directory");
    cr_assert(strstr(err.msg, "is a directory"), "%s", err.msg);
    cr_assert_eq(check(p[0], p[6], NULL, &err), MDSD_OK, "a symlink loop is no clash: %s", err.msg);
    cr_assert_eq(check(p[0], p[7], p[4], &err), MDSD_OK, "%s", err.msg);
    /* derived files: OUTPUT.partial is the input */
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    char partial[300];
    snprintf(partial, sizeof partial, "%s/ok.csv.partial", d);
    write_text(partial, "x");
    mdsd_pathset_input(&s, partial, "a dump");
    mdsd_pathset_output_family(&s, p[7], "-o", mdsd_suffixes_job);
    cr_assert_neq(mdsd_pathset_check(&s, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "the checkpoint of -o"), "%s", err.msg);
    mdsd_pathset_free(&s);
    shell_ok("rm -rf %s", d);
}

Test(safety, stdout_into_an_input_is_refused)
{
    char *d = temp_dir(), in[256];
    snprintf(in, sizeof in, "%s/in.h5", d);
    write_text(in, "dump");
    int saved = dup(STDOUT_FILENO), fd = open(in, O_WRONLY | O_APPEND);
    cr_assert(saved >= 0 && fd >= 0);
    fflush(stdout);
    dup2(fd, STDOUT_FILENO);
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    mdsd_pathset_input(&s, in, "a dump");
    mdsd_pathset_stdout(&s);
    mdsd_err err;
    int rc = mdsd_pathset_check(&s, &err);
    dup2(saved, STDOUT_FILENO);
    close(fd), close(saved);
    mdsd_pathset_free(&s);
    cr_assert_neq(rc, MDSD_OK);
    cr_assert(strstr(err.msg, "standard output is the input"), "%s", err.msg);
    shell_ok("rm -rf %s", d);
}

/* sha256sum's digest of a file (the reference). */
static void reference_sha256(const char *path, char hex[65])
{
    char cmd[4400], *out = NULL;
    snprintf(cmd, sizeof cmd, "sha256sum < '%s'", path);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    memcpy(hex, out, 64);
    hex[64] = '\0';
    free(out);
}

Test(safety, sha256_matches_sha256sum_on_any_name)
{
    unsetenv("MDSD_REHASH");
    unsetenv("MDSD_HASH_CACHE");
    char *d = temp_dir(), path[300], got[MDSD_SHA256_HEX], want[65];
    const char *names[] = {"plain.h5", "new\nline.h5", "back\\slash.h5", "-dash.h5", "empty.h5"};
    const size_t sizes[] = {3 << 20, 1000, 1 << 20, 64, 0};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        snprintf(path, sizeof path, "%s/%s", d, names[k]);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        for (size_t i = 0; i < sizes[k]; i++)
            fputc((int)((i * 2654435761u) >> 13) & 0xff, f);
        fclose(f);
        /* the reference reads a copy: sha256sum escapes such names */
        char copy[400];
        snprintf(copy, sizeof copy, "%s/ref", d);
        char cmd[1000], *out = NULL;
        snprintf(cmd, sizeof cmd, "cat < \"$MDSD_SAFETY_PATH\" > %s", copy);
        setenv("MDSD_SAFETY_PATH", path, 1);
        cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
        free(out);
        reference_sha256(copy, want);
        mdsd_err err;
        cr_assert_eq(mdsd_file_sha256(path, got, false, &err), MDSD_OK, "%s", err.msg);
        cr_assert_str_eq(got, want, "%s", names[k]);
    }
    shell_ok("rm -rf %s", d);
}

static void read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t got = fread(buf, 1, size - 1, f);
    buf[got] = '\0';
    fclose(f);
}

Test(safety, sha256_cache_is_keyed_and_never_clobbers)
{
    unsetenv("MDSD_REHASH");
    unsetenv("MDSD_HASH_CACHE");
    char *d = temp_dir(), path[300], cache[400], hex[MDSD_SHA256_HEX], want[65], text[512];
    snprintf(path, sizeof path, "%s/d.h5", d);
    mdsd_hash_cache_path(path, cache, sizeof cache);
    write_text(path, "first content\n");
    mdsd_err err;
    cr_assert_eq(mdsd_file_sha256(path, hex, false, &err), MDSD_OK);
    cr_assert_neq(access(cache, F_OK), 0, "no cache unless the caller keeps it");
    cr_assert_eq(mdsd_file_sha256(path, hex, true, &err), MDSD_OK);
    cr_assert_eq(access(cache, F_OK), 0, "the cache is written when kept");
    read_file(cache, text, sizeof text);
    cr_assert(strstr(text, hex), "%s", text);

    /* same size, same modification time, other content: the change time
     * differs, so the cache (and the process's memory) is not trusted */
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    write_text(path, "other content\n");
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    cr_assert_eq(utimensat(AT_FDCWD, path, times, 0), 0);
    reference_sha256(path, want);
    cr_assert_eq(mdsd_file_sha256(path, hex, true, &err), MDSD_OK);
    cr_assert_str_eq(hex, want, "a changed file is rehashed");
    read_file(cache, text, sizeof text);
    cr_assert(strstr(text, want), "the stale cache is replaced: %s", text);

    /* a forged cache with the right key is believed (that is what a cache
     * is); MDSD_REHASH=1 is the way out, and rewrites it */
    char forged_path[300], forged_cache[400], forged[512];
    snprintf(forged_path, sizeof forged_path, "%s/h.h5", d);
    mdsd_hash_cache_path(forged_path, forged_cache, sizeof forged_cache);
    write_text(forged_path, "h content\n");
    reference_sha256(forged_path, want);
    cr_assert_eq(stat(forged_path, &st), 0);
    snprintf(forged, sizeof forged, "mdsd-sha256 1 %llu %llu %lld %lld %lld %064d\n",
             (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
             (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec, 0);
    write_text(forged_cache, forged);
    cr_assert_eq(mdsd_file_sha256(forged_path, hex, false, &err), MDSD_OK);
    cr_assert_eq(strspn(hex, "0"), 64, "the cache is read: %s", hex);
    setenv("MDSD_REHASH", "1", 1);
    cr_assert_eq(mdsd_file_sha256(forged_path, hex, true, &err), MDSD_OK);
    unsetenv("MDSD_REHASH");
    cr_assert_str_eq(hex, want, "MDSD_REHASH computes");
    read_file(forged_cache, text, sizeof text);
    cr_assert(strstr(text, want), "MDSD_REHASH rewrites the cache: %s", text);
    cr_assert_eq(mdsd_file_sha256(forged_path, hex, false, &err), MDSD_OK);
    cr_assert_str_eq(hex, want, "the computed digest replaced the cached one");

    /* a file that is not a cache is never replaced */
    char other[300], other_cache[400];
    snprintf(other, sizeof other, "%s/e.h5", d);
    mdsd_hash_cache_path(other, other_cache, sizeof other_cache);
    write_text(other, "e\n");
    write_text(other_cache, "e.h5: my own notes\n");
    cr_assert_eq(mdsd_file_sha256(other, hex, true, &err), MDSD_OK);
    read_file(other_cache, text, sizeof text);
    cr_assert_str_eq(text, "e.h5: my own notes\n");

    /* nor a file the command reads or writes (the output-safety set) */
    char third[300], third_cache[400];
    snprintf(third, sizeof third, "%s/f.h5", d);
    mdsd_hash_cache_path(third, third_cache, sizeof third_cache);
    write_text(third, "f\n");
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    mdsd_pathset_input(&s, third, "a dump");
    mdsd_pathset_output(&s, third_cache, "-o");
    cr_assert_eq(mdsd_pathset_check(&s, &err), MDSD_OK, "%s", err.msg);
    mdsd_pathset_free(&s);
    cr_assert_eq(mdsd_file_sha256(third, hex, true, &err), MDSD_OK);
    cr_assert_neq(access(third_cache, F_OK), 0, "the cache would have been the command's output");

    /* MDSD_HASH_CACHE=0: none written */
    char fourth[300], fourth_cache[400];
    snprintf(fourth, sizeof fourth, "%s/g.h5", d);
    mdsd_hash_cache_path(fourth, fourth_cache, sizeof fourth_cache);
    write_text(fourth, "g\n");
    setenv("MDSD_HASH_CACHE", "0", 1);
    cr_assert_eq(mdsd_file_sha256(fourth, hex, true, &err), MDSD_OK);
    unsetenv("MDSD_HASH_CACHE");
    cr_assert_neq(access(fourth_cache, F_OK), 0);
    shell_ok("rm -rf %s", d);
}

Test(safety, strict_integers_and_shards)
{
    unsigned long long v;
    size_t i, n;
    const char *end;
    cr_assert_eq(mdsd_parse_uint("0", 10, &v, NULL), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(mdsd_parse_uint("18446744073709551615", ~0ULL, &v, NULL), 0);
    cr_assert_eq(v, ~0ULL);
    const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1x", "18446744073709551616", "0x10", "1e3",
                         "99999999999999999999999"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        cr_assert_neq(mdsd_parse_uint(bad[k], ~0ULL, &v, NULL), 0, "'%s' accepted", bad[k]);
    cr_assert_neq(mdsd_parse_uint("11", 10, &v, NULL), 0, "above max");
    cr_assert_eq(mdsd_parse_uint("12:3", 100, &v, &end), 0);
    cr_assert(v == 12 && *end == ':');
    cr_assert_eq(mdsd_parse_shard("2/3", &i, &n), 0);
    cr_assert(i == 2 && n == 3);
    const char *shards[] = {"1/-1", "-1/-1", "1/18446744073709551617", "0/1", "2/1", "1/0", " 1/2",
                            "1/2 ", "1/ 2", "+1/2", "1//2", "1", "/2", "1/2/3"};
    for (size_t k = 0; k < sizeof shards / sizeof *shards; k++)
        cr_assert_neq(mdsd_parse_shard(shards[k], &i, &n), 0, "'%s' accepted", shards[k]);
}

Test(safety, escapes_round_trip)
{
    const char *names[] = {"plain", "new\nline", "back\\slash", "\\012", "tab\there\x7f", ""};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char buf[128];
        size_t len = mdsd_escape(names[k], buf, sizeof buf);
        cr_assert_eq(len, strlen(buf));
        cr_assert_null(strchr(buf, '\n'));
        cr_assert_eq(mdsd_unescape(buf), 0);
        cr_assert_str_eq(buf, names[k]);
    }
    char bad1[] = "x\\01", bad2[] = "x\\000", bad3[] = "x\\9aa";
    cr_assert_neq(mdsd_unescape(bad1), 0);
    cr_assert_neq(mdsd_unescape(bad2), 0);
    cr_assert_neq(mdsd_unescape(bad3), 0);
}

/* A dump named with a newline and a backslash: the job finishes, its
 * provenance holds the file's SHA-256, an interrupted run resumes to the
 * same bytes and shards merge to them (before: sha256sum escaped the name
 * and the job failed at its end; resume and merge broke on the line). */
Test(safety, dump_names_with_newline_and_backslash, .timeout = 300)
{
    char *d = temp_dir();
    setenv("MDSD_SAFETY_DIR", d, 1);
    setenv("MDSD", test_mdsd_bin(), 1);
    char *out = NULL;
    int rc = test_run_shell(
        "cd \"$MDSD_SAFETY_DIR\" && N=$(printf 'we\\nird\\\\x.h5') && "
        "$MDSD toy --family zipf --vocab 500 --positions 600 --samples 12 --seed 3 -o \"$N\" >/dev/null && "
        "$MDSD table \"$N\" -o one.csv -t 0.3:1.5:0.3 -d 3 -v rrs,kseq --threads 1 && "
        "want=$(cat \"$N\" | sha256sum | cut -c1-64) && grep -q \"\\\"sha256\\\":\\\"$want\\\"\" one.csv.provenance.json && "
        "MDSD_TABLE_BLOCK_ROWS=50 MDSD_TABLE_FAIL=0:300 $MDSD table \"$N\" -o r.csv -t 0.3:1.5:0.3 -d 3 -v rrs,kseq --threads 1 "
        "  --checkpoint-seconds 0 2>/dev/null; test -s r.csv.partial && "
        "$MDSD table \"$N\" -o r.csv -t 0.3:1.5:0.3 -d 3 -v rrs,kseq --threads 1 --resume && cmp one.csv r.csv && "
        "$MDSD table \"$N\" -o p1 -t 0.3:1.5:0.3 -d 3 -v rrs,kseq --shard 1/2 && "
        "$MDSD table \"$N\" -o p2 -t 0.3:1.5:0.3 -d 3 -v rrs,kseq --shard 2/2 && "
        "$MDSD merge -o m.csv p2 p1 && cmp one.csv m.csv && grep -q 'we\\\\012ird\\\\134x.h5' one.csv",
        &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    shell_ok("rm -rf %s", d);
}

/* --resume of a job over a temperature range: the kept rows' temperatures
 * came back through the CSV's %.10g (0.3, not the range's 0.30000000000000004)
 * and every finished unit was "not part of this job" (before: the resume
 * always failed). */
Test(safety, resume_over_a_temperature_range, .timeout = 120)
{
    char *d = temp_dir(), *out = NULL, cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof cwd)); /* make test runs in the repository */
    setenv("REPO", cwd, 1);
    setenv("MDSD_SAFETY_DIR", d, 1);
    setenv("MDSD", test_mdsd_bin(), 1);
    int rc = test_run_shell(
        "cd \"$MDSD_SAFETY_DIR\" && "
        "$MDSD toy --family zipf --vocab 64 --positions 40 --samples 4 --seed 1 -o a.h5 >/dev/null && "
        "cp a.h5 b.h5 && cp a.h5 keep.h5 && "
        "/usr/bin/python3 $REPO/tests/corpus/tools/h5edit.py b.h5 set /target/logits 6,1 nan && "
        "{ $MDSD table a.h5 b.h5 -o r.csv -t 0.1:1:0.1 -d 2 -v rrs 2>/dev/null; test $? = 1; } && "
        "test $(grep -c '^#done a.h5' r.csv.partial) = 10 && mv keep.h5 b.h5 && "
        "$MDSD table a.h5 b.h5 -o r.csv -t 0.1:1:0.1 -d 2 -v rrs --resume && "
        "$MDSD table a.h5 b.h5 -o one.csv -t 0.1:1:0.1 -d 2 -v rrs && cmp one.csv r.csv",
        &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    shell_ok("rm -rf %s", d);
}

/* mdsd merge of table shards identifies each dump by its path as written
 * and its content: a dump named with a leading space beside one without
 * (before: the header's path lost its space, the merge read 'a.h5' and
 * refused, or took that other file were its size and time the same), and a
 * touch after the shards is no change (before: size and time were compared,
 * so a changed file with its time put back merged the old numbers under the
 * new content's SHA-256; corpus shard/dump-changed-same-size-and-time). */
Test(safety, merge_identifies_dumps_by_exact_path_and_content, .timeout = 120)
{
    char *d = temp_dir(), *out = NULL;
    setenv("MDSD_SAFETY_DIR", d, 1);
    setenv("MDSD", test_mdsd_bin(), 1);
    int rc = test_run_shell(
        "cd \"$MDSD_SAFETY_DIR\" && "
        "$MDSD toy --family zipf --vocab 64 --positions 40 --samples 6 --seed 1 -o ' a.h5' >/dev/null && "
        "$MDSD toy --family zipf --vocab 64 --positions 40 --samples 6 --seed 2 -o a.h5 >/dev/null && "
        "$MDSD table ' a.h5' -o one.csv -d 2 -t 0.5 && "
        "for i in 1 2 3; do $MDSD table ' a.h5' -o p$i.agg -d 2 -t 0.5 --shard $i/3 || exit 1; done && "
        "touch -r ' a.h5' a.h5 && touch ' a.h5' && "
        "$MDSD merge -o m.csv p3.agg p1.agg p2.agg && cmp one.csv m.csv && "
        "grep -q '\"path\":\" a.h5\"' m.csv.provenance.json",
        &out);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    shell_ok("rm -rf %s", d);
}
