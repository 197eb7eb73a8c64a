/* merge.c - mdsd_merge, mdsd_merge_run, mdsd_merge_with and mdsd_merge_texts
 * (mdsd/merge.h; `mdsd merge` and the block job's MPI rank 0): the shard
 * aggregates of a table job (shard.h, mdsd_batch_merge) or of a block job
 * (blockjob.h: its set-up redone from the shards' header, each dump's samples
 * folded in shard order), read from files or given in memory, folded into the
 * job's results CSV and, optionally, its rendered tables and provenance. */
#include <stdlib.h>
#include <string.h>

#include <mdsd/merge.h>

#include "blockpartial.h"

#include "blockjob.h"
#include "opts.h"
#include "outfile.h"
#include "parse.h"
#include "pathset.h"
#include "provenance.h"
#include "report.h"
#include "runopts.h"
#include "shard.h"

/* The header's lines, as the shards wrote them, into the job's options
 * (pointing into copy) and its recorded signature *job. */
static int parse_header(const mdsd_shard_file *f, char *copy, const char **dumps, mdsd_block_job *j,
                        const char **job, mdsd_err *err)
{
    mdsd_block_job_opts *o = &j->pub;
    int rc = MDSD_OK;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line && rc == MDSD_OK;
         line = strtok_r(NULL, "\n", &save)) {
        char *v = strchr(line, ' ');
        const char *val = v ? v + 1 : "";
        const char *opt = !strcmp(val, "-") ? NULL : val;
        if (v)
            *v = '\0';
        if (!strcmp(line, "job"))
            *job = val;
        else if (!strcmp(line, "verifiers"))
            o->verifiers = opt;
        else if (!strcmp(line, "sequences"))
            o->sequences = opt;
        else if (!strcmp(line, "depth"))
            o->depths = opt;
        else if (!strcmp(line, "cost"))
            o->costs = opt;
        else if (!strcmp(line, "is_top"))
            o->is_top = (size_t)strtoull(val, NULL, 10);
        else if (!strcmp(line, "dump") && v && mdsd_unescape(v + 1) == 0) /* one line (parse.h) */
            dumps[o->n_dumps++] = v + 1;
        else if (strcmp(line, "end") != 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': '%.80s' is not a header line of a block shard",
                           f->in->name, line);
    }
    o->dumps = dumps;
    return rc;
}

/* mdsd merge of block shards: the job's set-up redone from the header (the
 * dumps must be here and unchanged), each dump's samples folded in shard
 * order, the outputs written as the single run writes them. */
int mdsd_block_job_merge(const mdsd_shard_input *in, size_t n, const mdsd_block_job *how,
                         mdsd_err *err)
{
    mdsd_shard_file *files = NULL;
    size_t N = 0;
    int rc = mdsd_shard_collect(in, n, MDSD_BLOCK_SHARD_MAGIC, &files, &N, err);
    if (rc)
        return rc;
    char *copy = strndup(files[0].header, files[0].header_len);
    const char **dumps = calloc(files[0].header_len, sizeof *dumps), *job = NULL;
    mdsd_block_job j = *how;
    memset(&j.pub, 0, sizeof j.pub);
    j.pub.output = how->pub.output, j.pub.markdown = how->pub.markdown, j.pub.latex = how->pub.latex;
    j.pub.threads = how->pub.threads;
    if (!copy || !dumps)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    else
        rc = parse_header(&files[0], copy, dumps, &j, &job, err);
    char opts[2048], *sig = NULL;
    mdsd_block_options_text(&j.pub, opts, sizeof opts);
    if (rc == MDSD_OK && (!job || j.pub.n_dumps == 0))
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': the header names no job or dump", files[0].in->name);
    if (rc == MDSD_OK)
        rc = mdsd_block_signature(opts, (char *const *)j.pub.dumps, j.pub.n_dumps, &sig, err);
    if (rc == MDSD_OK && strcmp(sig, job) != 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "a dump of the shards changed since they read it (its "
                       "content, SHA-256, differs): rerun the shards");
    free(sig);
    j.merge = files, j.merge_n = N;
    if (rc == MDSD_OK && (rc = mdsd_block_job_run(&j, err)) != MDSD_OK && j.usage) {
        char why[600];
        snprintf(why, sizeof why, "%s", err->msg);
        rc = mdsd_fail(err, MDSD_EINVAL, "the options the shards recorded are refused: %s", why);
    }
    mdsd_shard_files_free(files, N);
    free(copy), free(dumps);
    return rc;
}

