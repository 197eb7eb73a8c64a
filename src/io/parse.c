#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int parse_list(const char *spec, growable *g, const char *what, mdsd_err *err)
{
    char *copy = strdup(spec);
    if (!copy)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    int rc = MDSD_OK;
    size_t index = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == MDSD_OK;
         tok = strtok_r(NULL, ",", &save), index++) {
        char where[64];
        snprintf(where, sizeof where, "value %zu", index);
        rc = parse_token(trim(tok), g, what, where, err);
    }
    free(copy);
    return rc;
}

static int parse_file(const char *path, growable *g, const char *what, mdsd_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "%s: cannot open '%s': %s", what, path, strerror(errno));
    char line[4096];
    size_t lineno = 0;
    int rc = MDSD_OK;
    while (rc == MDSD_OK && fgets(line, sizeof line, f)) {
        lineno++;
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
    if (!(step > 0) || !(b >= a) || !isfinite(a) || !isfinite(b))
        return mdsd_fail(err, MDSD_EINVAL, "%s: range '%s' needs a <= b and step > 0", what, spec);
    size_t count = (size_t)floor((b - a) / step + 1e-9) + 1;
    if (count > 100000)
        return mdsd_fail(err, MDSD_EINVAL, "%s: range '%s' has %zu values", what, spec, count);
    double *v = malloc(count * sizeof *v);
    if (!v)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < count; i++)
        v[i] = a + (double)i * step;
    *out = v;
    *len = count;
    return MDSD_OK;
}
