/* libFuzzer harness: the strict parsers and codecs of issue 25 (src/io/parse.c,
 * src/io/hash.c). The first input byte picks the entry point; the rest is the
 * text.
 *   0  mdsd_parse_uint: accepted only digits, no sign, space or overflow, and
 *      the value is what an exact decimal reading gives (at most max);
 *   1  mdsd_parse_shard: accepted only DIGITS/DIGITS with 1 <= I <= N;
 *   2  mdsd_escape then mdsd_unescape: one line, no control character, and
 *      the name comes back byte for byte;
 *   3  mdsd_unescape of any text: accepted text escapes back to a form that
 *      unescapes to the same bytes;
 *   4  mdsd_file_sha256 of a file holding the bytes equals the SHA-256 of the
 *      bytes in memory (no cache: MDSD_HASH_CACHE=0).
 *
 *   build: `make fuzz` (every tests/fuzz/fuzz_*.c)
 *   run:   build/fuzz/fuzz_strict -max_total_time=60 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "parse.h"

/* The value of a digit string, or -1 above max (exact: 128-bit arithmetic). */
static int reference_uint(const char *s, size_t len, unsigned long long max, unsigned long long *out)
{
    unsigned __int128 v = 0;
    for (size_t i = 0; i < len; i++) {
        v = 10 * v + (unsigned)(s[i] - '0');
        if (v > max)
            return -1;
    }
    *out = (unsigned long long)v;
    return 0;
}

static void check_uint(const char *text, unsigned long long max)
{
    unsigned long long v = 0, want;
    size_t len = strlen(text);
    int rc = mdsd_parse_uint(text, max, &v, NULL);
    bool digits = len > 0 && strspn(text, "0123456789") == len;
    if (rc == 0 && (!digits || reference_uint(text, len, max, &want) != 0 || v != want))
        abort();
    if (rc != 0 && digits && reference_uint(text, len, max, &want) == 0)
        abort(); /* a number in range refused */
}

static void check_shard(const char *text)
{
    size_t i = 0, n = 0;
    int rc = mdsd_parse_shard(text, &i, &n);
    if (rc != 0)
        return;
    const char *slash = strchr(text, '/');
    unsigned long long a, b;
    if (!slash || slash == text || strspn(text, "0123456789") != (size_t)(slash - text) ||
        strspn(slash + 1, "0123456789") != strlen(slash + 1) || !slash[1] ||
        reference_uint(text, (size_t)(slash - text), SIZE_MAX, &a) ||
        reference_uint(slash + 1, strlen(slash + 1), SIZE_MAX, &b) || a != i || b != n || i < 1 || i > n)
        abort();
}

static void check_escape(const char *text)
{
    size_t need = mdsd_escape(text, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf)
        return;
    if (mdsd_escape(text, buf, need + 1) != need || strlen(buf) != need)
        abort();
    for (const unsigned char *c = (const unsigned char *)buf; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            abort(); /* one printable line */
    if (mdsd_unescape(buf) != 0 || strcmp(buf, text) != 0)
        abort();
    free(buf);
}

static void check_unescape(char *text)
{
    char *copy = strdup(text);
    if (!copy)
        return;
    if (mdsd_unescape(copy) == 0) {
        size_t need = mdsd_escape(copy, NULL, 0);
        char *again = malloc(need + 1);
        if (again) {
            mdsd_escape(copy, again, need + 1);
            if (mdsd_unescape(again) != 0 || strcmp(again, copy) != 0)
                abort();
            free(again);
        }
    }
    free(copy);
}

static void check_hash(const uint8_t *data, size_t len)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_strict_%d.bin", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, len, f);
    fclose(f);
    char got[MDSD_SHA256_HEX], want[MDSD_SHA256_HEX];
    mdsd_sha256_text(data, len, want);
    if (mdsd_file_sha256(path, got, false, NULL) != MDSD_OK || strcmp(got, want) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    setenv("MDSD_HASH_CACHE", "0", 1);
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 5) {
    case 0: {
        unsigned long long max = size > 1 ? ~0ULL >> (data[size - 1] % 64) : ~0ULL;
        check_uint(text, max);
        break;
    }
    case 1: check_shard(text); break;
    case 2: check_escape(text); break;
    case 3: check_unescape(text); break;
    default: check_hash(data + 1, size - 1); break;
    }
    free(text);
    return 0;
}
