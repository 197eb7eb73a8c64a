/* dump_format.c - the dump format's layout: dtype names, HDF5 helpers, and
 * opening a dump (datasets present with the right rank, dtype and lengths). */
#include "dump_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *mdsd_dtype_name(mdsd_dump_dtype t)
{
    switch (t) {
    case MDSD_DUMP_FLOAT16: return "float16";
    case MDSD_DUMP_BFLOAT16: return "bfloat16";
    case MDSD_DUMP_FLOAT32:
    default: return "float32";
    }
}

int mdsd_dtype_parse(const char *name, mdsd_dump_dtype *out, mdsd_err *err)
{
    static const mdsd_dump_dtype all[] = {MDSD_DUMP_FLOAT32, MDSD_DUMP_FLOAT16, MDSD_DUMP_BFLOAT16};
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(name, mdsd_dtype_name(all[i]))) {
            *out = all[i];
            return MDSD_OK;
        }
    return mdsd_fail(err, MDSD_EINVAL, "unknown dtype '%s' (float32, float16 or bfloat16)", name);
}

/* ---- HDF5 helpers -------------------------------------------------------- */

/* HDF5 prints its error stack to stderr by default; we report our own. */
void dump_h5_quiet(void)
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
const char *dump_h5_reason(char *buf, size_t size)
{
    reason_buf r = {buf, size};
    snprintf(buf, size, "unknown HDF5 error");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_cb, &r);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}

void dump_h5_close(hid_t id)
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
int dump_path_exists(hid_t file, const char *path)
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

/* ---- opening ------------------------------------------------------------- */

/* Opens `path` in the file and checks it is a dataset. */
static int open_dataset(mdsd_dump *d, const char *path, hid_t dapl, hid_t *out, mdsd_err *err)
{
    *out = -1;
    if (!dump_path_exists(d->h5->file, path))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: missing dataset %s", d->path, path);
    hid_t o = H5Oopen(d->h5->file, path, H5P_DEFAULT);
    int is_ds = o >= 0 && H5Iget_type(o) == H5I_DATASET;
    dump_h5_close(o);
    if (!is_ds) {
        H5Eclear2(H5E_DEFAULT);
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s is not a dataset", d->path, path);
    }
    *out = H5Dopen2(d->h5->file, path, dapl);
    if (*out < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "%s: cannot open dataset %s (%s)", d->path, path,
                         dump_h5_reason(why, sizeof why));
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
    dump_h5_close(s);
    if (r != rank)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s has rank %d, expected %d (%s)", d->path, path,
                         r, rank, rank == 2 ? "[rows x vocab]" : "[rows]");
    return MDSD_OK;
}

const char *dump_class_name(H5T_class_t c)
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
static int logits_dtype(mdsd_dump *d, hid_t ds, const char *path, mdsd_dump_dtype *out,
                        mdsd_err *err)
{
    hid_t t = H5Dget_type(ds);
    H5T_class_t c = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    H5T_sign_t sign = c == H5T_INTEGER ? H5Tget_sign(t) : H5T_SGN_ERROR;
    size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    if (c == H5T_FLOAT)
        H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize);
    dump_h5_close(t);
    char mark[64];
    if (c == H5T_FLOAT && size == 4) {
        *out = MDSD_DUMP_FLOAT32;
    } else if (c == H5T_FLOAT && size == 2 && esize == 5 && msize == 10) {
        *out = MDSD_DUMP_FLOAT16;
    } else if (c == H5T_INTEGER && size == 2 && sign == H5T_SGN_NONE) {
        if (dump_attr_string(ds, "dtype", mark, sizeof mark) != 1 || strcmp(mark, "bfloat16"))
            return mdsd_fail(err, MDSD_EFORMAT,
                             "%s: %s is uint16 but lacks the attribute dtype = \"bfloat16\"",
                             d->path, path);
        *out = MDSD_DUMP_BFLOAT16;
    } else {
        return mdsd_fail(err, MDSD_EFORMAT,
                         "%s: %s has dtype %s of %zu bytes; logits must be float16, float32, or "
                         "bfloat16 stored as uint16 with attribute dtype = \"bfloat16\"",
                         d->path, path, dump_class_name(c), size);
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
    dump_h5_close(p);
    H5Eclear2(H5E_DEFAULT);
}

