/* dump_trunc.c - the optional per-row truncation record of a model
 * (data/README.md, "Truncated rows"): /<group>/truncated, uint8 [N] (1 = the
 * row's finite entries are log-probabilities of the full distribution for a
 * top-k set of tokens, -inf = unseen), and /<group>/missing_mass, float64 [N]
 * (the unseen tokens' total probability; 0 on complete rows).
 *
 * Why it is read at open: a top-k row read as a complete one renormalises the
 * kept mass to 1 (softmax), which prints a wrong alpha* with exit 0 (0.675
 * for 0.871 on the KJV pair at k = 20). So every dump's truncation is known
 * before any work, and mdsd_dump_open refuses rows it cannot bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dump_impl.h"

#define TRUNC_BLOCK 65536 /* rows read per HDF5 call: memory independent of N */

/* Opens the 1-d dataset `path` of length d->N whose class is `want`. */
static int open_row_dataset(mdsd_dump *d, const char *path, H5T_class_t want, const char *type,
                            hid_t *out, mdsd_err *err)
{
    *out = H5Dopen2(d->h5->file, path, H5P_DEFAULT);
    if (*out < 0) {
        H5Eclear2(H5E_DEFAULT);
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s is not a dataset", d->path, path);
    }
    hid_t s = H5Dget_space(*out), t = H5Dget_type(*out);
    int rank = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
    hsize_t n = 0;
    if (rank == 1)
        H5Sget_simple_extent_dims(s, &n, NULL);
    H5T_class_t c = H5Tget_class(t);
    dump_h5_close(s), dump_h5_close(t);
    if (rank != 1 || n != d->N)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s must be [%zu] (one value per row), not rank %d "
                         "with %llu values", d->path, path, d->N, rank, (unsigned long long)n);
    if (c != want)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s has dtype %s, expected %s", d->path, path,
                         dump_class_name(c), type);
    return MDSD_OK;
}

static int read_rows(mdsd_dump *d, hid_t ds, const char *path, hid_t mem_type, size_t row0,
                     size_t rows, void *out, mdsd_err *err)
{
    hsize_t start = row0, count = rows;
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &count, NULL);
    herr_t st = fs < 0 || ms < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    if (st >= 0)
        st = H5Dread(ds, mem_type, ms, fs, H5P_DEFAULT, out);
    dump_h5_close(fs), dump_h5_close(ms);
    if (st < 0) {
        char why[256];
        return mdsd_fail(err, MDSD_EIO, "%s: cannot read rows %zu..%zu of %s (%s)", d->path, row0,
                         row0 + rows - 1, path, dump_h5_reason(why, sizeof why));
    }
    return MDSD_OK;
}

