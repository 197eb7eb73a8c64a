/* parse.h - reading the numeric vectors given on the command line:
 * "0.1,0.2,0.7" or "@FILE" (one value per line; blank lines and text after
 * '#' are ignored; or a NumPy .npy file of one float64/32/16 vector, known by its magic). Values are parsed with strtod, so "nan", "inf" and "-inf"
 * come through and are judged later by dist.h's validation. */
#ifndef MDSD_PARSE_H
#define MDSD_PARSE_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Parses spec into a freshly malloc'd array (*out, *len). `what` names the
 * option in error messages (e.g. "--target"). */
int mdsd_parse_vector(const char *spec, const char *what, double **out, size_t *len,
                      mdsd_err *err);

/* Parses "a:b:step" (inclusive range) or "x,y,z" into a malloc'd array. */
int mdsd_parse_range(const char *spec, const char *what, double **out, size_t *len,
                     mdsd_err *err);

/* A non-negative decimal integer no larger than max: digits only (no sign,
 * space, or anything strtoull would skip or wrap), no overflow. With end,
 * parsing stops at the first non-digit and *end points there; without, the
 * whole string must be the number. 0, or -1 when it is not one. */
int mdsd_parse_uint(const char *s, unsigned long long max, unsigned long long *out, const char **end);

/* A shard "I/N": two such integers, 1 <= I <= N. 0, or -1. */
int mdsd_parse_shard(const char *s, size_t *shard, size_t *shards);

/* A name (a path, a dump label) kept on one line of a text file (shard
 * headers, checkpoints): control characters and backslashes written as \ooo
 * (octal), into buf (mdsd_escape: truncated to size, the return value is the
 * length needed) or f; mdsd_unescape turns it back in place (-1: a
 * malformed escape). */
size_t mdsd_escape(const char *s, char *buf, size_t size);
void mdsd_fputs_escaped(const char *s, FILE *f);
int mdsd_unescape(char *s);

#endif
