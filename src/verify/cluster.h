/* cluster.h - mean and cluster-robust standard error of per-position values,
 * clustered by sample (positions of one generated response are correlated).
 *
 * Streaming, O(1) memory: rows of one sample are contiguous in a dump, so a
 * cluster is closed when the sample id changes. The standard error is the
 * CR1 sandwich estimate  var(mean) = C/(C-1) * sum_c (A_c - mean n_c)^2 / N^2,
 * with A_c the cluster's sum, n_c its size, C clusters, N positions. With a
 * single cluster it falls back to the i.i.d. standard error.
 *
 * Two stages, so that the result does not depend on how the rows were split
 * among threads, ranks or shards: each cluster is first summarised on its
 * own (Welford: count, mean and squared deviations, in row order), and the
 * summaries are then folded in sample order (mdsd_cluster_add_group): the
 * cluster means are shifted by the first cluster's mean against
 * cancellation. A job that computes the clusters in pieces and folds their
 * summaries in sample order performs the very same arithmetic as one that
 * streams every row, bit for bit. */
#ifndef MDSD_CLUSTER_H
#define MDSD_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

typedef struct {
    bool started;          /* a value or cluster was added */
    long long cluster;     /* id of the open cluster (mdsd_cluster_add) */
    mdsd_welford open;     /* the open cluster's values */
    bool folded;           /* a cluster was folded: shift and first are set */
    double shift;          /* mean of the first cluster */
    mdsd_welford first;    /* the first cluster, for the single-cluster fallback */
    uint64_t count;        /* positions in folded clusters */
    double sum, sum_a2, sum_an, sum_n2; /* over folded clusters, shifted */
    uint64_t clusters;
} mdsd_cluster_stats;

void mdsd_cluster_init(mdsd_cluster_stats *s);
/* Adds a value from cluster `id`; rows of one cluster must be contiguous. */
void mdsd_cluster_add(mdsd_cluster_stats *s, long long id, double value);
/* Folds a whole cluster's summary (count >= 1; an empty one is ignored).
 * Not mixed with mdsd_cluster_add on one accumulator. */
void mdsd_cluster_add_group(mdsd_cluster_stats *s, const mdsd_welford *group);

uint64_t mdsd_cluster_count(const mdsd_cluster_stats *s);   /* positions */
uint64_t mdsd_cluster_groups(const mdsd_cluster_stats *s);  /* clusters */
double mdsd_cluster_mean(const mdsd_cluster_stats *s);
double mdsd_cluster_stderr(const mdsd_cluster_stats *s);

#endif
