/* shardjob.c - one shard of the table job (--shard I/N, MPI ranks): its
 * rows (whole samples), the aggregate's header, resume from its checkpoint,
 * and the aggregate written or handed back (shard.h, engine.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "fnv.h"
#include "hash.h"
#include "outfile.h"
#include "parse.h"
#include "shard.h"

/* Row k of N of the job's rows: the k-th equal share's first row, moved on
 * to the start of the sample that holds it (shards take whole samples). */
static int shard_boundary(const dump_job *job, size_t k, size_t N, size_t *row, mdsd_err *err)
{
    size_t a = job->all_begin, b = job->all_end, R = b - a;
    size_t r = a + (R / N) * k + (R % N) * k / N;
    if (k == 0 || k == N || r == a) {
        *row = k == N ? b : r;
        return MDSD_OK;
    }
    /* the file holding row r: the start of a file is a sample's start */
    size_t p = 0;
    while (p + 1 < job->n_parts && job->part_row0[p + 1] <= r)
        p++;
    size_t lo = job->part_row0[p], hi = job->part_row0[p + 1] < b ? job->part_row0[p + 1] : b;
    mdsd_dump *d = job->parts[p];
    size_t chunk = d->max_sample_rows + 1;
    int *ids = malloc(chunk * sizeof *ids);
    if (!ids)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    int rc = MDSD_OK;
    while (r > lo && r < hi && rc == MDSD_OK) {
        /* ids[0] is row r - 1's sample: find where the next one starts */
        size_t n = chunk < hi - r + 1 ? chunk : hi - r + 1, i = 1;
        if ((rc = mdsd_dump_read_meta(d, r - 1 - lo, n, NULL, ids, NULL, err)))
            break;
        while (i < n && ids[i] == ids[0])
            i++;
        r = r - 1 + i;
        if (i < n)
            break;
    }
    free(ids);
    *row = r < hi ? r : hi;
    return rc;
}

static int shard_rows(const mdsd_batch_opts *o, dump_job *job, mdsd_err *err)
{
    job->all_begin = job->begin, job->all_end = job->end;
    int rc = shard_boundary(job, o->pub.shard - 1, o->pub.shards, &job->begin, err);
    return rc ? rc : shard_boundary(job, o->pub.shard, o->pub.shards, &job->end, err);
}

/* The aggregate's header (shard.h): everything a merge checks and needs. */
static char *shard_header(const mdsd_batch_opts *o, const plan *pl, const dump_job *jobs,
                          size_t n_jobs, const char *signature, mdsd_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        return NULL;
    }
    fputs(MDSD_SHARD_MAGIC, f);
    fprintf(f, "shard %zu/%zu\njob %s\n", o->pub.shard, o->pub.shards, signature);
    fprintf(f, "seed %llu\ntrials %llu\nsimulate %d\ntop_k %zu\ntop_p %a\nis_top %zu\n"
            "positions %zu:%zu\nmax_n %zu\n", (unsigned long long)o->pub.seed,
            (unsigned long long)o->pub.trials, o->pub.simulate ? 1 : 0, o->pub.top_k,
            o->pub.top_p > 0.0 ? o->pub.top_p : 1.0, o->pub.verifier_opts.is_top, o->pub.row_begin, o->pub.row_end,
            pl->max_n);
    for (size_t c = 0; c < pl->count; c++)
        fprintf(f, "cell %zu %s %s\n", pl->cells[c].n, mdsd_scheme_name(pl->cells[c].scheme),
                pl->cells[c].verifier < 0 ? "bound"
                                          : mdsd_verifier_name((mdsd_verifier_kind)pl->cells[c].verifier));
    for (size_t t = 0; t < o->pub.n_temperatures; t++)
        fprintf(f, "temperature %a\n", o->pub.temperatures[t]);
    size_t drafters = o->pub.n_draft_models ? o->pub.n_draft_models : 1;
    for (size_t i = 0; i < o->pub.n_dumps; i++) /* every file of a split dump */
        for (size_t p = 0; p < jobs[i * drafters].n_parts; p++) {
            const mdsd_dump *d = jobs[i * drafters].parts[p];
            char hex[MDSD_SHA256_HEX]; /* known already: the signature hashed it */
            if (mdsd_file_sha256(d->path, hex, false, err) != MDSD_OK) {
                fclose(f);
                free(text);
                return NULL;
            }
            fprintf(f, "dump %lld %lld %s ", d->file_size, d->file_mtime_ns, hex);
            mdsd_fputs_escaped(d->path, f); /* one line (parse.h) */
            fputc('\n', f);
        }
    for (size_t j = 0; j < n_jobs; j++)
        fprintf(f, "column %s\n", jobs[j].label);
    fputs("end\n", f);
    if (fclose(f) != 0) {
        free(text);
        mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        return NULL;
    }
    return text;
}

