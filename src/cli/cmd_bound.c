/* mdsd bound: the optimal acceptance rate alpha* (MATH.md section 2) by any
 * of its routes - full LP, reduced LP, brute force over subsets,
 * sort-and-scan / closed forms, Khisti's k = 2 formula, max-flow - or all of them, with
 * their times and their largest disagreement. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd bound -p P -q Q -n N --scheme S [--method M] [--custom FILE]\n"
    "                  [--show-subset] [--exact-arith] [--max-tuples M] [--max-vars M]\n"
    "                  [--json]\n"
    "The optimal acceptance rate alpha* = 1 + min over subsets H of [p(H) - Q(H)],\n"
    "Q(H) = P(all n drafts lie in H), for the draft scheme S (MATH.md section 2).\n\n"
    "  -n, --drafts N      number of drafts (default 2)\n"
    "  -s, --scheme S      iid, wor, greedy, hub, cps, multi (one -q per draft) or\n"
    "                      custom (tuples from --custom FILE, lines 'x1 .. xn prob')\n"
    "  -m, --method M      auto (default: sort where it applies, else brute for\n"
    "                      V <= 10, else maxflow),\n"
    "                      sort        sort-and-scan over the q/p order (iid, exact wor,\n"
    "                                  cps) or closed form (greedy: Hu Thm 7; hub)\n"
    "                      maxflow     the reduced LP as a max-flow: source -> set S\n"
    "                                  (Dbar(S)) -> token y in S -> sink (p(y)), any\n"
    "                                  scheme; certified by its minimum cut (1e-11)\n"
    "                      brute       all 2^V subsets, any scheme (V <= 24)\n"
    "                      lp-full     full OTM LP through GLPK (V |supp D| variables)\n"
    "                      lp-reduced  reduced LP, tuples aggregated by token set\n"
    "                      k2          Khisti Thm 3 (iid, n = 2) and Thm 2's condition\n"
    "                                  for alpha* = 1\n"
    "                      all         every method that applies, timed, and the\n"
    "                                  largest disagreement between them\n"
    "      --custom FILE   custom joint law of the drafts (-p gives V)\n"
    "      --show-subset   also print an optimal H (not from the LPs)\n"
    "      --exact-arith   LP methods: certify with GLPK's rational simplex\n"
    "      --max-tuples M  enumeration guard for D (brute, LPs, maxflow; default\n"
    "                      4194304)\n"
    "      --max-vars M    LP size guard (default 4000000)\n"
    "      --force         LP methods: solve an LP estimated to take more than a\n"
    "                      minute (refused by default, with the estimate)\n" CLI_DIST_HELP
    "\nJSON keys: alpha (alpha*, in [0, 1]), scheme, n, V, method (the method used;\n"
    "\"all\" with --method all), seconds, subset (--show-subset: token ids of H),\n"
    "alpha_one and k2_margin (k2: Thm 2's condition min_S p(S) - q(S)^2 >= 0, and\n"
    "that minimum), evaluations (sort for wor with n >= 3: exact Q(H) computed),\n"
    "lp_vars and exact_arith (LP methods), maxflow_sets and certificate_gap (maxflow:\n"
    "set nodes, and cut value - feasible flow value); with --method all: methods ([{method,\n"
    "alpha, seconds, subset?, ...}], [{method, skipped}] for a method refused by a\n"
    "size guard or [{method, failed}]), max_disagreement (largest |alpha_a - alpha_b|\n"
    "over the methods that ran) and failures (bool: a method failed, or two methods\n"
    "disagree by more than 1e-9, or 1e-7 where an LP is one of them; the exit status\n"
    "is then 1 and the message names the pair).\n";

enum { OPT_SHOW_SUBSET = CLI_OPT_COMMAND, OPT_EXACT, OPT_MAX_TUPLES, OPT_MAX_VARS, OPT_FORCE };

typedef struct {
    cli_dist_opts dist;
    cli_scheme_opts scheme;
    const char *method;
    bool show_subset;
    mdsd_bound_opts bound;
} bound_opts;

static int parse_args(int argc, char **argv, bound_opts *o)
{
    static const struct option longopts[] = {
        CLI_DIST_LONG_OPTIONS,
        CLI_SCHEME_LONG_OPTIONS,
        {"method", required_argument, NULL, 'm'},
        {"show-subset", no_argument, NULL, OPT_SHOW_SUBSET},
        {"exact-arith", no_argument, NULL, OPT_EXACT},
        {"max-tuples", required_argument, NULL, OPT_MAX_TUPLES},
        {"max-vars", required_argument, NULL, OPT_MAX_VARS},
        {"force", no_argument, NULL, OPT_FORCE},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, CLI_DIST_SHORT CLI_SCHEME_SHORT "m:", longopts, NULL)) != -1) {
        int r = cli_dist_option(&o->dist, opt, optarg, "bound");
        if (r == 0)
            r = cli_scheme_option(&o->scheme, opt, optarg, "bound");
        if (r < 0)
            return -1;
        if (r > 0)
            continue;
        switch (opt) {
        case 'm': o->method = optarg; break;
        case OPT_SHOW_SUBSET: o->show_subset = true; break;
        case OPT_EXACT: o->bound.exact_arith = true; break;
        case OPT_MAX_TUPLES:
            if (cli_parse_size(optarg, "--max-tuples", "bound", &o->bound.max_tuples)) return -1;
            break;
        case OPT_FORCE: o->bound.lp_max_seconds = INFINITY; break;
        case OPT_MAX_VARS:
            if (cli_parse_size(optarg, "--max-vars", "bound", &o->bound.max_vars)) return -1;
            break;
        default: cli_usage_error("bound", "unrecognised option"); return -1;
        }
    }
    if (optind < argc) {
        cli_usage_error("bound", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One method's outcome. */
