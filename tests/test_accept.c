/* mdsd accept: exact and Monte Carlo agree through the command line, the JSON
 * keys, and each bad-input path exits non-zero with a message naming it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "testutil.h"

/* The number after "key": in a one-line JSON object. */
static double json_number(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(json, pat);
    cr_assert_not_null(at, "no key %s in %s", key, json);
    return strtod(at + strlen(pat), NULL);
}

Test(accept, exact_and_trials_agree_for_every_verifier)
{
    static const char *const cases[] = {
        "--verifier sd -n 1", "--verifier rrs -n 3", "--verifier rrsw -n 3",
        "--verifier kseq -n 3", "--verifier spechub -n 2", "--verifier greedy -n 3",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[256], *out;
        snprintf(args, sizeof args,
                 "accept -p 0.1,0.2,0.3,0.25,0.15 -q 0.3,0.3,0.2,0.1,0.1 %s --exact "
                 "--trials 100000 --seed 3 --check-output --json", cases[i]);
        cr_assert_eq(test_run_mdsd(args, 1, &out), 0, "%s: %s", cases[i], out);
        cr_assert(strstr(out, "\"exact\":true") && strstr(out, "\"per_draft\":[") &&
                  strstr(out, "\"generator\":\"taus2\""), "%s", out);
        double alpha = json_number(out, "alpha"), mc = json_number(out, "mc_alpha");
        double se = json_number(out, "stderr");
        cr_assert_eq(json_number(out, "trials"), 100000);
        cr_assert_leq(fabs(mc - alpha), 5 * se + 1e-12, "%s: %s", cases[i], out);
        cr_assert_gt(json_number(out, "p_value"), 1e-6, "%s: %s", cases[i], out);
        free(out);
    }
}

Test(accept, text_output_and_monte_carlo_only)
{
    char *out;
    cr_assert_eq(test_run_mdsd("accept -p 0.5,0.5 -q 0.9,0.1 --verifier rrs --trials 1000", 1,
                               &out), 0, "%s", out);
    cr_assert(strstr(out, "monte carlo: alpha") && !strstr(out, "exact:"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("accept -p 0.5,0.5 -q 0.9,0.1 --verifier rrs --trials 1000 --json",
                               1, &out), 0);
    cr_assert(strstr(out, "\"exact\":false") && strstr(out, "\"trials\":1000"), "%s", out);
    free(out);
    /* default: exact; sd = single-draft overlap */
    cr_assert_eq(test_run_mdsd("accept -p 0.5,0.5 -q 0.9,0.1 --verifier sd --json", 1, &out), 0);
    cr_assert(strstr(out, "\"alpha\":0.59999999999999998") && strstr(out, "\"trials\":0"), "%s",
              out);
    free(out);
    cr_assert_eq(test_run_mdsd("accept --help", 0, &out), 0);
    cr_assert(strstr(out, "JSON keys") && strstr(out, "taus2"), "%s", out);
    /* every verifier the library knows is listed, the audit variants as such */
    for (int k = 0; k < MDSD_VERIFIER_KINDS; k++) {
        char word[64];
        snprintf(word, sizeof word, " %s", mdsd_verifier_name(k));
        cr_expect(strstr(out, word), "accept --help does not list %s", word + 1);
    }
    cr_assert(strstr(out, "Audit variants") && strstr(out, "INVALID"), "%s", out);
    free(out);
}

Test(accept, rrs_with_several_drafters_uses_multi)
{
    char *out;
    cr_assert_eq(test_run_mdsd("accept -p 0.1,0.2,0.3,0.4 -q 0.4,0.3,0.2,0.1 -q 0.25,0.25,0.25,0.25"
                               " --verifier rrs --json", 1, &out), 0, "%s", out);
    /* beta_1 = 0.6; p_2 = (0,0,0.1,0.3)/0.4, overlap with uniform = 0.5: 0.6 + 0.4 * 0.5 */
    cr_assert(strstr(out, "\"scheme\":\"multi\""), "%s", out);
    cr_assert_float_eq(json_number(out, "alpha"), 0.8, 1e-12);
    free(out);
}

Test(accept, bad_input_is_reported)
{
    static const struct {
        const char *args;
        int status;
        const char *message;
    } cases[] = {
        {"accept -p 0.5,0.5 -q 0.5,0.5", 2, "missing --verifier"},
        {"accept -p 0.5,0.5 -q 0.5,0.5 --verifier bogus", 1, "unknown verifier 'bogus'"},
        {"accept -p 0.5,0.5 -q 0.5,0.5 --verifier sd -n 2", 1, "got the iid scheme with n = 2"},
        {"accept -p 0.5,0.5 -q 0.5,0.5 --verifier spechub --scheme iid", 1, "hub drafts"},
        {"accept -p 0.5,0.5 -q 0.5,0.5 --verifier rrs --check-output", 2, "needs --trials"},
        {"accept -p 0.5,0.5 -q 0.2,0.3,0.5 --verifier rrs", 1, "vocabulary mismatch"},
        {"accept -p 0.5,0.6 -q 0.5,0.5 --verifier rrs", 1, "target"},
        {"accept -q 0.5,0.5 --verifier rrs", 1, "missing -p"},
        {"accept -p 0.5,0.5 --verifier rrs", 1, "missing -q"},
        {"accept -p 0.5,0.5 -q 0.5,0.5 --verifier rrs --trials -4", 2, "--trials"},
        {"accept -p 0.5,0.5 -q 1,0 --verifier rrsw", 1, "only 1"},
        {"accept -p @/nonexistent/p.txt -q 0.5,0.5 --verifier rrs", 1, "/nonexistent/p.txt"},
        {"accept -p 0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,0.05,"
         "0.05,0.05,0.05,0.05,0.05 -q 0.08,0.08,0.08,0.08,0.08,0.08,0.05,0.05,0.05,0.05,0.05,0.05,"
         "0.0275,0.0275,0.0275,0.0275,0.0275,0.0275,0.0275,0.0275 -n 6 --verifier rrsw --exact "
         "--max-paths 50", 1, "--trials"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out;
        int status = test_run_mdsd(cases[i].args, 1, &out);
        cr_assert_eq(status, cases[i].status, "%s: status %d: %s", cases[i].args, status, out);
        cr_assert(strstr(out, cases[i].message), "%s: expected '%s' in: %s", cases[i].args,
                  cases[i].message, out);
        free(out);
    }
}
