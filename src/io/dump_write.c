/* dump_write.c - writing a dump atomically (temporary file, then rename). */
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

#include "outfile.h"

#ifndef MDSD_VERSION
#define MDSD_VERSION "unknown"
#endif

/* ---- writing ------------------------------------------------------------- */

struct mdsd_dump_writer {
    char path[4096], tmp[4096];
    size_t V, n_drafts, N, chunk_rows;
    int gzip;
    mdsd_dump_dtype dtype;
    hid_t file, target, *drafts, tokens, sample_id, position;
    hid_t ftype;                 /* file type of the logits */
    unsigned short *conv;        /* [conv_cap] 16-bit patterns */
    size_t conv_cap;
    mdsd_dump_neg_inf neg_inf;   /* what -inf means (mdsd/dump.h) */
    /* neg_inf = unseen: the truncation record of each model ([0] target, then
     * the drafters), [rec_cap] rows, written at commit */
    char **groups;               /* [1 + n_drafts] "/target", "/drafts/<name>" */
    unsigned char **rec_flag;
    double **rec_mass;
    size_t rec_cap;
};

/* IEEE half precision, as h5py and numpy describe float16 to HDF5. */
static hid_t half_type(void)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    return t;
}

herr_t dump_write_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t st = a < 0 ? -1 : H5Awrite(a, mtype, v);
    dump_h5_close(a);
    dump_h5_close(s);
    return st;
}

herr_t dump_write_attr_string(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char *v = value ? value : "";
    herr_t st = dump_write_attr(obj, name, t, t, &v);
    dump_h5_close(t);
    return st;
}

herr_t dump_write_attr_i64(hid_t obj, const char *name, long long v)
{
    return dump_write_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &v);
}

/* An extendible [0 x V] (or [0]) chunked dataset. */
static hid_t create_rows(hid_t loc, const char *name, hid_t ftype, int rank, size_t V,
                         size_t chunk_rows, int gzip, size_t elem_bytes)
{
    hsize_t dims[2] = {0, V}, maxdims[2] = {H5S_UNLIMITED, V}, chunk[2] = {chunk_rows, V};
    hid_t s = H5Screate_simple(rank, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, chunk);
    if (gzip > 0) {
        H5Pset_shuffle(dcpl);
        H5Pset_deflate(dcpl, (unsigned)gzip);
    }
    /* room for one chunk, so appends that are not chunk-aligned do not
     * recompress partial chunks */
    size_t bytes = chunk_rows * (rank == 2 ? V : 1) * elem_bytes + 1024;
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 521, bytes > (1u << 20) ? bytes : (1u << 20), 1.0);
    hid_t ds = H5Dcreate2(loc, name, ftype, s, H5P_DEFAULT, dcpl, dapl);
    dump_h5_close(dapl);
    dump_h5_close(dcpl);
    dump_h5_close(s);
    return ds;
}

static int writer_fail(mdsd_dump_writer *w, mdsd_err *err, const char *what)
{
    char why[256];
    return mdsd_fail(err, MDSD_EIO, "cannot write dump '%s': %s (%s)", w->path, what,
                     dump_h5_reason(why, sizeof why));
}

