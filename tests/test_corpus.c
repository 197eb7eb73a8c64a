/* The malformed-input corpus (tests/corpus/<area>/<name>.case, format in
 * tests/corpus/README.md): every case runs its setup in a fresh empty
 * directory, then its command, and must exit with the expected status, name
 * the problem on stderr, and leave nothing behind (no output, .tmp, .partial
 * or lock file; setup's files unchanged in size). One test walks every case
 * and reports every failing case by file name. */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"

/* The corpus must stay at least this large (issue 12). */
#define CORPUS_MIN_CASES 60
/* A case's setup or command that runs longer than this is killed and fails. */
#define CORPUS_TIMEOUT_S 120

#define CASE_MAX_LINES 64

typedef struct {
    char *what;
    char *setup[CASE_MAX_LINES]; /* run in order */
    size_t n_setup;
    char *run;
    int exit_status; /* -1 until read */
    char *message[CASE_MAX_LINES]; /* all must appear in stderr */
    size_t n_message;
    char *leaves; /* space-separated names the run may leave, or NULL */
    char *skip_sanitize; /* reason to skip under make sanitize, or NULL */
} corpus_case;

/* A growing text buffer for the failure report. */
typedef struct {
    char *text;
    size_t len, cap;
} report_buf;

static void report_add(report_buf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_add(report_buf *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (r->len + (size_t)need + 1 > r->cap) {
        r->cap = (r->len + (size_t)need + 1) * 2;
        r->text = realloc(r->text, r->cap);
        cr_assert_not_null(r->text);
    }
    va_start(ap, fmt);
    vsnprintf(r->text + r->len, r->cap - r->len, fmt, ap);
    va_end(ap);
    r->len += (size_t)need;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static void case_free(corpus_case *c)
{
    free(c->what);
    for (size_t i = 0; i < c->n_setup; i++)
        free(c->setup[i]);
    free(c->run);
    for (size_t i = 0; i < c->n_message; i++)
        free(c->message[i]);
    free(c->leaves);
    free(c->skip_sanitize);
}

/* Reads a case file; on a format error returns 0 and writes why into err. */
static int case_read(const char *path, corpus_case *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->exit_status = -1;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return 0;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int lineno = 0, ok = 1;
    while (ok && (got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char *s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        char *colon = strchr(s, ':');
        if (!colon) {
            snprintf(err, errlen, "line %d: expected `key: value`", lineno);
            ok = 0;
            break;
        }
        *colon = '\0';
        char *key = trim(s), *value = trim(colon + 1);
        if (strcmp(key, "what") == 0 && !c->what) {
            c->what = strdup(value);
        } else if (strcmp(key, "setup") == 0 && c->n_setup < CASE_MAX_LINES) {
            c->setup[c->n_setup++] = strdup(value);
        } else if (strcmp(key, "run") == 0 && !c->run) {
            c->run = strdup(value);
        } else if (strcmp(key, "exit") == 0 && c->exit_status < 0) {
            char *end;
            long v = strtol(value, &end, 10);
            if (*value == '\0' || *end != '\0' || v < 0 || v > 255) {
                snprintf(err, errlen, "line %d: exit `%s` is not a status 0..255", lineno, value);
                ok = 0;
            }
            c->exit_status = (int)v;
        } else if (strcmp(key, "message") == 0 && c->n_message < CASE_MAX_LINES) {
            if (*value == '\0') {
                snprintf(err, errlen, "line %d: empty message fragment", lineno);
                ok = 0;
            }
            c->message[c->n_message++] = strdup(value);
        } else if (strcmp(key, "leaves") == 0 && !c->leaves) {
            c->leaves = strdup(value);
        } else if (strcmp(key, "skip-sanitize") == 0 && !c->skip_sanitize) {
            c->skip_sanitize = strdup(value);
        } else {
            snprintf(err, errlen, "line %d: unknown or repeated key `%s`", lineno, key);
            ok = 0;
        }
    }
    free(line);
    fclose(f);
    if (ok && (!c->what || !*c->what)) {
        snprintf(err, errlen, "no `what:`");
        ok = 0;
    } else if (ok && (!c->run || !*c->run)) {
        snprintf(err, errlen, "no `run:`");
        ok = 0;
    } else if (ok && c->exit_status < 0) {
        snprintf(err, errlen, "no `exit:`");
        ok = 0;
    } else if (ok && c->n_message == 0) {
        snprintf(err, errlen, "no `message:`");
        ok = 0;
    }
    return ok;
}

/* Runs `/bin/sh -c cmd` in dir, stdout and stderr to the given files, killed
 * (with its process group) after CORPUS_TIMEOUT_S. Returns the exit status,
 * 128 + signal if killed by one, or -1 on a timeout. */
static int run_in(const char *dir, const char *cmd, const char *out_path, const char *err_path)
{
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int er = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || er < 0 || chdir(dir) != 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(er, 2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec step = {0, 5 * 1000 * 1000};
    double waited = 0;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            kill(-pid, SIGKILL); /* anything the command left running */
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            return 128 + WTERMSIG(st);
        }
        if (waited > CORPUS_TIMEOUT_S) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        nanosleep(&step, NULL);
        waited += 0.005;
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    size_t cap = 4096, len = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = hay; *h; h++)
        if (strncasecmp(h, needle, n) == 0)
            return 1;
    return n == 0;
}

/* A directory listing: relative path, size and content hash (FNV-1a of a
 * regular file's bytes, of a symlink's target) of every entry (recursive). */
typedef struct {
    char **name;
    long long *size;
    unsigned long long *hash;
    size_t n, cap;
} listing;

static unsigned long long content_hash(const char *path, const struct stat *st)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    unsigned char buf[65536];
    if (S_ISLNK(st->st_mode)) {
        ssize_t len = readlink(path, (char *)buf, sizeof buf);
        for (ssize_t i = 0; i < len; i++)
            h = (h ^ buf[i]) * 0x100000001b3ULL;
        return h;
    }
    FILE *f = S_ISREG(st->st_mode) ? fopen(path, "rb") : NULL;
    size_t got;
    while (f && (got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 0x100000001b3ULL;
    if (f)
        fclose(f);
    return h;
}

static listing *listing_target;
static size_t listing_root_len;

static int listing_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)type;
    if (ftw->level == 0)
        return 0;
    listing *l = listing_target;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->name = realloc(l->name, l->cap * sizeof *l->name);
        l->size = realloc(l->size, l->cap * sizeof *l->size);
        l->hash = realloc(l->hash, l->cap * sizeof *l->hash);
    }
    l->name[l->n] = strdup(path + listing_root_len + 1);
    l->size[l->n] = S_ISDIR(st->st_mode) ? -1 : (long long)st->st_size;
    l->hash[l->n] = content_hash(path, st);
    l->n++;
    return 0;
}

