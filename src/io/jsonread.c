/* jsonread.c - the strict JSON reader (jsonread.h): recursive descent over
 * the text, each value into an mdsd_jv. */
#include "jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const char *s, *name;
    size_t len, at, line, line_start;
    mdsd_err *err;
    int depth;
} reader;

static int fail(reader *r, const char *what)
{
    return mdsd_fail(r->err, MDSD_EFORMAT, "%s: line %zu, column %zu: %s (not JSON)", r->name,
                     r->line, r->at - r->line_start + 1, what);
}

static void skip_space(reader *r)
{
    while (r->at < r->len) {
        char c = r->s[r->at];
        if (c == '\n') {
            r->line++;
            r->line_start = r->at + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        r->at++;
    }
}

static int parse_value(reader *r, mdsd_jv *v);

static int literal(reader *r, const char *word)
{
    size_t n = strlen(word);
    if (r->len - r->at < n || memcmp(r->s + r->at, word, n))
        return fail(r, "unexpected character");
    r->at += n;
    return MDSD_OK;
}

/* RFC 8259's number grammar, checked before strtod reads it (strtod takes
 * hex, "inf", "nan", leading '+' and '.5', which JSON does not). */
static int parse_number(reader *r, mdsd_jv *v)
{
    size_t i = r->at;
    const char *s = r->s;
    bool integral = true;
    if (i < r->len && s[i] == '-')
        i++;
    if (i >= r->len || s[i] < '0' || s[i] > '9')
        return fail(r, "a number needs a digit here");
    if (s[i] == '0' && i + 1 < r->len && s[i + 1] >= '0' && s[i + 1] <= '9')
        return fail(r, "a number with a leading zero");
    while (i < r->len && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i < r->len && s[i] == '.') {
        integral = false;
        if (++i >= r->len || s[i] < '0' || s[i] > '9')
            return fail(r, "a number needs a digit after '.'");
        while (i < r->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < r->len && (s[i] == 'e' || s[i] == 'E')) {
        integral = false;
        if (++i < r->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= r->len || s[i] < '0' || s[i] > '9')
            return fail(r, "a number needs a digit in its exponent");
        while (i < r->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    char buf[400];
    if (i - r->at >= sizeof buf)
        return fail(r, "a number of more than 399 characters");
    memcpy(buf, s + r->at, i - r->at);
    buf[i - r->at] = 0;
    errno = 0;
    double x = strtod(buf, NULL);
    if (!isfinite(x) || (errno == ERANGE && fabs(x) > 1.0))
        return fail(r, "a number beyond the range of a double");
    v->kind = MDSD_JV_NUMBER, v->num = x, v->integral = integral;
    r->at = i;
    return MDSD_OK;
}

static int hex4(reader *r, size_t at, unsigned *out)
{
    unsigned u = 0;
    for (size_t k = 0; k < 4; k++) {
        char c = at + k < r->len ? r->s[at + k] : 0;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return fail(r, "\\u needs four hex digits");
        u = u * 16 + (unsigned)d;
    }
    *out = u;
    return MDSD_OK;
}

/* The length of the valid UTF-8 sequence at s[0..n) (0: invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    if (!len || len > n)
        return 0;
    for (size_t k = 1; k < len; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||  /* overlong, surrogate */
        (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))    /* overlong, > U+10FFFF */
        return 0;
    return len;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6)), o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string at r->at (the opening quote) into a malloc'd UTF-8 text: the
 * decoded text is never longer than the source. */
static int parse_string(reader *r, char **out)
{
    size_t i = r->at + 1, o = 0;
    char *buf = malloc(r->len - r->at + 1);
    if (!buf)
        return mdsd_fail(r->err, MDSD_ENOMEM, "out of memory");
    for (;;) {
        if (i >= r->len) {
            free(buf);
            r->at = i;
            return fail(r, "a string without its closing quote");
        }
        unsigned char c = (unsigned char)r->s[i];
        if (c == '"')
            break;
        if (c < 0x20) {
            free(buf);
            r->at = i;
            return fail(r, "a control character in a string (escape it)");
        }
        if (c != '\\') {
            size_t n = utf8_len((const unsigned char *)r->s + i, r->len - i);
            if (!n) {
                free(buf);
                r->at = i;
                return fail(r, "a byte that is not UTF-8 in a string");
            }
            memcpy(buf + o, r->s + i, n);
            o += n, i += n;
            continue;
        }
        char e = i + 1 < r->len ? r->s[i + 1] : 0;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *hit = e ? strchr(from, e) : NULL;
        if (hit) {
            buf[o++] = to[hit - from];
            i += 2;
            continue;
        }
        unsigned cp, lo;
        r->at = i;
        if (e != 'u') {
            free(buf);
            return fail(r, "an unknown escape in a string");
        }
        if (hex4(r, i + 2, &cp)) {
            free(buf);
            return r->err->code;
        }
        i += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(buf);
            return fail(r, "a lone low surrogate \\u escape");
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (i + 1 >= r->len || r->s[i] != '\\' || r->s[i + 1] != 'u' || hex4(r, i + 2, &lo) ||
                lo < 0xDC00 || lo > 0xDFFF) {
                free(buf);
                return fail(r, "a high surrogate \\u escape without its low surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        }
        if (cp == 0) {
            free(buf);
            return fail(r, "a \\u0000 in a string");
        }
        o += put_utf8(buf + o, cp);
    }
    buf[o] = 0;
    r->at = i + 1;
    *out = buf;
    return MDSD_OK;
}

/* Appends a zeroed item to v (an array or object under construction). */
static mdsd_jv *push(reader *r, mdsd_jv *v, size_t *cap)
{
    if (v->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 4;
        mdsd_jv *items = realloc(v->items, nc * sizeof *items);
        if (items)
            v->items = items;
        char **keys = v->kind == MDSD_JV_OBJECT && items ? realloc(v->keys, nc * sizeof *keys) : NULL;
        if (keys)
            v->keys = keys;
        if (!items || (v->kind == MDSD_JV_OBJECT && !keys)) {
            mdsd_fail(r->err, MDSD_ENOMEM, "out of memory");
            return NULL;
        }
        *cap = nc;
    }
    memset(&v->items[v->n], 0, sizeof v->items[v->n]);
    if (v->kind == MDSD_JV_OBJECT)
        v->keys[v->n] = NULL;
    return &v->items[v->n++];
}

static int parse_container(reader *r, mdsd_jv *v, bool object)
{
    char close = object ? '}' : ']';
    size_t cap = 0;
    v->kind = object ? MDSD_JV_OBJECT : MDSD_JV_ARRAY;
    if (++r->depth > MDSD_JSONREAD_MAX_DEPTH)
        return fail(r, "nested deeper than 64 levels");
    r->at++;
    skip_space(r);
    if (r->at < r->len && r->s[r->at] == close) {
        r->at++;
        r->depth--;
        return MDSD_OK;
    }
    for (;;) {
        char *key = NULL;
        skip_space(r);
        if (object) {
            if (r->at >= r->len || r->s[r->at] != '"')
                return fail(r, r->at < r->len && r->s[r->at] == close ? "a trailing comma"
                                                                       : "an object key must be a string");
            size_t key_at = r->at, key_col = r->at - r->line_start + 1;
            if (parse_string(r, &key))
                return r->err->code;
            for (size_t k = 0; k < v->n; k++)
                if (!strcmp(v->keys[k], key)) {
                    int rc = mdsd_fail(r->err, MDSD_EFORMAT, "%s: line %zu, column %zu: key \"%.200s\" "
                                       "given twice in one object", r->name, r->line, key_col, key);
                    free(key);
                    (void)key_at;
                    return rc;
                }
            skip_space(r);
            if (r->at >= r->len || r->s[r->at] != ':') {
                free(key);
                return fail(r, "expected ':' after an object key");
            }
            r->at++;
            skip_space(r);
        }
        mdsd_jv *item = push(r, v, &cap);
        if (!item) {
            free(key);
            return MDSD_ENOMEM;
        }
        if (object)
            v->keys[v->n - 1] = key;
        if (!object && r->at < r->len && r->s[r->at] == close)
            return fail(r, "a trailing comma");
        if (parse_value(r, item))
            return r->err->code;
        skip_space(r);
        if (r->at < r->len && r->s[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->at < r->len && r->s[r->at] == close) {
            r->at++;
            r->depth--;
            return MDSD_OK;
        }
        return fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(reader *r, mdsd_jv *v)
{
    skip_space(r);
    v->line = r->line;
    if (r->at >= r->len)
        return fail(r, "the text ends where a value should be");
    switch (r->s[r->at]) {
    case '{': return parse_container(r, v, true);
    case '[': return parse_container(r, v, false);
    case '"': v->kind = MDSD_JV_STRING; return parse_string(r, &v->str);
    case 't': v->kind = MDSD_JV_BOOL, v->b = true; return literal(r, "true");
    case 'f': v->kind = MDSD_JV_BOOL, v->b = false; return literal(r, "false");
    case 'n': v->kind = MDSD_JV_NULL; return literal(r, "null");
    default:
        if (r->s[r->at] == '-' || (r->s[r->at] >= '0' && r->s[r->at] <= '9'))
            return parse_number(r, v);
        return fail(r, "unexpected character (JSON has no NaN, Infinity, comments or unquoted words)");
    }
}

static void free_items(mdsd_jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_items(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void mdsd_jv_free(mdsd_jv *v)
{
    if (v) {
        free_items(v);
        free(v);
    }
}

int mdsd_json_parse(const char *text, size_t len, const char *name, mdsd_jv **out, mdsd_err *err)
{
    *out = NULL;
    reader r = {.s = text, .name = name, .len = len, .line = 1, .err = err};
    if (memchr(text, 0, len)) {
        r.at = (size_t)((const char *)memchr(text, 0, len) - text);
        for (size_t k = 0; k < r.at; k++)
            if (text[k] == '\n')
                r.line++, r.line_start = k + 1;
        return fail(&r, "a NUL byte");
    }
    /* a UTF-8 byte order mark is not JSON text (RFC 8259 §8.1: MUST NOT add) */
    mdsd_jv *v = calloc(1, sizeof *v);
    if (!v)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    int rc = parse_value(&r, v);
    if (rc == MDSD_OK) {
        skip_space(&r);
        if (r.at < r.len)
            rc = fail(&r, "text after the JSON value");
    }
    if (rc) {
        mdsd_jv_free(v);
        return rc;
    }
    *out = v;
    return MDSD_OK;
}

int mdsd_json_read_file(const char *path, size_t max_bytes, mdsd_jv **out, mdsd_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mdsd_fail(err, MDSD_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return mdsd_fail(err, MDSD_EIO, "'%s' is not a regular file", path);
    }
    char *buf = malloc(max_bytes + 1);
    if (!buf) {
        fclose(f);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, max_bytes + 1, f);
    int bad = ferror(f);
    fclose(f);
    int rc;
    if (bad)
        rc = mdsd_fail(err, MDSD_EIO, "cannot read '%s'", path);
    else if (n > max_bytes)
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s' is larger than %zu bytes", path, max_bytes);
    else if (n == 0)
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s' is empty (not JSON)", path);
    else
        rc = mdsd_json_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}

const mdsd_jv *mdsd_jv_get(const mdsd_jv *v, const char *key)
{
    for (size_t i = 0; v && v->kind == MDSD_JV_OBJECT && i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}

const char *mdsd_jv_kind_name(const mdsd_jv *v)
{
    static const char *const names[] = {"null", "a boolean", "a number", "a string", "an array",
                                        "an object"};
    return v ? names[v->kind] : "absent";
}
