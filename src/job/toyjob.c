/* toyjob.c - the `mdsd toy` job (mdsd/toy.h): a logit dump of a toy family
 * (toy.h), every row a function of (seed, row) only, so a dump is
 * reproducible from the seed whatever the thread count or chunking. The CLI
 * and Python call mdsd_toy_dump, so both write the same file. */
#include <mdsd/toy.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "dist.h"
#include "dump.h"
#include "rng.h"
#include "opts.h"
#include "toy.h"

#define TOY_MAX_DRAFTS 64 /* as the CLI's other commands take */

/* What the job reads of the options (the names the code moved from
 * cmd_toy.c used). */
typedef struct {
    const char *output;
    size_t N, chunk_rows, threads;
    unsigned long long seed, gzip;
} toy_opts;

/* Splits "a,b,c" in place into names. */
/* Returns how many names the list has; only the first max are stored (the
 * caller refuses more: a drafter silently dropped would be a wrong dump). */
static size_t split_names(char *list, char **names, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save), n++)
        if (n < max)
            names[n] = s;
    return n;
}

/* Row `row`'s instance: logits as float, and the emitted token drawn from
 * softmax(target logits) with the same row stream. */
static int make_row(const mdsd_toy *toy, unsigned long long seed, size_t row, size_t n_q,
                    gsl_rng *r, double *work, float *target, float *const *drafts, int *token,
                    mdsd_err *err)
{
    size_t V = toy->V;
    mdsd_rng_reseed(r, mdsd_seed_mix(seed, row, mdsd_seed_name(mdsd_toy_family_name(toy->family))));
    double *lp = work, *lq = work + V, *p = work + (n_q + 1) * V;
    int rc = mdsd_toy_logits(toy, row, r, lp, n_q, lq, err);
    if (rc == MDSD_OK)
        rc = mdsd_softmax(lp, V, 1.0, p, "toy target", err);
    if (rc)
        return rc;
    double u = gsl_rng_uniform(r), acc = 0.0;
    size_t tok = V - 1;
    for (size_t i = 0; i < V; i++) {
        acc += p[i];
        if (u < acc) {
            tok = i;
            break;
        }
    }
    while (p[tok] == 0.0 && tok > 0) /* rounding left u past the last positive entry */
        tok--;
    *token = (int)tok;
    for (size_t i = 0; i < V; i++)
        target[i] = (float)lp[i];
    for (size_t j = 0; j < n_q; j++)
        for (size_t i = 0; i < V; i++)
            drafts[j][i] = (float)lq[j * V + i];
    return MDSD_OK;
}

typedef struct {
    size_t cap, V, n_q;
    float *target, **drafts;
    int *tokens, *sample_id, *position;
} row_block;

static void block_free(row_block *b)
{
    for (size_t j = 0; b->drafts && j < b->n_q; j++)
        free(b->drafts[j]);
    free(b->drafts);
    free(b->target);
    free(b->tokens);
    free(b->sample_id);
    free(b->position);
}

static int block_alloc(row_block *b, size_t cap, size_t V, size_t n_q)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->V = V;
    b->n_q = n_q;
    b->target = malloc(cap * V * sizeof *b->target);
    b->drafts = calloc(n_q, sizeof *b->drafts);
    b->tokens = malloc(cap * sizeof(int));
    b->sample_id = malloc(cap * sizeof(int));
    b->position = malloc(cap * sizeof(int));
    int ok = b->target && b->drafts && b->tokens && b->sample_id && b->position;
    for (size_t j = 0; ok && j < n_q; j++)
        ok = (b->drafts[j] = malloc(cap * V * sizeof **b->drafts)) != NULL;
    return ok ? MDSD_OK : MDSD_ENOMEM;
}

/* Fills rows [row0, row0 + rows) in parallel; each thread has its own
 * generator and work space, and every row reseeds from (seed, row). */
