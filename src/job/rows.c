/* rows.c - the table job's result rows: lists, unit keys, the results CSV
 * (engine.h). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "outfile.h"

int mdsd_rows_push(row_list *l, const mdsd_report_row *r, size_t k, mdsd_err *err)
{
    if (l->count + k > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        while (cap < l->count + k)
            cap *= 2;
        mdsd_report_row *rows = realloc(l->rows, cap * sizeof *rows);
        if (!rows)
            return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        l->rows = rows;
        l->cap = cap;
    }
    memcpy(l->rows + l->count, r, k * sizeof *r);
    l->count += k;
    return MDSD_OK;
}

bool mdsd_rows_unit_done(const row_list *done, const char *label, double T)
{
    for (size_t i = 0; i < done->count; i++)
        if (!strcmp(done->rows[i].dump, label) && done->rows[i].temperature == T)
            return true;
    return false;
}


/* "LABEL,T": how a unit is named in its marker and in messages. */
void mdsd_rows_unit_key(const mdsd_report_row *r, char *key, size_t size)
{
    snprintf(key, size, "%s,%.10g", r->dump, r->temperature);
}

/* The results CSV: written to a temporary file, then (after before_publish,
 * which may add outputs of its own) renamed into place. */
int mdsd_batch_write_csv(const char *output, const mdsd_report_row *rows, size_t count, size_t max_n,
                         int (*before_publish)(const mdsd_report_row *, size_t, void *, mdsd_err *),
                         void *ctx, mdsd_err *err)
{
    mdsd_outfile out;
    int rc = mdsd_outfile_open(&out, output, err);
    if (rc)
        return rc;
    mdsd_report_csv_header(out.f, max_n);
    for (size_t i = 0; i < count; i++)
        mdsd_report_csv_row(out.f, &rows[i], max_n);
    rc = mdsd_outfile_finish(&out, err);
    if (rc == MDSD_OK && before_publish)
        rc = before_publish(rows, count, ctx, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&out, err);
    mdsd_outfile_abort(&out);
    return rc;
}

int mdsd_rows_write_output(const mdsd_batch_opts *o, const row_list *all, size_t max_n, mdsd_err *err)
{
    return mdsd_batch_write_csv(o->pub.output, all->rows, all->count, max_n, o->before_publish,
                                o->publish_ctx, err);
}

/* Orders the final rows as the job lists them: columns, temperatures, cells;
 * resumed units take their place. */
int mdsd_rows_collect(const mdsd_batch_opts *o, const dump_job *jobs, size_t n_jobs,
                      const row_list *done, const row_list *fresh, row_list *out, mdsd_err *err)
{
    int rc = MDSD_OK;
    for (size_t i = 0; i < n_jobs && rc == MDSD_OK; i++)
        for (size_t t = 0; t < o->pub.n_temperatures && rc == MDSD_OK; t++) {
            const char *label = jobs[i].label;
            const row_list *src = mdsd_rows_unit_done(done, label, o->pub.temperatures[t]) ? done : fresh;
            for (size_t k = 0; k < src->count && rc == MDSD_OK; k++)
                if (!strcmp(src->rows[k].dump, label) && src->rows[k].temperature == o->pub.temperatures[t])
                    rc = mdsd_rows_push(out, &src->rows[k], 1, err);
        }
    return rc;
}