typedef struct {
    const char *markdown, *latex;
    int layout;
    const mdsd_run_opts *run;  /* the provenance's tool and words */
    const char *output_path;
    mdsd_shard_job job;
} table_merge;

static bool to_file(const char *dest)
{
    return dest && strcmp(dest, "-") != 0; /* "-": standard output */
}

static void merge_style(const table_merge *m, mdsd_report_style *style)
{
    mdsd_report_style_init(style);
    style->layout = m->layout ? (mdsd_report_layout)m->layout : MDSD_REPORT_BOTH;
    style->is_top = m->job.is_top;
    style->trials = m->job.trials;
}

/* Before the CSV appears: the provenance (with run->tool, the settings the shards
 * recorded) and the rendered tables, as `mdsd merge` writes them. */
static int before_publish(const mdsd_report_row *rows, size_t count, void *ctx, mdsd_err *err)
{
    const table_merge *m = ctx;
    const mdsd_shard_job *j = &m->job;
    int rc = MDSD_OK;
    if (m->run->tool) {
        mdsd_provenance pv = {.tool = m->run->tool, .argc = (int)m->run->n_words,
                              .argv = (char *const *)m->run->words, .output = m->output_path,
                              .is_table = true, .seed = j->seed, .trials = j->trials,
                              .simulate = j->simulate, .top_k = j->top_k, .top_p = j->top_p,
                              .is_top = j->is_top, .row_begin = j->row_begin, .row_end = j->row_end,
                              .n_dumps = j->n_dumps, .dumps = (const char *const *)j->dumps};
        rc = mdsd_provenance_write(&pv, err);
    }
    mdsd_report_style style;
    merge_style(m, &style);
    if (rc == MDSD_OK && to_file(m->markdown))
        rc = mdsd_report_render_file(m->markdown, mdsd_report_render_markdown, rows, count, &style, err);
    if (rc == MDSD_OK && to_file(m->latex))
        rc = mdsd_report_render_file(m->latex, mdsd_report_render_latex, rows, count, &style, err);
    return rc;
}

