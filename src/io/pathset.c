/* pathset.c - the one output-safety check (pathset.h). */
#define _GNU_SOURCE
#include "pathset.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump.h"

const char *const mdsd_suffixes_job[] = {".partial", ".lock", ".provenance.json", NULL};
const char *const mdsd_suffixes_provenance[] = {".provenance.json", NULL};

/* What a file is, for comparing: device and inode where it exists, else the
 * path it would be created at (directory resolved, symlinks followed). */
typedef struct {
    bool exists;
    dev_t dev;
    ino_t ino;
    char *resolved; /* when !exists (malloc'd) */
} identity;

void mdsd_pathset_init(mdsd_pathset *s)
{
    memset(s, 0, sizeof *s);
}

void mdsd_pathset_free(mdsd_pathset *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->items[i].path), free(s->items[i].role);
    free(s->items);
    memset(s, 0, sizeof *s);
}

static void add(mdsd_pathset *s, const char *path, bool output, const char *fmt, va_list ap)
{
    if (!path)
        return;
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        mdsd_path_entry *grown = realloc(s->items, cap * sizeof *grown);
        if (!grown) {
            s->oom = true;
            return;
        }
        s->items = grown, s->cap = cap;
    }
    mdsd_path_entry *e = &s->items[s->count];
    e->output = output;
    e->path = strdup(path);
    if (!e->path || vasprintf(&e->role, fmt, ap) < 0) {
        free(e->path);
        s->oom = true;
        return;
    }
    s->count++;
}

void mdsd_pathset_input(mdsd_pathset *s, const char *path, const char *role, ...)
{
    va_list ap;
    va_start(ap, role);
    add(s, path, false, role, ap);
    va_end(ap);
}

void mdsd_pathset_output(mdsd_pathset *s, const char *path, const char *role, ...)
{
    va_list ap;
    va_start(ap, role);
    add(s, path, true, role, ap);
    va_end(ap);
}

void mdsd_pathset_dump(mdsd_pathset *s, const char *path)
{
    struct stat st;
    mdsd_pathset_input(s, path, "a dump");
    if (!path || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    char **parts = NULL;
    size_t n = 0;
    /* an unreadable or empty directory is refused later, by the reader */
    if (mdsd_dump_list_parts(path, &parts, &n, NULL) != MDSD_OK)
        return;
    for (size_t k = 0; k < n; k++)
        mdsd_pathset_input(s, parts[k], "a file of the split dump '%s'", path);
    mdsd_dump_parts_free(parts, n);
}

void mdsd_pathset_add_all(mdsd_pathset *s, const mdsd_pathset *more)
{
    for (size_t i = 0; more && i < more->count; i++) {
        if (more->items[i].output)
            mdsd_pathset_output(s, more->items[i].path, "%s", more->items[i].role);
        else
            mdsd_pathset_input(s, more->items[i].path, "%s", more->items[i].role);
    }
    if (more && more->stdout_output)
        s->stdout_output = true;
    if (more && more->oom)
        s->oom = true;
}

static const char *suffix_word(const char *suffix)
{
    return !strcmp(suffix, ".partial") ? "checkpoint"
           : !strcmp(suffix, ".lock") ? "lock file"
           : !strcmp(suffix, ".provenance.json") ? "provenance"
           : suffix;
}

void mdsd_pathset_output_family(mdsd_pathset *s, const char *path, const char *what,
                                const char *const *suffixes)
{
    if (!path)
        return;
    mdsd_pathset_output(s, path, "%s", what);
    for (size_t k = 0; suffixes && suffixes[k]; k++) {
        char *p = NULL;
        if (asprintf(&p, "%s%s", path, suffixes[k]) < 0) {
            s->oom = true;
            return;
        }
        mdsd_pathset_output(s, p, "the %s of %s %s", suffix_word(suffixes[k]), what, path);
        free(p);
    }
}

void mdsd_pathset_stdout(mdsd_pathset *s)
{
    s->stdout_output = true;
}

/* ---- identities ----------------------------------------------------------- */

/* The directory part of path ("." when none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Where a file that does not exist would be created: its directory
 * resolved, and a dangling symlink at its name followed (creating through
 * it creates the target). NULL when the directory does not exist. */
static char *resolve_missing(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40; hops++) {
        char *dir = dir_of(cur), *real = dir ? realpath(dir, NULL) : NULL;
        const char *slash = strrchr(cur, '/'), *base = slash ? slash + 1 : cur;
        char *cand = NULL;
        if (real && asprintf(&cand, "%s/%s", strcmp(real, "/") ? real : "", base) < 0)
            cand = NULL;
        free(dir), free(real);
        free(cur);
        cur = NULL;
        if (!cand)
            return NULL;
        struct stat st;
        char target[PATH_MAX];
        ssize_t len;
        if (lstat(cand, &st) != 0 || !S_ISLNK(st.st_mode) ||
            (len = readlink(cand, target, sizeof target - 1)) < 0)
            return cand;
        target[len] = '\0';
        if (target[0] == '/') {
            cur = strdup(target);
        } else {
            char *cdir = dir_of(cand);
            if (cdir && asprintf(&cur, "%s/%s", cdir, target) < 0)
                cur = NULL;
            free(cdir);
        }
        free(cand);
    }
    free(cur);
    return NULL; /* a symlink loop: compared as not existing anywhere */
}