static int fill_block(const mdsd_toy *toy, const toy_opts *o, size_t samples, size_t row0,
                      size_t rows, row_block *b, mdsd_err *err)
{
    int rc = MDSD_OK;
    size_t n_q = b->n_q, V = b->V;
    /* the job's own thread count, not omp_set_num_threads: a library call leaves
     * the caller's OpenMP settings as they were */
    int threads = o->threads ? (int)o->threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        gsl_rng *r = mdsd_rng_alloc(0);
        double *work = malloc((n_q + 2) * V * sizeof *work);
        float **dptr = malloc(n_q * sizeof *dptr);
        mdsd_err local;
        mdsd_err_clear(&local);
        int mine = (r && work && dptr) ? MDSD_OK : mdsd_fail(&local, MDSD_ENOMEM, "out of memory");
#pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < rows; i++) {
            if (mine)
                continue;
            size_t row = row0 + i;
            for (size_t j = 0; j < n_q; j++)
                dptr[j] = b->drafts[j] + i * V;
            mine = make_row(toy, o->seed, row, n_q, r, work, b->target + i * V, dptr, &b->tokens[i], &local);
            /* sample k holds rows [k N / K, (k + 1) N / K) */
            /* k = the largest k with floor(k N / K) <= row */
            size_t k = (size_t)(((unsigned long long)(row + 1) * samples + o->N - 1) / o->N - 1);
            b->sample_id[i] = (int)k;
            b->position[i] = (int)(row - (size_t)((unsigned long long)k * o->N / samples));
        }
#pragma omp critical
        if (mine && rc == MDSD_OK) {
            rc = mine;
            *err = local;
        }
        gsl_rng_free(r);
        free(work);
        free(dptr);
    }
    return rc;
}

