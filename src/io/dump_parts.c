/* dump_parts.c - a dump split across files: a directory whose *.h5 files,
 * in name order, are read as one dump (dump.h, mdsd_dump_parts). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dump.h"
#include "hash.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void mdsd_dump_parts_free(char **parts, size_t n)
{
    for (size_t i = 0; parts && i < n; i++)
        free(parts[i]);
    free(parts);
}

int mdsd_dump_list_parts(const char *path, char ***parts_out, size_t *n_out, mdsd_err *err)
{
    struct stat st;
    char **parts = NULL;
    size_t n = 0, cap = 0;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) { /* one file: mdsd_dump_open judges it */
        parts = malloc(sizeof *parts);
        if (!parts || !(parts[0] = strdup(path))) {
            free(parts);
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        }
        *parts_out = parts;
        *n_out = 1;
        return MDSD_OK;
    }
    DIR *dir = opendir(path);
    if (!dir)
        return mdsd_fail(err, MDSD_EIO, "cannot read the directory '%s': %s", path, strerror(errno));
    int rc = MDSD_OK;
    size_t plen = strlen(path);
    bool slash = plen > 0 && path[plen - 1] == '/';
    for (struct dirent *e; rc == MDSD_OK && (e = readdir(dir));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".h5") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(parts, cap * sizeof *parts);
            if (!grown) {
                rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
                break;
            }
            parts = grown;
        }
        size_t size = plen + len + 2;
        if (!(parts[n] = malloc(size))) {
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            break;
        }
        snprintf(parts[n++], size, "%s%s%s", path, slash ? "" : "/", e->d_name);
    }
    closedir(dir);
    if (rc == MDSD_OK && n == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "'%s' is a directory without *.h5 dumps (a dump split "
                       "across files is a directory of them)", path);
    if (rc) {
        mdsd_dump_parts_free(parts, n);
        return rc;
    }
    qsort(parts, n, sizeof *parts, by_name);
    *parts_out = parts;
    *n_out = n;
    return MDSD_OK;
}

/* Files of one size: equal contents? Sampled blocks first (different dumps
 * differ there), then the SHA-256 of both. */
static int same_content(const char *a, const char *b, off_t size, bool *same, mdsd_err *err)
{
    enum { BLOCK = 4096, SAMPLES = 16 };
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int rc = fa && fb ? MDSD_OK
                      : mdsd_fail(err, MDSD_EIO, "cannot read '%s': %s", fa ? b : a, strerror(errno));
    *same = true;
    for (int s = 0; s <= SAMPLES && rc == MDSD_OK && *same; s++) {
        char x[BLOCK], y[BLOCK];
        off_t at = size <= BLOCK ? 0 : (off_t)((double)(size - BLOCK) * s / SAMPLES);
        size_t want = size < BLOCK ? (size_t)size : BLOCK;
        if (fseeko(fa, at, SEEK_SET) || fseeko(fb, at, SEEK_SET) || fread(x, 1, want, fa) != want ||
            fread(y, 1, want, fb) != want)
            rc = mdsd_fail(err, MDSD_EIO, "cannot read '%s' or '%s'", a, b);
        else
            *same = memcmp(x, y, want) == 0;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    char ha[MDSD_SHA256_HEX], hb[MDSD_SHA256_HEX];
    if (rc == MDSD_OK && *same && (rc = mdsd_file_sha256(a, ha, false, err)) == MDSD_OK &&
        (rc = mdsd_file_sha256(b, hb, false, err)) == MDSD_OK)
        *same = strcmp(ha, hb) == 0;
    return rc;
}

/* No file twice in one split dump: not by two names, not as a copy. */
static int check_distinct(const char *dir, char *const *parts, size_t n, mdsd_err *err)
{
    struct stat *st = calloc(n, sizeof *st);
    int rc = st ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == MDSD_OK; i++)
        if (stat(parts[i], &st[i]) != 0)
            rc = mdsd_fail(err, MDSD_EIO, "cannot open dump '%s': %s", parts[i], strerror(errno));
    for (size_t i = 0; i < n && rc == MDSD_OK; i++)
        for (size_t k = 0; k < i && rc == MDSD_OK; k++) {
            bool same = st[i].st_dev == st[k].st_dev && st[i].st_ino == st[k].st_ino;
            if (same)
                rc = mdsd_fail(err, MDSD_EINVAL, "split dump '%s': '%s' and '%s' are the same file "
                               "(a link): its samples would be counted twice", dir, parts[k], parts[i]);
            else if (st[i].st_size == st[k].st_size && S_ISREG(st[i].st_mode) && S_ISREG(st[k].st_mode) &&
                     (rc = same_content(parts[k], parts[i], st[i].st_size, &same, err)) == MDSD_OK &&
                     same)
                rc = mdsd_fail(err, MDSD_EINVAL, "split dump '%s': '%s' and '%s' hold the same content "
                               "(the same SHA-256): its samples would be counted twice", dir, parts[k],
                               parts[i]);
        }
    free(st);
    return rc;
}

int mdsd_dump_parts(const char *path, char ***parts_out, size_t *n_out, mdsd_err *err)
{
    int rc = mdsd_dump_list_parts(path, parts_out, n_out, err);
    if (rc == MDSD_OK && *n_out > 1 && (rc = check_distinct(path, *parts_out, *n_out, err))) {
        mdsd_dump_parts_free(*parts_out, *n_out);
        *parts_out = NULL, *n_out = 0;
    }
    return rc;
}

/* Whether two attributes of a split dump's files agree. */
static bool same_text(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

int mdsd_dump_check_part(const mdsd_dump *first, const mdsd_dump *d, int draft0, int draft,
                         mdsd_err *err)
{
    const char *what = d->V != first->V ? "vocabulary size"
                       : !same_text(d->target.model, first->target.model) ? "target model"
                       : !same_text(d->drafts[draft].model, first->drafts[draft0].model) ? "drafter model"
                       : !same_text(d->tokenizer, first->tokenizer) ? "tokenizer"
                       : !(d->generation_temperature == first->generation_temperature ||
                           (isnan(d->generation_temperature) && isnan(first->generation_temperature)))
                           ? "generation temperature" : NULL;
    if (what)
        return mdsd_fail(err, MDSD_EINVAL, "%s: its %s differs from that of %s, the first file of the "
                         "same split dump: the files are not parts of one dataset", d->path, what,
                         first->path);
    return MDSD_OK;
}
