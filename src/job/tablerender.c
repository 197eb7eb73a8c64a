/* tablerender.c - the table job's outputs beside its CSV (batch.h,
 * mdsd_table_outputs): the Markdown / LaTeX tables of report.h in the job's
 * layout, marked as the job ran (is_top, trials), and the provenance sidecar;
 * every file finished before the CSV appears and published after it, so that
 * either all appear or none. mdsd_table_run, _recorded, _with (`mdsd table`) and
 * mdsd_table_merge_texts (its MPI rank 0) share this one copy (src/api/api_batch.c). */
#include <stdio.h>
#include <string.h>

#include "batch.h"
#include "provenance.h"

static bool to_file(const char *dest)
{
    return dest && strcmp(dest, "-") != 0; /* "-": standard output */
}

static void table_style(const mdsd_table_outputs *t, mdsd_report_style *style)
{
    const mdsd_table_opts *o = &t->job->pub;
    mdsd_report_style_init(style);
    style->layout = o->layout ? (mdsd_report_layout)o->layout : MDSD_REPORT_BOTH;
    style->is_top = o->verifier_opts.is_top;
    style->trials = o->trials;
}

int mdsd_table_outputs_check(const mdsd_table_outputs *t, mdsd_err *err)
{
    const mdsd_table_opts *o = &t->job->pub;
    if (o->layout != 0 && (o->layout < MDSD_REPORT_PER_SETTING || o->layout > MDSD_REPORT_BOTH))
        return mdsd_fail(err, MDSD_EINVAL, "table: layout %d is not an mdsd_report_layout (1, 2, 3)",
                         o->layout);
    mdsd_pathset paths;
    mdsd_pathset_init(&paths);
    mdsd_batch_paths(t->job, &paths);
    if (to_file(o->markdown))
        mdsd_pathset_output(&paths, o->markdown, "`markdown`");
    if (to_file(o->latex))
        mdsd_pathset_output(&paths, o->latex, "`latex`");
    if (t->stdout_output || (o->markdown && !to_file(o->markdown)) || (o->latex && !to_file(o->latex)))
        mdsd_pathset_stdout(&paths);
    int rc = mdsd_pathset_check(&paths, err);
    mdsd_pathset_free(&paths);
    return rc;
}

/* Renders to a temporary file beside dest, finished but not yet published. */
static int render_file(const mdsd_table_outputs *t, const char *dest, mdsd_report_renderer fn,
                       const mdsd_report_row *rows, size_t count, mdsd_outfile *out, mdsd_err *err)
{
    int rc = mdsd_outfile_open(out, dest, err);
    if (rc)
        return rc;
    mdsd_report_style style;
    table_style(t, &style);
    fn(out->f, rows, count, &style);
    return mdsd_outfile_finish(out, err);
}

/* The results' provenance sidecar (FILE.provenance.json): command, seed,
 * trials, truncation, is-top, each dump's size and SHA-256. */
static int write_provenance(const mdsd_table_outputs *t, mdsd_err *err)
{
    const mdsd_table_opts *o = &t->job->pub;
    mdsd_provenance pv = {.tool = t->tool, .argc = t->argc, .argv = t->argv, .output = o->output,
                          .is_table = true, .seed = o->seed, .trials = o->trials,
                          .simulate = o->simulate, .top_k = o->top_k, .top_p = o->top_p,
                          .is_top = o->verifier_opts.is_top, .row_begin = o->row_begin,
                          .row_end = o->row_end, .n_dumps = o->n_dumps, .dumps = o->dumps,
                          .n_arrays = o->n_arrays, .arrays = o->arrays};
    return mdsd_provenance_write(&pv, err);
}

int mdsd_table_outputs_before(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err)
{
    mdsd_table_outputs *t = ctx;
    const mdsd_table_opts *o = &t->job->pub;
    int rc = t->tool ? write_provenance(t, err) : MDSD_OK;
    if (rc == MDSD_OK && to_file(o->markdown))
        rc = render_file(t, o->markdown, mdsd_report_render_markdown, rows, count, &t->markdown_out, err);
    if (rc == MDSD_OK && to_file(o->latex))
        rc = render_file(t, o->latex, mdsd_report_render_latex, rows, count, &t->latex_out, err);
    if (rc)
        mdsd_table_outputs_abort(t);
    return rc;
}

int mdsd_table_outputs_publish(mdsd_table_outputs *t, const mdsd_report_row *rows, size_t count,
                               mdsd_err *err)
{
    const mdsd_table_opts *o = &t->job->pub;
    int rc = MDSD_OK;
    mdsd_report_style style;
    table_style(t, &style);
    if (t->markdown_out.tmp[0])
        rc = mdsd_outfile_publish(&t->markdown_out, err);
    if (rc == MDSD_OK && t->latex_out.tmp[0])
        rc = mdsd_outfile_publish(&t->latex_out, err);
    if (rc == MDSD_OK && o->markdown && !to_file(o->markdown))
        mdsd_report_render_markdown(stdout, rows, count, &style);
    if (rc == MDSD_OK && o->latex && !to_file(o->latex))
        mdsd_report_render_latex(stdout, rows, count, &style);
    return rc;
}

void mdsd_table_outputs_abort(mdsd_table_outputs *t)
{
    mdsd_outfile_abort(&t->markdown_out);
    mdsd_outfile_abort(&t->latex_out);
}
