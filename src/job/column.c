/* column.c - a column of the table job: a dump (one file, or a directory
 * of files read as one) with one of its drafters, and its rows (engine.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "parse.h"

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The dump's label: its base name, or the path if two dumps share a name. */
static const char *dump_label(const mdsd_batch_opts *o, size_t i)
{
    if (i >= o->pub.n_dumps) /* rows in memory: their label (checked unique: plan.c) */
        return o->pub.arrays[i - o->pub.n_dumps].label;
    for (size_t k = 0; k < o->pub.n_dumps; k++)
        if (k != i && !strcmp(base_name(o->pub.dumps[k]), base_name(o->pub.dumps[i])))
            return o->pub.dumps[i];
    return base_name(o->pub.dumps[i]);
}

size_t mdsd_column_count(const mdsd_batch_opts *o)
{
    return (o->pub.n_dumps + o->pub.n_arrays) * (o->pub.n_draft_models ? o->pub.n_draft_models : 1);
}

/* Without --draft-model a dump of several drafters is read with its first by name:
 * said on the note channel, with the others and how to choose. */
static void note_default_drafter(const mdsd_batch_opts *o, const char *path, const char *label,
                                 const mdsd_dump *d)
{
    if (!o->note)
        return;
    char msg[1024];
    size_t len = (size_t)snprintf(msg, sizeof msg, "%s has %zu drafters (", path, d->n_drafts);
    for (size_t k = 0; k < d->n_drafts && len < sizeof msg; k++)
        len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", k ? ", " : "", d->drafts[k].name);
    if (len < sizeof msg)
        snprintf(msg + len, sizeof msg - len, "); using %s, the first by name (column %s:%s); "
                 "`draft_models NAME` picks one, `draft_models A,B` compares them",
                 d->drafts[0].name, label, d->drafts[0].name);
    o->note(msg, o->note_ctx);
}

/* A tree dump is a valid version-1 dump, but its rows are the nodes of
 * draft trees (prefixes shared, several per context), not the positions of
 * responses: a table over them would print per-position rates of
 * something else, so it is refused with the command that reads it. */
static int refuse_tree_dump(const mdsd_dump *d, const char *path, mdsd_err *err)
{
    for (size_t i = 0; i < d->n_attrs; i++)
        if (!strcmp(d->attrs[i].name, "mdsd_tree") && !strcmp(d->attrs[i].value, "1"))
            return mdsd_fail(err, MDSD_EINVAL, "%s: a tree dump (root attribute mdsd_tree = 1): its "
                             "rows are the nodes of draft trees, not positions of responses; "
                             "evaluate it with mdsd block", path);
    return MDSD_OK;
}

/* Truncated top-k rows (data/README.md, "Truncated rows") are read only
 * where a certified interval exists (MATH.md §2.9): alpha* of i.i.d. drafts
 * at the temperature of the trace's log-probabilities, T = 1, with no
 * decoding truncation. Everything else is refused before any work, saying why. */
static int check_truncated_job(const mdsd_batch_opts *o, const mdsd_dump *d, int draft,
                               const char *path, mdsd_err *err)
{
    const mdsd_dump_model *t = &d->target, *q = &d->drafts[draft];
    if (t->truncated_rows == 0 && q->truncated_rows == 0)
        return MDSD_OK;
    char what[5400];
    snprintf(what, sizeof what, "%s: %zu rows of %s and %zu of %s are truncated top-k rows", path,
             t->truncated_rows, t->path, q->truncated_rows, q->path);
    const mdsd_table_opts *p = &o->pub;
    if (p->n_verifiers > 0)
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_VERIFIERS,
                                "%s: a verifier's acceptance there depends on how "
                                "the unseen tokens' mass is spread in ways no certified bound here covers "
                                "(only alpha* of i.i.d. drafts is bounded, MATH.md §2.9); run alpha* only "
                                "(`verifiers none`; %s was asked) or use complete rows", what,
                                mdsd_verifier_name(p->verifiers[0]));
    for (size_t i = 0; i < p->n_schemes; i++)
        if (p->schemes[i] != MDSD_SCHEME_IID)
            return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_SCHEMES,
                                    "%s: alpha* of the %s scheme over the unseen "
                                    "tokens is not bounded here (only iid is, MATH.md §2.9); use `schemes iid`",
                                    what, mdsd_scheme_name(p->schemes[i]));
    for (size_t i = 0; i < p->n_temperatures; i++)
        if (p->temperatures[i] != 1.0)
            return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_TEMPERATURES,
                                    "%s: their log-probabilities are at T = 1, and "
                                    "at T = %g the unseen tokens' masses are not bounded by anything proven "
                                    "here (MATH.md §2.9); use `temperatures 1`", what, p->temperatures[i]);
    if (p->top_k > 0 || (p->top_p > 0 && p->top_p < 1.0))
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_TOP_K,
                                "%s: `top_k` / `top_p` would cut the distribution "
                                "at a place the unseen tokens decide; not bounded here (MATH.md §2.9)", what);
    if (o->per_position)
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_PER_POSITION,
                                "%s: `per_position` has no interval columns yet; "
                                "run without it", what);
    return MDSD_OK;
}

