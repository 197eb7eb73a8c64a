/* jsonread.h - a small strict JSON reader (RFC 8259), the input side of
 * json.h's writer: for the few JSON files the tools read (mdsd block
 * --engine-metrics). The whole document is parsed into a tree; anything
 * RFC 8259 does not allow is refused with the file, line and column: a
 * trailing comma, a leading zero, NaN/Infinity, a control character or an
 * invalid UTF-8 byte in a string, a lone surrogate escape, a key given twice
 * in one object, nesting deeper than MDSD_JSONREAD_MAX_DEPTH, a NUL byte,
 * text after the value. A number that overflows a double is refused too. */
#ifndef MDSD_JSONREAD_H
#define MDSD_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define MDSD_JSONREAD_MAX_DEPTH 64

typedef enum {
    MDSD_JV_NULL,
    MDSD_JV_BOOL,
    MDSD_JV_NUMBER,
    MDSD_JV_STRING,
    MDSD_JV_ARRAY,
    MDSD_JV_OBJECT
} mdsd_jv_kind;

typedef struct mdsd_jv {
    mdsd_jv_kind kind;
    bool b;                  /* BOOL */
    double num;              /* NUMBER */
    bool integral;           /* NUMBER written without fraction or exponent */
    char *str;               /* STRING (UTF-8, NUL-terminated; may hold no NUL: refused) */
    size_t n;                /* ARRAY, OBJECT: items */
    struct mdsd_jv *items;   /* [n] */
    char **keys;             /* OBJECT: [n], in file order */
    size_t line;             /* where the value starts (1-based) */
} mdsd_jv;

/* Parses text[0..len) (name: how errors call it, e.g. the file name);
 * *out is freed with mdsd_jv_free. */
int mdsd_json_parse(const char *text, size_t len, const char *name, mdsd_jv **out, mdsd_err *err);
/* Reads and parses the file `path` (at most max_bytes, else refused). */
int mdsd_json_read_file(const char *path, size_t max_bytes, mdsd_jv **out, mdsd_err *err);
void mdsd_jv_free(mdsd_jv *v);
/* The value of key in an object (NULL: absent, or v is no object). */
const mdsd_jv *mdsd_jv_get(const mdsd_jv *v, const char *key);
/* "null", "true", "a number", "a string", "an array", "an object". */
const char *mdsd_jv_kind_name(const mdsd_jv *v);

#endif
