#include "provenance.h"
#include "dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "json.h"
#include "outfile.h"

#ifndef MDSD_VERSION
#define MDSD_VERSION "unknown"
#endif

void mdsd_provenance_path(const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "%s.provenance.json", path);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int write_dump_keys(mdsd_json *j, const mdsd_provenance *p, mdsd_err *err);

static int write_table_keys(mdsd_json *j, const mdsd_provenance *p, mdsd_err *err)
{
    mdsd_json_kv_integer(j, "seed", (long long)p->seed);
    mdsd_json_kv_integer(j, "trials", (long long)p->trials);
    mdsd_json_kv_bool(j, "simulate", p->simulate);
    mdsd_json_kv_integer(j, "top_k", (long long)p->top_k);
    mdsd_json_kv_number(j, "top_p", p->top_p > 0.0 ? p->top_p : 1.0);
    mdsd_json_kv_integer(j, "is_top", (long long)p->is_top);
    mdsd_json_key(j, "positions");
    mdsd_json_array_begin(j);
    mdsd_json_integer(j, (long long)p->row_begin);
    mdsd_json_integer(j, (long long)p->row_end);
    mdsd_json_array_end(j);
    return write_dump_keys(j, p, err);
}

/* "dumps": each dump's path, size and SHA-256 (a split dump: each file). */
static int write_dump_keys(mdsd_json *j, const mdsd_provenance *p, mdsd_err *err)
{
    mdsd_json_key(j, "dumps");
    mdsd_json_array_begin(j);
    for (size_t i = 0; i < p->n_dumps; i++) {
        /* a dump split across a directory: each of its files */
        char **parts = NULL;
        size_t n = 0;
        int rc = mdsd_dump_parts(p->dumps[i], &parts, &n, err);
        for (size_t k = 0; k < n && rc == MDSD_OK; k++) {
            struct stat st;
            char hex[MDSD_SHA256_HEX];
            if (stat(parts[k], &st) != 0)
                rc = mdsd_fail(err, MDSD_EIO, "cannot stat '%s': %s", parts[k], strerror(errno));
            else
                rc = mdsd_file_sha256(parts[k], hex, true, err);
            if (rc)
                break;
            mdsd_json_object_begin(j);
            mdsd_json_kv_string(j, "path", parts[k]);
            mdsd_json_kv_integer(j, "size_bytes", (long long)st.st_size);
            mdsd_json_kv_string(j, "sha256", hex);
            mdsd_json_object_end(j);
        }
        mdsd_dump_parts_free(parts, n);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < p->n_arrays; i++) {
        const mdsd_row_arrays *a = &p->arrays[i];
        mdsd_json_object_begin(j);
        mdsd_json_kv_string(j, "path", a->label);
        mdsd_json_kv_bool(j, "in_memory", true);
        mdsd_json_kv_integer(j, "rows", (long long)a->N);
        mdsd_json_kv_integer(j, "vocab_size", (long long)a->V);
        mdsd_json_key(j, "drafters");
        mdsd_json_array_begin(j);
        for (size_t k = 0; k < a->n_drafters; k++)
            mdsd_json_string(j, a->drafter_names[k]);
        mdsd_json_array_end(j);
        mdsd_json_object_end(j);
    }
    mdsd_json_array_end(j);
    return MDSD_OK;
}

int mdsd_provenance_write(const mdsd_provenance *p, mdsd_err *err)
{
    mdsd_outfile out;
    int rc = mdsd_provenance_prepare(p, &out, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&out, err);
    mdsd_outfile_abort(&out);
    return rc;
}

int mdsd_provenance_prepare(const mdsd_provenance *p, mdsd_outfile *outp, mdsd_err *err)
{
    char path[4200];
    mdsd_provenance_path(p->output, path, sizeof path);
    char *source = NULL;
    memset(outp, 0, sizeof *outp);
    int rc = p->source ? mdsd_provenance_read(p->source, &source, err) : MDSD_OK;
    if (rc)
        return rc;
    mdsd_outfile out;
    if ((rc = mdsd_outfile_open(&out, path, err))) {
        free(source);
        return rc;
    }
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    mdsd_json j;
    mdsd_json_init(&j, out.f);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "tool", p->tool);
    mdsd_json_kv_string(&j, "version", MDSD_VERSION);
    mdsd_json_key(&j, "command");
    mdsd_json_array_begin(&j);
    mdsd_json_string(&j, "mdsd"); /* argv[0] is the subcommand */
    for (int i = 0; i < p->argc; i++)
        mdsd_json_string(&j, p->argv[i]);
    mdsd_json_array_end(&j);
    mdsd_json_kv_string(&j, "created_utc", when);
    mdsd_json_kv_string(&j, "output", base_name(p->output));
    if (p->is_table) {
        rc = write_table_keys(&j, p, err);
    } else if (p->is_block) {
        mdsd_json_kv_integer(&j, "is_top", (long long)p->is_top);
        rc = write_dump_keys(&j, p, err);
    }
    if (p->n_labels) {
        mdsd_json_key(&j, "labels");
        mdsd_json_object_begin(&j);
        for (size_t i = 0; i < p->n_labels; i++) {
            const char *eq = strchr(p->labels[i], '=');
            char old[1024];
            snprintf(old, sizeof old, "%.*s", eq ? (int)(eq - p->labels[i]) : 0, p->labels[i]);
            mdsd_json_kv_string(&j, old, eq ? eq + 1 : "");
        }
        mdsd_json_object_end(&j);
    }
    if (p->source) {
        mdsd_json_kv_string(&j, "source", p->source);
        mdsd_json_key(&j, "source_provenance");
        if (source) {
            source[strcspn(source, "\n")] = '\0';
            mdsd_json_raw(&j, source);
        } else {
            mdsd_json_null(&j);
        }
    }
    mdsd_json_object_end(&j);
    free(source);
    if (rc) {
        mdsd_outfile_abort(&out);
        return rc;
    }
    rc = mdsd_outfile_finish(&out, err);
    *outp = out;
    return rc;
}

int mdsd_provenance_read(const char *path, char **json, mdsd_err *err)
{
    char side[4200];
    mdsd_provenance_path(path, side, sizeof side);
    *json = NULL;
    FILE *f = fopen(side, "r");
    if (!f)
        return errno == ENOENT ? MDSD_OK : mdsd_fail(err, MDSD_EIO, "cannot read '%s': %s", side, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *g = cap < ((size_t)1 << 24) ? realloc(buf, 2 * cap) : NULL;
            if (!g) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return mdsd_fail(err, MDSD_ETOOBIG, "'%s': too large for a provenance document", side);
    buf[len] = '\0';
    /* one line, an object: what mdsd_provenance_write makes */
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    if (len < 2 || buf[0] != '{' || buf[len - 1] != '}' || strchr(buf, '\n')) {
        free(buf);
        return mdsd_fail(err, MDSD_EFORMAT, "'%s' is not a provenance document (one JSON object "
                         "on one line); remove it or remake it with mdsd table", side);
    }
    *json = buf;
    return MDSD_OK;
}

unsigned long long mdsd_provenance_integer(const char *json, const char *key, unsigned long long def)
{
    if (!json)
        return def;
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    /* the document's own keys come before "source_provenance" */
    const char *end = strstr(json, "\"source_provenance\":");
    const char *at = strstr(json, pat);
    if (!at || (end && at > end))
        return def;
    char *stop;
    unsigned long long v = strtoull(at + strlen(pat), &stop, 10);
    return stop == at + strlen(pat) ? def : v;
}
