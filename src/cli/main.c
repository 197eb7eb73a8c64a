/* mdsd - command-line front end. Each subcommand is a thin program over the
 * library, in its own cmd_*.c file. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "cli.h"

#ifndef MDSD_VERSION
#define MDSD_VERSION "unknown"
#endif

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"dist", cmd_dist, "show p and q after temperature, truncation and validation"},
    {"draft", cmd_draft, "enumerate or sample the joint law D of a draft scheme; Q(H)"},
    {"info", cmd_info, "summarise an HDF5 logit dump; --validate checks every row"},
    {"toy", cmd_toy, "write a logit dump of a toy family (zipf, spechub-toy, ...)"},
    {"table", cmd_table, "batch job over logit dumps: acceptance-rate tables (CSV, Markdown, LaTeX)"},
    {"merge", cmd_merge, "combine the shards of mdsd table/block --shard I/N into the CSV of one run"},
    {"report", cmd_report, "re-render a results CSV as Markdown/LaTeX tables, selecting rows and order"},
    {"plot", cmd_plot, "plot a results CSV with gnuplot (alpha vs T, vs n, per draft, gap)"},
    {"accept", cmd_accept, "a verifier's acceptance rate: exact, Monte Carlo, output check"},
    {"lp", cmd_lp, "optimal acceptance alpha* from the full or reduced LP (GLPK); LP export"},
    {"bound", cmd_bound, "optimal acceptance alpha*: sort-and-scan, brute force, LPs, k2, or all"},
    {"check", cmd_check, "theorem regression suite: the papers' results on toy families"},
    {"block", cmd_block, "block efficiency E[tau] of multi-token drafts (sequences, trees) on Markov toys"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: mdsd <command> [options]\n"
            "Multi-draft speculative decoding: optimal acceptance rates, verifiers, batch tables.\n"
            "Notation: p = target distribution, q = draft distribution, n = number of drafts.\n\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n'mdsd <command> --help' describes a command and its --json keys.\n"
            "  -h, --help     this help\n"
            "  -V, --version  print the version\n");
}

/* As coreutils' close_stdout: what a command printed must have reached its
 * standard output (a full disk, a closed pipe's EIO, /dev/full), else the
 * command fails (status 1 where it had succeeded) saying so; a standard
 * error that cannot be written fails it too, silently. */
static int close_streams(const char *cmd, int code)
{
    int e = 0;
    bool failed = ferror(stdout) != 0;
    if (fflush(stdout) != 0)
        failed = true, e = errno;
    if (fclose(stdout) != 0 && !failed)
        failed = true, e = errno;
    if (failed) {
        fprintf(stderr, "mdsd%s%s: write error on standard output%s%s\n", cmd ? " " : "", cmd ? cmd : "",
                e ? ": " : "", e ? strerror(e) : "");
        code = code ? code : CLI_EXIT_ERROR;
    }
    bool err_failed = ferror(stderr) != 0;
    if (fclose(stderr) != 0 || err_failed)
        code = code ? code : CLI_EXIT_ERROR;
    return code;
}

static int run(int argc, char **argv, const char **cmd)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(name, "-V") || !strcmp(name, "--version")) {
        printf("mdsd %s\n", MDSD_VERSION);
        return CLI_EXIT_OK;
    }
    cli_save_command_line(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(name, commands[i].name)) {
            *cmd = commands[i].name;
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "mdsd: unknown command '%s'\n\n", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* HDF5's own clean-up at exit crashes on a file whose close failed (a
     * full disk while a dump is written): the process's end reclaims it */
    H5dont_atexit();
    const char *cmd = NULL;
    int code = run(argc, argv, &cmd);
    return close_streams(cmd, code);
}