size_t dump_dtype_bytes(mdsd_dump_dtype t)
{
    return t == MDSD_DUMP_FLOAT32 ? 4 : 2;
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
    if (dump_attr_integer(group, "vocab_size", &m->vocab_size) != 1)
        m->vocab_size = -1;
    if (dump_attr_integer(group, "dropped_padding", &m->dropped_padding) != 1)
        m->dropped_padding = -1;
    dump_attr_string(group, "model", m->model, sizeof m->model);
    chunk_layout(*out, &m->chunk_rows, &m->gzip);
    if (m->chunk_rows > 0) {
        size_t bytes = m->chunk_rows * (size_t)dims[1] * dump_dtype_bytes(m->dtype);
        hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
        H5Pset_chunk_cache(dapl, 521, bytes + 1024 > (1u << 20) ? bytes + 1024 : (1u << 20), 1.0);
        dump_h5_close(*out);
        rc = open_dataset(d, m->path, dapl, out, err);
        dump_h5_close(dapl);
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
    if (!dump_path_exists(d->h5->file, "/drafts"))
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
        dump_h5_close(mg);
        if (rc == MDSD_OK && dims[1] != d->V)
            rc = mdsd_fail(err, MDSD_EFORMAT,
                           "%s: vocab mismatch: %s has %llu columns, /target/logits has %zu "
                           "(models padded to different sizes? remake the dump with `mdsd-runner "
                           "import --drop-padding`, which keeps the common first columns)",
                           d->path, m->path, (unsigned long long)dims[1], d->V);
        if (rc == MDSD_OK && dims[0] != d->N)
            rc = mdsd_fail(err, MDSD_EFORMAT,
                           "%s: length mismatch: %s has %llu rows, /target/logits has %zu",
                           d->path, m->path, (unsigned long long)dims[0], d->N);
    }
    free(l.names);
    dump_h5_close(g);
    return rc;
}

int dump_open_row_dataset(mdsd_dump *d, const char *path, H5T_class_t want, const char *type,
                          hid_t *out, mdsd_err *err)
{
    hsize_t dims[1];
    int rc = open_dataset(d, path, H5P_DEFAULT, out, err);
    if (rc == MDSD_OK)
        rc = dataset_dims(d, *out, path, 1, dims, err);
    if (rc)
        return rc;
    hid_t t = H5Dget_type(*out);
    H5T_class_t c = H5Tget_class(t);
    dump_h5_close(t);
    if (c != want)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s has dtype %s, expected %s", d->path, path,
                         dump_class_name(c), type);
    if (dims[0] != d->N)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: length mismatch: %s has %llu rows, /target/logits has %zu",
                         d->path, path, (unsigned long long)dims[0], d->N);
    return MDSD_OK;
}

static int open_meta(mdsd_dump *d, const char *path, hid_t *out, mdsd_err *err)
{
    return dump_open_row_dataset(d, path, H5T_INTEGER, "int32", out, err);
}

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

/* Counts the runs of equal sample_id, streaming /sample_id in blocks, and
 * notes a sample whose rows are not contiguous (its id in two runs). */
int dump_count_samples(mdsd_dump *d, mdsd_err *err)
{
    int *ids = malloc(META_BLOCK * sizeof *ids);
    sample_run *runs = NULL;
    size_t n_runs = 0, cap_runs = 0;
    if (!ids)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    int prev = 0, rc = MDSD_OK;
    size_t run = 0;
    d->n_samples = 0;
    d->max_sample_rows = 0;
    d->sample_repeat_row = SIZE_MAX;
    for (size_t r0 = 0; r0 < d->N && rc == MDSD_OK; r0 += META_BLOCK) {
        size_t rows = d->N - r0 < META_BLOCK ? d->N - r0 : META_BLOCK;
        rc = mdsd_dump_read_meta(d, r0, rows, NULL, ids, NULL, err);
        for (size_t i = 0; rc == MDSD_OK && i < rows; i++) {
            if (r0 + i == 0 || ids[i] != prev) {
                if (n_runs == cap_runs) {
                    cap_runs = cap_runs ? 2 * cap_runs : 1024;
                    sample_run *grown = realloc(runs, cap_runs * sizeof *runs);
                    if (!grown) {
                        rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
                        break;
                    }
                    runs = grown;
                }
                runs[n_runs++] = (sample_run){ids[i], r0 + i};
                d->n_samples++;
                run = 0;
            }
            prev = ids[i];
            if (++run > d->max_sample_rows)
                d->max_sample_rows = run;
        }
    }
    if (rc == MDSD_OK && n_runs > 1) {
        qsort(runs, n_runs, sizeof *runs, cmp_run);
        for (size_t k = 1; k < n_runs; k++)
            if (runs[k].id == runs[k - 1].id) {
                d->sample_repeat_row = runs[k].first_row;
                d->sample_repeat_first = runs[k - 1].first_row;
                d->sample_repeat_id = runs[k].id;
                break;
            }
    }
    free(runs);
    free(ids);
    return rc;
}

