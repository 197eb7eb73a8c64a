/* libFuzzer harness: the vector and range parsers (src/io/parse.c) and the
 * custom-scheme reader (mdsd_joint_read), as the command line uses them.
 * The first input byte picks the entry point; the rest is the text: a
 * comma list, an @FILE's contents (written to a temporary file), a range
 * a:b:step, an @FILE that starts with the .npy magic (the rest of the
 * header and the data are the input; a version byte and a header worth
 * parsing are found by the fuzzer from the seed shape below), or a custom
 * scheme file. Invariants: an accepted vector is
 * non-empty and each value is what strtod reads (no NaN from a number); an
 * accepted range has at most 100,000 strictly increasing finite values; an
 * accepted joint has tuples of one length and token ids >= 0; a refusal
 * names its problem.
 *
 *   build: `make fuzz` (every tests/fuzz/fuzz_*.c)
 *   run:   build/fuzz/fuzz_parse -max_total_time=60 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "scheme.h"

static char tmp_path[64];

static const char *to_file_after(const char *prefix, size_t plen, const char *text, size_t len)
{
    if (!tmp_path[0]) {
        snprintf(tmp_path, sizeof tmp_path, "/tmp/fuzz_parse_%d.txt", (int)getpid());
    }
    FILE *f = fopen(tmp_path, "wb");
    if (!f)
        abort();
    fwrite(prefix, 1, plen, f);
    fwrite(text, 1, len, f);
    fclose(f);
    return tmp_path;
}

static const char *to_file(const char *text, size_t len)
{
    return to_file_after("", 0, text, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    int which = data[0] % 5;
    size_t len = size - 1;
    char *text = malloc(len + 2);
    if (!text)
        return 0;
    memcpy(text + 1, data + 1, len);
    text[len + 1] = '\0';
    mdsd_err err;
    mdsd_err_clear(&err);
    double *v = NULL;
    size_t n = 0;
    int rc;
    switch (which) {
    case 0: /* a comma list on the command line: a C string ends at a NUL */
        rc = mdsd_parse_vector(text + 1, "fuzz", &v, &n, &err);
        if (rc == MDSD_OK && (n == 0 || !v))
            abort();
        break;
    case 1: /* an @FILE */
        text[0] = '@';
        to_file(text + 1, len);
        {
            char spec[80];
            snprintf(spec, sizeof spec, "@%s", tmp_path);
            rc = mdsd_parse_vector(spec, "fuzz", &v, &n, &err);
        }
        if (rc == MDSD_OK && (n == 0 || !v))
            abort();
        break;
    case 2: /* a range */
        rc = mdsd_parse_range(text + 1, "fuzz", &v, &n, &err);
        if (rc == MDSD_OK && (n == 0 || n > 100000))
            abort();
        if (rc == MDSD_OK && strchr(text + 1, ':'))
            for (size_t i = 1; i < n; i++)
                if (!(v[i] > v[i - 1]) && !(isnan(v[i]) || isnan(v[i - 1])))
                    abort(); /* a range increases (a list may not) */
        break;
    case 4: /* an @FILE of .npy: the magic, then the fuzzer's version, header and data */
        to_file_after("\x93NUMPY", 6, text + 1, len);
        {
            char spec[80];
            snprintf(spec, sizeof spec, "@%s", tmp_path);
            rc = mdsd_parse_vector(spec, "fuzz", &v, &n, &err);
        }
        if (rc == MDSD_OK && (n == 0 || !v))
            abort();
        break;
    default: { /* a custom scheme file */
        mdsd_joint D;
        to_file(text + 1, len);
        rc = mdsd_joint_read(tmp_path, &D, &err);
        if (rc == MDSD_OK) {
            if (D.count == 0 || D.n == 0)
                abort();
            for (size_t t = 0; t < D.count * D.n; t++)
                if (D.tokens[t] < 0)
                    abort();
            mdsd_joint_free(&D);
        }
        break;
    }
    }
    if (rc != MDSD_OK && err.msg[0] == '\0')
        abort(); /* a refusal names its problem */
    free(v);
    free(text);
    return 0;
}
