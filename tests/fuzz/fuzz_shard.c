/* libFuzzer harness: the shard-aggregate reader of `mdsd merge` and of the
 * shards' checkpoints (src/job/shard.c). The input is cut at 0xff bytes into
 * up to four "files"; they go to mdsd_shard_collect under the table's and
 * the block job's magic, and each one's body to mdsd_shard_units_parse with
 * and without drop_tail; then the whole table merge (mdsd_batch_merge: the
 * header's lines, the dumps by size and SHA-256). Whatever the bytes: no
 * crash, no leak, no read past an input; a refusal names its problem; an
 * accepted set holds shards 1..N in order, each unit inside its file.
 *
 *   build: `make fuzz` (every tests/fuzz/fuzz_*.c is linked against the
 *   library sources with clang -fsanitize=fuzzer,address,undefined)
 *   seeds: a shard made by `mdsd table ... --shard 1/2 -o seed.agg`, e.g.
 *          mkdir -p build/fuzz/corpus/fuzz_shard && cp seed.agg build/fuzz/corpus/fuzz_shard/
 *   run:   build/fuzz/fuzz_shard -max_total_time=60 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

static void check_units(const char *text, size_t size, const mdsd_shard_unit *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (u[i].text < text || u[i].text + u[i].len > text + size)
            abort(); /* a unit lies inside its file */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_FILES = 4 };
    char *texts[MAX_FILES] = {0};
    mdsd_shard_input in[MAX_FILES];
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= size && n < MAX_FILES; i++) {
        if (i < size && data[i] != 0xff)
            continue;
        size_t len = i - start;
        texts[n] = malloc(len + 1); /* NUL-terminated, as mdsd_ckpt_read_file returns */
        if (!texts[n])
            break;
        memcpy(texts[n], data + start, len);
        texts[n][len] = '\0';
        in[n] = (mdsd_shard_input){.name = "fuzz.agg", .text = texts[n], .size = len};
        n++;
        start = i + 1;
    }
    const char *magics[] = {MDSD_SHARD_MAGIC, MDSD_BLOCK_SHARD_MAGIC};
    for (int m = 0; m < 2; m++) {
        mdsd_shard_file *files = NULL;
        size_t shards = 0;
        mdsd_err err;
        mdsd_err_clear(&err);
        int rc = mdsd_shard_collect(in, n, magics[m], &files, &shards, &err);
        if (rc != MDSD_OK) {
            if (err.msg[0] == '\0')
                abort(); /* a refusal names its problem */
            continue;
        }
        if (shards != n)
            abort(); /* every input is one of the shards */
        for (size_t k = 0; k < shards; k++) {
            if (files[k].shard != k + 1 || files[k].shards != shards)
                abort(); /* shards 1..N, in order */
            check_units(files[k].in->text, files[k].in->size, files[k].units, files[k].n_units);
        }
        mdsd_shard_files_free(files, shards);
    }
    for (size_t k = 0; k < n; k++)
        for (int drop = 0; drop < 2; drop++) {
            mdsd_shard_unit *units = NULL;
            size_t count = 0;
            mdsd_err err;
            mdsd_err_clear(&err);
            int rc = mdsd_shard_units_parse("fuzz.agg", texts[k], in[k].size, drop, &units, &count, &err);
            if (rc != MDSD_OK && err.msg[0] == '\0')
                abort();
            if (rc == MDSD_OK)
                check_units(texts[k], in[k].size, units, count);
            free(units);
        }
    /* the whole table merge: the header's lines (cells, temperatures, the
     * dumps' "dump SIZE MTIME SHA256 PATH" lines) parsed and the dumps
     * checked by size and content; a fuzzed dump matches no file's SHA-256,
     * so nothing is written */
    static char out[64];
    if (!out[0]) {
        char dir[] = "/tmp/fuzz-shard-XXXXXX";
        if (!mkdtemp(dir))
            abort();
        snprintf(out, sizeof out, "%s/m.csv", dir);
    }
    if (n) {
        mdsd_shard_job job = {0};
        mdsd_merge_opts mo = {n, in, out, &job, NULL, NULL, NULL};
        mdsd_err err;
        mdsd_err_clear(&err);
        if (mdsd_batch_merge(&mo, NULL, NULL, &err) != MDSD_OK && err.msg[0] == '\0')
            abort();
        mdsd_shard_job_free(&job);
    }
    for (size_t k = 0; k < n; k++)
        free(texts[k]);
    return 0;
}
