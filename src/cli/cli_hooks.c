/* cli_hooks.c - the test hooks: the one place that reads them from the
 * environment (the library reads none; tests set them to reach failure and
 * resume paths without timing races). Unset, every hook is off.
 *   MDSD_TABLE_FAIL=COLUMN:ROW     mdsd table: that row of that dump column
 *                                  fails as a bad row would (tests/test_scale.c)
 *   MDSD_TABLE_BLOCK_ROWS=K        mdsd table: blocks of K rows, so a small dump
 *                                  has several blocks and checkpoints
 *   MDSD_TEST_BLOCK_STOP_AFTER=K   mdsd block: SIGINT after K finished dumps
 *   MDSD_TEST_BOUND_OFFSET=M:X     mdsd bound: route M's alpha* moved by X, to
 *                                  show that a disagreement fails the command */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_table_hooks(mdsd_run_opts *run)
{
    const char *spec = getenv("MDSD_TABLE_FAIL");
    unsigned long long c, r, k;
    if (spec && sscanf(spec, "%llu:%llu", &c, &r) == 2)
        run->test_fail = 1, run->test_fail_column = (size_t)c, run->test_fail_row = (size_t)r;
    spec = getenv("MDSD_TABLE_BLOCK_ROWS");
    if (spec && sscanf(spec, "%llu", &k) == 1 && k > 0)
        run->test_block_rows = (size_t)k;
}

size_t cli_block_stop_after(void)
{
    const char *stop = getenv("MDSD_TEST_BLOCK_STOP_AFTER");
    return stop ? (size_t)strtoul(stop, NULL, 10) : 0;
}

bool cli_bound_offset(const char *method, double *offset)
{
    const char *plant = getenv("MDSD_TEST_BOUND_OFFSET");
    size_t ml = strlen(method);
    if (!plant || strncmp(plant, method, ml) != 0 || plant[ml] != ':')
        return false;
    *offset = strtod(plant + ml + 1, NULL);
    return true;
}
