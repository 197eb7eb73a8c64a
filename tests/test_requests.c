/* What a job cannot apply is never dropped without a word (issue 36): a
 * listed verifier runs on the policies of a tree dump where it applies and
 * each policy it skips is named on stderr, as mdsd table's "skipping" note
 * names each n (nothing left at all is refused: corpus case
 * cli/block-selection-matches-nothing); and the hints the CLI prints name
 * options that exist. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <mdsd/option.h>

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
    /* on a seq dump rrsw and spechub apply nowhere: named, then rrs runs (they were dropped
     * without a word, though --verifiers rrsw alone is refused) */
    snprintf(cmd, sizeof cmd, "%s block " SHIPPED " --verifiers rrsw,spechub,rrs --depth 1 2>&1 >/dev/null",
             test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &o), 0, "%s", o);
    for (int K = 1; K <= 4; K *= 2) {
        char want[2][160];
        snprintf(want[0], sizeof want[0], "skipping verifier rrsw at seq K=%d L=4: verifier rrsw needs "
                 "wor drafts", K);
        snprintf(want[1], sizeof want[1], "skipping verifier spechub at seq K=%d L=4: verifier spechub "
                 "needs hub drafts", K);
        cr_assert(strstr(o, want[0]) && strstr(o, want[1]), "%s", o);
    }
    free(o);
    /* the defaults (sd among them) run where they apply, without a note */
    snprintf(cmd, sizeof cmd, "%s block " SHIPPED " --depth 1 2>&1 >/dev/null", test_mdsd_bin());
    cr_assert_eq(test_run_shell(cmd, &o), 0, "%s", o);
    cr_assert(!strstr(o, "skipping"), "%s", o);
    free(o);
}

/* ---- hints name options that exist --------------------------------------
 * The CLI is driven on inputs that make it print its hints ("pass --X",
 * "rerun ... with --Y", "try mdsd bound --method", an option list), and
 * every --option in what it prints must be one that the command it names
 * accepts: the command of the message ("mdsd block: ..."), or the one the
 * text names before it ("try mdsd bound --method sort"), as its --help
 * lists them. (A --markov row that does not sum to 1 said "pass --logits",
 * which mdsd block does not take.) */

static char hint_dir[64];

/* Whether `mdsd cmd --help` lists --opt (len chars, without the dashes). */
static bool help_lists(const char *cmd, const char *opt, size_t len)
{
    char line[256], *help;
    snprintf(line, sizeof line, "%s %s --help", test_mdsd_bin(), cmd);
    cr_assert_eq(test_run_shell(line, &help), 0, "%s", help);
    bool found = false;
    for (const char *at = help; !found && (at = strstr(at, "--")); at += 2)
        found = !strncmp(at + 2, opt, len) && !(isalnum((unsigned char)at[2 + len]) || at[2 + len] == '-');
    free(help);
    return found;
}

/* Checks every --option in `out` (the stderr of `mdsd cmd ...`); returns how many. */
/* No library marker left in what the CLI prints: "`max_paths`" is the C name of
 * an option (mdsd/option.h), which the CLI spells --max-paths. */
static void check_no_marker(const char *run, const char *out)
{
    for (const char *at = strchr(out, '`'); at; at = strchr(at + 1, '`')) {
        char name[64];
        if (sscanf(at + 1, "%63[a-z0-9_]", name) == 1)
            cr_expect_eq(mdsd_option_lookup(name), MDSD_OPTION_NONE, "`%s` printed the option "
                         "marker `%s`:\n%s", run, name, out);
    }
}

