/* blockjob.c - the block job over tree dumps (mdsd/block.h, blockjob.h):
 * options, the checkpoint OUTPUT.partial (blockpartial.h), each dump's
 * cases evaluated in one pass over its trees (or resumed, or folded from
 * shards), then the CSV, Markdown and LaTeX outputs. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockengine.h"
#include "blockjob.h"
#include "blockpartial.h"
#include "opts.h"
#include "outfile.h"
#include "parse.h"
#include "progress.h"
#include "provenance.h"
#include "runopts.h"

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_block_job_opts_init)(mdsd_block_job_opts *opts, size_t size)
{
    mdsd_block_job_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

static int usage(mdsd_block_job *j, mdsd_err *err, const char *fmt, const char *a)
{
    j->usage = true;
    return mdsd_fail(err, MDSD_EINVAL, fmt, a);
}

/* --verifiers and --cost parsed (usage errors), s->cost freed by the caller
 * when it is not &s->zero. */
static int parse_setup(mdsd_block_job *j, mdsd_block_setup *s, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    mdsd_err e;
    mdsd_err_clear(&e);
    s->n_verifiers = 0;
    memset(s->verifiers, 0, sizeof s->verifiers);
    s->zero = 0.0, s->cost = &s->zero, s->n_cost = 1;
    if (o->verifiers) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", o->verifiers);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (s->n_verifiers == MDSD_BLOCK_CASE_VERIFIERS ||
                mdsd_block_case_parse(tok, &s->verifiers[s->n_verifiers++], &e)) {
                j->usage = true;
                return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_VERIFIERS,
                                        "`verifiers %s`: %s", o->verifiers,
                                        e.msg[0] ? e.msg : "too many");
            }
            const mdsd_block_case *c = &s->verifiers[s->n_verifiers - 1];
            for (size_t k = 0; k + 1 < s->n_verifiers; k++)
                if (s->verifiers[k].v == c->v && s->verifiers[k].block == c->block) {
                    j->usage = true; /* its rows would appear twice */
                    return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_VERIFIERS,
                                            "`verifiers %s`: '%s' is given twice",
                                            o->verifiers, tok);
                }
        }
    }
    if (o->costs) {
        if (mdsd_parse_vector(o->costs, "`costs`", &s->cost, &s->n_cost, &e)) {
            s->cost = &s->zero;
            return usage(j, err, "%s", e.msg);
        }
        for (size_t i = 0; i < s->n_cost; i++)
            if (!(s->cost[i] >= 0.0 && isfinite(s->cost[i])))
                return usage(j, err, "`costs %s`: costs are numbers >= 0", o->costs);
    }
    if (!o->output && (o->resume || o->discard_partial))
        return usage(j, err, "%s", "`resume` and `discard_partial` need `output CSV`");
    if (o->resume && o->discard_partial)
        return usage(j, err, "%s", "`resume` and `discard_partial`: give one");
    return MDSD_OK;
}

/* Every file the job reads and writes, checked before any work (pathset.h). */
static int check_outputs(const mdsd_block_job *j, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    const char **merged = calloc(j->merge_n + 1, sizeof *merged);
    if (!merged)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t k = 0; k < j->merge_n; k++)
        merged[k] = j->merge[k].in->name;
    mdsd_block_files files = {o->dumps, o->n_dumps, merged, j->merge_n, o->output, o->markdown,
                              o->latex, j->pub.shard, j->pub.shards, j->shard_data != NULL, j->tool != NULL,
                              j->pub.engine_metrics};
    mdsd_pathset paths;
    mdsd_pathset_init(&paths);
    mdsd_block_paths(&files, &paths);
    int rc = mdsd_pathset_check(&paths, err);
    mdsd_pathset_free(&paths);
    free(merged);
    /* a dump given twice (by name or as the same file) would make its rows
     * twice, as mdsd table refuses */
    for (size_t i = 0; rc == MDSD_OK && i < o->n_dumps; i++)
        for (size_t k = 0; rc == MDSD_OK && k < i; k++)
            if (!strcmp(o->dumps[i], o->dumps[k]) || mdsd_path_same(o->dumps[i], o->dumps[k]))
                rc = mdsd_fail(err, MDSD_EINVAL, "block: dump '%s' is given twice (as '%s' and '%s')",
                               o->dumps[i], o->dumps[k], o->dumps[i]);
    return rc;
}

