/* mdsd/toy.h - the `mdsd toy` job: an HDF5 logit dump (data/README.md) whose
 * rows are random instances of a toy family (target logits, one draft per
 * drafter name, the token drawn from the target at temperature 1). Every row
 * is a function of (seed, row) only: the same file whatever the thread count
 * or chunking. The CLI calls this function, so both write the same dump. */
#ifndef MDSD_PUBLIC_TOY_H
#define MDSD_PUBLIC_TOY_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t size;          /* set by the _init below; checked by the library (mdsd/common.h) */
    const char *family;   /* bernoulli (V = 2), uniform, spechub-toy, dirichlet, zipf,
                             degenerate (mdsd toy --help) */
    size_t V;             /* vocabulary size (>= 1) */
    size_t positions;     /* rows (>= 1) */
    uint64_t seed;        /* _init: 1 */
    const char *drafts;   /* drafter names "a,b,..." (NULL: "draft") */
    size_t samples;       /* samples of consecutive rows (0: ceil(positions / 128)) */
    const char *dtype;    /* float32 (NULL), float16, bfloat16 */
    const char *params;   /* family parameters "name=value,..." (NULL: the defaults) */
    size_t chunk_rows;    /* rows per HDF5 chunk (0: 64) */
    int gzip;             /* deflate level 0..9 (0: none) */
    size_t threads;       /* OpenMP threads (0: all); the dump is the same */
} mdsd_toy_opts;

/* Zeroes opts, sets seed = 1 and size. */
MDSD_API void mdsd_toy_opts_init(mdsd_toy_opts *opts, size_t size);
#define mdsd_toy_opts_init(opts) mdsd_toy_opts_init((opts), sizeof *(opts))

/* Writes the dump at path (appears only when complete). samples (may be
 * NULL) receives the number of samples; params (may be NULL) the family's
 * parameters as "name=value,..." (the dump's toy_params attribute). */
MDSD_API mdsd_status mdsd_toy_dump(const char *path, const mdsd_toy_opts *opts, size_t *samples,
                                   char *params, size_t params_size, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