static void listing_take(const char *dir, listing *l)
{
    memset(l, 0, sizeof *l);
    listing_target = l;
    listing_root_len = strlen(dir);
    nftw(dir, listing_visit, 16, FTW_PHYS);
}

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
    free(l->size);
    free(l->hash);
}

static long long listing_find(const listing *l, const char *name, int *found, unsigned long long *hash)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->name[i], name) == 0) {
            *found = 1;
            if (hash)
                *hash = l->hash[i];
            return l->size[i];
        }
    *found = 0;
    return 0;
}

/* Is `name` (or the top component of it) one of the allowed leftovers? */
static int allowed_leftover(const char *leaves, const char *name)
{
    if (!leaves)
        return 0;
    char *copy = strdup(leaves), *save = NULL;
    int ok = 0;
    for (char *tok = strtok_r(copy, " \t", &save); tok && !ok; tok = strtok_r(NULL, " \t", &save)) {
        size_t n = strlen(tok);
        if (strcmp(name, tok) == 0 || (strncmp(name, tok, n) == 0 && name[n] == '/'))
            ok = 1;
    }
    free(copy);
    return ok;
}

static void rm_tree(const char *dir)
{
    char *cmd = malloc(strlen(dir) + 16);
    sprintf(cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "corpus: could not remove %s\n", dir);
    free(cmd);
}

