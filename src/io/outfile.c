#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mdsd_tmpname(const char *path, char *tmp, size_t size, mdsd_err *err)
{
    int len = snprintf(tmp, size, "%s.tmp.%ld", path, (long)getpid());
    if (len < 0 || (size_t)len >= size)
        return mdsd_fail(err, MDSD_EINVAL, "output path too long: '%s'", path);
    return MDSD_OK;
}

int mdsd_publish(const char *tmp, const char *path, mdsd_err *err)
{
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return mdsd_fail(err, MDSD_EIO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    }
    return MDSD_OK;
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
    o->f = fopen(o->tmp, "w");
    if (!o->f)
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", path, strerror(errno));
    return MDSD_OK;
}

int mdsd_outfile_commit(mdsd_outfile *o, mdsd_err *err)
{
    if (!o->f)
        return mdsd_fail(err, MDSD_EIO, "'%s' is not open", o->path);
    int failed = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
    int e = errno;
    failed |= fclose(o->f) != 0;
    o->f = NULL;
    if (failed) {
        unlink(o->tmp);
        return mdsd_fail(err, MDSD_EIO, "error writing '%s': %s", o->path, strerror(e));
    }
    return mdsd_publish(o->tmp, o->path, err);
}

void mdsd_outfile_abort(mdsd_outfile *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp[0])
        unlink(o->tmp);
}