/* A shard's checkpoint read back: the header must be this shard's, and each
 * finished unit one of its units with its rows. */
/* The finer checkpoints between the units of a shard's checkpoint file
 * (body: after its header) into prog. */
static int shard_progress(const char *path, const char *body, size_t len, progress_list *prog,
                          mdsd_err *err)
{
    const char *s = body, *end = body + len, *gtext = NULL;
    size_t glen = 0, gcount = 0, lineno = 0;
    uint64_t ghash = MDSD_FNV_OFFSET;
    bool in_unit = false;
    int rc = MDSD_OK;
    while (rc == MDSD_OK && s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
        lineno++;
        if (!nl) {
            break; /* a line cut short: the tail of an interrupted write */
        } else if (!strncmp(s, "#unit ", 6)) {
            in_unit = true;
        } else if (!strncmp(s, "#done ", 6)) {
            in_unit = false;
        } else if (!in_unit && !strncmp(s, "g ", 2)) {
            if (gcount == 0)
                gtext = s;
            glen += n, gcount++;
            ghash = mdsd_fnv1a(ghash, s, n);
        } else if (!in_unit && !strncmp(s, "#checkpoint ", 12)) {
            char *marker = strndup(s, n);
            rc = marker ? mdsd_partial_accept_checkpoint(path, lineno, marker, gtext, glen, gcount, ghash,
                                                         prog, err)
                        : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
            free(marker);
            glen = gcount = 0, ghash = MDSD_FNV_OFFSET;
        }
        s += n;
    }
    return rc;
}

static int shard_resume(const mdsd_batch_opts *o, const char *path, const char *header,
                        const dump_job *jobs, size_t n_jobs, shard_units *su, progress_list *prog,
                        const plan *pl, mdsd_err *err)
{
    char *text = NULL;
    size_t size = 0, hl = strlen(header);
    struct stat st;
    if (stat(path, &st) != 0)
        return MDSD_OK;
    int rc = mdsd_ckpt_read_file(path, &text, &size, err);
    if (rc)
        return rc;
    if (size < hl || memcmp(text, header, hl) != 0) {
        free(text);
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_DISCARD_PARTIAL,
                                "'%s' was made by a different table job, shard or "
                                "dump (or another mdsd version); pass `discard_partial` to delete it and "
                                "start over, or run the job that made it", path);
    }
    mdsd_shard_unit *units = NULL;
    size_t count = 0;
    rc = mdsd_shard_units_parse(path, text + hl, size - hl, true, &units, &count, err);
    for (size_t i = 0; i < count && rc == MDSD_OK; i++) {
        const mdsd_shard_unit *u = &units[i];
        size_t k = u->job * o->pub.n_temperatures + u->temp;
        if (u->job >= n_jobs || u->temp >= o->pub.n_temperatures || u->begin != jobs[u->job].begin ||
            u->end != jobs[u->job].end)
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': unit %s is not part of this shard; pass "
                                  "`discard_partial` to start over", path, u->key);
        else if (su->text[k])
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': unit %s appears twice; pass "
                                  "`discard_partial` to start over", path, u->key);
        else if (!(su->text[k] = malloc(u->len + 1)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        else {
            memcpy(su->text[k], u->text, u->len);
            su->text[k][u->len] = '\0';
            su->len[k] = u->len;
        }
    }
    if (rc == MDSD_OK)
        rc = shard_progress(path, text + hl, size - hl, prog, err);
    /* a finished unit's checkpoints have served */
    for (size_t i = 0; i < count && rc == MDSD_OK; i++)
        mdsd_partial_progress_drop(prog, units[i].key);
    if (rc == MDSD_OK)
        rc = mdsd_partial_check_progress(path, o, jobs, n_jobs, prog, pl, NULL, err);
    free(units);
    free(text);
    return rc;
}