/* Runs one case; appends its failures to r; returns 1 if it passed. */
static int case_check(const char *path, report_buf *r)
{
    corpus_case c;
    char err[512];
    if (!case_read(path, &c, err, sizeof err)) {
        report_add(r, "%s: bad case file: %s\n", path, err);
        case_free(&c);
        return 0;
    }
    /* make sanitize sets MDSD_SANITIZE=1: a case marked skip-sanitize
     * (what happens inside libhdf5 under ASan, not in our code) is skipped. */
    const char *san = getenv("MDSD_SANITIZE");
    if (c.skip_sanitize && san && strcmp(san, "1") == 0) {
        fprintf(stderr, "corpus: %s skipped under the sanitizers: %s\n", path, c.skip_sanitize);
        case_free(&c);
        return 1;
    }
    char base[] = "/tmp/mdsd-corpus-XXXXXX";
    cr_assert_not_null(mkdtemp(base));
    char work[sizeof base + 8], out_path[sizeof base + 16], err_path[sizeof base + 16];
    snprintf(work, sizeof work, "%s/work", base);
    snprintf(out_path, sizeof out_path, "%s/stdout", base);
    snprintf(err_path, sizeof err_path, "%s/stderr", base);
    cr_assert_eq(mkdir(work, 0700), 0);

    int passed = 1;
    for (size_t i = 0; i < c.n_setup && passed; i++) {
        int st = run_in(work, c.setup[i], out_path, err_path);
        if (st != 0) {
            char *e = slurp(err_path);
            report_add(r, "%s: setup %zu (`%s`) exited %d: %.400s\n", path, i + 1, c.setup[i], st, e);
            free(e);
            passed = 0;
        }
    }
    if (passed) {
        listing before, after;
        listing_take(work, &before);
        int st = run_in(work, c.run, out_path, err_path);
        char *e = slurp(err_path);
        if (st != c.exit_status) {
            report_add(r, "%s: exit %d, expected %d (%s); stderr: %.400s\n", path, st, c.exit_status, c.what, e);
            passed = 0;
        }
        for (size_t i = 0; i < c.n_message; i++)
            if (!contains_nocase(e, c.message[i])) {
                report_add(r, "%s: stderr lacks \"%s\" (%s); stderr: %.400s\n", path, c.message[i], c.what, e);
                passed = 0;
            }
        free(e);
        listing_take(work, &after);
        for (size_t i = 0; i < after.n; i++) {
            int found;
            unsigned long long hash = 0;
            long long size = listing_find(&before, after.name[i], &found, &hash);
            if (!found && !allowed_leftover(c.leaves, after.name[i])) {
                report_add(r, "%s: left `%s` behind (%s)\n", path, after.name[i], c.what);
                passed = 0;
            } else if (found && size != after.size[i]) {
                report_add(r, "%s: changed the size of setup's `%s` (%lld -> %lld bytes)\n", path,
                           after.name[i], size, after.size[i]);
                passed = 0;
            } else if (found && hash != after.hash[i] && !allowed_leftover(c.leaves, after.name[i])) {
                report_add(r, "%s: changed the content of setup's `%s`\n", path, after.name[i]);
                passed = 0;
            }
        }
        for (size_t i = 0; i < before.n; i++) {
            int found;
            listing_find(&after, before.name[i], &found, NULL);
            if (!found) {
                report_add(r, "%s: removed setup's `%s`\n", path, before.name[i]);
                passed = 0;
            }
        }
        listing_free(&before);
        listing_free(&after);
    }
    rm_tree(base);
    case_free(&c);
    return passed;
}

/* The repository root: MDSD_REPO, else the working directory (make test
 * runs from the root). */
static const char *repo_root(void)
{
    static char root[4096];
    const char *env = getenv("MDSD_REPO");
    if (env && *env)
        snprintf(root, sizeof root, "%s", env);
    else
        cr_assert_not_null(getcwd(root, sizeof root));
    return root;
}

