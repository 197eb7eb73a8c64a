/* outfile.h - atomic output files: write to a temporary file beside the
 * target, then fsync and rename over it, so a failed or interrupted job never
 * leaves a half-written result under the final name. */
#ifndef MDSD_OUTFILE_H
#define MDSD_OUTFILE_H

#include <stdbool.h>
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
/* The two halves of commit, for several outputs that appear together:
 * finish (flush, fsync, close; the temporary file stays) each, then publish
 * (rename) each. */
int mdsd_outfile_finish(mdsd_outfile *o, mdsd_err *err);
int mdsd_outfile_publish(mdsd_outfile *o, mdsd_err *err);
/* Closes and removes the temporary file (safe to call after a failed commit). */
void mdsd_outfile_abort(mdsd_outfile *o);

/* For files written by other libraries (HDF5, gnuplot): a temporary name in
 * the target's directory, and the rename that publishes it. */
int mdsd_tmpname(const char *path, char *tmp, size_t size, mdsd_err *err);
int mdsd_publish(const char *tmp, const char *path, mdsd_err *err);

/* ---- cleanup on SIGINT / SIGTERM ----
 * Temporary names made by mdsd_tmpname (and lock files) are registered until
 * they are published or removed; mdsd_cleanup_signals installs handlers that
 * remove every registered file, print "PROG: interrupted ..." plus `hint`
 * (may be NULL) on stderr, and end the process by the same signal. */
void mdsd_cleanup_signals(const char *prog, const char *hint);
void mdsd_cleanup_register(const char *path);
void mdsd_cleanup_unregister(const char *path);

/* ---- one writer per output ----
 * An exclusive flock on `path` (created if absent), e.g. "results.csv.lock":
 * fails at once, naming the file, if another process holds it. Release
 * removes the lock file. */
typedef struct {
    int fd;
    char path[4096];
} mdsd_lock;

int mdsd_lock_acquire(mdsd_lock *l, const char *path, const char *what, mdsd_err *err);
void mdsd_lock_release(mdsd_lock *l);
/* Whether another process holds the lock at `path` now (a refused job's
 * message then must not offer the other job's files as its own). */
bool mdsd_lock_busy(const char *path);

#endif
