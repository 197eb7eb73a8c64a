/* api_output.c - the output-safety mechanism of the command line for callers
 * that write files themselves (mdsd/output.h): thin wrappers over pathset.h
 * (the check) and outfile.h (O_EXCL temporaries, rename, lock files), so that
 * the Python package and the model runner refuse and write exactly as mdsd. */
#include <mdsd/mdsd.h>
#include <mdsd/output.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"
#include "pathset.h"

mdsd_status mdsd_output_check(size_t n_inputs, const char *const *inputs, const char *const *input_roles,
                      size_t n_outputs, const char *const *outputs, const char *const *output_roles,
                      mdsd_err *err)
{
    if ((n_inputs && !inputs) || (n_outputs && !outputs))
        return mdsd_fail(err, MDSD_EINVAL, "output check: no %s given (NULL)",
                         n_inputs && !inputs ? "inputs" : "outputs");
    mdsd_pathset s;
    mdsd_pathset_init(&s);
    for (size_t i = 0; i < n_inputs; i++)
        mdsd_pathset_input(&s, inputs[i], "%s",
                           input_roles && input_roles[i] ? input_roles[i] : "input");
    for (size_t i = 0; i < n_outputs; i++)
        mdsd_pathset_output(&s, outputs[i], "%s",
                            output_roles && output_roles[i] ? output_roles[i] : "output");
    int rc = mdsd_pathset_check(&s, err);
    mdsd_pathset_free(&s);
    return rc;
}

int mdsd_output_temp(const char *path, char *tmp, size_t size, mdsd_err *err)
{
    if (!path || !tmp)
        return mdsd_fail(err, MDSD_EINVAL, "temporary file: no %s given (NULL)",
                         !path ? "path" : "buffer"), -1;
    mdsd_outfile o;
    int rc = mdsd_outfile_open(&o, path, err);
    if (rc)
        return -1;
    if (strlen(o.tmp) >= size) {
        mdsd_outfile_abort(&o);
        return mdsd_fail(err, MDSD_EINVAL, "output path too long: '%s'", path), -1;
    }
    /* the caller's descriptor: the FILE's own is closed with it */
    int fd = dup(fileno(o.f));
    if (fd < 0) {
        mdsd_outfile_abort(&o);
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': out of file descriptors", path), -1;
    }
    fclose(o.f);
    strcpy(tmp, o.tmp);
    return fd;
}

mdsd_status mdsd_output_publish(const char *tmp, const char *path, mdsd_err *err)
{
    if (!tmp || !path)
        return mdsd_fail(err, MDSD_EINVAL, "publish: no %s given (NULL)", !tmp ? "temporary file" : "path");
    return mdsd_publish(tmp, path, err);
}

void mdsd_output_discard(const char *tmp)
{
    if (!tmp)
        return;
    unlink(tmp);
    mdsd_cleanup_unregister(tmp);
}

int mdsd_output_lock(const char *lock_path, const char *what, mdsd_err *err)
{
    if (!lock_path)
        return mdsd_fail(err, MDSD_EINVAL, "lock: no lock file given (NULL)"), -1;
    mdsd_lock l;
    if (mdsd_lock_acquire(&l, lock_path, what ? what : lock_path, err))
        return -1;
    return l.fd;
}

void mdsd_output_unlock(int fd, const char *lock_path)
{
    if (fd < 0 || !lock_path || strlen(lock_path) >= sizeof ((mdsd_lock *)0)->path)
        return;
    mdsd_lock l = {.fd = fd};
    strcpy(l.path, lock_path);
    mdsd_lock_release(&l);
}
