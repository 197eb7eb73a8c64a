/* dump.c - HDF5 logit dumps (format version 1). See dump.h and data/README.md. */
#include "dump.h"

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

#include <hdf5.h>

#include "outfile.h"

#ifndef MDSD_VERSION
#define MDSD_VERSION "unknown"
#endif

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

/* ---- float16 / bfloat16 bits ------------------------------------------- */

static uint32_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

unsigned short mdsd_float_to_bfloat16(float x)
{
    uint32_t u = float_bits(x);
    if (isnan(x))
        return (unsigned short)((u >> 16) | 0x40); /* keep it a quiet NaN */
    u += 0x7fff + ((u >> 16) & 1);                  /* round to nearest even */
    return (unsigned short)(u >> 16);
}

float mdsd_bfloat16_to_float(unsigned short b)
{
    return bits_float((uint32_t)b << 16);
}

unsigned short mdsd_float_to_half(float x)
{
    uint32_t u = float_bits(x);
    uint32_t sign = (u >> 16) & 0x8000;
    uint32_t a = u & 0x7fffffff;
    if (a > 0x7f800000)
        return (unsigned short)(sign | 0x7e00);     /* NaN */
    if (a >= 0x477ff000)                            /* rounds to >= 65520: inf */
        return (unsigned short)(sign | 0x7c00);
    if (a < 0x38800000) {                           /* below 2^-14: subnormal half */
        /* value = a as float; half subnormal unit is 2^-24: scale and round
         * to nearest even in float arithmetic, which is exact here. */
        float f = bits_float(a) * 16777216.0f;      /* 2^24 */
        float r = nearbyintf(f);                    /* default mode: ties to even */
        return (unsigned short)(sign | (uint32_t)r);
    }
    uint32_t mant = a & 0x7fffff;
    uint32_t exp = (a >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++;                                        /* carries into the exponent correctly */
    return (unsigned short)(sign | h);
}

float mdsd_half_to_float(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        float f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    }
    if (exp == 31)
        return bits_float(sign | 0x7f800000 | (mant << 13));
    return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
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

const char *mdsd_dtype_name(mdsd_dtype t)
{
    switch (t) {
    case MDSD_DTYPE_FLOAT16: return "float16";
    case MDSD_DTYPE_BFLOAT16: return "bfloat16";
    case MDSD_DTYPE_FLOAT32:
    default: return "float32";
    }
}

int mdsd_dtype_parse(const char *name, mdsd_dtype *out, mdsd_err *err)
{
    static const mdsd_dtype all[] = {MDSD_DTYPE_FLOAT32, MDSD_DTYPE_FLOAT16, MDSD_DTYPE_BFLOAT16};
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(name, mdsd_dtype_name(all[i]))) {
            *out = all[i];
            return MDSD_OK;
        }
    return mdsd_fail(err, MDSD_EINVAL, "unknown dtype '%s' (float32, float16 or bfloat16)", name);
}

/* ---- HDF5 helpers -------------------------------------------------------- */

/* HDF5 prints its error stack to stderr by default; we report our own. */
static void h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

typedef struct {
    char *buf;
    size_t size;
} reason_buf;

static herr_t reason_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    reason_buf *r = data;
    if (n == 0 && e->desc)
        snprintf(r->buf, r->size, "%s", e->desc);
    return 0;
}

/* The innermost message of HDF5's error stack (the most specific), then
 * clears the stack. */
static const char *h5_reason(char *buf, size_t size)
{
    reason_buf r = {buf, size};
    snprintf(buf, size, "unknown HDF5 error");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_cb, &r);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}

static void h5_close_id(hid_t id)
{
    if (id < 0)
        return;
    switch (H5Iget_type(id)) {
    case H5I_FILE: H5Fclose(id); break;
    case H5I_GROUP: H5Gclose(id); break;
    case H5I_DATASET: H5Dclose(id); break;
    case H5I_DATATYPE: H5Tclose(id); break;
    case H5I_DATASPACE: H5Sclose(id); break;
    case H5I_ATTR: H5Aclose(id); break;
    case H5I_GENPROP_LST: H5Pclose(id); break;
    default: break;
    }
}

/* Whether every component of an absolute path exists (H5Lexists fails,
 * rather than answering no, when a parent is missing). */
static int path_exists(hid_t file, const char *path)
{
    char buf[2 * MDSD_DUMP_NAME_MAX + 16];
    size_t len = strlen(path);
    if (len >= sizeof buf)
        return 0;
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
        buf[i] = c;
        if (e <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return 0;
        }
    }
    return 1;
}

/* Number of elements of an attribute (or -1). */
static hssize_t attr_points(hid_t a)
{
    hid_t s = H5Aget_space(a);
    hssize_t n = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
    h5_close_id(s);
    return n;
}

/* Reads a string attribute into buf (fixed or variable length). 0 if absent
 * (buf = ""), 1 if read, -1 if present but not a single string. */
