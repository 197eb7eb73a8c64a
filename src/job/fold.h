/* fold.h - what the table job (batch.c and the engine files) shares with its scale-out half
 * (shard.c: shard aggregate files, mdsd merge): the plan of cells and the
 * per-sample summaries whose ordered fold makes every result row. */
#ifndef MDSD_FOLD_H
#define MDSD_FOLD_H

#include <stdbool.h>
#include <stdio.h>

#include "batch.h"
#include "cluster.h"

#define MDSD_BATCH_MAX_CELLS 256

/* One output row of a (dump, temperature) unit: the alpha* of a scheme
 * (verifier < 0) or a verifier's acceptance, at n drafts. */
typedef struct {
    size_t n;
    mdsd_scheme_kind scheme;
    int verifier;     /* mdsd_verifier_kind, or -1 for the scheme's alpha* */
    int bound_cell;   /* verifier cells: index of the same (scheme, n) alpha* cell */
} mdsd_batch_cell;

typedef struct {
    size_t count;
    size_t max_n;
    mdsd_batch_cell cells[MDSD_BATCH_MAX_CELLS];
} mdsd_batch_plan;

/* One sample (cluster) of a unit, summarised in row order: per cell the
 * Welford summaries of alpha and of the gap to alpha*, on alpha* cells those
 * of the interval's ends over the completions of truncated rows (lo = hi =
 * alpha on complete rows, MATH.md §2.9), the per-draft sums and whether every
 * value was exact. The unit's rows are the fold of these in
 * sample order, wherever each was computed. */
typedef struct {
    long long sample;
    uint64_t rows;
    mdsd_welford alpha[MDSD_BATCH_MAX_CELLS], gap[MDSD_BATCH_MAX_CELLS];
    mdsd_welford lo[MDSD_BATCH_MAX_CELLS], hi[MDSD_BATCH_MAX_CELLS];
    double per_draft[MDSD_BATCH_MAX_CELLS][MDSD_REPORT_MAX_DRAFTS];
    bool exact[MDSD_BATCH_MAX_CELLS];
} mdsd_batch_group;

/* A unit's fold. */
typedef struct {
    mdsd_cluster_stats alpha[MDSD_BATCH_MAX_CELLS];
    mdsd_cluster_stats gap[MDSD_BATCH_MAX_CELLS];
    mdsd_cluster_stats lo[MDSD_BATCH_MAX_CELLS], hi[MDSD_BATCH_MAX_CELLS];
    double per_draft_sum[MDSD_BATCH_MAX_CELLS][MDSD_REPORT_MAX_DRAFTS];
    bool exact[MDSD_BATCH_MAX_CELLS];
} mdsd_batch_fold;

void mdsd_batch_group_reset(mdsd_batch_group *g, const mdsd_batch_plan *pl, long long sample);
void mdsd_batch_fold_init(mdsd_batch_fold *f, const mdsd_batch_plan *pl);
void mdsd_batch_fold_group(mdsd_batch_fold *f, const mdsd_batch_plan *pl, const mdsd_batch_group *g);
/* The unit's rows out[pl->count]. */
void mdsd_batch_finish_rows(const mdsd_batch_fold *f, const mdsd_batch_plan *pl, const char *label,
                            double T, mdsd_report_row *out);

/* A group as one line "g SAMPLE ROWS" + per cell: alpha mean and m2, on
 * alpha* cells the interval ends' means and m2 (lo, then hi), on verifier cells the gap's mean and m2 and the n per-draft sums, then the
 * exact flag (0/1); every double a C99 hex float, so it reads back bit for bit. */
void mdsd_batch_group_write(FILE *out, const mdsd_batch_plan *pl, const mdsd_batch_group *g);
int mdsd_batch_group_parse(const char *line, const mdsd_batch_plan *pl, mdsd_batch_group *g);

/* The CSV written atomically, before_publish called before it appears. */
int mdsd_batch_write_csv(const char *output, const mdsd_report_row *rows, size_t count, size_t max_n,
                         int (*before_publish)(const mdsd_report_row *, size_t, void *, mdsd_err *),
                         void *ctx, mdsd_err *err);

#endif
