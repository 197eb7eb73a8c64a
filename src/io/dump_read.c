/* dump_read.c - streaming rows of a dump: logits as float, per-row metadata,
 * blocks, and the per-row logit check. */
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

/* ---- reading ------------------------------------------------------------- */

static int check_range(const mdsd_dump *d, size_t row0, size_t rows, mdsd_err *err)
{
    if (row0 > d->N || rows > d->N - row0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: rows %zu..%zu are outside the dump's %zu rows", d->path,
                         row0, row0 + rows, d->N);
    return MDSD_OK;
}

/* HDF5 clamps an integer that does not fit the memory type (an int64
 * sample id of 2^40 would read as INT_MAX and merge samples); this makes
 * any such value abort the read instead. */
static H5T_conv_ret_t refuse_out_of_range(H5T_conv_except_t what, hid_t src, hid_t dst,
                                          void *src_buf, void *dst_buf, void *user)
{
    (void)src, (void)dst, (void)src_buf, (void)dst_buf;
    if (what == H5T_CONV_EXCEPT_RANGE_HI || what == H5T_CONV_EXCEPT_RANGE_LOW) {
        *(int *)user = 1;
        return H5T_CONV_ABORT;
    }
    return H5T_CONV_UNHANDLED;
}

/* Reads a hyperslab of rows [row0, row0 + rows) of a rank-1 or rank-2
 * dataset with memory type mtype; integers that do not fit mtype are an
 * error. */
int dump_read_rows(const mdsd_dump *d, hid_t ds, const char *path, int rank, size_t row0,
                   size_t rows, hid_t mtype, void *out, mdsd_err *err)
{
    if (rows == 0)
        return MDSD_OK;
    int overflow = 0;
    hid_t dxpl = H5P_DEFAULT;
    if (rank == 1) {
        dxpl = H5Pcreate(H5P_DATASET_XFER);
        if (dxpl < 0 || H5Pset_type_conv_cb(dxpl, refuse_out_of_range, &overflow) < 0) {
            dump_h5_close(dxpl);
            return mdsd_fail(err, MDSD_ENOMEM, "%s: cannot set up a read of %s", d->path, path);
        }
    }
    hsize_t start[2] = {row0, 0}, count[2] = {rows, d->V};
    hid_t fs = H5Dget_space(ds);
    /* the memory space has the selection's shape: a flat one makes HDF5 map
     * every element to its chunk one at a time (~20x slower) */
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t st = fs < 0 || ms < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (st >= 0)
        st = H5Dread(ds, mtype, ms, fs, dxpl, out);
    dump_h5_close(fs);
    dump_h5_close(ms);
    if (dxpl != H5P_DEFAULT)
        dump_h5_close(dxpl);
    if (st < 0 && overflow) {
        H5Eclear2(H5E_DEFAULT);
        return mdsd_fail(err, MDSD_EFORMAT, "%s: rows %zu..%zu of %s: a value does not fit in a 32-bit int",
                         d->path, row0, row0 + rows - 1, path);
    }
    if (st < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "%s: cannot read rows %zu..%zu of %s: corrupt file? (%s)",
                         d->path, row0, row0 + rows - 1, path, dump_h5_reason(why, sizeof why));
    }
    return MDSD_OK;
}

int mdsd_dump_read_logits(mdsd_dump *d, int which, size_t row0, size_t rows, float *out,
                          mdsd_err *err)
{
    const mdsd_dump_model *m = mdsd_dump_model_at(d, which);
    if (!m)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no drafter number %d", d->path, which);
    int rc = check_range(d, row0, rows, err);
    if (rc)
        return rc;
    if (d->mem)
        return dump_mem_read_logits(d, which, row0, rows, out);
    hid_t ds = which == MDSD_DUMP_TARGET ? d->h5->target : d->h5->drafts[which];
    if (m->dtype == MDSD_DUMP_FLOAT32)
        return dump_read_rows(d, ds, m->path, 2, row0, rows, H5T_NATIVE_FLOAT, out, err);
    /* 16-bit: read the raw bit patterns (memory type = file type, so HDF5
     * converts nothing) into the front half of out, then widen from the back
     * so that nothing is overwritten before it is read. float16 is widened
     * here rather than by HDF5's conversion, which measured ~50 ns per value
     * (~15x slower than the whole read) and is the bottleneck for V = 32000;
     * tests/test_dump.c checks this widening against HDF5's conversion on all
     * 65536 bit patterns. */
    hid_t mtype = m->dtype == MDSD_DUMP_FLOAT16 ? H5Dget_type(ds) : H5Tcopy(H5T_NATIVE_USHORT);
    rc = dump_read_rows(d, ds, m->path, 2, row0, rows, mtype, out, err);
    dump_h5_close(mtype);
    if (rc)
        return rc;
    const unsigned char *bytes = (const unsigned char *)out;
    if (m->dtype == MDSD_DUMP_FLOAT16) {
        for (size_t i = rows * d->V; i-- > 0;) {
            uint16_t b;
            memcpy(&b, bytes + 2 * i, sizeof b);
            out[i] = half_fast(b);
        }
    } else {
        for (size_t i = rows * d->V; i-- > 0;) {
            uint16_t b;
            memcpy(&b, bytes + 2 * i, sizeof b);
            out[i] = bits_float((uint32_t)b << 16);
        }
    }
    return MDSD_OK;
}

