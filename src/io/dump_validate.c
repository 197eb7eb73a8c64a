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

int mdsd_dump_validate(mdsd_dump *d, void (*progress)(size_t done, size_t N, void *ctx),
                       void *ctx, mdsd_err *err)
{
    size_t cap = mdsd_dump_block_rows(d, d->n_drafts, 64u << 20);
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_dump_block *b = mdsd_dump_block_alloc(d, cap, d->n_drafts, NULL, &e);
    if (!b)
        return mdsd_fail_from(err, &e, d->path);
    mdsd_dump_meta_check meta;
    mdsd_dump_meta_check_init(&meta);
    int rc = MDSD_OK;
    for (size_t r0 = 0; r0 < d->N && rc == MDSD_OK; r0 += cap) {
        rc = mdsd_dump_block_read(d, b, r0, 0, err);
        /* rows in order; within a row target first, then the drafters, then
         * its metadata */
        for (size_t i = 0; rc == MDSD_OK && i < b->rows; i++) {
            rc = dump_check_row(d, &d->target, r0 + i, b->target + i * d->V, err);
            for (size_t j = 0; rc == MDSD_OK && j < d->n_drafts; j++)
                rc = dump_check_row(d, &d->drafts[j], r0 + i, b->draft[j] + i * d->V, err);
        }
        if (rc == MDSD_OK)
            rc = mdsd_dump_check_meta(d, b, &meta, err);
        if (rc == MDSD_OK && progress)
            progress(r0 + b->rows, d->N, ctx);
    }
    if (rc == MDSD_OK)
        rc = mdsd_dump_check_samples(d, err);
    if (rc == MDSD_OK)
        rc = mdsd_dump_check_unchanged(d, err);
    mdsd_dump_block_free(b);
    return rc;
}
