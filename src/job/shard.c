/* shard.c - the table job's partial aggregates read back: a shard's
 * checkpoint (resume) and mdsd merge (shard.h). */
#include "shard.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fold.h"
#include "hash.h"
#include "fnv.h"
#include "checkpoint.h"

/* The units of a shard's text being read (mdsd_ckpt_scan's callbacks). */
typedef struct {
    const char *name;
    bool drop_tail;
    mdsd_shard_unit cur, *units;
    size_t count, cap;
} units_read;

static int unit_line(void *ctx, const char *s, size_t n, size_t lineno, size_t index, mdsd_err *why)
{
    units_read *r = ctx;
    (void)lineno;
    int used = 0;
    if (index > 0 || r->cur.text) {
        if (!strncmp(s, "g ", 2))
            return MDSD_CKPT_RECORD;
    } else if (r->drop_tail && (!strncmp(s, "g ", 2) || !strncmp(s, "#checkpoint ", 12))) {
        return MDSD_CKPT_SKIP; /* a checkpoint's finer checkpoints (the caller reads them) */
    } else {
        mdsd_shard_unit u = {0};
        if (sscanf(s, "#unit %zu %zu rows=%zu:%zu%n", &u.job, &u.temp, &u.begin, &u.end, &used) == 4 &&
            (size_t)used + 1 == n && u.begin <= u.end) {
            u.text = s;
            r->cur = u;
            return MDSD_CKPT_OPEN;
        }
        mdsd_fail(why, MDSD_EFORMAT, "'%s': unit %zu does not start with a '#unit J T rows=B:E' line "
                  "(the file is damaged or not a table shard)", r->name, r->count + 1);
        return r->drop_tail ? MDSD_CKPT_BAD : MDSD_EFORMAT;
    }
    mdsd_fail(why, MDSD_EFORMAT, "'%s': unit %zu (#unit %zu %zu) is not closed by its '#done KEY "
              "groups=K fnv1a=H' marker (the file is cut short or damaged)", r->name, r->count + 1,
              r->cur.job, r->cur.temp);
    return MDSD_CKPT_BAD;
}

static int unit_done(void *ctx, const char *key, size_t count, size_t lineno, const char *text,
                     size_t len, mdsd_err *err)
{
    units_read *r = ctx;
    (void)lineno;
    if (!r->cur.text)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %zu does not start with a '#unit J T "
                         "rows=B:E' line (the file is damaged or not a table shard)", r->name,
                         r->count + 1);
    if (r->count == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        mdsd_shard_unit *grown = realloc(r->units, r->cap * sizeof *grown);
        if (!grown)
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        r->units = grown;
    }
    mdsd_shard_unit *u = &r->units[r->count++];
    *u = r->cur;
    snprintf(u->key, sizeof u->key, "%s", key);
    u->groups = count;
    u->text = text;
    u->len = len;
    memset(&r->cur, 0, sizeof r->cur);
    return MDSD_OK;
}

int mdsd_shard_units_parse(const char *name, const char *body, size_t len, bool drop_tail,
                           mdsd_shard_unit **units_out, size_t *count_out, mdsd_err *err)
{
    units_read r = {name, drop_tail, {0}, NULL, 0, 0};
    mdsd_ckpt_reader rd = {name, "groups", "sample line", NULL, drop_tail, 0, unit_line, unit_done, &r};
    int rc = mdsd_ckpt_scan(&rd, body, len, 1, err);
    if (rc) {
        free(r.units);
        return rc;
    }
    *units_out = r.units;
    *count_out = r.count;
    return MDSD_OK;
}

void mdsd_shard_job_free(mdsd_shard_job *job)
{
    for (size_t i = 0; job->dumps && i < job->n_dumps; i++)
        free(job->dumps[i]);
    free(job->dumps);
    job->dumps = NULL;
    job->n_dumps = 0;
}

/* ---- merge ------------------------------------------------------------------ */

typedef mdsd_shard_file shard_file;