static size_t check_hints(const char *cmd, const char *run, const char *out)
{
    size_t count = 0;
    check_no_marker(run, out);
    for (const char *line = out; *line;) {
        size_t n = strcspn(line, "\n");
        for (size_t i = 0; i + 2 < n; i++) {
            if (line[i] != '-' || line[i + 1] != '-' || !islower((unsigned char)line[i + 2]) ||
                (i > 0 && (isalnum((unsigned char)line[i - 1]) || line[i - 1] == '-')))
                continue;
            size_t len = 0;
            while (i + 2 + len < n && (islower((unsigned char)line[i + 2 + len]) || line[i + 2 + len] == '-'))
                len++;
            /* the command the text names last before the option, else the message's */
            char named[32] = "";
            for (size_t k = 0; k + 5 < i; k++)
                if (!strncmp(line + k, "mdsd ", 5) && islower((unsigned char)line[k + 5]))
                    sscanf(line + k + 5, "%31[a-z]", named);
            const char *which = named[0] ? named : cmd;
            cr_expect(help_lists(which, line + i + 2, len), "`%s` printed --%.*s, which mdsd %s does not "
                      "take:\n%.*s", run, (int)len, line + i + 2, which, (int)n, line);
            count++;
            i += 2 + len;
        }
        line += n + (line[n] == '\n');
    }
    return count;
}

Test(requests, every_hint_names_an_option_the_command_takes, .timeout = 120)
{
    snprintf(hint_dir, sizeof hint_dir, "/tmp/mdsd-hints-XXXXXX");
    cr_assert_not_null(mkdtemp(hint_dir));
    const char *m = test_mdsd_bin();
    char setup[2048];
    snprintf(setup, sizeof setup, "cd %s && %s toy -f dirichlet -V 12 -N 60 --samples 6 -s 3 -o t.h5 "
             ">/dev/null && cp %s/" SHIPPED " k.h5 && printf '2\\n0.5 0.6\\n1 0\\n\\n0.5 0.5\\n0 1\\n' > m.txt "
             "&& seq 1 64 | sed 's/.*/0/' > u64 && seq 1 100 | sed 's/.*/0/' > u100 && "
             "seq 1 100 | awk '{print $1/10}' > r100 && echo garbage > b.csv.partial", hint_dir, m,
             getenv("PWD") ? getenv("PWD") : ".");
    free(test_shell_ok(setup));
    const char *env_fail = "MDSD_TABLE_BLOCK_ROWS=7 MDSD_TABLE_FAIL=0:30";
    const struct {
        const char *cmd, *env, *args;
    } runs[] = {
        {"block", "", "--markov m.txt --sequences 2 --depth 2 -v rrs"},
        {"block", "", "--markov m.txt --sequences 2 --depth 2 -v rrs --live +3"},
        {"table", env_fail, "t.h5 -o r.csv --per-position p.csv --checkpoint-seconds 0"},
        {"table", "", "t.h5 -o r.csv --per-position p.csv"},
        {"table", "", "t.h5 -o s.csv --per-position p.csv"},
        {"table", "flock r.csv.lock", "t.h5 -o r.csv --per-position p.csv --resume"},
        {"table", env_fail, "t.h5 -o n.csv --checkpoint-seconds 0"},
        {"table", "", "t.h5 -o n.csv --per-position n.pp --resume"},
        {"table", "", "t.h5 -o x.csv --per-position x.pp --shard 1/2"},
        {"block", "", "k.h5 -o b.csv"},
        {"block", "", "k.h5 -o b.csv --resume"},
        {"block", "", "k.h5 --trials 5"},
        {"lp", "", "-p @u64 -q @u64 --logits -n 3 --scheme iid"},
        {"accept", "", "-p @r100 -q @u100 --logits -n 8 --verifier rrsw --exact"},
        {"dist", "", "-p 0.5,0.6"},
    };
    size_t hints = 0;
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        char cmd[2048], *out;
        snprintf(cmd, sizeof cmd, "cd %s && %s %s %s %s 2>&1 >/dev/null", hint_dir, runs[k].env, m,
                 runs[k].cmd, runs[k].args);
        test_run_shell(cmd, &out);
        hints += check_hints(runs[k].cmd, cmd, out);
        free(out);
    }
    cr_assert_geq(hints, 20, "only %zu options in the messages: the inputs no longer reach the hints",
                  hints);
    snprintf(setup, sizeof setup, "rm -rf %s", hint_dir);
    free(test_shell_ok(setup));
}
