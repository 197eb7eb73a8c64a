/* libFuzzer harness: the results-CSV reader (src/io/csv.c), as `mdsd plot`
 * uses it, and the paired differences of `mdsd report --paired` on what it
 * accepts. The input bytes are read as a stream (fmemopen); a table that is
 * accepted must be rectangular, every cell a
 * string (NUL-free, as the reader refuses NUL bytes), and every cell either
 * a number or a named error. mdsd_csv_split is fed the first line too.
 *
 *   build: `make fuzz` (every tests/fuzz/fuzz_*.c is linked against the
 *   library sources with clang -fsanitize=fuzzer,address,undefined)
 *   run:   build/fuzz/fuzz_csv -max_total_time=60 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "report.h"

static void check_table(const mdsd_csv *t)
{
    if (t->n_cols == 0 || !t->header)
        abort(); /* a header row was read */
    for (size_t r = 0; r < t->n_rows; r++) {
        if (r > 0 && t->line[r] <= t->line[r - 1])
            abort(); /* line numbers increase */
        for (size_t c = 0; c < t->n_cols; c++) {
            const char *s = mdsd_csv_cell(t, r, (int)c);
            if (!s)
                abort();
            double x;
            mdsd_err err;
            mdsd_err_clear(&err);
            int rc = mdsd_csv_number(t, r, (int)c, &x, &err);
            if (rc != MDSD_OK && err.msg[0] == '\0')
                abort(); /* a refusal names its problem */
        }
    }
    for (size_t c = 0; c < t->n_cols; c++)
        if (mdsd_csv_col(t, t->header[c]) != (int)c)
            abort(); /* column names are unique */
}

/* mdsd report --paired on the table (its last two columns as the pair): a
 * result has a row per group with finite numbers, a refusal names its problem. */
static void check_paired(const mdsd_csv *t)
{
    if (t->n_cols < 2)
        return;
    int a = (int)t->n_cols - 2, b = (int)t->n_cols - 1;
    mdsd_report_paired_row *rows = NULL;
    size_t count = 0;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (mdsd_report_paired(t, &a, &b, 1, &rows, &count, &err) != MDSD_OK) {
        if (err.msg[0] == '\0' || rows)
            abort();
        return;
    }
    size_t positions = 0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(rows[i].diff) || !(rows[i].se >= 0) || rows[i].positions == 0)
            abort();
        positions += rows[i].positions;
    }
    if (count == 0 || positions != t->n_rows)
        abort(); /* every row lands in one group */
    free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* fmemopen refuses a size of 0: an empty input is /dev/null */
    FILE *f = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
    if (!f)
        return 0;
    mdsd_csv *t = NULL;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_csv_read_stream(f, "fuzz.csv", &t, &err);
    fclose(f);
    if (rc == MDSD_OK) {
        check_table(t);
        check_paired(t);
        mdsd_csv_free(t);
    } else if (err.msg[0] == '\0' || t) {
        abort();
    }
    /* the splitter on the first line (up to a NUL or a line break) */
    char *line = malloc(size + 1);
    if (line) {
        size_t n = 0;
        while (n < size && data[n] != '\n' && data[n] != '\0')
            n++;
        memcpy(line, data, n);
        line[n] = '\0';
        char **fields;
        size_t count;
        if (mdsd_csv_split(line, &fields, &count, &err) == MDSD_OK) {
            for (size_t i = 0; i < count; i++)
                if (!fields[i] || strlen(fields[i]) > n)
                    abort();
            mdsd_csv_fields_free(fields, count);
        }
        free(line);
    }
    return 0;
}