static int read_attr_string(hid_t obj, const char *name, char *buf, size_t size)
{
    buf[0] = '\0';
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a < 0 ? -1 : H5Aget_type(a);
    int rc = -1;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && attr_points(a) == 1) {
        hid_t m = H5Tcopy(t);
        if (H5Tis_variable_str(t) > 0) {
            char *s = NULL;
            if (H5Aread(a, m, &s) >= 0) {
                snprintf(buf, size, "%s", s ? s : "");
                rc = 1;
            }
            if (s)
                H5free_memory(s);
        } else {
            size_t n = H5Tget_size(t);
            char *s = calloc(n + 1, 1);
            if (s && H5Aread(a, m, s) >= 0) {
                size_t len = strnlen(s, n);
                while (len > 0 && s[len - 1] == ' ' && H5Tget_strpad(t) == H5T_STR_SPACEPAD)
                    len--;
                snprintf(buf, size, "%.*s", (int)len, s);
                rc = 1;
            }
            free(s);
        }
        h5_close_id(m);
    }
    h5_close_id(t);
    h5_close_id(a);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* Reads a single numeric attribute (integer or float class) as double.
 * 0 absent, 1 read, -1 present but not one number. */
static int read_attr_number(hid_t obj, const char *name, double *out, int want_integer)
{
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a < 0 ? -1 : H5Aget_type(a);
    int rc = -1;
    H5T_class_t c = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    if ((c == H5T_INTEGER || (c == H5T_FLOAT && !want_integer)) && attr_points(a) == 1) {
        if (c == H5T_INTEGER) {
            long long v;
            if (H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0) {
                *out = (double)v;
                rc = 1;
            }
        } else if (H5Aread(a, H5T_NATIVE_DOUBLE, out) >= 0) {
            rc = 1;
        }
    }
    h5_close_id(t);
    h5_close_id(a);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* Renders any attribute as text for `mdsd info`. */
static void render_attr(hid_t a, char *buf, size_t size)
{
    hid_t t = H5Aget_type(a);
    H5T_class_t c = H5Tget_class(t);
    hssize_t n = attr_points(a);
    buf[0] = '\0';
    if (c == H5T_STRING && n == 1) {
        h5_close_id(t);
        return; /* filled by the caller through read_attr_string */
    }
    if ((c == H5T_INTEGER || c == H5T_FLOAT) && n >= 1 && n <= 64) {
        double v[64];
        long long iv[64];
        int ok = c == H5T_INTEGER ? H5Aread(a, H5T_NATIVE_LLONG, iv) >= 0
                                  : H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
        size_t used = 0;
        for (hssize_t i = 0; ok && i < n && used < size; i++) {
            int w = c == H5T_INTEGER
                        ? snprintf(buf + used, size - used, "%s%lld", i ? "," : "", iv[i])
                        : snprintf(buf + used, size - used, "%s%.17g", i ? "," : "", v[i]);
            used += w > 0 ? (size_t)w : 0;
        }
        if (ok) {
            h5_close_id(t);
            return;
        }
    }
    snprintf(buf, size, "(%lld values of HDF5 class %d)", (long long)n, (int)c);
    h5_close_id(t);
}

typedef struct {
    mdsd_dump *d;
    int failed;
} attr_iter;

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    attr_iter *it = data;
    mdsd_dump *d = it->d;
    mdsd_dump_attr *grown = realloc(d->attrs, (d->n_attrs + 1) * sizeof *grown);
    if (!grown) {
        it->failed = 1;
        return -1;
    }
    d->attrs = grown;
    mdsd_dump_attr *at = &d->attrs[d->n_attrs++];
    snprintf(at->name, sizeof at->name, "%s", name);
    if (read_attr_string(loc, name, at->value, sizeof at->value) == 1)
        return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a >= 0)
        render_attr(a, at->value, sizeof at->value);
    h5_close_id(a);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}

/* ---- opening ------------------------------------------------------------- */

/* Opens `path` in the file and checks it is a dataset. */
static int open_dataset(mdsd_dump *d, const char *path, hid_t dapl, hid_t *out, mdsd_err *err)
{
    *out = -1;
    if (!path_exists(d->h5->file, path))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: missing dataset %s", d->path, path);
    hid_t o = H5Oopen(d->h5->file, path, H5P_DEFAULT);
    int is_ds = o >= 0 && H5Iget_type(o) == H5I_DATASET;
    h5_close_id(o);
    if (!is_ds) {
        H5Eclear2(H5E_DEFAULT);
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s is not a dataset", d->path, path);
    }
    *out = H5Dopen2(d->h5->file, path, dapl);
    if (*out < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "%s: cannot open dataset %s (%s)", d->path, path,
                         h5_reason(why, sizeof why));
    }
    return MDSD_OK;
}

/* Rank and dimensions of a dataset; error if the rank is not `rank`. */
static int dataset_dims(mdsd_dump *d, hid_t ds, const char *path, int rank, hsize_t *dims,
                        mdsd_err *err)
{
    hid_t s = H5Dget_space(ds);
    int r = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
    if (r == rank)
        H5Sget_simple_extent_dims(s, dims, NULL);
    h5_close_id(s);
    if (r != rank)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s has rank %d, expected %d (%s)", d->path, path,
                         r, rank, rank == 2 ? "[rows x vocab]" : "[rows]");
    return MDSD_OK;
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_ARRAY: return "array";
    case H5T_VLEN: return "variable-length";
    default: return "other";
    }
}

