/* fold.c - per-sample summaries of a unit and their ordered fold into the
 * unit's result rows; a summary as one line of hex floats (fold.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"

typedef mdsd_batch_cell cell;

void mdsd_batch_group_reset(mdsd_batch_group *g, const mdsd_batch_plan *pl, long long sample)
{
    g->sample = sample;
    g->rows = 0;
    for (size_t c = 0; c < pl->count; c++) {
        mdsd_welford_init(&g->alpha[c]);
        mdsd_welford_init(&g->gap[c]);
        mdsd_welford_init(&g->lo[c]);
        mdsd_welford_init(&g->hi[c]);
        memset(g->per_draft[c], 0, sizeof g->per_draft[c]);
        g->exact[c] = true;
    }
}

void mdsd_batch_fold_init(mdsd_batch_fold *f, const mdsd_batch_plan *pl)
{
    for (size_t c = 0; c < pl->count; c++) {
        mdsd_cluster_init(&f->alpha[c]);
        mdsd_cluster_init(&f->gap[c]);
        mdsd_cluster_init(&f->lo[c]);
        mdsd_cluster_init(&f->hi[c]);
        memset(f->per_draft_sum[c], 0, sizeof f->per_draft_sum[c]);
        f->exact[c] = true;
    }
}

void mdsd_batch_fold_group(mdsd_batch_fold *f, const mdsd_batch_plan *pl, const mdsd_batch_group *g)
{
    if (g->rows == 0)
        return;
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_cluster_add_group(&f->alpha[c], &g->alpha[c]);
        if (ce->verifier >= 0)
            mdsd_cluster_add_group(&f->gap[c], &g->gap[c]);
        else
            mdsd_cluster_add_group(&f->lo[c], &g->lo[c]), mdsd_cluster_add_group(&f->hi[c], &g->hi[c]);
        for (size_t j = 0; j < ce->n; j++)
            f->per_draft_sum[c][j] += g->per_draft[c][j];
        f->exact[c] = f->exact[c] && g->exact[c];
    }
}

void mdsd_batch_group_write(FILE *out, const mdsd_batch_plan *pl, const mdsd_batch_group *g)
{
    fprintf(out, "g %lld %llu", g->sample, (unsigned long long)g->rows);
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        fprintf(out, " %a %a", g->alpha[c].mean, g->alpha[c].m2);
        if (ce->verifier < 0)
            fprintf(out, " %a %a %a %a", g->lo[c].mean, g->lo[c].m2, g->hi[c].mean, g->hi[c].m2);
        if (ce->verifier >= 0) {
            fprintf(out, " %a %a", g->gap[c].mean, g->gap[c].m2);
            for (size_t j = 0; j < ce->n; j++)
                fprintf(out, " %a", g->per_draft[c][j]);
        }
        fprintf(out, " %d", g->exact[c] ? 1 : 0);
    }
    fputc('\n', out);
}

static bool parse_double(const char **s, double *x)
{
    char *end;
    *x = strtod(*s, &end);
    if (end == *s || (*end != ' ' && *end != '\n' && *end != '\0'))
        return false;
    *s = end;
    return true;
}

int mdsd_batch_group_parse(const char *line, const mdsd_batch_plan *pl, mdsd_batch_group *g)
{
    long long sample;
    unsigned long long rows;
    int used = 0;
    if (sscanf(line, "g %lld %llu%n", &sample, &rows, &used) != 2 || rows == 0)
        return MDSD_EFORMAT;
    mdsd_batch_group_reset(g, pl, sample);
    g->rows = rows;
    const char *s = line + used;
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        g->alpha[c].count = g->gap[c].count = g->lo[c].count = g->hi[c].count = rows;
        if (!parse_double(&s, &g->alpha[c].mean) || !parse_double(&s, &g->alpha[c].m2))
            return MDSD_EFORMAT;
        if (ce->verifier < 0 &&
            (!parse_double(&s, &g->lo[c].mean) || !parse_double(&s, &g->lo[c].m2) ||
             !parse_double(&s, &g->hi[c].mean) || !parse_double(&s, &g->hi[c].m2)))
            return MDSD_EFORMAT;
        if (ce->verifier >= 0) {
            if (!parse_double(&s, &g->gap[c].mean) || !parse_double(&s, &g->gap[c].m2))
                return MDSD_EFORMAT;
            for (size_t j = 0; j < ce->n; j++)
                if (!parse_double(&s, &g->per_draft[c][j]))
                    return MDSD_EFORMAT;
        }
        int flag, n = 0;
        if (sscanf(s, " %d%n", &flag, &n) != 1 || (flag != 0 && flag != 1))
            return MDSD_EFORMAT;
        g->exact[c] = flag == 1;
        s += n;
    }
    return *s == '\n' || *s == '\0' ? MDSD_OK : MDSD_EFORMAT;
}

void mdsd_batch_finish_rows(const mdsd_batch_fold *f, const mdsd_batch_plan *pl, const char *label,
                            double T, mdsd_report_row *out)
{
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_report_row *r = &out[c];
        memset(r, 0, sizeof *r);
        snprintf(r->dump, sizeof r->dump, "%s", label);
        r->temperature = T;
        r->n = ce->n;
        snprintf(r->scheme, sizeof r->scheme, "%s", mdsd_scheme_name(ce->scheme));
        snprintf(r->method, sizeof r->method, "%s",
                 ce->verifier < 0 ? "bound" : mdsd_verifier_name((mdsd_verifier_kind)ce->verifier));
        r->alpha = mdsd_cluster_mean(&f->alpha[c]);
        r->se = mdsd_cluster_stderr(&f->alpha[c]);
        r->gap = ce->verifier < 0 ? NAN : mdsd_cluster_mean(&f->gap[c]);
        r->gap_se = ce->verifier < 0 ? NAN : mdsd_cluster_stderr(&f->gap[c]);
        /* verifiers run on complete rows only (column.c): their interval is the point */
        r->alpha_low = ce->verifier < 0 ? mdsd_cluster_mean(&f->lo[c]) : r->alpha;
        r->alpha_low_se = ce->verifier < 0 ? mdsd_cluster_stderr(&f->lo[c]) : r->se;
        r->alpha_high = ce->verifier < 0 ? mdsd_cluster_mean(&f->hi[c]) : r->alpha;
        r->alpha_high_se = ce->verifier < 0 ? mdsd_cluster_stderr(&f->hi[c]) : r->se;
        r->positions = (size_t)mdsd_cluster_count(&f->alpha[c]);
        r->samples = (size_t)mdsd_cluster_groups(&f->alpha[c]);
        r->exact = f->exact[c];
        r->n_per_draft = ce->verifier < 0 ? 0 : ce->n;
        for (size_t j = 0; j < r->n_per_draft; j++)
            r->per_draft[j] = f->per_draft_sum[c][j] / (double)r->positions;
    }
}
