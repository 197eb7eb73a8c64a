/* cli_sweep.c - sweeps for one (p, q): `mdsd bound` and `mdsd accept` given
 * -n a:b (or a list), --scheme all|LIST or --verifier all|LIST evaluate every
 * combination in one process and print one table or one JSON document,
 * instead of one process per combination. Each entry is the value the
 * single-combination command prints (alpha* by the auto method; a verifier's
 * exact rate, or Monte Carlo with --trials where it has none), next to the
 * scheme's alpha* and the gap. Combinations that do not apply (hub at n = 3)
 * are listed as skipped; a combination that fails makes the exit status 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include <mdsd/registry.h>

#define SWEEP_MAX 64

/* "all": the registry's valid verifiers, or its schemes that one q defines
 * (multi and custom take more than a sweep gives), comma-separated. */
static const char *all_names(int verifiers, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < mdsd_registry_count(); i++) {
        const mdsd_registry_entry *e = mdsd_registry_at(i);
        int take = verifiers ? e->cls == MDSD_NAME_VERIFIER && !e->audit
                             : e->cls == MDSD_NAME_SCHEME && e->kind != MDSD_SCHEME_MULTI &&
                                   e->kind != MDSD_SCHEME_CUSTOM;
        int w = take ? snprintf(buf + len, size - len, "%s%s", len ? "," : "", e->name) : 0;
        if (w > 0 && (size_t)w < size - len)
            len += (size_t)w;
    }
    return buf;
}

/* The value of option `opt` (short s, long l) if present in argv. */
static const char *option_value(int argc, char **argv, char s, const char *l, int *count)
{
    const char *v = NULL;
    size_t ll = strlen(l);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (a[0] == '-' && a[1] == s && a[2] == '\0' && i + 1 < argc)
            v = argv[++i], ++*count;
        else if (a[0] == '-' && a[1] == s && a[2] != '\0' && a[1] != '-')
            v = a + 2, ++*count;
        else if (!strncmp(a, "--", 2) && !strncmp(a + 2, l, ll) && a[2 + ll] == '=')
            v = a + 3 + ll, ++*count;
        else if (!strncmp(a, "--", 2) && !strcmp(a + 2, l) && i + 1 < argc)
            v = argv[++i], ++*count;
    }
    return v;
}

static bool is_list(const char *v)
{
    return v && (!strcmp(v, "all") || strchr(v, ',') || strchr(v, ':'));
}

bool cli_sweep_requested(const char *cmd, int argc, char **argv)
{
    int k = 0;
    if (is_list(option_value(argc, argv, 'n', "drafts", &k)) || is_list(option_value(argc, argv, 's', "scheme", &k)))
        return true;
    return !strcmp(cmd, "accept") && is_list(option_value(argc, argv, 'v', "verifier", &k));
}

typedef struct {
    cli_dist_opts dist;
    const char *cmd;
    size_t n[SWEEP_MAX], n_count;
    char names[SWEEP_MAX][16];     /* schemes (bound) or verifiers (accept) */
    size_t name_count;
    const char *scheme;            /* accept: --scheme for every verifier (NULL = own) */
    unsigned long long trials, seed;
    mdsd_verifier_opts vopts;
} sweep_opts;

static int parse_counts(const char *cmd, const char *spec, sweep_opts *o)
{
    double *x = NULL;
    size_t len = 0;
    mdsd_err err;
    char full[256];
    const char *colon = strchr(spec, ':');
    /* a:b counts by one */
    snprintf(full, sizeof full, "%s%s", spec, colon && !strchr(colon + 1, ':') ? ":1" : "");
    if (mdsd_parse_range(full, "--drafts", &x, &len, &err))
        return cli_usage_error(cmd, "%s", err.msg);
    int bad = len == 0 || len > SWEEP_MAX;
    for (size_t i = 0; i < len && !bad; i++) {
        bad = !(x[i] >= 1 && x[i] <= 1e6) || x[i] != floor(x[i]);
        o->n[i] = (size_t)x[i];
    }
    o->n_count = len;
    free(x);
    return bad ? cli_usage_error(cmd, "--drafts: '%s' is not a list or range of counts >= 1 "
                                 "(at most %d)", spec, SWEEP_MAX) : 0;
}

