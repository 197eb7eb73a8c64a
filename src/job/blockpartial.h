/* blockpartial.h - resuming the block job over tree dumps (mdsd block DUMP...
 * -o CSV --resume).
 *
 * The unit of work is one dump: every case of a dump is evaluated in one pass
 * over its trees. After each dump the job appends the unit to OUTPUT.partial
 * and syncs it:
 *
 *     #mdsd-block-partial 3 <signature>          (first line: the job)
 *     r <verifier> <depth> <sequences> <trees> <samples> <tau> <se>
 *       <rate_1..L> <rate_se_1..L> <reach_1..L> <reach_se_1..L>
 *                                                (one line per case)
 *     #done <dump index> rows=K fnv1a=H           (H over the r lines)
 *
 * with every double as a C99 hex float (%a), so resumed rows are the same
 * bits as computed ones. The signature holds the job's options and each
 * dump's path and SHA-256 (each file of a split one; hash.h): a partial
 * file of another job, or of a dump whose content changed since, is
 * refused. A unit whose rows are
 * missing, extra, reordered or altered is refused, naming it; lines after
 * the last marker are the unit that was being written when the job stopped
 * and are dropped. The job layer's one checkpoint format (checkpoint.h). */
#ifndef MDSD_JOB_BLOCKPARTIAL_H
#define MDSD_JOB_BLOCKPARTIAL_H

#include <stdio.h>

#include <stdbool.h>

#include "err.h"
#include "pathset.h"
#include "treedump.h"

/* The files of a block job over tree dumps, for the output-safety check
 * (pathset.h): the dumps (each file of a split one) and the shards merged
 * (names[n_merge]); the CSV -o with its checkpoint, lock file and
 * provenance (provenance: a tool writes it; shard > 0: the aggregate of
 * --shard with its checkpoint and lock, rank: an MPI rank's checkpoint
 * OUTPUT.shard-I-of-N.partial; merge: no checkpoint), --markdown and
 * --latex, standard output; engine_metrics: --engine-metrics (an input, or NULL). */
typedef struct {
    const char *const *dumps;
    size_t n_dumps;
    const char *const *merged;
    size_t n_merged;
    const char *output, *markdown, *latex;
    size_t shard, shards;
    bool rank, provenance;
    const char *engine_metrics;
} mdsd_block_files;
void mdsd_block_paths(const mdsd_block_files *f, mdsd_pathset *s);

/* One finished dump read back: its cases' results in case order. */
typedef struct {
    int done;
    size_t count;
    mdsd_block_case *cases;          /* [count]: verifier and policy as recorded */
    mdsd_block_dump_result *res;     /* [count] */
} mdsd_block_unit;

/* The signature of a job: options text plus each dump's identity. */
int mdsd_block_signature(const char *options, char *const *dumps, size_t n_dumps, char **out,
                         mdsd_err *err);

/* Reads `path` (absent: nothing done) into units[n_dumps] (zeroed by the
 * caller; free with mdsd_block_units_free). */
int mdsd_block_partial_read(const char *path, const char *signature, mdsd_block_unit *units,
                            size_t n_dumps, mdsd_err *err);
void mdsd_block_units_free(mdsd_block_unit *units, size_t n_dumps);

/* Rewrites `path` atomically with the signature and the finished units, and
 * returns it open for appending. */
FILE *mdsd_block_partial_start(const char *path, const char *signature,
                               const mdsd_block_unit *units, size_t n_dumps, mdsd_err *err);
/* Appends dump `index`'s results and its marker, and syncs. */
int mdsd_block_partial_append(FILE *f, size_t index, const mdsd_block_case *cases,
                              const mdsd_block_dump_result *res, size_t count, mdsd_err *err);

#endif
