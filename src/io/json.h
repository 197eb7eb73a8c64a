/* json.h - a small streaming JSON writer for the CLI's --json output.
 * Commas are inserted automatically; numbers are printed with 17 significant
 * digits so values round-trip; NaN and infinities become null. */
#ifndef MDSD_JSON_H
#define MDSD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define MDSD_JSON_MAX_DEPTH 32

typedef struct {
    FILE *out;
    int depth;
    bool need_comma[MDSD_JSON_MAX_DEPTH];
    bool after_key;
} mdsd_json;

void mdsd_json_init(mdsd_json *j, FILE *out);
void mdsd_json_object_begin(mdsd_json *j);
void mdsd_json_object_end(mdsd_json *j); /* prints a newline at depth 0 */
void mdsd_json_array_begin(mdsd_json *j);
void mdsd_json_array_end(mdsd_json *j);
void mdsd_json_key(mdsd_json *j, const char *key);
void mdsd_json_string(mdsd_json *j, const char *s);
void mdsd_json_number(mdsd_json *j, double x);
void mdsd_json_integer(mdsd_json *j, long long x);
void mdsd_json_bool(mdsd_json *j, bool b);
void mdsd_json_null(mdsd_json *j);
/* A value that is already JSON text (e.g. a document read back), copied verbatim. */
void mdsd_json_raw(mdsd_json *j, const char *json);
void mdsd_json_number_array(mdsd_json *j, const double *x, size_t n);
void mdsd_json_integer_array(mdsd_json *j, const int *x, size_t n);

/* key + value shorthands */
void mdsd_json_kv_string(mdsd_json *j, const char *key, const char *s);
void mdsd_json_kv_number(mdsd_json *j, const char *key, double x);
void mdsd_json_kv_integer(mdsd_json *j, const char *key, long long x);
void mdsd_json_kv_bool(mdsd_json *j, const char *key, bool b);

#endif
