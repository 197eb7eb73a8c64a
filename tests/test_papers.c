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
    int rc = check_with_planted("FINDINGS.md", "s/^The cps law is one/The cps law (0.4321) is one/",
                                &out);
    cr_assert_eq(rc, 1, "%s", out);
    char want[128], *line = NULL; /* the planted line, wherever FINDINGS.md has it */
    test_run_shell("grep -n '^The cps law is one' papers/FINDINGS.md | cut -d: -f1", &line);
    snprintf(want, sizeof want, "FINDINGS.md:%d: the number 0.4321 is neither tied to a results file "
             "nor classified", atoi(line));
    free(line);
    cr_assert(strstr(out, want), "%s", out);
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
    char want[128]; /* the line of the quote, wherever the README has it */
    char *readme = NULL;
    test_run_shell("grep -n 'the parameter = 1/3' papers/khisti/README.md | cut -d: -f1", &readme);
    snprintf(want, sizeof want, "khisti/README.md:%d: the number 4 is neither tied", atoi(readme));
    free(readme);
    cr_assert(strstr(out, want), "%s", out);
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

/* The falsification search for exact wor sort-and-scan (papers/hu/wor_search.py, MATH.md
 * §2.4), reduced: it finds no counterexample on the real law, and it does find one when the
 * law is replaced by one whose Q is not q-convex (--plant), so it is not vacuous. */
Test(papers, wor_search_finds_none_and_flags_a_planted_law, .timeout = 300)
{
    char *out = NULL;
    const char *run = "PYTHONPATH=src/python /usr/bin/python3 papers/hu/wor_search.py "
                      "--seed 3 --restarts 8 --steps 12 --exact-max-V 7 -o - 2>/dev/null";
    int rc = test_run_shell(run, &out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "counterexample 0") && strstr(out, "instances 96"), "%s", out);
    free(out);
    char planted[400];
    snprintf(planted, sizeof planted, "PYTHONPATH=src/python /usr/bin/python3 papers/hu/wor_search.py "
             "--seed 3 --restarts 8 --steps 12 --exact-max-V 7 -o - --plant 2>/dev/null");
    rc = test_run_shell(planted, &out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "counterexample 1"), "%s", out);
    free(out);
}
