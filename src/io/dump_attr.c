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

/* Number of elements of an attribute (or -1). */
static hssize_t attr_points(hid_t a)
{
    hid_t s = H5Aget_space(a);
    hssize_t n = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
    dump_h5_close(s);
    return n;
}

/* Reads a string attribute into buf (fixed or variable length). 0 if absent
 * (buf = ""), 1 if read, -1 if present but not a single string. */
int dump_attr_string(hid_t obj, const char *name, char *buf, size_t size)
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
        dump_h5_close(m);
    }
    dump_h5_close(t);
    dump_h5_close(a);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* Reads a single numeric attribute (integer or float class) as double.
 * 0 absent, 1 read, -1 present but not one number. */
int dump_attr_number(hid_t obj, const char *name, double *out, int want_integer)
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
    dump_h5_close(t);
    dump_h5_close(a);
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
        dump_h5_close(t);
        return; /* filled by the caller through dump_attr_string */
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
            dump_h5_close(t);
            return;
        }
    }
    snprintf(buf, size, "(%lld values of HDF5 class %d)", (long long)n, (int)c);
    dump_h5_close(t);
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
    double v;
    int got = dump_attr_number(root, "mdsd_format", &v, 1);
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
        if (dump_attr_number(root, "generation_temperature", &v, 0) == 1)
            d->generation_temperature = v;
        dump_attr_string(root, "creator", d->creator, sizeof d->creator);
        dump_attr_string(root, "created", d->created, sizeof d->created);
        dump_attr_string(root, "dataset", d->dataset, sizeof d->dataset);
        dump_attr_string(root, "tokenizer", d->tokenizer, sizeof d->tokenizer);
        attr_iter it = {d, 0};
        H5Aiterate2(root, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &it);
        H5Eclear2(H5E_DEFAULT);
        if (it.failed)
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    }
    dump_h5_close(root);
    return rc;
}

int dump_check_vocab_attr(mdsd_dump *d, mdsd_err *err)
{
    hid_t root = H5Gopen2(d->h5->file, "/", H5P_DEFAULT);
    double v;
    int got = dump_attr_number(root, "vocab_size", &v, 1);
    dump_h5_close(root);
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
