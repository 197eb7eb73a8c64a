/* mdsd check: the theorem regression suite (check.h). Runs the registered
 * checks on random instances of the toy families and prints, per check, the
 * instances evaluated, the worst deviation and pass / fail / finding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
    mdsd_check_profile profile;
    bool count_set, trials_set, list, json, help;
    size_t count, threads;
    unsigned long long seed, trials;
    const char *family;
    const char *only[CHECK_MAX_ONLY];
    size_t n_only;
} check_opts;

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
    mdsd_err err;
    while ((opt = getopt_long(argc, argv, "n:s:f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_PROFILE:
            if (mdsd_check_profile_parse(optarg, &o->profile, &err)) {
                cli_usage_error("check", "--profile: %s", err.msg);
                return -1;
            }
            break;
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

static void families_text(const mdsd_check *c, char *buf, size_t size)
{
    size_t len = 0, k = 0;
    buf[0] = '\0';
    for (int f = 0; f < MDSD_TOY_FAMILIES && len < size; f++)
        if (mdsd_check_uses_family(c, f))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", k++ ? "," : "",
                                    mdsd_toy_family_name((mdsd_toy_family)f));
    if (k == MDSD_TOY_FAMILIES)
        snprintf(buf, size, "all");
}

/* Marks the checks selected by --only in sel[]; usage error on an unknown name. */
static int select_checks(const check_opts *o, bool *sel)
{
    size_t n = mdsd_check_count();
    for (size_t i = 0; i < n; i++)
        sel[i] = o->n_only == 0;
    for (size_t k = 0; k < o->n_only; k++) {
        char *copy = strdup(o->only[k]), *save = NULL;
        if (!copy)
            return -1;
        for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            mdsd_err err;
            const mdsd_check *c = mdsd_check_find(name, &err);
            if (!c) {
                cli_usage_error("check", "--only: %s", err.msg);
                free(copy);
                return -1;
            }
            for (size_t i = 0; i < n; i++)
                sel[i] |= mdsd_check_get(i) == c;
        }
        free(copy);
    }
    return 0;
}