/* What the merge needs of the (common) header. */
typedef struct {
    mdsd_batch_plan plan;
    size_t n_temps;
    double *temps;
    size_t n_columns;
    char (*columns)[512];
    long long *sizes;              /* [file] of every dump */
    char (*digests)[MDSD_SHA256_HEX];
} merge_header;

static int split_header(const mdsd_shard_input *in, const char *magic, shard_file *sf, mdsd_err *err)
{
    size_t ml = strlen(magic);
    const char *t = in->text, *end = in->text + in->size;
    if (in->size < ml || memcmp(t, magic, ml) != 0)
        return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_SHARD,
                                "'%s' is not a partial aggregate of %s `shard` "
                                "(no '%.*s' line)", in->name,
                                strcmp(magic, MDSD_SHARD_MAGIC) ? "mdsd block" : "mdsd table", (int)ml - 1, magic);
    t += ml;
    /* strict digits: no sign, space or wrap-around (parse.h) */
    char spec[64];
    size_t len = strncmp(t, "shard ", 6) ? 0 : strcspn(t + 6, "\n");
    if (len > 0 && len < sizeof spec && t + 6 + len < end)
        memcpy(spec, t + 6, len), spec[len] = '\0';
    if (len == 0 || len >= sizeof spec || t + 6 + len >= end ||
        mdsd_parse_shard(spec, &sf->shard, &sf->shards))
        return mdsd_fail(err, MDSD_EFORMAT, "'%s', line 2: not a 'shard I/N' line with 1 <= I <= N",
                         in->name);
    sf->header = t + 6 + len + 1;
    const char *stop = strstr(sf->header, "\nend\n");
    if (!stop || stop >= end)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': the header has no 'end' line (the file is cut "
                         "short or damaged)", in->name);
    sf->header_len = (size_t)(stop - sf->header) + 5;
    sf->body = stop + 5;
    sf->body_len = (size_t)(end - sf->body);
    sf->in = in;
    return MDSD_OK;
}

static void header_free(merge_header *h)
{
    free(h->temps), free(h->columns), free(h->sizes), free(h->digests);
}

int mdsd_shard_collect(const mdsd_shard_input *inputs, size_t n, const char *magic,
                       mdsd_shard_file **out, size_t *shards, mdsd_err *err)
{
    if (n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "merge: no shard given");
    shard_file *files = calloc(n, sizeof *files), **by = calloc(n, sizeof *by);
    shard_file *ordered = calloc(n, sizeof *ordered);
    int rc = files && by && ordered ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == MDSD_OK; i++)
        rc = split_header(&inputs[i], magic, &files[i], err);
    size_t N = rc == MDSD_OK ? files[0].shards : 0;
    for (size_t i = 0; i < n && rc == MDSD_OK; i++) {
        shard_file *f = &files[i];
        if (f->header_len != files[0].header_len || memcmp(f->header, files[0].header, f->header_len))
            rc = mdsd_fail(err, MDSD_EINVAL, "'%s' is a shard of another job than '%s' (options, "
                           "cells, temperatures or dumps differ)", f->in->name, files[0].in->name);
        else if (f->shards != N)
            rc = mdsd_fail(err, MDSD_EINVAL, "'%s' is shard %zu of %zu, '%s' one of %zu", f->in->name,
                           f->shard, f->shards, files[0].in->name, N);
        else if (f->shard <= n && by[f->shard - 1])
            rc = mdsd_fail(err, MDSD_EINVAL, "shard %zu/%zu is given twice: '%s' and '%s'", f->shard, N,
                           by[f->shard - 1]->in->name, f->in->name);
        else if (f->shard <= n)
            by[f->shard - 1] = f;
    }
    for (size_t i = 0; i < N && rc == MDSD_OK; i++)
        if (i >= n || !by[i])
            rc = mdsd_fail(err, MDSD_EINVAL, "shard %zu/%zu is missing: give all %zu shards of the "
                           "job (%zu given)", i + 1, N, N, n);
    size_t parsed = 0;
    for (size_t i = 0; i < N && rc == MDSD_OK; i++, parsed++) {
        ordered[i] = *by[i];
        rc = mdsd_shard_units_parse(ordered[i].in->name, ordered[i].body, ordered[i].body_len, false,
                                    &ordered[i].units, &ordered[i].n_units, err);
    }
    free(files), free(by);
    if (rc) {
        mdsd_shard_files_free(ordered, parsed);
        return rc;
    }
    *out = ordered;
    *shards = N;
    return MDSD_OK;
}

