/* dump.h - HDF5 logit dumps, format version 1 (data/README.md): open and
 * check a dump, read its metadata, stream blocks of rows as float, validate
 * every row, and write dumps atomically.
 *
 * A dump holds N rows (response positions); each row has the raw logits of
 * the target and of every drafter, [N x V] each, in float32, float16 or
 * bfloat16 (uint16 bits with the dataset attribute dtype = "bfloat16"), plus
 * tokens, sample_id and position [N]. Readers stream rows in blocks: memory is
 * one block plus one HDF5 chunk per logits dataset, independent of N.
 *
 * HDF5 (serial build) is not thread-safe: read blocks from one thread and
 * hand the float buffers to the workers. HDF5's own error printing is
 * switched off; every failure comes back as an mdsd_err naming the file,
 * dataset, row and value. */
#ifndef MDSD_DUMP_H
#define MDSD_DUMP_H

#include <stddef.h>

#include "err.h"

#include <mdsd/dump.h>

#define MDSD_DUMP_FORMAT 1         /* the version this reader and writer speak */
#define MDSD_DUMP_TARGET (-1)      /* `which` naming the target's logits */
#define MDSD_DUMP_NAME_MAX 256     /* longest model / drafter name + 1 */
#define MDSD_DUMP_CHUNK_ROWS 64    /* default rows per chunk of the writer */

/* "float32", "float16", "bfloat16". */
const char *mdsd_dtype_name(mdsd_dump_dtype t);
int mdsd_dtype_parse(const char *name, mdsd_dump_dtype *out, mdsd_err *err);

/* float <-> float16 / bfloat16 bits, round to nearest even (as numpy and
 * torch do); NaN stays NaN, overflow goes to +-inf. */
unsigned short mdsd_float_to_half(float x);
float mdsd_half_to_float(unsigned short h);
unsigned short mdsd_float_to_bfloat16(float x);
float mdsd_bfloat16_to_float(unsigned short b);

/* One logits dataset: the target's or a drafter's. */
typedef struct {
    char name[MDSD_DUMP_NAME_MAX];   /* "target", or the drafter's group name */
    char path[2 * MDSD_DUMP_NAME_MAX]; /* dataset path, e.g. "/drafts/small/logits" */
    char model[MDSD_DUMP_NAME_MAX];  /* attribute `model`, "" if absent */
    long long vocab_size;            /* attribute `vocab_size`, -1 if absent */
    long long dropped_padding;       /* attribute `dropped_padding`, -1 if absent */
    /* Optional datasets `truncated` (uint8 [N]) and `missing_mass` (float64
     * [N]) beside the logits (data/README.md, "Truncated rows"): rows that
     * hold a top-k set of log-probabilities of the full distribution, the
     * rest of it unseen. 0 when the datasets are absent (an old dump: every
     * row complete) or mark no row. */
    size_t truncated_rows;
    double max_missing_mass;         /* largest missing_mass over the rows */
    unsigned char *row_truncated;    /* [N] the flags, NULL when no row is truncated */
    double *row_missing;             /* [N] the missing masses, NULL likewise */
    mdsd_dump_dtype dtype;
    size_t chunk_rows;               /* rows per HDF5 chunk; 0 = contiguous */
    int gzip;                        /* deflate level of the chunks, 0 = none */
} mdsd_dump_model;

/* A root attribute rendered as text (numbers with %.17g, arrays as a,b,c). */
typedef struct {
    char name[MDSD_DUMP_NAME_MAX];
    char value[1024];
} mdsd_dump_attr;

typedef struct mdsd_dump_h5 mdsd_dump_h5;

typedef struct {
    char path[4096];
    int format;                    /* attribute mdsd_format */
    size_t N;                      /* rows */
    size_t V;                      /* width of every logits dataset */
    size_t n_samples;              /* runs of equal sample_id (rows of a sample are contiguous) */
    size_t max_sample_rows;        /* rows of the longest sample */
    double generation_temperature; /* NaN if absent */
    char creator[MDSD_DUMP_NAME_MAX], created[MDSD_DUMP_NAME_MAX];
    char dataset[MDSD_DUMP_NAME_MAX], tokenizer[MDSD_DUMP_NAME_MAX]; /* "" if absent */
    mdsd_dump_model target;
    size_t n_drafts;               /* >= 1 */
    mdsd_dump_model *drafts;       /* [n_drafts], in name order */
    size_t n_attrs;
    mdsd_dump_attr *attrs;         /* [n_attrs]: every attribute of '/' */
    /* samples: a sample whose rows are not contiguous (it starts again at
     * row sample_repeat_row after first appearing at sample_repeat_first);
     * sample_repeat_row = SIZE_MAX when every sample is contiguous */
    size_t sample_repeat_row, sample_repeat_first;
    long long sample_repeat_id;
    /* the file as opened: mdsd_dump_check_unchanged compares */
    long long file_size, file_mtime_ns;
    unsigned long long file_dev, file_ino;
    mdsd_dump_h5 *h5;              /* private: open HDF5 handles (NULL: rows in memory) */
    struct mdsd_dump_mem *mem;     /* private: rows in memory (dump_mem.c), else NULL */
} mdsd_dump;

