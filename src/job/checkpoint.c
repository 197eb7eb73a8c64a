/* checkpoint.c - the job layer's one checkpoint format read and written
 * (checkpoint.h for the format). */
#include "checkpoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fnv.h"

void mdsd_ckpt_sum_init(mdsd_ckpt_sum *s)
{
    s->count = 0;
    s->hash = MDSD_FNV_OFFSET;
}

void mdsd_ckpt_sum_add(mdsd_ckpt_sum *s, const char *line, size_t len)
{
    s->hash = mdsd_fnv1a(s->hash, line, len);
    s->count++;
}

void mdsd_ckpt_put(FILE *f, mdsd_ckpt_sum *s, const char *line, size_t len)
{
    fwrite(line, 1, len, f);
    mdsd_ckpt_sum_add(s, line, len);
}

int mdsd_ckpt_put_records(FILE *f, mdsd_ckpt_sum *s, size_t count,
                          void (*format)(FILE *out, size_t i, const void *ctx), const void *ctx,
                          const char *what, mdsd_err *err)
{
    for (size_t i = 0; i < count; i++) {
        /* each record formatted alone: the checksum covers its bytes as written */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (!m)
            return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
        format(m, i, ctx);
        fclose(m);
        mdsd_ckpt_put(f, s, buf, len);
        free(buf);
    }
    return MDSD_OK;
}

int mdsd_ckpt_close(FILE *f, const char *key, const char *word, const mdsd_ckpt_sum *s)
{
    return fprintf(f, "#done %s %s=%zu fnv1a=%016llx\n", key, word, s->count,
                   (unsigned long long)s->hash) < 0;
}

int mdsd_ckpt_sync(FILE *f, mdsd_err *err)
{
    if (fflush(f) != 0 || fsync(fileno(f)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return MDSD_OK;
}

int mdsd_ckpt_read_file(const char *path, char **text, size_t *size, mdsd_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot read '%s': %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 + 1 > cap) {
            cap = cap ? 2 * cap : 1 << 20;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return mdsd_fail(err, MDSD_ENOMEM, "out of memory reading '%s'", path);
            }
            buf = b;
        }
        size_t got = fread(buf + len, 1, 65536, f);
        len += got;
        if (got < 65536)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return mdsd_fail(err, MDSD_EIO, "error reading '%s'", path);
    }
    buf[len] = '\0';
    *text = buf;
    *size = len;
    return MDSD_OK;
}

/* "#done KEY WORD=K fnv1a=H\n" (line [n], with its newline): KEY is what
 * lies before the last " WORD=". */
static bool parse_marker(const char *line, size_t n, const char *word, char *key,
                         unsigned long long *k, unsigned long long *h)
{
    char field[32];
    snprintf(field, sizeof field, " %s=", word);
    const char *at = NULL;
    for (const char *s = line + 5; (s = strstr(s, field)) && s < line + n; s++)
        at = s;
    char fmt[64];
    snprintf(fmt, sizeof fmt, "%s%%llu fnv1a=%%16llx%%n", field);
    int end = 0;
    if (!at || line[n - 1] != '\n' || sscanf(at, fmt, k, h, &end) != 2 || at + end != line + n - 1)
        return false;
    snprintf(key, MDSD_CKPT_KEY_MAX, "%.*s", (int)(at - (line + 6)), line + 6);
    return true;
}

/* The unit being read: its records since the last marker. */
typedef struct {
    mdsd_ckpt_sum sum;
    const char *start;   /* its first record */
} open_unit;

