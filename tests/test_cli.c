/* The mdsd command line: help, version, exit codes and error messages. */
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"

Test(cli, help_lists_the_commands)
{
    char *out;
    cr_assert_eq(test_run_mdsd("--help", 0, &out), 0);
    cr_assert(strstr(out, "dist") && strstr(out, "draft"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("--version", 0, &out), 0);
    cr_assert(strstr(out, "mdsd "), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("draft --help", 0, &out), 0);
    cr_assert(strstr(out, "JSON keys"), "%s", out);
    free(out);
}

Test(cli, usage_errors_exit_2_and_input_errors_exit_1)
{
    char *out;
    cr_assert_eq(test_run_mdsd("frobnicate", 1, &out), 2);
    free(out);
    cr_assert_eq(test_run_mdsd("dist -p 0.5,0.5 --no-such-flag", 1, &out), 2);
    free(out);
    cr_assert_eq(test_run_mdsd("dist -p 0.5,0.6", 1, &out), 1);
    cr_assert(strstr(out, "sum to 1.1"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("dist -p 1,nan,2 --logits", 1, &out), 1);
    cr_assert(strstr(out, "index 1") && strstr(out, "NaN"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("dist -p 0.5,0.5 -q 0.2,0.3,0.5", 1, &out), 1);
    cr_assert(strstr(out, "vocabulary mismatch"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("draft -q 1,0,0 -n 2 --scheme wor", 1, &out), 1);
    cr_assert(strstr(out, "only 1"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("dist -p 1,2 --logits -T -1", 1, &out), 2);
    free(out);
}

Test(cli, json_output_of_dist_and_draft)
{
    char *out;
    cr_assert_eq(test_run_mdsd("dist -p 0,0,1 --logits -T 0 -q 1,0,1 --json", 0, &out), 0);
    cr_assert(strstr(out, "\"p\":[0,0,1]") && strstr(out, "\"q\":[1,0,0]") && strstr(out, "\"overlap\":0,"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("draft -q 0.5,0.5 -n 2 --scheme wor --subset 0 --json", 0, &out), 0);
    cr_assert(strstr(out, "\"scheme\":\"wor\"") && strstr(out, "\"Q\":0"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("draft -q 0.6,0.4 -n 2 --scheme iid --sample 20000 --json", 0, &out), 0);
    cr_assert(strstr(out, "\"p_value\":"), "%s", out);
    free(out);
}
