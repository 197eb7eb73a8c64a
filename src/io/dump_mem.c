/* dump_mem.c - rows in memory (mdsd_row_arrays, mdsd/batch.h) read as a dump
 * (dump.h): the table job takes them as it takes a one-file float32 dump, so
 * mdsd.evaluate needs no temporary file and gives the dump route's numbers. */
#include "dump_impl.h"

#include <math.h>
#include <stdlib.h>

#include "opts.h"

void (mdsd_row_arrays_init)(mdsd_row_arrays *arrays, size_t size)
{
    mdsd_row_arrays d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(arrays, size, &d, sizeof d);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const mdsd_dump_model *const *)a)->name, (*(const mdsd_dump_model *const *)b)->name);
}

/* The structure, as mdsd_dump_open checks a file's: names, sizes, pointers. */
static int check_arrays(const mdsd_row_arrays *a, mdsd_err *err)
{
    if (!a || mdsd_opts_check(a->size, sizeof *a, "mdsd_row_arrays", NULL, err))
        return a ? MDSD_EINVAL : mdsd_fail(err, MDSD_EINVAL, "table: no row arrays given (NULL)");
    const char *label = a->label;
    if (!label || !*label || strchr(label, '/') || label[0] == '.' || strlen(label) >= 4096)
        return mdsd_fail(err, MDSD_EINVAL, "table: row arrays labelled '%s': the label must be a plain "
                         "name (not empty, no '/', not starting with '.')", label ? label : "(NULL)");
    if (a->N == 0 || a->V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no rows (N = %zu, V = %zu)", label, a->N, a->V);
    if (a->V > SIZE_MAX / sizeof(float) / a->N)
        return mdsd_fail(err, MDSD_ETOOBIG, "%s: N x V = %zu x %zu does not fit in memory", label, a->N, a->V);
    if (a->V > INT32_MAX || a->N > INT32_MAX) /* a dump's ids and positions are int32 */
        return mdsd_fail(err, MDSD_ETOOBIG, "%s: N = %zu, V = %zu: more than a dump holds (2^31 - 1)",
                         label, a->N, a->V);
    if (!a->target)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no target logits (NULL)", label);
    if (a->n_drafters == 0 || !a->drafter_names || !a->drafts)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no drafter (n_drafters = %zu)", label, a->n_drafters);
    for (size_t j = 0; j < a->n_drafters; j++) {
        const char *name = a->drafter_names[j];
        if (!name || !*name || strchr(name, '/') || strlen(name) >= MDSD_DUMP_NAME_MAX)
            return mdsd_fail(err, MDSD_EINVAL, "%s: drafter %zu is named '%s': a name of 1 to %d "
                             "characters without '/'", label, j, name ? name : "(NULL)",
                             MDSD_DUMP_NAME_MAX - 1);
        if (!a->drafts[j])
            return mdsd_fail(err, MDSD_EINVAL, "%s: no logits for drafter '%s' (NULL)", label, name);
        for (size_t k = 0; k < j; k++)
            if (!strcmp(a->drafter_names[k], name))
                return mdsd_fail(err, MDSD_EINVAL, "%s: drafter '%s' is named twice", label, name);
    }
    return MDSD_OK;
}

int mdsd_dump_open_arrays(const mdsd_row_arrays *a, mdsd_dump **out, mdsd_err *err)
{
    *out = NULL;
    int rc = check_arrays(a, err);
    if (rc)
        return rc;
    mdsd_dump *d = calloc(1, sizeof *d);
    mdsd_dump_model **order = calloc(a->n_drafters, sizeof *order);
    if (d) {
        d->mem = calloc(1, sizeof *d->mem);
        d->drafts = calloc(a->n_drafters, sizeof *d->drafts);
    }
    if (!d || !order || !d->mem || !d->drafts || !(d->mem->drafts = calloc(a->n_drafters, sizeof(float *)))) {
        mdsd_dump_close(d);
        free(order);
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", a->label);
    }
    snprintf(d->path, sizeof d->path, "%s", a->label);
    d->format = MDSD_DUMP_FORMAT;
    d->N = a->N;
    d->V = a->V;
    d->generation_temperature = NAN;
    d->n_drafts = a->n_drafters;
    mdsd_dump_model *t = &d->target;
    snprintf(t->name, sizeof t->name, "target");
    snprintf(t->path, sizeof t->path, "/target/logits");
    for (size_t j = 0; j < a->n_drafters; j++) {
        mdsd_dump_model *m = &d->drafts[j];
        snprintf(m->name, sizeof m->name, "%s", a->drafter_names[j]);
        snprintf(m->path, sizeof m->path, "/drafts/%s/logits", m->name);
        order[j] = m;
    }
    /* as a file lists its drafter groups: in name order */
    qsort(order, a->n_drafters, sizeof *order, by_name);
    mdsd_dump_model *sorted = malloc(a->n_drafters * sizeof *sorted);
    if (!sorted) {
        mdsd_dump_close(d);
        free(order);
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", a->label);
    }
    for (size_t j = 0; j < a->n_drafters; j++) {
        sorted[j] = *order[j];
        d->mem->drafts[j] = a->drafts[order[j] - d->drafts];
    }
    free(d->drafts);
    d->drafts = sorted;
    free(order);
    for (size_t j = 0; j <= a->n_drafters; j++) {
        mdsd_dump_model *m = j ? &d->drafts[j - 1] : &d->target;
        m->vocab_size = (long long)a->V;
        m->dropped_padding = -1;
        m->dtype = MDSD_DUMP_FLOAT32;
    }
    d->mem->target = a->target;
    d->mem->sample_id = a->sample_id;
    d->mem->position = a->position;
    if ((rc = dump_count_samples(d, err))) {
        mdsd_dump_close(d);
        return rc;
    }
    *out = d;
    return MDSD_OK;
}

int dump_mem_read_logits(const mdsd_dump *d, int which, size_t row0, size_t rows, float *out)
{
    const float *src = which == MDSD_DUMP_TARGET ? d->mem->target : d->mem->drafts[which];
    memcpy(out, src + row0 * d->V, rows * d->V * sizeof *out);
    return MDSD_OK;
}

void dump_mem_read_meta(const mdsd_dump *d, size_t row0, size_t rows, int *tokens, int *sample_id,
                        int *position)
{
    for (size_t i = 0; i < rows; i++) {
        if (tokens)
            tokens[i] = 0;
        if (sample_id)
            sample_id[i] = d->mem->sample_id ? d->mem->sample_id[row0 + i] : 0;
        if (position)
            position[i] = d->mem->position ? d->mem->position[row0 + i] : (int)(row0 + i);
    }
}
