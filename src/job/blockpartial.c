/* blockpartial.c - OUTPUT.partial of the block job over tree dumps (see
 * blockpartial.h for its records, checkpoint.h for the format). */
#define _GNU_SOURCE
#include "blockpartial.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "hash.h"
#include "outfile.h"
#include "verifier.h"

#define MAGIC "#mdsd-block-partial 3 "
#define FIX "pass `discard_partial` to delete it and start over"

int mdsd_block_signature(const char *options, char *const *dumps, size_t n_dumps, char **out,
                         mdsd_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    fprintf(m, "%s", options);
    /* A directory (a split dump) is recorded as its files, each with its
     * content's SHA-256 (hash.h): a file changed, added or removed changes
     * the signature, whatever its size and times. */
    int rc = MDSD_OK;
    for (size_t i = 0; i < n_dumps && rc == MDSD_OK; i++) {
        char **files = NULL;
        size_t n = 0;
        if ((rc = mdsd_dump_parts(dumps[i], &files, &n, err)))
            break;
        for (size_t k = 0; k < n && rc == MDSD_OK; k++) {
            char hex[MDSD_SHA256_HEX];
            if ((rc = mdsd_file_sha256(files[k], hex, false, err)))
                break;
            /* The path is the last field of the line: no character of it is
             * special, and newlines (which would end the line) are escaped. */
            fprintf(m, " [%s ", hex);
            for (const char *c = files[k]; *c; c++)
                fprintf(m, *c == '\n' || *c == '\\' || *c == ']' ? "\\%03o" : "%c", *c);
            fputc(']', m);
        }
        mdsd_dump_parts_free(files, n);
    }
    if (rc) {
        fclose(m);
        free(buf);
        return rc;
    }
    fclose(m);
    *out = buf;
    return MDSD_OK;
}

void mdsd_block_paths(const mdsd_block_files *f, mdsd_pathset *s)
{
    for (size_t i = 0; i < f->n_dumps; i++)
        mdsd_pathset_dump(s, f->dumps[i]);
    for (size_t i = 0; i < f->n_merged; i++)
        mdsd_pathset_input(s, f->merged[i], "a shard");
    if (f->engine_metrics)
        mdsd_pathset_input(s, f->engine_metrics, "`engine_metrics`");
    const char *const shard[] = {".partial", ".lock", NULL}, *const none[] = {NULL};
    const char *const with_provenance[] = {".partial", ".lock", ".provenance.json", NULL};
    const char *const *family = f->shards ? shard
                                : f->n_merged ? (f->provenance ? mdsd_suffixes_provenance : none)
                                : f->provenance ? with_provenance : shard;
    if (f->shards && f->rank) {
        char name[4200];
        mdsd_pathset_output(s, f->output, "`output`");
        for (size_t k = 0; k < 2; k++) {
            snprintf(name, sizeof name, "%s.shard-%zu-of-%zu%s", f->output, f->shard, f->shards, shard[k]);
            mdsd_pathset_output(s, name, "the %s of rank %zu of `output %s`", k ? "lock file" : "checkpoint",
                                f->shard - 1, f->output);
        }
    } else {
        mdsd_pathset_output_family(s, f->output, "`output`", family);
    }
    mdsd_pathset_output(s, f->markdown, "`markdown`");
    mdsd_pathset_output(s, f->latex, "`latex`");
    mdsd_pathset_stdout(s);
}

void mdsd_block_units_free(mdsd_block_unit *units, size_t n_dumps)
{
    for (size_t i = 0; units && i < n_dumps; i++) {
        free(units[i].cases);
        free(units[i].res);
        memset(&units[i], 0, sizeof units[i]);
    }
}

/* One 'r' line: verifier name, depth, sequences, trees, samples, tau, se,
 * then depth rates, rate standard errors, reaches and their standard errors. */
static void format_line(FILE *f, const mdsd_block_case *c, const mdsd_block_dump_result *r)
{
    size_t L = c->pol.depth;
    fprintf(f, "r %s %zu %zu %zu %zu %a %a", mdsd_block_case_name(c), L,
            c->pol.kind == MDSD_POLICY_SEQ ? c->pol.sequences : 0, r->trees, r->samples, r->tau,
            r->se);
    for (size_t d = 1; d <= L; d++)
        fprintf(f, " %a", r->rate[d]);
    for (size_t d = 1; d <= L; d++)
        fprintf(f, " %a", r->rate_se[d]);
    for (size_t d = 1; d <= L; d++)
        fprintf(f, " %a", r->reach[d]);
    for (size_t d = 1; d <= L; d++)
        fprintf(f, " %a", r->reach_se[d]);
    fputc('\n', f);
}

static int parse_line(const char *line, mdsd_block_case *c, mdsd_block_dump_result *r)
{
    char name[64];
    size_t L, K;
    int at = 0;
    memset(c, 0, sizeof *c);
    memset(r, 0, sizeof *r);
    if (sscanf(line, "r %63s %zu %zu %zu %zu %la %la%n", name, &L, &K, &r->trees, &r->samples,
               &r->tau, &r->se, &at) != 7 ||
        L < 1 || L > MDSD_BLOCK_MAX_DEPTH || mdsd_block_case_parse(name, c, NULL) != MDSD_OK)
        return -1;
    c->pol.depth = L;
    c->pol.sequences = K;
    double *fields[4] = {r->rate, r->rate_se, r->reach, r->reach_se};
    for (int k = 0; k < 4; k++)
        for (size_t d = 1; d <= L; d++) {
            int more = 0;
            if (sscanf(line + at, " %la%n", &fields[k][d], &more) != 1)
                return -1;
            at += more;
        }
    r->reach[0] = r->rate[0] = 1.0;
    return line[at] == '\n' || line[at] == '\0' ? 0 : -1;
}

