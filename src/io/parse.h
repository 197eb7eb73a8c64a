/* parse.h - reading the numeric vectors given on the command line:
 * "0.1,0.2,0.7" or "@FILE" (one value per line; blank lines and text after
 * '#' are ignored). Values are parsed with strtod, so "nan", "inf" and "-inf"
 * come through and are judged later by dist.h's validation. */
#ifndef MDSD_PARSE_H
#define MDSD_PARSE_H

#include <stddef.h>

#include "err.h"

/* Parses spec into a freshly malloc'd array (*out, *len). `what` names the
 * option in error messages (e.g. "--target"). */
int mdsd_parse_vector(const char *spec, const char *what, double **out, size_t *len,
                      mdsd_err *err);

/* Parses "a:b:step" (inclusive range) or "x,y,z" into a malloc'd array. */
int mdsd_parse_range(const char *spec, const char *what, double **out, size_t *len,
                     mdsd_err *err);

#endif
