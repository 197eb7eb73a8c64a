/* Issue 12 (no silent wrong answer), the parts the corpus cannot reach from
 * the command line: JSON strings are valid UTF-8 whatever the bytes, a dump
 * that changes while it is read is detected, one lock holder per output,
 * and output paths are checked before any work. */
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "dump.h"
#include "json.h"
#include "outfile.h"
#include "testutil.h"

/* glibc's iconv as the independent judge of UTF-8 validity. */
static int valid_utf8(const char *s, size_t len)
{
    iconv_t cd = iconv_open("UTF-8", "UTF-8");
    cr_assert_neq(cd, (iconv_t)-1);
    char *in = (char *)s, out[8192], *o = out;
    size_t inleft = len, outleft = sizeof out;
    size_t r = iconv(cd, &in, &inleft, &o, &outleft);
    iconv_close(cd);
    return r != (size_t)-1 && inleft == 0;
}

static char *json_of(const char *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    mdsd_json j;
    mdsd_json_init(&j, f);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, s, s); /* as a key and as a value */
    mdsd_json_object_end(&j);
    fclose(f);
    return buf;
}

Test(integrity, json_strings_are_valid_utf8_whatever_the_bytes)
{
    /* invalid: stray continuation, overlong, surrogate, above U+10FFFF,
     * truncated sequences, 0xff; valid multi-byte text must pass unchanged */
    const char *bad[] = {"\x80", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "a\xffz",
                         "\xf0\x9f\x98", "\xc3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        /* (glibc's iconv accepts code points above U+10FFFF: case 3 is
         * invalid by RFC 3629 only) */
        cr_assert(i == 3 || !valid_utf8(bad[i], strlen(bad[i])), "case %zu is valid to iconv", i);
        size_t len;
        char *out = json_of(bad[i], &len);
        cr_assert(valid_utf8(out, len), "case %zu: JSON is not UTF-8: %s", i, out);
        cr_assert(strstr(out, "\\ufffd"), "case %zu: no replacement in %s", i, out);
        free(out);
    }
    const char *good = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e";
    size_t len;
    char *out = json_of(good, &len);
    cr_assert(strstr(out, good), "valid UTF-8 altered: %s", out);
    free(out);
    /* random bytes, fixed seed */
    srand(12);
    for (int k = 0; k < 2000; k++) {
        char s[40];
        size_t n = (size_t)(rand() % 39);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(1 + rand() % 255);
        s[n] = '\0';
        char *o = json_of(s, &len);
        cr_assert(valid_utf8(o, len), "not UTF-8 for random input %d", k);
        free(o);
    }
}

static char *temp_dir(void)
{
    char *dir = strdup("/tmp/mdsd-test-integrity-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void remove_dir(char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

Test(integrity, a_dump_that_changes_while_read_is_detected)
{
    char *dir = temp_dir(), path[256], args[600], *log;
    snprintf(path, sizeof path, "%s/d.h5", dir);
    snprintf(args, sizeof args, "toy --family zipf --vocab 16 --positions 12 --samples 2 --seed 1 -o %s", path);
    cr_assert_eq(test_run_mdsd(args, 1, &log), 0, "%s", log);
    free(log);
    mdsd_dump *d;
    mdsd_err err;
    cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_check_unchanged(d, &err), MDSD_OK, "%s", err.msg);
    /* the same size, a new modification time: a rewrite in place */
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, times, 0), 0);
    cr_assert_neq(mdsd_dump_check_unchanged(d, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "changed while it was read"), "%s", err.msg);
    cr_assert_neq(mdsd_dump_validate(d, NULL, NULL, &err), MDSD_OK, "validate must notice too");
    mdsd_dump_close(d);
    /* truncated: size differs */
    cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(truncate(path, 1000), 0);
    cr_assert_neq(mdsd_dump_check_unchanged(d, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "size"), "%s", err.msg);
    mdsd_dump_close(d);
    remove_dir(dir);
}

Test(integrity, one_lock_holder_per_output)
{
    char *dir = temp_dir(), path[256];
    snprintf(path, sizeof path, "%s/r.csv.lock", dir);
    mdsd_lock a, b;
    mdsd_err err;
    cr_assert_eq(mdsd_lock_acquire(&a, path, "'r.csv'", &err), MDSD_OK, "%s", err.msg);
    cr_assert_neq(mdsd_lock_acquire(&b, path, "'r.csv'", &err), MDSD_OK, "a second holder got the lock");
    cr_assert(strstr(err.msg, "another job is writing 'r.csv'"), "%s", err.msg);
    mdsd_lock_release(&a);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "the lock file is removed on release");
    cr_assert_eq(mdsd_lock_acquire(&b, path, "'r.csv'", &err), MDSD_OK, "%s", err.msg);
    mdsd_lock_release(&b);
    remove_dir(dir);
}

/* The output-safety check (pathset.h) of one output against one input. */
static int check_output(const char *out, const char *in, mdsd_err *err)
{
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    mdsd_pathset_input(&s, in, "a dump");
    mdsd_pathset_output(&s, out, "-o");
    int rc = mdsd_pathset_check(&s, err);
    mdsd_pathset_free(&s);
    return rc;
}

Test(integrity, output_paths_are_checked_before_any_work)
{
    char *dir = temp_dir(), in[256], sub[256], link[256], missing[256], ok[256];
    snprintf(in, sizeof in, "%s/in.h5", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link, sizeof link, "%s/alias.h5", dir);
    snprintf(missing, sizeof missing, "%s/no/r.csv", dir);
    snprintf(ok, sizeof ok, "%s/r.csv", dir);
    FILE *f = fopen(in, "w");
    fputs("x", f);
    fclose(f);
    cr_assert_eq(mkdir(sub, 0755), 0);
    cr_assert_eq(symlink(in, link), 0);
    mdsd_err err;
    cr_assert_neq(check_output(in, in, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "is the input"), "%s", err.msg);
    cr_assert_neq(check_output(link, in, &err), MDSD_OK, "a symlink to the input");
    cr_assert_neq(check_output(sub, in, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "is a directory"), "%s", err.msg);
    cr_assert_neq(check_output(missing, in, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "does not exist"), "%s", err.msg);
    cr_assert_eq(check_output(ok, in, &err), MDSD_OK, "%s", err.msg);
    remove_dir(dir);
}