static long long mtime_ns(const struct stat *st)
{
    return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

int mdsd_dump_check_unchanged(const mdsd_dump *d, mdsd_err *err)
{
    if (d->mem) /* the caller's arrays: theirs to keep unchanged (mdsd/batch.h) */
        return MDSD_OK;
    struct stat st;
    if (stat(d->path, &st) != 0)
        return mdsd_fail(err, MDSD_EIO, "%s: the dump disappeared while it was read (%s)", d->path,
                         strerror(errno));
    if ((long long)st.st_size != d->file_size || mtime_ns(&st) != d->file_mtime_ns ||
        (unsigned long long)st.st_ino != d->file_ino || (unsigned long long)st.st_dev != d->file_dev)
        return mdsd_fail(err, MDSD_EIO,
                         "%s: the dump changed while it was read (size %lld -> %lld bytes, or its "
                         "modification time or inode); results from it are void: rerun on a stable copy",
                         d->path, d->file_size, (long long)st.st_size);
    return MDSD_OK;
}

int mdsd_dump_check_samples(const mdsd_dump *d, mdsd_err *err)
{
    if (d->sample_repeat_row == SIZE_MAX)
        return MDSD_OK;
    return mdsd_fail(err, MDSD_EFORMAT,
                     "%s: row %zu: sample %lld starts again (its rows are not contiguous; first seen at row %zu)",
                     d->path, d->sample_repeat_row, d->sample_repeat_id, d->sample_repeat_first);
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
    d->file_size = (long long)st.st_size;
    d->file_mtime_ns = mtime_ns(&st);
    d->file_dev = (unsigned long long)st.st_dev;
    d->file_ino = (unsigned long long)st.st_ino;
    htri_t is = H5Fis_hdf5(d->path);
    H5Eclear2(H5E_DEFAULT);
    if (is <= 0)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is not an HDF5 file (no HDF5 signature)", d->path);
    d->h5->file = H5Fopen(d->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (d->h5->file < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is a truncated or corrupt HDF5 file (%s)", d->path,
                         dump_h5_reason(why, sizeof why));
    }
    return MDSD_OK;
}

static int open_unprobed(const char *path, mdsd_dump **out, mdsd_err *err);

/* libhdf5 parses a file's superblock, object headers and attribute heaps
 * itself, and some corruptions crash it (a NULL dereference in H5A__close
 * while H5Aiterate2 builds the attribute table, found by
 * tests/fuzz/fuzz_dump.c) or make it loop. So the metadata is read first in
 * a child process, with a time limit: the same open, whose crash or hang
 * then becomes a refusal naming the file. What is read later (the rows)
 * stays in HDF5's hands; its errors are reported, a crash in it is not
 * contained. MDSD_HDF5_NO_PROBE=1 skips the probe. */
#define PROBE_SECONDS 60

static int probe_metadata(const char *path, mdsd_err *err)
{
    const char *off = getenv("MDSD_HDF5_NO_PROBE");
    if (off && *off && strcmp(off, "0") != 0)
        return MDSD_OK;
    pid_t pid = fork();
    if (pid < 0)
        return MDSD_OK; /* cannot probe: open in-process as before */
    if (pid == 0) {
        mdsd_dump *d;
        mdsd_err e;
        if (open_unprobed(path, &d, &e) == MDSD_OK)
            mdsd_dump_close(d);
        _exit(0);
    }
    int st = 0;
    struct timespec step = {0, 500 * 1000};
    for (long waited_us = 0;; waited_us += 500) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return MDSD_OK;
        if (waited_us > PROBE_SECONDS * 1000000L) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return mdsd_fail(err, MDSD_EFORMAT, "'%s': libhdf5 did not finish reading the file's "
                             "metadata within %d s: a corrupt HDF5 file", path, PROBE_SECONDS);
        }
        if (waited_us > 20000)
            step.tv_nsec = 5 * 1000 * 1000;
        nanosleep(&step, NULL);
        if (waited_us > 20000)
            waited_us += 4500;
    }
    if (WIFSIGNALED(st))
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is a corrupt HDF5 file: libhdf5 crashed (signal %d) "
                         "reading its metadata", path, WTERMSIG(st));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is a corrupt HDF5 file: libhdf5 failed (status %d) "
                         "reading its metadata", path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return MDSD_OK;
}

