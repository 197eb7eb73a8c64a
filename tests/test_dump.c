/* HDF5 logit dumps: round trips for each dtype, streaming across chunk
 * boundaries, our float16 widening against HDF5's own conversion, and every
 * bad input giving its own clear error (and no output file from the writer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <hdf5.h>

#include "testutil.h"

/* The value written at (model, row, column): varied magnitudes and signs,
 * and -inf (a masked token) at a few places. model 0 = target. */
static float value_at(int model, size_t row, size_t col)
{
    if ((row * 7 + col * 3 + (size_t)model) % 11 == 0)
        return -INFINITY;
    double x = sin(0.37 * (double)row + 1.3 * (double)col + (double)model) * (1.0 + (double)(col % 5) * 3.0);
    return (float)(x - 0.01 * (double)row);
}

typedef struct {
    size_t N, V, n_drafts, chunk_rows, samples;
    int gzip;
    mdsd_dump_dtype dtype;
} dump_shape;

/* A temporary directory per test, removed with its files by rm_tree. */
static char *make_dir(void)
{
    char *dir = strdup("/tmp/mdsd-test-dump-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void rm_tree(char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* Sample k of K holds rows [k N / K, (k + 1) N / K). */
static void meta_at(const dump_shape *s, size_t row, int *token, int *sample, int *position)
{
    size_t k = 0;
    while ((k + 1) * s->N / s->samples <= row)
        k++;
    *token = (int)((row * 13) % s->V);
    *sample = (int)k + 100;
    *position = (int)(row - k * s->N / s->samples);
}

/* Writes a dump of the given shape through the library's writer, appending
 * in uneven pieces so that appends straddle chunk boundaries. */
static void write_dump(const char *path, const dump_shape *s)
{
    static const char *names[] = {"alpha", "beta", "gamma"};
    mdsd_dump_spec spec = {.V = s->V, .dtype = s->dtype, .chunk_rows = s->chunk_rows, .gzip = s->gzip,
                           .creator = "test", .dataset = "unit", .tokenizer = "none",
                           .generation_temperature = 0.7, .target_model = "big-model",
                           .n_drafts = s->n_drafts, .draft_names = names};
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_dump_writer *w;
    cr_assert_eq(mdsd_dump_writer_open(path, &spec, &w, &err), MDSD_OK, "%s", err.msg);
    size_t piece = 5, cap = 16;
    float *t = malloc(cap * s->V * sizeof *t), *d[3];
    for (size_t j = 0; j < s->n_drafts; j++)
        d[j] = malloc(cap * s->V * sizeof *d[j]);
    int tok[16], sid[16], pos[16];
    for (size_t r0 = 0; r0 < s->N; r0 += piece, piece = piece % cap + 3) {
        size_t rows = s->N - r0 < piece ? s->N - r0 : piece;
        for (size_t i = 0; i < rows; i++) {
            for (size_t c = 0; c < s->V; c++) {
                t[i * s->V + c] = value_at(0, r0 + i, c);
                for (size_t j = 0; j < s->n_drafts; j++)
                    d[j][i * s->V + c] = value_at((int)j + 1, r0 + i, c);
            }
            meta_at(s, r0 + i, &tok[i], &sid[i], &pos[i]);
        }
        cr_assert_eq(mdsd_dump_writer_append(w, rows, t, (const float *const *)d, tok, sid, pos, &err),
                     MDSD_OK, "%s", err.msg);
    }
    cr_assert_eq(mdsd_dump_writer_commit(w, &err), MDSD_OK, "%s", err.msg);
    free(t);
    for (size_t j = 0; j < s->n_drafts; j++)
        free(d[j]);
}

static mdsd_dump *open_ok(const char *path)
{
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_dump *d;
    cr_assert_eq(mdsd_dump_open(path, &d, &err), MDSD_OK, "%s", err.msg);
    return d;
}

/* Expected value after the round trip through the dtype. */
static float stored(mdsd_dump_dtype t, float x)
{
    if (t == MDSD_DUMP_FLOAT16)
        return mdsd_half_to_float(mdsd_float_to_half(x));
    if (t == MDSD_DUMP_BFLOAT16)
        return mdsd_bfloat16_to_float(mdsd_float_to_bfloat16(x));
    return x;
}

static void check_roundtrip(mdsd_dump_dtype dtype, double rel_tol)
{
    char *dir = make_dir(), *path = path_in(dir, "d.h5");
    dump_shape s = {.N = 37, .V = 11, .n_drafts = 2, .chunk_rows = 8, .samples = 4, .dtype = dtype};
    write_dump(path, &s);
    mdsd_dump *d = open_ok(path);
    cr_assert_eq(d->format, 1);
    cr_assert_eq(d->N, s.N);
    cr_assert_eq(d->V, s.V);
    cr_assert_eq(d->n_samples, 4);
    cr_assert_eq(d->max_sample_rows, 10); /* 37 rows in 4: 9, 9, 9, 10 */
    cr_assert_eq(d->n_drafts, 2);
    cr_assert_str_eq(d->drafts[0].name, "alpha");
    cr_assert_str_eq(d->drafts[1].path, "/drafts/beta/logits");
    cr_assert_str_eq(d->target.model, "big-model");
    cr_assert_eq(d->target.vocab_size, 11);
    cr_assert_eq(d->target.dtype, dtype);
    cr_assert_eq(d->drafts[1].dtype, dtype);
    cr_assert_eq(d->target.chunk_rows, 8);
    cr_assert_str_eq(d->dataset, "unit");
    cr_assert_str_eq(d->creator, "test");
    cr_assert_eq(d->generation_temperature, 0.7);
    cr_assert_eq(strlen(d->created), 20, "%s", d->created); /* 2025-01-02T03:04:05Z */
    float *x = malloc(s.N * s.V * sizeof *x);
    mdsd_err err;
    for (int m = -1; m < 2; m++) {
        cr_assert_eq(mdsd_dump_read_logits(d, m, 0, s.N, x, &err), MDSD_OK, "%s", err.msg);
        for (size_t r = 0; r < s.N; r++)
            for (size_t c = 0; c < s.V; c++) {
                float want = value_at(m + 1, r, c), got = x[r * s.V + c];
                cr_assert_eq(got, stored(dtype, want), "model %d row %zu col %zu: %g vs %g", m, r, c, got, want);
                if (isinf(want))
                    cr_assert(isinf(got) && got < 0);
                else
                    cr_assert_leq(fabs(got - want), rel_tol * fabs(want) + 1e-30, "%g vs %g", got, want);
            }
    }
    int tok[37], sid[37], pos[37];
    cr_assert_eq(mdsd_dump_read_meta(d, 0, s.N, tok, sid, pos, &err), MDSD_OK, "%s", err.msg);
    for (size_t r = 0; r < s.N; r++) {
        int t, k, p;
        meta_at(&s, r, &t, &k, &p);
        cr_assert(tok[r] == t && sid[r] == k && pos[r] == p, "row %zu", r);
    }
    cr_assert_eq(mdsd_dump_validate(d, NULL, NULL, &err), MDSD_OK, "%s", err.msg);
    mdsd_dump_close(d);
    free(x);
    free(path);
    rm_tree(dir);
}

Test(dump, roundtrip_float32_is_exact)
{
    check_roundtrip(MDSD_DUMP_FLOAT32, 0.0);
}

Test(dump, roundtrip_float16_within_half_precision)
{
    check_roundtrip(MDSD_DUMP_FLOAT16, 1.0 / 2048); /* 2^-11: half an ulp of a 10-bit mantissa */
}

Test(dump, roundtrip_bfloat16_within_its_precision)
{
    check_roundtrip(MDSD_DUMP_BFLOAT16, 1.0 / 256); /* 2^-8 */
}

/* Our float16 widening (used for speed) against HDF5's own conversion, for
 * every one of the 65536 bit patterns; and our rounding float -> half
 * against HDF5's on values that are not ties. */
Test(dump, half_conversion_agrees_with_hdf5_on_all_bit_patterns)
{
    hid_t half = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(half, 15, 10, 5, 0, 10);
    H5Tset_size(half, 2);
    H5Tset_ebias(half, 15);
    /* H5Tconvert works in place in a buffer big enough for the wider type */
    float *buf = malloc(65536 * sizeof *buf);
    unsigned short *bits = (unsigned short *)buf;
    for (unsigned i = 0; i < 65536; i++)
        bits[i] = (unsigned short)i;
    cr_assert_geq(H5Tconvert(half, H5T_NATIVE_FLOAT, 65536, buf, NULL, H5P_DEFAULT), 0);
    for (unsigned i = 0; i < 65536; i++) {
        float ours = mdsd_half_to_float((unsigned short)i);
        if (isnan(ours))
            cr_assert(isnan(buf[i]), "pattern %#x", i);
        else
            cr_assert_eq(ours, buf[i], "pattern %#x: %a vs HDF5 %a", i, ours, buf[i]);
    }
    /* the reader's fast widening, through a dump holding every pattern */
    char *dir = make_dir(), *path = path_in(dir, "all.h5");
    dump_shape sh = {.N = 16, .V = 4096, .n_drafts = 1, .chunk_rows = 4, .samples = 1, .dtype = MDSD_DUMP_FLOAT16};
    write_dump(path, &sh);
    unsigned short *patterns = malloc(65536 * sizeof *patterns);
    for (unsigned i = 0; i < 65536; i++)
        patterns[i] = (unsigned short)i;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t ds = H5Dopen2(f, "/target/logits", H5P_DEFAULT);
    cr_assert_geq(H5Dwrite(ds, half, H5S_ALL, H5S_ALL, H5P_DEFAULT, patterns), 0);
    H5Dclose(ds);
    H5Fclose(f);
    mdsd_dump *d = open_ok(path);
    float *x = malloc(65536 * sizeof *x);
    cr_assert_eq(mdsd_dump_read_logits(d, MDSD_DUMP_TARGET, 0, 16, x, NULL), MDSD_OK);
    for (unsigned i = 0; i < 65536; i++) {
        if (isnan(buf[i]))
            cr_assert(isnan(x[i]), "pattern %#x", i);
        else
            cr_assert_eq(x[i], buf[i], "pattern %#x: read %a, HDF5 %a", i, x[i], buf[i]);
    }
    mdsd_dump_close(d);
    free(x);
    free(patterns);
    free(path);
    rm_tree(dir);
    /* and back: every half value round-trips exactly */
    for (unsigned i = 0; i < 65536; i++) {
        float f = mdsd_half_to_float((unsigned short)i);
        if (!isnan(f))
            cr_assert_eq(mdsd_float_to_half(f), i, "pattern %#x", i);
    }
    /* rounding of floats strictly between two halves, checked against the
     * nearer neighbour computed in double */
    gsl_rng *r = mdsd_rng_alloc(42);
    for (int k = 0; k < 100000; k++) {
        float x = (float)((gsl_rng_uniform(r) - 0.5) * pow(2.0, (double)(int)gsl_rng_uniform_int(r, 40) - 24));
        unsigned short h = mdsd_float_to_half(x);
        double got = mdsd_half_to_float(h);
        double up = mdsd_half_to_float((unsigned short)(h + 1)), down = mdsd_half_to_float((unsigned short)(h - 1));
        if ((h & 0x7fff) != 0 && (h & 0x7fff) < 0x7bff) {
            cr_assert_leq(fabs(got - x), fabs(up - x), "x = %a", x);
            cr_assert_leq(fabs(got - x), fabs(down - x), "x = %a", x);
        }
    }
    gsl_rng_free(r);
    cr_assert_eq(mdsd_float_to_half(65504.0f), 0x7bff);
    cr_assert_eq(mdsd_float_to_half(65520.0f), 0x7c00);  /* the tie above the max rounds to inf */
    cr_assert_eq(mdsd_float_to_half(-INFINITY), 0xfc00);
    cr_assert_eq(mdsd_float_to_bfloat16(1.0f + 1.0f / 256), 0x3f80); /* tie to even */
    cr_assert_eq(mdsd_float_to_bfloat16(1.0f + 3.0f / 256), 0x3f82);
    free(buf);
    H5Tclose(half);
}

static void expect_rows(mdsd_dump *d, const dump_shape *s, size_t row0, size_t rows, const float *x, int model)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < s->V; c++)
            cr_assert_eq(x[r * s->V + c], stored(s->dtype, value_at(model, row0 + r, c)), "row %zu col %zu",
                         row0 + r, c);
    (void)d;
}

