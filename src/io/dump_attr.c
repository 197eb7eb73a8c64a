/* dump_attr.c - reading a dump's HDF5 attributes: strings, numbers, the
 * root attributes `mdsd info` lists, mdsd_format and vocab_size. */
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

/* What HDF5 is asked before any attribute's value is read: its class, its
 * element size and its element count, each bounded. A corrupt attribute
 * heap can still make libhdf5 itself fail or misbehave inside H5Aopen,
 * H5Aget_type or H5Aread (data/README.md, "What HDF5 decides"); what we can
 * check, we check before asking it for bytes. */
#define ATTR_MAX_STRING (1u << 16) /* bytes of a fixed-length string attribute */
#define ATTR_MAX_POINTS (1u << 20) /* elements of any attribute */
#define ROOT_MAX_ATTRS 4096        /* attributes on '/' */

typedef struct {
    H5T_class_t cls;
    size_t size;      /* bytes per element (H5Tget_size) */
    hssize_t points;  /* elements, -1 if unknown */
    int vlen_string;  /* variable-length string */
} attr_shape;

/* Number of elements of an attribute (or -1). */
static hssize_t attr_points(hid_t a)
{
    hid_t s = H5Aget_space(a);
    hssize_t n = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
    dump_h5_close(s);
    return n;
}

/* The class, size and count of an open attribute; 0 if HDF5 can say, with
 * sane values (count <= ATTR_MAX_POINTS), else -1. */
static int attr_probe(hid_t a, hid_t t, attr_shape *sh)
{
    sh->cls = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    sh->size = t < 0 ? 0 : H5Tget_size(t);
    sh->points = attr_points(a);
    sh->vlen_string = sh->cls == H5T_STRING && H5Tis_variable_str(t) > 0;
    return sh->cls == H5T_NO_CLASS || sh->size == 0 || sh->points < 0 ||
                   sh->points > (hssize_t)ATTR_MAX_POINTS
               ? -1
               : 0;
}

/* Opens attribute `name` of obj and its type; 0 if absent, 1 if open. */
static int attr_open(hid_t obj, const char *name, hid_t *a, hid_t *t)
{
    *a = *t = -1;
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    *a = H5Aopen(obj, name, H5P_DEFAULT);
    *t = *a < 0 ? -1 : H5Aget_type(*a);
    return 1;
}

/* Reads a string attribute into buf (fixed or variable length). 0 if absent
 * (buf = ""), 1 if read, -1 if present but not a single string of at most
 * ATTR_MAX_STRING bytes. The bytes are copied as stored (they need not be
 * UTF-8: json.c escapes what is not). */
int dump_attr_string(hid_t obj, const char *name, char *buf, size_t size)
{
    buf[0] = '\0';
    hid_t a, t;
    if (!attr_open(obj, name, &a, &t))
        return 0;
    int rc = -1;
    attr_shape sh;
    if (t >= 0 && attr_probe(a, t, &sh) == 0 && sh.cls == H5T_STRING && sh.points == 1 &&
        (sh.vlen_string || sh.size <= ATTR_MAX_STRING)) {
        hid_t m = H5Tcopy(t);
        if (sh.vlen_string) {
            char *s = NULL;
            if (m >= 0 && H5Aread(a, m, &s) >= 0) {
                snprintf(buf, size, "%s", s ? s : "");
                rc = 1;
            }
            if (s)
                H5free_memory(s);
        } else {
            char *s = calloc(sh.size + 1, 1);
            if (s && m >= 0 && H5Aread(a, m, s) >= 0) {
                size_t len = strnlen(s, sh.size);
                while (len > 0 && s[len - 1] == ' ' && H5Tget_strpad(t) == H5T_STR_SPACEPAD)
                    len--;
                snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), s);
                rc = 1;
            }
            free(s);
        }
        dump_h5_close(m);
    }
    dump_h5_close(t);
    dump_h5_close(a);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* Reads one integer attribute (integer class, at most 8 bytes). 0 absent,
 * 1 read, -1 present but not one integer. */