/* The units of a block partial being read (mdsd_ckpt_scan's callbacks). */
typedef struct {
    const char *path;
    mdsd_block_unit *units;
    size_t n_dumps, have;
    mdsd_block_case *cases;
    mdsd_block_dump_result *res;
} block_read;

static int block_line(void *ctx, const char *line, size_t len, size_t lineno, size_t index,
                      mdsd_err *why)
{
    block_read *b = ctx;
    (void)len;
    if (index == b->have) {
        b->have = b->have ? 2 * b->have : 16;
        mdsd_block_case *c2 = realloc(b->cases, b->have * sizeof *c2);
        if (c2)
            b->cases = c2;
        mdsd_block_dump_result *r2 = realloc(b->res, b->have * sizeof *r2);
        if (r2)
            b->res = r2;
        if (!c2 || !r2)
            return mdsd_fail(why, MDSD_ENOMEM, "block: out of memory reading '%s'", b->path);
    }
    if (parse_line(line, &b->cases[index], &b->res[index]) == 0)
        return MDSD_CKPT_RECORD;
    mdsd_fail(why, MDSD_EFORMAT, "'%s', line %zu: not a result line; " FIX, b->path, lineno);
    return MDSD_CKPT_BAD;
}

static int block_done(void *ctx, const char *key, size_t count, size_t lineno, const char *text,
                      size_t len, mdsd_err *err)
{
    block_read *b = ctx;
    (void)text, (void)len;
    size_t index;
    int end = 0;
    if (key[0] < '0' || key[0] > '9' || sscanf(key, "%zu%n", &index, &end) != 1 || key[end])
        return mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: a unit marker without its dump, row "
                         "count and checksum; " FIX, b->path, lineno);
    if (index >= b->n_dumps)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: unit %zu, but the job has %zu dumps; " FIX,
                         b->path, lineno, index, b->n_dumps);
    if (b->units[index].done)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %zu appears twice; " FIX, b->path, index);
    b->units[index] = (mdsd_block_unit){1, count, b->cases, b->res};
    b->cases = NULL, b->res = NULL, b->have = 0;
    return MDSD_OK;
}

int mdsd_block_partial_read(const char *path, const char *signature, mdsd_block_unit *units,
                            size_t n_dumps, mdsd_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return MDSD_OK;
    char *text = NULL;
    size_t size = 0, ml = strlen(MAGIC), sl = strlen(signature), hl = ml + sl + 1;
    int rc = mdsd_ckpt_read_file(path, &text, &size, err);
    if (rc)
        return rc;
    if (size < hl || strncmp(text, MAGIC, ml) != 0 || strncmp(text + ml, signature, sl) != 0 ||
        text[ml + sl] != '\n')
        rc = mdsd_fail(err, MDSD_EINVAL, "'%s' was made by a different block job (other options "
                       "or dumps, or a dump changed since); " FIX ", or run the job that made it",
                       path);
    block_read b = {path, units, n_dumps, 0, NULL, NULL};
    mdsd_ckpt_reader rd = {path, "rows", "row", FIX, true, 0, block_line, block_done, &b};
    if (rc == MDSD_OK)
        rc = mdsd_ckpt_scan(&rd, text + hl, size - hl, 2, err);
    free(b.cases);
    free(b.res);
    free(text);
    if (rc != MDSD_OK)
        mdsd_block_units_free(units, n_dumps);
    return rc;
}

typedef struct {
    const mdsd_block_case *cases;
    const mdsd_block_dump_result *res;
} unit_records;

static void format_record(FILE *out, size_t i, const void *ctx)
{
    const unit_records *u = ctx;
    format_line(out, &u->cases[i], &u->res[i]);
}

static int append_unit(FILE *f, size_t index, const mdsd_block_case *cases,
                       const mdsd_block_dump_result *res, size_t count, mdsd_err *err)
{
    mdsd_ckpt_sum sum;
    mdsd_ckpt_sum_init(&sum);
    unit_records u = {cases, res};
    int rc = mdsd_ckpt_put_records(f, &sum, count, format_record, &u, "block", err);
    if (rc)
        return rc;
    char key[32];
    snprintf(key, sizeof key, "%zu", index);
    mdsd_ckpt_close(f, key, "rows", &sum);
    return MDSD_OK;
}

FILE *mdsd_block_partial_start(const char *path, const char *signature,
                               const mdsd_block_unit *units, size_t n_dumps, mdsd_err *err)
{
    mdsd_outfile out;
    if (mdsd_outfile_open(&out, path, err))
        return NULL;
    fprintf(out.f, MAGIC "%s\n", signature);
    int rc = MDSD_OK;
    for (size_t i = 0; i < n_dumps && rc == MDSD_OK; i++)
        if (units[i].done)
            rc = append_unit(out.f, i, units[i].cases, units[i].res, units[i].count, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_commit(&out, err);
    else
        mdsd_outfile_abort(&out);
    if (rc != MDSD_OK)
        return NULL;
    FILE *f = fopen(path, "a");
    if (!f)
        mdsd_fail(err, MDSD_EIO, "cannot append to '%s': %s", path, strerror(errno));
    return f;
}

int mdsd_block_partial_append(FILE *f, size_t index, const mdsd_block_case *cases,
                              const mdsd_block_dump_result *res, size_t count, mdsd_err *err)
{
    int rc = append_unit(f, index, cases, res, count, err);
    return rc == MDSD_OK ? mdsd_ckpt_sync(f, err) : rc;
}
