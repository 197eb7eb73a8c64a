/* api_dump.c - the public dump reader, validator and writer (mdsd/dump.h):
 * thin wrappers over dump.h, the one implementation of the format that the
 * CLI, the Python package and the model runner share. */
#include <mdsd/mdsd.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "opts.h"

_Static_assert(MDSD_DUMP_TARGET_LOGITS == MDSD_DUMP_TARGET, "the target's `which`");

struct mdsd_dump_reader {
    mdsd_dump *d;
};

static mdsd_dump_reader *reader_open(const char *path, int truncated_ok, mdsd_err *err)
{
    if (!path) {
        mdsd_fail(err, MDSD_EINVAL, "dump: no path given (NULL)");
        return NULL;
    }
    mdsd_dump_reader *r = calloc(1, sizeof *r);
    if (!r) {
        mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if ((truncated_ok ? mdsd_dump_open_truncated : mdsd_dump_open)(path, &r->d, err)) {
        free(r);
        return NULL;
    }
    return r;
}

mdsd_dump_reader *mdsd_dump_reader_open(const char *path, mdsd_err *err)
{
    return reader_open(path, 0, err);
}

/* For the writer's validator and `mdsd info`-like readers: a dump with truncated
 * top-k rows (data/README.md, "Truncated rows") is opened, not refused; no job
 * reads it through this handle. */
mdsd_dump_reader *mdsd_dump_reader_open_truncated(const char *path, mdsd_err *err)
{
    return reader_open(path, 1, err);
}

void mdsd_dump_reader_info(const mdsd_dump_reader *r, mdsd_dump_info *info)
{
    const mdsd_dump *d = r->d;
    memset(info, 0, sizeof *info);
    info->format = d->format;
    info->N = d->N;
    info->V = d->V;
    info->n_samples = d->n_samples;
    info->n_drafts = d->n_drafts;
    info->generation_temperature = d->generation_temperature;
    info->dtype = d->target.dtype;
}

const char *mdsd_dump_reader_draft_name(const mdsd_dump_reader *r, size_t j)
{
    return j < r->d->n_drafts ? r->d->drafts[j].name : NULL;
}

static int check_rows(const mdsd_dump *d, size_t row0, size_t rows, mdsd_err *err)
{
    if (row0 > d->N || rows > d->N - row0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: rows %zu..%zu are outside the dump's %zu rows",
                         d->path, row0, row0 + rows, d->N);
    return MDSD_OK;
}

mdsd_status mdsd_dump_reader_logits(mdsd_dump_reader *r, int which, size_t row0, size_t rows, float *out,
                            mdsd_err *err)
{
    if (which < MDSD_DUMP_TARGET || (which >= 0 && (size_t)which >= r->d->n_drafts))
        return mdsd_fail(err, MDSD_EINVAL, "%s: no drafter %d (the dump has %zu)", r->d->path,
                         which, r->d->n_drafts);
    int rc = check_rows(r->d, row0, rows, err);
    return rc ? rc : mdsd_dump_read_logits(r->d, which, row0, rows, out, err);
}

mdsd_status mdsd_dump_reader_rows(mdsd_dump_reader *r, size_t row0, size_t rows, int32_t *tokens,
                          int32_t *sample_id, int32_t *position, mdsd_err *err)
{
    int rc = check_rows(r->d, row0, rows, err);
    return rc ? rc : mdsd_dump_read_meta(r->d, row0, rows, tokens, sample_id, position, err);
}

mdsd_status mdsd_dump_reader_validate(mdsd_dump_reader *r, mdsd_err *err)
{
    return mdsd_dump_validate(r->d, NULL, NULL, err);
}

void mdsd_dump_reader_free(mdsd_dump_reader *r)
{
    if (r) {
        mdsd_dump_close(r->d);
        free(r);
    }
}

mdsd_status mdsd_dump_validate_file(const char *path, mdsd_err *err)
{
    mdsd_err e; /* the code of a failed open, also when err is NULL */
    mdsd_err_clear(&e);
    mdsd_dump_reader *r = mdsd_dump_reader_open(path, &e);
    int rc = r ? (int)mdsd_dump_reader_validate(r, &e) : e.code;
    mdsd_dump_reader_free(r);
    if (rc && err)
        *err = e;
    return rc;
}

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_dump_layout_init)(mdsd_dump_layout *layout, size_t size)
{
    mdsd_dump_layout d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.generation_temperature = 1.0;
    d.neg_inf = MDSD_DUMP_NEG_INF_ASK;
    mdsd_opts_fill(layout, size, &d, sizeof d);
}

mdsd_dump_writer *mdsd_dump_writer_new(const char *path, const mdsd_dump_layout *l,
                                       mdsd_err *err)
{
    if (!path || !l) {
        mdsd_fail(err, MDSD_EINVAL, "dump writer: no %s given (NULL)", !path ? "path" : "layout");
        return NULL;
    }
    if (mdsd_opts_check(l->size, sizeof *l, "mdsd_dump_layout", NULL, err))
        return NULL;
    if ((unsigned)l->dtype > MDSD_DUMP_BFLOAT16) {
        mdsd_fail(err, MDSD_EINVAL, "%s: unknown logits dtype %d", path, (int)l->dtype);
        return NULL;
    }
    if ((unsigned)l->neg_inf > MDSD_DUMP_NEG_INF_ASK) {
        mdsd_fail(err, MDSD_EINVAL, "%s: unknown neg_inf %d (zero, unseen or ask)", path, (int)l->neg_inf);
        return NULL;
    }
    mdsd_dump_writer *w = NULL;
    if (mdsd_dump_writer_open(path, l, &w, err))
        return NULL;
    return w;
}

mdsd_status mdsd_dump_writer_write(mdsd_dump_writer *w, size_t rows, const float *target,
                           const float *const *drafts, const int32_t *tokens,
                           const int32_t *sample_id, const int32_t *position, mdsd_err *err)
{
    if (!w || !target || !drafts || !tokens || !sample_id || !position)
        return mdsd_fail(err, MDSD_EINVAL, "dump writer: an argument is NULL");
    return mdsd_dump_writer_append(w, rows, target, drafts, tokens, sample_id, position, err);
}

mdsd_status mdsd_dump_writer_finish(mdsd_dump_writer *w, mdsd_err *err)
{
    if (!w)
        return mdsd_fail(err, MDSD_EINVAL, "dump writer: NULL");
    return mdsd_dump_writer_commit(w, err);
}

void mdsd_dump_writer_free(mdsd_dump_writer *w)
{
    mdsd_dump_writer_abort(w);
}
