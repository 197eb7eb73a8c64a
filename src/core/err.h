/* err.h - error codes and messages shared by every module.
 *
 * Library functions return an mdsd_status and, on failure, fill an optional
 * mdsd_err with a message that names the problem (file, dataset, row, index,
 * value), so that the CLI can print it verbatim. Passing NULL for the mdsd_err
 * is allowed everywhere: the code is still returned. */
#ifndef MDSD_ERR_H
#define MDSD_ERR_H

typedef enum {
    MDSD_OK = 0,
    MDSD_EINVAL,       /* invalid argument or input value */
    MDSD_ENOMEM,       /* allocation failed */
    MDSD_ETOOBIG,      /* problem larger than the method's guard */
    MDSD_EIO,          /* file could not be read or written */
    MDSD_EFORMAT,      /* file exists but its content is malformed */
    MDSD_ESOLVER,      /* an external solver (GLPK, GSL root finder) failed */
    MDSD_EUNSUPPORTED  /* method does not apply to this scheme / instance */
} mdsd_status;

typedef struct {
    int code;
    char msg[512];
} mdsd_err;

/* Records code and a printf-style message in err (if non-NULL); returns code. */
int mdsd_fail(mdsd_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err to MDSD_OK with an empty message. */
void mdsd_err_clear(mdsd_err *err);

const char *mdsd_strerror(int code);

#endif
