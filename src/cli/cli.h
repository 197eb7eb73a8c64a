/* cli.h - what every mdsd subcommand shares: the distribution options
 * (-p/--target, -q/--draft, --logits, -T, --top-k, --top-p), number parsing,
 * error printing and exit codes. */
#ifndef MDSD_CLI_H
#define MDSD_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include <mdsd/mdsd.h>

/* The library's internal headers the CLI still uses: the distributions,
 * schemes, verifiers and bounds of dist, draft, lp, bound and accept (src/core,
 * src/verify), and the CLI utilities of src/io (number and list parsing, JSON
 * printing, output files and the path check). Never src/job or src/block: the
 * jobs are the public API's (tests/test_cli_layers.c). */
#include "err.h"
#include "dist.h"
#include "parse.h"
#include "rng.h"
#include "json.h"
#include "stats.h"
#include "outfile.h"
#include "scheme.h"
#include "dump.h"
#include "verifier.h"
#include "montecarlo.h"
#include "lp.h"
#include "lp_export.h"
#include "bound.h"
#include "check.h"
#include "pathset.h"
#include "toy.h"

/* text (a library message, or the CLI's own naming options as `C_NAME`) with
 * each option's marker in the CLI's spelling (mdsd_option_words), into buf;
 * returns buf. CLI_WORDS_MAX: room for a message (mdsd_err.msg) with the flags
 * and context the CLI adds. */
#define CLI_WORDS_MAX 2048
const char *cli_words(const char *text, char *buf, size_t size);

enum { CLI_EXIT_OK = 0, CLI_EXIT_ERROR = 1, CLI_EXIT_USAGE = 2 };

/* Long-only option codes (above the char range). Commands add their own from
 * CLI_OPT_COMMAND on. */
enum {
    CLI_OPT_LOGITS = 256,
    CLI_OPT_TOP_K,
    CLI_OPT_TOP_P,
    CLI_OPT_JSON,
    CLI_OPT_HELP,
    CLI_OPT_CUSTOM,
    CLI_OPT_COMMAND = 300
};

#define CLI_MAX_DRAFTS 64

#define CLI_DIST_SHORT "p:q:T:h"
#define CLI_DIST_LONG_OPTIONS                                  \
    {"target", required_argument, NULL, 'p'},                  \
    {"draft", required_argument, NULL, 'q'},                   \
    {"logits", no_argument, NULL, CLI_OPT_LOGITS},             \
    {"temperature", required_argument, NULL, 'T'},            \
    {"top-k", required_argument, NULL, CLI_OPT_TOP_K},         \
    {"top-p", required_argument, NULL, CLI_OPT_TOP_P},         \
    {"json", no_argument, NULL, CLI_OPT_JSON},                 \
    {"help", no_argument, NULL, 'h'}

#define CLI_DIST_HELP                                                               \
    "  -p, --target P      target distribution p: comma-separated values or @FILE\n" \
    "                      (one value per line, '#' comments)\n"                    \
    "  -q, --draft Q       draft distribution q, same syntax; repeat it for the\n"   \
    "                      multi scheme (one q per draft)\n"                         \
    "      --logits        the values are logits: p = softmax(l/T), q likewise\n"     \
    "  -T, --temperature T temperature applied to both (default 1; 0 = argmax;\n"    \
    "                      on probabilities it means p^(1/T) renormalised)\n"        \
    "      --top-k K       keep the K most likely tokens of each (0 = all)\n"         \
    "      --top-p P       then the smallest most-likely set of mass >= P of the\n"   \
    "                      renormalised top-K, 0 < P <= 1 (1 = all)\n"               \
    "      --json          print one JSON object instead of text\n"                  \
    "  -h, --help          this help\n"

typedef struct {
    const char *target_spec;
    const char *draft_spec[CLI_MAX_DRAFTS];
    size_t n_draft_specs;
    bool logits;
    double temperature;
    size_t top_k;
    double top_p;
    bool json;
    bool help;
} cli_dist_opts;

/* The draft-scheme options shared by draft, lp, bound and accept:
 * -n/--drafts N, -s/--scheme S, --custom FILE. */
#define CLI_SCHEME_SHORT "n:s:"
#define CLI_SCHEME_LONG_OPTIONS                        \
    {"drafts", required_argument, NULL, 'n'},          \
    {"scheme", required_argument, NULL, 's'},          \
    {"custom", required_argument, NULL, CLI_OPT_CUSTOM}

typedef struct {
    size_t n;            /* number of drafts (the command's default until given) */
    bool n_given;
    const char *name;    /* scheme name, NULL if not given */
    const char *custom;  /* --custom FILE, or NULL */
} cli_scheme_opts;

/* Handles -n, -s and --custom: 1 handled, 0 not ours, -1 bad value (printed). */
int cli_scheme_option(cli_scheme_opts *o, int opt, const char *arg, const char *cmd);

/* Distributions after temperature, truncation and validation. */
typedef struct {
    size_t V;
    double *p;      /* [V] target, or NULL if not given */
    double *q;      /* [n_q * V] drafts, row j = j-th -q */
    size_t n_q;
} cli_pq;