Test(dump, streaming_blocks_cross_chunk_boundaries)
{
    char *dir = make_dir(), *path = path_in(dir, "s.h5");
    dump_shape s = {.N = 50, .V = 9, .n_drafts = 3, .chunk_rows = 7, .samples = 5, .gzip = 1,
                    .dtype = MDSD_DUMP_FLOAT16};
    write_dump(path, &s);
    mdsd_dump *d = open_ok(path);
    cr_assert_eq(d->target.gzip, 1);
    mdsd_err err;
    size_t caps[] = {1, 3, 7, 10, 64};
    for (size_t k = 0; k < 5; k++) {
        int which[2] = {2, 0}; /* gamma, alpha */
        mdsd_dump_block *b = mdsd_dump_block_alloc(d, caps[k], 2, which, &err);
        cr_assert_not_null(b, "%s", err.msg);
        size_t seen = 0;
        for (size_t r0 = 0; r0 < d->N; r0 += b->rows) {
            cr_assert_eq(mdsd_dump_block_read(d, b, r0, 1, &err), MDSD_OK, "%s", err.msg);
            cr_assert_eq(b->rows, caps[k] < d->N - r0 ? caps[k] : d->N - r0);
            expect_rows(d, &s, r0, b->rows, b->target, 0);
            expect_rows(d, &s, r0, b->rows, b->draft[0], 3);
            expect_rows(d, &s, r0, b->rows, b->draft[1], 1);
            for (size_t i = 0; i < b->rows; i++) {
                int t, sid, pos;
                meta_at(&s, r0 + i, &t, &sid, &pos);
                cr_assert(b->tokens[i] == t && b->sample_id[i] == sid && b->position[i] == pos);
            }
            seen += b->rows;
        }
        cr_assert_eq(seen, d->N);
        cr_assert_eq(mdsd_dump_block_read(d, b, d->N, 0, &err), MDSD_OK);
        cr_assert_eq(b->rows, 0);
        mdsd_dump_block_free(b);
    }
    /* an unaligned range in the middle, and one past the end */
    float *x = malloc(11 * s.V * sizeof *x);
    cr_assert_eq(mdsd_dump_read_logits(d, 1, 5, 11, x, &err), MDSD_OK, "%s", err.msg);
    expect_rows(d, &s, 5, 11, x, 2);
    cr_assert_eq(mdsd_dump_read_logits(d, 1, 45, 6, x, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "outside"), "%s", err.msg);
    cr_assert_eq(mdsd_dump_read_logits(d, 3, 0, 1, x, &err), MDSD_EINVAL);
    free(x);
    /* block size suggestions are whole chunks */
    cr_assert_eq(mdsd_dump_block_rows(d, 3, 1), 7);
    cr_assert_eq(mdsd_dump_block_rows(d, 3, 4 * 9 * 4 * 15), 14);
    cr_assert_eq(mdsd_dump_block_rows(d, 3, 1u << 30), 50);
    cr_assert_eq(mdsd_dump_find_draft(d, "gamma"), 2);
    cr_assert_eq(mdsd_dump_find_draft(d, "delta"), -1);
    mdsd_dump_close(d);
    free(path);
    rm_tree(dir);
}