static int create_model(mdsd_dump_writer *w, const char *group, const char *model,
                        long long vocab_size, hid_t *ds, mdsd_err *err)
{
    hid_t g = H5Gcreate2(w->file, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return writer_fail(w, err, group);
    int ok = dump_write_attr_string(g, "model", model) >= 0 && dump_write_attr_i64(g, "vocab_size", vocab_size) >= 0;
    *ds = ok ? create_rows(g, "logits", w->ftype, 2, w->V, w->chunk_rows, w->gzip,
                           dump_dtype_bytes(w->dtype))
             : -1;
    if (*ds >= 0 && w->dtype == MDSD_DUMP_BFLOAT16 && dump_write_attr_string(*ds, "dtype", "bfloat16") < 0) {
        dump_h5_close(*ds);
        *ds = -1;
    }
    dump_h5_close(g);
    return *ds < 0 ? writer_fail(w, err, group) : MDSD_OK;
}

static int valid_name(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strlen(s) < MDSD_DUMP_NAME_MAX;
}

static int writer_setup(mdsd_dump_writer *w, const mdsd_dump_spec *s, mdsd_err *err)
{
    w->ftype = s->dtype == MDSD_DUMP_FLOAT32 ? H5Tcopy(H5T_IEEE_F32LE)
             : s->dtype == MDSD_DUMP_FLOAT16 ? half_type() : H5Tcopy(H5T_STD_U16LE);
    /* EXCL: a new file (O_EXCL), never through a link swapped in at the name */
    w->file = H5Fcreate(w->tmp, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file < 0)
        return writer_fail(w, err, "cannot create the file");
    hid_t root = H5Gopen2(w->file, "/", H5P_DEFAULT);
    char created[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int fmt = MDSD_DUMP_FORMAT;
    char creator[128];
    snprintf(creator, sizeof creator, "mdsd %s", MDSD_VERSION);
    int ok = dump_write_attr(root, "mdsd_format", H5T_STD_I32LE, H5T_NATIVE_INT, &fmt) >= 0 &&
             dump_write_attr_string(root, "creator", s->creator ? s->creator : creator) >= 0 &&
             dump_write_attr_string(root, "created", created) >= 0 &&
             dump_write_attr_string(root, "dataset", s->dataset) >= 0 &&
             dump_write_attr_string(root, "tokenizer", s->tokenizer) >= 0 &&
             dump_write_attr(root, "generation_temperature", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                        &s->generation_temperature) >= 0 &&
             dump_write_attr_i64(root, "vocab_size", (long long)s->V) >= 0;
    for (size_t k = 0; ok && k < s->n_extra; k++)
        ok = dump_write_attr_string(root, s->extra_names[k], s->extra_values[k]) >= 0;
    dump_h5_close(root);
    if (!ok)
        return writer_fail(w, err, "attributes of '/'");
    long long tv = s->target_vocab_size > 0 ? s->target_vocab_size : (long long)s->V;
    int rc = create_model(w, "/target", s->target_model, tv, &w->target, err);
    hid_t g = rc ? -1 : H5Gcreate2(w->file, "/drafts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    dump_h5_close(g);
    for (size_t j = 0; rc == MDSD_OK && j < s->n_drafts; j++) {
        char group[2 * MDSD_DUMP_NAME_MAX];
        snprintf(group, sizeof group, "/drafts/%s", s->draft_names[j]);
        const char *model = s->draft_models ? s->draft_models[j] : s->draft_names[j];
        rc = create_model(w, group, model, (long long)s->V, &w->drafts[j], err);
    }
    size_t meta_chunk = w->chunk_rows < 4096 ? 4096 : w->chunk_rows;
    const char *names[3] = {"tokens", "sample_id", "position"};
    hid_t *ids[3] = {&w->tokens, &w->sample_id, &w->position};
    for (int k = 0; rc == MDSD_OK && k < 3; k++) {
        *ids[k] = create_rows(w->file, names[k], H5T_STD_I32LE, 1, w->V, meta_chunk, w->gzip, 4);
        if (*ids[k] < 0)
            rc = writer_fail(w, err, names[k]);
    }
    return rc;
}

int mdsd_dump_writer_open(const char *path, const mdsd_dump_spec *s, mdsd_dump_writer **out,
                          mdsd_err *err)
{
    dump_h5_quiet();
    *out = NULL;
    if (s->V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "dump '%s': V must be at least 1", path);
    if (s->n_drafts == 0)
        return mdsd_fail(err, MDSD_EINVAL, "dump '%s': at least one drafter is needed", path);
    if (s->gzip < 0 || s->gzip > 9)
        return mdsd_fail(err, MDSD_EINVAL, "dump '%s': gzip level %d is not in 0..9", path, s->gzip);
    for (size_t j = 0; j < s->n_drafts; j++) {
        if (!valid_name(s->draft_names[j]))
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': drafter name '%s' is empty, has a '/' or is too long",
                             path, s->draft_names[j] ? s->draft_names[j] : "");
        for (size_t k = 0; k < j; k++)
            if (!strcmp(s->draft_names[j], s->draft_names[k]))
                return mdsd_fail(err, MDSD_EINVAL, "dump '%s': drafter name '%s' given twice", path,
                                 s->draft_names[j]);
    }
    for (size_t k = 0; k < s->n_extra; k++)
        if (!valid_name(s->extra_names[k]))
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': bad attribute name", path);
    mdsd_dump_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->drafts = malloc(s->n_drafts * sizeof *w->drafts))) {
        free(w);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    w->file = w->target = w->tokens = w->sample_id = w->position = w->ftype = -1;
    for (size_t j = 0; j < s->n_drafts; j++)
        w->drafts[j] = -1;
    w->V = s->V;
    w->n_drafts = s->n_drafts;
    w->dtype = s->dtype;
    w->neg_inf = s->neg_inf;
    w->gzip = s->gzip;
    size_t row_bytes = s->V * dump_dtype_bytes(s->dtype);
    w->chunk_rows = s->chunk_rows ? s->chunk_rows : MDSD_DUMP_CHUNK_ROWS;
    if (w->chunk_rows * row_bytes > MAX_CHUNK_BYTES)
        w->chunk_rows = MAX_CHUNK_BYTES / row_bytes ? MAX_CHUNK_BYTES / row_bytes : 1;
    int rc = MDSD_OK;
    if (strlen(path) >= sizeof w->path)
        rc = mdsd_fail(err, MDSD_EINVAL, "output path too long: '%s'", path);
    else
        strcpy(w->path, path);
    if (rc == MDSD_OK && s->neg_inf == MDSD_DUMP_NEG_INF_UNSEEN) {
        /* float16 and bfloat16 round a log-probability of -10 by ~0.005 in the
         * kept mass: more than the intervals on truncated rows may move */
        if (s->dtype != MDSD_DUMP_FLOAT32)
            rc = mdsd_fail(err, MDSD_EINVAL, "dump '%s': truncated top-k rows (neg_inf unseen) must "
                           "be stored as float32, not %s", path, mdsd_dtype_name(s->dtype));
        else if (!(w->groups = calloc(1 + s->n_drafts, sizeof *w->groups)) ||
                 !(w->rec_flag = calloc(1 + s->n_drafts, sizeof *w->rec_flag)) ||
                 !(w->rec_mass = calloc(1 + s->n_drafts, sizeof *w->rec_mass)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        for (size_t m = 0; rc == MDSD_OK && m <= s->n_drafts; m++) {
            size_t len = 2 * MDSD_DUMP_NAME_MAX;
            if (!(w->groups[m] = malloc(len)))
                rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            else if (m == 0)
                snprintf(w->groups[m], len, "/target");
            else
                snprintf(w->groups[m], len, "/drafts/%s", s->draft_names[m - 1]);
        }
    }
    if (rc == MDSD_OK)
        rc = mdsd_tmpname(path, w->tmp, sizeof w->tmp, err);
    if (rc == MDSD_OK)
        rc = writer_setup(w, s, err);
    if (rc) {
        mdsd_dump_writer_abort(w);
        return rc;
    }
    *out = w;
    return MDSD_OK;
}

/* Converts a block of logits to the file's 16-bit patterns, refusing values
 * that would make an invalid dump. */
static int convert_rows(mdsd_dump_writer *w, const char *what, size_t rows, const float *x,
                        mdsd_err *err)
{
    size_t n = rows * w->V;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]) || x[i] == INFINITY)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu logit %zu is %s", w->path, what,
                             w->N + i / w->V, i % w->V, isnan(x[i]) ? "NaN" : "+inf");
        if (x[i] == -INFINITY && w->neg_inf == MDSD_DUMP_NEG_INF_ASK)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu logit %zu is -inf: say what -inf "
                             "means (neg_inf zero: probability 0, e.g. after top-k sampling; unseen: "
                             "a token a top-k trace did not report; data/README.md, \"Truncated "
                             "rows\"), the writer does not guess", w->path, what, w->N + i / w->V,
                             i % w->V);
        if (w->dtype == MDSD_DUMP_FLOAT32)
            continue;
        unsigned short h = w->dtype == MDSD_DUMP_FLOAT16 ? mdsd_float_to_half(x[i])
                                                          : mdsd_float_to_bfloat16(x[i]);
        if (h == 0x7c00 && w->dtype == MDSD_DUMP_FLOAT16)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu logit %zu = %g overflows float16",
                             w->path, what, w->N + i / w->V, i % w->V, x[i]);
        if (h == 0x7f80 && w->dtype == MDSD_DUMP_BFLOAT16)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu logit %zu = %g overflows bfloat16",
                             w->path, what, w->N + i / w->V, i % w->V, x[i]);
        if (w->conv)
            w->conv[i] = h;
    }
    return MDSD_OK;
}

