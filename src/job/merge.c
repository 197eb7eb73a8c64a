/* merge.c - mdsd_merge (mdsd/block.h): the shard aggregates of a table job
 * (shard.h, mdsd_batch_merge) or of a block job (blockjob.h) read and folded
 * into the job's results CSV and, optionally, its rendered tables. */
#include <stdlib.h>
#include <string.h>

#include "blockjob.h"
#include "outfile.h"
#include "report.h"
#include "shard.h"

typedef struct {
    const char *markdown, *latex;
    mdsd_shard_job job;
} table_merge;

/* Before the CSV appears: the rendered tables, as `mdsd merge` renders them. */
static int before_publish(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err)
{
    const table_merge *m = ctx;
    mdsd_report_style style;
    mdsd_report_style_init(&style);
    style.layout = MDSD_REPORT_BOTH;
    style.is_top = m->job.is_top;
    style.trials = m->job.trials;
    int rc = MDSD_OK;
    if (m->markdown)
        rc = mdsd_report_render_file(m->markdown, mdsd_report_render_markdown, rows, count, &style, err);
    if (rc == MDSD_OK && m->latex)
        rc = mdsd_report_render_file(m->latex, mdsd_report_render_latex, rows, count, &style, err);
    return rc;
}

int mdsd_merge(const char *const *shards, size_t n, const char *output, const char *markdown,
               const char *latex, mdsd_err *err)
{
    if (!shards || n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "merge: no shard given");
    if (!output)
        return mdsd_fail(err, MDSD_EINVAL, "merge: no output file");
    mdsd_shard_input *in = calloc(n, sizeof *in);
    int rc = in ? mdsd_output_check(output, shards, n, err)
                : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == MDSD_OK; i++) {
        char *text = NULL;
        in[i].name = shards[i];
        rc = mdsd_shard_read_file(in[i].name, &text, &in[i].size, err);
        in[i].text = text;
    }
    size_t ml = strlen(MDSD_BLOCK_SHARD_MAGIC);
    if (rc == MDSD_OK && in[0].size >= ml && !memcmp(in[0].text, MDSD_BLOCK_SHARD_MAGIC, ml)) {
        mdsd_block_job how = {.pub = {.output = output, .markdown = markdown, .latex = latex}};
        rc = mdsd_block_job_merge(in, n, &how, err);
    } else if (rc == MDSD_OK) {
        table_merge m = {markdown, latex, {0}};
        mdsd_merge_opts mo = {n, in, output, &m.job, before_publish, &m};
        rc = mdsd_batch_merge(&mo, NULL, NULL, err);
        mdsd_shard_job_free(&m.job);
    }
    for (size_t i = 0; in && i < n; i++)
        free((char *)in[i].text);
    free(in);
    return rc;
}
