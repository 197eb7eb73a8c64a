/* blockjob.h - the block job over tree dumps (mdsd/block.h) inside the
 * library, as mdsd_block_run_with and mdsd_merge_with run it for `mdsd block`,
 * `mdsd merge` and MPI ranks (what mdsd_run_opts adds to the public options:
 * mdsd_block_job, blockjob_impl.h).
 *   blockjob.c    the job: options, resume (blockpartial.h), each dump's
 *                 cases evaluated, resumed or folded from shards, the outputs
 *   blockshard.c  one shard of it (--shard I/N, MPI ranks): its aggregate
 *                 (shard.h's text, magic MDSD_BLOCK_SHARD_MAGIC)
 *   blocktable.c  the cases of a dump, and the CSV, Markdown and LaTeX writers
 *   merge.c       mdsd_merge; block shards folded into the job's outputs
 * (their shared pieces: blockjob_impl.h) */
#ifndef MDSD_BLOCKJOB_H
#define MDSD_BLOCKJOB_H

#include "blockjob_impl.h"

/* Runs the job (a shard of it when shards > 0). */
int mdsd_block_job_run(mdsd_block_job *j, mdsd_err *err);
/* Folds block shards (in, n: their texts) into the job's outputs. */
int mdsd_block_job_merge(const mdsd_shard_input *in, size_t n, const mdsd_block_job *how,
                         mdsd_err *err);

#endif