static int parse_names(const char *cmd, const char *opt, const char *spec, const char *all, sweep_opts *o)
{
    char copy[1024], *save = NULL;
    snprintf(copy, sizeof copy, "%s", strcmp(spec, "all") ? spec : all);
    o->name_count = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->name_count == SWEEP_MAX || strlen(t) >= sizeof o->names[0])
            return cli_usage_error(cmd, "%s: too many or too long entries", opt);
        mdsd_err err;
        mdsd_scheme_kind sk;
        mdsd_verifier_kind vk;
        int rc = !strcmp(opt, "--scheme") ? mdsd_scheme_parse(t, &sk, &err) : mdsd_verifier_parse(t, &vk, &err);
        if (rc)
            return cli_usage_error(cmd, "%s: %s", opt, err.msg);
        if (!strcmp(opt, "--scheme") && (sk == MDSD_SCHEME_MULTI || sk == MDSD_SCHEME_CUSTOM))
            return cli_usage_error(cmd, "--scheme: %s is not available in a sweep (run it alone)", t);
        strcpy(o->names[o->name_count++], t);
    }
    return o->name_count ? 0 : cli_usage_error(cmd, "%s: empty list", opt);
}

enum { OPT_TRIALS = CLI_OPT_COMMAND + 50, OPT_SEED, OPT_IS_TOP, OPT_EXACT };