/* Job j: dump j / drafters, drafter j % drafters. A directory is one dump
 * split across its *.h5 files (mdsd_dump_parts). */
int mdsd_column_open(const mdsd_batch_opts *o, size_t j, dump_job *job, mdsd_err *err)
{
    size_t drafters = o->pub.n_draft_models ? o->pub.n_draft_models : 1, i = j / drafters;
    char **paths = NULL;
    size_t n = 0;
    bool in_memory = i >= o->pub.n_dumps;
    const char *source = in_memory ? o->pub.arrays[i - o->pub.n_dumps].label : o->pub.dumps[i];
    int rc = in_memory ? MDSD_OK : mdsd_dump_parts(o->pub.dumps[i], &paths, &n, err);
    if (rc)
        return rc;
    if (in_memory)
        n = 1;
    job->parts = calloc(n, sizeof *job->parts);
    job->part_draft = calloc(n, sizeof *job->part_draft);
    job->part_row0 = calloc(n + 1, sizeof *job->part_row0);
    if (!job->parts || !job->part_draft || !job->part_row0)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    const char *model = o->pub.n_draft_models ? o->pub.draft_models[j % drafters] : NULL;
    for (size_t p = 0; p < n && rc == MDSD_OK; p++) {
        if ((rc = in_memory ? mdsd_dump_open_arrays(&o->pub.arrays[i - o->pub.n_dumps], &job->parts[p], err)
                            : mdsd_dump_open_truncated(paths[p], &job->parts[p], err)))
            break;
        job->n_parts = p + 1;
        mdsd_dump *d = job->parts[p];
        /* refused as `mdsd info --validate` refuses it: the clustered standard
         * errors count a sample's rows as one run */
        if ((rc = mdsd_dump_check_samples(d, err)))
            break;
        if ((rc = refuse_tree_dump(d, d->path, err)))
            break;
        /* without --draft-model: the first file's first drafter, by name */
        const char *name = model ? model : job->parts[0]->drafts[0].name;
        job->part_draft[p] = mdsd_dump_find_draft(d, name);
        if (job->part_draft[p] < 0)
            rc = mdsd_fail(err, MDSD_EINVAL, "%s: no drafter named '%s'%s", d->path, name,
                           in_memory ? "" : " under /drafts");
        else if (p > 0)
            rc = mdsd_dump_check_part(job->parts[0], d, job->part_draft[0], job->part_draft[p], err);
        if (rc == MDSD_OK)
            rc = check_truncated_job(o, d, job->part_draft[p], d->path, err);
        job->part_row0[p + 1] = job->part_row0[p] + d->N;
    }
    mdsd_dump_parts_free(paths, n);
    if (rc)
        return rc;
    job->dump = job->parts[0];
    job->draft = job->part_draft[0];
    job->index = j;
    /* The column names the drafter wherever the dump has a choice of them.
     * The label is one line of the CSV, the checkpoint and a shard: a
     * newline or backslash in a file name is written \ooo (parse.h). */
    const mdsd_dump *d0 = job->parts[0];
    char raw[sizeof job->label];
    if (drafters > 1 || d0->n_drafts > 1)
        snprintf(raw, sizeof raw, "%s:%s", dump_label(o, i), d0->drafts[job->draft].name);
    else
        snprintf(raw, sizeof raw, "%s", dump_label(o, i));
    mdsd_escape(raw, job->label, sizeof job->label);
    if (!model && d0->n_drafts > 1)
        note_default_drafter(o, source, dump_label(o, i), d0);
    size_t N = job->part_row0[n];
    job->begin = o->pub.row_begin;
    job->end = o->pub.row_end ? o->pub.row_end : N;
    if (job->begin >= job->end || job->end > N)
        return mdsd_fail(err, MDSD_EINVAL, "%s: rows %zu:%zu are outside the dump's %zu rows",
                         source, job->begin, job->end, N);
    return MDSD_OK;
}

void mdsd_column_close(dump_job *job)
{
    for (size_t p = 0; job->parts && p < job->n_parts; p++)
        mdsd_dump_close(job->parts[p]);
    free(job->parts), free(job->part_draft), free(job->part_row0);
    job->parts = NULL, job->dump = NULL;
}
