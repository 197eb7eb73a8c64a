/* mdsd accept: a verifier's acceptance rate at one position (p, q, n):
 * exactly (MATH.md section 3) and/or by Monte Carlo, with per-draft rates and
 * an optional check that the verifier's output follows p. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd accept -p P -q Q -n N --verifier V [--scheme S] [--exact]\n"
    "                   [--trials T --seed S] [--check-output] [--json]\n"
    "Acceptance rate alpha = P(output is one of the drafts) of a verifier, and the\n"
    "per-draft rates P(the j-th draft is the one accepted).\n\n"
    "  -v, --verifier V    sd (n = 1), rrs (iid; multi with one -q per draft), rrsw\n"
    "                      (wor), kseq (iid), spechub (hub, n = 2), greedy, is\n"
    "                      (iid or multi; n > 2 paired up successively), otm\n"
    "                      (any scheme, toy V), ot (alpha* at any V: iid, greedy,\n"
    "                      hub; MATH.md 3.10). Audit variants, for checking\n"
    "                      claims (papers/FINDINGS.md), not for use: is-face (is\n"
    "                      with stage 1 on its optimal face; n = 3 iid) and the\n"
    "                      INVALID peer behaviours rrs-skipdup (n >= 3),\n"
    "                      spechub-hubaccept, rrsw-f32 (output law not p)\n"
    "  -n, --drafts N      number of drafts (default 2; sd uses 1)\n"
    "  -s, --scheme S      draft scheme (default: the verifier's own; rrs with N\n"
    "                      -q options: multi); otm accepts any scheme\n"
    "      --custom FILE   custom joint for --scheme custom (lines 'x1 .. xn prob')\n"
    "      --exact         the exact rates (closed forms; rrsw: a certified\n"
    "                      interval of width <= 1e-9 whose midpoint is printed,\n"
    "                      refused past --max-paths draw-path visits). The\n"
    "                      default when --trials is not given\n"
    "      --trials T      Monte Carlo: T trials of (draw drafts, verify); the\n"
    "                      random numbers come from GSL's " MDSD_RNG_NAME " generator,\n"
    "                      seeded from (seed, position 0, verifier): the result\n"
    "                      does not depend on --threads\n"
    "      --seed S        seed of the trials (default 1)\n"
    "      --threads K     OpenMP threads for the trials (default: all)\n"
    "      --check-output  chi-square test of the output histogram against p\n"
    "                      (needs --trials; cells of expected count < 5 pooled)\n"
    "      --max-paths M   rrsw --exact guard on draw-path visits (default 1e7)\n"
    "      --is-top S      is: free LP weights only among the first S tokens by\n"
    "                      p - q^2 (Khisti's truncated LP; 0 = all: the full LP,\n"
    "                      which large V refuses)\n"
    CLI_DIST_HELP
    "\nJSON keys: verifier, scheme, n, V, exact (bool: alpha and per_draft are the\n"
    "exact values), alpha, per_draft ([n]), with the exact rates alpha_low and\n"
    "alpha_high (an interval proven to hold alpha: rrsw's certified one, width\n"
    "<= 1e-9; equal to alpha for the closed forms), trials (0 without --trials), seed,\n"
    "generator, stderr (Monte-Carlo standard error; 0 without trials), ci95\n"
    "([low, high], Wilson), and with both --exact and --trials: mc_alpha,\n"
    "mc_per_draft, z ((mc_alpha - alpha) / stderr); with --check-output:\n"
    "output_check {statistic, dof, p_value}.\n";

enum {
    OPT_EXACT = CLI_OPT_COMMAND,
    OPT_TRIALS,
    OPT_SEED,
    OPT_THREADS,
    OPT_CHECK,
    OPT_MAX_PATHS,
    OPT_IS_TOP
};

typedef struct {
    cli_dist_opts dist;
    const char *verifier;
    cli_scheme_opts scheme;
    bool exact, check;
    unsigned long long trials, seed;
    size_t threads;
    mdsd_verifier_opts vopts;
} accept_opts;

static int parse_args(int argc, char **argv, accept_opts *o)
{
    static const struct option longopts[] = {
        CLI_DIST_LONG_OPTIONS,
        {"verifier", required_argument, NULL, 'v'},
        CLI_SCHEME_LONG_OPTIONS,
        {"exact", no_argument, NULL, OPT_EXACT},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"check-output", no_argument, NULL, OPT_CHECK},
        {"max-paths", required_argument, NULL, OPT_MAX_PATHS},
        {"is-top", required_argument, NULL, OPT_IS_TOP},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, CLI_DIST_SHORT CLI_SCHEME_SHORT "v:", longopts, NULL)) != -1) {
        int r = cli_dist_option(&o->dist, opt, optarg, "accept");
        if (r == 0)
            r = cli_scheme_option(&o->scheme, opt, optarg, "accept");
        if (r < 0)
            return -1;
        if (r > 0)
            continue;
        switch (opt) {
        case 'v': o->verifier = optarg; break;
        case OPT_EXACT: o->exact = true; break;
        case OPT_TRIALS: if (cli_parse_u64(optarg, "--trials", "accept", &o->trials)) return -1; break;
        case OPT_SEED: if (cli_parse_u64(optarg, "--seed", "accept", &o->seed)) return -1; break;
        case OPT_THREADS: if (cli_parse_size(optarg, "--threads", "accept", &o->threads)) return -1; break;
        case OPT_CHECK: o->check = true; break;
        case OPT_MAX_PATHS:
            if (cli_parse_max_paths(optarg, "accept", &o->vopts.max_paths)) return -1;
            break;
        case OPT_IS_TOP: if (cli_parse_size(optarg, "--is-top", "accept", &o->vopts.is_top)) return -1; break;
        default: cli_usage_error("accept", "unrecognised option"); return -1;
        }
    }
    if (optind < argc) {
        cli_usage_error("accept", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

typedef struct {
    bool have_exact, have_mc;
    double alpha, *per_draft;  /* exact */
    double alpha_lo, alpha_hi; /* an interval proven to hold alpha (rrsw: certified) */
    mdsd_mc_result mc;
    mdsd_gof gof;
} accept_result;