int mdsd_dump_open_truncated(const char *path, mdsd_dump **out, mdsd_err *err)
{
    *out = NULL;
    int rc = probe_metadata(path, err);
    return rc ? rc : open_unprobed(path, out, err);
}

int mdsd_dump_open(const char *path, mdsd_dump **out, mdsd_err *err)
{
    int rc = mdsd_dump_open_truncated(path, out, err);
    if (rc == MDSD_OK && (rc = dump_refuse_truncated(*out, err))) {
        mdsd_dump_close(*out);
        *out = NULL;
    }
    return rc;
}

static int open_unprobed(const char *path, mdsd_dump **out, mdsd_err *err)
{
    dump_h5_quiet();
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
        rc = dump_open_root_attrs(d, err);
    if (rc == MDSD_OK) {
        mdsd_dump_model *m = &d->target;
        strcpy(m->name, "target");
        strcpy(m->path, "/target/logits");
        hid_t g = dump_path_exists(d->h5->file, "/target") ? H5Gopen2(d->h5->file, "/target", H5P_DEFAULT) : -1;
        H5Eclear2(H5E_DEFAULT);
        hsize_t dims[2];
        rc = open_logits(d, m, g, &d->h5->target, dims, err);
        dump_h5_close(g);
        d->N = rc ? 0 : (size_t)dims[0];
        d->V = rc ? 0 : (size_t)dims[1];
        if (rc == MDSD_OK && d->N == 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: empty dump: /target/logits has 0 rows", d->path);
        if (rc == MDSD_OK && d->V == 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: /target/logits has 0 columns (V = 0)", d->path);
    }
    if (rc == MDSD_OK)
        rc = dump_check_vocab_attr(d, err);
    if (rc == MDSD_OK)
        rc = open_drafts(d, err);
    if (rc == MDSD_OK)
        rc = open_meta(d, "/tokens", &d->h5->tokens, err);
    if (rc == MDSD_OK)
        rc = open_meta(d, "/sample_id", &d->h5->sample_id, err);
    if (rc == MDSD_OK)
        rc = open_meta(d, "/position", &d->h5->position, err);
    if (rc == MDSD_OK)
        rc = dump_read_truncation(d, &d->target, err);
    for (size_t j = 0; rc == MDSD_OK && j < d->n_drafts; j++)
        rc = dump_read_truncation(d, &d->drafts[j], err);
    if (rc == MDSD_OK)
        rc = dump_count_samples(d, err);
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
        dump_h5_close(d->h5->target);
        for (size_t j = 0; d->h5->drafts && j < d->n_drafts; j++)
            dump_h5_close(d->h5->drafts[j]);
        dump_h5_close(d->h5->tokens);
        dump_h5_close(d->h5->sample_id);
        dump_h5_close(d->h5->position);
        dump_h5_close(d->h5->file);
        free(d->h5->drafts);
        free(d->h5);
    }
    if (d->mem)
        free(d->mem->drafts), free(d->mem);
    else
        H5Eclear2(H5E_DEFAULT);
    free(d->target.row_truncated), free(d->target.row_missing);
    for (size_t j = 0; d->drafts && j < d->n_drafts; j++)
        free(d->drafts[j].row_truncated), free(d->drafts[j].row_missing);
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
