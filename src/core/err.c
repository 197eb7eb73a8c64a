#include "err.h"

#include <stdarg.h>
#include <stdio.h>

int mdsd_fail(mdsd_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int mdsd_fail_from(mdsd_err *err, const mdsd_err *local, const char *what)
{
    if (local->code == MDSD_OK)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    if (err && err != local)
        *err = *local;
    return local->code;
}

void mdsd_err_clear(mdsd_err *err)
{
    if (err) {
        err->code = MDSD_OK;
        err->msg[0] = '\0';
    }
}

const char *mdsd_strerror(int code)
{
    switch (code) {
    case MDSD_OK: return "success";
    case MDSD_EINVAL: return "invalid input";
    case MDSD_ENOMEM: return "out of memory";
    case MDSD_ETOOBIG: return "problem too large for this method";
    case MDSD_EIO: return "input/output error";
    case MDSD_EFORMAT: return "malformed file";
    case MDSD_ESOLVER: return "solver failure";
    case MDSD_EUNSUPPORTED: return "not supported for this input";
    default: return "unknown error";
    }
}