static size_t corpus_glob(glob_t *g)
{
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s/tests/corpus/*/*.case", repo_root());
    int rc = glob(pattern, 0, NULL, g);
    cr_assert(rc == 0 || rc == GLOB_NOMATCH, "glob %s failed", pattern);
    return rc == 0 ? g->gl_pathc : 0;
}

Test(corpus, every_case_is_refused_cleanly, .timeout = 1800)
{
    char *bin = realpath(test_mdsd_bin(), NULL);
    cr_assert_not_null(bin, "mdsd binary %s not found", test_mdsd_bin());
    setenv("MDSD", bin, 1);
    setenv("REPO", repo_root(), 1);
    setenv("PY", "/usr/bin/python3", 1);
    /* Cases may interrupt a job on purpose; keep its progress bar off. */
    glob_t g;
    size_t n = corpus_glob(&g);
    report_buf r = {0};
    size_t failed = 0;
    /* MDSD_CORPUS_FILTER=substring runs only the matching cases (development) */
    const char *filter = getenv("MDSD_CORPUS_FILTER");
    for (size_t i = 0; i < n; i++)
        if ((!filter || strstr(g.gl_pathv[i], filter)) && !case_check(g.gl_pathv[i], &r))
            failed++;
    if (failed)
        fprintf(stderr, "corpus: %zu of %zu cases failed:\n%s", failed, n, r.text);
    cr_expect_eq(failed, 0, "%zu of %zu corpus cases failed:\n%s", failed, n, r.text ? r.text : "");
    free(r.text);
    if (n)
        globfree(&g);
    free(bin);
}

Test(corpus, holds_enough_cases)
{
    glob_t g;
    size_t n = corpus_glob(&g);
    cr_expect_geq(n, CORPUS_MIN_CASES, "tests/corpus holds %zu cases; issue 12 asks for at least %d", n,
                  CORPUS_MIN_CASES);
    if (n)
        globfree(&g);
}

/* The runner itself: a case whose command does not fail, or leaves a file,
 * or misses its message, is reported (so the corpus cannot pass vacuously). */
Test(corpus, runner_catches_a_bad_case)
{
    char *bin = realpath(test_mdsd_bin(), NULL);
    cr_assert_not_null(bin);
    setenv("MDSD", bin, 1);
    setenv("REPO", repo_root(), 1);
    setenv("PY", "/usr/bin/python3", 1);
    const char *bodies[] = {
        "what: succeeds\nrun: true\nexit: 1\nmessage: x\n",
        "what: leaves a file\nrun: echo oops >&2; touch out.csv; exit 1\nexit: 1\nmessage: oops\n",
        "what: wrong message\nrun: echo fine >&2; exit 1\nexit: 1\nmessage: not there\n",
        "what: grows setup's file\nsetup: echo a > f\nrun: echo b >> f; echo e >&2; exit 1\nexit: 1\nmessage: e\n",
        "what: rewrites setup's file, same size\nsetup: echo a > f\nrun: echo b > f; echo e >&2; exit 1\nexit: 1\n"
        "message: e\n",
        "what: turns setup's file into a link\nsetup: echo a > f; echo b > g\nrun: ln -sf g f; echo e >&2; exit 1\n"
        "exit: 1\nmessage: e\n",
        "what: no exit key\nrun: false\nmessage: x\n",
    };
    for (size_t k = 0; k < sizeof bodies / sizeof *bodies; k++) {
        char path[] = "/tmp/mdsd-corpus-case-XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, bodies[k], strlen(bodies[k])), (ssize_t)strlen(bodies[k]));
        close(fd);
        report_buf r = {0};
        cr_expect_eq(case_check(path, &r), 0, "case %zu (%s) passed", k, bodies[k]);
        free(r.text);
        unlink(path);
    }
    const char *good = "what: a clean refusal\nsetup: echo a > f\nrun: echo 'Bad Thing' >&2; exit 2\n"
                       "exit: 2\nmessage: bad thing\n";
    char path[] = "/tmp/mdsd-corpus-case-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, good, strlen(good)), (ssize_t)strlen(good));
    close(fd);
    report_buf r = {0};
    cr_expect_eq(case_check(path, &r), 1, "%s", r.text ? r.text : "");
    free(r.text);
    unlink(path);
    free(bin);
}