/* The checkpoint of a single-process job: one writer per output, and
 * CSV.partial never dropped silently; finished dumps read back (--resume). */
typedef struct {
    mdsd_lock lock;
    char path[4200];
    char *signature;
    mdsd_block_unit *units;   /* [n_dumps] */
    FILE *partial;            /* NULL = no checkpoint (no -o, or a merge) */
} checkpoint;

static int checkpoint_open(mdsd_block_job *j, checkpoint *ck, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    char lock_path[4200], what[4300], opts[2048];
    snprintf(ck->path, sizeof ck->path, "%s.partial", o->output);
    snprintf(lock_path, sizeof lock_path, "%s.lock", o->output);
    snprintf(what, sizeof what, "'%s'", o->output);
    mdsd_block_options_text(o, opts, sizeof opts);
    int rc = mdsd_lock_acquire(&ck->lock, lock_path, what, err);
    if (rc == MDSD_OK)
        rc = mdsd_block_signature(opts, (char *const *)o->dumps, o->n_dumps, &ck->signature, err);
    struct stat st;
    if (rc == MDSD_OK && stat(ck->path, &st) == 0) {
        if (o->discard_partial) {
            if (unlink(ck->path) != 0)
                rc = mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", ck->path, strerror(errno));
        } else if (o->resume) {
            rc = mdsd_block_partial_read(ck->path, ck->signature, ck->units, o->n_dumps, err);
        } else {
            rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_RESUME, "'%s' holds the finished dumps of an "
                                  "interrupted job on this output: pass `resume` to continue it, or "
                                  "`discard_partial` to delete it and start over", ck->path);
        }
    }
    if (rc == MDSD_OK) {
        if (j->cleanup_signals) {
            static char hint[4400];
            snprintf(hint, sizeof hint, "finished dumps are kept in %s: rerun the same command "
                     "with `resume` to continue", ck->path);
            mdsd_cleanup_signals("mdsd block", hint);
        }
        ck->partial = mdsd_block_partial_start(ck->path, ck->signature, ck->units, o->n_dumps, err);
        if (!ck->partial)
            rc = err->code ? err->code : MDSD_EIO;
    }
    return rc;
}

/* The terminal's bar and the caller's callback (mdsd_block_job_opts.on_progress). */
typedef struct {
    mdsd_progress bar;
    const mdsd_block_job_opts *opts;
} progress_sink;

static void progress_tick(size_t done, size_t total, void *ctx)
{
    progress_sink *sink = ctx;
    mdsd_progress_add(&sink->bar, done - sink->bar.done);
    if (sink->opts->on_progress)
        sink->opts->on_progress(done, total, sink->opts->progress_ctx);
}

/* mdsd merge: every shard's samples of dump i, in shard order. */
static int fold_shards(const mdsd_block_job *j, size_t i, mdsd_tree_dump *t,
                       const mdsd_block_case *cases, size_t nc, mdsd_block_dump_result *res,
                       mdsd_err *err)
{
    const char **parts = calloc(j->merge_n, sizeof *parts), **names = calloc(j->merge_n, sizeof *names);
    int rc = MDSD_OK;
    for (size_t k = 0; parts && names && k < j->merge_n && rc == MDSD_OK; k++) {
        const mdsd_shard_file *f = &j->merge[k];
        if (f->n_units != j->pub.n_dumps || f->units[i].job != i)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s' does not hold the units of the job's "
                           "%zu dumps in order (cut short or damaged)", f->in->name, j->pub.n_dumps);
        else
            parts[k] = f->units[i].text + strcspn(f->units[i].text, "\n") + 1,
            names[k] = f->in->name;
    }
    if (!parts || !names)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK)
        rc = mdsd_tree_dump_fold(t, cases, nc, parts, names, j->merge_n, res, err);
    free(parts), free(names);
    return rc;
}

