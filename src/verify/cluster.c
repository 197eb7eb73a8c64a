#include "cluster.h"

#include <math.h>
#include <string.h>

void mdsd_cluster_init(mdsd_cluster_stats *s)
{
    memset(s, 0, sizeof *s);
    mdsd_welford_init(&s->open);
    mdsd_welford_init(&s->first);
}

void mdsd_cluster_add_group(mdsd_cluster_stats *s, const mdsd_welford *g)
{
    if (g->count == 0)
        return;
    if (!s->folded) {
        s->folded = true;
        s->shift = g->mean;
        s->first = *g;
    }
    double n = (double)g->count;
    double a = n * (g->mean - s->shift); /* the cluster's shifted sum */
    s->count += g->count;
    s->sum += a;
    s->sum_a2 += a * a;
    s->sum_an += a * n;
    s->sum_n2 += n * n;
    s->clusters++;
}

void mdsd_cluster_add(mdsd_cluster_stats *s, long long id, double value)
{
    if (!s->started) {
        s->started = true;
        s->cluster = id;
    } else if (id != s->cluster) {
        mdsd_cluster_add_group(s, &s->open);
        mdsd_welford_init(&s->open);
        s->cluster = id;
    }
    mdsd_welford_add(&s->open, value);
}

/* s with its open cluster folded in. */
static mdsd_cluster_stats closed(const mdsd_cluster_stats *s)
{
    mdsd_cluster_stats c = *s;
    mdsd_cluster_add_group(&c, &c.open);
    mdsd_welford_init(&c.open);
    return c;
}

uint64_t mdsd_cluster_count(const mdsd_cluster_stats *s)
{
    return s->count + s->open.count;
}

uint64_t mdsd_cluster_groups(const mdsd_cluster_stats *s)
{
    return s->clusters + (s->open.count > 0);
}

double mdsd_cluster_mean(const mdsd_cluster_stats *s)
{
    mdsd_cluster_stats c = closed(s);
    if (c.count == 0)
        return NAN;
    if (c.clusters == 1)
        return c.first.mean;
    return c.shift + c.sum / (double)c.count;
}

double mdsd_cluster_stderr(const mdsd_cluster_stats *s)
{
    mdsd_cluster_stats c = closed(s);
    if (c.clusters < 2)
        return c.clusters ? mdsd_welford_stderr(&c.first) : 0.0;
    double N = (double)c.count, C = (double)c.clusters;
    double m = c.sum / N; /* shifted mean */
    double ss = c.sum_a2 - 2 * m * c.sum_an + m * m * c.sum_n2;
    if (ss < 0)
        ss = 0;
    return sqrt(C / (C - 1) * ss) / N;
}
