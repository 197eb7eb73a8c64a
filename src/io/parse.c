#define _GNU_SOURCE /* getline */
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h" /* mdsd_half_to_float */

#define MDSD_RANGE_MAX_VALUES 100000

typedef struct {
    double *v;
    size_t len, cap;
} growable;

static int push(growable *g, double x)
{
    if (g->len == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        double *v = realloc(g->v, cap * sizeof *v);
        if (!v)
            return -1;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->len++] = x;
    return 0;
}

/* Parses one token (already trimmed) into g; `where` locates it for errors. */
static int parse_token(const char *tok, growable *g, const char *what, const char *where,
                       mdsd_err *err)
{
    char *end;
    errno = 0;
    double x = strtod(tok, &end);
    if (end == tok || *end != '\0')
        return mdsd_fail(err, MDSD_EINVAL, "%s: %s: '%s' is not a number", what, where, tok);
    if (push(g, x))
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    return MDSD_OK;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = '\0';
    return s;
}

/* Comma-separated values; an empty field ("0.5,,0.5", a leading or
 * trailing comma) is refused, not skipped: it is a typo, not a value. */
static int parse_list(const char *spec, growable *g, const char *what, mdsd_err *err)
{
    char *copy = strdup(spec);
    if (!copy)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    int rc = MDSD_OK;
    size_t index = 0;
    for (char *tok = copy, *next; tok && rc == MDSD_OK; tok = next, index++) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        char where[64];
        snprintf(where, sizeof where, "value %zu", index);
        tok = trim(tok);
        if (*tok == '\0')
            rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s is empty in '%s'", what, where, spec);
        else
            rc = parse_token(tok, g, what, where, err);
    }
    free(copy);
    return rc;
}

/* A NumPy .npy file (numpy.save of a 1-d float array): the format's version 1.0, 2.0 or 3.0
 * header (magic "\x93NUMPY", major, minor, the header's length in 2 or 4 little-endian bytes,
 * a Python dict literal naming 'descr', 'fortran_order' and 'shape'; numpy's
 * format.py documents it), then the values in the order of the shape. Read are float64,
 * float32 and float16 in either byte order; anything else (other dtypes, 0-d or n-d arrays,
 * pickled objects, a short or long data part) is refused naming the file. */
static const char *npy_key(const char *header, const char *key)
{
    const char *at = strstr(header, key);
    if (!at)
        return NULL;
    at += strlen(key);
    while (*at == ' ')
        at++;
    if (*at != ':')
        return NULL;
    at++;
    while (*at == ' ')
        at++;
    return at;
}