/* Resumed: the recorded cases must be the ones this job makes. */
static int take_resumed(const mdsd_block_unit *u, const char *partial_path, const char *dump,
                        const mdsd_block_case *cases, size_t nc, mdsd_block_dump_result *res,
                        mdsd_err *err)
{
    int same = u->count == nc;
    for (size_t c = 0; same && c < nc; c++)
        same = u->cases[c].v == cases[c].v && u->cases[c].block == cases[c].block &&
               u->cases[c].pol.depth == cases[c].pol.depth &&
               u->cases[c].pol.sequences ==
                   (cases[c].pol.kind == MDSD_POLICY_SEQ ? cases[c].pol.sequences : 0);
    if (!same)
        return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                "'%s': the results of %s are not the cases "
                                "this job makes; pass `discard_partial` to start over", partial_path, dump);
    memcpy(res, u->res, nc * sizeof *res);
    return MDSD_OK;
}

/* Evaluates dump i's cases over its trees, appended to the checkpoint. */
static int evaluate(mdsd_block_job *j, size_t i, mdsd_tree_dump *t, const mdsd_block_case *cases,
                    size_t nc, mdsd_block_dump_result *res, checkpoint *ck, size_t *finished,
                    mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    mdsd_verifier_opts vo;
    mdsd_verifier_opts_init(&vo);
    vo.is_top = o->is_top;
    progress_sink sink = {.opts = o};
    char label[96];
    snprintf(label, sizeof label, "mdsd block %zu/%zu", i + 1, o->n_dumps);
    mdsd_progress_start(&sink.bar, label, t->n_trees);
    if (!j->progress)
        sink.bar.enabled = false;
    int rc = mdsd_tree_dump_eval(t, cases, nc, &vo, o->threads, progress_tick, &sink, res, err);
    mdsd_progress_finish(&sink.bar);
    if (rc == MDSD_OK && ck->partial)
        rc = mdsd_block_partial_append(ck->partial, i, cases, res, nc, err);
    if (rc == MDSD_OK)
        *finished = i + 1;
    /* Tests interrupt the job after a given number of dumps (the real SIGINT
     * path, without timing races). */
    if (rc == MDSD_OK && j->stop_after && j->stop_after == *finished)
        raise(SIGINT);
    return rc;
}

/* The rows of every dump, in job order. */
typedef struct {
    mdsd_block_row *rows;
    size_t count, cap;
    size_t finished;   /* dumps evaluated (and checkpointed) by this run */
} row_list;

static int run_dump(mdsd_block_job *j, const mdsd_block_setup *s, size_t i, checkpoint *ck,
                    row_list *l, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    mdsd_tree_dump *t;
    int rc = mdsd_tree_dump_open(o->dumps[i], &t, err);
    if (rc)
        return rc;
    mdsd_block_case cases[MDSD_BLOCK_MAX_CASES];
    size_t nc = 0;
    if (mdsd_block_dump_cases(j, s, t, cases, &nc, err)) {
        mdsd_tree_dump_close(t); /* a usage error: j->usage */
        return MDSD_OK;
    }
    /* before any work: the engine's case must be one of the job's here */
    if (j->engine && (rc = mdsd_engine_check_dump(j->engine, t, cases, nc, err))) {
        mdsd_tree_dump_close(t);
        return rc;
    }
    mdsd_block_dump_result *res = calloc(nc ? nc : 1, sizeof *res);
    if (l->count + nc > l->cap) {
        l->cap = 2 * (l->count + nc);
        mdsd_block_row *grown = realloc(l->rows, l->cap * sizeof *l->rows);
        if (grown)
            l->rows = grown;
        else
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    if (!res)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK && j->merge)
        rc = fold_shards(j, i, t, cases, nc, res, err);
    else if (rc == MDSD_OK && ck->units[i].done)
        rc = take_resumed(&ck->units[i], ck->path, o->dumps[i], cases, nc, res, err);
    else if (rc == MDSD_OK)
        rc = evaluate(j, i, t, cases, nc, res, ck, &l->finished, err);
    for (size_t c = 0; rc == MDSD_OK && c < nc; c++)
        l->rows[l->count++] = (mdsd_block_row){o->dumps[i], cases[c], res[c], t->live};
    free(res);
    mdsd_tree_dump_close(t);
    return rc;
}