typedef struct {
    mdsd_bound_method method;
    int rc;                 /* MDSD_OK, or why it was skipped */
    char why[512];
    double seconds;
    bool exact_arith;       /* LP methods: solved with --exact-arith */
    mdsd_bound_result res;
} outcome;

static int run_one(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                   const bound_opts *o, outcome *out, mdsd_err *err)
{
    memset(&out->res, 0, sizeof out->res);
    out->res.subset = o->show_subset ? calloc(s->V, 1) : NULL;
    if (o->show_subset && !out->res.subset)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    double t0 = now();
    out->rc = mdsd_bound_alpha(p, s, m, &o->bound, NULL, &out->res, err);
    out->seconds = now() - t0;
    out->method = out->rc == MDSD_OK ? out->res.method : m;
    out->exact_arith = o->bound.exact_arith;
    cli_words(out->rc ? err->msg : "", out->why, sizeof out->why);
    return out->rc;
}

static void json_subset(mdsd_json *j, const mdsd_bound_result *res, size_t V)
{
    if (!res->has_subset)
        return;
    mdsd_json_key(j, "subset");
    mdsd_json_array_begin(j);
    for (size_t x = 0; x < V; x++)
        if (res->subset[x])
            mdsd_json_integer(j, (long long)x);
    mdsd_json_array_end(j);
}

static void json_details(mdsd_json *j, const mdsd_bound_result *res, double seconds,
                         bool exact_arith, size_t V)
{
    mdsd_json_kv_number(j, "seconds", seconds);
    json_subset(j, res, V);
    if (res->alpha_one >= 0) {
        mdsd_json_kv_bool(j, "alpha_one", res->alpha_one == 1);
        mdsd_json_kv_number(j, "k2_margin", res->k2_margin);
    }
    if (res->evaluations)
        mdsd_json_kv_integer(j, "evaluations", (long long)res->evaluations);
    if (res->method == MDSD_BOUND_MAXFLOW) {
        mdsd_json_kv_integer(j, "maxflow_sets", (long long)res->maxflow_sets);
        mdsd_json_kv_number(j, "certificate_gap", res->maxflow_gap);
    }
    if (res->lp_vars) {
        mdsd_json_kv_integer(j, "lp_vars", (long long)res->lp_vars);
        mdsd_json_kv_bool(j, "exact_arith", exact_arith);
    }
}

static void text_details(const mdsd_bound_result *res, size_t V)
{
    if (res->alpha_one >= 0)
        printf("  Khisti Thm 2: alpha* = 1 %s (min_S p(S) - q(S)^2 = %.3g)\n",
               res->alpha_one ? "holds" : "does not hold", res->k2_margin);
    if (res->has_subset) {
        printf("  optimal H = {");
        int first = 1;
        for (size_t x = 0; x < V; x++)
            if (res->subset[x]) {
                printf(first ? "%zu" : ", %zu", x);
                first = 0;
            }
        printf("}\n");
    }
}

static void print_header(mdsd_json *j, double alpha, const mdsd_scheme *s, const char *method)
{
    mdsd_json_init(j, stdout);
    mdsd_json_object_begin(j);
    mdsd_json_kv_number(j, "alpha", alpha);
    mdsd_json_kv_string(j, "scheme", mdsd_scheme_name(s->kind));
    mdsd_json_kv_integer(j, "n", (long long)s->n);
    mdsd_json_kv_integer(j, "V", (long long)s->V);
    mdsd_json_kv_string(j, "method", method);
}

static void print_single(const bound_opts *o, const mdsd_scheme *s, const outcome *oc)
{
    if (o->dist.json) {
        mdsd_json j;
        print_header(&j, oc->res.alpha, s, mdsd_bound_method_name(oc->method));
        json_details(&j, &oc->res, oc->seconds, oc->exact_arith, s->V);
        mdsd_json_object_end(&j);
        return;
    }
    printf("alpha* = %.15g\n", oc->res.alpha);
    printf("  method %s, scheme %s, n = %zu, V = %zu, %.3g s\n", mdsd_bound_method_name(oc->method),
           mdsd_scheme_name(s->kind), s->n, s->V, oc->seconds);
    text_details(&oc->res, s->V);
}

