/* mdsd check: the theorem regression suite, a parser and printer over the
 * public mdsd_check_run / mdsd_check_list (mdsd/check.h): prints, per check,
 * the instances evaluated, the worst deviation and pass / fail / finding. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include <mdsd/check.h>

static const char usage_text[] =
    "Usage: mdsd check [--profile quick|thorough] [--count N] [--seed S]\n"
    "                  [--family F] [--only NAME[,NAME..]] [--trials T]\n"
    "                  [--threads T] [--list] [--json]\n"
    "Runs the theorem regression suite: each check evaluates a published result\n"
    "(theorem, closed form, algorithm, empirical claim; `--list` gives each one's\n"
    "source and claim) on random instances of the toy families (mdsd toy --help)\n"
    "and reports the worst deviation. Must-hold checks pass or fail against their\n"
    "tolerance; published formulas and empirical claims under test are reported\n"
    "as findings, with their worst instance. Exit status 1 when a must-hold check\n"
    "fails (or a solver errs on an instance).\n\n"
    "      --profile P     quick (default: 25 instances per check, 3000 Monte-Carlo\n"
    "                      trials) or thorough (10^4 instances, 10^4 trials;\n"
    "                      minutes)\n"
    "  -n, --count N       instances per check (overrides the profile). A theorem\n"
    "                      with a hypothesis draws until N instances satisfy it\n"
    "                      (at most 20 N draws)\n"
    "  -s, --seed S        seed (default 1): instance i of check C uses the stream\n"
    "                      (S, C, i), so results do not depend on --only or order\n"
    "  -f, --family F      only instances of toy family F (bernoulli, uniform,\n"
    "                      spechub-toy, dirichlet, zipf, degenerate); checks that\n"
    "                      do not use F are skipped\n"
    "      --only LIST     run only these checks (comma-separated; repeatable)\n"
    "      --trials T      Monte-Carlo trials per verifier and instance\n"
    "      --threads T     OpenMP threads of the Monte-Carlo runs (default 1; the\n"
    "                      results do not depend on it)\n"
    "      --list          list the checks (name, kind, families, tolerance,\n"
    "                      source, claim) and exit; with --family, those using it\n"
    "      --json          print one JSON object instead of the table\n"
    "  -h, --help          this help\n\n"
    "Statuses: pass, fail, finding (a published formula or claim under test:\n"
    "never a failure), skip (the check does not use --family).\n"
    "worst: the largest deviation (or, for Monte-Carlo checks, the smallest\n"
    "p-value times the number of tests, Bonferroni) over all instances.\n\n"
    "JSON keys: profile, seed, count, trials, family (null = all), failed (number\n"
    "of must-hold checks that failed), checks: [{name, source, claim, measure,\n"
    "must_hold, instances, draws, cases, counterexamples, errors (instances on\n"
    "which a solver failed: the check fails), worst, tol, bound\n"
    "(\"<= tol\" or \">= tol\"), status, summary, error (if any), detail (findings\n"
    "and failures: the worst instance {draw, family, V, n, p, q (rows of the\n"
    "drafters; row 0 is q), note})}].\n"
    "With --list: checks: [{name, source, claim, measure, must_hold, tol, bound,\n"
    "families, V_min, V_max}].\n";

enum { OPT_PROFILE = CLI_OPT_COMMAND, OPT_ONLY, OPT_TRIALS, OPT_THREADS, OPT_LIST, OPT_JSON_CHECK };

#define CHECK_MAX_ONLY 64

typedef struct {
    const char *profile;
    bool count_set, trials_set, list, json, help;
    size_t count, threads;
    unsigned long long seed, trials;
    const char *family;
    const char *only[CHECK_MAX_ONLY];
    size_t n_only;
} check_opts;

/* The library names the option an error concerns as "FIELD: ..."; the CLI says
 * "--FIELD: ..." (a usage error) for the one option it asked the library about. */