/* Every output and the provenance sidecar written to temporary files,
 * then all published: a failure leaves none of them new. */
static int write_outputs(const mdsd_block_job *j, const mdsd_block_setup *s, const row_list *l,
                         mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    mdsd_outfile outs[4];
    memset(outs, 0, sizeof outs);
    const char *dest[3] = {o->output, o->markdown, o->latex};
    mdsd_engine_cmp cmp = {0}, *eng = NULL;
    int rc = MDSD_OK;
    if (j->engine && (rc = mdsd_engine_compare(j->engine, l->rows, l->count, &cmp, err)) == MDSD_OK)
        eng = &cmp;
    for (int k = 0; k < 3 && rc == MDSD_OK; k++)
        if (dest[k])
            rc = mdsd_block_write_file(dest[k], k, l->rows, l->count, s->cost, s->n_cost, eng,
                                       &outs[k], err);
    if (rc == MDSD_OK && o->output && j->tool) {
        mdsd_provenance pv = {.tool = j->tool, .argc = j->argc, .argv = j->argv, .output = o->output,
                              .is_block = true, .is_top = o->is_top, .n_dumps = o->n_dumps,
                              .dumps = o->dumps};
        rc = mdsd_provenance_prepare(&pv, &outs[3], err);
    }
    for (int k = 3; k >= 0; k--) {
        if (rc == MDSD_OK && outs[k].tmp[0])
            rc = mdsd_outfile_publish(&outs[k], err);
        mdsd_outfile_abort(&outs[k]);
    }
    if (rc == MDSD_OK && !o->output && !o->markdown && !o->latex)
        mdsd_block_write_table(stdout, 0, l->rows, l->count, s->cost, s->n_cost, eng);
    mdsd_engine_cmp_free(&cmp);
    return rc;
}

/* The whole job in one process (or the merge of its shards). */
static int run_whole(mdsd_block_job *j, const mdsd_block_setup *s, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    checkpoint ck = {.lock = {-1, ""}};
    row_list l = {0};
    ck.units = calloc(o->n_dumps ? o->n_dumps : 1, sizeof *ck.units);
    int rc = ck.units ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (o->output && rc == MDSD_OK && !j->merge)
        rc = checkpoint_open(j, &ck, err);
    for (size_t i = 0; rc == MDSD_OK && !j->usage && i < o->n_dumps; i++)
        rc = run_dump(j, s, i, &ck, &l, err);
    if (ck.partial)
        fclose(ck.partial);
    if (rc == MDSD_OK && !j->usage)
        rc = write_outputs(j, s, &l, err);
    size_t kept = 0;
    for (size_t i = 0; ck.units && i < o->n_dumps; i++)
        kept += ck.units[i].done || i < l.finished;
    if (ck.partial && ((rc == MDSD_OK && !j->usage) || !kept)) {
        unlink(ck.path); /* done, or nothing worth keeping */
    } else if (ck.partial && j->note) {
        char msg[4400];
        snprintf(msg, sizeof msg, "finished dumps are kept in %s: rerun with `resume` to continue",
                 ck.path);
        j->note(msg, j->note_ctx);
    }
    if (ck.lock.fd >= 0)
        mdsd_lock_release(&ck.lock);
    if (ck.units)
        mdsd_block_units_free(ck.units, o->n_dumps);
    free(ck.units);
    free(ck.signature);
    free(l.rows);
    return rc;
}