static int close_unit(const mdsd_ckpt_reader *r, open_unit *u, const char *line, size_t n,
                      size_t lineno, mdsd_err *err)
{
    const char *fix = r->fix ? r->fix : "", *sep = r->fix ? "; " : "";
    char key[MDSD_CKPT_KEY_MAX];
    unsigned long long k, h;
    if (!parse_marker(line, n, r->word, key, &k, &h))
        return mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: a unit marker without its %s count and "
                         "checksum%s%s", r->name, lineno, r->what, sep, fix);
    if (k != u->sum.count || (r->per_unit && k != r->per_unit)) {
        char job[64] = "";
        if (r->per_unit)
            snprintf(job, sizeof job, " and the job makes %zu per unit", r->per_unit);
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s has %zu %ss where its marker (line %zu) "
                         "records %llu%s (a %s is missing or extra)%s%s", r->name, key, u->sum.count,
                         r->what, lineno, k, job, r->what, sep, fix);
    }
    if (h != u->sum.hash)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s: its %ss do not match its marker's "
                         "checksum (line %zu): a %s was altered or reordered%s%s", r->name, key,
                         r->what, lineno, r->what, sep, fix);
    const char *text = u->start ? u->start : line;
    int rc = r->done(r->ctx, key, u->sum.count, lineno, text, (size_t)(line + n - text), err);
    mdsd_ckpt_sum_init(&u->sum);
    u->start = NULL;
    return rc;
}

int mdsd_ckpt_scan(const mdsd_ckpt_reader *r, const char *body, size_t len, size_t first_lineno,
                   mdsd_err *err)
{
    const char *s = body, *end = body + len;
    open_unit u = {.start = NULL};
    mdsd_ckpt_sum_init(&u.sum);
    mdsd_err pending; /* a bad line: fatal only if a marker follows it */
    mdsd_err_clear(&pending);
    int rc = MDSD_OK;
    bool cut = false;
    for (size_t lineno = first_lineno; rc == MDSD_OK && s < end; lineno++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
        if (!nl) { /* the last line cut short: the tail of an interrupted write */
            cut = true;
            break;
        }
        bool nul = memchr(s, '\0', n) != NULL;
        bool marker = !nul && (!strncmp(s, "#done ", 6) || !strncmp(s, "#checkpoint ", 12));
        if (pending.code && marker) {
            *err = pending;
            rc = pending.code;
        } else if (pending.code) {
            ;
        } else if (!nul && !strncmp(s, "#done ", 6)) {
            rc = close_unit(r, &u, s, n, lineno, err);
        } else if (nul) {
            mdsd_fail(&pending, MDSD_EFORMAT, "'%s', line %zu: a NUL byte%s%s", r->name, lineno,
                      r->fix ? "; " : "", r->fix ? r->fix : "");
        } else {
            int v = r->record(r->ctx, s, n, lineno, u.sum.count, &pending);
            if (v == MDSD_CKPT_RECORD || v == MDSD_CKPT_OPEN) {
                if (!u.start)
                    u.start = s;
                u.sum.hash = mdsd_fnv1a(u.sum.hash, s, n);
                u.sum.count += v == MDSD_CKPT_RECORD;
            } else if (v > 0) {
                *err = pending;
                rc = v;
            }
        }
        s += n;
    }
    if (rc == MDSD_OK && !r->drop_tail && (pending.code || u.start || cut)) {
        if (pending.code)
            *err = pending, rc = pending.code;
        else
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': its last unit is not closed by its '#done KEY "
                           "%s=K fnv1a=H' marker (the file is cut short or damaged)", r->name, r->word);
    }
    return rc;
}

int mdsd_ckpt_shard_unit(const char *open, const char *records, size_t len, size_t count,
                         const char *key, char **text, size_t *size)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return MDSD_ENOMEM;
    mdsd_ckpt_sum sum = {count, MDSD_FNV_OFFSET};
    sum.hash = mdsd_fnv1a(sum.hash, open, strlen(open));
    sum.hash = mdsd_fnv1a(sum.hash, records, len);
    fputs(open, f);
    if (len)
        fwrite(records, 1, len, f);
    mdsd_ckpt_close(f, key, "groups", &sum);
    if (fclose(f) != 0) {
        free(buf);
        return MDSD_ENOMEM;
    }
    *text = buf;
    *size = n;
    return MDSD_OK;
}
