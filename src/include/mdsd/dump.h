/* mdsd/dump.h - HDF5 logit dumps, format version 1 (data/README.md): N rows
 * (response positions), each with the raw logits [V] of the target and of
 * every drafter (float32, float16 or bfloat16), plus tokens, sample_id and
 * position. One reader, one writer and one validator for every tool. */
#ifndef MDSD_PUBLIC_DUMP_H
#define MDSD_PUBLIC_DUMP_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `which` naming the target's logits; drafters are 0 .. n_drafts-1. */
#define MDSD_DUMP_TARGET_LOGITS (-1)

typedef enum { MDSD_DUMP_FLOAT32, MDSD_DUMP_FLOAT16, MDSD_DUMP_BFLOAT16 } mdsd_dump_dtype;

/* ---- reading ---- */

typedef struct mdsd_dump_reader mdsd_dump_reader;

typedef struct {
    int format;                    /* the file's format version */
    size_t N;                      /* rows */
    size_t V;                      /* vocabulary width */
    size_t n_samples;              /* samples (runs of equal sample_id) */
    size_t n_drafts;               /* drafters */
    double generation_temperature; /* NaN if absent */
    mdsd_dump_dtype dtype;         /* the target's logits dtype */
} mdsd_dump_info;

/* Opens a dump and checks its structure (not its values). */
MDSD_API mdsd_dump_reader *mdsd_dump_reader_open(const char *path, mdsd_err *err);
/* The same, but a dump with truncated top-k rows is opened instead of refused
 * (to validate or describe it; data/README.md, "Truncated rows"). */
MDSD_API mdsd_dump_reader *mdsd_dump_reader_open_truncated(const char *path, mdsd_err *err);
MDSD_API void mdsd_dump_reader_info(const mdsd_dump_reader *r, mdsd_dump_info *info);
/* Name of drafter j (group under /drafts), or NULL if j is out of range. */
MDSD_API const char *mdsd_dump_reader_draft_name(const mdsd_dump_reader *r, size_t j);
/* Reads rows [row0, row0 + rows) of `which`'s logits into out[rows * V] as
 * float (values unchecked; see mdsd_dump_reader_validate). */
MDSD_API mdsd_status mdsd_dump_reader_logits(mdsd_dump_reader *r, int which, size_t row0, size_t rows, float *out,
                          mdsd_err *err);
/* Reads rows [row0, row0 + rows) of tokens, sample_id, position (NULL skips). */
MDSD_API mdsd_status mdsd_dump_reader_rows(mdsd_dump_reader *r, size_t row0, size_t rows, int32_t *tokens,
                        int32_t *sample_id, int32_t *position, mdsd_err *err);
/* Reads and checks every row: no NaN or +inf logits, a finite value in every
 * row, tokens in [0, V), positions increasing within a sample, samples
 * contiguous. The error names the file, dataset, row and value. */
MDSD_API mdsd_status mdsd_dump_reader_validate(mdsd_dump_reader *r, mdsd_err *err);
MDSD_API void mdsd_dump_reader_free(mdsd_dump_reader *r);

/* Opens, checks the structure and validates every row of the file at path. */
MDSD_API mdsd_status mdsd_dump_validate_file(const char *path, mdsd_err *err);

/* ---- writing ---- */

/* What a -inf logit means (data/README.md, "Truncated rows"). ZERO: the token
 * has probability 0 (e.g. after top-k sampling); the rows are complete. UNSEEN:
 * the row's finite entries are natural-log probabilities at T = 1 of the full
 * distribution for a top-k set, -inf the tokens the trace did not report; a
 * row with any -inf is recorded as truncated with its missing mass
 * -expm1(logsumexp(kept)) (float32 only; a kept mass above 1 + 1e-5 is
 * refused). ASK: a -inf logit is refused, naming the row and index, so that
 * neither is guessed. */
