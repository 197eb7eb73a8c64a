/* lp_export.h - the OTM LP of (p, D) written for other solvers (lp_export.c). */
#ifndef MDSD_LP_EXPORT_H
#define MDSD_LP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "scheme.h"

/* Export formats of mdsd_lp_write. */
typedef enum {
    MDSD_LP_FORMAT_MATHPROG_DATA, /* data section for lp/otm_full.mod or lp/otm_reduced.mod */
    MDSD_LP_FORMAT_CPLEX,         /* CPLEX LP */
    MDSD_LP_FORMAT_MPS            /* free MPS */
} mdsd_lp_format;

/* Writes the full (reduced = false) or reduced LP of (p, D) to path, atomically. */
int mdsd_lp_write(const double *p, size_t V, const mdsd_joint *D, bool reduced,
                  mdsd_lp_format format, const char *path, mdsd_err *err);

/* Format from a file name: .dat (MathProg data), .lp (CPLEX LP), .mps (free
 * MPS, objective written as minimise -alpha since MPS has no sense). */
int mdsd_lp_format_parse(const char *path, mdsd_lp_format *format, mdsd_err *err);

#endif
