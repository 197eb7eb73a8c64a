/* perpos.c - the per-position CSV of the table job (--per-position): streamed,
 * hashed for resume, renamed into place at the end (engine.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "engine.h"
#include "fnv.h"

int mdsd_perpos_mark_write(FILE *partial, const perpos_mark *mark)
{
    return !mark || !mark->set ? 0
           : fprintf(partial, "#perpos bytes=%zu fnv1a=%016llx\n", mark->bytes,
                     (unsigned long long)mark->hash) < 0;
}

/* Flushes and syncs the stream: the bytes a marker records must be on disk first. */
int mdsd_perpos_sync(per_position_out *pp, mdsd_err *err)
{
    if (fflush(pp->f) != 0 || ferror(pp->f) || fsync(fileno(pp->f)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing '%s': %s", pp->partial, strerror(errno));
    return MDSD_OK;
}

static void perpos_write(per_position_out *pp, const char *text, size_t len)
{
    fwrite(text, 1, len, pp->f);
    pp->hash = mdsd_fnv1a(pp->hash, text, len);
    pp->bytes += len;
}

/* Starts PERPOS.partial afresh (header), or with from->set (--resume) checks
 * that its first from->bytes bytes hash to from->hash, drops the rest and
 * appends after them. */
int mdsd_perpos_open(per_position_out *pp, const char *path, const plan *pl,
                     const perpos_mark *from, const char *results_partial, mdsd_err *err)
{
    memset(pp, 0, sizeof *pp);
    snprintf(pp->path, sizeof pp->path, "%s", path);
    snprintf(pp->partial, sizeof pp->partial, "%s.partial", path);
    pp->hash = MDSD_FNV_OFFSET;
    if (from && from->set) {
        /* the checkpoint's own file, never through a symlink put there */
        int fd = open(pp->partial, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !(pp->f = fdopen(fd, "r+"))) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return mdsd_fail(err, e == ENOENT || e == ELOOP ? MDSD_EFORMAT : MDSD_EIO, "cannot read '%s' "
                             "(the per-position rows that '%s' records): %s; pass `discard_partial` to "
                             "start over", pp->partial, results_partial,
                             e == ELOOP ? "it is a symbolic link (not followed)" : strerror(e));
        }
        char buf[65536];
        size_t left = from->bytes, got;
        while (left > 0 && (got = fread(buf, 1, left < sizeof buf ? left : sizeof buf, pp->f)) > 0)
            pp->hash = mdsd_fnv1a(pp->hash, buf, got), left -= got;
        pp->bytes = from->bytes - left;
        if (left > 0 || pp->hash != from->hash) {
            fclose(pp->f);
            pp->f = NULL;
            return mdsd_fail_option(err, MDSD_EFORMAT, MDSD_OPTION_DISCARD_PARTIAL,
                                    "'%s': its per-position rows do not match the checkpoint "
                                    "in '%s' (%zu bytes with FNV-1a %016llx recorded; the file is shorter or "
                                    "was altered); pass `discard_partial` to start over", pp->partial,
                                    results_partial, from->bytes, (unsigned long long)from->hash);
        }
        if (fflush(pp->f) != 0 || ftruncate(fileno(pp->f), (off_t)from->bytes) != 0 ||
            fseeko(pp->f, (off_t)from->bytes, SEEK_SET) != 0) {
            fclose(pp->f);
            pp->f = NULL;
            return mdsd_fail(err, MDSD_EIO, "cannot truncate '%s': %s", pp->partial, strerror(errno));
        }
        pp->mark_bytes = pp->bytes, pp->mark_hash = pp->hash;
        return MDSD_OK;
    }
    /* A new file only: one already there is another job's checkpoint (its
     * results' .partial is not this job's -o) or a leftover that no
     * checkpoint of this -o records; a symlink there is not followed. */
    int fd = open(pp->partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_DISCARD_PARTIAL,
                                "'%s' already exists, and '%s' records none of its rows: it "
                                "may hold the per-position rows of an interrupted job on another `output` (resume "
                                "that job with its `output`), or pass `discard_partial` to delete it and start over",
                                pp->partial, results_partial);
    if (fd < 0 || !(pp->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(pp->partial);
        }
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", pp->partial, strerror(e));
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fclose(pp->f);
        pp->f = NULL;
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    }
    fputs("dump,temperature,row,sample,position,entropy_p,entropy_q,tv", f);
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        if (ce->verifier < 0)
            fprintf(f, ",alpha_star_%s_n%zu", mdsd_scheme_name(ce->scheme), ce->n);
        else
            fprintf(f, ",rate_%s_n%zu", mdsd_verifier_name((mdsd_verifier_kind)ce->verifier), ce->n);
    }
    fputc('\n', f);
    fclose(f);
    perpos_write(pp, text, len);
    free(text);
    pp->mark_bytes = pp->bytes, pp->mark_hash = pp->hash;
    return MDSD_OK;
}

/* A block's rows; open_row (the open sample's first row, after the block was
 * accumulated): where a finer checkpoint would end, marked if in this block. */
int mdsd_perpos_rows(per_position_out *pp, const plan *pl, const char *label, double T,
                     size_t row_offset, const mdsd_dump_block *b, size_t rows,
                     const block_results *br, size_t open_row, mdsd_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t i = 0; i < rows; i++) {
        if (row_offset + b->row0 + i == open_row) {
            fflush(f);
            pp->mark_bytes = pp->bytes + len, pp->mark_hash = mdsd_fnv1a(pp->hash, text, len);
        }
        mdsd_csv_write_field(f, label);
        const double *st = br->stats + 3 * i;
        fprintf(f, ",%.10g,%zu,%d,%d,%.12g,%.12g,%.12g", T, row_offset + b->row0 + i, b->sample_id[i],
                b->position[i], st[0], st[1], st[2]);
        for (size_t c = 0; c < pl->count; c++)
            fprintf(f, ",%.12g", br->alpha[i * pl->count + c]);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    }
    perpos_write(pp, text, len);
    free(text);
    return MDSD_OK;
}
