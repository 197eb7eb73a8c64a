/* What a job cannot apply is never dropped without a word (issue 36): a
 * listed verifier that runs on some of a tree dump's policies runs there
 * and each skipped one is named on stderr, as mdsd table's "skipping" note
 * does (the refusals of verifiers that run nowhere are corpus cases,
 * tests/corpus/cli/block-verifiers-*.case, table-*-at-no-draft-count.case);
 * and the hints the CLI prints name options that exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"

#define SHIPPED "data/kjv-trees.h5"

Test(requests, block_names_every_skipped_listed_verifier)
{
    char cmd[1024], *o;
    snprintf(cmd, sizeof cmd, "%s block " SHIPPED " --verifiers sd,rrs --depth 1 2>&1 >/dev/null",
             test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &o), 0, "%s", o);
    cr_assert(strstr(o, "skipping verifier sd at seq K=2 L=4: sd verifies one draft"), "%s", o);
    cr_assert(strstr(o, "skipping verifier sd at seq K=4 L=4: sd verifies one draft"), "%s", o);
    cr_assert(!strstr(o, "skipping verifier rrs"), "%s", o);
    free(o);
    /* the defaults (sd among them) run where they apply, without a note */
    snprintf(cmd, sizeof cmd, "%s block " SHIPPED " --depth 1 2>&1 >/dev/null", test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &o), 0, "%s", o);
    cr_assert(!strstr(o, "skipping"), "%s", o);
    free(o);
}
