#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- cleanup registry ------------------------------------------------------
 * A fixed table the signal handler can walk without locks or allocation: a
 * slot is claimed by copying the path and then setting `used`. */
#define CLEANUP_SLOTS 32

static struct {
    volatile sig_atomic_t used;
    char path[4096];
} cleanup_slot[CLEANUP_SLOTS];
static char cleanup_message[1024];

void mdsd_cleanup_register(const char *path)
{
    if (strlen(path) >= sizeof cleanup_slot[0].path)
        return;
    for (int i = 0; i < CLEANUP_SLOTS; i++)
        if (!cleanup_slot[i].used) {
            strcpy(cleanup_slot[i].path, path);
            cleanup_slot[i].used = 1;
            return;
        }
}

void mdsd_cleanup_unregister(const char *path)
{
    for (int i = 0; i < CLEANUP_SLOTS; i++)
        if (cleanup_slot[i].used && !strcmp(cleanup_slot[i].path, path)) {
            cleanup_slot[i].used = 0;
            return;
        }
}

static void cleanup_on_signal(int sig)
{
    for (int i = 0; i < CLEANUP_SLOTS; i++)
        if (cleanup_slot[i].used)
            unlink(cleanup_slot[i].path);
    ssize_t ignored = write(STDERR_FILENO, cleanup_message, strlen(cleanup_message));
    (void)ignored;
    signal(sig, SIG_DFL);
    raise(sig);
}

void mdsd_cleanup_signals(const char *prog, const char *hint)
{
    /* the message of the program prog (the command line's: the CLI and the jobs
     * it runs with cleanup_signals ask for it), so a hint naming an option as
     * `C_NAME` reads as its flag; formatted now, not in the handler */
    char raw[sizeof cleanup_message];
    snprintf(raw, sizeof raw, "\n%s: interrupted; temporary files removed%s%s\n", prog,
             hint ? "; " : "", hint ? hint : "");
    mdsd_option_words(raw, MDSD_SPELL_CLI, cleanup_message, sizeof cleanup_message);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* ---- temporary names and atomic files ------------------------------------ */

int mdsd_tmpname(const char *path, char *tmp, size_t size, mdsd_err *err)
{
    /* a name at which nothing exists: the other library creates the file
     * itself, truncating and following a file or symlink already there (a
     * crashed run's, whose pid this one reuses, or a planted link) */
    for (int attempt = 0; attempt < 100; attempt++) {
        int len = attempt ? snprintf(tmp, size, "%s.tmp.%ld.%d", path, (long)getpid(), attempt)
                          : snprintf(tmp, size, "%s.tmp.%ld", path, (long)getpid());
        if (len < 0 || (size_t)len >= size)
            return mdsd_fail(err, MDSD_EINVAL, "output path too long: '%s'", path);
        struct stat st;
        if (lstat(tmp, &st) != 0 && errno == ENOENT) {
            mdsd_cleanup_register(tmp);
            return MDSD_OK;
        }
    }
    return mdsd_fail(err, MDSD_EIO, "cannot write '%s': every temporary name beside it is taken", path);
}

int mdsd_publish(const char *tmp, const char *path, mdsd_err *err)
{
    int rc = MDSD_OK;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        rc = mdsd_fail(err, MDSD_EIO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    }
    mdsd_cleanup_unregister(tmp);
    return rc;
}

int mdsd_outfile_open(mdsd_outfile *o, const char *path, mdsd_err *err)
{
    memset(o, 0, sizeof *o);
    if (strlen(path) >= sizeof o->path)
        return mdsd_fail(err, MDSD_EINVAL, "output path too long: '%s'", path);
    strcpy(o->path, path);
    int rc = mdsd_tmpname(path, o->tmp, sizeof o->tmp, err);
    if (rc)
        return rc;
    mdsd_cleanup_unregister(o->tmp);
    /* a new file, never through a file or link already at the temporary
     * name (a crashed run's, whose pid this one reuses: then another name) */
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        int len = attempt ? snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%d", path, (long)getpid(), attempt)
                          : snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
        if (len < 0 || (size_t)len >= sizeof o->tmp)
            break;
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    int e = errno;
    o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!o->f) {
        if (fd >= 0) {
            e = errno;
            close(fd);
            unlink(o->tmp);
        }
        o->tmp[0] = '\0';
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    mdsd_cleanup_register(o->tmp);
    return MDSD_OK;
}

int mdsd_outfile_finish(mdsd_outfile *o, mdsd_err *err)
{
    if (!o->f)
        return mdsd_fail(err, MDSD_EIO, "'%s' is not open", o->path);
    int failed = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
    int e = errno;
    failed |= fclose(o->f) != 0;
    o->f = NULL;
    if (failed) {
        mdsd_outfile_abort(o);
        return mdsd_fail(err, MDSD_EIO, "error writing '%s': %s", o->path, strerror(e));
    }
    return MDSD_OK;
}

int mdsd_outfile_publish(mdsd_outfile *o, mdsd_err *err)
{
    if (o->f || !o->tmp[0])
        return mdsd_fail(err, MDSD_EIO, "'%s' is not finished", o->path);
    int rc = mdsd_publish(o->tmp, o->path, err);
    o->tmp[0] = '\0';
    return rc;
}

int mdsd_outfile_commit(mdsd_outfile *o, mdsd_err *err)
{
    int rc = mdsd_outfile_finish(o, err);
    return rc ? rc : mdsd_outfile_publish(o, err);
}

void mdsd_outfile_abort(mdsd_outfile *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp[0]) {
        unlink(o->tmp);
        mdsd_cleanup_unregister(o->tmp);
        o->tmp[0] = '\0';
    }
}

/* ---- lock files ---------------------------------------------------------- */

int mdsd_lock_acquire(mdsd_lock *l, const char *path, const char *what, mdsd_err *err)
{
    l->fd = -1;
    if (strlen(path) >= sizeof l->path)
        return mdsd_fail(err, MDSD_EINVAL, "path too long: '%s'", path);
    strcpy(l->path, path);
    /* a lock file removed by its previous holder between our open and our
     * flock is a stale inode: retry until the locked file is the one named */
    for (int attempt = 0; attempt < 100; attempt++) {
        /* never through a symlink at the lock's name: its target is not ours */
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
            return mdsd_fail(err, MDSD_EIO, "cannot create the lock file '%s': %s", path,
                             errno == ELOOP ? "it is a symbolic link (not followed)" : strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            if (e == EWOULDBLOCK)
                return mdsd_fail(err, MDSD_EIO,
                                 "another job is writing %s (it holds the lock '%s'); wait for it "
                                 "to end, or choose another output", what, path);
            return mdsd_fail(err, MDSD_EIO, "cannot lock '%s': %s", path, strerror(e));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            l->fd = fd;
            mdsd_cleanup_register(path);
            return MDSD_OK;
        }
        close(fd);
    }
    return mdsd_fail(err, MDSD_EIO, "cannot lock '%s': it keeps being replaced", path);
}

bool mdsd_lock_busy(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

void mdsd_lock_release(mdsd_lock *l)
{
    if (l->fd < 0)
        return;
    unlink(l->path); /* while still held: no one can lock this inode after us */
    mdsd_cleanup_unregister(l->path);
    close(l->fd);
    l->fd = -1;
}