/* ---- bad inputs ------------------------------------------------------------- */

static void expect_open_error(const char *path, const char *needle)
{
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_dump *d = (mdsd_dump *)1;
    int rc = mdsd_dump_open(path, &d, &err);
    cr_assert_neq(rc, MDSD_OK, "opened %s, expected an error with '%s'", path, needle);
    cr_assert_null(d);
    cr_assert(strstr(err.msg, needle), "expected '%s' in: %s", needle, err.msg);
}

static void expect_validate_error(const char *path, const char *needle)
{
    mdsd_dump *d = open_ok(path);
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_neq(mdsd_dump_validate(d, NULL, NULL, &err), MDSD_OK, "validated, expected '%s'", needle);
    cr_assert(strstr(err.msg, needle), "expected '%s' in: %s", needle, err.msg);
    mdsd_dump_close(d);
}

static char *good_dump(const char *dir, const char *name, dump_shape *s)
{
    char *path = path_in(dir, name);
    *s = (dump_shape){.N = 20, .V = 6, .n_drafts = 1, .chunk_rows = 4, .samples = 2, .dtype = MDSD_DUMP_FLOAT32};
    write_dump(path, s);
    return path;
}

static hid_t open_rw(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    return f;
}

/* Replaces dataset `name` by one of the given type and shape, filled by fill. */
static void replace_dataset(const char *path, const char *name, hid_t type, int rank, const hsize_t *dims,
                            const void *data)
{
    hid_t f = open_rw(path);
    cr_assert_geq(H5Ldelete(f, name, H5P_DEFAULT), 0);
    hid_t s = H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(ds, 0);
    if (data)
        cr_assert_geq(H5Dwrite(ds, type == H5T_STD_I32LE ? H5T_NATIVE_INT : type == H5T_STD_U16LE ? H5T_NATIVE_USHORT
                                                                                                : H5T_NATIVE_FLOAT,
                               H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    H5Dclose(ds);
    H5Sclose(s);
    H5Fclose(f);
}

/* Writes x into (row, col) of a float32 dataset. */
static void poke(const char *path, const char *name, size_t row, size_t col, float x)
{
    hid_t f = open_rw(path);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t fs = H5Dget_space(ds);
    hsize_t start[2] = {row, col}, count[2] = {1, 1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL);
    cr_assert_geq(H5Dwrite(ds, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, &x), 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    H5Fclose(f);
}

static void poke_int(const char *path, const char *name, size_t row, int v)
{
    hid_t f = open_rw(path);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t fs = H5Dget_space(ds);
    hsize_t start[1] = {row}, count[1] = {1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(1, count, NULL);
    cr_assert_geq(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, &v), 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    H5Fclose(f);
}

static void set_root_attr_int(const char *path, const char *name, long long v)
{
    hid_t f = open_rw(path);
    cr_assert_geq(H5Adelete(f, name), 0);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_LLONG, &v);
    H5Aclose(a);
    H5Sclose(s);
    H5Fclose(f);
}

static void copy_prefix(const char *from, const char *to, long bytes)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out);
    char buf[4096];
    long left = bytes;
    size_t got;
    while (left > 0 && (got = fread(buf, 1, left < 4096 ? (size_t)left : 4096, in)) > 0) {
        fwrite(buf, 1, got, out);
        left -= (long)got;
    }
    fclose(in);
    fclose(out);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* HDF5's own error stack must not be printed: stderr stays empty. */
Test(dump, file_level_errors_are_named_and_hdf5_stays_quiet, .init = cr_redirect_stderr)
{
    char *dir = make_dir();
    dump_shape s;
    char *good = good_dump(dir, "good.h5", &s);
    char *missing = path_in(dir, "missing.h5"), *text = path_in(dir, "text.h5"),
         *trunc = path_in(dir, "truncated.h5"), *empty = path_in(dir, "empty.h5");
    expect_open_error(missing, "No such file");
    FILE *f = fopen(text, "w");
    fputs("dump,temperature\nthis is not HDF5\n", f);
    fclose(f);
    expect_open_error(text, "not an HDF5 file");
    copy_prefix(good, trunc, file_size(good) / 2);
    expect_open_error(trunc, "truncated or corrupt");
    copy_prefix(good, empty, 0);
    expect_open_error(empty, "empty file");
    expect_open_error(dir, "not a regular file");
    fflush(stderr);
    cr_assert_stderr_eq_str("");
    free(missing);
    free(text);
    free(trunc);
    free(empty);
    free(good);
    rm_tree(dir);
}

Test(dump, structure_errors_name_the_dataset)
{
    char *dir = make_dir();
    dump_shape s;
    char *p = good_dump(dir, "a.h5", &s);
    hid_t f = open_rw(p);
    H5Ldelete(f, "/target/logits", H5P_DEFAULT);
    H5Fclose(f);
    expect_open_error(p, "missing dataset /target/logits");
    free(p);

    p = good_dump(dir, "b.h5", &s);
    hsize_t one[1] = {20};
    replace_dataset(p, "/target/logits", H5T_IEEE_F32LE, 1, one, NULL);
    expect_open_error(p, "/target/logits has rank 1, expected 2");
    free(p);

    p = good_dump(dir, "c.h5", &s);
    hsize_t two[2] = {20, 6};
    replace_dataset(p, "/drafts/alpha/logits", H5T_STD_I32LE, 2, two, NULL);
    expect_open_error(p, "/drafts/alpha/logits has dtype integer of 4 bytes");
    free(p);

    p = good_dump(dir, "d.h5", &s);
    replace_dataset(p, "/target/logits", H5T_IEEE_F64LE, 2, two, NULL);
    expect_open_error(p, "dtype float of 8 bytes");
    free(p);

    p = good_dump(dir, "e.h5", &s);
    replace_dataset(p, "/target/logits", H5T_STD_U16LE, 2, two, NULL);
    expect_open_error(p, "lacks the attribute dtype = \"bfloat16\"");
    free(p);

    p = good_dump(dir, "f.h5", &s);
    hsize_t wide[2] = {20, 7};
    replace_dataset(p, "/drafts/alpha/logits", H5T_IEEE_F32LE, 2, wide, NULL);
    expect_open_error(p, "vocab mismatch: /drafts/alpha/logits has 7 columns, /target/logits has 6");
    free(p);

    p = good_dump(dir, "g.h5", &s);
    hsize_t short_len[1] = {19};
    replace_dataset(p, "/position", H5T_STD_I32LE, 1, short_len, NULL);
    expect_open_error(p, "length mismatch: /position has 19 rows, /target/logits has 20");
    free(p);

    p = good_dump(dir, "h.h5", &s);
    hsize_t fewer[2] = {18, 6};
    replace_dataset(p, "/drafts/alpha/logits", H5T_IEEE_F32LE, 2, fewer, NULL);
    expect_open_error(p, "length mismatch: /drafts/alpha/logits has 18 rows");
    free(p);

    p = good_dump(dir, "i.h5", &s);
    set_root_attr_int(p, "vocab_size", 5);
    expect_open_error(p, "vocab mismatch: attribute vocab_size = 5 but /target/logits has 6 columns");
    free(p);

    p = good_dump(dir, "j.h5", &s);
    set_root_attr_int(p, "mdsd_format", 2);
    expect_open_error(p, "version 2 is not supported");
    free(p);

    p = good_dump(dir, "k.h5", &s);
    f = open_rw(p);
    H5Adelete(f, "mdsd_format");
    H5Fclose(f);
    expect_open_error(p, "attribute mdsd_format missing");
    free(p);

    p = good_dump(dir, "l.h5", &s);
    f = open_rw(p);
    H5Ldelete(f, "/drafts/alpha", H5P_DEFAULT);
    H5Fclose(f);
    expect_open_error(p, "/drafts holds no drafter");
    free(p);

    p = good_dump(dir, "m.h5", &s);
    f = open_rw(p);
    H5Ldelete(f, "/tokens", H5P_DEFAULT);
    H5Fclose(f);
    expect_open_error(p, "missing dataset /tokens");
    free(p);
    rm_tree(dir);
}

/* The writer's datasets are extendible: shrink them all to zero rows. */
Test(dump, empty_dump_is_an_error)
{
    char *dir = make_dir();
    dump_shape s;
    char *p = good_dump(dir, "z.h5", &s);
    hid_t f = open_rw(p);
    const char *names[] = {"/target/logits", "/drafts/alpha/logits", "/tokens", "/sample_id", "/position"};
    for (int k = 0; k < 5; k++) {
        hid_t ds = H5Dopen2(f, names[k], H5P_DEFAULT);
        hsize_t dims[2] = {0, 6};
        cr_assert_geq(H5Dset_extent(ds, dims), 0);
        H5Dclose(ds);
    }
    H5Fclose(f);
    expect_open_error(p, "empty dump: /target/logits has 0 rows");
    free(p);
    rm_tree(dir);
}

Test(dump, validate_names_the_first_bad_row)
{
    char *dir = make_dir();
    dump_shape s;
    char *p = good_dump(dir, "nan.h5", &s);
    poke(p, "/drafts/alpha/logits", 13, 2, NAN);
    poke(p, "/target/logits", 17, 0, NAN);
    expect_validate_error(p, "row 13 of /drafts/alpha/logits: logit 2 is NaN");
    free(p);

    p = good_dump(dir, "inf.h5", &s);
    poke(p, "/target/logits", 5, 4, INFINITY);
    expect_validate_error(p, "row 5 of /target/logits: logit 4 is +inf");
    free(p);

    p = good_dump(dir, "allneg.h5", &s);
    for (size_t c = 0; c < 6; c++)
        poke(p, "/target/logits", 19, c, -INFINITY);
    expect_validate_error(p, "row 19 of /target/logits: every logit is -inf");
    free(p);

    p = good_dump(dir, "tok.h5", &s);
    poke_int(p, "/tokens", 3, 6);
    expect_validate_error(p, "row 3 of /tokens: token 6 is outside [0, 6)");
    free(p);

    p = good_dump(dir, "pos.h5", &s);
    poke_int(p, "/position", 4, 2);
    expect_validate_error(p, "row 4: position 2 does not follow position 3 of the same sample 100");
    free(p);

    p = good_dump(dir, "sample.h5", &s);
    for (size_t r = 15; r < 20; r++)
        poke_int(p, "/sample_id", r, 100);
    expect_validate_error(p, "row 15: sample 100 starts again");
    free(p);

    /* a row-level check on a block: mdsd_dump_block_read with check */
    p = good_dump(dir, "blk.h5", &s);
    poke(p, "/target/logits", 9, 1, NAN);
    mdsd_dump *d = open_ok(p);
    mdsd_dump_block *b = mdsd_dump_block_alloc(d, 8, 1, NULL, NULL);
    mdsd_err err;
    cr_assert_eq(mdsd_dump_block_read(d, b, 0, 1, &err), MDSD_OK);
    cr_assert_neq(mdsd_dump_block_read(d, b, 8, 1, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "row 9 of /target/logits: logit 1 is NaN"), "%s", err.msg);
    mdsd_dump_block_free(b);
    mdsd_dump_close(d);
    free(p);
    rm_tree(dir);
}

/* Corrupt a compressed chunk's bytes: the read fails and names the rows. */
Test(dump, corrupt_chunk_is_reported_on_read)
{
    char *dir = make_dir(), *p = path_in(dir, "gz.h5");
    dump_shape s = {.N = 32, .V = 50, .n_drafts = 1, .chunk_rows = 8, .samples = 2, .gzip = 6,
                    .dtype = MDSD_DUMP_FLOAT32};
    write_dump(p, &s);
    hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t ds = H5Dopen2(f, "/target/logits", H5P_DEFAULT);
    hsize_t coord[2] = {16, 0}, size;
    haddr_t addr;
    unsigned mask;
    cr_assert_geq(H5Dget_chunk_info_by_coord(ds, coord, &mask, &addr, &size), 0);
    H5Dclose(ds);
    H5Fclose(f);
    FILE *fp = fopen(p, "r+b");
    fseek(fp, (long)addr + 2, SEEK_SET);
    for (int k = 0; k < 64; k++)
        fputc(0xA5 ^ k, fp);
    fclose(fp);
    mdsd_dump *d = open_ok(p);
    float *x = malloc(8 * s.V * sizeof *x);
    mdsd_err err;
    cr_assert_eq(mdsd_dump_read_logits(d, MDSD_DUMP_TARGET, 8, 8, x, &err), MDSD_OK, "%s", err.msg);
    cr_assert_neq(mdsd_dump_read_logits(d, MDSD_DUMP_TARGET, 16, 8, x, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "cannot read rows 16..23 of /target/logits"), "%s", err.msg);
    mdsd_err_clear(&err);
    cr_assert_neq(mdsd_dump_validate(d, NULL, NULL, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "cannot read rows"), "%s", err.msg);
    free(x);
    mdsd_dump_close(d);
    free(p);
    rm_tree(dir);
}

static int dir_entries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    cr_assert_eq(fscanf(f, "%d", &n), 1);
    pclose(f);
    return n;
}

Test(dump, writer_errors_leave_no_file)
{
    char *dir = make_dir(), *p = path_in(dir, "w.h5");
    const char *names[] = {"d"};
    mdsd_dump_spec spec = {.V = 3, .dtype = MDSD_DUMP_FLOAT16, .n_drafts = 1, .draft_names = names};
    mdsd_err err;
    mdsd_dump_writer *w;
    /* no rows */
    cr_assert_eq(mdsd_dump_writer_open(p, &spec, &w, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(dir_entries(dir), 1); /* the temporary file only */
    cr_assert_neq(mdsd_dump_writer_commit(w, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "no rows"), "%s", err.msg);
    cr_assert_eq(dir_entries(dir), 0);
    /* NaN, +inf and float16 overflow are refused */
    float good[3] = {0, 1, -INFINITY}, bad[3][3] = {{0, NAN, 1}, {INFINITY, 0, 0}, {0, 0, 70000.0f}};
    const char *needle[3] = {"row 0 logit 1 is NaN", "logit 0 is +inf", "logit 2 = 70000 overflows float16"};
    int tok = 0, sid = 0, pos = 0;
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(mdsd_dump_writer_open(p, &spec, &w, &err), MDSD_OK);
        const float *dr[1] = {good};
        cr_assert_neq(mdsd_dump_writer_append(w, 1, bad[k], dr, &tok, &sid, &pos, &err), MDSD_OK);
        cr_assert(strstr(err.msg, needle[k]), "%s", err.msg);
        mdsd_dump_writer_abort(w);
        cr_assert_eq(dir_entries(dir), 0);
    }
    /* bad names, a missing directory */
    const char *slash[] = {"a/b"};
    mdsd_dump_spec bad_spec = spec;
    bad_spec.draft_names = slash;
    cr_assert_eq(mdsd_dump_writer_open(p, &bad_spec, &w, &err), MDSD_EINVAL);
    char *nodir = path_in(dir, "no/such/dir.h5");
    cr_assert_neq(mdsd_dump_writer_open(nodir, &spec, &w, &err), MDSD_OK);
    cr_assert(strstr(err.msg, "cannot create"), "%s", err.msg);
    cr_assert_eq(dir_entries(dir), 0);
    free(nodir);
    free(p);
    rm_tree(dir);
}