void (mdsd_merge_job_opts_init)(mdsd_merge_job_opts *opts, size_t size)
{
    mdsd_merge_job_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

mdsd_status mdsd_merge(const char *const *shards, size_t n, const char *output, const char *markdown,
               const char *latex, mdsd_err *err)
{
    mdsd_merge_job_opts o;
    mdsd_merge_job_opts_init(&o);
    o.markdown = markdown, o.latex = latex;
    return mdsd_merge_run(shards, n, output, &o, err);
}

mdsd_status mdsd_merge_run(const char *const *shards, size_t n, const char *output,
                           const mdsd_merge_job_opts *opts, mdsd_err *err)
{
    return mdsd_merge_with(shards, n, output, opts, NULL, err);
}

/* The checks of both merges; the rendered files into *renders (to be freed). */
static int merge_check(size_t n, const char *output, const mdsd_merge_job_opts *opts,
                       mdsd_run_opts *run, mdsd_run_opts *r, mdsd_pathset *renders, mdsd_err *err)
{
    mdsd_pathset_init(renders);
    if (opts && mdsd_opts_check(opts->size, sizeof *opts, "mdsd_merge_job_opts", NULL, err))
        return MDSD_EINVAL;
    int rc = mdsd_run_opts_take(run, "merge", r, err);
    if (rc)
        return rc;
    int layout = opts ? opts->layout : 0;
    if (layout != 0 && (layout < MDSD_REPORT_PER_SETTING || layout > MDSD_REPORT_BOTH))
        return mdsd_fail(err, MDSD_EINVAL, "merge: layout %d is not an mdsd_report_layout (1, 2, 3)",
                         layout);
    if (n == 0)
        return mdsd_fail(err, MDSD_EINVAL, "merge: no shard given");
    if (!output)
        return mdsd_fail(err, MDSD_EINVAL, "merge: no output file");
    const char *markdown = opts ? opts->markdown : NULL, *latex = opts ? opts->latex : NULL;
    if (to_file(markdown))
        mdsd_pathset_output(renders, markdown, "`markdown`");
    if (to_file(latex))
        mdsd_pathset_output(renders, latex, "`latex`");
    if (r->stdout_used || (markdown && !to_file(markdown)) || (latex && !to_file(latex)))
        mdsd_pathset_stdout(renders);
    return MDSD_OK;
}

/* The shards in memory (read, or an MPI rank's) folded by their job's kind. */
static int merge_texts(const mdsd_shard_input *in, size_t n, const char *output,
                       const mdsd_merge_job_opts *opts, const mdsd_run_opts *r,
                       const mdsd_pathset *renders, mdsd_err *err)
{
    const char *markdown = opts ? opts->markdown : NULL, *latex = opts ? opts->latex : NULL;
    size_t ml = strlen(MDSD_BLOCK_SHARD_MAGIC);
    int rc;
    if (in[0].size >= ml && !memcmp(in[0].text, MDSD_BLOCK_SHARD_MAGIC, ml)) {
        if ((markdown && !to_file(markdown)) || (latex && !to_file(latex)))
            return mdsd_fail(err, MDSD_EINVAL, "block shards: give `markdown FILE` and `latex FILE`");
        mdsd_block_job how = {.pub = {.output = output, .markdown = markdown, .latex = latex},
                              .tool = r->tool, .argc = (int)r->n_words,
                              .argv = (char *const *)r->words, .note = r->on_note,
                              .note_ctx = r->note_ctx, .progress = r->progress_bar != 0};
        return mdsd_block_job_merge(in, n, &how, err);
    }
    table_merge m = {markdown, latex, opts ? opts->layout : 0, r, output, {0}};
    mdsd_report_row *rows = NULL;
    size_t count = 0;
    mdsd_merge_opts mo = {n, in, output, &m.job, before_publish, &m, renders};
    rc = mdsd_batch_merge(&mo, &rows, &count, err);
    mdsd_report_style style;
    merge_style(&m, &style);
    if (rc == MDSD_OK && markdown && !to_file(markdown))
        mdsd_report_render_markdown(stdout, rows, count, &style);
    if (rc == MDSD_OK && latex && !to_file(latex))
        mdsd_report_render_latex(stdout, rows, count, &style);
    free(rows);
    mdsd_shard_job_free(&m.job);
    return rc;
}

mdsd_status mdsd_merge_with(const char *const *shards, size_t n, const char *output,
                            const mdsd_merge_job_opts *opts, mdsd_run_opts *run, mdsd_err *err)
{
    mdsd_run_opts r;
    mdsd_pathset renders, paths;
    int rc = merge_check(shards ? n : 0, output, opts, run, &r, &renders, err);
    mdsd_shard_input *in = rc ? NULL : calloc(n, sizeof *in);
    if (rc == MDSD_OK && !in)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    /* every file written, checked now against the shards and again (with
     * the dumps the shards name) by the table's or the block job's merge */
    mdsd_pathset_init(&paths);
    for (size_t i = 0; rc == MDSD_OK && i < n; i++)
        mdsd_pathset_input(&paths, shards[i], "a shard");
    if (rc == MDSD_OK) {
        mdsd_pathset_output_family(&paths, output, "`output`", mdsd_suffixes_provenance);
        mdsd_pathset_add_all(&paths, &renders);
        rc = mdsd_pathset_check(&paths, err);
    }
    mdsd_pathset_free(&paths);
    for (size_t i = 0; i < n && rc == MDSD_OK; i++) {
        char *text = NULL;
        in[i].name = shards[i];
        rc = mdsd_ckpt_read_file(in[i].name, &text, &in[i].size, err);
        in[i].text = text;
    }
    if (rc == MDSD_OK)
        rc = merge_texts(in, n, output, opts, &r, &renders, err);
    for (size_t i = 0; in && i < n; i++)
        free((char *)in[i].text);
    free(in);
    mdsd_pathset_free(&renders);
    return rc;
}

mdsd_status mdsd_merge_texts(const mdsd_shard_text *in, size_t n, const char *output,
                             const mdsd_merge_job_opts *opts, mdsd_run_opts *run, mdsd_err *err)
{
    mdsd_run_opts r;
    mdsd_pathset renders;
    int rc = merge_check(in ? n : 0, output, opts, run, &r, &renders, err);
    for (size_t i = 0; rc == MDSD_OK && i < n; i++)
        if (!in[i].text || !in[i].name)
            rc = mdsd_fail(err, MDSD_EINVAL, "merge: shard %zu has no %s (NULL)", i,
                           in[i].text ? "name" : "text");
    if (rc == MDSD_OK)
        rc = merge_texts(in, n, output, opts, &r, &renders, err);
    mdsd_pathset_free(&renders);
    return rc;
}