int mdsd_dump_read_meta(mdsd_dump *d, size_t row0, size_t rows, int *tokens, int *sample_id,
                        int *position, mdsd_err *err)
{
    int rc = check_range(d, row0, rows, err);
    if (rc == MDSD_OK && d->mem) {
        dump_mem_read_meta(d, row0, rows, tokens, sample_id, position);
        return MDSD_OK;
    }
    if (rc == MDSD_OK && tokens)
        rc = dump_read_rows(d, d->h5->tokens, "/tokens", 1, row0, rows, H5T_NATIVE_INT, tokens, err);
    if (rc == MDSD_OK && sample_id)
        rc = dump_read_rows(d, d->h5->sample_id, "/sample_id", 1, row0, rows, H5T_NATIVE_INT, sample_id, err);
    if (rc == MDSD_OK && position)
        rc = dump_read_rows(d, d->h5->position, "/position", 1, row0, rows, H5T_NATIVE_INT, position, err);
    return rc;
}

/* One row: no NaN or +inf, at least one finite value. */
int dump_check_row(const mdsd_dump *d, const mdsd_dump_model *m, size_t row, const float *x,
                     mdsd_err *err)
{
    /* fast pass without early exits (it vectorises): NaN and +inf fail
     * x < inf, and some x > -inf must exist */
    int ok = 1, any = 0;
    for (size_t i = 0; i < d->V; i++) {
        ok &= x[i] < INFINITY;
        any |= x[i] > -INFINITY;
    }
    if (ok && any)
        return MDSD_OK;
    size_t finite = 0;
    for (size_t i = 0; i < d->V; i++) {
        if (isnan(x[i]))
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of %s: logit %zu is NaN", d->path, row,
                             m->path, i);
        if (x[i] == INFINITY)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of %s: logit %zu is +inf", d->path, row,
                             m->path, i);
        finite += x[i] != -INFINITY;
    }
    if (finite == 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of %s: every logit is -inf", d->path, row,
                         m->path);
    return MDSD_OK;
}

int mdsd_dump_check_logits(const mdsd_dump *d, int which, size_t row0, size_t rows,
                           const float *logits, mdsd_err *err)
{
    const mdsd_dump_model *m = mdsd_dump_model_at(d, which);
    if (!m)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no drafter number %d", d->path, which);
    for (size_t r = 0; r < rows; r++) {
        int rc = dump_check_row(d, m, row0 + r, logits + r * d->V, err);
        if (rc)
            return rc;
    }
    return MDSD_OK;
}

size_t mdsd_dump_block_rows(const mdsd_dump *d, size_t n_drafts, size_t max_bytes)
{
    size_t unit = d->target.chunk_rows ? d->target.chunk_rows : 1;
    size_t row_bytes = (1 + n_drafts) * d->V * sizeof(float);
    size_t rows = max_bytes / (row_bytes ? row_bytes : 1);
    rows = rows / unit * unit;
    if (rows < unit)
        rows = unit;
    return rows < d->N ? rows : d->N;
}

mdsd_dump_block *mdsd_dump_block_alloc(const mdsd_dump *d, size_t cap, size_t n_drafts,
                                       const int *which, mdsd_err *err)
{
    if (cap == 0) {
        mdsd_fail(err, MDSD_EINVAL, "block capacity must be at least one row");
        return NULL;
    }
    if (!which && n_drafts != d->n_drafts) {
        mdsd_fail(err, MDSD_EINVAL, "no drafter list given for %zu of %zu drafters", n_drafts, d->n_drafts);
        return NULL;
    }
    for (size_t j = 0; which && j < n_drafts; j++)
        if (which[j] < 0 || (size_t)which[j] >= d->n_drafts) {
            mdsd_fail(err, MDSD_EINVAL, "%s: no drafter number %d", d->path, which[j]);
            return NULL;
        }
    mdsd_dump_block *b = calloc(1, sizeof *b);
    int ok = b != NULL;
    if (ok) {
        b->cap = cap;
        b->V = d->V;
        b->n_drafts = n_drafts;
        b->which = malloc((n_drafts ? n_drafts : 1) * sizeof *b->which);
        b->draft = calloc(n_drafts ? n_drafts : 1, sizeof *b->draft);
        b->borrowed = d->mem != NULL;
        b->target = b->borrowed ? NULL : malloc(cap * d->V * sizeof *b->target);
        b->tokens = malloc(cap * sizeof *b->tokens);
        b->sample_id = malloc(cap * sizeof *b->sample_id);
        b->position = malloc(cap * sizeof *b->position);
        ok = b->which && b->draft && (b->target || b->borrowed) && b->tokens && b->sample_id &&
             b->position;
        for (size_t j = 0; ok && j < n_drafts; j++) {
            b->which[j] = which ? which[j] : (int)j;
            ok = b->borrowed || (b->draft[j] = malloc(cap * d->V * sizeof **b->draft)) != NULL;
        }
    }
    if (!ok) {
        mdsd_dump_block_free(b);
        mdsd_fail(err, MDSD_ENOMEM, "out of memory for a block of %zu rows x %zu", cap, d->V);
        return NULL;
    }
    return b;
}

