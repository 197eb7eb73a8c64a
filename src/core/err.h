/* err.h - error codes and messages shared by every module.
 *
 * Library functions return an mdsd_status and, on failure, fill an optional
 * mdsd_err with a message that names the problem (file, dataset, row, index,
 * value), so that the CLI can print it verbatim. Passing NULL for the mdsd_err
 * is allowed everywhere: the code is still returned. */
#ifndef MDSD_ERR_H
#define MDSD_ERR_H

/* mdsd_status, mdsd_err, mdsd_err_clear, mdsd_strerror: the public header. */
#include <mdsd/common.h>
#include <mdsd/option.h>

#include <stdbool.h>

/* Records code and a printf-style message in err (if non-NULL); returns code. */
int mdsd_fail(mdsd_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same, recording in err->option the mdsd_option (mdsd/option.h) the
 * error concerns; fmt names it as "`C_NAME`". mdsd_fail records MDSD_OPTION_NONE. */
int mdsd_fail_option(mdsd_err *err, int code, int option, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* For a call that returned failure (NULL) into `local`, a mdsd_err the
 * caller cleared just before the call: copies local into err (if non-NULL,
 * its option too)
 * and returns its code. A failure that recorded no code becomes MDSD_ENOMEM
 * "WHAT: out of memory", so that no stale code from an earlier error is
 * ever returned. */
int mdsd_fail_from(mdsd_err *err, const mdsd_err *local, const char *what);

/* Clears err to MDSD_OK with an empty message and no option. */
void mdsd_err_clear(mdsd_err *err);

const char *mdsd_strerror(int code);

/* Whether mdsd_interrupt has been called and not cleared: the long loops
 * check it at every row (tree) and stop with mdsd_fail_interrupted, which
 * records MDSD_EINTERRUPTED "WHAT: interrupted (mdsd_interrupt)". */
bool mdsd_interrupted(void);
int mdsd_fail_interrupted(mdsd_err *err, const char *what);

#endif