/* Opens and checks the structure (not the values) of a dump: format version,
 * datasets present with the right rank, dtype and lengths, V agreeing across
 * target, drafters and the vocab_size attribute, N >= 1. Reads sample_id once
 * (in blocks) to count samples and find a sample that is not contiguous
 * (mdsd_dump_check_samples reports it). /tokens, /sample_id and /position
 * must be integers whose values fit in int32: a value that does not is a
 * read error naming the dataset, never a silently clamped id. */
int mdsd_dump_open(const char *path, mdsd_dump **out, mdsd_err *err);
/* mdsd_dump_open refuses a dump with truncated rows (some model's
 * truncated_rows > 0): no job bounds what the unseen tokens do to its
 * numbers yet, and softmax over the kept entries alone would renormalise the
 * missing mass away in silence (a wrong number). This opens it anyway, for
 * readers that only describe it (mdsd info). */
int mdsd_dump_open_truncated(const char *path, mdsd_dump **out, mdsd_err *err);
void mdsd_dump_close(mdsd_dump *d);
/* Rows in memory (mdsd/batch.h) as a dump: every reader below reads them as
 * it reads a one-file float32 dump (path = the label, drafters in name
 * order, no attributes); the arrays stay the caller's. The structure is
 * checked as mdsd_dump_open checks a file's (the error names the label). */
int mdsd_dump_open_arrays(const mdsd_row_arrays *a, mdsd_dump **out, mdsd_err *err);

/* A dump split across files (one per shard of prompts, say) is a directory:
 * its *.h5 files in name order are read as one dump, rows and samples
 * concatenated (the table job; a sample never spans two files). parts gets
 * the files (for a plain path: the path itself); free with
 * mdsd_dump_parts_free. A directory without *.h5 is an error naming it, and
 * so is one holding the same file twice (a symlink or hard link: the same
 * device and inode) or the same content twice (a copy: the same SHA-256),
 * which would count its samples twice. */
int mdsd_dump_parts(const char *path, char ***parts, size_t *n, mdsd_err *err);
/* The same listing without the duplicate check (pathset.h). */
int mdsd_dump_list_parts(const char *path, char ***parts, size_t *n, mdsd_err *err);
void mdsd_dump_parts_free(char **parts, size_t n);
/* The files of a split dump must be parts of one dataset: d (drafter index
 * draft) against the first file (drafter draft0): the same vocabulary, target
 * and drafter models, tokenizer and generation temperature. The error names
 * both files. */
int mdsd_dump_check_part(const mdsd_dump *first, const mdsd_dump *d, int draft0, int draft,
                         mdsd_err *err);

/* Index of drafter `name`, or -1. */
int mdsd_dump_find_draft(const mdsd_dump *d, const char *name);
/* The target (which = MDSD_DUMP_TARGET) or drafter `which`. */
const mdsd_dump_model *mdsd_dump_model_at(const mdsd_dump *d, int which);

/* Reads rows [row0, row0 + rows) of the logits of `which` into out[rows * V]
 * (row-major) as float: float16 and bfloat16 bit patterns are read raw and
 * widened exactly (mdsd_half_to_float agrees with HDF5's own float16
 * conversion, and is much faster). Values are not checked: see
 * mdsd_dump_check_logits. */
int mdsd_dump_read_logits(mdsd_dump *d, int which, size_t row0, size_t rows, float *out,
                          mdsd_err *err);
/* Reads rows [row0, row0 + rows) of /tokens, /sample_id, /position (each
 * output may be NULL to skip it). */
int mdsd_dump_read_meta(mdsd_dump *d, size_t row0, size_t rows, int *tokens, int *sample_id,
                        int *position, mdsd_err *err);
/* Checks logits[rows * V] read from rows row0.. of `which`: no NaN, no +inf,
 * at least one finite value per row (-inf is legal: probability 0). The
 * error names the file, dataset, row, index and value. */
