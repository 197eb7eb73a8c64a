/* partial.c - OUTPUT.partial of the table job: the signature line, finished
 * units with their row count and hash, finer checkpoints; read back on
 * --resume and rewritten with what is kept (engine.h, batch.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "checkpoint.h"
#include "fnv.h"
#include "hash.h"
#include "outfile.h"
#include "parse.h"

/* The first line of the .partial file (version 3): the job a checkpoint
 * belongs to: options, cells and each dump's path (newlines and backslashes
 * escaped: one line), then " sha256=H1,H2,..." (each dump's content,
 * hash.h) from sig->base_len on. A shard's header must match it whole; a
 * resumed .partial may differ in the digests of dumps none of whose units it
 * holds (mdsd_partial_read, mdsd_partial_check_done). */
int mdsd_partial_signature(const mdsd_batch_opts *o, const plan *pl, job_signature *sig, mdsd_err *err)
{
    char *text = sig->text;
    size_t size = sizeof sig->text;
    sig->changed = calloc(o->pub.n_dumps + o->pub.n_arrays + 1, sizeof *sig->changed);
    if (!sig->changed)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    size_t len = (size_t)snprintf(text, size,
                                  "#mdsd-table 4 trials=%llu%s seed=%llu rows=%zu:%zu top-k=%zu top-p=%.17g "
                                  "is-top=%zu draft=",
                                  (unsigned long long)o->pub.trials, o->pub.simulate ? " simulate" : "",
                                  (unsigned long long)o->pub.seed, o->pub.row_begin, o->pub.row_end, o->pub.top_k,
                                  o->pub.top_p > 0.0 ? o->pub.top_p : 1.0, o->pub.verifier_opts.is_top);
    for (size_t i = 0; i < o->pub.n_draft_models && len < size; i++)
        len += (size_t)snprintf(text + len, size - len, "%s%s", i ? "," : "", o->pub.draft_models[i]);
    len += (size_t)snprintf(text + len, size - len, " cells=");
    for (size_t c = 0; c < pl->count && len < size; c++)
        len += (size_t)snprintf(text + len, size - len, "%zu/%s/%d;", pl->cells[c].n,
                                mdsd_scheme_name(pl->cells[c].scheme), pl->cells[c].verifier);
    for (size_t i = 0; i < o->pub.n_dumps && len < size; i++) {
        len += (size_t)snprintf(text + len, size - len, " ");
        len += mdsd_escape(o->pub.dumps[i], text + len, len < size ? size - len : 0);
    }
    for (size_t i = 0; i < o->pub.n_arrays && len < size; i++) { /* never resumed (plan.c) */
        len += (size_t)snprintf(text + len, size - len, " arrays:");
        len += mdsd_escape(o->pub.arrays[i].label, text + len, len < size ? size - len : 0);
    }
    sig->base_len = len;
    for (size_t i = 0; i < o->pub.n_dumps && len < size; i++) {
        char hex[MDSD_SHA256_HEX];
        int rc = mdsd_dump_sha256(o->pub.dumps[i], hex, err);
        if (rc)
            return rc;
        len += (size_t)snprintf(text + len, size - len, "%s%s", i ? "," : " sha256=", hex);
    }
    if (len >= size)
        return mdsd_fail(err, MDSD_ETOOBIG, "table: the dump names are too long together for the "
                         "checkpoint (%zu bytes at most)", size - 1);
    return MDSD_OK;
}

/* The .partial's first line against this job's signature: the same job,
 * with changed[i] set for each dump whose content differs since. */
static bool same_job(const char *line, const job_signature *sig, size_t n_dumps)
{
    size_t sl = strlen(sig->text), ll = strcspn(line, "\n"), at = sig->base_len + 8;
    if (ll != sl || strncmp(line, sig->text, at) != 0) /* the base and " sha256=" */
        return false;
    for (size_t i = 0; i < n_dumps; i++) {
        const char *a = line + at + 65 * i, *b = sig->text + at + 65 * i;
        if (strspn(a, "0123456789abcdef") < 64 || (i + 1 < n_dumps && a[64] != ','))
            return false;
        sig->changed[i] = memcmp(a, b, 64) != 0;
    }
    return true;
}

/* A "#checkpoint KEY next=R groups=K fnv1a=H" marker over the summary lines
 * read since the last marker (text, count, hash): kept in prog under KEY. */