/* A route refused by a size guard or not defined for the instance is
 * skipped; any other error is a failure: reported, and the exit status is 1,
 * but the other methods still run and are printed (mdsd_bound_all). */
static void json_all(const mdsd_scheme *s, const mdsd_bound_routes *r, bool exact_arith)
{
    mdsd_json j;
    print_header(&j, r->alpha, s, "all");
    mdsd_json_key(&j, "methods");
    mdsd_json_array_begin(&j);
    for (size_t k = 0; k < MDSD_BOUND_ROUTES; k++) {
        const mdsd_bound_route *oc = &r->route[k];
        if (!oc->applies)
            continue;
        mdsd_json_object_begin(&j);
        mdsd_json_kv_string(&j, "method", mdsd_bound_method_name(oc->method));
        if (oc->rc) {
            char words[CLI_WORDS_MAX];
            mdsd_json_kv_string(&j, mdsd_bound_route_skipped(oc->rc) ? "skipped" : "failed",
                                cli_words(oc->why, words, sizeof words));
        } else {
            mdsd_json_kv_number(&j, "alpha", oc->res.alpha);
            json_details(&j, &oc->res, oc->seconds, exact_arith, s->V);
        }
        mdsd_json_object_end(&j);
    }
    mdsd_json_array_end(&j);
    mdsd_json_kv_number(&j, "max_disagreement", r->max_disagreement);
    mdsd_json_kv_bool(&j, "failures", r->failures);
    mdsd_json_object_end(&j);
}

static void text_all(const mdsd_scheme *s, const mdsd_bound_routes *r)
{
    printf("alpha* = %.15g (scheme %s, n = %zu, V = %zu)\n", r->alpha, mdsd_scheme_name(s->kind),
           s->n, s->V);
    for (size_t k = 0; k < MDSD_BOUND_ROUTES; k++) {
        const mdsd_bound_route *oc = &r->route[k];
        if (!oc->applies)
            continue;
        if (oc->rc) {
            char words[CLI_WORDS_MAX];
            printf("  %-10s %s: %s\n", mdsd_bound_method_name(oc->method),
                   mdsd_bound_route_skipped(oc->rc) ? "skipped" : "FAILED",
                   cli_words(oc->why, words, sizeof words));
            continue;
        }
        printf("  %-10s %.15g  %.3g s\n", mdsd_bound_method_name(oc->method), oc->res.alpha,
               oc->seconds);
        text_details(&oc->res, s->V);
    }
    printf("largest disagreement: %.3g\n", r->max_disagreement);
}

/* Every method that applies to the scheme, timed; their largest disagreement
 * (the library's loop, mdsd_alpha_all's too). Printed whenever one ran, even
 * when the call fails (a failed route, or two that disagree). */
static int run_all(const double *p, const mdsd_scheme *s, const bound_opts *o, mdsd_err *err)
{
    double planted[MDSD_BOUND_METHOD_COUNT] = {0};
    for (int m = 0; m < MDSD_BOUND_METHOD_COUNT; m++)
        cli_bound_offset(mdsd_bound_method_name((mdsd_bound_method)m), &planted[m]);
    unsigned char *subsets = o->show_subset ? calloc(MDSD_BOUND_ROUTES * s->V + 1, 1) : NULL;
    if (o->show_subset && !subsets)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    mdsd_bound_routes r;
    int rc = mdsd_bound_all(p, s, &o->bound, subsets, planted, &r, err);
    if (r.ran > 0) {
        if (o->dist.json)
            json_all(s, &r, o->bound.exact_arith);
        else
            text_all(s, &r);
    }
    free(subsets);
    return rc;
}

static int run(const void *ctx, const cli_pq *pq, const mdsd_scheme *scheme, mdsd_err *err)
{
    const bound_opts *o = ctx;
    const mdsd_scheme s = *scheme;
    mdsd_bound_method m = MDSD_BOUND_AUTO;
    int rc = o->method ? mdsd_bound_method_parse(o->method, &m, err) : MDSD_OK;
    if (rc)
        return rc;
    if (pq->V != s.V)
        return mdsd_fail(err, MDSD_EINVAL, "the target has %zu tokens, the scheme %zu", pq->V,
                         s.V);
    if ((rc = mdsd_scheme_check(&s, err)))
        return rc;
    if (m == MDSD_BOUND_ALL)
        return run_all(pq->p, &s, o, err);
    outcome oc;
    rc = run_one(pq->p, &s, m, o, &oc, err);
    if (rc == MDSD_OK)
        print_single(o, &s, &oc);
    free(oc.res.subset);
    return rc;
}

int cmd_bound(int argc, char **argv)
{
    if (cli_sweep_requested("bound", argc, argv)) /* -n a:b, --scheme/--verifier all|LIST */
        return cli_sweep("bound", argc, argv);
    bound_opts o = {.scheme.n = 2};
    cli_dist_opts_init(&o.dist);
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.dist.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    return cli_run_on_scheme("bound", &o.dist, &o.scheme, true, run, &o);
}