void mdsd_dump_block_free(mdsd_dump_block *b)
{
    if (!b)
        return;
    for (size_t j = 0; b->draft && j < b->n_drafts && !b->borrowed; j++)
        free(b->draft[j]);
    free(b->draft);
    free(b->which);
    if (!b->borrowed)
        free(b->target);
    free(b->tokens);
    free(b->sample_id);
    free(b->position);
    free(b);
}

int mdsd_dump_block_read(mdsd_dump *d, mdsd_dump_block *b, size_t row0, int check, mdsd_err *err)
{
    if (b->V != d->V)
        return mdsd_fail(err, MDSD_EINVAL, "%s: block is for V = %zu, the dump has V = %zu", d->path,
                         b->V, d->V);
    b->row0 = row0;
    b->rows = 0;
    if (row0 >= d->N)
        return MDSD_OK;
    size_t rows = d->N - row0 < b->cap ? d->N - row0 : b->cap;
    int rc = mdsd_dump_read_meta(d, row0, rows, b->tokens, b->sample_id, b->position, err);
    if (rc == MDSD_OK && b->borrowed != (d->mem != NULL))
        return mdsd_fail(err, MDSD_EINVAL, "%s: block allocated for another kind of dump", d->path);
    /* a dump in memory: the caller's arrays, read in place; else the block's buffers */
    if (rc == MDSD_OK && b->borrowed)
        b->target = (float *)(d->mem->target + row0 * d->V);
    else if (rc == MDSD_OK)
        rc = mdsd_dump_read_logits(d, MDSD_DUMP_TARGET, row0, rows, b->target, err);
    if (rc == MDSD_OK && check)
        rc = mdsd_dump_check_logits(d, MDSD_DUMP_TARGET, row0, rows, b->target, err);
    for (size_t j = 0; rc == MDSD_OK && j < b->n_drafts; j++) {
        if (b->borrowed)
            b->draft[j] = (float *)(d->mem->drafts[b->which[j]] + row0 * d->V);
        else
            rc = mdsd_dump_read_logits(d, b->which[j], row0, rows, b->draft[j], err);
        if (rc == MDSD_OK && check)
            rc = mdsd_dump_check_logits(d, b->which[j], row0, rows, b->draft[j], err);
    }
    if (rc == MDSD_OK)
        b->rows = rows;
    return rc;
}

void mdsd_dump_meta_check_init(mdsd_dump_meta_check *c)
{
    memset(c, 0, sizeof *c);
}

int mdsd_dump_check_meta(const mdsd_dump *d, const mdsd_dump_block *b, mdsd_dump_meta_check *c,
                         mdsd_err *err)
{
    int carry = c->started && c->next_row == b->row0;
    long long prev_sample = c->sample, prev_pos = c->position;
    for (size_t i = 0; i < b->rows; i++) {
        size_t row = b->row0 + i;
        int tok = b->tokens[i], sample = b->sample_id[i], pos = b->position[i];
        if (tok < 0 || (size_t)tok >= d->V)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /tokens: token %d is outside [0, %zu)",
                             d->path, row, tok, d->V);
        if (pos < 0)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /position: position %d is negative",
                             d->path, row, pos);
        if ((i > 0 || carry) && sample == prev_sample && pos <= prev_pos)
            return mdsd_fail(err, MDSD_EFORMAT,
                             "%s: row %zu: position %d does not follow position %lld of the same sample %d",
                             d->path, row, pos, prev_pos, sample);
        prev_sample = sample;
        prev_pos = pos;
    }
    if (b->rows > 0) {
        c->started = 1;
        c->next_row = b->row0 + b->rows;
        c->sample = prev_sample;
        c->position = prev_pos;
    }
    return MDSD_OK;
}
