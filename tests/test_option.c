/* Errors in the API's words (mdsd/option.h, src/core/option.c): the library names
 * options by their C names in backquotes and records the option an error concerns
 * in mdsd_err.option; the CLI and Python phrase the names from the one table.
 * Here: the table's spellings (each CLI one a flag some command's --help lists),
 * mdsd_option_words, and errors end to end in C and on the command line. Then
 * tests/python/test_option_words.py: no library string names a flag, each Python
 * spelling is a keyword, and the same errors in Python. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

#include "testutil.h"

static const char *const commands[] = {"dist", "draft", "info", "toy", "table", "merge", "report",
                                       "plot", "accept", "lp", "bound", "check", "block"};
#define N_COMMANDS (sizeof commands / sizeof *commands)

/* Whether text lists flag as an option: the flag, then not more of a name. */
static bool lists_flag(const char *text, const char *flag)
{
    size_t len = strlen(flag);
    for (const char *at = text; (at = strstr(at, flag)); at++) {
        bool starts = at == text || !(isalnum((unsigned char)at[-1]) || at[-1] == '-');
        bool ends = !(isalnum((unsigned char)at[len]) || at[len] == '-' || at[len] == '_');
        if (starts && ends)
            return true;
    }
    return false;
}

static char *helps(void)
{
    size_t cap = 1, len = 0;
    char *all = calloc(1, cap);
    for (size_t c = 0; c < N_COMMANDS; c++) {
        char cmd[64], *out;
        snprintf(cmd, sizeof cmd, "%s --help", commands[c]);
        cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "mdsd %s: %s", cmd, out);
        size_t n = strlen(out);
        all = realloc(all, cap = len + n + 2);
        memcpy(all + len, out, n);
        len += n;
        all[len++] = '\n';
        all[len] = '\0';
        free(out);
    }
    return all;
}

Test(option, every_option_has_three_spellings_and_the_cli_takes_its_flag, .timeout = 60)
{
    char *help = helps();
    cr_assert_null(mdsd_option_name(MDSD_OPTION_NONE, MDSD_SPELL_C));
    cr_assert_null(mdsd_option_name(MDSD_OPTION_LIMIT, MDSD_SPELL_C));
    cr_assert_null(mdsd_option_name(MDSD_OPTION_MAX_PATHS, 3));
    cr_assert_eq(mdsd_option_lookup(NULL), MDSD_OPTION_NONE);
    cr_assert_eq(mdsd_option_lookup("max-paths"), MDSD_OPTION_NONE);
    cr_assert_eq(mdsd_option_lookup("max_path"), MDSD_OPTION_NONE);
    for (int k = MDSD_OPTION_NONE + 1; k < MDSD_OPTION_LIMIT; k++) {
        const char *c = mdsd_option_name(k, MDSD_SPELL_C), *cli = mdsd_option_name(k, MDSD_SPELL_CLI),
                   *py = mdsd_option_name(k, MDSD_SPELL_PYTHON);
        cr_assert(c && cli && py && c[0] && cli[0] && py[0], "option %d lacks a spelling", k);
        cr_assert_eq(mdsd_option_lookup(c), k, "%s is option %d, not %d", c, mdsd_option_lookup(c), k);
        cr_assert(cli[0] == '-', "%s: the CLI spelling %s is not a flag", c, cli);
        cr_expect(lists_flag(help, cli), "%s: no command's --help lists %s", c, cli);
    }
    /* a planted flag no command takes is not listed */
    cr_assert_not(lists_flag(help, "--max-path"));
    cr_assert_not(lists_flag(help, "--nosuch-flag"));
    free(help);
}

static void words(const char *msg, int spelling, const char *want)
{
    char out[256];
    size_t n = mdsd_option_words(msg, spelling, out, sizeof out);
    cr_assert_str_eq(out, want, "spelling %d of \"%s\"", spelling, msg);
    cr_assert_eq(n, strlen(want));
}