int mdsd_partial_accept_checkpoint(const char *path, size_t lineno, const char *marker, const char *text,
                                   size_t len, size_t groups, uint64_t hash, progress_list *prog,
                                   mdsd_err *err)
{
    const char *at = strstr(marker, " next=");
    for (const char *more; at && (more = strstr(at + 1, " next=")); at = more)
        ;
    unsigned long long next, k, h;
    int end = 0;
    if (!at || sscanf(at, " next=%llu groups=%llu fnv1a=%16llx%n", &next, &k, &h, &end) != 3 ||
        (at[end] != '\n' && at[end] != '\0'))
        return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                "'%s', line %zu: a malformed checkpoint marker; pass "
                                "`discard_partial` to start over", path, lineno);
    char key[600];
    snprintf(key, sizeof key, "%.*s", (int)(at - (marker + 12)), marker + 12);
    if (k != groups || h != hash)
        return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                "'%s': unit %s: the sample summaries before its checkpoint "
                                "(line %zu) do not match the marker (%zu lines, it records %llu; or a line was "
                                "altered); pass `discard_partial` to start over", path, key, lineno, groups, k);
    unit_progress *u = mdsd_partial_progress_find(prog, key);
    if (!u) {
        unit_progress *grown = realloc(prog->items, (prog->count + 1) * sizeof *grown);
        if (!grown)
            return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        prog->items = grown;
        u = &prog->items[prog->count++];
        memset(u, 0, sizeof *u);
        snprintf(u->key, sizeof u->key, "%s", key);
    }
    char *t = realloc(u->text, u->len + len + 1);
    if (!t)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    memcpy(t + u->len, text, len);
    t[u->len + len] = '\0';
    u->text = t, u->len += len, u->groups += groups, u->next = (size_t)next;
    return MDSD_OK;
}

unit_progress *mdsd_partial_progress_find(const progress_list *l, const char *key)
{
    for (size_t i = 0; l && i < l->count; i++)
        if (!strcmp(l->items[i].key, key))
            return &l->items[i];
    return NULL;
}

void mdsd_partial_progress_drop(progress_list *prog, const char *key)
{
    unit_progress *u = mdsd_partial_progress_find(prog, key);
    if (!u)
        return;
    free(u->text);
    *u = prog->items[--prog->count];
}

void mdsd_partial_progress_free(progress_list *prog)
{
    for (size_t i = 0; i < prog->count; i++)
        free(prog->items[i].text);
    free(prog->items);
    prog->items = NULL, prog->count = 0;
}

/* The table's .partial being read (mdsd_ckpt_scan's callbacks): finished
 * units into done, finer checkpoints into prog. */
typedef struct {
    const char *path;
    row_list *done, rows;        /* rows: the unit being read */
    progress_list *prog;
    perpos_mark seen, *last;     /* the "#perpos" record since the last marker */
    char *last_key;
    char *gtext;                 /* summary lines since the last marker */
    size_t glen, gcap, gcount;
    uint64_t ghash;
} table_read;

/* A marker: what was recorded since the previous one has served. */
static void marker_seen(table_read *t)
{
    t->seen.set = false;
    t->glen = t->gcount = 0, t->ghash = MDSD_FNV_OFFSET;
}

static int table_checkpoint(table_read *t, const char *line, size_t len, size_t lineno, size_t index,
                            mdsd_err *err)
{
    if (index)
        return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                "'%s', line %zu: a checkpoint marker among the rows "
                                "of a unit; pass `discard_partial` to start over", t->path, lineno);
    char *marker = strndup(line, len);
    int rc = marker ? mdsd_partial_accept_checkpoint(t->path, lineno, marker, t->gtext, t->glen, t->gcount,
                                                     t->ghash, t->prog, err)
                    : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    *t->last = t->seen;
    const char *at = marker ? strstr(marker, " next=") : NULL;
    for (const char *more; at && (more = strstr(at + 1, " next=")); at = more)
        ;
    if (rc == MDSD_OK && at)
        snprintf(t->last_key, 600, "%.*s", (int)(at - (marker + 12)), marker + 12);
    free(marker);
    marker_seen(t);
    return rc ? rc : MDSD_CKPT_SKIP;
}

