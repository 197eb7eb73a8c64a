/* pathset.h - the one output-safety check every command makes before any
 * work: the files it reads and every file it will write (outputs, their
 * .partial checkpoints, lock files, .provenance.json sidecars, per-position
 * files, Markdown/LaTeX tables, shards, figures) are collected, then each
 * output is compared with every input and every other output - by device and
 * inode where the file exists, else by its resolved path (the directory
 * resolved, symlinks followed) - and a clash is refused naming both files.
 * Each output is also checked on its own: not empty, not a directory or
 * other non-regular file, in an existing, writable directory.
 *
 * The sets that passed are remembered for the process (mdsd_path_claimed), so
 * that files written on the side (the hash cache beside a dump, hash.h) can
 * stay clear of every file the command reads or writes. */
#ifndef MDSD_PATHSET_H
#define MDSD_PATHSET_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef struct {
    char *path;   /* as given */
    char *role;   /* how the command names it: "-o", "the checkpoint of -o r.csv", "dump" */
    bool output;
} mdsd_path_entry;

typedef struct {
    mdsd_path_entry *items;
    size_t count, cap;
    bool stdout_output; /* the command writes its standard output */
    bool oom;           /* an add failed: check reports it */
} mdsd_pathset;

void mdsd_pathset_init(mdsd_pathset *s);
void mdsd_pathset_free(mdsd_pathset *s);

/* A file the command reads; `role` is a printf format. A directory of a
 * split dump is added with its *.h5 files (mdsd_pathset_dump). */
void mdsd_pathset_input(mdsd_pathset *s, const char *path, const char *role, ...)
    __attribute__((format(printf, 3, 4)));
/* A dump: a file, or a directory whose *.h5 files are read as one dump;
 * an output that would become one of its files is refused too. */
void mdsd_pathset_dump(mdsd_pathset *s, const char *path);
/* A file the command writes (NULL: none; standard output is
 * mdsd_pathset_stdout's, a "-" meaning it is the caller's to leave out). */
void mdsd_pathset_output(mdsd_pathset *s, const char *path, const char *role, ...)
    __attribute__((format(printf, 3, 4)));
/* An output written atomically beside others of a job: `path` itself (role
 * `what`, e.g. "-o") and path+suffix for each suffix of the NULL-terminated
 * list (".partial", ".lock", ".provenance.json"), named "the <word> of
 * WHAT PATH" from the suffix. */
void mdsd_pathset_output_family(mdsd_pathset *s, const char *path, const char *what,
                                const char *const *suffixes);
/* The command writes its standard output: refused when that is a regular
 * file the command reads (`mdsd info d.h5 >> d.h5`) or writes. */
void mdsd_pathset_stdout(mdsd_pathset *s);

/* Adds every file of `more` to s. */
void mdsd_pathset_add_all(mdsd_pathset *s, const mdsd_pathset *more);

/* Checks every output; on success remembers the set for mdsd_path_claimed. */
int mdsd_pathset_check(mdsd_pathset *s, mdsd_err *err);

/* Whether `path` is one of the files of a set that passed its check in
 * this process (by identity, as the check compares). */
bool mdsd_path_claimed(const char *path);

/* Whether a and b are the same file (identity as above). */
bool mdsd_path_same(const char *a, const char *b);

/* The suffix lists of the jobs' outputs. */
extern const char *const mdsd_suffixes_job[];        /* .partial .lock .provenance.json */
extern const char *const mdsd_suffixes_provenance[]; /* .provenance.json */

#endif