static int option_error(const char *field, const mdsd_err *err)
{
    size_t len = strlen(field);
    const char *msg = err->msg;
    if (!strncmp(msg, field, len) && !strncmp(msg + len, ": ", 2))
        msg += len + 2;
    return cli_usage_error("check", "--%s: %s", field, msg);
}

/* Whether the library takes the profile, family or only of opts (listing checks
 * them and nothing else): 0, else the exit status (a usage error naming the
 * flag for a bad value). */
static int validate(const mdsd_check_opts *co, const char *field)
{
    mdsd_check_report *rep = NULL;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_check_list(co, &rep, &err);
    mdsd_check_report_free(rep);
    if (rc == MDSD_EINVAL)
        return option_error(field, &err);
    return rc ? cli_report("check", &err) : 0;
}

static int parse_args(int argc, char **argv, check_opts *o)
{
    static const struct option longopts[] = {
        {"profile", required_argument, NULL, OPT_PROFILE},
        {"count", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},
        {"family", required_argument, NULL, 'f'},
        {"only", required_argument, NULL, OPT_ONLY},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"list", no_argument, NULL, OPT_LIST},
        {"json", no_argument, NULL, OPT_JSON_CHECK},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "n:s:f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_PROFILE: {
            mdsd_check_opts co;
            mdsd_check_opts_init(&co);
            co.profile = optarg;
            if (validate(&co, "profile"))
                return -1;
            o->profile = optarg;
            break;
        }
        case 'n':
            if (cli_parse_size(optarg, "--count", "check", &o->count))
                return -1;
            o->count_set = true;
            break;
        case 's': if (cli_parse_u64(optarg, "--seed", "check", &o->seed)) return -1; break;
        case 'f': o->family = optarg; break;
        case OPT_ONLY:
            if (o->n_only == CHECK_MAX_ONLY) {
                cli_usage_error("check", "at most %d --only options", CHECK_MAX_ONLY);
                return -1;
            }
            o->only[o->n_only++] = optarg;
            break;
        case OPT_TRIALS:
            if (cli_parse_u64(optarg, "--trials", "check", &o->trials))
                return -1;
            o->trials_set = true;
            break;
        case OPT_THREADS: if (cli_parse_size(optarg, "--threads", "check", &o->threads)) return -1; break;
        case OPT_LIST: o->list = true; break;
        case OPT_JSON_CHECK: o->json = true; break;
        case 'h': o->help = true; break;
        default: cli_usage_error("check", "unrecognised option"); return -1;
        }
    }
    if (optind < argc) {
        cli_usage_error("check", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

static void print_list(const check_opts *o, const mdsd_check_report *rep)
{
    if (o->json) {
        mdsd_json j;
        mdsd_json_init(&j, stdout);
        mdsd_json_object_begin(&j);
        mdsd_json_key(&j, "checks");
        mdsd_json_array_begin(&j);
        for (size_t i = 0; i < rep->n_checks; i++) {
            const mdsd_check_outcome *c = rep->checks[i];
            mdsd_json_object_begin(&j);
            mdsd_json_kv_string(&j, "name", c->name);
            mdsd_json_kv_string(&j, "source", c->source);
            mdsd_json_kv_string(&j, "claim", c->claim);
            mdsd_json_kv_string(&j, "measure", c->measure);
            mdsd_json_kv_bool(&j, "must_hold", c->must_hold);
            mdsd_json_kv_number(&j, "tol", c->tol);
            mdsd_json_kv_string(&j, "bound", c->bound);
            mdsd_json_kv_string(&j, "families", c->families);
            mdsd_json_kv_integer(&j, "V_min", (long long)c->V_min);
            mdsd_json_kv_integer(&j, "V_max", (long long)c->V_max);
            mdsd_json_object_end(&j);
        }
        mdsd_json_array_end(&j);
        mdsd_json_object_end(&j);
        return;
    }
    for (size_t i = 0; i < rep->n_checks; i++) {
        const mdsd_check_outcome *c = rep->checks[i];
        printf("%-22s %s, worst %s, families %s, V %zu..%zu\n", c->name,
               c->must_hold ? "must hold" : "finding", c->bound, c->families, c->V_min, c->V_max);
        printf("    source: %s\n    claim:  %s\n    worst:  %s\n", c->source, c->claim, c->measure);
    }
}

static void print_vector(const double *x, size_t V)
{
    putchar('[');
    for (size_t i = 0; i < V; i++)
        printf(i ? ", %.6g" : "%.6g", x[i]);
    putchar(']');
}

/* on_check: the table's row of each check as it finishes. */
static void print_row(const mdsd_check_outcome *r, void *ctx)
{
    (void)ctx;
    printf("%-22s %9zu  %-9.3g %-9s %-8s %s\n", r->name, r->instances, r->worst, r->bound,
           r->status_name, r->source);
    fflush(stdout);
}

static void print_detail(const mdsd_check_outcome *r)
{
    printf("%s (%s):\n", r->name, r->status_name);
    if (r->error[0])
        printf("  error: %s\n", r->error);
    if (r->summary[0])
        printf("  %s\n", r->summary);
    if (r->has_worst) {
        printf("  worst: instance %zu (%s, V = %zu, n = %zu): %s\n    p = ", r->worst_draw,
               r->worst_family, r->worst_V, r->worst_n, r->worst_note);
        print_vector(r->worst_p, r->worst_V);
        printf("\n    q = ");
        print_vector(r->worst_q, r->worst_V);
        printf("%s\n", r->worst_nq > 1 ? "  (--json gives every drafter's row)" : "");
    }
}

static void json_result(mdsd_json *j, const mdsd_check_outcome *r)
{
    mdsd_json_object_begin(j);
    mdsd_json_kv_string(j, "name", r->name);
    mdsd_json_kv_string(j, "source", r->source);
    mdsd_json_kv_string(j, "claim", r->claim);
    mdsd_json_kv_string(j, "measure", r->measure);
    mdsd_json_kv_bool(j, "must_hold", r->must_hold);
    mdsd_json_kv_integer(j, "instances", (long long)r->instances);
    mdsd_json_kv_integer(j, "draws", (long long)r->draws);
    mdsd_json_kv_integer(j, "cases", (long long)r->cases);
    mdsd_json_kv_integer(j, "counterexamples", (long long)r->counterexamples);
    mdsd_json_kv_integer(j, "errors", (long long)r->errors);
    mdsd_json_kv_number(j, "worst", r->worst);
    mdsd_json_kv_number(j, "tol", r->tol);
    mdsd_json_kv_string(j, "bound", r->bound);
    mdsd_json_kv_string(j, "status", r->status_name);
    mdsd_json_kv_string(j, "summary", r->summary);
    if (r->error[0])
        mdsd_json_kv_string(j, "error", r->error);
    if (r->has_worst && (r->status == MDSD_CHECK_FINDING || r->status == MDSD_CHECK_FAIL)) {
        mdsd_json_key(j, "detail");
        mdsd_json_object_begin(j);
        mdsd_json_kv_integer(j, "draw", (long long)r->worst_draw);
        mdsd_json_kv_string(j, "family", r->worst_family);
        mdsd_json_kv_integer(j, "V", (long long)r->worst_V);
        mdsd_json_kv_integer(j, "n", (long long)r->worst_n);
        mdsd_json_key(j, "p");
        mdsd_json_number_array(j, r->worst_p, r->worst_V);
        mdsd_json_key(j, "q");
        mdsd_json_array_begin(j);
        for (size_t k = 0; k < r->worst_nq; k++)
            mdsd_json_number_array(j, r->worst_q + k * r->worst_V, r->worst_V);
        mdsd_json_array_end(j);
        mdsd_json_kv_string(j, "note", r->worst_note);
        mdsd_json_object_end(j);
    }
    mdsd_json_object_end(j);
}

static void print_json(const check_opts *o, const mdsd_check_report *rep)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "profile", rep->profile);
    mdsd_json_kv_integer(&j, "seed", (long long)rep->seed);
    mdsd_json_kv_integer(&j, "count", (long long)rep->count);
    mdsd_json_kv_integer(&j, "trials", (long long)rep->trials);
    if (o->family)
        mdsd_json_kv_string(&j, "family", o->family);
    else {
        mdsd_json_key(&j, "family");
        mdsd_json_null(&j);
    }
    mdsd_json_kv_integer(&j, "failed", (long long)rep->failed);
    mdsd_json_key(&j, "checks");
    mdsd_json_array_begin(&j);
    for (size_t i = 0; i < rep->n_checks; i++)
        json_result(&j, rep->checks[i]);
    mdsd_json_array_end(&j);
    mdsd_json_object_end(&j);
}