static int table_line(void *ctx, const char *line, size_t len, size_t lineno, size_t index, mdsd_err *why)
{
    table_read *t = ctx;
    if (!strncmp(line, "#checkpoint ", 12))
        return table_checkpoint(t, line, len, lineno, index, why);
    if (!strncmp(line, "g ", 2)) {
        if (t->glen + len + 1 > t->gcap) {
            t->gcap = 2 * (t->glen + len + 1);
            char *grown = realloc(t->gtext, t->gcap);
            if (!grown)
                return mdsd_fail(why, MDSD_ENOMEM, "table: out of memory");
            t->gtext = grown;
        }
        memcpy(t->gtext + t->glen, line, len);
        t->glen += len;
        t->gcount++;
        t->ghash = mdsd_fnv1a(t->ghash, line, len);
        return MDSD_CKPT_SKIP;
    }
    if (!strncmp(line, "#perpos ", 8)) {
        unsigned long long bytes, h;
        int end = 0;
        if (sscanf(line, "#perpos bytes=%llu fnv1a=%16llx%n", &bytes, &h, &end) != 2 || line[end] != '\n') {
            mdsd_fail_option(why, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                             "'%s', line %zu: a malformed per-position record; "
                             "pass `discard_partial` to start over", t->path, lineno);
            return MDSD_CKPT_BAD;
        }
        t->seen = (perpos_mark){true, (size_t)bytes, (uint64_t)h};
        return MDSD_CKPT_SKIP;
    }
    if (lineno == 2 && !strncmp(line, "dump,", 5))
        return MDSD_CKPT_SKIP; /* the CSV header */
    char *copy = strndup(line, len);
    mdsd_report_row r;
    if (!copy)
        return mdsd_fail(why, MDSD_ENOMEM, "table: out of memory");
    int rc = mdsd_report_csv_parse(copy, true, &r, why); /* the signature is this version's */
    free(copy);
    if (rc == MDSD_OK) {
        rc = mdsd_rows_push(&t->rows, &r, 1, why);
        return rc ? rc : MDSD_CKPT_RECORD;
    }
    char reason[600];
    snprintf(reason, sizeof reason, "%s", why->msg);
    mdsd_fail_option(why, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                     "'%s', line %zu: %s; pass `discard_partial` to start over", t->path,
                     lineno, reason);
    return MDSD_CKPT_BAD;
}

/* A unit whose rows match its marker: it must be one whole unit, once. */
static int table_done(void *ctx, const char *key, size_t count, size_t lineno, const char *text,
                      size_t len, mdsd_err *err)
{
    table_read *t = ctx;
    (void)text, (void)len;
    const char *fix = "pass `discard_partial` to start over";
    int rc = MDSD_OK;
    (void)count, (void)lineno; /* checked by the scan (per_unit) */
    for (size_t i = 0; i < t->rows.count && rc == MDSD_OK; i++) {
        char rk[600];
        mdsd_rows_unit_key(&t->rows.rows[i], rk, sizeof rk);
        if (strcmp(rk, key) != 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s holds a row of %s; %s", t->path, key, rk, fix);
    }
    if (rc == MDSD_OK && mdsd_rows_unit_done(t->done, t->rows.rows[0].dump, t->rows.rows[0].temperature))
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s appears twice; %s", t->path, key, fix);
    if (rc == MDSD_OK)
        rc = mdsd_rows_push(t->done, t->rows.rows, t->rows.count, err);
    if (rc == MDSD_OK) /* the unit is whole: its checkpoints have served */
        mdsd_partial_progress_drop(t->prog, key);
    *t->last = t->seen;
    snprintf(t->last_key, 600, "%s", key);
    t->rows.count = 0;
    marker_seen(t);
    return rc;
}

/* last (out): the "#perpos" record before the file's last marker (unset if
 * it had none), last_key: that marker's unit. Rows after the last marker
 * belong to an interrupted unit and are dropped. */
int mdsd_partial_read(const char *path, const job_signature *sig, size_t n_dumps, size_t cells,
                      row_list *done, progress_list *prog, perpos_mark *last, char last_key[600],
                      mdsd_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return MDSD_OK;
    char *text = NULL;
    size_t size = 0;
    int rc = mdsd_ckpt_read_file(path, &text, &size, err);
    if (rc)
        return rc;
    const char *nl = memchr(text, '\n', size);
    if (!nl || !same_job(text, sig, n_dumps))
        rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_DISCARD_PARTIAL,
                              "'%s' was made by a different table job (other options or "
                              "dumps, a dump whose content changed since, or another mdsd version); pass "
                              "`discard_partial` to delete it and start over, or run the job that made it", path);
    table_read t = {path, done, {0}, prog, {false, 0, 0}, last, last_key, NULL, 0, 0, 0,
                    MDSD_FNV_OFFSET};
    mdsd_ckpt_reader rd = {path, "rows", "row", "pass `discard_partial` to start over", true, cells,
                           table_line, table_done, &t};
    if (rc == MDSD_OK)
        rc = mdsd_ckpt_scan(&rd, nl + 1, size - (size_t)(nl + 1 - text), 2, err);
    free(t.gtext);
    free(t.rows.rows);
    free(text);
    return rc;
}

typedef struct {
    const mdsd_report_row *rows;
    size_t max_n;
} unit_rows;

