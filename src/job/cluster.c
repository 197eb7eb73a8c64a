#include "cluster.h"

#include <math.h>
#include <string.h>

void mdsd_cluster_init(mdsd_cluster_stats *s)
{
    memset(s, 0, sizeof *s);
    mdsd_welford_init(&s->iid);
}

static void close_cluster(mdsd_cluster_stats *s)
{
    if (s->open_count == 0)
        return;
    s->sum += s->open_sum;
    s->sum_a2 += s->open_sum * s->open_sum;
    s->sum_an += s->open_sum * s->open_count;
    s->sum_n2 += s->open_count * s->open_count;
    s->clusters += 1;
    s->open_sum = 0;
    s->open_count = 0;
}

void mdsd_cluster_add(mdsd_cluster_stats *s, long long id, double value)
{
    if (!s->started) {
        s->started = true;
        s->shift = value;
        s->cluster = id;
    } else if (id != s->cluster) {
        close_cluster(s);
        s->cluster = id;
    }
    s->open_sum += value - s->shift;
    s->open_count += 1;
    mdsd_welford_add(&s->iid, value);
}

uint64_t mdsd_cluster_count(const mdsd_cluster_stats *s)
{
    return s->iid.count;
}

uint64_t mdsd_cluster_groups(const mdsd_cluster_stats *s)
{
    return (uint64_t)s->clusters + (s->open_count > 0);
}

double mdsd_cluster_mean(const mdsd_cluster_stats *s)
{
    return s->iid.count ? s->iid.mean : NAN;
}

double mdsd_cluster_stderr(const mdsd_cluster_stats *s)
{
    double N = (double)s->iid.count, C = (double)mdsd_cluster_groups(s);
    if (C < 2)
        return mdsd_welford_stderr(&s->iid);
    double sum = s->sum + s->open_sum;
    double a2 = s->sum_a2 + s->open_sum * s->open_sum;
    double an = s->sum_an + s->open_sum * s->open_count;
    double n2 = s->sum_n2 + s->open_count * s->open_count;
    double m = sum / N; /* shifted mean */
    double ss = a2 - 2 * m * an + m * m * n2;
    if (ss < 0)
        ss = 0;
    return sqrt(C / (C - 1) * ss) / N;
}
