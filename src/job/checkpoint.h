/* checkpoint.h - the one checkpoint format of the job layer: the table's
 * OUTPUT.partial, the block job's OUTPUT.partial and the shards' aggregates
 * (and their checkpoints) are all
 *
 *     HEADER                        (the job: a magic line with its version
 *                                    and the job's signature; shards: more
 *                                    header lines through "end")
 *     RECORD ...                    (the lines of one unit of work)
 *     #done KEY WORD=K fnv1a=H      (closes the unit: K its records, H the
 *                                    64-bit FNV-1a of their bytes as written;
 *                                    a shard's "#unit J T rows=B:E" line opens
 *                                    its unit: hashed, not counted)
 *     RECORD ...  #done ...         (the next unit, and so on)
 *
 * WORD is "rows" (table, block) or "groups" (shards); KEY names the unit
 * (the table's and shards' "LABEL,T", the block job's dump index) and is
 * everything between "#done " and the last " WORD=". A unit is written
 * whole, its marker last, then synced: the records after the last marker
 * are the unit that was being written when the job stopped, and a
 * checkpoint drops them (an aggregate refuses them). A bad record, or a
 * count or checksum that does not match, before a marker is refused, naming
 * the file, line and unit. Lines a reader marks as its own (the table's
 * finer checkpoints: "g ...", "#checkpoint ...", "#perpos ...") are neither
 * records nor hashed; a "#checkpoint" line closes a bad tail as "#done"
 * does. */
#ifndef MDSD_JOB_CHECKPOINT_H
#define MDSD_JOB_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define MDSD_CKPT_KEY_MAX 600

/* What a reader's record callback says of a line. */
enum {
    MDSD_CKPT_RECORD = 0, /* a record of the current unit: counted and hashed */
    MDSD_CKPT_SKIP = -1,  /* the reader's own line (not a record) */
    MDSD_CKPT_BAD = -2,   /* not a record (why says so): fatal if a marker follows */
    MDSD_CKPT_OPEN = -3   /* a line opening a unit (a shard's "#unit"): hashed, not counted */
};                        /* anything else (> 0): a fatal error, in err */

typedef struct {
    const char *name;   /* the file, for messages */
    const char *word;   /* the marker's count field: "rows" or "groups" */
    const char *what;   /* a record in messages: "row", "sample line" */
    const char *fix;    /* appended to refusals ("; FIX"), or NULL */
    bool drop_tail;     /* a checkpoint: an unclosed last unit is dropped */
    size_t per_unit;    /* the records of every unit (0: any number) */
    /* line [len] (with its newline) at lineno; index: the records of the
     * current unit so far */
    int (*record)(void *ctx, const char *line, size_t len, size_t lineno, size_t index,
                  mdsd_err *why);
    /* a unit whose records match its marker: text [len] from its first
     * record through its marker */
    int (*done)(void *ctx, const char *key, size_t count, size_t lineno, const char *text,
                size_t len, mdsd_err *err);
    void *ctx;
} mdsd_ckpt_reader;

/* Scans the units of body [len] (the lines after the header; its first line
 * is line first_lineno of the file). */
int mdsd_ckpt_scan(const mdsd_ckpt_reader *r, const char *body, size_t len, size_t first_lineno,
                   mdsd_err *err);

/* A unit being written: its records so far. */
typedef struct {
    size_t count;
    uint64_t hash;
} mdsd_ckpt_sum;

void mdsd_ckpt_sum_init(mdsd_ckpt_sum *s);
void mdsd_ckpt_sum_add(mdsd_ckpt_sum *s, const char *line, size_t len);
/* Writes a record and adds it to s. */
void mdsd_ckpt_put(FILE *f, mdsd_ckpt_sum *s, const char *line, size_t len);
/* Writes records 0..count-1 of a unit, record i as format(out, i, ctx) prints
 * it, each added to s as mdsd_ckpt_put does. MDSD_ENOMEM ("WHAT: out of
 * memory") when a record cannot be formatted. */
int mdsd_ckpt_put_records(FILE *f, mdsd_ckpt_sum *s, size_t count,
                          void (*format)(FILE *out, size_t i, const void *ctx), const void *ctx,
                          const char *what, mdsd_err *err);
/* Writes the marker "#done KEY WORD=K fnv1a=H" closing the unit. */
int mdsd_ckpt_close(FILE *f, const char *key, const char *word, const mdsd_ckpt_sum *s);
/* A shard's unit as text (free it): its open line ("#unit ...\n"), its
 * count records [len] and its marker. MDSD_ENOMEM when out of memory. */
int mdsd_ckpt_shard_unit(const char *open, const char *records, size_t len, size_t count,
                         const char *key, char **text, size_t *size);
/* fflush + fsync: the unit is then safe. */
int mdsd_ckpt_sync(FILE *f, mdsd_err *err);

/* Reads a whole file; *text is NUL-terminated (free it). */
int mdsd_ckpt_read_file(const char *path, char **text, size_t *size, mdsd_err *err);

#endif
