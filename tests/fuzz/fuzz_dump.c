/* libFuzzer harness: the HDF5 dump reader (src/io/dump_*.c), as `mdsd info
 * --validate` and `mdsd table` use it. The input bytes are written to a new
 * file, opened, validated and streamed block by block with the per-row and
 * metadata checks the table job runs. Invariants: a refusal names its
 * problem; an opened dump has N, V >= 1 and at least one drafter; every row
 * of a dump that validates passes the streaming checks too (the two paths
 * agree), and its logits hold no NaN or +inf.
 *
 * What stays in HDF5's hands: libhdf5 parses the file's superblock, object
 * headers and heaps itself; a corruption that crashes or hangs libhdf5 is a
 * libhdf5 defect (see data/README.md). mdsd contains a crash while the
 * metadata is read by reading it first in a child process
 * (dump_format.c, probe_metadata); the harness turns that probe off, to
 * fuzz the reader itself in-process at full speed, so it reports libhdf5's
 * own crashes too: run it in fork mode, which goes on after a crash, and
 * triage the artifacts (a crash whose frames are all in libhdf5 is HDF5's;
 * `mdsd info ARTIFACT` must then refuse the file cleanly). Run with
 * -detect_leaks=0: HDF5 keeps free lists that LeakSanitizer reports.
 * Seeds: small dumps from `mdsd toy`, tests/fuzz/seed_dumps.sh DIR.
 *
 *   run: build/fuzz/fuzz_dump -detect_leaks=0 -fork=1 -ignore_crashes=1
 *        -max_total_time=60 CORPUS_DIR SEED_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"

/* Streams are skipped past this many logits (a fuzzed header may declare
 * dimensions whose unallocated chunks read as fill values for minutes). */
#define MAX_VALUES (1u << 20)

static void must_name(int rc, const mdsd_err *err)
{
    if (rc != MDSD_OK && err->msg[0] == '\0')
        abort();
}

static int stream(mdsd_dump *d)
{
    mdsd_err err;
    mdsd_err_clear(&err);
    size_t cap = mdsd_dump_block_rows(d, d->n_drafts, 1u << 20);
    mdsd_dump_block *b = mdsd_dump_block_alloc(d, cap, d->n_drafts, NULL, &err);
    if (!b)
        return MDSD_ENOMEM;
    mdsd_dump_meta_check meta;
    mdsd_dump_meta_check_init(&meta);
    int rc = MDSD_OK;
    for (size_t r0 = 0; r0 < d->N && rc == MDSD_OK; r0 += cap) {
        rc = mdsd_dump_block_read(d, b, r0, 1, &err);
        if (rc == MDSD_OK)
            rc = mdsd_dump_check_meta(d, b, &meta, &err);
        for (size_t i = 0; rc == MDSD_OK && i < b->rows * d->V; i++)
            if (isnan(b->target[i]) || b->target[i] == INFINITY)
                abort(); /* a checked block holds no NaN or +inf */
    }
    must_name(rc, &err);
    mdsd_dump_block_free(b);
    return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("MDSD_HDF5_NO_PROBE", "1", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long count;
    char path[96];
    snprintf(path, sizeof path, "/tmp/mdsd-fuzz-dump-%ld-%lu.h5", (long)getpid(), count++);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    mdsd_dump *d = NULL;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_dump_open(path, &d, &err);
    must_name(rc, &err);
    if (rc == MDSD_OK) {
        if (d->N < 1 || d->V < 1 || d->n_drafts < 1)
            abort();
        if (d->N <= MAX_VALUES && d->V <= MAX_VALUES / d->N) {
            mdsd_err_clear(&err);
            int valid = mdsd_dump_validate(d, NULL, NULL, &err);
            must_name(valid, &err);
            int streamed = stream(d);
            if (valid == MDSD_OK && streamed != MDSD_OK)
                abort(); /* what validates must stream */
        }
        mdsd_dump_close(d);
    }
    unlink(path);
    return 0;
}
