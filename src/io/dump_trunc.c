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
    int rc = dump_open_row_dataset(d, flag_path, H5T_INTEGER, "uint8 (0 complete, 1 truncated)", &fd, err);
    if (rc == MDSD_OK)
        rc = dump_open_row_dataset(d, mass_path, H5T_FLOAT, "float64", &md, err);
    size_t cap = d->N < TRUNC_BLOCK ? d->N : TRUNC_BLOCK;
    long long *flag = rc ? NULL : malloc(cap * sizeof *flag);
    double *mass = rc ? NULL : malloc(cap * sizeof *mass);
    m->row_truncated = rc ? NULL : malloc(d->N);
    m->row_missing = rc ? NULL : malloc(d->N * sizeof *m->row_missing);
    if (rc == MDSD_OK && (!flag || !mass || !m->row_truncated || !m->row_missing))
        rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", d->path);
    for (size_t row0 = 0; rc == MDSD_OK && row0 < d->N; row0 += cap) {
        size_t rows = d->N - row0 < cap ? d->N - row0 : cap;
        rc = dump_read_rows(d, fd, flag_path, 1, row0, rows, H5T_NATIVE_LLONG, flag, err);
        if (rc == MDSD_OK)
            rc = dump_read_rows(d, md, mass_path, 1, row0, rows, H5T_NATIVE_DOUBLE, mass, err);
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
                             "certified interval over the unseen tokens (the table job with "
                             "`temperatures 1`, `schemes iid` and `verifiers none`, MATH.md §2.9), "
                             "and this reader has none; `mdsd info` describes the dump", d->path,
                             m->truncated_rows, d->N, m->path, m->max_missing_mass);
    }
    return MDSD_OK;
}
