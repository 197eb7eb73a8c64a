/* mdsd/merge.h - the merge of shard aggregates (`mdsd merge`), from C: one
 * fold for both jobs, the table job (mdsd/batch.h) and the block job
 * (mdsd/block.h), so it belongs to neither job's header. */
#ifndef MDSD_PUBLIC_MERGE_H
#define MDSD_PUBLIC_MERGE_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Folds the aggregates written by `mdsd table ... --shard I/N` or `mdsd block
 * ... --shard I/N` (all N shards of one job, in any order) into the job's
 * results CSV `output`: the same bytes as one process writes. markdown, latex:
 * also the rendered tables (NULL = none). A missing, duplicated, foreign or
 * altered shard is refused, naming the file. */
MDSD_API mdsd_status mdsd_merge(const char *const *shards, size_t n, const char *output,
                                const char *markdown, const char *latex, mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
