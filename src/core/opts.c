/* opts.c - the size rule of the public options structs (opts.h). */
#include "opts.h"

#include <string.h>

void mdsd_opts_fill(void *opts, size_t size, const void *defaults, size_t known)
{
    if (!opts)
        return;
    memcpy(opts, defaults, size < known ? size : known);
    if (size >= sizeof size)
        memcpy(opts, &size, sizeof size); /* the leading member, whatever the caller's layout */
}

int mdsd_opts_check(size_t size, size_t known, const char *type, const char *field,
                    mdsd_err *err)
{
    if (size == known)
        return MDSD_OK;
    return mdsd_fail(err, MDSD_EINVAL, "%s%s%s: size %zu, but this libmdsd (%s) knows only size "
                     "%zu: set the struct up with %s_init (which sets size) and build against "
                     "this library's headers", field ? field : "", field ? ", an " : "", type,
                     size, MDSD_VERSION, known, type);
}