typedef enum {
    MDSD_DUMP_NEG_INF_ZERO = 0,
    MDSD_DUMP_NEG_INF_UNSEEN = 1,
    MDSD_DUMP_NEG_INF_ASK = 2
} mdsd_dump_neg_inf;

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    size_t V;
    mdsd_dump_dtype dtype;
    size_t chunk_rows;               /* 0 = 64 (lowered for huge V) */
    int gzip;                        /* deflate level 0..9, 0 = none */
    const char *creator, *dataset, *tokenizer; /* NULL = "" */
    double generation_temperature;
    const char *target_model;
    long long target_vocab_size;     /* <= 0: V */
    size_t n_drafts;                 /* >= 1 */
    const char *const *draft_names;  /* [n_drafts] group names under /drafts */
    const char *const *draft_models; /* [n_drafts] or NULL: the names */
    size_t n_extra;                  /* extra string attributes of '/' */
    const char *const *extra_names, *const *extra_values;
    mdsd_dump_neg_inf neg_inf;       /* what a -inf logit means (mdsd_dump_layout_init: ask) */
} mdsd_dump_layout;

/* Zeroes layout (float32, V = 0, nothing named) and sets size; generation_temperature = 1;
 * neg_inf = MDSD_DUMP_NEG_INF_ASK (a -inf logit is refused until the caller
 * says what it means). */
MDSD_API void mdsd_dump_layout_init(mdsd_dump_layout *layout, size_t size);
#define mdsd_dump_layout_init(layout) mdsd_dump_layout_init((layout), sizeof *(layout))

typedef struct mdsd_dump_writer mdsd_dump_writer;

/* Writes into a temporary file beside path: nothing appears under path until
 * mdsd_dump_writer_finish succeeds. */
MDSD_API mdsd_dump_writer *mdsd_dump_writer_new(const char *path, const mdsd_dump_layout *layout,
                                       mdsd_err *err);
/* Appends rows: target[rows * V], drafts[j][rows * V], metadata [rows].
 * NaN, +inf and values overflowing the dtype are errors naming row and index. */
MDSD_API mdsd_status mdsd_dump_writer_write(mdsd_dump_writer *w, size_t rows, const float *target,
                           const float *const *drafts, const int32_t *tokens,
                           const int32_t *sample_id, const int32_t *position, mdsd_err *err);
/* Closes, syncs and renames onto the final path, and frees w (like fclose:
 * w is gone whatever the result; after a failure no file is left). Fails if
 * no row was written. */
MDSD_API mdsd_status mdsd_dump_writer_finish(mdsd_dump_writer *w, mdsd_err *err);
/* Abandons the file (the temporary file is removed) and frees w; NULL allowed. */
MDSD_API void mdsd_dump_writer_free(mdsd_dump_writer *w);

/* Rows in memory, read by the table job as a dump of one file is read
 * (mdsd_table_opts.arrays): N rows of target and drafter logits [N * V],
 * row-major float32 (-inf = probability 0; NaN, +inf and a row with no finite
 * value are refused, naming the row), with their sample ids and positions.
 * The arrays are the caller's: they must stay unchanged during the call. */
typedef struct {
    size_t size;                       /* set by the _init below; checked by the library */
    const char *label;                 /* the results' dump column: a plain name (no '/') */
    size_t N, V;
    const float *target;               /* [N * V] */
    size_t n_drafters;                 /* >= 1 */
    const char *const *drafter_names;  /* [n_drafters], distinct non-empty names */
    const float *const *drafts;        /* [n_drafters][N * V] */
    const int32_t *sample_id;          /* [N], a sample's rows contiguous; NULL = one sample */
    const int32_t *position;           /* [N], >= 0, increasing within a sample; NULL = row index */
} mdsd_row_arrays;

MDSD_API void mdsd_row_arrays_init(mdsd_row_arrays *arrays, size_t size);
#define mdsd_row_arrays_init(a) mdsd_row_arrays_init((a), sizeof *(a))

#ifdef __cplusplus
}
#endif
#endif