static void json_counts_as_rates(mdsd_json *j, const uint64_t *counts, size_t n, uint64_t trials)
{
    mdsd_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        mdsd_json_number(j, (double)counts[i] / (double)trials);
    mdsd_json_array_end(j);
}

static void print_json(const accept_opts *o, mdsd_verifier_kind kind, const mdsd_scheme *s,
                       const accept_result *r)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "verifier", mdsd_verifier_name(kind));
    mdsd_json_kv_string(&j, "scheme", mdsd_scheme_name(s->kind));
    mdsd_json_kv_integer(&j, "n", (long long)s->n);
    mdsd_json_kv_integer(&j, "V", (long long)s->V);
    mdsd_json_kv_bool(&j, "exact", r->have_exact);
    mdsd_json_kv_number(&j, "alpha", r->have_exact ? r->alpha : r->mc.alpha);
    mdsd_json_key(&j, "per_draft");
    if (r->have_exact)
        mdsd_json_number_array(&j, r->per_draft, s->n);
    else
        json_counts_as_rates(&j, r->mc.per_draft, s->n, r->mc.trials);
    if (r->have_exact) {
        mdsd_json_kv_number(&j, "alpha_low", r->alpha_lo);
        mdsd_json_kv_number(&j, "alpha_high", r->alpha_hi);
    }
    mdsd_json_kv_integer(&j, "trials", (long long)(r->have_mc ? o->trials : 0));
    mdsd_json_kv_integer(&j, "seed", (long long)o->seed);
    mdsd_json_kv_string(&j, "generator", MDSD_RNG_NAME);
    mdsd_json_kv_number(&j, "stderr", r->have_mc ? r->mc.se : 0.0);
    if (r->have_mc) {
        double ci[2] = {r->mc.ci_low, r->mc.ci_high};
        mdsd_json_key(&j, "ci95");
        mdsd_json_number_array(&j, ci, 2);
    }
    if (r->have_mc && r->have_exact) {
        mdsd_json_kv_number(&j, "mc_alpha", r->mc.alpha);
        mdsd_json_key(&j, "mc_per_draft");
        json_counts_as_rates(&j, r->mc.per_draft, s->n, r->mc.trials);
        mdsd_json_kv_number(&j, "z", r->mc.se > 0 ? (r->mc.alpha - r->alpha) / r->mc.se : 0.0);
    }
    if (o->check) {
        mdsd_json_key(&j, "output_check");
        mdsd_json_object_begin(&j);
        mdsd_json_kv_number(&j, "statistic", r->gof.statistic);
        mdsd_json_kv_integer(&j, "dof", (long long)r->gof.dof);
        mdsd_json_kv_number(&j, "p_value", r->gof.p_value);
        mdsd_json_object_end(&j);
    }
    mdsd_json_object_end(&j);
}

