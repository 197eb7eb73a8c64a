/* blockshard.c - one shard of the block job (mdsd block DUMP... --shard I/N,
 * and MPI ranks): each dump's trees of the shard, summarised per sample and
 * checkpointed per dump, its aggregate in shard.h's text with magic
 * MDSD_BLOCK_SHARD_MAGIC (blockjob_impl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockjob_impl.h"
#include "blockpartial.h"
#include "fnv.h"
#include "hash.h"
#include "outfile.h"
#include "parse.h"

/* A block shard's header: the job (options, each dump's path and SHA-256)
 * and what a merge needs to redo its set-up. */
static char *shard_header(const mdsd_block_job *j, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    char opts[2048], *sig = NULL, *text = NULL;
    size_t len = 0;
    mdsd_block_options_text(o, opts, sizeof opts);
    if (mdsd_block_signature(opts, (char *const *)o->dumps, o->n_dumps, &sig, err))
        return NULL;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        free(sig);
        mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        return NULL;
    }
    fprintf(f, "%sshard %zu/%zu\njob %s\nverifiers %s\nsequences %s\ndepth %s\nis_top %zu\ncost %s\n",
            MDSD_BLOCK_SHARD_MAGIC, j->pub.shard, j->pub.shards, sig, o->verifiers ? o->verifiers : "-",
            o->sequences ? o->sequences : "-", o->depths ? o->depths : "-",
            o->is_top, o->costs ? o->costs : "-");
    for (size_t i = 0; i < o->n_dumps; i++) { /* one line each (parse.h) */
        fputs("dump ", f);
        mdsd_fputs_escaped(o->dumps[i], f);
        fputc('\n', f);
    }
    fputs("end\n", f);
    fclose(f);
    free(sig);
    return text;
}

/* A finished dump of a shard as its unit block (shard.h), appended to the
 * checkpoint and synced. */
static int shard_unit(size_t i, const char *path, size_t tb, size_t te, const char *lines,
                      size_t lines_len, size_t n_lines, FILE *partial, char **text, size_t *len,
                      mdsd_err *err)
{
    char head[128], *key = malloc(mdsd_escape(path, NULL, 0) + 1), *buf = NULL;
    size_t n = 0;
    snprintf(head, sizeof head, "#unit %zu 0 rows=%zu:%zu\n", i, tb, te);
    if (key)
        mdsd_escape(path, key, mdsd_escape(path, NULL, 0) + 1); /* one line (parse.h) */
    int rc = key ? mdsd_ckpt_shard_unit(head, lines, lines_len, n_lines, key, &buf, &n) : MDSD_ENOMEM;
    free(key);
    if (rc)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    *text = buf;
    *len = n;
    if (fwrite(buf, 1, n, partial) != n)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return mdsd_ckpt_sync(partial, err);
}

static char *join_units(const char *header, char **text, const size_t *len, size_t n, size_t *size)
{
    size_t total = strlen(header), at = total;
    for (size_t i = 0; i < n; i++)
        total += len[i];
    char *out = malloc(total + 1);
    if (!out)
        return NULL;
    memcpy(out, header, at);
    for (size_t i = 0; i < n; i++) {
        if (len[i]) /* unfinished dumps have no text yet */
            memcpy(out + at, text[i], len[i]);
        at += len[i];
    }
    out[at] = '\0';
    *size = total;
    return out;
}

/* A shard's state: its checkpoint and each dump's unit text (NULL: not yet). */
typedef struct {
    char partial_path[4300];
    mdsd_lock lock;
    char *header;
    char **text;            /* [n_dumps] */
    size_t *len;            /* [n_dumps] */
    mdsd_shard_unit *done;  /* the units read back (into old) */
    size_t n_done;
    char *old;
    FILE *partial;
} shard_state;