/* The logits dtype: float16/float32 HDF5 floats, or uint16 marked bfloat16. */
static int logits_dtype(mdsd_dump *d, hid_t ds, const char *path, mdsd_dtype *out,
                        mdsd_err *err)
{
    hid_t t = H5Dget_type(ds);
    H5T_class_t c = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    H5T_sign_t sign = c == H5T_INTEGER ? H5Tget_sign(t) : H5T_SGN_ERROR;
    size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    if (c == H5T_FLOAT)
        H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize);
    h5_close_id(t);
    char mark[64];
    if (c == H5T_FLOAT && size == 4) {
        *out = MDSD_DTYPE_FLOAT32;
    } else if (c == H5T_FLOAT && size == 2 && esize == 5 && msize == 10) {
        *out = MDSD_DTYPE_FLOAT16;
    } else if (c == H5T_INTEGER && size == 2 && sign == H5T_SGN_NONE) {
        if (read_attr_string(ds, "dtype", mark, sizeof mark) != 1 || strcmp(mark, "bfloat16"))
            return mdsd_fail(err, MDSD_EFORMAT,
                             "%s: %s is uint16 but lacks the attribute dtype = \"bfloat16\"",
                             d->path, path);
        *out = MDSD_DTYPE_BFLOAT16;
    } else {
        return mdsd_fail(err, MDSD_EFORMAT,
                         "%s: %s has dtype %s of %zu bytes; logits must be float16, float32, or "
                         "bfloat16 stored as uint16 with attribute dtype = \"bfloat16\"",
                         d->path, path, class_name(c), size);
    }
    return MDSD_OK;
}

/* Chunk rows and deflate level, from the dataset's creation properties. */
static void chunk_layout(hid_t ds, size_t *chunk_rows, int *gzip)
{
    hid_t p = H5Dget_create_plist(ds);
    *chunk_rows = 0;
    *gzip = 0;
    if (p >= 0 && H5Pget_layout(p) == H5D_CHUNKED) {
        hsize_t c[2];
        if (H5Pget_chunk(p, 2, c) == 2)
            *chunk_rows = (size_t)c[0];
        int nf = H5Pget_nfilters(p);
        for (int i = 0; i < nf; i++) {
            unsigned flags, cd[8];
            size_t ncd = 8;
            char name[64];
            if (H5Pget_filter2(p, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL) ==
                    H5Z_FILTER_DEFLATE)
                *gzip = ncd > 0 ? (int)cd[0] : 1;
        }
    }
    h5_close_id(p);
    H5Eclear2(H5E_DEFAULT);
}

static size_t dtype_bytes(mdsd_dtype t)
{
    return t == MDSD_DTYPE_FLOAT32 ? 4 : 2;
}

/* Opens one logits dataset: dtype, rank 2, its chunk layout, and reopens it
 * with a chunk cache that holds one whole chunk, so that reading a block
 * that is not chunk-aligned decompresses each chunk once. */
static int open_logits(mdsd_dump *d, mdsd_dump_model *m, hid_t group, hid_t *out, hsize_t *dims,
                       mdsd_err *err)
{
    int rc = open_dataset(d, m->path, H5P_DEFAULT, out, err);
    if (rc == MDSD_OK)
        rc = dataset_dims(d, *out, m->path, 2, dims, err);
    if (rc == MDSD_OK)
        rc = logits_dtype(d, *out, m->path, &m->dtype, err);
    if (rc)
        return rc;
    double v;
    m->vocab_size = read_attr_number(group, "vocab_size", &v, 1) == 1 ? (long long)v : -1;
    m->dropped_padding = read_attr_number(group, "dropped_padding", &v, 1) == 1 ? (long long)v : -1;
    read_attr_string(group, "model", m->model, sizeof m->model);
    chunk_layout(*out, &m->chunk_rows, &m->gzip);
    if (m->chunk_rows > 0) {
        size_t bytes = m->chunk_rows * (size_t)dims[1] * dtype_bytes(m->dtype);
        hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
        H5Pset_chunk_cache(dapl, 521, bytes + 1024 > (1u << 20) ? bytes + 1024 : (1u << 20), 1.0);
        h5_close_id(*out);
        rc = open_dataset(d, m->path, dapl, out, err);
        h5_close_id(dapl);
    }
    return rc;
}

typedef struct {
    char (*names)[MDSD_DUMP_NAME_MAX];
    size_t n;
    int too_long;
    int failed;
} name_list;

static herr_t draft_name_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g;
    (void)info;
    name_list *l = data;
    if (strlen(name) >= MDSD_DUMP_NAME_MAX) {
        l->too_long = 1;
        return 1;
    }
    void *grown = realloc(l->names, (l->n + 1) * sizeof *l->names);
    if (!grown) {
        l->failed = 1;
        return -1;
    }
    l->names = grown;
    strcpy(l->names[l->n++], name);
    return 0;
}

