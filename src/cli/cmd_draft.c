/* mdsd draft: the joint law D of a draft scheme, by enumeration, and
 * optionally a sample checked against it; Q(H) for a given subset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd draft -q Q -n N --scheme S [--custom FILE] [--subset LIST]\n"
    "                  [--sample K --seed S] [--max-tuples M] [--json]\n"
    "Enumerates the joint distribution D of the n draft tokens (MATH.md section 1)\n"
    "and, with --sample, draws K tuples from the scheme's sampler and compares the\n"
    "frequencies with D (Pearson chi-square, cells with expected count < 5 pooled).\n\n"
    "  -n, --drafts N      number of drafts (default 2)\n"
    "  -s, --scheme S      iid, wor, greedy, hub, cps, multi (one -q per draft) or\n"
    "                      custom (tuples from --custom FILE, lines 'x1 .. xn prob')\n"
    "      --custom FILE   custom joint distribution; -q then only gives V (optional:\n"
    "                      V is 1 + the largest token otherwise)\n"
    "      --subset LIST   token ids of a subset H: print Q(H) = P(all drafts in H)\n"
    "      --sample K      draw K tuples (GSL " MDSD_RNG_NAME ")\n"
    "      --seed S        seed of the sample (default 1)\n"
    "      --max-tuples M  enumeration guard (default 1000000)\n" CLI_DIST_HELP
    "\nJSON keys: scheme, n, V, tuples ([{tokens, prob, count?}]), total (sum of D),\n"
    "Q (with --subset), sample ({trials, seed, statistic, dof, p_value}).\n";

enum { OPT_SUBSET = CLI_OPT_COMMAND, OPT_SAMPLE, OPT_SEED, OPT_MAX_TUPLES };

typedef struct {
    cli_dist_opts dist;
    cli_scheme_opts scheme;
    const char *subset;
    unsigned long long sample, seed;
    size_t max_tuples;
} draft_opts;

static int parse_args(int argc, char **argv, draft_opts *o)
{
    static const struct option longopts[] = {
        CLI_DIST_LONG_OPTIONS,
        CLI_SCHEME_LONG_OPTIONS,
        {"subset", required_argument, NULL, OPT_SUBSET},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"seed", required_argument, NULL, OPT_SEED},
        {"max-tuples", required_argument, NULL, OPT_MAX_TUPLES},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, CLI_DIST_SHORT CLI_SCHEME_SHORT "", longopts, NULL)) != -1) {
        int r = cli_dist_option(&o->dist, opt, optarg, "draft");
        if (r == 0)
            r = cli_scheme_option(&o->scheme, opt, optarg, "draft");
        if (r < 0)
            return -1;
        if (r > 0)
            continue;
        switch (opt) {
        case OPT_SUBSET: o->subset = optarg; break;
        case OPT_SAMPLE: if (cli_parse_u64(optarg, "--sample", "draft", &o->sample)) return -1; break;
        case OPT_SEED: if (cli_parse_u64(optarg, "--seed", "draft", &o->seed)) return -1; break;
        case OPT_MAX_TUPLES:
            if (cli_parse_size(optarg, "--max-tuples", "draft", &o->max_tuples)) return -1;
            break;
        default: cli_usage_error("draft", "unrecognised option"); return -1;
        }
    }
    if (optind < argc) {
        cli_usage_error("draft", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

/* Marks the subset's tokens; errors name the bad entry. */
static int load_subset(const char *spec, size_t V, unsigned char *in_H, mdsd_err *err)
{
    double *ids;
    size_t len;
    int rc = mdsd_parse_vector(spec, "--subset", &ids, &len, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < len && rc == MDSD_OK; i++) {
        if (ids[i] < 0 || ids[i] >= (double)V || ids[i] != (double)(size_t)ids[i])
            rc = mdsd_fail(err, MDSD_EINVAL, "--subset: entry %zu (%g) is not a token id in [0, %zu)",
                           i, ids[i], V);
        else
            in_H[(size_t)ids[i]] = 1;
    }
    free(ids);
    return rc;
}

/* Draws the sample and tallies it against the sorted joint. */
static int sample_counts(const mdsd_scheme *s, const mdsd_joint *D, unsigned long long trials,
                         unsigned long long seed, uint64_t *counts, mdsd_err *err)
{
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_sampler *sm = mdsd_sampler_alloc(s, &e);
    gsl_rng *rng = mdsd_rng_alloc(mdsd_seed_mix(seed, 0, mdsd_seed_name("draft")));
    int rc = !sm    ? mdsd_fail_from(err, &e, "draft: sampler")
             : !rng ? mdsd_fail(err, MDSD_ENOMEM, "draft: out of memory for the random stream")
                    : MDSD_OK;
    int tuple[64];
    for (unsigned long long t = 0; t < trials && rc == MDSD_OK; t++) {
        mdsd_sampler_draw(sm, rng, tuple);
        long k = mdsd_joint_find(D, tuple);
        if (k < 0)
            rc = mdsd_fail(err, MDSD_ESOLVER, "sampler drew a tuple outside the support of D");
        else
            counts[k]++;
    }
    mdsd_sampler_free(sm);
    gsl_rng_free(rng);
    return rc;
}