/* The header and every unit, in job order. */
static char *shard_join(const char *header, const shard_units *su, size_t n_units, size_t *size)
{
    size_t len = strlen(header);
    for (size_t k = 0; k < n_units; k++)
        len += su->len[k];
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t at = strlen(header);
    memcpy(out, header, at);
    for (size_t k = 0; k < n_units; k++) {
        if (su->len[k]) /* unfinished units have no text yet */
            memcpy(out + at, su->text[k], su->len[k]);
        at += su->len[k];
    }
    out[at] = '\0';
    *size = len;
    return out;
}

int mdsd_shardjob_run(const mdsd_batch_opts *o, const plan *pl, dump_job *jobs, size_t n_jobs,
                      const char *signature, const char *partial_path, mdsd_err *err)
{
    size_t n_units = n_jobs * o->pub.n_temperatures, total = 0;
    shard_units su = {calloc(n_units, sizeof *su.text), calloc(n_units, sizeof *su.len)};
    progress_list prog = {0};
    int rc = su.text && su.len ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t j = 0; j < n_jobs && rc == MDSD_OK; j++)
        if ((rc = shard_rows(o, &jobs[j], err)) == MDSD_OK)
            total += (jobs[j].end - jobs[j].begin) * o->pub.n_temperatures;
    char *header = rc == MDSD_OK ? shard_header(o, pl, jobs, n_jobs, signature, err) : NULL;
    if (rc == MDSD_OK && !header)
        rc = err->code;
    if (rc == MDSD_OK && o->pub.resume)
        rc = shard_resume(o, partial_path, header, jobs, n_jobs, &su, &prog, pl, err);
    if (rc == MDSD_OK)
        mdsd_plan_warn_monte_carlo(o, pl, jobs[0].dump->V, total);
    /* the checkpoint: rewritten with the header and the finished units */
    FILE *partial = NULL;
    if (rc == MDSD_OK) {
        mdsd_outfile out;
        size_t size;
        char *kept = shard_join(header, &su, n_units, &size);
        if (!kept)
            rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        else if ((rc = mdsd_outfile_open(&out, partial_path, err)) == MDSD_OK) {
            fwrite(kept, 1, size, out.f);
            /* and the checkpointed parts of unfinished units */
            for (size_t i = 0; i < prog.count && rc == MDSD_OK; i++)
                rc = mdsd_partial_checkpoint(out.f, prog.items[i].key, prog.items[i].text, prog.items[i].len,
                                             prog.items[i].groups, prog.items[i].next, NULL, err);
            if (rc == MDSD_OK)
                rc = mdsd_outfile_commit(&out, err);
            mdsd_outfile_abort(&out);
        }
        free(kept);
        if (rc == MDSD_OK && !(partial = fopen(partial_path, "a")))
            rc = mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", partial_path, strerror(errno));
    }
    mdsd_progress progress;
    mdsd_progress_start(&progress, "mdsd table", total);
    if (!o->progress)
        progress.enabled = false;
    for (size_t j = 0; j < n_jobs && rc == MDSD_OK; j++)
        rc = mdsd_unit_run_column(o, pl, &jobs[j], NULL, &prog, NULL, partial, &progress, &su, err);
    mdsd_progress_finish(&progress);
    if (partial)
        fclose(partial);
    size_t size = 0;
    char *agg = rc == MDSD_OK ? shard_join(header, &su, n_units, &size) : NULL;
    if (rc == MDSD_OK && !agg)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    if (rc == MDSD_OK && o->shard_data) {
        *o->shard_data = agg;
        *o->shard_size = size;
        agg = NULL;
    } else if (rc == MDSD_OK) {
        mdsd_outfile out;
        if ((rc = mdsd_outfile_open(&out, o->pub.output, err)) == MDSD_OK) {
            fwrite(agg, 1, size, out.f);
            rc = mdsd_outfile_commit(&out, err);
            mdsd_outfile_abort(&out);
        }
    }
    if (rc == MDSD_OK && !o->keep_partial)
        unlink(partial_path);
    for (size_t i = 0; rc == MDSD_OK && i < o->pub.n_dumps; i++)
        mdsd_dump_sha256_keep(o->pub.dumps[i]); /* the next shard's hash is a look-up */
    free(agg);
    free(header);
    mdsd_partial_progress_free(&prog);
    for (size_t k = 0; su.text && k < n_units; k++)
        free(su.text[k]);
    free(su.text), free(su.len);
    return rc;
}
