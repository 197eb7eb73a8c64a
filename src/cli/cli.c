#include "cli.h"
#include "parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_dist_opts_init(cli_dist_opts *o)
{
    memset(o, 0, sizeof *o);
    o->temperature = 1.0;
    o->top_p = 1.0;
}

/* The library's messages name options by their C names in backquotes
 * (mdsd/option.h): every library text the CLI prints goes through here once,
 * so that the user reads the flags (`max_paths` -> --max-paths). */
const char *cli_words(const char *msg, char *buf, size_t size)
{
    mdsd_option_words(msg, MDSD_SPELL_CLI, buf, size);
    return buf;
}

int cli_report(const char *cmd, const mdsd_err *err)
{
    char words[CLI_WORDS_MAX];
    fprintf(stderr, "mdsd %s: %s\n", cmd,
            cli_words(err->msg[0] ? err->msg : mdsd_strerror(err->code), words, sizeof words));
    return CLI_EXIT_ERROR;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char text[CLI_WORDS_MAX], words[CLI_WORDS_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mdsd %s: %s\nTry 'mdsd %s --help'.\n", cmd, cli_words(text, words, sizeof words), cmd);
    return CLI_EXIT_USAGE;
}

int cli_parse_max_paths(const char *arg, const char *cmd, double *out)
{
    if (cli_parse_double(arg, "--max-paths", cmd, out))
        return -1;
    if (!(*out >= 1.0)) {
        cli_usage_error(cmd, "--max-paths: %s is not a number >= 1", arg);
        return -1;
    }
    return 0;
}

int cli_parse_double(const char *arg, const char *opt, const char *cmd, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(arg, &end);
    if (end == arg || *end != '\0' || isnan(x)) {
        cli_usage_error(cmd, "%s: '%s' is not a number", opt, arg);
        return -1;
    }
    /* ERANGE: an overflow is refused by name; an underflow (a subnormal or
     * 0 for a tiny nonzero) is a number, and each option's range check
     * says what is wrong with it. */
    if (errno == ERANGE && isinf(x)) {
        cli_usage_error(cmd, "%s: '%s' is out of the range of a double", opt, arg);
        return -1;
    }
    if (errno == ERANGE && x == 0.0) {
        cli_usage_error(cmd, "%s: '%s' underflows to 0 (below 4.9e-324)", opt, arg);
        return -1;
    }
    *out = x;
    return 0;
}

int cli_parse_u64(const char *arg, const char *opt, const char *cmd, unsigned long long *out)
{
    unsigned long long x;
    if (mdsd_parse_uint(arg, ULLONG_MAX, &x, NULL) == 0) {
        *out = x;
        return 0;
    }
    /* every integer option the same way: plain decimal digits, no sign */
    const char *digits = arg + (arg[0] == '+' || arg[0] == '-');
    bool all_digits = *digits && strspn(digits, "0123456789") == strlen(digits);
    if (arg[0] == '-')
        cli_usage_error(cmd, "%s: '%s' must be a non-negative integer", opt, arg);
    else if (arg[0] == '+' && all_digits)
        cli_usage_error(cmd, "%s: '%s': write the integer without a sign ('%s')", opt, arg, digits);
    else if (all_digits)
        cli_usage_error(cmd, "%s: '%s' is out of range (at most %llu)", opt, arg, ULLONG_MAX);
    else
        cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, arg);
    return -1;
}

int cli_parse_shard(const char *arg, const char *cmd, size_t *shard, size_t *shards)
{
    if (mdsd_parse_shard(arg, shard, shards) == 0)
        return 0;
    cli_usage_error(cmd, "--shard: '%s' is not I/N with 1 <= I <= N (decimal integers)", arg);
    return -1;
}

int cli_parse_size(const char *arg, const char *opt, const char *cmd, size_t *out)
{
    unsigned long long x = 0;
    if (cli_parse_u64(arg, opt, cmd, &x))
        return -1;
    *out = (size_t)x;
    return 0;
}

int cli_scheme_option(cli_scheme_opts *o, int opt, const char *arg, const char *cmd)
{
    switch (opt) {
    case 'n':
        if (cli_parse_size(arg, "--drafts", cmd, &o->n))
            return -1;
        o->n_given = true;
        return 1;
    case 's': o->name = arg; return 1;
    case CLI_OPT_CUSTOM: o->custom = arg; return 1;
    default: return 0;
    }
}