static int run_checks(const check_opts *o, mdsd_check_opts *co)
{
    if (!o->json) {
        /* the settings as used (the profile's count and trials unless given) */
        mdsd_check_report *set = NULL;
        mdsd_err err;
        if (mdsd_check_list(co, &set, &err))
            return cli_report("check", &err);
        printf("mdsd check: %zu instances per check, seed %llu, %llu Monte-Carlo trials, family %s\n",
               set->count, (unsigned long long)set->seed, (unsigned long long)set->trials,
               o->family ? o->family : "all");
        mdsd_check_report_free(set);
        printf("%-22s %9s  %-9s %-9s %-8s %s\n", "check", "instances", "worst", "bound", "status",
               "source");
        co->on_check = print_row;
    }
    mdsd_check_report *rep = NULL;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (mdsd_check_run(co, &rep, &err))
        return cli_report("check", &err);
    if (o->json) {
        print_json(o, rep);
    } else {
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < rep->n_checks; i++)
                if (rep->checks[i]->status == (pass ? MDSD_CHECK_FINDING : MDSD_CHECK_FAIL)) {
                    putchar('\n');
                    print_detail(rep->checks[i]);
                }
        printf("\n%zu passed, %zu failed, %zu findings, %zu skipped\n", rep->passed, rep->failed,
               rep->findings, rep->skipped);
    }
    int rc = CLI_EXIT_OK;
    if (rep->failed) {
        fprintf(stderr, "mdsd check: %zu must-hold check%s failed\n", rep->failed,
                rep->failed > 1 ? "s" : "");
        rc = CLI_EXIT_ERROR;
    }
    mdsd_check_report_free(rep);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    check_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.threads = 1;
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (o.count_set && o.count == 0)
        return cli_usage_error("check", "--count must be at least 1");
    if (o.trials_set && (o.trials == 0 || o.trials > 100000000))
        return cli_usage_error("check", "--trials must be in [1, 10^8]");
    if (o.threads > INT_MAX)
        return cli_usage_error("check", "--threads %zu is too many", o.threads);
    mdsd_check_opts co;
    mdsd_check_opts_init(&co);
    co.profile = o.profile;
    co.seed = o.seed;
    co.threads = (int)o.threads;
    co.count = o.count;
    co.trials = o.trials;
    co.family = o.family;
    int rc = o.family ? validate(&co, "family") : 0;
    if (rc)
        return rc;
    /* the --only lists as one "a,b,c" */
    char only[4096] = "";
    size_t len = 0;
    for (size_t k = 0; k < o.n_only; k++) {
        int w = snprintf(only + len, sizeof only - len, "%s%s", k ? "," : "", o.only[k]);
        if (w < 0 || (size_t)w >= sizeof only - len)
            return cli_usage_error("check", "--only: the names are too long");
        len += (size_t)w;
    }
    co.only = o.n_only ? only : NULL;
    if (o.n_only && (rc = validate(&co, "only")))
        return rc;
    if (!o.list)
        return run_checks(&o, &co);
    mdsd_check_report *rep = NULL;
    mdsd_err err;
    if (mdsd_check_list(&co, &rep, &err))
        return cli_report("check", &err);
    print_list(&o, rep);
    mdsd_check_report_free(rep);
    return CLI_EXIT_OK;
}