/* The checkpoint read back (--resume) or refused/deleted as the options say. */
static int shard_resume(const mdsd_block_job *j, shard_state *st, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    struct stat sb;
    int rc = MDSD_OK;
    if (stat(st->partial_path, &sb) == 0) {
        size_t size = 0, hl = strlen(st->header);
        if (o->discard_partial) {
            if (unlink(st->partial_path) != 0)
                rc = mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", st->partial_path, strerror(errno));
        } else if (!o->resume) {
            rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_RESUME,
                                  "'%s' holds the finished dumps of an interrupted job on "
                                  "this output: pass `resume` to continue it, or `discard_partial` to delete "
                                  "it and start over", st->partial_path);
        } else if ((rc = mdsd_ckpt_read_file(st->partial_path, &st->old, &size, err)) == MDSD_OK) {
            if (size < hl || memcmp(st->old, st->header, hl) != 0)
                rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_DISCARD_PARTIAL,
                                      "'%s' was made by a different block job, shard or "
                                      "dump; pass `discard_partial` to delete it and start over",
                                      st->partial_path);
            else
                rc = mdsd_shard_units_parse(st->partial_path, st->old + hl, size - hl, true, &st->done,
                                            &st->n_done, err);
        }
    }
    for (size_t k = 0; k < st->n_done && rc == MDSD_OK; k++) {
        const mdsd_shard_unit *u = &st->done[k];
        if (u->job >= o->n_dumps || u->temp != 0 || st->text[u->job])
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': unit %s is not one of this shard's, or appears "
                                  "twice; pass `discard_partial` to start over", st->partial_path, u->key);
        else if (!(st->text[u->job] = malloc(u->len + 1)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else
            memcpy(st->text[u->job], u->text, u->len), st->text[u->job][u->len] = '\0',
                st->len[u->job] = u->len;
    }
    return rc;
}

/* The checkpoint rewritten with the header and the finished units, then
 * opened for appending. */
static int shard_start(const mdsd_block_job *j, shard_state *st, mdsd_err *err)
{
    size_t size;
    char *kept = join_units(st->header, st->text, st->len, j->pub.n_dumps, &size);
    mdsd_outfile out;
    int rc = MDSD_OK;
    if (!kept)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    else if ((rc = mdsd_outfile_open(&out, st->partial_path, err)) == MDSD_OK) {
        fwrite(kept, 1, size, out.f);
        rc = mdsd_outfile_commit(&out, err);
        mdsd_outfile_abort(&out);
    }
    free(kept);
    if (rc == MDSD_OK && !(st->partial = fopen(st->partial_path, "a")))
        rc = mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", st->partial_path, strerror(errno));
    return rc;
}

/* Dump i's trees of the shard: its unit (resumed units must cover them). */
static int shard_dump(mdsd_block_job *j, const mdsd_block_setup *s, size_t i, shard_state *st,
                      mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    mdsd_tree_dump *t;
    int rc = mdsd_tree_dump_open(o->dumps[i], &t, err);
    if (rc)
        return rc;
    size_t tb, te;
    mdsd_tree_dump_shard_trees(t, j->pub.shard, j->pub.shards, &tb, &te);
    mdsd_block_case cases[MDSD_BLOCK_MAX_CASES];
    size_t nc = 0;
    if (mdsd_block_dump_cases(j, s, t, cases, &nc, err)) {
        /* a usage error: j->usage */
    } else if (st->text[i]) { /* resumed: the same trees */
        unsigned long long b = 0, e = 0;
        if (sscanf(st->text[i], "#unit %*u 0 rows=%llu:%llu", &b, &e) != 2 || b != tb || e != te)
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': the unit of %s covers other trees than "
                                  "this shard's; pass `discard_partial` to start over", st->partial_path,
                                  o->dumps[i]);
    } else {
        mdsd_verifier_opts vo;
        mdsd_verifier_opts_init(&vo);
        vo.is_top = o->is_top;
        mdsd_block_dump_result *res = calloc(nc ? nc : 1, sizeof *res);
        char *lines = NULL;
        size_t lines_len = 0, n_lines = 0;
        FILE *m = open_memstream(&lines, &lines_len);
        if (!res || !m)
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        else
            rc = mdsd_tree_dump_eval_part(t, cases, nc, &vo, o->threads, NULL, NULL, j->pub.shard,
                                          j->pub.shards, m, &n_lines, res, err);
        if (m)
            fclose(m);
        if (rc == MDSD_OK)
            rc = shard_unit(i, o->dumps[i], tb, te, lines, lines_len, n_lines, st->partial,
                            &st->text[i], &st->len[i], err);
        free(lines);
        free(res);
    }
    mdsd_tree_dump_close(t);
    return rc;
}