static int parse(const char *cmd, int argc, char **argv, sweep_opts *o)
{
    static const struct option longopts[] = {
        CLI_DIST_LONG_OPTIONS,
        {"drafts", required_argument, NULL, 'n'},
        {"scheme", required_argument, NULL, 's'},
        {"verifier", required_argument, NULL, 'v'},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"is-top", required_argument, NULL, OPT_IS_TOP},
        {"exact", no_argument, NULL, OPT_EXACT},
        {0, 0, 0, 0}};
    bool accept = !strcmp(cmd, "accept");
    const char *n_spec = "2", *names = accept ? NULL : "all";
    bool exact = false;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, CLI_DIST_SHORT "n:s:v:", longopts, NULL)) != -1) {
        int r = cli_dist_option(&o->dist, opt, optarg, cmd);
        if (r < 0)
            return -1;
        if (r > 0)
            continue;
        switch (opt) {
        case 'n': n_spec = optarg; break;
        case 's':
            if (accept)
                o->scheme = optarg;
            else
                names = optarg;
            break;
        case 'v':
            if (!accept)
                return cli_usage_error(cmd, "unrecognised option");
            names = optarg;
            break;
        case OPT_EXACT: /* the sweep's default: exact wherever a verifier has an exact form */
            if (!accept)
                return cli_usage_error(cmd, "unrecognised option");
            exact = true;
            break;
        case OPT_TRIALS:
        case OPT_SEED:
        case OPT_IS_TOP:
            if (!accept)
                return cli_usage_error(cmd, "unrecognised option");
            if (opt == OPT_IS_TOP) {
                if (cli_parse_size(optarg, "--is-top", cmd, &o->vopts.is_top))
                    return -1;
            } else if (cli_parse_u64(optarg, opt == OPT_TRIALS ? "--trials" : "--seed", cmd,
                                     opt == OPT_TRIALS ? &o->trials : &o->seed)) {
                return -1;
            }
            break;
        default:
            return cli_usage_error(cmd, "option not available in a sweep (-n a:b, --scheme/--verifier "
                                   "all|LIST): run that combination alone");
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (o->dist.help)
        return 0;
    if (!names)
        return cli_usage_error(cmd, "missing --verifier");
    if (exact && o->trials)
        return cli_usage_error(cmd, "--exact with --trials (exact beside Monte Carlo) is not available in a "
                               "sweep: run that combination alone");
    if (accept && o->scheme && (!strcmp(o->scheme, "all") || strchr(o->scheme, ',')))
        return cli_usage_error(cmd, "--scheme: one scheme for every verifier (a verifier runs on its own "
                               "scheme by default)");
    if (parse_counts(cmd, n_spec, o))
        return -1;
    char all[512];
    return parse_names(cmd, accept ? "--verifier" : "--scheme", names, all_names(accept, all, sizeof all), o);
}

/* One combination's outcome. */
typedef struct {
    size_t n;
    char scheme[16], verifier[16];
    int status;            /* 0 evaluated, 1 skipped (does not apply), 2 failed */
    char why[600];
    double alpha_star, alpha, stderr_mc;
    bool exact;
    unsigned long long trials;
    double per_draft[SWEEP_MAX];
} entry;

static void fail_entry(entry *e, int status, const mdsd_err *err)
{
    e->status = status;
    cli_words(err->msg, e->why, sizeof e->why);
}

static int alpha_star(const cli_pq *pq, const mdsd_scheme *s, double *out, mdsd_err *err)
{
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(s->V, s->n, err);
    if (!ws)
        return err->code ? err->code : MDSD_ENOMEM;
    mdsd_bound_result res = {0};
    mdsd_bound_opts bo = {0};
    int rc = mdsd_bound_alpha(pq->p, s, MDSD_BOUND_AUTO, &bo, ws, &res, err);
    *out = res.alpha;
    mdsd_bound_workspace_free(ws);
    return rc;
}

static void run_bound(const cli_pq *pq, size_t n, const char *scheme, entry *e)
{
    mdsd_scheme s;
    mdsd_joint custom = {0};
    mdsd_err err;
    mdsd_err_clear(&err);
    e->n = n;
    snprintf(e->scheme, sizeof e->scheme, "%s", scheme);
    if (cli_build_scheme(scheme, n, NULL, pq, &custom, &s, &err) || mdsd_scheme_check(&s, &err))
        return fail_entry(e, 1, &err);
    if (alpha_star(pq, &s, &e->alpha_star, &err))
        return fail_entry(e, 2, &err);
    e->alpha = e->alpha_star;
    e->exact = true;
}

static void run_accept(const sweep_opts *o, const cli_pq *pq, size_t n, const char *name, entry *e)
{
    mdsd_verifier_kind kind;
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_verifier_parse(name, &kind, &err);
    e->n = n;
    snprintf(e->verifier, sizeof e->verifier, "%s", name);
    const char *scheme = o->scheme ? o->scheme : mdsd_scheme_name(mdsd_verifier_scheme(kind));
    snprintf(e->scheme, sizeof e->scheme, "%s", scheme);
    mdsd_scheme s;
    mdsd_joint custom = {0};
    if (kind == MDSD_VERIFIER_SD && n != 1) {
        snprintf(e->why, sizeof e->why, "sd takes one draft (n = 1)");
        e->status = 1;
        return;
    }
    if (cli_build_scheme(scheme, e->n, NULL, pq, &custom, &s, &err) || mdsd_scheme_check(&s, &err) ||
        mdsd_verifier_check(kind, &s, &err))
        return fail_entry(e, 1, &err);
    if (alpha_star(pq, &s, &e->alpha_star, &err))
        return fail_entry(e, 2, &err);
    int rc = mdsd_verifier_exact(kind, pq->p, &s, &o->vopts, &e->alpha, e->per_draft, &err);
    e->exact = rc == MDSD_OK;
    if ((rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG) && o->trials > 0) {
        mdsd_err_clear(&err);
        mdsd_verifier *v = mdsd_verifier_alloc(kind, pq->p, &s, &o->vopts, &err);
        mdsd_mc_opts mo;
        mdsd_mc_opts_init(&mo);
        mo.trials = o->trials;
        mo.seed = o->seed;
        mo.histogram = false;
        mdsd_mc_result mc;
        rc = v ? mdsd_mc_run(v, &mo, &mc, &err) : (err.code ? err.code : MDSD_ENOMEM);
        if (rc == MDSD_OK) {
            e->alpha = mc.alpha;
            e->stderr_mc = mc.se;
            e->trials = mc.trials;
            for (size_t j = 0; j < s.n; j++)
                e->per_draft[j] = (double)mc.per_draft[j] / (double)mc.trials;
            mdsd_mc_result_free(&mc);
        }
        mdsd_verifier_free(v);
    } else if (rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG) {
        /* --trials helps only where the verifier can be set up for sampling (is past
         * its LP's guard cannot: the set-up's message names --is-top S) */
        mdsd_err setup;
        mdsd_err_clear(&setup);
        mdsd_verifier *v = mdsd_verifier_alloc(kind, pq->p, &s, &o->vopts, &setup);
        if (v)
            snprintf(err.msg, sizeof err.msg, "no exact form at this size; pass --trials T for "
                     "Monte Carlo");
        else
            snprintf(err.msg, sizeof err.msg, "no exact form at this size, and Monte Carlo "
                     "cannot stand in: %.400s", setup.msg);
        mdsd_verifier_free(v);
    }
    if (rc)
        fail_entry(e, 2, &err);
}

static void print_json(const sweep_opts *o, const cli_pq *pq, const entry *es, size_t count, bool failed)
{
    bool accept = !strcmp(o->cmd, "accept");
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "command", o->cmd);
    mdsd_json_kv_integer(&j, "V", (long long)pq->V);
    mdsd_json_kv_bool(&j, "failures", failed);
    mdsd_json_key(&j, "results");
    mdsd_json_array_begin(&j);
    for (size_t i = 0; i < count; i++) {
        const entry *e = &es[i];
        mdsd_json_object_begin(&j);
        mdsd_json_kv_integer(&j, "n", (long long)e->n);
        mdsd_json_kv_string(&j, "scheme", e->scheme);
        if (accept)
            mdsd_json_kv_string(&j, "verifier", e->verifier);
        if (e->status) {
            mdsd_json_kv_string(&j, e->status == 1 ? "skipped" : "failed", e->why);
        } else {
            mdsd_json_kv_number(&j, "alpha", e->alpha);
            if (accept) {
                mdsd_json_kv_bool(&j, "exact", e->exact);
                mdsd_json_kv_number(&j, "alpha_star", e->alpha_star);
                mdsd_json_kv_number(&j, "gap", e->alpha - e->alpha_star);
                mdsd_json_key(&j, "per_draft");
                mdsd_json_number_array(&j, e->per_draft, e->n);
                mdsd_json_kv_integer(&j, "trials", (long long)e->trials);
                mdsd_json_kv_number(&j, "stderr", e->stderr_mc);
            }
        }
        mdsd_json_object_end(&j);
    }
    mdsd_json_array_end(&j);
    mdsd_json_object_end(&j);
}