int cli_dist_option(cli_dist_opts *o, int opt, const char *arg, const char *cmd)
{
    switch (opt) {
    case 'p': o->target_spec = arg; return 1;
    case 'q':
        if (o->n_draft_specs == CLI_MAX_DRAFTS) {
            cli_usage_error(cmd, "at most %d --draft options", CLI_MAX_DRAFTS);
            return -1;
        }
        o->draft_spec[o->n_draft_specs++] = arg;
        return 1;
    case CLI_OPT_LOGITS: o->logits = true; return 1;
    case 'T':
        if (cli_parse_double(arg, "--temperature", cmd, &o->temperature))
            return -1;
        if (!(o->temperature >= 0.0) || isinf(o->temperature)) {
            cli_usage_error(cmd, "--temperature: %s is not a finite value >= 0 (0 means argmax)", arg);
            return -1;
        }
        if (o->temperature > 0.0 && o->temperature < MDSD_MIN_TEMPERATURE) {
            cli_usage_error(cmd, "--temperature: %s is below %g, where 1/T overflows; give 0 "
                            "for argmax", arg, MDSD_MIN_TEMPERATURE);
            return -1;
        }
        return 1;
    case CLI_OPT_TOP_K: return cli_parse_size(arg, "--top-k", cmd, &o->top_k) ? -1 : 1;
    case CLI_OPT_TOP_P:
        if (cli_parse_double(arg, "--top-p", cmd, &o->top_p))
            return -1;
        if (!(o->top_p > 0.0 && o->top_p <= 1.0)) {
            cli_usage_error(cmd, "--top-p: %s is not in (0, 1]", arg);
            return -1;
        }
        return 1;
    case CLI_OPT_JSON: o->json = true; return 1;
    case 'h': o->help = true; return 1;
    default: return 0;
    }
}

/* Turns raw values into a distribution: softmax for logits, power 1/T for
 * probabilities, then truncation. */
static int to_distribution(const cli_dist_opts *o, double *values, size_t V, double *out,
                           const char *what, mdsd_err *err)
{
    int rc;
    if (o->logits) {
        rc = mdsd_softmax(values, V, o->temperature, out, what, err);
    } else {
        if ((rc = mdsd_probs_validate(values, V, what, err)))
            return rc;
        if (o->temperature == 1.0) {
            memcpy(out, values, V * sizeof *out);
        } else {
            for (size_t i = 0; i < V; i++)
                values[i] = values[i] > 0.0 ? log(values[i]) : -INFINITY;
            rc = mdsd_softmax(values, V, o->temperature, out, what, err);
        }
    }
    if (rc == MDSD_OK)
        rc = mdsd_truncate(out, V, o->top_k, o->top_p, err);
    return rc;
}

static int load_one(const cli_dist_opts *o, const char *spec, const char *what, size_t *V,
                    double **out, mdsd_err *err)
{
    double *values;
    size_t len;
    int rc = mdsd_parse_vector(spec, what, &values, &len, err);
    if (rc)
        return rc;
    if (*V && len != *V) {
        free(values);
        return mdsd_fail(err, MDSD_EINVAL,
                         "vocabulary mismatch: %s has %zu values, the distributions before it have %zu",
                         what, len, *V);
    }
    *V = len;
    if (!(*out = malloc(len * sizeof **out))) {
        free(values);
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", what);
    }
    rc = to_distribution(o, values, len, *out, what, err);
    free(values);
    return rc;
}

/* ---- the command's files (pathset.h) -------------------------------------- */

static mdsd_pathset command_paths;
static bool command_paths_ready;

mdsd_pathset *cli_paths(void)
{
    if (!command_paths_ready) {
        mdsd_pathset_init(&command_paths);
        mdsd_pathset_stdout(&command_paths);
        command_paths_ready = true;
    }
    return &command_paths;
}

int cli_check_paths(const char *input, const char *role, mdsd_err *err)
{
    if (input)
        mdsd_pathset_input(cli_paths(), input, "%s", role);
    return mdsd_pathset_check(cli_paths(), err);
}