int mdsd_dump_check_logits(const mdsd_dump *d, int which, size_t row0, size_t rows,
                           const float *logits, mdsd_err *err);

/* Fails (naming the sample and rows) if the rows of some sample are not
 * contiguous: the clustered standard errors assume they are. */
int mdsd_dump_check_samples(const mdsd_dump *d, mdsd_err *err);

/* Fails if the file changed (size, modification time or inode) since
 * mdsd_dump_open: results read from a file rewritten under us are void. */
int mdsd_dump_check_unchanged(const mdsd_dump *d, mdsd_err *err);

/* Streaming check of the per-row metadata, block after block in row order:
 * tokens in [0, V), positions >= 0 and increasing within a sample. */
typedef struct {
    size_t next_row;  /* row expected next (the state applies to it) */
    long long sample; /* sample and position of the row before next_row */
    long long position;
    int started;
} mdsd_dump_meta_check;
void mdsd_dump_meta_check_init(mdsd_dump_meta_check *c);

/* A good block size: the largest multiple of the target's chunk rows whose
 * float buffers for the target and n_drafts drafters fit in max_bytes (at
 * least one chunk, at most N). */
size_t mdsd_dump_block_rows(const mdsd_dump *d, size_t n_drafts, size_t max_bytes);

/* Buffers for streaming: the target, a chosen set of drafters and the
 * per-row metadata of up to `cap` consecutive rows. */
typedef struct {
    size_t cap;          /* capacity in rows */
    size_t V;
    size_t n_drafts;     /* drafters held */
    int *which;          /* [n_drafts] drafter indices in the dump */
    size_t row0, rows;   /* the rows held: [row0, row0 + rows) */
    float *target;       /* [cap * V] */
    float **draft;       /* [n_drafts][cap * V] */
    int *tokens, *sample_id, *position; /* [cap] */
    /* A dump in memory: target and draft point into the caller's arrays (no
     * copy; read only) instead of buffers of the block's own. */
    int borrowed;
} mdsd_dump_block;

/* which[n_drafts]: drafter indices (NULL with n_drafts = d->n_drafts means all). */
mdsd_dump_block *mdsd_dump_block_alloc(const mdsd_dump *d, size_t cap, size_t n_drafts,
                                       const int *which, mdsd_err *err);
void mdsd_dump_block_free(mdsd_dump_block *b);
/* Reads rows [row0, min(row0 + cap, N)) into b (b->rows = how many); with
 * check, also runs mdsd_dump_check_logits on every dataset read. */
int mdsd_dump_block_read(mdsd_dump *d, mdsd_dump_block *b, size_t row0, int check,
                         mdsd_err *err);

/* Checks the metadata of the block's rows (see mdsd_dump_meta_check); c
 * carries the state from the previous block when it ended at b->row0. */
int mdsd_dump_check_meta(const mdsd_dump *d, const mdsd_dump_block *b, mdsd_dump_meta_check *c,
                         mdsd_err *err);

/* Reads every row and checks it: logits as mdsd_dump_check_logits; tokens in
 * [0, V); positions >= 0 and increasing within a sample; a sample's rows
 * contiguous. Stops at the first bad row and names it. progress (may be
 * NULL) is called after each block with the rows done. */
int mdsd_dump_validate(mdsd_dump *d, void (*progress)(size_t done, size_t N, void *ctx),
                       void *ctx, mdsd_err *err);

/* What to write: the public layout (mdsd/dump.h). Strings may be NULL
 * (written as ""). */
typedef mdsd_dump_layout mdsd_dump_spec;

typedef struct mdsd_dump_writer mdsd_dump_writer;

/* Creates a temporary file beside path; nothing appears under path until
 * mdsd_dump_writer_commit. */
int mdsd_dump_writer_open(const char *path, const mdsd_dump_spec *spec, mdsd_dump_writer **out,
                          mdsd_err *err);
/* Appends rows: target[rows * V], drafts[j][rows * V], and the metadata
 * [rows]. NaN, +inf, and values that overflow the dtype to +inf are errors
 * naming the row and index. */
int mdsd_dump_writer_append(mdsd_dump_writer *w, size_t rows, const float *target,
                            const float *const *drafts, const int *tokens,
                            const int *sample_id, const int *position, mdsd_err *err);
/* Closes, syncs and renames onto the final path; frees w. Fails (and removes
 * the temporary file) if no row was written. */
int mdsd_dump_writer_commit(mdsd_dump_writer *w, mdsd_err *err);
/* Closes and removes the temporary file; frees w. NULL is allowed. */
void mdsd_dump_writer_abort(mdsd_dump_writer *w);

#endif