static int append_rows(mdsd_dump_writer *w, hid_t ds, int rank, size_t rows, hid_t mtype,
                       const void *data, const char *what, mdsd_err *err)
{
    hsize_t dims[2] = {w->N + rows, w->V}, start[2] = {w->N, 0}, count[2] = {rows, w->V};
    herr_t st = H5Dset_extent(ds, dims);
    hid_t fs = st < 0 ? -1 : H5Dget_space(ds);
    hid_t ms = H5Screate_simple(rank, count, NULL); /* same shape: see read_rows */
    st = fs < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (st >= 0)
        st = H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, data);
    dump_h5_close(fs);
    dump_h5_close(ms);
    return st < 0 ? writer_fail(w, err, what) : MDSD_OK;
}

static int append_logits(mdsd_dump_writer *w, hid_t ds, const char *what, size_t rows,
                         const float *x, mdsd_err *err)
{
    if (w->dtype != MDSD_DUMP_FLOAT32 && w->conv_cap < rows * w->V) {
        free(w->conv);
        w->conv_cap = 0;
        if (!(w->conv = malloc(rows * w->V * sizeof *w->conv)))
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        w->conv_cap = rows * w->V;
    }
    int rc = convert_rows(w, what, rows, x, err);
    if (rc)
        return rc;
    if (w->dtype == MDSD_DUMP_FLOAT32)
        return append_rows(w, ds, 2, rows, H5T_NATIVE_FLOAT, x, what, err);
    return append_rows(w, ds, 2, rows, w->dtype == MDSD_DUMP_FLOAT16 ? w->ftype : H5T_NATIVE_USHORT,
                       w->conv, what, err);
}

