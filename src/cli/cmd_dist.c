/* mdsd dist: the distributions exactly as the other commands will see them. */
#include <math.h>
#include <stdio.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd dist -p P [-q Q] [--logits] [-T T] [--top-k K] [--top-p P] [--json]\n"
    "Prints the target (and draft) after temperature, truncation and validation,\n"
    "with support size, entropy and, given both, sum_x min(p, q) (the one-draft\n"
    "acceptance rate) and the total-variation distance.\n\n" CLI_DIST_HELP
    "\nJSON keys: V, p, q (null if absent), support_p, support_q, entropy_p,\n"
    "entropy_q (nats), overlap (sum min(p,q)), tv (total variation).\n";

static double entropy(const double *p, size_t V)
{
    double h = 0.0;
    for (size_t i = 0; i < V; i++)
        if (p[i] > 0.0)
            h -= p[i] * log(p[i]);
    return h;
}

static double overlap(const double *p, const double *q, size_t V)
{
    double s = 0.0;
    for (size_t i = 0; i < V; i++)
        s += fmin(p[i], q[i]);
    return s;
}

static void print_text(const cli_pq *pq)
{
    printf("V = %zu\n", pq->V);
    printf("%8s %14s%s\n", "token", "p", pq->q ? "              q" : "");
    for (size_t i = 0; i < pq->V; i++) {
        printf("%8zu %14.9g", i, pq->p[i]);
        if (pq->q)
            printf(" %14.9g", pq->q[i]);
        printf("\n");
    }
    printf("support(p) = %zu, entropy(p) = %.6g nats\n", mdsd_support_size(pq->p, pq->V),
           entropy(pq->p, pq->V));
    if (pq->q) {
        double ov = overlap(pq->p, pq->q, pq->V);
        printf("support(q) = %zu, entropy(q) = %.6g nats\n", mdsd_support_size(pq->q, pq->V),
               entropy(pq->q, pq->V));
        printf("sum min(p,q) = %.12g, TV(p,q) = %.12g\n", ov, 1.0 - ov);
    }
}

static void print_json(const cli_pq *pq)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_integer(&j, "V", (long long)pq->V);
    mdsd_json_key(&j, "p");
    mdsd_json_number_array(&j, pq->p, pq->V);
    mdsd_json_key(&j, "q");
    if (pq->q)
        mdsd_json_number_array(&j, pq->q, pq->V);
    else
        mdsd_json_null(&j);
    mdsd_json_kv_integer(&j, "support_p", (long long)mdsd_support_size(pq->p, pq->V));
    mdsd_json_kv_number(&j, "entropy_p", entropy(pq->p, pq->V));
    if (pq->q) {
        double ov = overlap(pq->p, pq->q, pq->V);
        mdsd_json_kv_integer(&j, "support_q", (long long)mdsd_support_size(pq->q, pq->V));
        mdsd_json_kv_number(&j, "entropy_q", entropy(pq->q, pq->V));
        mdsd_json_kv_number(&j, "overlap", ov);
        mdsd_json_kv_number(&j, "tv", 1.0 - ov);
    }
    mdsd_json_object_end(&j);
}

int cmd_dist(int argc, char **argv)
{
    static const struct option longopts[] = {CLI_DIST_LONG_OPTIONS, {0, 0, 0, 0}};
    cli_dist_opts o;
    cli_dist_opts_init(&o);
    int opt;
    while ((opt = getopt_long(argc, argv, CLI_DIST_SHORT, longopts, NULL)) != -1) {
        int r = cli_dist_option(&o, opt, optarg, "dist");
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r == 0)
            return cli_usage_error("dist", "unrecognised option");
    }
    if (o.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (optind < argc)
        return cli_usage_error("dist", "unexpected argument '%s'", argv[optind]);
    if (o.n_draft_specs > 1)
        return cli_usage_error("dist", "give at most one -q/--draft");
    cli_pq pq;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (cli_load_pq(&o, true, false, &pq, &err)) {
        cli_pq_free(&pq);
        return cli_report("dist", &err);
    }
    if (o.json)
        print_json(&pq);
    else
        print_text(&pq);
    cli_pq_free(&pq);
    return CLI_EXIT_OK;
}