static void print_result(const draft_opts *o, const mdsd_scheme *s, const mdsd_joint *D,
                         const uint64_t *counts, const mdsd_gof *gof, const double *Q)
{
    if (o->dist.json) {
        mdsd_json j;
        mdsd_json_init(&j, stdout);
        mdsd_json_object_begin(&j);
        mdsd_json_kv_string(&j, "scheme", mdsd_scheme_name(s->kind));
        mdsd_json_kv_integer(&j, "n", (long long)s->n);
        mdsd_json_kv_integer(&j, "V", (long long)s->V);
        mdsd_json_key(&j, "tuples");
        mdsd_json_array_begin(&j);
        for (size_t t = 0; t < D->count; t++) {
            mdsd_json_object_begin(&j);
            mdsd_json_key(&j, "tokens");
            mdsd_json_integer_array(&j, D->tokens + t * D->n, D->n);
            mdsd_json_kv_number(&j, "prob", D->prob[t]);
            if (counts)
                mdsd_json_kv_integer(&j, "count", (long long)counts[t]);
            mdsd_json_object_end(&j);
        }
        mdsd_json_array_end(&j);
        mdsd_json_kv_number(&j, "total", mdsd_sum(D->prob, D->count));
        if (Q)
            mdsd_json_kv_number(&j, "Q", *Q);
        if (counts) {
            mdsd_json_key(&j, "sample");
            mdsd_json_object_begin(&j);
            mdsd_json_kv_integer(&j, "trials", (long long)o->sample);
            mdsd_json_kv_integer(&j, "seed", (long long)o->seed);
            mdsd_json_kv_number(&j, "statistic", gof->statistic);
            mdsd_json_kv_integer(&j, "dof", (long long)gof->dof);
            mdsd_json_kv_number(&j, "p_value", gof->p_value);
            mdsd_json_object_end(&j);
        }
        mdsd_json_object_end(&j);
        return;
    }
    printf("scheme %s, n = %zu, V = %zu: %zu tuples, total %.15g\n", mdsd_scheme_name(s->kind),
           s->n, s->V, D->count, mdsd_sum(D->prob, D->count));
    for (size_t t = 0; t < D->count; t++) {
        printf("(");
        for (size_t j = 0; j < D->n; j++)
            printf(j ? ",%d" : "%d", D->tokens[t * D->n + j]);
        printf(")  %.12g", D->prob[t]);
        if (counts)
            printf("  observed %.6g", (double)counts[t] / (double)o->sample);
        printf("\n");
    }
    if (Q)
        printf("Q(H) = %.15g\n", *Q);
    if (counts)
        printf("sample: %llu trials, seed %llu: chi-square %.6g on %zu dof, p-value %.4g\n",
               o->sample, o->seed, gof->statistic, gof->dof, gof->p_value);
}

/* Runs the enumeration (and the sample, Q(H)) for the built scheme. */
static int run(const void *ctx, const cli_pq *pq, const mdsd_scheme *scheme, mdsd_err *err)
{
    const draft_opts *o = ctx;
    const mdsd_scheme s = *scheme;
    (void)pq;
    mdsd_joint D;
    int rc;
    if ((rc = mdsd_scheme_joint(&s, o->max_tuples, &D, err)) || (rc = mdsd_joint_sort(&D, err)))
        return rc;
    unsigned char *in_H = o->subset ? calloc(s.V, 1) : NULL;
    double Q = 0.0;
    if (o->subset && (rc = load_subset(o->subset, s.V, in_H, err)) == MDSD_OK)
        Q = mdsd_joint_Q(&D, in_H);
    uint64_t *counts = o->sample && rc == MDSD_OK ? calloc(D.count, sizeof *counts) : NULL;
    mdsd_gof gof = {0};
    if (counts && (rc = sample_counts(&s, &D, o->sample, o->seed, counts, err)) == MDSD_OK)
        gof = mdsd_chisq_gof(counts, D.prob, D.count, 5.0);
    if (rc == MDSD_OK)
        print_result(o, &s, &D, counts, &gof, o->subset ? &Q : NULL);
    free(counts);
    free(in_H);
    mdsd_joint_free(&D);
    return rc;
}

int cmd_draft(int argc, char **argv)
{
    draft_opts o = {.scheme.n = 2, .seed = 1, .max_tuples = MDSD_DRAFT_MAX_TUPLES};
    cli_dist_opts_init(&o.dist);
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.dist.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    return cli_run_on_scheme("draft", &o.dist, &o.scheme, false, run, &o);
}