/* neg_inf = unseen: each row with a -inf is a truncated top-k row; its
 * missing mass is -expm1(logsumexp(kept)) in double from the stored float32
 * values (never 1 - kept). Checked for every model before anything of the
 * rows is written. */
static int record_rows(mdsd_dump_writer *w, size_t m, const char *what, size_t rows,
                       const float *x, mdsd_err *err)
{
    if (w->N + rows > w->rec_cap) {
        size_t cap = w->rec_cap ? w->rec_cap : 1024;
        while (cap < w->N + rows)
            cap *= 2;
        for (size_t k = 0; k <= w->n_drafts; k++) {
            unsigned char *f = realloc(w->rec_flag[k], cap);
            if (f)
                w->rec_flag[k] = f;
            double *d = f ? realloc(w->rec_mass[k], cap * sizeof *d) : NULL;
            if (!d)
                return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            w->rec_mass[k] = d;
        }
        w->rec_cap = cap;
    }
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * w->V;
        double top = -INFINITY;
        size_t unseen = 0;
        for (size_t v = 0; v < w->V; v++) {
            unseen += row[v] == -INFINITY;
            top = row[v] > top ? row[v] : top;
        }
        if (unseen == w->V)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu: every logit is -inf (a "
                             "top-k row keeps k >= 1 tokens)", w->path, what, w->N + r);
        double mass = 0;
        if (unseen > 0 && top > -INFINITY) {
            double sum = 0;
            for (size_t v = 0; v < w->V; v++)
                sum += row[v] == -INFINITY ? 0.0 : exp((double)row[v] - top);
            double log_kept = top + log(sum);
            if (log_kept > log1p(1e-5))
                return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu: the kept probabilities "
                                 "sum to %.9g > 1: not log-probabilities of the full distribution "
                                 "(neg_inf unseen)", w->path, what, w->N + r, exp(log_kept));
            mass = log_kept >= 0 ? 0.0 : -expm1(log_kept); /* a rounding excess is no mass */
        }
        w->rec_flag[m][w->N + r] = unseen > 0;
        w->rec_mass[m][w->N + r] = mass;
    }
    return MDSD_OK;
}