int dump_attr_integer(hid_t obj, const char *name, long long *out)
{
    hid_t a, t;
    if (!attr_open(obj, name, &a, &t))
        return 0;
    int rc = -1;
    attr_shape sh;
    if (t >= 0 && attr_probe(a, t, &sh) == 0 && sh.cls == H5T_INTEGER && sh.size <= 8 &&
        sh.points == 1 && H5Aread(a, H5T_NATIVE_LLONG, out) >= 0)
        rc = 1;
    dump_h5_close(t);
    dump_h5_close(a);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* Reads a single numeric attribute (integer or float class) as double.
 * 0 absent, 1 read, -1 present but not one number (NaN is a number here;
 * callers that need a finite value check). */
int dump_attr_number(hid_t obj, const char *name, double *out, int want_integer)
{
    long long iv;
    int got = dump_attr_integer(obj, name, &iv);
    if (got == 1) {
        *out = (double)iv;
        return 1;
    }
    if (got == 0 || want_integer)
        return got;
    hid_t a, t;
    attr_open(obj, name, &a, &t);
    int rc = -1;
    attr_shape sh;
    if (t >= 0 && attr_probe(a, t, &sh) == 0 && sh.cls == H5T_FLOAT && sh.size <= 16 &&
        sh.points == 1 && H5Aread(a, H5T_NATIVE_DOUBLE, out) >= 0)
        rc = 1;
    dump_h5_close(t);
    dump_h5_close(a);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* Renders any attribute as text for `mdsd info`. */
static void render_attr(hid_t a, char *buf, size_t size)
{
    hid_t t = H5Aget_type(a);
    attr_shape sh;
    int sane = attr_probe(a, t, &sh) == 0;
    H5T_class_t c = sh.cls;
    hssize_t n = sh.points;
    buf[0] = '\0';
    if (!sane) {
        snprintf(buf, size, "(unreadable attribute)");
        dump_h5_close(t);
        return;
    }
    if (c == H5T_STRING && n == 1) {
        dump_h5_close(t);
        return; /* filled by the caller through dump_attr_string */
    }
    if (((c == H5T_INTEGER && sh.size <= 8) || (c == H5T_FLOAT && sh.size <= 16)) && n >= 1 && n <= 64) {
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
            dump_h5_close(t);
            return;
        }
    }
    snprintf(buf, size, "(%lld values of HDF5 class %d)", (long long)n, (int)c);
    dump_h5_close(t);
}

typedef struct {
    mdsd_dump *d;
    int failed, too_many;
} attr_iter;

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    attr_iter *it = data;
    mdsd_dump *d = it->d;
    if (d->n_attrs >= ROOT_MAX_ATTRS) {
        it->too_many = 1;
        return 1;
    }
    mdsd_dump_attr *grown = realloc(d->attrs, (d->n_attrs + 1) * sizeof *grown);
    if (!grown) {
        it->failed = 1;
        return -1;
    }
    d->attrs = grown;
    mdsd_dump_attr *at = &d->attrs[d->n_attrs++];
    snprintf(at->name, sizeof at->name, "%s", name);
    if (dump_attr_string(loc, name, at->value, sizeof at->value) == 1)
        return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a >= 0)
        render_attr(a, at->value, sizeof at->value);
    dump_h5_close(a);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}


int dump_open_root_attrs(mdsd_dump *d, mdsd_err *err)
{
    hid_t root = H5Gopen2(d->h5->file, "/", H5P_DEFAULT);
    if (root < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "%s: cannot open the root group (%s)", d->path,
                         dump_h5_reason(why, sizeof why));
    }
    long long format = -1;
    double v;
    int got = dump_attr_integer(root, "mdsd_format", &format);
    int rc = MDSD_OK;
    if (got == 0)
        rc = mdsd_fail(err, MDSD_EFORMAT,
                       "%s: attribute mdsd_format missing on '/': not an mdsd logit dump (see data/README.md)",
                       d->path);
    else if (got < 0)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: attribute mdsd_format is not one integer", d->path);
    else if (format != MDSD_DUMP_FORMAT)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: dump format version %lld is not supported (this mdsd reads version %d)",
                       d->path, format, MDSD_DUMP_FORMAT);
    /* only a supported version is stored: a NaN or huge value never reaches an int */
    d->format = rc == MDSD_OK ? MDSD_DUMP_FORMAT : -1;
    if (rc == MDSD_OK) {
        d->generation_temperature = NAN;
        if (dump_attr_number(root, "generation_temperature", &v, 0) == 1 && isfinite(v))
            d->generation_temperature = v; /* NaN or inf reads as absent */
        dump_attr_string(root, "creator", d->creator, sizeof d->creator);
        dump_attr_string(root, "created", d->created, sizeof d->created);
        dump_attr_string(root, "dataset", d->dataset, sizeof d->dataset);
        dump_attr_string(root, "tokenizer", d->tokenizer, sizeof d->tokenizer);
        attr_iter it = {d, 0, 0};
        H5Aiterate2(root, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &it);
        H5Eclear2(H5E_DEFAULT);
        if (it.failed)
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
        else if (it.too_many)
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: more than %d attributes on '/': corrupt or not an mdsd dump",
                           d->path, ROOT_MAX_ATTRS);
    }
    dump_h5_close(root);
    return rc;
}

int dump_check_vocab_attr(mdsd_dump *d, mdsd_err *err)
{
    hid_t root = H5Gopen2(d->h5->file, "/", H5P_DEFAULT);
    long long v = -1;
    int got = root < 0 ? -1 : dump_attr_integer(root, "vocab_size", &v);
    dump_h5_close(root);
    if (got == 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: attribute vocab_size missing on '/'", d->path);
    if (got < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: attribute vocab_size on '/' is not one integer", d->path);
    if (v < 0 || (unsigned long long)v != d->V)
        return mdsd_fail(err, MDSD_EFORMAT,
                         "%s: vocab mismatch: attribute vocab_size = %lld but /target/logits has %zu columns",
                         d->path, v, d->V);
    return MDSD_OK;
}
