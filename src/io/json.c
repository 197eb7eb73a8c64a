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

static void write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20)
                fprintf(out, "\\u%04x", c);
            else
                fputc(c, out);
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

void mdsd_json_raw(mdsd_json *j, const char *json)
{
    value_start(j);
    fputs(json, j->out);
}