static void format_row(FILE *out, size_t i, const void *ctx)
{
    const unit_rows *u = ctx;
    mdsd_report_csv_row(out, &u->rows[i], u->max_n);
}

/* Writes a unit's rows and its marker, and syncs: the unit is then safe. */
int mdsd_partial_append_unit(FILE *partial, const mdsd_report_row *rows, size_t k, size_t max_n,
                             const perpos_mark *mark, mdsd_err *err)
{
    mdsd_ckpt_sum sum;
    mdsd_ckpt_sum_init(&sum);
    unit_rows u = {rows, max_n};
    int rc = mdsd_ckpt_put_records(partial, &sum, k, format_row, &u, "table", err);
    if (rc)
        return rc;
    char key[600];
    mdsd_rows_unit_key(&rows[0], key, sizeof key);
    mdsd_perpos_mark_write(partial, mark);
    mdsd_ckpt_close(partial, key, "rows", &sum);
    return mdsd_ckpt_sync(partial, err);
}

int mdsd_partial_checkpoint(FILE *partial, const char *key, const char *text, size_t len,
                            size_t groups, size_t next, const perpos_mark *mark, mdsd_err *err)
{
    uint64_t hash = mdsd_fnv1a(MDSD_FNV_OFFSET, text, len);
    if (fwrite(text, 1, len, partial) != len || mdsd_perpos_mark_write(partial, mark) ||
        fprintf(partial, "#checkpoint %s next=%zu groups=%zu fnv1a=%016llx\n", key, next, groups,
                (unsigned long long)hash) < 0 ||
        fflush(partial) != 0 || fsync(fileno(partial)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return MDSD_OK;
}

/* Without --resume an existing partial file is never dropped silently. */
int mdsd_partial_policy(const mdsd_batch_opts *o, const char *partial_path, mdsd_err *err)
{
    struct stat st;
    if (o->pub.discard_partial && o->per_position) {
        char pp_partial[4200];
        snprintf(pp_partial, sizeof pp_partial, "%s.partial", o->per_position);
        if (unlink(pp_partial) != 0 && errno != ENOENT)
            return mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", pp_partial, strerror(errno));
    }
    if (stat(partial_path, &st) != 0)
        return MDSD_OK;
    if (o->pub.discard_partial) {
        if (unlink(partial_path) != 0)
            return mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", partial_path, strerror(errno));
        return MDSD_OK;
    }
    if (o->pub.resume)
        return MDSD_OK;
    return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_RESUME,
                            "'%s' holds the finished units of an interrupted job on this "
                            "output: pass `resume` to continue it, or `discard_partial` to delete it and "
                            "start over", partial_path);
}

/* Whether a finer checkpoint was written to the partial file. */
bool mdsd_partial_has_checkpoint(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (f && !found && getline(&line, &cap, f) >= 0)
        found = !strncmp(line, "#checkpoint ", 12);
    free(line);
    if (f)
        fclose(f);
    return found;
}

/* Rewrites the partial file with the job's signature and the verified
 * finished units (atomically: an interrupt here loses nothing), then opens
 * it for appending. */
FILE *mdsd_partial_start(const char *partial_path, const char *signature, const row_list *done,
                         const progress_list *prog, const plan *pl, const perpos_mark *last,
                         const char *last_key, mdsd_err *err)
{
    mdsd_outfile out;
    if (mdsd_outfile_open(&out, partial_path, err))
        return NULL;
    fprintf(out.f, "%s\n", signature);
    mdsd_report_csv_header(out.f, pl->max_n);
    int rc = MDSD_OK;
    /* the per-position record goes with the last marker, which must be the
     * unit that the previous run's last marker named */
    size_t n_prog = prog ? prog->count : 0;
    if (last && last->set) {
        char key[600] = "";
        if (n_prog)
            snprintf(key, sizeof key, "%s", prog->items[n_prog - 1].key);
        else if (done->count)
            mdsd_rows_unit_key(&done->rows[done->count - pl->count], key, sizeof key);
        if (strcmp(key, last_key) != 0)
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': its last marker (unit %s) is not the last unit "
                                  "of the job's order; pass `discard_partial` to start over", partial_path,
                                  last_key);
    }
    for (size_t i = 0; i < done->count && rc == MDSD_OK; i += pl->count)
        rc = mdsd_partial_append_unit(out.f, done->rows + i, pl->count, pl->max_n,
                                      !n_prog && i + pl->count == done->count ? last : NULL, err);
    /* the checkpointed parts of unfinished units, each under one marker */
    for (size_t i = 0; i < n_prog && rc == MDSD_OK; i++)
        rc = mdsd_partial_checkpoint(out.f, prog->items[i].key, prog->items[i].text, prog->items[i].len,
                                     prog->items[i].groups, prog->items[i].next,
                                     i + 1 == n_prog ? last : NULL, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_commit(&out, err);
    mdsd_outfile_abort(&out);
    if (rc)
        return NULL;
    FILE *f = fopen(partial_path, "a");
    if (!f)
        mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", partial_path, strerror(errno));
    return f;
}

/* A unit kept from a dump whose content changed since is refused. */
static int check_unchanged(const char *path, const mdsd_batch_opts *o, size_t j, const bool *changed,
                           const char *key, mdsd_err *err)
{
    size_t i = j / (o->pub.n_draft_models ? o->pub.n_draft_models : 1);
    if (!changed || !changed[i])
        return MDSD_OK;
    return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_DISCARD_PARTIAL,
                            "'%s': unit %s was computed from '%s', whose content has "
                            "changed since (its SHA-256 differs); pass `discard_partial` to start over",
                            path, key, o->pub.dumps[i]);
}

