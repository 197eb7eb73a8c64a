/* The runner's tree dumps (src/mdsd_runner/trees.py): tests/python/test_trees.py under
 * Debian's /usr/bin/python3, as tests/test_runner.c runs the runner's other suites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "testutil.h"

Test(block_trees, runner_tree_dumps)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "MDSD_BIN='%s' PYTHONPATH=src:src/python:tests/python /usr/bin/python3 -m "
             "unittest test_trees 2>&1", test_mdsd_bin());
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    size_t cap = 1 << 16, used = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + used, 1, cap - used - 1, f)) > 0) {
        used += got;
        if (cap - used < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[used] = '\0';
    int status = pclose(f);
    size_t len = strlen(buf);
    const char *tail = len > 8000 ? buf + len - 8000 : buf;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "test_trees failed:\n%s", tail);
    cr_assert(strstr(buf, "\nOK\n"), "test_trees: no plain OK line:\n%s", tail);
    free(buf);
}
