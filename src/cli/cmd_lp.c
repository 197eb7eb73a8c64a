/* mdsd lp: the optimal acceptance rate alpha* from the full OTM LP or the
 * reduced LP (MATH.md section 2) through GLPK, and the LP exported for glpsol
 * (lp/otm_full.mod, lp/otm_reduced.mod) or other solvers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd lp -p P -q Q -n N --scheme S [--custom FILE] [--reduced]\n"
    "               [--exact-arith] [--write-data FILE] [--write FILE.lp|FILE.mps]\n"
    "               [--plan] [--max-vars M] [--max-tuples M] [--json]\n"
    "Solves the optimal-transport LP of MATH.md section 2 with GLPK and prints the\n"
    "optimal acceptance rate alpha*. The full LP has V * |supp D| variables pi(y, x)\n"
    "(a coupling of p and D); --reduced solves the same optimum with the tuples\n"
    "aggregated by their token set (sum over the sets S of |S| variables).\n\n"
    "  -n, --drafts N      number of drafts (default 2)\n"
    "  -s, --scheme S      iid, wor, greedy, hub, cps, multi (one -q per draft) or\n"
    "                      custom (tuples from --custom FILE, lines 'x1 .. xn prob')\n"
    "      --custom FILE   custom joint distribution of the drafts (-q not needed)\n"
    "      --reduced       solve the reduced LP instead of the full one\n"
    "      --exact-arith   after the simplex, certify with GLPK's rational simplex\n"
    "                      (glp_exact); slow, for toy instances\n"
    "      --write-data FILE  write the instance as MathProg data for\n"
    "                      'glpsol -m lp/otm_full.mod -d FILE' (otm_reduced.mod\n"
    "                      with --reduced)\n"
    "      --write FILE    export the LP as CPLEX LP (FILE.lp) or free MPS (FILE.mps;\n"
    "                      objective: minimise -alpha). In the full LP the draft row\n"
    "                      of the heaviest tuple is left out (implied by the others)\n"
    "      --plan          full LP: also print the optimal plan pi(y, x) (nonzeros)\n"
    "      --max-vars M    refuse LPs with more variables (default 4000000)\n"
    "      --force         solve an LP estimated to take more than a minute\n"
    "                      (refused by default, with the estimate)\n"
    "      --max-tuples M  enumeration guard for D (default 4194304)\n" CLI_DIST_HELP
    "\nJSON keys: alpha (alpha*, in [0, 1]), scheme, n, V, method (\"lp-full\" or\n"
    "\"lp-reduced\"), vars, rows (constraints given to GLPK), tuples (|supp D|),\n"
    "exact_arith (bool), written (list of files written), plan (with --plan:\n"
    "[{tokens, y, mass}], the nonzero pi(y, x)).\n";

enum { OPT_REDUCED = CLI_OPT_COMMAND, OPT_EXACT, OPT_WRITE_DATA, OPT_WRITE,
       OPT_PLAN, OPT_MAX_VARS, OPT_MAX_TUPLES, OPT_FORCE };

typedef struct {
    cli_dist_opts dist;
    cli_scheme_opts scheme;
    bool reduced, exact, plan;
    const char *write_data, *write;
    mdsd_lp_format write_format;
    size_t max_vars, max_tuples;
    bool force;
} lp_opts;

static int parse_args(int argc, char **argv, lp_opts *o)
{
    static const struct option longopts[] = {
        CLI_DIST_LONG_OPTIONS,
        CLI_SCHEME_LONG_OPTIONS,
        {"reduced", no_argument, NULL, OPT_REDUCED},
        {"exact-arith", no_argument, NULL, OPT_EXACT},
        {"write-data", required_argument, NULL, OPT_WRITE_DATA},
        {"write", required_argument, NULL, OPT_WRITE},
        {"plan", no_argument, NULL, OPT_PLAN},
        {"max-vars", required_argument, NULL, OPT_MAX_VARS},
        {"force", no_argument, NULL, OPT_FORCE},
        {"max-tuples", required_argument, NULL, OPT_MAX_TUPLES},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, CLI_DIST_SHORT CLI_SCHEME_SHORT "", longopts, NULL)) != -1) {
        int r = cli_dist_option(&o->dist, opt, optarg, "lp");
        if (r == 0)
            r = cli_scheme_option(&o->scheme, opt, optarg, "lp");
        if (r < 0)
            return -1;
        if (r > 0)
            continue;
        switch (opt) {
        case OPT_REDUCED: o->reduced = true; break;
        case OPT_EXACT: o->exact = true; break;
        case OPT_WRITE_DATA: o->write_data = optarg; break;
        case OPT_WRITE: o->write = optarg; break;
        case OPT_PLAN: o->plan = true; break;
        case OPT_MAX_VARS: if (cli_parse_size(optarg, "--max-vars", "lp", &o->max_vars)) return -1; break;
        case OPT_FORCE: o->force = true; break;
        case OPT_MAX_TUPLES:
            if (cli_parse_size(optarg, "--max-tuples", "lp", &o->max_tuples)) return -1;
            break;
        default: cli_usage_error("lp", "unrecognised option"); return -1;
        }
    }
    if (optind < argc) {
        cli_usage_error("lp", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (o->write && (mdsd_lp_format_parse(o->write, &o->write_format, NULL) ||
                     o->write_format == MDSD_LP_FORMAT_MATHPROG_DATA)) {
        cli_usage_error("lp", "--write: '%s' must end in .lp (CPLEX LP) or .mps (free MPS)", o->write);
        return -1;
    }
    if (o->plan && o->reduced) {
        cli_usage_error("lp", "--plan needs the full LP (drop --reduced)");
        return -1;
    }
    return 0;
}

static void print_plan_json(mdsd_json *j, const mdsd_joint *D, size_t V, const double *plan)
{
    mdsd_json_key(j, "plan");
    mdsd_json_array_begin(j);
    for (size_t t = 0; t < D->count; t++)
        for (size_t y = 0; y < V; y++) {
            if (plan[t * V + y] <= 0.0)
                continue;
            mdsd_json_object_begin(j);
            mdsd_json_key(j, "tokens");
            mdsd_json_integer_array(j, D->tokens + t * D->n, D->n);
            mdsd_json_kv_integer(j, "y", (long long)y);
            mdsd_json_kv_number(j, "mass", plan[t * V + y]);
            mdsd_json_object_end(j);
        }
    mdsd_json_array_end(j);
}

static void print_result(const lp_opts *o, const mdsd_scheme *s, const mdsd_joint *D,
                         const mdsd_lp_result *res)
{
    const char *method = o->reduced ? "lp-reduced" : "lp-full";
    if (o->dist.json) {
        mdsd_json j;
        mdsd_json_init(&j, stdout);
        mdsd_json_object_begin(&j);
        mdsd_json_kv_number(&j, "alpha", res->alpha);
        mdsd_json_kv_string(&j, "scheme", mdsd_scheme_name(s->kind));
        mdsd_json_kv_integer(&j, "n", (long long)s->n);
        mdsd_json_kv_integer(&j, "V", (long long)s->V);
        mdsd_json_kv_string(&j, "method", method);
        mdsd_json_kv_integer(&j, "vars", (long long)res->vars);
        mdsd_json_kv_integer(&j, "rows", (long long)res->rows);
        mdsd_json_kv_integer(&j, "tuples", (long long)D->count);
        mdsd_json_kv_bool(&j, "exact_arith", o->exact);
        mdsd_json_key(&j, "written");
        mdsd_json_array_begin(&j);
        if (o->write_data)
            mdsd_json_string(&j, o->write_data);
        if (o->write)
            mdsd_json_string(&j, o->write);
        mdsd_json_array_end(&j);
        if (res->plan)
            print_plan_json(&j, D, s->V, res->plan);
        mdsd_json_object_end(&j);
        return;
    }
    printf("alpha* = %.15g\n", res->alpha);
    printf("%s%s: %zu variables, %zu rows; scheme %s, n = %zu, V = %zu, %zu draft tuples\n",
           method, o->exact ? " (exact arithmetic)" : "", res->vars, res->rows,
           mdsd_scheme_name(s->kind), s->n, s->V, D->count);
    for (size_t t = 0; res->plan && t < D->count; t++)
        for (size_t y = 0; y < s->V; y++) {
            if (res->plan[t * s->V + y] <= 0.0)
                continue;
            printf("pi(y = %zu, x = (", y);
            for (size_t k = 0; k < D->n; k++)
                printf(k ? ",%d" : "%d", D->tokens[t * D->n + k]);
            printf(")) = %.12g\n", res->plan[t * s->V + y]);
        }
    if (o->write_data)
        printf("wrote %s (solve: glpsol -m lp/%s.mod -d %s)\n", o->write_data,
               o->reduced ? "otm_reduced" : "otm_full", o->write_data);
    if (o->write)
        printf("wrote %s\n", o->write);
}

static int run(const void *ctx, const cli_pq *pq, const mdsd_scheme *scheme, mdsd_err *err)
{
    const lp_opts *o = ctx;
    const mdsd_scheme s = *scheme;
    mdsd_joint D;
    int rc;
    if ((rc = mdsd_scheme_joint(&s, o->max_tuples, &D, err)))
        return rc;
    mdsd_lp_opts opts = {.exact_arith = o->exact, .max_vars = o->max_vars, .want_plan = o->plan,
                         .max_seconds = o->force ? INFINITY : 0.0};
    mdsd_lp_result res;
    rc = (o->reduced ? mdsd_lp_reduced : mdsd_lp_full)(pq->p, s.V, &D, &opts, &res, err);
    if (rc == MDSD_OK && o->write_data)
        rc = mdsd_lp_write(pq->p, s.V, &D, o->reduced, MDSD_LP_FORMAT_MATHPROG_DATA,
                           o->write_data, err);
    if (rc == MDSD_OK && o->write)
        rc = mdsd_lp_write(pq->p, s.V, &D, o->reduced, o->write_format, o->write, err);
    if (rc == MDSD_OK)
        print_result(o, &s, &D, &res);
    mdsd_lp_result_free(&res);
    mdsd_joint_free(&D);
    return rc;
}

int cmd_lp(int argc, char **argv)
{
    lp_opts o = {.scheme.n = 2, .max_tuples = MDSD_JOINT_MAX_TUPLES};
    cli_dist_opts_init(&o.dist);
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.dist.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    mdsd_pathset_output(cli_paths(), o.write_data, "--write-data");
    mdsd_pathset_output(cli_paths(), o.write, "--write");
    return cli_run_on_scheme("lp", &o.dist, &o.scheme, true, run, &o);
}