void mdsd_shard_files_free(mdsd_shard_file *files, size_t n)
{
    for (size_t i = 0; files && i < n; i++)
        free(files[i].units);
    free(files);
}

/* Reads the settings, cells, temperatures, dumps and columns of a header. */
static int parse_header(const shard_file *sf, merge_header *h, mdsd_shard_job *job, mdsd_err *err)
{
    memset(h, 0, sizeof *h);
    memset(job, 0, sizeof *job);
    char *copy = malloc(sf->header_len + 1);
    if (!copy)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    memcpy(copy, sf->header, sf->header_len);
    copy[sf->header_len] = '\0';
    size_t lines = 0;
    for (size_t i = 0; i < sf->header_len; i++)
        lines += copy[i] == '\n';
    h->temps = malloc(lines * sizeof *h->temps);
    h->columns = malloc(lines * sizeof *h->columns);
    h->sizes = malloc(lines * sizeof *h->sizes);
    h->digests = malloc(lines * sizeof *h->digests);
    job->dumps = calloc(lines, sizeof *job->dumps);
    int rc = h->temps && h->columns && h->sizes && h->digests && job->dumps
                 ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    int simulate = 0, ok = 1;
    char *save = NULL;
    size_t lineno = 2;
    for (char *line = strtok_r(copy, "\n", &save); line && rc == MDSD_OK;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        unsigned long long a, b;
        size_t n;
        int used = 0;
        char scheme[64], method[64];
        if (!strncmp(line, "job ", 4) || !strcmp(line, "end"))
            continue;
        else if (sscanf(line, "seed %llu", &a) == 1)
            job->seed = a;
        else if (sscanf(line, "trials %llu", &a) == 1)
            job->trials = a;
        else if (sscanf(line, "simulate %d", &simulate) == 1)
            job->simulate = simulate != 0;
        else if (sscanf(line, "top_k %zu", &job->top_k) == 1 || sscanf(line, "is_top %zu", &job->is_top) == 1)
            continue;
        else if (!strncmp(line, "top_p ", 6)) {
            char *end;
            job->top_p = strtod(line + 6, &end); /* written %a: the job's value, in (0, 1] */
            ok = end != line + 6 && *end == '\0' && job->top_p > 0.0 && job->top_p <= 1.0;
        }
        else if (sscanf(line, "positions %llu:%llu", &a, &b) == 2)
            job->row_begin = (size_t)a, job->row_end = (size_t)b;
        else if (sscanf(line, "max_n %zu", &h->plan.max_n) == 1)
            continue;
        else if (sscanf(line, "cell %zu %63s %63s", &n, scheme, method) == 3) {
            mdsd_err why;
            mdsd_batch_cell *c = &h->plan.cells[h->plan.count];
            if (h->plan.count == MDSD_BATCH_MAX_CELLS || n < 1 || n > MDSD_REPORT_MAX_DRAFTS ||
                mdsd_scheme_parse(scheme, &c->scheme, &why) != MDSD_OK) {
                ok = 0;
            } else {
                mdsd_verifier_kind v;
                c->n = n;
                c->verifier = !strcmp(method, "bound") ? -1
                              : mdsd_verifier_parse(method, &v, &why) == MDSD_OK ? (int)v : (ok = 0, -1);
                c->bound_cell = -1;
                h->plan.count++;
            }
        } else if (!strncmp(line, "temperature ", 12)) {
            h->temps[h->n_temps++] = strtod(line + 12, NULL);
        } else if (!strncmp(line, "dump ", 5)) {
            /* "dump SIZE MTIME SHA256 PATH": the path is the rest of the
             * line after one space, as written (a leading space is its own) */
            long long mtime;
            char *hex = h->digests[job->n_dumps];
            if (sscanf(line, "dump %lld %lld %64[0-9a-f]%n", &h->sizes[job->n_dumps], &mtime, hex, &used) != 3 ||
                strlen(hex) != 64 || line[used] != ' ' || !line[used + 1]) {
                ok = 0;
            } else if (!(job->dumps[job->n_dumps++] = strdup(line + used + 1))) {
                rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            } else if (mdsd_unescape(job->dumps[job->n_dumps - 1])) {
                ok = 0; /* the path is written escaped (parse.h) */
            }
        } else if (!strncmp(line, "column ", 7)) {
            snprintf(h->columns[h->n_columns++], sizeof h->columns[0], "%s", line + 7);
        } else {
            ok = 0;
        }
        if (!ok && rc == MDSD_OK)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: '%.80s' is not a header line of a "
                           "table shard", sf->in->name, lineno, line);
    }
    free(copy);
    for (size_t c = 0; c < h->plan.count && rc == MDSD_OK; c++)
        if (h->plan.cells[c].n > h->plan.max_n)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': a cell of n = %zu above max_n %zu", sf->in->name,
                           h->plan.cells[c].n, h->plan.max_n);
    if (rc == MDSD_OK && (h->plan.count == 0 || h->n_temps == 0 || h->n_columns == 0 || job->n_dumps == 0))
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': the header names no cell, temperature, dump or "
                       "column", sf->in->name);
    return rc;
}