static int parse_npy(FILE *f, const char *path, growable *g, const char *what, mdsd_err *err)
{
    unsigned char pre[12];
    if (fread(pre, 1, 8, f) != 8)
        return mdsd_fail(err, MDSD_EINVAL, "%s: %s: a truncated .npy header", what, path);
    int major = pre[6];
    size_t width = major == 1 ? 2 : 4;
    if (major < 1 || major > 3 || fread(pre + 8, 1, width, f) != width)
        return mdsd_fail(err, MDSD_EINVAL, "%s: %s: a .npy file of format version %d.%d (read "
                         "are 1.0 to 3.0) or a truncated header", what, path, major, pre[7]);
    size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    if (width == 4)
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    if (hlen > (1u << 20))
        return mdsd_fail(err, MDSD_EINVAL, "%s: %s: a .npy header of %zu bytes", what, path, hlen);
    char *header = malloc(hlen + 1);
    if (!header)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    int rc = MDSD_OK;
    if (fread(header, 1, hlen, f) != hlen || memchr(header, '\0', hlen)) {
        free(header);
        return mdsd_fail(err, MDSD_EINVAL, "%s: %s: a truncated .npy header", what, path);
    }
    header[hlen] = '\0';
    const char *descr = npy_key(header, "'descr'"), *order = npy_key(header, "'fortran_order'"),
               *shape = npy_key(header, "'shape'");
    char type[8] = "";
    unsigned long long count = 0;
    const char *after = NULL;
    if (!descr || !order || !shape || sscanf(descr, "'%7[^']'", type) != 1)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s: a .npy header without 'descr', "
                       "'fortran_order' and 'shape'", what, path);
    else if (shape[0] != '(' || mdsd_parse_uint(shape + 1, SIZE_MAX / 8, &count, &after) ||
             strncmp(after, ",)", 2) != 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s: a .npy array of shape %.*s; one vector "
                       "(a 1-d array) is read", what, path,
                       (int)(strchr(shape, ')') ? strchr(shape, ')') - shape + 1 : 1), shape);
    const uint16_t probe = 1;
    bool native_little = *(const unsigned char *)&probe == 1;
    bool big = type[0] == '>' || (type[0] == '=' && !native_little);
    size_t size = 0;
    if (rc == MDSD_OK) {
        if ((type[0] == '<' || type[0] == '>' || type[0] == '=') && type[1] == 'f' &&
            (type[2] == '8' || type[2] == '4' || type[2] == '2') && type[3] == '\0')
            size = (size_t)(type[2] - '0');
        else
            rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s: a .npy array of dtype '%s'; read are "
                           "float64, float32 and float16 (f8, f4, f2)", what, path, type);
    }
    unsigned char *data = NULL;
    if (rc == MDSD_OK && count == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s: an empty .npy array", what, path);
    if (rc == MDSD_OK && count > MDSD_RANGE_MAX_VALUES * 100ull)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s: %llu values, above the limit of %d",
                       what, path, count, MDSD_RANGE_MAX_VALUES * 100);
    if (rc == MDSD_OK && !(data = malloc(count * size)))
        rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    if (rc == MDSD_OK && (fread(data, size, count, f) != count || fgetc(f) != EOF))
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s: the .npy data part does not hold exactly the "
                       "%llu values of its shape", what, path, count);
    for (size_t i = 0; rc == MDSD_OK && i < count; i++) {
        unsigned char b[8];
        for (size_t k = 0; k < size; k++) /* bytes little-endian first, then the value */
            b[k] = data[i * size + (big ? size - 1 - k : k)];
        uint64_t bits = 0;
        for (size_t k = size; k-- > 0;)
            bits = bits << 8 | b[k];
        double x;
        if (size == 8)
            memcpy(&x, &bits, 8);
        else if (size == 4) {
            uint32_t u = (uint32_t)bits;
            float v;
            memcpy(&v, &u, 4);
            x = v;
        } else
            x = mdsd_half_to_float((unsigned short)bits); /* exact: dump_half.c */
        if (push(g, x))
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    }
    free(data);
    free(header);
    return rc;
}

static int parse_file(const char *path, growable *g, const char *what, mdsd_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "%s: cannot open '%s': %s", what, path, strerror(errno));
    /* By content, not by name: a text file never starts with either magic. */
    unsigned char magic[6] = {0};
    size_t got = fread(magic, 1, sizeof magic, f);
    if (got == 6 && memcmp(magic, "\x93NUMPY", 6) == 0) {
        rewind(f);
        int rc = parse_npy(f, path, g, what, err);
        fclose(f);
        return rc;
    }
    if (got >= 4 && memcmp(magic, "PK\x03\x04", 4) == 0) {
        fclose(f);
        return mdsd_fail(err, MDSD_EINVAL, "%s: %s is a zip archive (torch.save's .pt or "
                         "numpy's .npz), which this program does not read: save the one vector "
                         "with numpy.save(FILE, x) (a torch tensor: t.double().numpy()), or "
                         "pass the tensor to the Python package", what, path);
    }
    rewind(f);
    char *line = NULL; /* lines of any length (getline) */
    size_t cap = 0, lineno = 0;
    int rc = MDSD_OK;
    ssize_t len;
    while (rc == MDSD_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            rc = mdsd_fail(err, MDSD_EINVAL, "%s: %s line %zu: a NUL byte", what, path, lineno);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *tok = trim(line);
        if (*tok == '\0')
            continue;
        char where[600];
        snprintf(where, sizeof where, "%s line %zu", path, lineno);
        rc = parse_token(tok, g, what, where, err);
    }
    if (rc == MDSD_OK && ferror(f))
        rc = mdsd_fail(err, MDSD_EIO, "%s: error reading '%s'", what, path);
    free(line);
    fclose(f);
    return rc;
}

