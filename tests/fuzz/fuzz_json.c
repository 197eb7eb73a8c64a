/* libFuzzer harness: the strict JSON reader (src/io/jsonread.c) and the
 * `mdsd block --engine-metrics` file on top of it (src/job/blockengine.c).
 * The input bytes are parsed as one document; an accepted tree must hold
 * what the grammar allows (strings NUL-free and valid UTF-8, object keys
 * unique, numbers finite), and a refusal must name its problem. Then the
 * same bytes are read as an engine-metrics file (through a temporary file,
 * as the command reads it); an accepted one has E[tau] in [1, L + 1], rates
 * in [0, 1] that never rise, and non-negative standard errors.
 *
 *   build: `make fuzz`; seeds: tests/fuzz/seeds/fuzz_json/ (copy them into
 *   build/fuzz/corpus/fuzz_json first)
 *   run:   build/fuzz/fuzz_json -max_total_time=60 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blockengine.h"
#include "jsonread.h"

static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        size_t n = *s < 0x80 ? 1 : (*s & 0xE0) == 0xC0 ? 2 : (*s & 0xF0) == 0xE0 ? 3
                   : (*s & 0xF8) == 0xF0 ? 4 : 0;
        if (!n)
            return 0;
        for (size_t k = 1; k < n; k++)
            if ((s[k] & 0xC0) != 0x80)
                return 0;
        s += n;
    }
    return 1;
}

static void check(const mdsd_jv *v, int depth)
{
    if (depth > MDSD_JSONREAD_MAX_DEPTH)
        abort();
    if (v->kind == MDSD_JV_NUMBER && !isfinite(v->num))
        abort();
    if (v->kind == MDSD_JV_STRING && !valid_utf8((const unsigned char *)v->str))
        abort();
    for (size_t i = 0; (v->kind == MDSD_JV_ARRAY || v->kind == MDSD_JV_OBJECT) && i < v->n; i++) {
        if (v->kind == MDSD_JV_OBJECT) {
            if (!valid_utf8((const unsigned char *)v->keys[i]))
                abort();
            for (size_t k = 0; k < i; k++)
                if (!strcmp(v->keys[k], v->keys[i]))
                    abort(); /* keys are unique */
        }
        check(&v->items[i], depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mdsd_jv *v = NULL;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (mdsd_json_parse((const char *)data, size, "f.json", &v, &err) == MDSD_OK) {
        check(v, 1);
        mdsd_jv_free(v);
    } else if (!err.msg[0] || v) {
        abort();
    }
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_json_%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    mdsd_engine_metrics m;
    mdsd_err_clear(&err);
    if (mdsd_engine_metrics_read(path, &m, &err) == MDSD_OK) {
        size_t L = m.c.pol.depth;
        if (L < 1 || L > MDSD_BLOCK_MAX_DEPTH || !(m.mal >= 1.0 && m.mal <= (double)L + 1.0))
            abort();
        for (size_t d = 1; m.has_rates && d <= L; d++)
            if (!(m.rate[d] >= 0.0 && m.rate[d] <= 1.0) || (d > 1 && m.rate[d] > m.rate[d - 1]))
                abort();
        if (m.steps && !(m.mal_se >= 0.0))
            abort();
    } else if (!err.msg[0]) {
        abort();
    }
    return 0;
}