/* The record as /<group>/truncated (uint8) and missing_mass (float64). */
static int write_record(mdsd_dump_writer *w, mdsd_err *err)
{
    hsize_t n = w->N;
    for (size_t m = 0; m <= w->n_drafts; m++) {
        char flag[3 * MDSD_DUMP_NAME_MAX], mass[3 * MDSD_DUMP_NAME_MAX];
        snprintf(flag, sizeof flag, "%s/truncated", w->groups[m]);
        snprintf(mass, sizeof mass, "%s/missing_mass", w->groups[m]);
        hid_t sp = H5Screate_simple(1, &n, NULL);
        hid_t f = H5Dcreate2(w->file, flag, H5T_STD_U8LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hid_t d = H5Dcreate2(w->file, mass, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        herr_t st = f < 0 || d < 0 ? -1 : H5Dwrite(f, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                                    w->rec_flag[m]);
        if (st >= 0)
            st = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w->rec_mass[m]);
        dump_h5_close(f), dump_h5_close(d), dump_h5_close(sp);
        if (st < 0)
            return writer_fail(w, err, flag);
    }
    return MDSD_OK;
}

int mdsd_dump_writer_append(mdsd_dump_writer *w, size_t rows, const float *target,
                            const float *const *drafts, const int *tokens,
                            const int *sample_id, const int *position, mdsd_err *err)
{
    if (rows == 0)
        return MDSD_OK;
    int rc = MDSD_OK;
    for (size_t m = 0; rc == MDSD_OK && w->groups && m <= w->n_drafts; m++)
        rc = record_rows(w, m, m == 0 ? "/target/logits" : w->groups[m], rows,
                         m == 0 ? target : drafts[m - 1], err);
    if (rc == MDSD_OK)
        rc = append_logits(w, w->target, "/target/logits", rows, target, err);
    for (size_t j = 0; rc == MDSD_OK && j < w->n_drafts; j++) {
        char what[64];
        snprintf(what, sizeof what, "drafter %zu", j + 1);
        rc = append_logits(w, w->drafts[j], what, rows, drafts[j], err);
    }
    if (rc == MDSD_OK)
        rc = append_rows(w, w->tokens, 1, rows, H5T_NATIVE_INT, tokens, "/tokens", err);
    if (rc == MDSD_OK)
        rc = append_rows(w, w->sample_id, 1, rows, H5T_NATIVE_INT, sample_id, "/sample_id", err);
    if (rc == MDSD_OK)
        rc = append_rows(w, w->position, 1, rows, H5T_NATIVE_INT, position, "/position", err);
    if (rc == MDSD_OK)
        w->N += rows;
    return rc;
}

/* Closes every HDF5 handle; returns whether the file closed cleanly. */
static int writer_close(mdsd_dump_writer *w)
{
    int ok = 1;
    hid_t *ids[] = {&w->target, &w->tokens, &w->sample_id, &w->position, &w->ftype};
    for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
        dump_h5_close(*ids[k]);
        *ids[k] = -1;
    }
    for (size_t j = 0; j < w->n_drafts; j++) {
        dump_h5_close(w->drafts[j]);
        w->drafts[j] = -1;
    }
    if (w->file >= 0)
        ok = H5Fclose(w->file) >= 0;
    w->file = -1;
    return ok;
}

static void writer_free(mdsd_dump_writer *w)
{
    for (size_t m = 0; w->groups && m <= w->n_drafts; m++) {
        free(w->groups[m]);
        if (w->rec_flag)
            free(w->rec_flag[m]);
        if (w->rec_mass)
            free(w->rec_mass[m]);
    }
    free(w->groups), free(w->rec_flag), free(w->rec_mass);
    free(w->drafts);
    free(w->conv);
    free(w);
}

hid_t dump_writer_file(mdsd_dump_writer *w)
{
    return w->file;
}

int mdsd_dump_writer_commit(mdsd_dump_writer *w, mdsd_err *err)
{
    return dump_writer_commit_checked(w, NULL, NULL, err);
}

int dump_writer_commit_checked(mdsd_dump_writer *w, int (*check)(const char *tmp, void *ctx, mdsd_err *err),
                               void *ctx, mdsd_err *err)
{
    if (w->N == 0) {
        mdsd_fail(err, MDSD_EINVAL, "dump '%s': no rows were written (an empty dump is invalid)", w->path);
        mdsd_dump_writer_abort(w);
        return MDSD_EINVAL;
    }
    int rc = w->groups ? write_record(w, err) : MDSD_OK;
    if (!writer_close(w) && rc == MDSD_OK)
        rc = writer_fail(w, err, "closing the file");
    int fd = rc ? -1 : open(w->tmp, O_RDONLY);
    if (rc == MDSD_OK && (fd < 0 || fsync(fd) != 0))
        rc = mdsd_fail(err, MDSD_EIO, "cannot sync '%s': %s", w->tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc == MDSD_OK && check) /* the closed file, before anything appears under path */
        rc = check(w->tmp, ctx, err);
    if (rc == MDSD_OK) {
        rc = mdsd_publish(w->tmp, w->path, err);
    } else {
        unlink(w->tmp);
        mdsd_cleanup_unregister(w->tmp);
    }
    writer_free(w);
    return rc;
}

void mdsd_dump_writer_abort(mdsd_dump_writer *w)
{
    if (!w)
        return;
    writer_close(w);
    H5Eclear2(H5E_DEFAULT);
    if (w->tmp[0]) {
        unlink(w->tmp);
        mdsd_cleanup_unregister(w->tmp);
    }
    writer_free(w);
}