/* The aggregate to OUTPUT (atomically) or handed back (MPI ranks). */
static int shard_publish(const mdsd_block_job *j, shard_state *st, mdsd_err *err)
{
    size_t size = 0;
    char *agg = join_units(st->header, st->text, st->len, j->pub.n_dumps, &size);
    int rc = MDSD_OK;
    if (!agg)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (j->shard_data) {
        *j->shard_data = agg, *j->shard_size = size;
        return MDSD_OK;
    }
    mdsd_outfile out;
    if ((rc = mdsd_outfile_open(&out, j->pub.output, err)) == MDSD_OK) {
        fwrite(agg, 1, size, out.f);
        rc = mdsd_outfile_commit(&out, err);
        mdsd_outfile_abort(&out);
    }
    free(agg);
    return rc;
}

int mdsd_block_shard_run(mdsd_block_job *j, const mdsd_block_setup *s, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    shard_state st = {.header = NULL};
    char lock_path[4300], what[4300];
    if (j->shard_data) {
        snprintf(st.partial_path, sizeof st.partial_path, "%s.shard-%zu-of-%zu.partial", o->output,
                 j->pub.shard, j->pub.shards);
        snprintf(lock_path, sizeof lock_path, "%s.shard-%zu-of-%zu.lock", o->output, j->pub.shard, j->pub.shards);
    } else {
        snprintf(st.partial_path, sizeof st.partial_path, "%s.partial", o->output);
        snprintf(lock_path, sizeof lock_path, "%s.lock", o->output);
    }
    snprintf(what, sizeof what, "'%s'", o->output);
    int rc = mdsd_lock_acquire(&st.lock, lock_path, what, err);
    if (rc)
        return rc;
    st.header = shard_header(j, err);
    st.text = calloc(o->n_dumps, sizeof *st.text);
    st.len = calloc(o->n_dumps, sizeof *st.len);
    if (!st.header)
        rc = err->code ? err->code : MDSD_ENOMEM;
    else if (!st.text || !st.len)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK)
        rc = shard_resume(j, &st, err);
    if (rc == MDSD_OK)
        rc = shard_start(j, &st, err);
    for (size_t i = 0; rc == MDSD_OK && !j->usage && i < o->n_dumps; i++)
        rc = shard_dump(j, s, i, &st, err);
    if (st.partial)
        fclose(st.partial);
    if (rc == MDSD_OK && !j->usage)
        rc = shard_publish(j, &st, err);
    bool kept = false;
    for (size_t i = 0; i < o->n_dumps && st.text; i++)
        kept = kept || st.text[i];
    for (size_t i = 0; rc == MDSD_OK && !j->usage && i < o->n_dumps; i++)
        mdsd_dump_sha256_keep(o->dumps[i]); /* the next shard's hash is a look-up */
    if (st.partial && ((rc == MDSD_OK && !j->usage && !j->keep_partial) || (rc != MDSD_OK && !kept)))
        unlink(st.partial_path);
    else if (st.partial && rc != MDSD_OK && !j->shard_data && j->note) {
        char msg[4400];
        snprintf(msg, sizeof msg, "finished dumps are kept in %s: rerun with `resume` to continue",
                 st.partial_path);
        j->note(msg, j->note_ctx);
    }
    for (size_t i = 0; st.text && i < o->n_dumps; i++)
        free(st.text[i]);
    free(st.text), free(st.len), free(st.done), free(st.old), free(st.header);
    mdsd_lock_release(&st.lock);
    return rc;
}
