/* test_papers.c - every number in the prose of papers/FINDINGS.md, papers/README.md and
 * papers/ * /README.md is tied to a committed results file or classified (published,
 * parameter, constant) with a reason in papers/numbers.tsv (papers/check_numbers.py), and
 * the check fails on each kind of planted error: a results value that drifted, a new
 * number nobody classified, a parameter that no command shown sets, a published number
 * changed under its classification, and a ragged results CSV. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Runs the check with FILE replaced by the output of SED_SCRIPT applied to papers/FILE;
 * returns its exit status, its output in *out. */
static int check_with_planted(const char *file, const char *sed_script, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "f=$(mktemp) && sed '%s' papers/%s > $f && ! cmp -s $f papers/%s && "
             "/usr/bin/python3 papers/check_numbers.py --override %s=$f; rc=$?; rm -f $f; "
             "exit $rc",
             sed_script, file, file, file);
    return test_run_shell(cmd, out);
}

Test(papers, every_number_in_the_prose_is_tied_or_classified)
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
    int rc = check_with_planted("hu/fig1.csv", "s/0.6844536758/0.6854536758/", &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "does not say 'at T = 0.1 wor 0.6855,'"), "%s", out);
    free(out);
}

Test(papers, a_drift_in_a_table_row_fails_the_check)
{
    char *out = NULL; /* kn3's RRS at n = 3 in khisti/dump.csv: 0.8732 -> 0.8742 */
    int rc = check_with_planted("khisti/dump.csv", "s/,0.8731776773,/,0.8741776773,/", &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "does not say '| SpecInfer (RRS) | 0.6496 / 0.6880 / 0.7134 | "
                          "0.8476 / 0.8742 / 0.8893 |'"), "%s", out);
    free(out);
}

Test(papers, a_new_unclassified_number_fails_the_check)
{
    char *out = NULL;
    int rc = check_with_planted("FINDINGS.md", "s/^This mechanism is one/This mechanism (0.4321) is one/",
                                &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "FINDINGS.md:33: the number 0.4321 is neither tied to a results file "
                          "nor classified"), "%s", out);
    free(out);
}

Test(papers, a_parameter_no_command_sets_fails_the_check)
{
    char *out = NULL;
    int rc = check_with_planted("hu/README.md", "s/LLM distributions at T = 0.7 are/LLM distributions at T = 0.77 are/",
                                &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "hu/README.md:") && strstr(out, ": parameter 0.77 (numbers.tsv:"), "%s", out);
    free(out);
}

Test(papers, a_changed_published_number_is_no_longer_classified)
{
    char *out = NULL; /* Khisti et al.'s quoted "[the parameter = 1/3]" edited to 1/4 */
    int rc = check_with_planted("khisti/README.md", "s|\\[the parameter = 1/3\\]|[the parameter = 1/4]|",
                                &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "(a stale published entry)"), "%s", out);
    cr_assert(strstr(out, "khisti/README.md:29: the number 4 is neither tied"), "%s", out);
    free(out);
}

Test(papers, a_ragged_results_csv_is_refused)
{
    char *out = NULL; /* a row with one field fewer than the header */
    int rc = check_with_planted("spechub/dump.csv", "3s/,$//", &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "spechub/dump.csv:3: 22 fields, the header has 23 (a ragged CSV)"),
              "%s", out);
    free(out);
}
