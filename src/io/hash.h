/* hash.h - SHA-256 of whole files, in process (GNU Nettle; no child process,
 * any file name), for the provenance sidecars, the checkpoints' dump
 * identities and split dumps' duplicate check.
 *
 * A file's digest is remembered for the process and cached beside it in
 * FILE.mdsd-sha256, one line
 *     mdsd-sha256 1 DEV INO SIZE MTIME_NS CTIME_NS HEX
 * keyed by the file's device, inode, size, modification and change time: a
 * cache whose key differs from the file's is ignored (and replaced). The
 * cache is written only when the caller asks (a job that succeeded), never
 * over a file that is not such a cache, never over a file the command reads
 * or writes (pathset.h), and not at all where the directory is read-only.
 * MDSD_REHASH=1 in the environment ignores every cache and rehashes (the
 * cache is then rewritten); MDSD_HASH_CACHE=0 neither reads nor writes one. */
#ifndef MDSD_HASH_H
#define MDSD_HASH_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define MDSD_SHA256_HEX 65 /* 64 hex digits and NUL */

/* The SHA-256 of the file at `path` in lower-case hex. keep: write the cache
 * beside the file (see above). A file that changes while it is read is an
 * error naming it. */
int mdsd_file_sha256(const char *path, char hex[MDSD_SHA256_HEX], bool keep, mdsd_err *err);

/* The SHA-256 of bytes in memory, in hex. */
void mdsd_sha256_text(const void *bytes, size_t len, char hex[MDSD_SHA256_HEX]);

/* A dump's content identity for checkpoints: the SHA-256 of its file, or
 * of a split dump (a directory, dump.h) the SHA-256 of its files' digests
 * in order. */
int mdsd_dump_sha256(const char *path, char hex[MDSD_SHA256_HEX], mdsd_err *err);

/* After a job that succeeded: the cache beside each file of the dump at
 * `path` whose digest this process knows (a job that writes no provenance:
 * shards). Failures are silent. */
void mdsd_dump_sha256_keep(const char *path);

/* path + ".mdsd-sha256" into buf. */
void mdsd_hash_cache_path(const char *path, char *buf, size_t size);

#endif
