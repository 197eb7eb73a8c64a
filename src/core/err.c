#include "err.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* mdsd_interrupt is called from signal handlers: only a lock-free atomic is
 * safe there (C11 7.14.1.1). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "mdsd_interrupt needs a lock-free atomic int");
static atomic_int interrupt_flag;

void mdsd_interrupt(void)
{
    atomic_store(&interrupt_flag, 1);
}

void mdsd_interrupt_clear(void)
{
    atomic_store(&interrupt_flag, 0);
}

bool mdsd_interrupted(void)
{
    /* relaxed: a row boundary seeing the store one row late is harmless */
    return atomic_load_explicit(&interrupt_flag, memory_order_relaxed) != 0;
}

int mdsd_fail_interrupted(mdsd_err *err, const char *what)
{
    return mdsd_fail(err, MDSD_EINTERRUPTED, "%s: interrupted (mdsd_interrupt)", what);
}

__attribute__((format(printf, 4, 0)))
static int fail(mdsd_err *err, int code, int option, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        err->code = code;
        err->option = option;
    }
    return code;
}

int mdsd_fail(mdsd_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail(err, code, MDSD_OPTION_NONE, fmt, ap);
    va_end(ap);
    return code;
}

int mdsd_fail_option(mdsd_err *err, int code, int option, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail(err, code, option, fmt, ap);
    va_end(ap);
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
        err->option = MDSD_OPTION_NONE;
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
    case MDSD_EINTERRUPTED: return "interrupted";
    default: return "unknown error";
    }
}
