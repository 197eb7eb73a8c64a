/* dump_impl.h - internal to src/io/dump_*.c: the open HDF5 handles of a dump,
 * the HDF5 helpers the reader and writer share, and the inline bit tricks of
 * the 16-bit float formats. Not installed; not part of the public API.
 *
 *   dump_format.c    layout: dtype names, HDF5 helpers, opening a dump
 *   dump_attr.c      attributes (read defensively: class and size first)
 *   dump_read.c      streaming rows and blocks, the per-row logit check
 *   dump_validate.c  mdsd_dump_validate
 *   dump_write.c     the atomic writer
 *   dump_half.c      float <-> float16 / bfloat16
 *   dump_mem.c       rows in memory read as a dump */
#ifndef MDSD_DUMP_IMPL_H
#define MDSD_DUMP_IMPL_H

#include <stdint.h>
#include <string.h>

#include <hdf5.h>

#include "dump.h"

/* Rows of /sample_id read at a time when counting samples. */
#define META_BLOCK 65536
/* Largest chunk the writer makes: chunks this big are still streamed one at
 * a time, but bigger ones would make every read of a row expensive. */
#define MAX_CHUNK_BYTES (32u << 20)

struct mdsd_dump_h5 {
    hid_t file;
    hid_t target;
    hid_t *drafts;               /* [n_drafts] */
    hid_t tokens, sample_id, position;
};

/* Rows in memory (dump_mem.c): the caller's arrays, drafters in the dump's
 * name order. */
struct mdsd_dump_mem {
    const float *target;
    const float **drafts;         /* [n_drafts] */
    const int32_t *sample_id, *position; /* NULL: one sample; row index */
};
int dump_mem_read_logits(const mdsd_dump *d, int which, size_t row0, size_t rows, float *out);
void dump_mem_read_meta(const mdsd_dump *d, size_t row0, size_t rows, int *tokens, int *sample_id,
                        int *position);
/* dump_format.c: counts the samples (n_samples, max_sample_rows) and notes a
 * sample whose rows are not contiguous, through mdsd_dump_read_meta. */
int dump_count_samples(mdsd_dump *d, mdsd_err *err);

/* ---- HDF5 helpers (dump_format.c) ---- */
/* HDF5 prints its error stack to stderr by default; we report our own. */
void dump_h5_quiet(void);
/* The innermost message of HDF5's error stack, then clears the stack. */
const char *dump_h5_reason(char *buf, size_t size);
/* Closes any HDF5 id by its type; negative ids are ignored. */
void dump_h5_close(hid_t id);
/* Whether every component of an absolute path exists. */
int dump_path_exists(hid_t file, const char *path);
const char *dump_class_name(H5T_class_t c);
size_t dump_dtype_bytes(mdsd_dump_dtype t);

/* ---- truncated rows (dump_trunc.c) ---- */
/* Reads and checks the optional /<group>/truncated and missing_mass of model
 * m (both or neither; flags 0/1; missing mass finite, in [0, 1], 0 on
 * complete rows; truncated rows stored as float32) into m->truncated_rows
 * and m->max_missing_mass. */
int dump_read_truncation(mdsd_dump *d, mdsd_dump_model *m, mdsd_err *err);
/* Opens the 1-d dataset `path` of d->N values whose class is `want` (`type` names it in the
 * refusal) (dump_format.c). */
int dump_open_row_dataset(mdsd_dump *d, const char *path, H5T_class_t want, const char *type,
                          hid_t *out, mdsd_err *err);
/* Reads rows [row0, row0 + rows) of a rank-1 or rank-2 ([rows, V]) dataset as mtype; on
 * rank 1 an integer that does not fit mtype is refused (dump_read.c). */
int dump_read_rows(const mdsd_dump *d, hid_t ds, const char *path, int rank, size_t row0,
                   size_t rows, hid_t mtype, void *out, mdsd_err *err);
/* The refusal of mdsd_dump_open for a dump with truncated rows (MDSD_OK if none). */
int dump_refuse_truncated(const mdsd_dump *d, mdsd_err *err);

/* ---- attributes (dump_attr.c) ---- */
/* A string attribute into buf: 0 absent (buf = ""), 1 read, -1 present but
 * not a single string of sensible size. */
int dump_attr_string(hid_t obj, const char *name, char *buf, size_t size);
/* One integer attribute (integer class, at most 8 bytes): 0 absent, 1 read,
 * -1 present but not one integer. */
int dump_attr_integer(hid_t obj, const char *name, long long *out);
/* A single numeric attribute as double: 0 absent, 1 read, -1 present but not
 * one number (or, with want_integer, not an integer). */
int dump_attr_number(hid_t obj, const char *name, double *out, int want_integer);
/* mdsd_format (checked), the named root attributes, and every attribute of
 * '/' rendered as text into d->attrs. */
int dump_open_root_attrs(mdsd_dump *d, mdsd_err *err);
/* The root attribute vocab_size agrees with d->V. */
int dump_check_vocab_attr(mdsd_dump *d, mdsd_err *err);

/* ---- rows (dump_read.c) ---- */
/* One row of logits: no NaN or +inf, at least one finite value. */
int dump_check_row(const mdsd_dump *d, const mdsd_dump_model *m, size_t row, const float *x,
                   mdsd_err *err);

/* ---- writing (dump_write.c), also for writers of extensions of the format
 * (the tree-dump writer, src/block/treedump_write.c) ---- */
herr_t dump_write_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v);
herr_t dump_write_attr_string(hid_t obj, const char *name, const char *value);
herr_t dump_write_attr_i64(hid_t obj, const char *name, long long v);
/* The writer's open HDF5 file (valid until commit or abort). */
hid_t dump_writer_file(mdsd_dump_writer *w);
/* mdsd_dump_writer_commit, with check (may be NULL) run on the closed and
 * synced temporary file before it is renamed onto the path: when it fails,
 * nothing is published and the temporary file is removed. */
int dump_writer_commit_checked(mdsd_dump_writer *w, int (*check)(const char *tmp, void *ctx, mdsd_err *err),
                               void *ctx, mdsd_err *err);

/* ---- 16-bit floats ---- */
static inline uint32_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Normal halves (the common case) by rebiasing the exponent in place;
 * zeros, subnormals, infinities and NaN through mdsd_half_to_float. */
static inline float half_fast(uint16_t h)
{
    uint32_t e = h & 0x7c00;
    if (e != 0 && e != 0x7c00)
        return bits_float(((uint32_t)(h & 0x8000) << 16) | (((uint32_t)(h & 0x7fff) + 0x1c000) << 13));
    return mdsd_half_to_float(h);
}

#endif