static void print_table(const sweep_opts *o, const entry *es, size_t count)
{
    bool accept = !strcmp(o->cmd, "accept");
    if (accept)
        printf("%-4s %-8s %-9s %-12s %-12s %-12s %s\n", "n", "scheme", "verifier", "alpha", "alpha*", "gap", "how");
    else
        printf("%-4s %-8s %s\n", "n", "scheme", "alpha*");
    for (size_t i = 0; i < count; i++) {
        const entry *e = &es[i];
        printf("%-4zu %-8s ", e->n, e->scheme);
        if (accept)
            printf("%-9s ", e->verifier);
        if (e->status) {
            printf("%s: %s\n", e->status == 1 ? "skipped" : "FAILED", e->why);
        } else if (accept) {
            char how[64];
            if (e->exact)
                snprintf(how, sizeof how, "exact");
            else
                snprintf(how, sizeof how, "Monte Carlo, %llu trials, s.e. %.2g", e->trials, e->stderr_mc);
            double gap = e->alpha - e->alpha_star;
            printf("%-12.8f %-12.8f %-+12.8f %s\n", e->alpha, e->alpha_star, fabs(gap) < 5e-13 ? 0.0 : gap, how);
        } else {
            printf("%.12g\n", e->alpha);
        }
    }
}

int cli_sweep(const char *cmd, int argc, char **argv)
{
    sweep_opts o;
    memset(&o, 0, sizeof o);
    o.cmd = cmd;
    o.seed = 1;
    cli_dist_opts_init(&o.dist);
    mdsd_verifier_opts_init(&o.vopts);
    if (parse(cmd, argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.dist.help) {
        printf("mdsd %s sweep: -n a:b (or a list), %s all|LIST: every combination, one table or "
               "one JSON document (--json). See mdsd %s --help without a list for the options.\n",
               cmd, strcmp(cmd, "accept") ? "--scheme" : "--verifier", cmd);
        return CLI_EXIT_OK;
    }
    cli_pq pq;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (cli_load_pq(&o.dist, true, true, &pq, &err))
        return cli_report(cmd, &err);
    size_t count = o.n_count * o.name_count;
    entry *es = calloc(count, sizeof *es);
    if (!es) {
        cli_pq_free(&pq);
        return cli_usage_error(cmd, "out of memory");
    }
    bool failed = false;
    for (size_t a = 0, k = 0; a < o.n_count; a++)
        for (size_t b = 0; b < o.name_count; b++, k++) {
            if (!strcmp(cmd, "accept"))
                run_accept(&o, &pq, o.n[a], o.names[b], &es[k]);
            else
                run_bound(&pq, o.n[a], o.names[b], &es[k]);
            failed |= es[k].status == 2;
        }
    if (o.dist.json)
        print_json(&o, &pq, es, count, failed);
    else
        print_table(&o, es, count);
    free(es);
    cli_pq_free(&pq);
    return failed ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}
