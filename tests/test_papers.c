/* test_papers.c - every number quoted in papers/ prose that papers/numbers.tsv lists
 * equals what its committed results file gives (papers/check_numbers.py), and the check
 * fails on a planted drift (a results file with one value moved by 0.001). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Test(papers, quoted_numbers_match_their_results_files)
{
    char *out = NULL;
    int rc = test_run_shell("/usr/bin/python3 papers/check_numbers.py", &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, " 0 failed"), "%s", out);
    free(out);
}

Test(papers, a_planted_drift_fails_the_check)
{
    char *out = NULL;
    int rc = test_run_shell("f=$(mktemp) && sed 's/0.6844536758/0.6854536758/' papers/hu/fig1.csv "
                            "> $f && /usr/bin/python3 papers/check_numbers.py --override "
                            "hu/fig1.csv=$f; rc=$?; rm -f $f; exit $rc", &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "does not say 'at T = 0.1 wor 0.6855,'"), "%s", out);
    free(out);
}