static int open_drafts(mdsd_dump *d, mdsd_err *err)
{
    if (!path_exists(d->h5->file, "/drafts"))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: missing group /drafts (a dump needs at least one drafter)",
                         d->path);
    hid_t g = H5Gopen2(d->h5->file, "/drafts", H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        return mdsd_fail(err, MDSD_EFORMAT, "%s: /drafts is not a group", d->path);
    }
    name_list l = {NULL, 0, 0, 0};
    H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, draft_name_cb, &l);
    H5Eclear2(H5E_DEFAULT);
    int rc = MDSD_OK;
    if (l.failed)
        rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    else if (l.too_long)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: a drafter name under /drafts is %d characters or longer",
                       d->path, MDSD_DUMP_NAME_MAX);
    else if (l.n == 0)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: /drafts holds no drafter (missing dataset /drafts/<name>/logits)",
                       d->path);
    if (rc == MDSD_OK) {
        d->drafts = calloc(l.n, sizeof *d->drafts);
        d->h5->drafts = malloc(l.n * sizeof *d->h5->drafts);
        if (!d->drafts || !d->h5->drafts)
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
        for (size_t j = 0; rc == MDSD_OK && j < l.n; j++)
            d->h5->drafts[j] = -1;
    }
    for (size_t j = 0; rc == MDSD_OK && j < l.n; j++) {
        mdsd_dump_model *m = &d->drafts[j];
        d->n_drafts = j + 1;
        snprintf(m->name, sizeof m->name, "%s", l.names[j]);
        snprintf(m->path, sizeof m->path, "/drafts/%s/logits", l.names[j]);
        hid_t mg = H5Gopen2(g, l.names[j], H5P_DEFAULT);
        if (mg < 0) {
            H5Eclear2(H5E_DEFAULT);
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: /drafts/%s is not a group", d->path, m->name);
            break;
        }
        hsize_t dims[2];
        rc = open_logits(d, m, mg, &d->h5->drafts[j], dims, err);
        h5_close_id(mg);
        if (rc == MDSD_OK && dims[1] != d->V)
            rc = mdsd_fail(err, MDSD_EFORMAT,
                           "%s: vocab mismatch: %s has %llu columns, /target/logits has %zu",
                           d->path, m->path, (unsigned long long)dims[1], d->V);
        if (rc == MDSD_OK && dims[0] != d->N)
            rc = mdsd_fail(err, MDSD_EFORMAT,
                           "%s: length mismatch: %s has %llu rows, /target/logits has %zu",
                           d->path, m->path, (unsigned long long)dims[0], d->N);
    }
    free(l.names);
    h5_close_id(g);
    return rc;
}

static int open_meta(mdsd_dump *d, const char *path, hid_t *out, mdsd_err *err)
{
    hsize_t dims[1];
    int rc = open_dataset(d, path, H5P_DEFAULT, out, err);
    if (rc == MDSD_OK)
        rc = dataset_dims(d, *out, path, 1, dims, err);
    if (rc)
        return rc;
    hid_t t = H5Dget_type(*out);
    H5T_class_t c = H5Tget_class(t);
    h5_close_id(t);
    if (c != H5T_INTEGER)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s has dtype %s, expected int32", d->path, path,
                         class_name(c));
    if (dims[0] != d->N)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: length mismatch: %s has %llu rows, /target/logits has %zu",
                         d->path, path, (unsigned long long)dims[0], d->N);
    return MDSD_OK;
}

static int open_root_attrs(mdsd_dump *d, mdsd_err *err)
{
    hid_t root = H5Gopen2(d->h5->file, "/", H5P_DEFAULT);
    double v;
    int got = read_attr_number(root, "mdsd_format", &v, 1);
    int rc = MDSD_OK;
    if (got == 0)
        rc = mdsd_fail(err, MDSD_EFORMAT,
                       "%s: attribute mdsd_format missing on '/': not an mdsd logit dump (see data/README.md)",
                       d->path);
    else if (got < 0)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: attribute mdsd_format is not one integer", d->path);
    else if (v != MDSD_DUMP_FORMAT)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: dump format version %g is not supported (this mdsd reads version %d)",
                       d->path, v, MDSD_DUMP_FORMAT);
    d->format = (int)v;
    if (rc == MDSD_OK) {
        d->generation_temperature = NAN;
        if (read_attr_number(root, "generation_temperature", &v, 0) == 1)
            d->generation_temperature = v;
        read_attr_string(root, "creator", d->creator, sizeof d->creator);
        read_attr_string(root, "created", d->created, sizeof d->created);
        read_attr_string(root, "dataset", d->dataset, sizeof d->dataset);
        read_attr_string(root, "tokenizer", d->tokenizer, sizeof d->tokenizer);
        attr_iter it = {d, 0};
        H5Aiterate2(root, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &it);
        H5Eclear2(H5E_DEFAULT);
        if (it.failed)
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    }
    h5_close_id(root);
    return rc;
}

