/* markov.c - the Markov toy pair file of block.h: "V", the target's V rows,
 * a blank line, the draft's V rows. Read strictly: any other content is
 * refused with the file, line and value named. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "dist.h"

void mdsd_markov_free(mdsd_markov *m)
{
    if (!m)
        return;
    free(m->p);
    free(m->q);
    m->p = m->q = NULL;
    m->V = 0;
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return 0;
    return 1;
}

/* Parses exactly V numbers of one row into out[0..V). */
static int parse_row(const char *path, size_t lineno, char *line, size_t V, double *out,
                     mdsd_err *err)
{
    char *s = line, *end;
    size_t k = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (!*s)
            break;
        if (k == V)
            return mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: more than V = %zu values on the row",
                             path, lineno, V);
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')) {
            size_t len = strcspn(s, " \t\r\n");
            return mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: value %zu '%.*s' is not a number",
                             path, lineno, k + 1, (int)(len > 40 ? 40 : len), s);
        }
        if (!isfinite(x))
            return mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: value %zu is %g, not a probability",
                             path, lineno, k + 1, x);
        out[k++] = x;
        s = end;
    }
    if (k != V)
        return mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: %zu values on the row, expected V = %zu",
                         path, lineno, k, V);
    return MDSD_OK;
}

int mdsd_markov_read(const char *path, mdsd_markov *m, mdsd_err *err)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0, V = 0, row = 0; /* rows read: 0..2V */
    int rc = MDSD_OK, gap = 0;                   /* gap: a blank line after the target */
    ssize_t len;
    while (rc == MDSD_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: NUL byte in the line", path, lineno);
            break;
        }
        if (lineno == 1) {
            char *end;
            errno = 0;
            long long v = strtoll(line, &end, 10);
            if (end == line || !blank(end) || errno || v < 1 || v > MDSD_MARKOV_MAX_V) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s:1: the first line must be the vocabulary "
                               "size V, an integer in [1, %d]", path, MDSD_MARKOV_MAX_V);
                break;
            }
            V = (size_t)v;
            m->p = malloc(V * V * sizeof *m->p);
            m->q = malloc(V * V * sizeof *m->q);
            if (!m->p || !m->q)
                rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory for V = %zu", path, V);
            continue;
        }
        if (blank(line)) {
            if (row == V)
                gap = 1;
            else if (row != 2 * V)
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: blank line inside the %s matrix "
                               "(row %zu of %zu)", path, lineno, row < V ? "target" : "draft",
                               (row < V ? row : row - V) + 1, V);
            continue;
        }
        if (row == 2 * V) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: content after the draft's %zu rows",
                           path, lineno, V);
            break;
        }
        if (row == V && !gap) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s:%zu: expected a blank line between the "
                           "target's and the draft's matrices", path, lineno);
            break;
        }
        int draft = row >= V;
        size_t i = draft ? row - V : row;
        double *out = (draft ? m->q : m->p) + i * V;
        if ((rc = parse_row(path, lineno, line, V, out, err)) != MDSD_OK)
            break;
        char what[96];
        snprintf(what, sizeof what, "%s:%zu: %s row %zu", path, lineno,
                 draft ? "draft" : "target", i);
        rc = mdsd_probs_validate_hint(out, V, what, "every row of a `markov` file is a probability "
                                      "distribution (its entries sum to 1)", err);
        row++;
    }
    if (rc == MDSD_OK && ferror(f))
        rc = mdsd_fail(err, MDSD_EIO, "%s: read error", path);
    if (rc == MDSD_OK && lineno == 0)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: empty file (expected V, then two matrices)", path);
    if (rc == MDSD_OK && row < 2 * V)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: ends after %zu of the %zu rows (V = %zu: the "
                       "target's V rows, a blank line, the draft's V rows)", path, row, 2 * V, V);
    free(line);
    fclose(f);
    if (rc == MDSD_OK)
        m->V = V;
    else
        mdsd_markov_free(m);
    return rc;
}

int mdsd_markov_from_arrays(size_t V, const double *p, const double *q, mdsd_markov *m,
                            mdsd_err *err)
{
    memset(m, 0, sizeof *m);
    if (V < 1 || V > MDSD_MARKOV_MAX_V)
        return mdsd_fail(err, MDSD_EINVAL, "Markov pair: V = %zu is not in [1, %d]", V,
                         MDSD_MARKOV_MAX_V);
    if (!p || !q)
        return mdsd_fail(err, MDSD_EINVAL, "Markov pair: no %s matrix (NULL)", !p ? "target" : "draft");
    m->p = malloc(V * V * sizeof *m->p);
    m->q = malloc(V * V * sizeof *m->q);
    if (!m->p || !m->q) {
        mdsd_markov_free(m);
        return mdsd_fail(err, MDSD_ENOMEM, "Markov pair: out of memory for V = %zu", V);
    }
    /* the file's rules, row by row: finite values, then a probability vector */
    for (int draft = 0; draft < 2; draft++)
        for (size_t i = 0; i < V; i++) {
            const double *in = (draft ? q : p) + i * V;
            double *out = (draft ? m->q : m->p) + i * V;
            const char *who = draft ? "draft" : "target";
            for (size_t k = 0; k < V; k++)
                if (!isfinite(in[k])) {
                    mdsd_markov_free(m);
                    return mdsd_fail(err, MDSD_EINVAL, "Markov pair: %s row %zu, value %zu is %g, "
                                     "not a probability", who, i, k, in[k]);
                }
            memcpy(out, in, V * sizeof *out);
            char what[64];
            snprintf(what, sizeof what, "Markov pair: %s row %zu", who, i);
            int rc = mdsd_probs_validate_hint(out, V, what, "every row of a Markov pair is a "
                                              "probability distribution (its entries sum to 1)", err);
            if (rc) {
                mdsd_markov_free(m);
                return rc;
            }
        }
    m->V = V;
    return MDSD_OK;
}