int dump_read_truncation(mdsd_dump *d, mdsd_dump_model *m, mdsd_err *err)
{
    m->truncated_rows = 0;
    m->max_missing_mass = 0;
    char group[sizeof m->path], flag_path[sizeof m->path + 16], mass_path[sizeof m->path + 16];
    snprintf(group, sizeof group, "%s", m->path);
    char *slash = strrchr(group, '/');
    if (slash)
        *slash = '\0'; /* m->path is <group>/logits */
    snprintf(flag_path, sizeof flag_path, "%s/truncated", group);
    snprintf(mass_path, sizeof mass_path, "%s/missing_mass", group);
    int has_flag = dump_path_exists(d->h5->file, flag_path),
        has_mass = dump_path_exists(d->h5->file, mass_path);
    H5Eclear2(H5E_DEFAULT);
    if (!has_flag && !has_mass)
        return MDSD_OK; /* every row complete (an old dump reads so) */
    if (!has_flag || !has_mass)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: %s without %s: a truncation record needs both "
                         "(data/README.md, \"Truncated rows\")", d->path,
                         has_flag ? flag_path : mass_path, has_flag ? mass_path : flag_path);
    hid_t fd = -1, md = -1;
    int rc = open_row_dataset(d, flag_path, H5T_INTEGER, "uint8 (0 complete, 1 truncated)", &fd, err);
    if (rc == MDSD_OK)
        rc = open_row_dataset(d, mass_path, H5T_FLOAT, "float64", &md, err);
    size_t cap = d->N < TRUNC_BLOCK ? d->N : TRUNC_BLOCK;
    long long *flag = rc ? NULL : malloc(cap * sizeof *flag);
    double *mass = rc ? NULL : malloc(cap * sizeof *mass);
    m->row_truncated = rc ? NULL : malloc(d->N);
    m->row_missing = rc ? NULL : malloc(d->N * sizeof *m->row_missing);
    if (rc == MDSD_OK && (!flag || !mass || !m->row_truncated || !m->row_missing))
        rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    for (size_t row0 = 0; rc == MDSD_OK && row0 < d->N; row0 += cap) {
        size_t rows = d->N - row0 < cap ? d->N - row0 : cap;
        rc = read_rows(d, fd, flag_path, H5T_NATIVE_LLONG, row0, rows, flag, err);
        if (rc == MDSD_OK)
            rc = read_rows(d, md, mass_path, H5T_NATIVE_DOUBLE, row0, rows, mass, err);
        for (size_t i = 0; rc == MDSD_OK && i < rows; i++) {
            size_t row = row0 + i;
            if (flag[i] != 0 && flag[i] != 1)
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s: %s, row %zu: %lld is not 0 (complete) or 1 "
                               "(truncated)", d->path, flag_path, row, flag[i]);
            else if (!(mass[i] >= 0.0 && mass[i] <= 1.0))
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s: %s, row %zu: %.17g is not a probability mass "
                               "in [0, 1]", d->path, mass_path, row, mass[i]);
            else if (flag[i] == 0 && mass[i] != 0.0)
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s: %s, row %zu: missing mass %.17g on a row that "
                               "%s marks complete (0)", d->path, mass_path, row, mass[i], flag_path);
            if (rc)
                break;
            m->row_truncated[row] = (unsigned char)flag[i];
            m->row_missing[row] = mass[i];
            if (flag[i] == 1) {
                m->truncated_rows++;
                if (mass[i] > m->max_missing_mass)
                    m->max_missing_mass = mass[i];
            }
        }
    }
    /* float16 and bfloat16 round a log-probability of -10 by up to 0.005 in
     * the kept mass: more than the bounds on truncated rows may move */
    if (rc == MDSD_OK && m->truncated_rows > 0 && m->dtype != MDSD_DUMP_FLOAT32)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: %s holds %zu truncated rows in %s: truncated rows "
                       "(log-probabilities) must be stored as float32", d->path, m->path,
                       m->truncated_rows, mdsd_dtype_name(m->dtype));
    if (rc || m->truncated_rows == 0) { /* the flags are kept only where a job needs them */
        free(m->row_truncated), free(m->row_missing);
        m->row_truncated = NULL, m->row_missing = NULL;
    }
    free(flag), free(mass);
    dump_h5_close(fd), dump_h5_close(md);
    return rc;
}

int dump_refuse_truncated(const mdsd_dump *d, mdsd_err *err)
{
    for (int w = -1; w < (int)d->n_drafts; w++) {
        const mdsd_dump_model *m = w < 0 ? &d->target : &d->drafts[w];
        if (m->truncated_rows > 0)
            return mdsd_fail(err, MDSD_EUNSUPPORTED,
                             "%s: %zu of the %zu rows of %s are truncated top-k rows (missing "
                             "mass up to %.3g, recorded in the dataset's truncated and missing_mass "
                             "beside it): read as complete rows they would renormalise the missing "
                             "mass away and print wrong numbers; only alpha* of i.i.d. drafts has a "
                             "certified interval over the unseen tokens (`mdsd table -t 1 -s iid "
                             "-v none`, MATH.md §2.9), and this reader has none; `mdsd info` "
                             "describes the dump", d->path, m->truncated_rows, d->N,
                             m->path, m->max_missing_mass);
    }
    return MDSD_OK;
}
