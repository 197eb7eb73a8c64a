/* dump_validate.c - mdsd_dump_validate: every row of a dump checked. */
#include "dump_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- validation ---------------------------------------------------------- */

typedef struct {
    int id;
    size_t first_row;
} sample_run;

static int cmp_run(const void *a, const void *b)
{
    const sample_run *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->first_row < y->first_row ? -1 : x->first_row > y->first_row;
}

/* Sample ids, tokens and positions of one block; runs collects the first row
 * of every sample. */
static int check_meta(const mdsd_dump *d, const mdsd_dump_block *b, sample_run *runs,
                      size_t *n_runs, mdsd_err *err)
{
    for (size_t i = 0; i < b->rows; i++) {
        size_t row = b->row0 + i;
        if (b->tokens[i] < 0 || (size_t)b->tokens[i] >= d->V)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /tokens: token %d is outside [0, %zu)",
                             d->path, row, b->tokens[i], d->V);
        if (b->position[i] < 0)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /position: position %d is negative",
                             d->path, row, b->position[i]);
        int new_run = row == 0 || b->sample_id[i] != (i ? b->sample_id[i - 1] : runs[*n_runs - 1].id);
        int prev_pos = i ? b->position[i - 1] : -1;
        if (new_run) {
            runs[*n_runs].id = b->sample_id[i];
            runs[*n_runs].first_row = row;
            ++*n_runs;
        } else if (i > 0 && b->position[i] <= prev_pos) {
            return mdsd_fail(err, MDSD_EFORMAT,
                             "%s: row %zu: position %d does not follow position %d of the same sample %d",
                             d->path, row, b->position[i], prev_pos, b->sample_id[i]);
        }
    }
    return MDSD_OK;
}

int mdsd_dump_validate(mdsd_dump *d, void (*progress)(size_t done, size_t N, void *ctx),
                       void *ctx, mdsd_err *err)
{
    size_t cap = mdsd_dump_block_rows(d, d->n_drafts, 64u << 20);
    mdsd_dump_block *b = mdsd_dump_block_alloc(d, cap, d->n_drafts, NULL, err);
    sample_run *runs = malloc((d->n_samples + 1) * sizeof *runs);
    if (!b || !runs) {
        mdsd_dump_block_free(b);
        free(runs);
        return err && err->code ? err->code : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    size_t n_runs = 0;
    int rc = MDSD_OK, last_pos = -1;
    for (size_t r0 = 0; r0 < d->N && rc == MDSD_OK; r0 += cap) {
        rc = mdsd_dump_block_read(d, b, r0, 0, err);
        /* positions must also increase across the block boundary */
        if (rc == MDSD_OK && r0 > 0 && b->sample_id[0] == runs[n_runs - 1].id &&
            b->position[0] <= last_pos)
            rc = mdsd_fail(err, MDSD_EFORMAT,
                           "%s: row %zu: position %d does not follow position %d of the same sample %d",
                           d->path, r0, b->position[0], last_pos, b->sample_id[0]);
        /* rows in order; within a row target first, then the drafters */
        for (size_t i = 0; rc == MDSD_OK && i < b->rows; i++) {
            rc = dump_check_row(d, &d->target, r0 + i, b->target + i * d->V, err);
            for (size_t j = 0; rc == MDSD_OK && j < d->n_drafts; j++)
                rc = dump_check_row(d, &d->drafts[j], r0 + i, b->draft[j] + i * d->V, err);
        }
        if (rc == MDSD_OK)
            rc = check_meta(d, b, runs, &n_runs, err);
        if (rc == MDSD_OK) {
            last_pos = b->position[b->rows - 1];
            if (progress)
                progress(r0 + b->rows, d->N, ctx);
        }
    }
    if (rc == MDSD_OK) {
        qsort(runs, n_runs, sizeof *runs, cmp_run);
        for (size_t k = 1; k < n_runs && rc == MDSD_OK; k++)
            if (runs[k].id == runs[k - 1].id)
                rc = mdsd_fail(err, MDSD_EFORMAT,
                               "%s: row %zu: sample %d starts again (its rows are not contiguous; first seen at row %zu)",
                               d->path, runs[k].first_row, runs[k].id, runs[k - 1].first_row);
    }
    mdsd_dump_block_free(b);
    free(runs);
    return rc;
}