static void print_list(const check_opts *o, int family, const bool *sel)
{
    size_t n = mdsd_check_count();
    char fam[128], bound[32];
    if (o->json) {
        mdsd_json j;
        mdsd_json_init(&j, stdout);
        mdsd_json_object_begin(&j);
        mdsd_json_key(&j, "checks");
        mdsd_json_array_begin(&j);
        for (size_t i = 0; i < n; i++) {
            const mdsd_check *c = mdsd_check_get(i);
            if (!sel[i] || !mdsd_check_uses_family(c, family))
                continue;
            families_text(c, fam, sizeof fam);
            mdsd_check_bound_text(c, bound, sizeof bound);
            mdsd_json_object_begin(&j);
            mdsd_json_kv_string(&j, "name", c->name);
            mdsd_json_kv_string(&j, "source", c->source);
            mdsd_json_kv_string(&j, "claim", c->claim);
            mdsd_json_kv_string(&j, "measure", c->measure);
            mdsd_json_kv_bool(&j, "must_hold", c->must_hold);
            mdsd_json_kv_number(&j, "tol", c->tol);
            mdsd_json_kv_string(&j, "bound", bound);
            mdsd_json_kv_string(&j, "families", fam);
            mdsd_json_kv_integer(&j, "V_min", (long long)c->V_min);
            mdsd_json_kv_integer(&j, "V_max", (long long)c->V_max);
            mdsd_json_object_end(&j);
        }
        mdsd_json_array_end(&j);
        mdsd_json_object_end(&j);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const mdsd_check *c = mdsd_check_get(i);
        if (!sel[i] || !mdsd_check_uses_family(c, family))
            continue;
        families_text(c, fam, sizeof fam);
        mdsd_check_bound_text(c, bound, sizeof bound);
        printf("%-22s %s, worst %s, families %s, V %zu..%zu\n", c->name,
               c->must_hold ? "must hold" : "finding", bound, fam, c->V_min, c->V_max);
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

static void print_row(const mdsd_check_result *r)
{
    char bound[32];
    mdsd_check_bound_text(r->check, bound, sizeof bound);
    printf("%-22s %9zu  %-9.3g %-9s %-8s %s\n", r->check->name, r->instances, r->worst, bound,
           mdsd_check_status_name(r->status), r->check->source);
    fflush(stdout);
}

static void print_detail(const mdsd_check_result *r)
{
    printf("%s (%s):\n", r->check->name, mdsd_check_status_name(r->status));
    if (r->error[0])
        printf("  error: %s\n", r->error);
    if (r->summary[0])
        printf("  %s\n", r->summary);
    if (r->has_worst) {
        printf("  worst: instance %zu (%s, V = %zu, n = %zu): %s\n    p = ", r->worst_draw,
               mdsd_toy_family_name(r->worst_family), r->worst_V, r->worst_n, r->worst_note);
        print_vector(r->worst_p, r->worst_V);
        printf("\n    q = ");
        print_vector(r->worst_q, r->worst_V);
        printf("%s\n", r->worst_nq > 1 ? "  (--json gives every drafter's row)" : "");
    }
}

static void json_result(mdsd_json *j, const mdsd_check_result *r)
{
    const mdsd_check *c = r->check;
    char bound[32];
    mdsd_check_bound_text(c, bound, sizeof bound);
    mdsd_json_object_begin(j);
    mdsd_json_kv_string(j, "name", c->name);
    mdsd_json_kv_string(j, "source", c->source);
    mdsd_json_kv_string(j, "claim", c->claim);
    mdsd_json_kv_string(j, "measure", c->measure);
    mdsd_json_kv_bool(j, "must_hold", c->must_hold);
    mdsd_json_kv_integer(j, "instances", (long long)r->instances);
    mdsd_json_kv_integer(j, "draws", (long long)r->draws);
    mdsd_json_kv_integer(j, "cases", (long long)r->cases);
    mdsd_json_kv_integer(j, "counterexamples", (long long)r->counterexamples);
    mdsd_json_kv_integer(j, "errors", (long long)r->errors);
    mdsd_json_kv_number(j, "worst", r->worst);
    mdsd_json_kv_number(j, "tol", c->tol);
    mdsd_json_kv_string(j, "bound", bound);
    mdsd_json_kv_string(j, "status", mdsd_check_status_name(r->status));
    mdsd_json_kv_string(j, "summary", r->summary);
    if (r->error[0])
        mdsd_json_kv_string(j, "error", r->error);
    if (r->has_worst && (r->status == MDSD_CHECK_FINDING || r->status == MDSD_CHECK_FAIL)) {
        mdsd_json_key(j, "detail");
        mdsd_json_object_begin(j);
        mdsd_json_kv_integer(j, "draw", (long long)r->worst_draw);
        mdsd_json_kv_string(j, "family", mdsd_toy_family_name(r->worst_family));
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

static void print_json(const check_opts *o, const mdsd_check_opts *co, const mdsd_check_result *res,
                       size_t n_res, size_t failed)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "profile", o->profile == MDSD_CHECK_THOROUGH ? "thorough" : "quick");
    mdsd_json_kv_integer(&j, "seed", (long long)co->seed);
    mdsd_json_kv_integer(&j, "count", (long long)co->count);
    mdsd_json_kv_integer(&j, "trials", (long long)co->trials);
    if (o->family)
        mdsd_json_kv_string(&j, "family", o->family);
    else {
        mdsd_json_key(&j, "family");
        mdsd_json_null(&j);
    }
    mdsd_json_kv_integer(&j, "failed", (long long)failed);
    mdsd_json_key(&j, "checks");
    mdsd_json_array_begin(&j);
    for (size_t i = 0; i < n_res; i++)
        json_result(&j, &res[i]);
    mdsd_json_array_end(&j);
    mdsd_json_object_end(&j);
}

static int run_checks(const check_opts *o, const mdsd_check_opts *co, const bool *sel)
{
    size_t n = mdsd_check_count(), n_res = 0, failed = 0, counts[4] = {0};
    mdsd_check_result *res = calloc(n, sizeof *res);
    if (!res) {
        fprintf(stderr, "mdsd check: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    mdsd_check_env env;
    mdsd_check_env_default(&env);
    if (!o->json) {
        printf("mdsd check: %zu instances per check, seed %llu, %llu Monte-Carlo trials, family %s\n",
               co->count, (unsigned long long)co->seed, (unsigned long long)co->trials,
               o->family ? o->family : "all");
        printf("%-22s %9s  %-9s %-9s %-8s %s\n", "check", "instances", "worst", "bound", "status",
               "source");
    }
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        if (!sel[i])
            continue;
        mdsd_err err;
        mdsd_err_clear(&err);
        if (mdsd_check_run(mdsd_check_get(i), &env, co, &res[n_res], &err)) {
            rc = cli_report("check", &err);
            mdsd_check_result_free(&res[n_res]);
            break;
        }
        const mdsd_check_result *r = &res[n_res++];
        counts[r->status]++;
        failed += r->status == MDSD_CHECK_FAIL;
        if (!o->json)
            print_row(r);
    }
    if (rc == CLI_EXIT_OK) {
        if (o->json) {
            print_json(o, co, res, n_res, failed);
        } else {
            for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n_res; i++)
                    if (res[i].status == (pass ? MDSD_CHECK_FINDING : MDSD_CHECK_FAIL)) {
                        putchar('\n');
                        print_detail(&res[i]);
                    }
            printf("\n%zu passed, %zu failed, %zu findings, %zu skipped\n", counts[MDSD_CHECK_PASS],
                   counts[MDSD_CHECK_FAIL], counts[MDSD_CHECK_FINDING], counts[MDSD_CHECK_SKIP]);
        }
        if (failed) {
            fprintf(stderr, "mdsd check: %zu must-hold check%s failed\n", failed, failed > 1 ? "s" : "");
            rc = CLI_EXIT_ERROR;
        }
    }
    for (size_t i = 0; i < n_res; i++)
        mdsd_check_result_free(&res[i]);
    free(res);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    check_opts o;
    memset(&o, 0, sizeof o);
    o.profile = MDSD_CHECK_QUICK;
    o.seed = 1;
    o.threads = 1;
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    mdsd_check_opts co;
    mdsd_check_opts_init(&co, o.profile);
    co.seed = o.seed;
    co.threads = (int)o.threads;
    if (o.count_set)
        co.count = o.count;
    if (o.trials_set)
        co.trials = o.trials;
    if (co.count == 0)
        return cli_usage_error("check", "--count must be at least 1");
    if (co.trials == 0 || co.trials > 100000000)
        return cli_usage_error("check", "--trials must be in [1, 10^8]");
    if (o.family) {
        mdsd_toy_family f;
        mdsd_err err;
        if (mdsd_toy_family_parse(o.family, &f, &err))
            return cli_usage_error("check", "--family: %s", err.msg);
        co.family = (int)f;
    }
    bool *sel = calloc(mdsd_check_count(), sizeof *sel);
    if (!sel) {
        fprintf(stderr, "mdsd check: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    if (select_checks(&o, sel)) {
        free(sel);
        return CLI_EXIT_USAGE;
    }
    int rc = CLI_EXIT_OK;
    if (o.list)
        print_list(&o, co.family, sel);
    else
        rc = run_checks(&o, &co, sel);
    free(sel);
    return rc;
}
