/* outfile.h - atomic output files: write to a temporary file beside the
 * target, then fsync and rename over it, so a failed or interrupted job never
 * leaves a half-written result under the final name. */
#ifndef MDSD_OUTFILE_H
#define MDSD_OUTFILE_H

#include <stdio.h>

#include "err.h"

typedef struct {
    FILE *f;          /* write here */
    char path[4096];  /* final name */
    char tmp[4096];   /* temporary name (same directory) */
} mdsd_outfile;

int mdsd_outfile_open(mdsd_outfile *o, const char *path, mdsd_err *err);
/* Flushes, fsyncs, closes and renames onto the final path. */
int mdsd_outfile_commit(mdsd_outfile *o, mdsd_err *err);
/* Closes and removes the temporary file (safe to call after a failed commit). */
void mdsd_outfile_abort(mdsd_outfile *o);

/* For files written by other libraries (HDF5, gnuplot): a temporary name in
 * the target's directory, and the rename that publishes it. */
int mdsd_tmpname(const char *path, char *tmp, size_t size, mdsd_err *err);
int mdsd_publish(const char *tmp, const char *path, mdsd_err *err);

#endif