/* The dumps must be the files the shards read, by content (SHA-256, as
 * resume identifies them; a touch is no change): the provenance hashes them
 * now and the numbers come from what the shards read. */
static int check_dumps(const merge_header *h, const mdsd_shard_job *job, mdsd_err *err)
{
    for (size_t i = 0; i < job->n_dumps; i++) {
        struct stat st;
        char hex[MDSD_SHA256_HEX];
        if (stat(job->dumps[i], &st) != 0)
            return mdsd_fail(err, MDSD_EIO, "dump '%s' of the shards cannot be read here (%s): run "
                             "mdsd merge where the dumps are", job->dumps[i], strerror(errno));
        int rc = (long long)st.st_size == h->sizes[i] ? mdsd_file_sha256(job->dumps[i], hex, false, err)
                                                       : MDSD_OK;
        if (rc)
            return rc;
        if ((long long)st.st_size != h->sizes[i] || strcmp(hex, h->digests[i]) != 0)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s' changed since the shards read it (its %s "
                             "differs): rerun the shards", job->dumps[i],
                             (long long)st.st_size != h->sizes[i] ? "size" : "content, SHA-256,");
    }
    return MDSD_OK;
}

/* Folds every unit's samples, shard after shard, into the rows. */
static int fold_units(shard_file *by, size_t N, const merge_header *h, const mdsd_shard_job *job,
                      mdsd_report_row *rows, mdsd_err *err)
{
    size_t n_units = h->n_columns * h->n_temps;
    mdsd_batch_fold *fold = malloc(sizeof *fold);
    mdsd_batch_group *g = malloc(sizeof *g);
    int rc = fold && g ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; i < N && rc == MDSD_OK; i++)
        if (by[i].n_units != n_units)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s' holds %zu units where the job has %zu (it is "
                           "cut short or damaged)", by[i].in->name, by[i].n_units, n_units);
    for (size_t k = 0; k < n_units && rc == MDSD_OK; k++) {
        size_t j = k / h->n_temps, t = k % h->n_temps;
        mdsd_batch_fold_init(fold, &h->plan);
        size_t expect = job->row_begin;
        bool have_last = false;
        long long last = 0;
        for (size_t i = 0; i < N && rc == MDSD_OK; i++) {
            const mdsd_shard_unit *u = &by[i].units[k];
            const char *name = by[i].in->name;
            if (u->job != j || u->temp != t)
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %zu is #unit %zu %zu where the job's "
                               "order has %zu %zu", name, k + 1, u->job, u->temp, j, t);
            else if (u->begin != expect && !(i == 0 && job->row_begin == 0))
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s covers rows %zu:%zu, which do not "
                               "follow the previous shard's (up to row %zu)", name, u->key, u->begin,
                               u->end, expect);
            expect = u->end;
            const char *s = u->text + strcspn(u->text, "\n") + 1;
            for (size_t m = 0; m < u->groups && rc == MDSD_OK; m++) {
                if (mdsd_batch_group_parse(s, &h->plan, g) != MDSD_OK)
                    rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s, sample line %zu: not a "
                                   "summary of %zu cells", name, u->key, m + 1, h->plan.count);
                else if (have_last && g->sample == last)
                    rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s: sample %lld is split with the "
                                   "line before it (shards hold whole samples)", name, u->key, g->sample);
                else
                    mdsd_batch_fold_group(fold, &h->plan, g);
                have_last = true;
                last = g->sample;
                s += strcspn(s, "\n") + 1;
            }
        }
        if (rc == MDSD_OK && job->row_end && expect != job->row_end)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': the last shard ends at row %zu, not at the "
                           "job's row %zu", by[N - 1].in->name, expect, job->row_end);
        if (rc == MDSD_OK)
            mdsd_batch_finish_rows(fold, &h->plan, h->columns[j], h->temps[t], rows + k * h->plan.count);
    }
    free(fold);
    free(g);
    return rc;
}