static int write_dump(const toy_opts *o, const mdsd_toy *toy, char **names, size_t n_q,
                      mdsd_dump_dtype dtype, size_t samples, mdsd_err *err)
{
    char dataset[64], params[512], seed[32], target_model[300];
    snprintf(dataset, sizeof dataset, "toy:%s", mdsd_toy_family_name(toy->family));
    mdsd_toy_describe(toy, params, sizeof params);
    snprintf(seed, sizeof seed, "%llu", o->seed);
    snprintf(target_model, sizeof target_model, "toy-%s-target", mdsd_toy_family_name(toy->family));
    char (*models)[300] = malloc(n_q * sizeof *models);
    const char **model_ptr = malloc(n_q * sizeof *model_ptr);
    if (!models || !model_ptr) {
        free(models);
        free(model_ptr);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < n_q; j++) {
        snprintf(models[j], sizeof models[j], "toy-%s-%s", mdsd_toy_family_name(toy->family), names[j]);
        model_ptr[j] = models[j];
    }
    const char *extra_names[] = {"toy_family", "toy_params", "toy_seed"};
    const char *extra_values[] = {mdsd_toy_family_name(toy->family), params, seed};
    char creator[64];
    snprintf(creator, sizeof creator, "mdsd %s (mdsd toy)", MDSD_VERSION);
    mdsd_dump_spec spec = {
        .V = toy->V, .dtype = dtype, .chunk_rows = o->chunk_rows, .gzip = (int)o->gzip,
        .creator = creator, .dataset = dataset, .tokenizer = "none (toy token ids)",
        .generation_temperature = 1.0, .target_model = target_model, .n_drafts = n_q,
        .draft_names = (const char *const *)names, .draft_models = model_ptr,
        .n_extra = 3, .extra_names = extra_names, .extra_values = extra_values};
    mdsd_dump_writer *w = NULL;
    row_block b;
    /* rows generated per append: a chunk, but at most ~64 MB of floats */
    size_t cap = o->chunk_rows ? o->chunk_rows : MDSD_DUMP_CHUNK_ROWS;
    size_t row_bytes = (1 + n_q) * toy->V * sizeof(float), limit = (64u << 20) / row_bytes;
    if (cap > limit)
        cap = limit ? limit : 1;
    int rc = block_alloc(&b, cap, toy->V, n_q);
    if (rc)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory for %zu rows of V = %zu", cap, toy->V);
    if (rc == MDSD_OK)
        rc = mdsd_dump_writer_open(o->output, &spec, &w, err);
    for (size_t row0 = 0; rc == MDSD_OK && row0 < o->N; row0 += cap) {
        size_t rows = o->N - row0 < cap ? o->N - row0 : cap;
        if (mdsd_interrupted()) { /* between blocks: the temporary file is removed below */
            rc = mdsd_fail_interrupted(err, o->output);
            break;
        }
        rc = fill_block(toy, o, samples, row0, rows, &b, err);
        if (rc == MDSD_OK)
            rc = mdsd_dump_writer_append(w, rows, b.target, (const float *const *)b.drafts, b.tokens,
                                         b.sample_id, b.position, err);
    }
    if (w && rc == MDSD_OK)
        rc = mdsd_dump_writer_commit(w, err);
    else if (w)
        mdsd_dump_writer_abort(w);
    block_free(&b);
    free(models);
    free(model_ptr);
    return rc;
}

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_toy_opts_init)(mdsd_toy_opts *opts, size_t size)
{
    mdsd_toy_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.seed = 1;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

mdsd_status mdsd_toy_dump(const char *path, const mdsd_toy_opts *opts, size_t *samples_out,
                          char *params, size_t params_size, mdsd_err *err)
{
    if (!opts)
        return mdsd_fail(err, MDSD_EINVAL, "toy: no options given (NULL)");
    int rc = mdsd_opts_check(opts->size, sizeof *opts, "mdsd_toy_opts", NULL, err);
    if (rc)
        return rc;
    if (!path || !*path)
        return mdsd_fail(err, MDSD_EINVAL, "toy: no output path given");
    if (!opts->family)
        return mdsd_fail(err, MDSD_EINVAL, "toy: no family given");
    if (opts->V == 0 || opts->positions == 0)
        return mdsd_fail(err, MDSD_EINVAL, "toy: the %s must be at least 1",
                         opts->V == 0 ? "vocabulary V" : "number of positions");
    if (opts->gzip < 0 || opts->gzip > 9)
        return mdsd_fail(err, MDSD_EINVAL, "toy: gzip %d is not a level in 0..9", opts->gzip);
    if (opts->samples > opts->positions)
        return mdsd_fail(err, MDSD_EINVAL, "toy: %zu samples is more than the %zu positions",
                         opts->samples, opts->positions);
    if (opts->threads > INT_MAX)
        return mdsd_fail(err, MDSD_EINVAL, "toy: %zu threads is too many", opts->threads);
    mdsd_toy toy;
    mdsd_toy_family family;
    mdsd_dump_dtype dtype = MDSD_DUMP_FLOAT32;
    if ((rc = mdsd_toy_family_parse(opts->family, &family, err)) ||
        (opts->dtype && (rc = mdsd_dtype_parse(opts->dtype, &dtype, err))))
        return rc;
    mdsd_toy_init(&toy, family, opts->V);
    if ((opts->params && (rc = mdsd_toy_set_list(&toy, opts->params, err))) ||
        (rc = mdsd_toy_check(&toy, err)))
        return rc;
    char *list = strdup(opts->drafts ? opts->drafts : "draft");
    if (!list)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    char *names[TOY_MAX_DRAFTS];
    size_t n_q = split_names(list, names, TOY_MAX_DRAFTS);
    if (n_q == 0 || n_q > TOY_MAX_DRAFTS) {
        free(list);
        return mdsd_fail(err, MDSD_EINVAL, n_q ? "%zu drafter names (at most %d)"
                         : "toy: give at least one drafter name", n_q, TOY_MAX_DRAFTS);
    }
    size_t samples = opts->samples ? opts->samples : (opts->positions + 127) / 128;
    toy_opts o = {.output = path, .N = opts->positions, .chunk_rows = opts->chunk_rows,
                  .threads = opts->threads, .seed = opts->seed,
                  .gzip = (unsigned long long)opts->gzip};
    rc = write_dump(&o, &toy, names, n_q, dtype, samples, err);
    free(list);
    if (rc)
        return rc;
    if (samples_out)
        *samples_out = samples;
    if (params && params_size)
        mdsd_toy_describe(&toy, params, params_size);
    return MDSD_OK;
}
