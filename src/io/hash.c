/* hash.c - SHA-256 of files with GNU Nettle, remembered and cached (hash.h). */
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "dump.h"
#include "outfile.h"
#include "pathset.h"

#define CACHE_SUFFIX ".mdsd-sha256"
#define CACHE_MAGIC "mdsd-sha256 1 "

/* What a digest is valid for. */
typedef struct {
    unsigned long long dev, ino;
    long long size, mtime_ns, ctime_ns;
} file_key;

static file_key key_of(const struct stat *st)
{
    return (file_key){(unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
                      (long long)st->st_size,
                      (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec,
                      (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec};
}

static bool same_key(const file_key *a, const file_key *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

static bool env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && !strcmp(v, value);
}

void mdsd_hash_cache_path(const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "%s" CACHE_SUFFIX, path);
}

/* ---- the process's memory ------------------------------------------------ */

typedef struct {
    file_key key;
    char hex[MDSD_SHA256_HEX];
    bool computed; /* by this process (not read from a cache file) */
} memo_entry;

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static memo_entry *memo;
static size_t memo_n, memo_cap;

/* computed_only: only digests this process computed (MDSD_REHASH). */
static bool memo_find(const file_key *k, bool computed_only, char hex[MDSD_SHA256_HEX])
{
    bool found = false;
    pthread_mutex_lock(&memo_lock);
    for (size_t i = 0; i < memo_n && !found; i++)
        if (same_key(&memo[i].key, k) && (memo[i].computed || !computed_only)) {
            memcpy(hex, memo[i].hex, MDSD_SHA256_HEX);
            found = true;
        }
    pthread_mutex_unlock(&memo_lock);
    return found;
}

static void memo_add(const file_key *k, const char hex[MDSD_SHA256_HEX], bool computed)
{
    pthread_mutex_lock(&memo_lock);
    for (size_t i = 0; i < memo_n; i++)
        if (same_key(&memo[i].key, k)) { /* a computed digest replaces a cached one */
            if (computed && !memo[i].computed) {
                memcpy(memo[i].hex, hex, MDSD_SHA256_HEX);
                memo[i].computed = true;
            }
            pthread_mutex_unlock(&memo_lock);
            return;
        }
    if (memo_n == memo_cap) {
        size_t cap = memo_cap ? 2 * memo_cap : 16;
        memo_entry *grown = realloc(memo, cap * sizeof *grown);
        if (grown)
            memo = grown, memo_cap = cap;
    }
    if (memo_n < memo_cap) {
        memo[memo_n].key = *k;
        memcpy(memo[memo_n].hex, hex, MDSD_SHA256_HEX);
        memo[memo_n].computed = computed;
        memo_n++;
    }
    pthread_mutex_unlock(&memo_lock);
}

/* ---- the cache beside the file ------------------------------------------- */

/* Reads a cache file (not through a symlink). 1: ours, key and digest
 * parsed; 0: absent; -1: something else is there (never touched). */
static int cache_read(const char *cache, file_key *k, char hex[MDSD_SHA256_HEX])
{
    int fd = open(cache, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    struct stat st;
    char buf[256];
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (off_t)sizeof buf
                      ? read(fd, buf, sizeof buf - 1) : -1;
    close(fd);
    if (got < (ssize_t)strlen(CACHE_MAGIC) || memcmp(buf, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
        return -1;
    buf[got] = '\0';
    int end = 0;
    /* ours but damaged: replaceable, never trusted */
    memset(k, 0, sizeof *k);
    hex[0] = '\0';
    if (sscanf(buf + strlen(CACHE_MAGIC), "%llu %llu %lld %lld %lld %64[0-9a-f]%n", &k->dev, &k->ino,
               &k->size, &k->mtime_ns, &k->ctime_ns, hex, &end) != 6 ||
        strlen(hex) != 64 || strcmp(buf + strlen(CACHE_MAGIC) + end, "\n") != 0)
        hex[0] = '\0';
    return 1;
}

/* Writes the cache of `path` when it may: never over a file that is not a
 * cache, nor over any file the command reads or writes; failures are
 * silent (the cache only saves time). */
static void cache_write(const char *path, const file_key *k, const char hex[MDSD_SHA256_HEX])
{
    char cache[4200], tmp[4300], old_hex[MDSD_SHA256_HEX];
    file_key old;
    mdsd_hash_cache_path(path, cache, sizeof cache);
    if (strlen(path) > 4000 || env_is("MDSD_HASH_CACHE", "0") || mdsd_path_claimed(cache))
        return;
    int state = cache_read(cache, &old, old_hex);
    if (state < 0 || (state == 1 && same_key(&old, k) && !strcmp(old_hex, hex)))
        return;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", cache, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    mdsd_cleanup_register(tmp);
    char line[256];
    int len = snprintf(line, sizeof line, CACHE_MAGIC "%llu %llu %lld %lld %lld %s\n", k->dev, k->ino,
                       k->size, k->mtime_ns, k->ctime_ns, hex);
    bool ok = write(fd, line, (size_t)len) == len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && state == 0) {
        link(tmp, cache); /* fails, harmlessly, if anything appeared meanwhile */
        unlink(tmp);
    } else if (!ok || rename(tmp, cache) != 0) {
        unlink(tmp);
    }
    mdsd_cleanup_unregister(tmp);
}

/* ---- hashing -------------------------------------------------------------- */

static void to_hex(const uint8_t digest[SHA256_DIGEST_SIZE], char hex[MDSD_SHA256_HEX])
{
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

void mdsd_sha256_text(const void *bytes, size_t len, char hex[MDSD_SHA256_HEX])
{
    uint8_t digest[SHA256_DIGEST_SIZE];
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, len, bytes);
    sha256_digest(&ctx, sizeof digest, digest);
    to_hex(digest, hex);
}

int mdsd_dump_sha256(const char *path, char hex[MDSD_SHA256_HEX], mdsd_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return mdsd_file_sha256(path, hex, false, err);
    char **parts = NULL;
    size_t n = 0;
    int rc = mdsd_dump_parts(path, &parts, &n, err);
    char *all = rc == MDSD_OK ? malloc(n * 64 + 1) : NULL;
    if (rc == MDSD_OK && !all)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t k = 0; k < n && rc == MDSD_OK; k++) {
        char part[MDSD_SHA256_HEX];
        if ((rc = mdsd_file_sha256(parts[k], part, false, err)) == MDSD_OK)
            memcpy(all + 64 * k, part, 64);
    }
    if (rc == MDSD_OK)
        mdsd_sha256_text(all, 64 * n, hex);
    free(all);
    mdsd_dump_parts_free(parts, n);
    return rc;
}

static int hash_fd(int fd, const char *path, char hex[MDSD_SHA256_HEX], mdsd_err *err)
{
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = malloc(CHUNK), digest[SHA256_DIGEST_SIZE];
    if (!buf)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory hashing '%s'", path);
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    int rc = MDSD_OK;
    for (;;) {
        ssize_t got = read(fd, buf, CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = mdsd_fail(err, MDSD_EIO, "cannot read '%s' for its SHA-256: %s", path, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        if (mdsd_interrupted()) { /* a large dump's first hash takes seconds per GB */
            rc = mdsd_fail_interrupted(err, path);
            break;
        }
        sha256_update(&ctx, (size_t)got, buf);
    }
    free(buf);
    if (rc)
        return rc;
    sha256_digest(&ctx, sizeof digest, digest);
    to_hex(digest, hex);
    return MDSD_OK;
}

int mdsd_file_sha256(const char *path, char hex[MDSD_SHA256_HEX], bool keep, mdsd_err *err)
{
    /* O_NONBLOCK: a FIFO is refused below instead of waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mdsd_fail(err, MDSD_EIO, "cannot read '%s' for its SHA-256: %s", path, strerror(errno));
    struct stat before, after;
    if (fstat(fd, &before) != 0 || !S_ISREG(before.st_mode)) {
        close(fd);
        return mdsd_fail(err, MDSD_EIO, "cannot hash '%s': not a regular file", path);
    }
    file_key k = key_of(&before), cached;
    bool rehash = env_is("MDSD_REHASH", "1"), use_cache = !env_is("MDSD_HASH_CACHE", "0");
    char cache[4200];
    mdsd_hash_cache_path(path, cache, sizeof cache);
    int rc = MDSD_OK;
    /* the process's memory: MDSD_REHASH trusts only the digests it computed */
    if (memo_find(&k, rehash, hex)) {
        /* known */
    } else if (!rehash && use_cache && cache_read(cache, &cached, hex) == 1 && hex[0] &&
               same_key(&cached, &k)) {
        memo_add(&k, hex, false);
    } else {
        rc = hash_fd(fd, path, hex, err);
        if (rc == MDSD_OK) {
            file_key now = fstat(fd, &after) == 0 ? key_of(&after) : (file_key){0};
            if (!same_key(&k, &now))
                rc = mdsd_fail(err, MDSD_EIO, "'%s' changed while its SHA-256 was computed; rerun on "
                               "a stable file", path);
        }
        if (rc == MDSD_OK)
            memo_add(&k, hex, true);
    }
    close(fd);
    if (rc == MDSD_OK && keep && use_cache)
        cache_write(path, &k, hex);
    return rc;
}

void mdsd_dump_sha256_keep(const char *path)
{
    char **parts = NULL;
    size_t n = 0;
    if (mdsd_dump_list_parts(path, &parts, &n, NULL) != MDSD_OK)
        return;
    for (size_t k = 0; k < n; k++) {
        struct stat st;
        char hex[MDSD_SHA256_HEX];
        file_key key;
        if (stat(parts[k], &st) == 0 && (key = key_of(&st), memo_find(&key, false, hex)))
            cache_write(parts[k], &key, hex);
    }
    mdsd_dump_parts_free(parts, n);
}
