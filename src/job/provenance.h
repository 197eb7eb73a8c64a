/* provenance.h - how a results file was made, in a sidecar JSON document
 * FILE.provenance.json beside FILE (a results CSV, a rendered table, a
 * figure), so that the CSV itself stays a plain CSV every reader takes.
 *
 * Keys (an interface; extend, don't rename):
 *   "tool"         "mdsd table", "mdsd report", "mdsd plot"
 *   "version"      mdsd's version
 *   "command"      the full command line, one string per argument
 *   "created_utc"  ISO 8601 time the file was written
 *   "output"       the file this document describes (base name)
 *   table only:    "seed", "trials", "simulate", "top_k", "top_p", "is_top",
 *                  "positions" ([begin, end], end 0 = all rows),
 *                  "dumps": [{"path", "size_bytes", "sha256"}]
 *   block only:    "is_top", "dumps" (as for table; the job has no seed)
 *   report, plot:  "source" (the results CSV read) and "source_provenance"
 *                  (that CSV's own document, verbatim, or null when it has none)
 *   plot:          "labels" ({"OLD": "NEW"} of --label), when given
 */
#ifndef MDSD_PROVENANCE_H
#define MDSD_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "outfile.h"

#include <mdsd/batch.h>

typedef struct {
    const char *tool;            /* "mdsd table" */
    int argc;
    char *const *argv;           /* the full command line */
    const char *output;          /* the file described */
    /* the table job's settings (tool = "mdsd table") */
    bool is_table;
    uint64_t seed, trials;
    bool simulate;
    size_t top_k;
    double top_p;
    size_t is_top;
    size_t row_begin, row_end;
    size_t n_dumps;
    const char *const *dumps;
    /* rows in memory (mdsd_row_arrays): "dumps" entries with "in_memory": true,
     * their label, rows, V and drafters (no digest: hashing them would cost
     * as much as the job) */
    size_t n_arrays;
    const mdsd_row_arrays *arrays;
    /* the block job's settings (tool = "mdsd block", or "mdsd merge" of
     * block shards): "is_top" and "dumps" as for the table */
    bool is_block;
    /* carried forward (report, plot) */
    const char *source;          /* results CSV read, or NULL */
    /* plot's --label OLD=NEW: "labels": {"OLD": "NEW", ...}, so that a figure's
     * legend names are traced to the CSV's without editing it */
    size_t n_labels;
    const char *const *labels;   /* "OLD=NEW" each */
} mdsd_provenance;

/* path + ".provenance.json" into buf. */
void mdsd_provenance_path(const char *path, char *buf, size_t size);

/* Writes the sidecar of p->output atomically; for the table and block jobs
 * it takes every dump's SHA-256 (hash.h: computed in process once, and
 * cached beside the dump, FILE.mdsd-sha256). */
int mdsd_provenance_write(const mdsd_provenance *p, mdsd_err *err);

/* The same, written and synced to a temporary file but not yet renamed into
 * place: the caller publishes it with its other outputs, all finished first
 * (mdsd_outfile_publish; mdsd_outfile_abort removes it), so that a failure
 * leaves neither a new file without its sidecar nor the old file with a new
 * sidecar. */
int mdsd_provenance_prepare(const mdsd_provenance *p, mdsd_outfile *out, mdsd_err *err);

/* The sidecar of results file `path` as malloc'd text, or NULL (and
 * MDSD_OK) when there is none. A sidecar that is not a JSON object is an
 * error naming it. */
int mdsd_provenance_read(const char *path, char **json, mdsd_err *err);

/* A top-level integer key of a sidecar we wrote ("is_top", "trials"); def
 * when absent. */
unsigned long long mdsd_provenance_integer(const char *json, const char *key, unsigned long long def);

#endif