int mdsd_parse_vector(const char *spec, const char *what, double **out, size_t *len,
                      mdsd_err *err)
{
    growable g = {0};
    int rc = spec[0] == '@' ? parse_file(spec + 1, &g, what, err)
                            : parse_list(spec, &g, what, err);
    if (rc == MDSD_OK && g.len == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s: no values given", what);
    if (rc != MDSD_OK) {
        free(g.v);
        return rc;
    }
    *out = g.v;
    *len = g.len;
    return MDSD_OK;
}

int mdsd_parse_range(const char *spec, const char *what, double **out, size_t *len,
                     mdsd_err *err)
{
    double a, b, step;
    char tail;
    if (sscanf(spec, "%lf:%lf:%lf%c", &a, &b, &step, &tail) != 3)
        return mdsd_parse_vector(spec, what, out, len, err);
    if (!(step > 0) || !(b >= a) || !isfinite(a) || !isfinite(b) || !isfinite(step))
        return mdsd_fail(err, MDSD_EINVAL, "%s: range '%s' needs finite a <= b and step > 0",
                         what, spec);
    /* The count is judged as a double: converting a huge quotient to size_t
     * is undefined behaviour. */
    double span = floor((b - a) / step + 1e-9) + 1.0;
    if (!(span <= MDSD_RANGE_MAX_VALUES))
        return mdsd_fail(err, MDSD_EINVAL, "%s: range '%s' would have %.3g values, above the "
                         "limit of %d (is the step too small?)", what, spec, span,
                         MDSD_RANGE_MAX_VALUES);
    size_t count = (size_t)span;
    double *v = malloc(count * sizeof *v);
    if (!v)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < count; i++) {
        v[i] = a + (double)i * step;
        if (i > 0 && !(v[i] > v[i - 1])) { /* the step is below a's resolution */
            double at = v[i - 1];
            free(v);
            return mdsd_fail(err, MDSD_EINVAL, "%s: range '%s': the step %g makes no progress "
                             "at %.17g (below its resolution)", what, spec, step, at);
        }
    }
    *out = v;
    *len = count;
    return MDSD_OK;
}

int mdsd_parse_uint(const char *s, unsigned long long max, unsigned long long *out, const char **end)
{
    const char *c = s;
    unsigned long long x = 0;
    if (*c < '0' || *c > '9')
        return -1;
    for (; *c >= '0' && *c <= '9'; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (d > max || x > (max - d) / 10)
            return -1; /* above max (or would overflow) */
        x = 10 * x + d;
    }
    if (end)
        *end = c;
    else if (*c)
        return -1;
    *out = x;
    return 0;
}

int mdsd_parse_shard(const char *s, size_t *shard, size_t *shards)
{
    unsigned long long i, n;
    const char *slash;
    if (mdsd_parse_uint(s, SIZE_MAX, &i, &slash) || *slash != '/' ||
        mdsd_parse_uint(slash + 1, SIZE_MAX, &n, NULL) || i < 1 || i > n)
        return -1;
    *shard = (size_t)i, *shards = (size_t)n;
    return 0;
}

static bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == '\\';
}

size_t mdsd_escape(const char *s, char *buf, size_t size)
{
    size_t len = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char one[5] = {(char)*c, 0};
        if (needs_escape(*c))
            snprintf(one, sizeof one, "\\%03o", *c);
        for (const char *o = one; *o; o++, len++)
            if (len + 1 < size)
                buf[len] = *o;
    }
    if (size)
        buf[len < size ? len : size - 1] = '\0';
    return len;
}

void mdsd_fputs_escaped(const char *s, FILE *f)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (needs_escape(*c))
            fprintf(f, "\\%03o", *c);
        else
            fputc(*c, f);
    }
}

int mdsd_unescape(char *s)
{
    char *out = s;
    for (const char *c = s; *c; c++) {
        if (*c != '\\') {
            *out++ = *c;
            continue;
        }
        int v = 0;
        for (int k = 1; k <= 3; k++) {
            if (c[k] < '0' || c[k] > '7')
                return -1;
            v = 8 * v + (c[k] - '0');
        }
        if (v == 0 || v > 255)
            return -1;
        *out++ = (char)v;
        c += 3;
    }
    *out = '\0';
    return 0;
}