int mdsd_block_job_run(mdsd_block_job *j, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    mdsd_err local;
    if (!err)
        err = &local;
    mdsd_err_clear(err);
    j->usage = false;
    mdsd_block_setup s;
    if (o->shards && (o->shard < 1 || o->shard > o->shards))
        return mdsd_fail(err, MDSD_EINVAL, "block: shard %zu of %zu: the shard must be in 1..%zu",
                         o->shard, o->shards, o->shards);
    if (o->shard && !o->shards)
        return mdsd_fail(err, MDSD_EINVAL, "block: shard %zu without the number of shards",
                         o->shard);
    int rc = parse_setup(j, &s, err);
    if (rc == MDSD_OK && j->pub.engine_metrics && (j->pub.shards || j->merge))
        rc = usage(j, err, "%s", "`engine_metrics`: with the whole job in one process only (not "
                   "`shard`, mdsd merge or mpirun)");
    if (rc == MDSD_OK)
        rc = check_outputs(j, err);
    mdsd_engine_metrics em;
    if (rc == MDSD_OK && j->pub.engine_metrics &&
        (rc = mdsd_engine_metrics_read(j->pub.engine_metrics, &em, err)) == MDSD_OK)
        j->engine = &em;
    if (rc == MDSD_OK && j->pub.shards) {
        if ((o->markdown || o->latex) && !j->shard_data)
            rc = usage(j, err, "%s", "`shard` writes partial aggregates: render the tables "
                       "with mdsd merge `markdown`/`latex`");
        else if (!o->output)
            rc = usage(j, err, "%s", "`shard` needs `output FILE`");
        else
            rc = mdsd_block_shard_run(j, &s, err);
    } else if (rc == MDSD_OK) {
        rc = run_whole(j, &s, err);
    }
    if (s.cost != &s.zero)
        free(s.cost);
    j->engine = NULL; /* em goes out of scope */
    if (j->usage && rc == MDSD_OK)
        rc = err->code ? err->code : MDSD_EINVAL;
    return rc;
}

mdsd_status mdsd_block_run(const mdsd_block_job_opts *opts, mdsd_err *err)
{
    return mdsd_block_run_with(opts, NULL, err);
}

mdsd_status mdsd_block_run_with(const mdsd_block_job_opts *opts, mdsd_run_opts *run, mdsd_err *err)
{
    if (!opts)
        return mdsd_fail(err, MDSD_EINVAL, "block: no options given (NULL)");
    int rc = mdsd_opts_check(opts->size, sizeof *opts, "mdsd_block_job_opts", NULL, err);
    mdsd_run_opts r;
    if (rc == MDSD_OK)
        rc = mdsd_run_opts_take(run, "block", &r, err);
    if (rc)
        return rc;
    if (opts->n_dumps == 0 || !opts->dumps)
        return mdsd_fail(err, MDSD_EINVAL, "block: no tree dump given");
    if (!opts->output && !opts->markdown && !opts->latex && !r.stdout_used)
        return mdsd_fail(err, MDSD_EINVAL, "block: no output given (output, markdown or latex)");
    mdsd_block_job j = {.pub = *opts, .tool = r.tool, .argc = (int)r.n_words,
                        /* the words are only read: the provenance's argv is the CLI's type */
                        .argv = (char *const *)r.words, .note = r.on_note, .note_ctx = r.note_ctx,
                        .progress = r.progress_bar != 0, .cleanup_signals = r.cleanup_signals != 0,
                        .stop_after = r.test_stop_after, .shard_data = r.shard_text,
                        .shard_size = r.shard_size, .keep_partial = r.shard_text != NULL};
    rc = mdsd_block_job_run(&j, err);
    mdsd_run_opts_usage(run, j.usage);
    return rc;
}