void cli_dist_opts_init(cli_dist_opts *o);
/* Handles a shared option; returns 1 if handled, 0 if not one of ours,
 * -1 on a bad value (message printed). */
int cli_dist_option(cli_dist_opts *o, int opt, const char *arg, const char *cmd);

/* Loads what was given. need_p / need_q: the command requires them. */
int cli_load_pq(const cli_dist_opts *o, bool need_p, bool need_q, cli_pq *out, mdsd_err *err);
void cli_pq_free(cli_pq *pq);

/* Builds the draft scheme named `scheme` with n drafts over the loaded
 * distributions: custom reads its tuples from custom_path into *custom (V from
 * -q if given, else 1 + the largest token; n from the file), validated and
 * sorted; multi needs n -q options, the others exactly one. s->q points into
 * pq. The caller frees *custom with mdsd_joint_free. */
int cli_build_scheme(const char *scheme, size_t n, const char *custom_path, const cli_pq *pq,
                     mdsd_joint *custom, mdsd_scheme *s, mdsd_err *err);

/* What draft, lp and bound share once their options are parsed: refuse a
 * missing --scheme, load p and q (need_p: -p required), build the scheme and
 * call run(ctx, pq, s, err); then free everything. Returns the exit code,
 * reporting an error as "mdsd CMD: ...". */
typedef int (*cli_scheme_run)(const void *ctx, const cli_pq *pq, const mdsd_scheme *s,
                              mdsd_err *err);
int cli_run_on_scheme(const char *cmd, const cli_dist_opts *dist, const cli_scheme_opts *scheme,
                      bool need_p, cli_scheme_run run, const void *ctx);

int cli_parse_double(const char *arg, const char *opt, const char *cmd, double *out);
int cli_parse_size(const char *arg, const char *opt, const char *cmd, size_t *out);
int cli_parse_u64(const char *arg, const char *opt, const char *cmd, unsigned long long *out);
/* --max-paths M (rrsw's exact guard on draw-path visits): a number >= 1. */
int cli_parse_max_paths(const char *arg, const char *cmd, double *out);
/* --shard I/N (mdsd_parse_shard): 0, or -1 with the usage error printed. */
int cli_parse_shard(const char *arg, const char *cmd, size_t *shard, size_t *shards);

/* The files of the running command (pathset.h): it adds its outputs (its
 * standard output is one), cli_load_pq and cli_build_scheme the files they
 * read; cli_check_paths adds `input` (NULL: none; role names it) and makes
 * the output-safety check of the whole set, before any work. */
mdsd_pathset *cli_paths(void);
int cli_check_paths(const char *input, const char *role, mdsd_err *err);

/* Prints "mdsd CMD: message" to stderr; returns CLI_EXIT_ERROR. */
int cli_report(const char *cmd, const mdsd_err *err);
/* Prints a usage error and the hint to run --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The subcommands. */
int cmd_dist(int argc, char **argv);
int cmd_draft(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_toy(int argc, char **argv);
int cmd_table(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_accept(int argc, char **argv);
int cmd_lp(int argc, char **argv);
int cmd_bound(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* Sweeps for one (p, q) (cli_sweep.c): bound and accept hand over to
 * cli_sweep when -n a:b / a list, --scheme all|LIST or (accept) --verifier
 * all|LIST is given. */
bool cli_sweep_requested(const char *cmd, int argc, char **argv);
int cli_sweep(const char *cmd, int argc, char **argv);

/* Shared by table, merge and report (cli.c): --layout per-setting|combined|both. */
int cli_parse_layout(const char *arg, const char *cmd, mdsd_report_layout *out);

int cmd_block(int argc, char **argv);

/* The command line as typed (from the subcommand on), for provenance: getopt_long
 * permutes a command's argv (options first), so main() keeps a copy. */
/* Test hooks from the environment (cli_hooks.c): off when unset. */
void cli_table_hooks(mdsd_run_opts *run);
size_t cli_block_stop_after(void);
bool cli_bound_offset(const char *method, double *offset);

void cli_save_command_line(int argc, char **argv);
int cli_argc(void);
char *const *cli_argv(void);

/* ---- scale-out (mdsd/merge.h) ---- */

#ifdef MDSD_MPI
/* MPI ranks (cli_mpi.c): whether this process is one (launched by mpirun or
 * srun), and the run: part evaluates shard `shard` of `shards` into *text
 * (its checkpoint OUTPUT.shard-I-of-N.partial kept for the caller), merge
 * (rank 0) writes the outputs from every rank's text in rank order. A
 * failing rank prints "mdsd CMD: rank R of N: message"; then every rank
 * exits 1 and no output is written. Returns the exit code. */
bool cli_mpi_launched(void);
typedef int (*cli_mpi_part)(void *ctx, size_t shard, size_t shards, char **text, size_t *len,
                            mdsd_err *err);
typedef int (*cli_mpi_merge)(void *ctx, const mdsd_shard_text *in, size_t n, mdsd_err *err);
int cli_mpi_run(const char *cmd, int argc, char **argv, const char *output, cli_mpi_part part,
                cli_mpi_merge merge, void *ctx);
#endif

#endif