int cli_load_pq(const cli_dist_opts *o, bool need_p, bool need_q, cli_pq *pq, mdsd_err *err)
{
    memset(pq, 0, sizeof *pq);
    /* vectors read from @FILE: checked against every output, stdout included */
    if (o->target_spec && o->target_spec[0] == '@')
        mdsd_pathset_input(cli_paths(), o->target_spec + 1, "the target's values (-p)");
    for (size_t j = 0; j < o->n_draft_specs; j++)
        if (o->draft_spec[j] && o->draft_spec[j][0] == '@')
            mdsd_pathset_input(cli_paths(), o->draft_spec[j] + 1, "a draft's values (-q)");
    int checked = cli_check_paths(NULL, NULL, err);
    if (checked)
        return checked;
    if (need_p && !o->target_spec)
        return mdsd_fail(err, MDSD_EINVAL, "missing -p/--target");
    if (need_q && o->n_draft_specs == 0)
        return mdsd_fail(err, MDSD_EINVAL, "missing -q/--draft");
    int rc;
    if (o->target_spec && (rc = load_one(o, o->target_spec, "target", &pq->V, &pq->p, err)))
        return rc;
    for (size_t j = 0; j < o->n_draft_specs; j++) {
        char what[32];
        snprintf(what, sizeof what, o->n_draft_specs > 1 ? "draft %zu" : "draft", j + 1);
        double *q = NULL;
        if ((rc = load_one(o, o->draft_spec[j], what, &pq->V, &q, err))) {
            free(q);
            return rc;
        }
        double *all = realloc(pq->q, (j + 1) * pq->V * sizeof *all);
        if (!all) {
            free(q);
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        }
        pq->q = all;
        memcpy(pq->q + j * pq->V, q, pq->V * sizeof *q);
        free(q);
        pq->n_q = j + 1;
    }
    return MDSD_OK;
}

void cli_pq_free(cli_pq *pq)
{
    free(pq->p);
    free(pq->q);
    memset(pq, 0, sizeof *pq);
}

int cli_build_scheme(const char *scheme, size_t n, const char *custom_path, const cli_pq *pq,
                     mdsd_joint *custom, mdsd_scheme *s, mdsd_err *err)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    int rc = mdsd_scheme_parse(scheme, &s->kind, err);
    if (rc)
        return rc;
    if (s->kind == MDSD_SCHEME_CUSTOM) {
        if (!custom_path)
            return mdsd_fail(err, MDSD_EINVAL, "the custom scheme needs --custom FILE");
        if ((rc = cli_check_paths(custom_path, "the custom scheme (--custom)", err)) ||
            (rc = mdsd_joint_read(custom_path, custom, err)))
            return rc;
        size_t V = pq->V;
        for (size_t t = 0; t < custom->count * custom->n && !pq->V; t++)
            if ((size_t)custom->tokens[t] + 1 > V)
                V = (size_t)custom->tokens[t] + 1;
        s->V = V;
        s->n = custom->n;
        if ((rc = mdsd_joint_validate(custom, V, err)) || (rc = mdsd_joint_sort(custom, err)))
            return rc;
        s->custom = custom;
        return MDSD_OK;
    }
    if (!pq->q)
        return mdsd_fail(err, MDSD_EINVAL, "missing -q/--draft");
    size_t want = s->kind == MDSD_SCHEME_MULTI ? n : 1;
    if (pq->n_q != want)
        return mdsd_fail(err, MDSD_EINVAL, "scheme %s needs %zu -q/--draft option(s), got %zu",
                         scheme, want, pq->n_q);
    s->V = pq->V;
    s->q = pq->q;
    return MDSD_OK;
}

int cli_run_on_scheme(const char *cmd, const cli_dist_opts *dist, const cli_scheme_opts *scheme,
                      bool need_p, cli_scheme_run run, const void *ctx)
{
    if (!scheme->name)
        return cli_usage_error(cmd, "missing --scheme");
    mdsd_err err;
    mdsd_err_clear(&err);
    cli_pq pq;
    mdsd_joint custom = {0};
    mdsd_scheme s;
    int rc = cli_load_pq(dist, need_p, false, &pq, &err);
    if (rc == MDSD_OK)
        rc = cli_build_scheme(scheme->name, scheme->n, scheme->custom, &pq, &custom, &s, &err);
    if (rc == MDSD_OK)
        rc = run(ctx, &pq, &s, &err);
    cli_pq_free(&pq);
    mdsd_joint_free(&custom);
    return rc ? cli_report(cmd, &err) : CLI_EXIT_OK;
}

/* ---- the command line as typed ------------------------------------------- */

static int saved_argc;
static char **saved_argv;

void cli_save_command_line(int argc, char **argv)
{
    free(saved_argv);
    saved_argv = malloc(((size_t)argc + 1) * sizeof *saved_argv);
    if (!saved_argv) { /* provenance then records the (permuted) arguments left */
        saved_argc = 0;
        return;
    }
    memcpy(saved_argv, argv, ((size_t)argc + 1) * sizeof *saved_argv);
    saved_argc = argc;
}

int cli_argc(void)
{
    return saved_argc;
}

char *const *cli_argv(void)
{
    static char *empty[1];
    return saved_argv ? saved_argv : empty;
}

int cli_parse_layout(const char *arg, const char *cmd, mdsd_report_layout *out)
{
    mdsd_err err;
    if (mdsd_report_layout_parse(arg, out, &err))
        return cli_usage_error(cmd, "--layout: %s", err.msg);
    return 0;
}