/* The output-safety check (pathset.h) once the dumps are known. */
static int merge_paths(const mdsd_merge_opts *m, const mdsd_shard_job *job, mdsd_err *err)
{
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    for (size_t i = 0; i < m->n_inputs; i++)
        mdsd_pathset_input(&s, m->inputs[i].name, "a shard");
    for (size_t i = 0; i < job->n_dumps; i++)
        mdsd_pathset_dump(&s, job->dumps[i]);
    mdsd_pathset_output_family(&s, m->output, "`output`", mdsd_suffixes_provenance);
    mdsd_pathset_add_all(&s, m->paths);
    int rc = mdsd_pathset_check(&s, err);
    mdsd_pathset_free(&s);
    return rc;
}

int mdsd_batch_merge(const mdsd_merge_opts *m, mdsd_report_row **rows_out, size_t *count_out,
                     mdsd_err *err)
{
    mdsd_err local;
    if (!err)
        err = &local;
    mdsd_err_clear(err);
    if (m->n_inputs == 0)
        return mdsd_fail(err, MDSD_EINVAL, "merge: no shard given");
    size_t N = 0;
    shard_file *ordered = NULL;
    int rc = mdsd_shard_collect(m->inputs, m->n_inputs, MDSD_SHARD_MAGIC, &ordered, &N, err);
    merge_header h = {0};
    mdsd_shard_job scratch = {0}, *job = m->job ? m->job : &scratch;
    if (rc == MDSD_OK)
        rc = parse_header(&ordered[0], &h, job, err);
    if (rc == MDSD_OK) /* before the dumps are hashed */
        rc = merge_paths(m, job, err);
    if (rc == MDSD_OK)
        rc = check_dumps(&h, job, err);
    size_t count = h.n_columns * h.n_temps * h.plan.count;
    mdsd_report_row *rows = rc == MDSD_OK ? calloc(count, sizeof *rows) : NULL;
    if (rc == MDSD_OK && !rows)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK)
        rc = fold_units(ordered, N, &h, job, rows, err);
    if (rc == MDSD_OK)
        rc = mdsd_batch_write_csv(m->output, rows, count, h.plan.max_n, m->before_publish,
                                  m->publish_ctx, err);
    mdsd_shard_files_free(ordered, N);
    header_free(&h);
    mdsd_shard_job_free(&scratch);
    if (rc == MDSD_OK && rows_out) {
        *rows_out = rows;
        *count_out = count;
    } else {
        free(rows);
    }
    return rc;
}