Test(option, words_rewrite_markers_and_nothing_else)
{
    const char *m = "raise `max_paths`, or use `method sort` (`resume`): `trials` K";
    words(m, MDSD_SPELL_C, m);
    words(m, MDSD_SPELL_CLI, "raise --max-paths, or use --method sort (--resume): --trials K");
    words(m, MDSD_SPELL_PYTHON, "raise max_paths=, or use method=sort (resume=True): trials= K");
    words("`labels 'a=b'`: x; `output`", MDSD_SPELL_CLI, "--label 'a=b': x; -o");
    words("`is_top`: 3", MDSD_SPELL_PYTHON, "is_top: 3");
    /* not markers: other quoted text, a name with other characters, an open quote */
    const char *plain[] = {"`is` with weights", "`mdsd-runner import x`", "`Max_paths`",
                           "open `max_paths", "``", "`max_paths`` x", ""};
    words(plain[0], MDSD_SPELL_CLI, plain[0]);
    words(plain[1], MDSD_SPELL_CLI, plain[1]);
    words(plain[2], MDSD_SPELL_CLI, plain[2]);
    words(plain[3], MDSD_SPELL_CLI, plain[3]);
    words(plain[4], MDSD_SPELL_CLI, plain[4]);
    words(plain[5], MDSD_SPELL_CLI, "--max-paths` x");
    words(plain[6], MDSD_SPELL_CLI, "");
    /* snprintf's contract: the whole length returned, the output cut and terminated */
    char small[6];
    cr_assert_eq(mdsd_option_words("see `max_paths`", MDSD_SPELL_CLI, small, sizeof small), 15);
    cr_assert_str_eq(small, "see -");
    cr_assert_eq(mdsd_option_words("`max_paths`", MDSD_SPELL_CLI, NULL, 0), 11);
    cr_assert_eq(mdsd_option_words(NULL, MDSD_SPELL_CLI, small, sizeof small), 0);
    cr_assert_str_eq(small, "");
}

/* One error through the C API, the CLI and (tests/python/test_option_words.py) Python. */
Test(option, errors_carry_their_option_in_c_and_the_flag_on_the_command_line, .timeout = 120)
{
    double p[3] = {0.5, 0.3, 0.2}, q[3] = {0.2, 0.3, 0.5};
    mdsd_scheme s = {MDSD_SCHEME_WOR, 3, 3, q, NULL};
    mdsd_verifier_opts vo;
    mdsd_verifier_opts_init(&vo);
    vo.max_paths = 1;
    double alpha;
    mdsd_err err;
    cr_assert_eq(mdsd_verifier_rate(MDSD_VERIFIER_RRSW, p, &s, &vo, &alpha, NULL, &err), MDSD_ETOOBIG);
    cr_assert_eq(err.option, MDSD_OPTION_MAX_PATHS, "%d: %s", err.option, err.msg);
    cr_assert(strstr(err.msg, "(`max_paths`)") && strstr(err.msg, "(`trials`)"), "%s", err.msg);

    const char *dumps[] = {"data/kjv-ngram.h5"};
    double T[] = {1};
    size_t n[] = {2};
    mdsd_table_opts to;
    mdsd_table_opts_init(&to);
    to.n_dumps = 1, to.dumps = dumps, to.n_temperatures = 1, to.temperatures = T;
    to.n_counts = 1, to.draft_counts = n, to.output = "build/test-option.csv";
    to.resume = 1, to.discard_partial = 1;
    cr_assert_eq(mdsd_table_run(&to, &err), MDSD_EINVAL);
    cr_assert_eq(err.option, MDSD_OPTION_RESUME, "%s", err.msg);
    cr_assert_str_eq(err.msg, "table: `resume` and `discard_partial` exclude each other");
    to.resume = to.discard_partial = 0, to.simulate = 1;
    cr_assert_eq(mdsd_table_run(&to, &err), MDSD_EINVAL);
    cr_assert_eq(err.option, MDSD_OPTION_SIMULATE, "%s", err.msg);

    /* the same on the command line: the flags, no marker left */
    const struct {
        const char *args, *want;
    } cli[] = {
        {"accept -p 0.5,0.3,0.2 -q 0.2,0.3,0.5 -n 3 -s wor -v rrsw --exact --max-paths 1",
         "(--max-paths) at V = 3, n = 3; estimate by Monte Carlo instead (--trials)"},
        {"table data/kjv-ngram.h5 -o build/test-option.csv --resume --discard-partial",
         "--resume and --discard-partial"},
        {"table data/kjv-ngram.h5 -o build/test-option.csv --simulate", "--simulate needs --trials K"},
        {"block --markov papers/block/toys/toy3.txt --sequences 2 --depth 2", "missing --verifier"},
    };
    for (size_t k = 0; k < sizeof cli / sizeof *cli; k++) {
        char *out;
        cr_assert_neq(test_run_mdsd(cli[k].args, 1, &out), 0, "mdsd %s", cli[k].args);
        cr_expect(strstr(out, cli[k].want) && !strchr(out, '`'), "mdsd %s said:\n%s", cli[k].args, out);
        free(out);
    }
}

Test(option, python_words_and_no_flag_in_the_library, .timeout = 300)
{
    if (!test_release_build("option"))
        return;
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                              "test_option_words 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}