/* A kept row's temperature went through the CSV's %.10g: it is the job's
 * temperature that prints the same (0.1:1:0.1 makes 0.30000000000000004). */
bool mdsd_partial_same_temperature(double job_T, double row_T)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "%.10g", job_T);
    snprintf(b, sizeof b, "%.10g", row_T);
    return job_T == row_T || !strcmp(a, b);
}

/* Every resumed unit must be one this job makes, from an unchanged dump. */
int mdsd_partial_check_done(const char *path, const mdsd_batch_opts *o, const dump_job *jobs,
                            size_t n_jobs, row_list *done, const bool *changed, mdsd_err *err)
{
    for (size_t i = 0; i < done->count; i++) {
        mdsd_report_row *r = &done->rows[i];
        size_t j = 0;
        bool known = false;
        for (; j < n_jobs && !known; j++)
            for (size_t t = 0; t < o->pub.n_temperatures && !known; t++)
                if ((known = !strcmp(jobs[j].label, r->dump) &&
                             mdsd_partial_same_temperature(o->pub.temperatures[t], r->temperature)))
                    r->temperature = o->pub.temperatures[t]; /* the job's own value from here on */
        char key[600];
        mdsd_rows_unit_key(r, key, sizeof key);
        if (!known)
            return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                    "'%s': unit %s is not part of this job; pass "
                                    "`discard_partial` to start over", path, key);
        int rc = check_unchanged(path, o, j - 1, changed, key, err);
        if (rc)
            return rc;
    }
    return MDSD_OK;
}

/* Every checkpointed part of a unit must be one of this job's unfinished
 * units, hold whole summaries of its cells and cover its rows up to the
 * recorded next row: checked before the partial file is rewritten. */
int mdsd_partial_check_progress(const char *path, const mdsd_batch_opts *o, const dump_job *jobs,
                                size_t n_jobs, const progress_list *prog, const plan *pl,
                                const bool *changed, mdsd_err *err)
{
    mdsd_batch_group *g = malloc(sizeof *g);
    int rc = g ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t i = 0; i < prog->count && rc == MDSD_OK; i++) {
        const unit_progress *u = &prog->items[i];
        const dump_job *job = NULL;
        for (size_t j = 0; j < n_jobs && !job; j++)
            for (size_t t = 0; t < o->pub.n_temperatures && !job; t++) {
                char key[600];
                snprintf(key, sizeof key, "%s,%.10g", jobs[j].label, o->pub.temperatures[t]);
                if (!strcmp(key, u->key))
                    job = &jobs[j];
            }
        if (!job) {
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': the checkpoint of unit %s is not part of this "
                                  "job; pass `discard_partial` to start over", path, u->key);
            break;
        }
        if ((rc = check_unchanged(path, o, (size_t)(job - jobs), changed, u->key, err)))
            break;
        size_t rows = 0;
        for (const char *s = u->text; rc == MDSD_OK && s < u->text + u->len; s += strcspn(s, "\n") + 1)
            if (mdsd_batch_group_parse(s, pl, g) != MDSD_OK)
                rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                      "'%s': unit %s: a checkpointed sample summary is not "
                                      "one of this job's cells; pass `discard_partial` to start over", path,
                                      u->key);
            else
                rows += g->rows;
        if (rc == MDSD_OK && (u->next <= job->begin || u->next > job->end || rows != u->next - job->begin))
            rc = mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                  "'%s': unit %s: its checkpoint covers %zu rows up to row "
                                  "%zu, not the job's rows from %zu; pass `discard_partial` to start over",
                                  path, u->key, rows, u->next, job->begin);
    }
    free(g);
    return rc;
}
