/* csv.c - tidy CSV tables. See csv.h. */
#include "csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Splits one line into malloc'd fields; returns the count or -1 (bad
 * quoting: *bad_col = the field). */
static long split_line(const char *line, char ***fields, size_t *bad_col)
{
    size_t cap = 8, n = 0;
    char **f = malloc(cap * sizeof *f);
    size_t len = strlen(line);
    char *buf = malloc(len + 1);
    if (!f || !buf) {
        free(f);
        free(buf);
        return -2;
    }
    const char *s = line;
    for (;;) {
        size_t used = 0;
        if (*s == '"') {
            s++;
            for (;;) {
                if (*s == '\0') {
                    *bad_col = n;
                    goto fail;
                }
                if (*s == '"' && s[1] == '"') {
                    buf[used++] = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    buf[used++] = *s++;
                }
            }
            if (*s != ',' && *s != '\0') {
                *bad_col = n;
                goto fail;
            }
        } else {
            while (*s != ',' && *s != '\0')
                buf[used++] = *s++;
        }
        buf[used] = '\0';
        if (n == cap) {
            char **g = realloc(f, (cap *= 2) * sizeof *f);
            if (!g)
                goto fail;
            f = g;
        }
        if (!(f[n++] = strdup(buf)))
            goto fail;
        if (*s == '\0')
            break;
        s++; /* the comma */
    }
    free(buf);
    *fields = f;
    return (long)n;
fail:
    for (size_t i = 0; i < n; i++)
        free(f[i]);
    free(f);
    free(buf);
    return -1;
}

static void free_fields(char **f, long n)
{
    for (long i = 0; i < n; i++)
        free(f[i]);
    free(f);
}

int mdsd_csv_split(const char *line, char ***fields, size_t *count, mdsd_err *err)
{
    size_t bad_col = 0;
    long n = split_line(line, fields, &bad_col);
    if (n == -2)
        return mdsd_fail(err, MDSD_ENOMEM, "CSV: out of memory");
    if (n < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "CSV: bad quoting in field %zu of '%s'", bad_col + 1, line);
    *count = (size_t)n;
    return MDSD_OK;
}

void mdsd_csv_fields_free(char **fields, size_t count)
{
    free_fields(fields, (long)count);
}

/* Reads one line of any length without its line ending into *out: 1 read,
 * 0 at EOF, -1 out of memory. *len is its length (a NUL byte inside makes
 * strlen(*out) < *len). */
static int read_line(FILE *f, char **out, size_t *len_out)
{
    size_t cap = 256, len = 0;
    char *s = malloc(cap);
    int c = EOF;
    *out = NULL;
    if (!s)
        return -1;
    while ((c = fgetc(f)) != EOF && c != '\n') {
        if (len + 1 == cap) {
            char *g = realloc(s, cap *= 2);
            if (!g) {
                free(s);
                return -1;
            }
            s = g;
        }
        s[len++] = (char)c;
    }
    if (len == 0 && c == EOF) {
        free(s);
        return 0;
    }
    if (len > 0 && s[len - 1] == '\r')
        len--;
    s[len] = '\0';
    *out = s;
    *len_out = len;
    return 1;
}

static int add_row(mdsd_csv *t, char **fields, size_t line, size_t *cap)
{
    if (t->n_rows == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        char **cells = realloc(t->cells, c * t->n_cols * sizeof *cells);
        if (cells)
            t->cells = cells;
        size_t *lines = realloc(t->line, c * sizeof *lines);
        if (lines)
            t->line = lines;
        if (!cells || !lines)
            return MDSD_ENOMEM;
        *cap = c;
    }
    memcpy(t->cells + t->n_rows * t->n_cols, fields, t->n_cols * sizeof *fields);
    t->line[t->n_rows++] = line;
    return MDSD_OK;
}

int mdsd_csv_read(const char *path, mdsd_csv **out, mdsd_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot open '%s': %s", path, strerror(errno));
    mdsd_csv *t = calloc(1, sizeof *t);
    if (!t) {
        fclose(f);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    snprintf(t->path, sizeof t->path, "%s", path);
    int rc = MDSD_OK;
    size_t line_no = 0, cap = 0, bad = 0;
    char *line;
    size_t len;
    int got;
    while (rc == MDSD_OK && (got = read_line(f, &line, &len)) != 0) {
        line_no++;
        if (got < 0) {
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory at line %zu", path, line_no);
            break;
        }
        if (strlen(line) != len) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu holds a NUL byte (not a text CSV)", path,
                           line_no);
            free(line);
            break;
        }
        if (line[0] == '\0') {
            free(line);
            continue;
        }
        char **fields;
        long n = split_line(line, &fields, &bad);
        free(line);
        if (n == -2)
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else if (n < 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu: unterminated quote in field %zu", path,
                           line_no, bad + 1);
        else if (!t->header) {
            t->header = fields;
            t->n_cols = (size_t)n;
            for (size_t i = 0; i < t->n_cols && rc == MDSD_OK; i++)
                for (size_t k = 0; k < i && rc == MDSD_OK; k++)
                    if (!strcmp(t->header[i], t->header[k]))
                        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu: column '%s' appears twice",
                                       path, line_no, t->header[i]);
        } else if ((size_t)n != t->n_cols) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu has %ld fields, the header has %zu", path,
                           line_no, n, t->n_cols);
            free_fields(fields, n);
        } else {
            if (add_row(t, fields, line_no, &cap)) {
                free_fields(fields, n);
                rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            } else {
                free(fields);
            }
        }
    }
    if (rc == MDSD_OK && ferror(f))
        rc = mdsd_fail(err, MDSD_EIO, "error reading '%s'", path);
    if (rc == MDSD_OK && !t->header)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: empty file (no header row)", path);
    fclose(f);
    if (rc) {
        mdsd_csv_free(t);
        return rc;
    }
    *out = t;
    return MDSD_OK;
}

void mdsd_csv_free(mdsd_csv *t)
{
    if (!t)
        return;
    for (size_t i = 0; t->header && i < t->n_cols; i++)
        free(t->header[i]);
    for (size_t i = 0; t->cells && i < t->n_rows * t->n_cols; i++)
        free(t->cells[i]);
    free(t->header);
    free(t->cells);
    free(t->line);
    free(t);
}

int mdsd_csv_col(const mdsd_csv *t, const char *name)
{
    for (size_t i = 0; i < t->n_cols; i++)
        if (!strcmp(t->header[i], name))
            return (int)i;
    return -1;
}

const char *mdsd_csv_cell(const mdsd_csv *t, size_t row, int col)
{
    return t->cells[row * t->n_cols + (size_t)col];
}

int mdsd_csv_number(const mdsd_csv *t, size_t row, int col, double *out, mdsd_err *err)
{
    const char *s = mdsd_csv_cell(t, row, col);
    if (s[0] == '\0') {
        *out = NAN;
        return MDSD_OK;
    }
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != '\0')
        return mdsd_fail(err, MDSD_EFORMAT, "%s: line %zu, column %s: '%s' is not a number", t->path,
                         t->line[row], t->header[col], s);
    *out = x;
    return MDSD_OK;
}

void mdsd_csv_write_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
