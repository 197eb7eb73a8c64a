/* opts.h - the size rule of the public options structs (mdsd/common.h,
 * "Options structs and the ABI"), in one place for every layer that owns an
 * options struct: its _init writes only the bytes the caller has, and every
 * function taking the struct refuses a size this library does not know. */
#ifndef MDSD_OPTS_H
#define MDSD_OPTS_H

#include <stddef.h>

#include "err.h"

/* An _init: copies the first min(size, known) bytes of defaults (the library's
 * complete struct, `known` bytes) into opts, then records the caller's `size`
 * in opts's leading size member when it has room for one: a caller built
 * against another header then gets no write past its struct, and a size the
 * consumer refuses. NULL opts: nothing. */
void mdsd_opts_fill(void *opts, size_t size, const void *defaults, size_t known);

/* MDSD_OK when size == known (the only size this release ships), else
 * MDSD_EINVAL naming the struct `type` (and `field`, the member of an outer
 * options struct it is, or NULL), both sizes and the remedy. */
int mdsd_opts_check(size_t size, size_t known, const char *type, const char *field,
                    mdsd_err *err);

#endif