static void identify(const char *path, identity *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) == 0) {
        id->exists = true, id->dev = st.st_dev, id->ino = st.st_ino;
        return;
    }
    id->resolved = resolve_missing(path);
}

static bool same_identity(const identity *a, const identity *b)
{
    if (a->exists || b->exists)
        return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
    return a->resolved && b->resolved && !strcmp(a->resolved, b->resolved);
}

bool mdsd_path_same(const char *a, const char *b)
{
    identity x, y;
    identify(a, &x);
    identify(b, &y);
    bool same = same_identity(&x, &y);
    free(x.resolved), free(y.resolved);
    return same;
}

/* Every file of every set that passed its check in this process. */
static identity *claimed;
static size_t n_claimed;

/* Adds a set that passed to the process's claimed files (ids taken over). */
static void claim(identity *ids, size_t n)
{
    identity *grown = realloc(claimed, (n_claimed + n + 1) * sizeof *grown);
    if (grown) {
        claimed = grown;
        memcpy(claimed + n_claimed, ids, n * sizeof *ids);
        n_claimed += n;
    } else {
        for (size_t i = 0; i < n; i++)
            free(ids[i].resolved);
    }
    free(ids);
}

bool mdsd_path_claimed(const char *path)
{
    identity id;
    identify(path, &id);
    bool found = false;
    for (size_t i = 0; i < n_claimed && !found; i++)
        found = same_identity(&id, &claimed[i]);
    free(id.resolved);
    return found;
}

/* ---- the check ------------------------------------------------------------ */

