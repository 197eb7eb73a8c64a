/* cluster.h - mean and cluster-robust standard error of per-position values,
 * clustered by sample (positions of one generated response are correlated).
 *
 * Streaming, O(1) memory: rows of one sample are contiguous in a dump, so a
 * cluster is closed when the sample id changes. The standard error is the
 * CR1 sandwich estimate  var(mean) = C/(C-1) * sum_c (A_c - mean n_c)^2 / N^2,
 * with A_c the cluster's sum, n_c its size, C clusters, N positions. With a
 * single cluster it falls back to the i.i.d. standard error. Values are
 * shifted by the first one seen before accumulating, against cancellation.
 * Parallel jobs compute per-position values in parallel and feed them here
 * in row order, so results do not depend on the thread count. */
#ifndef MDSD_CLUSTER_H
#define MDSD_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

typedef struct {
    double shift;          /* first value seen */
    bool started;
    long long cluster;     /* id of the open cluster */
    double open_sum;       /* sum of shifted values in the open cluster */
    double open_count;
    double sum, sum_a2, sum_an, sum_n2; /* over closed clusters, shifted */
    double clusters;
    mdsd_welford iid;      /* i.i.d. moments, for the single-cluster fallback */
} mdsd_cluster_stats;

void mdsd_cluster_init(mdsd_cluster_stats *s);
/* Adds a value from cluster `id`; rows of one cluster must be contiguous. */
void mdsd_cluster_add(mdsd_cluster_stats *s, long long id, double value);

uint64_t mdsd_cluster_count(const mdsd_cluster_stats *s);   /* positions */
uint64_t mdsd_cluster_groups(const mdsd_cluster_stats *s);  /* clusters */
double mdsd_cluster_mean(const mdsd_cluster_stats *s);
double mdsd_cluster_stderr(const mdsd_cluster_stats *s);

#endif