static void print_text(const accept_opts *o, mdsd_verifier_kind kind, const mdsd_scheme *s,
                       const accept_result *r)
{
    printf("verifier %s on scheme %s, n = %zu, V = %zu\n", mdsd_verifier_name(kind),
           mdsd_scheme_name(s->kind), s->n, s->V);
    if (r->have_exact) {
        printf("exact:       alpha = %.12g   per draft:", r->alpha);
        for (size_t j = 0; j < s->n; j++)
            printf(" %.9g", r->per_draft[j]);
        printf("\n");
        if (r->alpha_lo < r->alpha_hi)
            printf("             certified: alpha in [%.15g, %.15g]\n", r->alpha_lo, r->alpha_hi);
    }
    if (r->have_mc) {
        printf("monte carlo: alpha = %.6f +- %.2g (stderr), 95%% CI [%.6f, %.6f]   per draft:",
               r->mc.alpha, r->mc.se, r->mc.ci_low, r->mc.ci_high);
        for (size_t j = 0; j < s->n; j++)
            printf(" %.6f", (double)r->mc.per_draft[j] / (double)r->mc.trials);
        printf("\n             %llu trials, seed %llu, GSL %s\n", o->trials, o->seed,
               MDSD_RNG_NAME);
        if (r->have_exact && r->mc.se > 0)
            printf("             z = (mc - exact) / stderr = %.3f\n",
                   (r->mc.alpha - r->alpha) / r->mc.se);
    }
    if (o->check)
        printf("output vs p: chi-square %.6g on %zu dof, p-value %.4g\n", r->gof.statistic,
               r->gof.dof, r->gof.p_value);
}

static int simulate(const accept_opts *o, mdsd_verifier_kind kind, const double *p,
                    const mdsd_scheme *s, accept_result *r, mdsd_err *err)
{
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc(kind, p, s, &o->vopts, &e);
    if (!v)
        return mdsd_fail_from(err, &e, "accept: verifier");
    mdsd_mc_opts mo;
    mdsd_mc_opts_init(&mo);
    mo.trials = o->trials;
    mo.seed = o->seed;
    mo.threads = (int)o->threads;
    mo.histogram = o->check;
    int rc = mdsd_mc_run(v, &mo, &r->mc, err);
    if (rc == MDSD_OK) {
        r->have_mc = true;
        if (o->check)
            r->gof = mdsd_mc_check_output(&r->mc, p);
    }
    mdsd_verifier_free(v);
    return rc;
}

/* The scheme named, or the verifier's own (rrs with several -q: multi). */
static const char *scheme_name(const accept_opts *o, mdsd_verifier_kind kind, const cli_pq *pq)
{
    if (o->scheme.name)
        return o->scheme.name;
    if (kind == MDSD_VERIFIER_RRS && pq->n_q > 1)
        return "multi";
    return mdsd_scheme_name(mdsd_verifier_scheme(kind));
}

static int run(const accept_opts *o, mdsd_err *err)
{
    mdsd_verifier_kind kind;
    int rc = mdsd_verifier_parse(o->verifier, &kind, err);
    if (rc)
        return rc;
    cli_pq pq;
    mdsd_joint custom = {0};
    accept_result r = {0};
    mdsd_scheme s;
    size_t n = o->scheme.n_given ? o->scheme.n : kind == MDSD_VERIFIER_SD ? 1 : 2;
    if ((rc = cli_load_pq(&o->dist, true, false, &pq, err)) == MDSD_OK)
        rc = cli_build_scheme(scheme_name(o, kind, &pq), n, o->scheme.custom, &pq, &custom, &s, err);
    if (rc == MDSD_OK && (o->exact || o->trials == 0)) {
        r.per_draft = calloc(s.n, sizeof *r.per_draft);
        rc = r.per_draft ? mdsd_verifier_exact_bounds(kind, pq.p, &s, &o->vopts, &r.alpha, r.per_draft,
                                                      &r.alpha_lo, &r.alpha_hi, err)
                         : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        r.have_exact = rc == MDSD_OK;
    }
    if (rc == MDSD_OK && o->trials > 0)
        rc = simulate(o, kind, pq.p, &s, &r, err);
    if (rc == MDSD_OK)
        (o->dist.json ? print_json : print_text)(o, kind, &s, &r);
    free(r.per_draft);
    mdsd_mc_result_free(&r.mc);
    mdsd_joint_free(&custom);
    cli_pq_free(&pq);
    return rc;
}

int cmd_accept(int argc, char **argv)
{
    if (cli_sweep_requested("accept", argc, argv)) /* -n a:b, --scheme/--verifier all|LIST */
        return cli_sweep("accept", argc, argv);
    accept_opts o = {.seed = 1};
    cli_dist_opts_init(&o.dist);
    mdsd_verifier_opts_init(&o.vopts);
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.dist.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (!o.verifier)
        return cli_usage_error("accept", "missing --verifier");
    if (o.check && o.trials == 0)
        return cli_usage_error("accept", "--check-output needs --trials T");
    mdsd_err err;
    mdsd_err_clear(&err);
    return run(&o, &err) ? cli_report("accept", &err) : CLI_EXIT_OK;
}