static int check_vocab_attr(mdsd_dump *d, mdsd_err *err)
{
    hid_t root = H5Gopen2(d->h5->file, "/", H5P_DEFAULT);
    double v;
    int got = read_attr_number(root, "vocab_size", &v, 1);
    h5_close_id(root);
    if (got == 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: attribute vocab_size missing on '/'", d->path);
    if (got < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: attribute vocab_size on '/' is not one integer", d->path);
    if (v != (double)d->V)
        return mdsd_fail(err, MDSD_EFORMAT,
                         "%s: vocab mismatch: attribute vocab_size = %.0f but /target/logits has %zu columns",
                         d->path, v, d->V);
    return MDSD_OK;
}

/* Counts the runs of equal sample_id, streaming /sample_id in blocks. */
static int count_samples(mdsd_dump *d, mdsd_err *err)
{
    int *ids = malloc(META_BLOCK * sizeof *ids);
    if (!ids)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    int prev = 0, rc = MDSD_OK;
    size_t run = 0;
    d->n_samples = 0;
    d->max_sample_rows = 0;
    for (size_t r0 = 0; r0 < d->N && rc == MDSD_OK; r0 += META_BLOCK) {
        size_t rows = d->N - r0 < META_BLOCK ? d->N - r0 : META_BLOCK;
        rc = mdsd_dump_read_meta(d, r0, rows, NULL, ids, NULL, err);
        for (size_t i = 0; rc == MDSD_OK && i < rows; i++) {
            if (r0 + i == 0 || ids[i] != prev) {
                d->n_samples++;
                run = 0;
            }
            prev = ids[i];
            if (++run > d->max_sample_rows)
                d->max_sample_rows = run;
        }
    }
    free(ids);
    return rc;
}

static int open_file(mdsd_dump *d, mdsd_err *err)
{
    struct stat st;
    if (stat(d->path, &st) != 0)
        return mdsd_fail(err, MDSD_EIO, "cannot open dump '%s': %s", d->path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return mdsd_fail(err, MDSD_EIO, "cannot open dump '%s': not a regular file", d->path);
    FILE *f = fopen(d->path, "rb");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot open dump '%s': %s", d->path, strerror(errno));
    fclose(f);
    if (st.st_size == 0)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is an empty file, not an HDF5 dump", d->path);
    htri_t is = H5Fis_hdf5(d->path);
    H5Eclear2(H5E_DEFAULT);
    if (is <= 0)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is not an HDF5 file (no HDF5 signature)", d->path);
    d->h5->file = H5Fopen(d->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (d->h5->file < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is a truncated or corrupt HDF5 file (%s)", d->path,
                         h5_reason(why, sizeof why));
    }
    return MDSD_OK;
}

int mdsd_dump_open(const char *path, mdsd_dump **out, mdsd_err *err)
{
    h5_quiet();
    *out = NULL;
    mdsd_dump *d = calloc(1, sizeof *d);
    if (!d || !(d->h5 = malloc(sizeof *d->h5))) {
        free(d);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    d->h5->file = d->h5->target = d->h5->tokens = d->h5->sample_id = d->h5->position = -1;
    d->h5->drafts = NULL;
    if (strlen(path) >= sizeof d->path) {
        mdsd_dump_close(d);
        return mdsd_fail(err, MDSD_EINVAL, "dump path too long");
    }
    strcpy(d->path, path);
    int rc = open_file(d, err);
    if (rc == MDSD_OK)
        rc = open_root_attrs(d, err);
    if (rc == MDSD_OK) {
        mdsd_dump_model *m = &d->target;
        strcpy(m->name, "target");
        strcpy(m->path, "/target/logits");
        hid_t g = path_exists(d->h5->file, "/target") ? H5Gopen2(d->h5->file, "/target", H5P_DEFAULT) : -1;
        H5Eclear2(H5E_DEFAULT);
        hsize_t dims[2];
        rc = open_logits(d, m, g, &d->h5->target, dims, err);
        h5_close_id(g);
        d->N = rc ? 0 : (size_t)dims[0];
        d->V = rc ? 0 : (size_t)dims[1];
        if (rc == MDSD_OK && d->N == 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: empty dump: /target/logits has 0 rows", d->path);
        if (rc == MDSD_OK && d->V == 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: /target/logits has 0 columns (V = 0)", d->path);
    }
    if (rc == MDSD_OK)
        rc = check_vocab_attr(d, err);
    if (rc == MDSD_OK)
        rc = open_drafts(d, err);
    if (rc == MDSD_OK)
        rc = open_meta(d, "/tokens", &d->h5->tokens, err);
    if (rc == MDSD_OK)
        rc = open_meta(d, "/sample_id", &d->h5->sample_id, err);
    if (rc == MDSD_OK)
        rc = open_meta(d, "/position", &d->h5->position, err);
    if (rc == MDSD_OK)
        rc = count_samples(d, err);
    if (rc) {
        mdsd_dump_close(d);
        return rc;
    }
    *out = d;
    return MDSD_OK;
}

void mdsd_dump_close(mdsd_dump *d)
{
    if (!d)
        return;
    if (d->h5) {
        h5_close_id(d->h5->target);
        for (size_t j = 0; d->h5->drafts && j < d->n_drafts; j++)
            h5_close_id(d->h5->drafts[j]);
        h5_close_id(d->h5->tokens);
        h5_close_id(d->h5->sample_id);
        h5_close_id(d->h5->position);
        h5_close_id(d->h5->file);
        free(d->h5->drafts);
        free(d->h5);
    }
    H5Eclear2(H5E_DEFAULT);
    free(d->drafts);
    free(d->attrs);
    free(d);
}

int mdsd_dump_find_draft(const mdsd_dump *d, const char *name)
{
    for (size_t j = 0; j < d->n_drafts; j++)
        if (!strcmp(d->drafts[j].name, name))
            return (int)j;
    return -1;
}

const mdsd_dump_model *mdsd_dump_model_at(const mdsd_dump *d, int which)
{
    if (which == MDSD_DUMP_TARGET)
        return &d->target;
    if (which < 0 || (size_t)which >= d->n_drafts)
        return NULL;
    return &d->drafts[which];
}

/* ---- reading ------------------------------------------------------------- */

static int check_range(const mdsd_dump *d, size_t row0, size_t rows, mdsd_err *err)
{
    if (row0 > d->N || rows > d->N - row0)
        return mdsd_fail(err, MDSD_EINVAL, "%s: rows %zu..%zu are outside the dump's %zu rows", d->path,
                         row0, row0 + rows, d->N);
    return MDSD_OK;
}

/* Reads a hyperslab of rows [row0, row0 + rows) of a rank-1 or rank-2
 * dataset with memory type mtype. */
static int read_rows(const mdsd_dump *d, hid_t ds, const char *path, int rank, size_t row0,
                     size_t rows, hid_t mtype, void *out, mdsd_err *err)
{
    if (rows == 0)
        return MDSD_OK;
    hsize_t start[2] = {row0, 0}, count[2] = {rows, d->V};
    hid_t fs = H5Dget_space(ds);
    /* the memory space has the selection's shape: a flat one makes HDF5 map
     * every element to its chunk one at a time (~20x slower) */
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t st = fs < 0 || ms < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (st >= 0)
        st = H5Dread(ds, mtype, ms, fs, H5P_DEFAULT, out);
    h5_close_id(fs);
    h5_close_id(ms);
    if (st < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "%s: cannot read rows %zu..%zu of %s: corrupt file? (%s)",
                         d->path, row0, row0 + rows - 1, path, h5_reason(why, sizeof why));
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
    hid_t ds = which == MDSD_DUMP_TARGET ? d->h5->target : d->h5->drafts[which];
    if (m->dtype == MDSD_DTYPE_FLOAT32)
        return read_rows(d, ds, m->path, 2, row0, rows, H5T_NATIVE_FLOAT, out, err);
    /* 16-bit: read the raw bit patterns (memory type = file type, so HDF5
     * converts nothing) into the front half of out, then widen from the back
     * so that nothing is overwritten before it is read. float16 is widened
     * here rather than by HDF5's conversion, which measured ~50 ns per value
     * (~15x slower than the whole read) and is the bottleneck for V = 32000;
     * tests/test_dump.c checks this widening against HDF5's conversion on all
     * 65536 bit patterns. */
    hid_t mtype = m->dtype == MDSD_DTYPE_FLOAT16 ? H5Dget_type(ds) : H5Tcopy(H5T_NATIVE_USHORT);
    rc = read_rows(d, ds, m->path, 2, row0, rows, mtype, out, err);
    h5_close_id(mtype);
    if (rc)
        return rc;
    const unsigned char *bytes = (const unsigned char *)out;
    if (m->dtype == MDSD_DTYPE_FLOAT16) {
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
    if (rc == MDSD_OK && tokens)
        rc = read_rows(d, d->h5->tokens, "/tokens", 1, row0, rows, H5T_NATIVE_INT, tokens, err);
    if (rc == MDSD_OK && sample_id)
        rc = read_rows(d, d->h5->sample_id, "/sample_id", 1, row0, rows, H5T_NATIVE_INT, sample_id, err);
    if (rc == MDSD_OK && position)
        rc = read_rows(d, d->h5->position, "/position", 1, row0, rows, H5T_NATIVE_INT, position, err);
    return rc;
}

/* One row: no NaN or +inf, at least one finite value. */
static int check_row(const mdsd_dump *d, const mdsd_dump_model *m, size_t row, const float *x,
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
        int rc = check_row(d, m, row0 + r, logits + r * d->V, err);
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
        b->target = malloc(cap * d->V * sizeof *b->target);
        b->tokens = malloc(cap * sizeof *b->tokens);
        b->sample_id = malloc(cap * sizeof *b->sample_id);
        b->position = malloc(cap * sizeof *b->position);
        ok = b->which && b->draft && b->target && b->tokens && b->sample_id && b->position;
        for (size_t j = 0; ok && j < n_drafts; j++) {
            b->which[j] = which ? which[j] : (int)j;
            ok = (b->draft[j] = malloc(cap * d->V * sizeof **b->draft)) != NULL;
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
    for (size_t j = 0; b->draft && j < b->n_drafts; j++)
        free(b->draft[j]);
    free(b->draft);
    free(b->which);
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
    if (rc == MDSD_OK)
        rc = mdsd_dump_read_logits(d, MDSD_DUMP_TARGET, row0, rows, b->target, err);
    if (rc == MDSD_OK && check)
        rc = mdsd_dump_check_logits(d, MDSD_DUMP_TARGET, row0, rows, b->target, err);
    for (size_t j = 0; rc == MDSD_OK && j < b->n_drafts; j++) {
        rc = mdsd_dump_read_logits(d, b->which[j], row0, rows, b->draft[j], err);
        if (rc == MDSD_OK && check)
            rc = mdsd_dump_check_logits(d, b->which[j], row0, rows, b->draft[j], err);
    }
    if (rc == MDSD_OK)
        b->rows = rows;
    return rc;
}

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
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_dump_block *b = mdsd_dump_block_alloc(d, cap, d->n_drafts, NULL, &e);
    sample_run *runs = malloc((d->n_samples + 1) * sizeof *runs);
    if (!b || !runs) {
        mdsd_dump_block_free(b);
        free(runs);
        return !b ? mdsd_fail_from(err, &e, d->path)
                  : mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
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
            rc = check_row(d, &d->target, r0 + i, b->target + i * d->V, err);
            for (size_t j = 0; rc == MDSD_OK && j < d->n_drafts; j++)
                rc = check_row(d, &d->drafts[j], r0 + i, b->draft[j] + i * d->V, err);
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

/* ---- writing ------------------------------------------------------------- */

struct mdsd_dump_writer {
    char path[4096], tmp[4096];
    size_t V, n_drafts, N, chunk_rows;
    int gzip;
    mdsd_dtype dtype;
    hid_t file, target, *drafts, tokens, sample_id, position;
    hid_t ftype;                 /* file type of the logits */
    unsigned short *conv;        /* [conv_cap] 16-bit patterns */
    size_t conv_cap;
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

static herr_t write_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t st = a < 0 ? -1 : H5Awrite(a, mtype, v);
    h5_close_id(a);
    h5_close_id(s);
    return st;
}

static herr_t write_attr_string(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char *v = value ? value : "";
    herr_t st = write_attr(obj, name, t, t, &v);
    h5_close_id(t);
    return st;
}

static herr_t write_attr_i64(hid_t obj, const char *name, long long v)
{
    return write_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &v);
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
    h5_close_id(dapl);
    h5_close_id(dcpl);
    h5_close_id(s);
    return ds;
}

static int writer_fail(mdsd_dump_writer *w, mdsd_err *err, const char *what)
{
    char why[256];
    return mdsd_fail(err, MDSD_EIO, "cannot write dump '%s': %s (%s)", w->path, what,
                     h5_reason(why, sizeof why));
}

static int create_model(mdsd_dump_writer *w, const char *group, const char *model,
                        long long vocab_size, hid_t *ds, mdsd_err *err)
{
    hid_t g = H5Gcreate2(w->file, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return writer_fail(w, err, group);
    int ok = write_attr_string(g, "model", model) >= 0 && write_attr_i64(g, "vocab_size", vocab_size) >= 0;
    *ds = ok ? create_rows(g, "logits", w->ftype, 2, w->V, w->chunk_rows, w->gzip,
                           dtype_bytes(w->dtype))
             : -1;
    if (*ds >= 0 && w->dtype == MDSD_DTYPE_BFLOAT16 && write_attr_string(*ds, "dtype", "bfloat16") < 0) {
        h5_close_id(*ds);
        *ds = -1;
    }
    h5_close_id(g);
    return *ds < 0 ? writer_fail(w, err, group) : MDSD_OK;
}

static int valid_name(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strlen(s) < MDSD_DUMP_NAME_MAX;
}

static int writer_setup(mdsd_dump_writer *w, const mdsd_dump_spec *s, mdsd_err *err)
{
    w->ftype = s->dtype == MDSD_DTYPE_FLOAT32 ? H5Tcopy(H5T_IEEE_F32LE)
             : s->dtype == MDSD_DTYPE_FLOAT16 ? half_type() : H5Tcopy(H5T_STD_U16LE);
    w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
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
    int ok = write_attr(root, "mdsd_format", H5T_STD_I32LE, H5T_NATIVE_INT, &fmt) >= 0 &&
             write_attr_string(root, "creator", s->creator ? s->creator : creator) >= 0 &&
             write_attr_string(root, "created", created) >= 0 &&
             write_attr_string(root, "dataset", s->dataset) >= 0 &&
             write_attr_string(root, "tokenizer", s->tokenizer) >= 0 &&
             write_attr(root, "generation_temperature", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                        &s->generation_temperature) >= 0 &&
             write_attr_i64(root, "vocab_size", (long long)s->V) >= 0;
    for (size_t k = 0; ok && k < s->n_extra; k++)
        ok = write_attr_string(root, s->extra_names[k], s->extra_values[k]) >= 0;
    h5_close_id(root);
    if (!ok)
        return writer_fail(w, err, "attributes of '/'");
    long long tv = s->target_vocab_size > 0 ? s->target_vocab_size : (long long)s->V;
    int rc = create_model(w, "/target", s->target_model, tv, &w->target, err);
    hid_t g = rc ? -1 : H5Gcreate2(w->file, "/drafts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    h5_close_id(g);
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
    h5_quiet();
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
    w->gzip = s->gzip;
    size_t row_bytes = s->V * dtype_bytes(s->dtype);
    w->chunk_rows = s->chunk_rows ? s->chunk_rows : MDSD_DUMP_CHUNK_ROWS;
    if (w->chunk_rows * row_bytes > MAX_CHUNK_BYTES)
        w->chunk_rows = MAX_CHUNK_BYTES / row_bytes ? MAX_CHUNK_BYTES / row_bytes : 1;
    int rc = MDSD_OK;
    if (strlen(path) >= sizeof w->path)
        rc = mdsd_fail(err, MDSD_EINVAL, "output path too long: '%s'", path);
    else
        strcpy(w->path, path);
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
        if (w->dtype == MDSD_DTYPE_FLOAT32)
            continue;
        unsigned short h = w->dtype == MDSD_DTYPE_FLOAT16 ? mdsd_float_to_half(x[i])
                                                          : mdsd_float_to_bfloat16(x[i]);
        if (h == 0x7c00 && w->dtype == MDSD_DTYPE_FLOAT16)
            return mdsd_fail(err, MDSD_EINVAL, "dump '%s': %s row %zu logit %zu = %g overflows float16",
                             w->path, what, w->N + i / w->V, i % w->V, x[i]);
        if (h == 0x7f80 && w->dtype == MDSD_DTYPE_BFLOAT16)
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
    h5_close_id(fs);
    h5_close_id(ms);
    return st < 0 ? writer_fail(w, err, what) : MDSD_OK;
}

static int append_logits(mdsd_dump_writer *w, hid_t ds, const char *what, size_t rows,
                         const float *x, mdsd_err *err)
{
    if (w->dtype != MDSD_DTYPE_FLOAT32 && w->conv_cap < rows * w->V) {
        free(w->conv);
        w->conv_cap = 0;
        if (!(w->conv = malloc(rows * w->V * sizeof *w->conv)))
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        w->conv_cap = rows * w->V;
    }
    int rc = convert_rows(w, what, rows, x, err);
    if (rc)
        return rc;
    if (w->dtype == MDSD_DTYPE_FLOAT32)
        return append_rows(w, ds, 2, rows, H5T_NATIVE_FLOAT, x, what, err);
    return append_rows(w, ds, 2, rows, w->dtype == MDSD_DTYPE_FLOAT16 ? w->ftype : H5T_NATIVE_USHORT,
                       w->conv, what, err);
}

int mdsd_dump_writer_append(mdsd_dump_writer *w, size_t rows, const float *target,
                            const float *const *drafts, const int *tokens,
                            const int *sample_id, const int *position, mdsd_err *err)
{
    if (rows == 0)
        return MDSD_OK;
    int rc = append_logits(w, w->target, "/target/logits", rows, target, err);
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
        h5_close_id(*ids[k]);
        *ids[k] = -1;
    }
    for (size_t j = 0; j < w->n_drafts; j++) {
        h5_close_id(w->drafts[j]);
        w->drafts[j] = -1;
    }
    if (w->file >= 0)
        ok = H5Fclose(w->file) >= 0;
    w->file = -1;
    return ok;
}

static void writer_free(mdsd_dump_writer *w)
{
    free(w->drafts);
    free(w->conv);
    free(w);
}

int mdsd_dump_writer_commit(mdsd_dump_writer *w, mdsd_err *err)
{
    if (w->N == 0) {
        mdsd_fail(err, MDSD_EINVAL, "dump '%s': no rows were written (an empty dump is invalid)", w->path);
        mdsd_dump_writer_abort(w);
        return MDSD_EINVAL;
    }
    int rc = MDSD_OK;
    if (!writer_close(w))
        rc = writer_fail(w, err, "closing the file");
    int fd = rc ? -1 : open(w->tmp, O_RDONLY);
    if (rc == MDSD_OK && (fd < 0 || fsync(fd) != 0))
        rc = mdsd_fail(err, MDSD_EIO, "cannot sync '%s': %s", w->tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc == MDSD_OK)
        rc = mdsd_publish(w->tmp, w->path, err);
    else
        unlink(w->tmp);
    writer_free(w);
    return rc;
}

void mdsd_dump_writer_abort(mdsd_dump_writer *w)
{
    if (!w)
        return;
    writer_close(w);
    H5Eclear2(H5E_DEFAULT);
    if (w->tmp[0])
        unlink(w->tmp);
    writer_free(w);
}