/* One output on its own: a file name in an existing, writable directory. */
static int check_one(const mdsd_path_entry *o, mdsd_err *err)
{
    const char *path = o->path;
    size_t len = strlen(path);
    if (len == 0)
        return mdsd_fail(err, MDSD_EINVAL, "empty output path (%s)", o->role);
    if (len >= 4000)
        return mdsd_fail(err, MDSD_EINVAL, "output path too long: '%.60s...'", path);
    struct stat st;
    if (path[len - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return mdsd_fail(err, MDSD_EINVAL, "output '%s' is a directory; give a file name", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return mdsd_fail(err, MDSD_EINVAL, "output '%s' exists and is not a regular file", path);
    char *dir = dir_of(path);
    if (!dir)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    int rc = MDSD_OK;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = mdsd_fail(err, MDSD_EIO, "cannot create output '%s': directory '%s' does not exist", path,
                       dir);
    else if (access(dir, W_OK) != 0)
        rc = mdsd_fail(err, MDSD_EIO, "output '%s': cannot write into directory '%s': %s", path, dir,
                       strerror(errno));
    free(dir);
    return rc;
}

/* An output named *.h5 inside a directory read as a split dump would
 * become one of its files. */
static int check_inside(const mdsd_path_entry *o, const mdsd_path_entry *in, mdsd_err *err)
{
    struct stat d, p;
    const char *slash = strrchr(o->path, '/'), *base = slash ? slash + 1 : o->path;
    size_t len = strlen(base);
    if (len < 4 || strcmp(base + len - 3, ".h5") || base[0] == '.' || stat(in->path, &d) != 0 ||
        !S_ISDIR(d.st_mode))
        return MDSD_OK;
    char *dir = dir_of(o->path);
    int inside = dir && stat(dir, &p) == 0 && p.st_dev == d.st_dev && p.st_ino == d.st_ino;
    free(dir);
    if (inside)
        return mdsd_fail(err, MDSD_EINVAL, "output '%s' (%s) would become a file of the split dump "
                         "'%s' it reads; write it elsewhere", o->path, o->role, in->path);
    return MDSD_OK;
}

static int check_stdout(const mdsd_pathset *s, const identity *ids, mdsd_err *err)
{
    struct stat st;
    if (!s->stdout_output || fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode))
        return MDSD_OK;
    identity out = {true, st.st_dev, st.st_ino, NULL};
    for (size_t i = 0; i < s->count; i++) {
        if (!same_identity(&out, &ids[i]))
            continue;
        if (!s->items[i].output)
            return mdsd_fail(err, MDSD_EINVAL, "standard output is the input '%s' (%s): refusing to "
                             "write into an input", s->items[i].path, s->items[i].role);
        /* the output replaces the file by a rename: what goes to standard
         * output would be lost with the old one */
        return mdsd_fail(err, MDSD_EINVAL, "standard output is the output '%s' (%s): one would "
                         "overwrite the other", s->items[i].path, s->items[i].role);
    }
    return MDSD_OK;
}

static int check_pairs(const mdsd_pathset *s, const identity *ids, mdsd_err *err)
{
    for (size_t i = 0; i < s->count; i++) {
        const mdsd_path_entry *o = &s->items[i];
        if (!o->output)
            continue;
        for (size_t k = 0; k < s->count; k++) {
            const mdsd_path_entry *x = &s->items[k];
            if (k == i || (x->output && k > i))
                continue;
            if (same_identity(&ids[i], &ids[k])) {
                if (!x->output)
                    return mdsd_fail(err, MDSD_EINVAL, "output '%s' is the input '%s': refusing to "
                                     "overwrite an input (the output is %s; the input is %s)", o->path,
                                     x->path, o->role, x->role);
                return mdsd_fail(err, MDSD_EINVAL, "outputs '%s' (%s) and '%s' (%s) are the same file: "
                                 "one would overwrite the other", x->path, x->role, o->path, o->role);
            }
            int rc = x->output ? MDSD_OK : check_inside(o, x, err);
            if (rc)
                return rc;
        }
    }
    return MDSD_OK;
}

int mdsd_pathset_check(mdsd_pathset *s, mdsd_err *err)
{
    if (s->oom)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->count; i++) {
        int rc = s->items[i].output ? check_one(&s->items[i], err) : MDSD_OK;
        if (rc)
            return rc;
    }
    identity *ids = calloc(s->count ? s->count : 1, sizeof *ids);
    if (!ids)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->count; i++)
        identify(s->items[i].path, &ids[i]);
    int rc = check_pairs(s, ids, err);
    if (rc == MDSD_OK)
        rc = check_stdout(s, ids, err);
    if (rc == MDSD_OK) {
        claim(ids, s->count);
        return MDSD_OK;
    }
    for (size_t i = 0; i < s->count; i++)
        free(ids[i].resolved);
    free(ids);
    return rc;
}
