#include "json.h"

#include <math.h>

void mdsd_json_init(mdsd_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->need_comma[0] = false;
    j->after_key = false;
}

/* Separates this value from the previous one at the same level. */
static void value_start(mdsd_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->need_comma[j->depth])
        fputc(',', j->out);
    j->need_comma[j->depth] = true;
}

static void open_level(mdsd_json *j, char c)
{
    value_start(j);
    fputc(c, j->out);
    if (j->depth + 1 < MDSD_JSON_MAX_DEPTH)
        j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_level(mdsd_json *j, char c)
{
    fputc(c, j->out);
    if (j->depth > 0)
        j->depth--;
    if (j->depth == 0 && c == '}')
        fputc('\n', j->out);
}

void mdsd_json_object_begin(mdsd_json *j) { open_level(j, '{'); }
void mdsd_json_object_end(mdsd_json *j) { close_level(j, '}'); }
void mdsd_json_array_begin(mdsd_json *j) { open_level(j, '['); }
void mdsd_json_array_end(mdsd_json *j) { close_level(j, ']'); }

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), or 0 if it is not one. */
static size_t utf8_sequence(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp, min;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A JSON string: valid UTF-8 whatever the input holds (a dump's attributes
 * are arbitrary bytes): every byte that does not start a well-formed UTF-8
 * sequence is replaced by U+FFFD. */
static void write_string(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    while (*s) {
        unsigned char c = *s;
        switch (c) {
        case '"': fputs("\\\"", out); s++; continue;
        case '\\': fputs("\\\\", out); s++; continue;
        case '\n': fputs("\\n", out); s++; continue;
        case '\r': fputs("\\r", out); s++; continue;
        case '\t': fputs("\\t", out); s++; continue;
        default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c);
            s++;
            continue;
        }
        size_t n = utf8_sequence(s);
        if (n == 0) {
            fputs("\\ufffd", out);
            s++;
        } else {
            fwrite(s, 1, n, out);
            s += n;
        }
    }
    fputc('"', out);
}

void mdsd_json_key(mdsd_json *j, const char *key)
{
    value_start(j);
    write_string(j->out, key);
    fputc(':', j->out);
    j->after_key = true;
}

void mdsd_json_string(mdsd_json *j, const char *s)
{
    value_start(j);
    write_string(j->out, s ? s : "");
}

void mdsd_json_number(mdsd_json *j, double x)
{
    value_start(j);
    if (isfinite(x))
        fprintf(j->out, "%.17g", x);
    else
        fputs("null", j->out);
}

void mdsd_json_integer(mdsd_json *j, long long x)
{
    value_start(j);
    fprintf(j->out, "%lld", x);
}

void mdsd_json_bool(mdsd_json *j, bool b)
{
    value_start(j);
    fputs(b ? "true" : "false", j->out);
}

void mdsd_json_null(mdsd_json *j)
{
    value_start(j);
    fputs("null", j->out);
}

void mdsd_json_number_array(mdsd_json *j, const double *x, size_t n)
{
    mdsd_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        mdsd_json_number(j, x[i]);
    mdsd_json_array_end(j);
}

void mdsd_json_integer_array(mdsd_json *j, const int *x, size_t n)
{
    mdsd_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        mdsd_json_integer(j, x[i]);
    mdsd_json_array_end(j);
}

void mdsd_json_kv_string(mdsd_json *j, const char *key, const char *s)
{
    mdsd_json_key(j, key);
    mdsd_json_string(j, s);
}

void mdsd_json_kv_number(mdsd_json *j, const char *key, double x)
{
    mdsd_json_key(j, key);
    mdsd_json_number(j, x);
}

void mdsd_json_kv_integer(mdsd_json *j, const char *key, long long x)
{
    mdsd_json_key(j, key);
    mdsd_json_integer(j, x);
}

void mdsd_json_kv_bool(mdsd_json *j, const char *key, bool b)
{
    mdsd_json_key(j, key);
    mdsd_json_bool(j, b);
}
