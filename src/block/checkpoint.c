/* checkpoint.c - OUTPUT.partial of the block job over tree dumps (see
 * checkpoint.h for the format). */
#define _GNU_SOURCE
#include "checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fnv.h"
#include "hash.h"
#include "outfile.h"
#include "verifier.h"

#define MAGIC "#mdsd-block-partial 2 "
#define FIX "pass --discard-partial to delete it and start over"

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
    const char *const shard[] = {".partial", ".lock", NULL}, *const none[] = {NULL};
    const char *const with_provenance[] = {".partial", ".lock", ".provenance.json", NULL};
    const char *const *family = f->shards ? shard
                                : f->n_merged ? (f->provenance ? mdsd_suffixes_provenance : none)
                                : f->provenance ? with_provenance : shard;
    if (f->shards && f->rank) {
        char name[4200];
        mdsd_pathset_output(s, f->output, "-o");
        for (size_t k = 0; k < 2; k++) {
            snprintf(name, sizeof name, "%s.shard-%zu-of-%zu%s", f->output, f->shard, f->shards, shard[k]);
            mdsd_pathset_output(s, name, "the %s of rank %zu of -o %s", k ? "lock file" : "checkpoint",
                                f->shard - 1, f->output);
        }
    } else {
        mdsd_pathset_output_family(s, f->output, "-o", family);
    }
    mdsd_pathset_output(s, f->markdown, "--markdown");
    mdsd_pathset_output(s, f->latex, "--latex");
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
 * then depth rates, rate standard errors and reaches. */
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
    double *fields[3] = {r->rate, r->rate_se, r->reach};
    for (int k = 0; k < 3; k++)
        for (size_t d = 1; d <= L; d++) {
            int more = 0;
            if (sscanf(line + at, " %la%n", &fields[k][d], &more) != 1)
                return -1;
            at += more;
        }
    r->reach[0] = r->rate[0] = 1.0;
    return line[at] == '\n' || line[at] == '\0' ? 0 : -1;
}

int mdsd_block_partial_read(const char *path, const char *signature, mdsd_block_unit *units,
                            size_t n_dumps, mdsd_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? MDSD_OK
                               : mdsd_fail(err, MDSD_EIO, "cannot read '%s': %s", path,
                                           strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 1, count = 0, have = 0;
    ssize_t len = getline(&line, &cap, f);
    int rc = MDSD_OK;
    size_t ml = strlen(MAGIC), sl = strlen(signature);
    if (len < 0 || (size_t)len < ml + sl || strncmp(line, MAGIC, ml) != 0 ||
        strncmp(line + ml, signature, sl) != 0 || (line[ml + sl] != '\n' && line[ml + sl]))
        rc = mdsd_fail(err, MDSD_EINVAL, "'%s' was made by a different block job (other options "
                       "or dumps, or a dump changed since); " FIX ", or run the job that made it",
                       path);
    mdsd_block_case *cases = NULL;
    mdsd_block_dump_result *res = NULL;
    uint64_t hash = MDSD_FNV_OFFSET;
    int bad = 0; /* a bad line is fatal only if a marker follows it */
    size_t bad_line = 0;
    while (rc == MDSD_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            bad = 1, bad_line = lineno;
        } else if (!strncmp(line, "#done ", 6)) {
            size_t index;
            unsigned long long k, h;
            int end = 0;
            if (bad) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: not a result line; " FIX, path,
                               bad_line);
            } else if (sscanf(line, "#done %zu rows=%llu fnv1a=%16llx%n", &index, &k, &h, &end) != 3 ||
                       (line[end] != '\n' && line[end])) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: a unit marker without its dump, "
                               "row count and checksum; " FIX, path, lineno);
            } else if (index >= n_dumps) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: unit %zu, but the job has %zu "
                               "dumps; " FIX, path, lineno, index, n_dumps);
            } else if (k != count) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %zu has %zu rows where its marker "
                               "(line %zu) records %llu (a row is missing or extra); " FIX, path,
                               index, count, lineno, k);
            } else if (h != hash) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %zu: its rows do not match the "
                               "checksum of its marker (line %zu): a row was altered or "
                               "reordered; " FIX, path, index, lineno);
            } else if (units[index].done) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %zu appears twice; " FIX, path,
                               index);
            } else {
                units[index] = (mdsd_block_unit){1, count, cases, res};
                cases = NULL, res = NULL;
                count = have = 0;
                hash = MDSD_FNV_OFFSET;
            }
        } else if (!bad) {
            if (count == have) {
                have = have ? 2 * have : 16;
                mdsd_block_case *c2 = realloc(cases, have * sizeof *c2);
                if (c2)
                    cases = c2;
                mdsd_block_dump_result *r2 = realloc(res, have * sizeof *r2);
                if (r2)
                    res = r2;
                if (!c2 || !r2) {
                    rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory reading '%s'", path);
                    break;
                }
            }
            if (parse_line(line, &cases[count], &res[count]) != 0) {
                bad = 1, bad_line = lineno;
            } else {
                hash = mdsd_fnv1a(hash, line, (size_t)len);
                count++;
            }
        }
    }
    free(cases);
    free(res);
    free(line);
    fclose(f);
    if (rc != MDSD_OK)
        mdsd_block_units_free(units, n_dumps);
    return rc;
}

static int append_unit(FILE *f, size_t index, const mdsd_block_case *cases,
                       const mdsd_block_dump_result *res, size_t count, mdsd_err *err)
{
    uint64_t hash = MDSD_FNV_OFFSET;
    for (size_t i = 0; i < count; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (!m)
            return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        format_line(m, &cases[i], &res[i]);
        fclose(m);
        hash = mdsd_fnv1a(hash, buf, len);
        fputs(buf, f);
        free(buf);
    }
    fprintf(f, "#done %zu rows=%zu fnv1a=%016llx\n", index, count, (unsigned long long)hash);
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
    if (rc == MDSD_OK && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        rc = mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return rc;
}
