/* mdsd toy: synthetic logit dumps of the toy families, for demos, tests and
 * benchmarks: the options checked and said as usage errors here, the dump
 * written by the library's mdsd_toy_dump (src/job/toyjob.c), which Python's
 * mdsd.toy calls too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"

#include <mdsd/toy.h>

static const char usage_text[] =
    "Usage: mdsd toy --family F --vocab V --positions N --seed S -o DUMP\n"
    "                [--drafts NAME,...] [--samples K] [--dtype float32|float16|bfloat16]\n"
    "                [--param NAME=VALUE,...] [--chunk-rows R] [--gzip LEVEL]\n"
    "                [--threads T] [--json]\n"
    "Writes an HDF5 logit dump (format of data/README.md) whose rows are random\n"
    "instances of a toy family: target logits and one draft per --drafts name.\n"
    "The token of each row is drawn from the target at temperature 1. The file\n"
    "appears under its name only when complete.\n\n"
    "  -f, --family F      bernoulli (V = 2), uniform, spechub-toy, dirichlet, zipf\n"
    "                      (LLM-like heavy tails; V = 32000 and more) or degenerate\n"
    "  -V, --vocab V       vocabulary size\n"
    "  -N, --positions N   number of rows\n"
    "  -s, --seed S        seed (default 1); rows depend on (seed, row) only\n"
    "  -o, --output DUMP   the dump to write\n"
    "      --drafts LIST   drafter names (default: draft)\n"
    "      --samples K     split the rows into K samples of consecutive positions\n"
    "                      (default: ceil(N / 128))\n"
    "      --dtype T       logits dtype: float32 (default), float16, bfloat16\n"
    "      --param LIST    family parameters NAME=VALUE (see below); repeatable\n"
    "      --chunk-rows R  rows per HDF5 chunk (default 64)\n"
    "      --gzip LEVEL    deflate the chunks at level 1..9 (default 0: none)\n"
    "      --threads T     OpenMP threads (default: all; the dump is the same)\n"
    "      --json          print a JSON summary\n"
    "  -h, --help          this help\n\n"
    "Family parameters (defaults):\n"
    "  bernoulli    a, b: P(token 1) of draft and target (random U(0,1) per row);\n"
    "               grid = m: (a, b) cycle through {0, 1/m, .., 1}^2 with the row\n"
    "  uniform      d (V, made even), r (2): q uniform on d tokens, p on d/r of them\n"
    "  spechub-toy  T (1), lambda (0.5): p = softmax(u_p/T),\n"
    "               q = softmax((lambda u_p + (1 - lambda) u_q)/T), u ~ U(0,1)^V\n"
    "  dirichlet    alpha (1): p, q ~ Dirichlet(alpha)\n"
    "  zipf         s (2), spread (0.6), sigma (0.5), tau (0.5): target logits\n"
    "               -c log(rank) + sigma Z permuted, c = s exp(spread Z); draft =\n"
    "               target + tau Z\n"
    "  degenerate   kind (-1 = cycle): 0 q = p, 1 one-hot q, 2 disjoint supports,\n"
    "               3 zeros in p and q\n"
    "\nJSON keys: file, family, params, V, rows, samples, drafts, dtype, seed.\n";

enum { OPT_DRAFTS = CLI_OPT_COMMAND, OPT_SAMPLES, OPT_DTYPE, OPT_PARAM, OPT_CHUNK, OPT_GZIP, OPT_THREADS };

#define TOY_MAX_PARAMS 16

typedef struct {
    const char *family, *output, *drafts, *dtype;
    const char *params[TOY_MAX_PARAMS];
    size_t n_params;
    size_t V, N, samples, chunk_rows, threads;
    unsigned long long seed, gzip;
    int json, help;
} toy_opts;

/* A parameter named twice (in one --param or across several) is refused:
 * keeping the last would half-use the command line. */
static int check_param_names(const toy_opts *o)
{
    const char *item[64 * TOY_MAX_PARAMS];
    size_t len[64 * TOY_MAX_PARAMS], n = 0;
    for (size_t k = 0; k < o->n_params; k++)
        for (const char *c = o->params[k]; *c && n < sizeof item / sizeof *item;) {
            size_t whole = strcspn(c, ","), name = strcspn(c, "=,");
            for (size_t i = 0; i < n; i++)
                if (len[i] == name && !strncmp(item[i], c, name)) {
                    cli_usage_error("toy", "--param: %.*s is given twice (%.*s and %.*s)", (int)name, c,
                                    (int)strcspn(item[i], ","), item[i], (int)whole, c);
                    return -1;
                }
            item[n] = c, len[n++] = name;
            c += whole + (c[whole] == ',');
        }
    return 0;
}

static int parse_args(int argc, char **argv, toy_opts *o)
{
    static const struct option longopts[] = {
        {"family", required_argument, NULL, 'f'},  {"vocab", required_argument, NULL, 'V'},
        {"positions", required_argument, NULL, 'N'}, {"seed", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},  {"drafts", required_argument, NULL, OPT_DRAFTS},
        {"samples", required_argument, NULL, OPT_SAMPLES}, {"dtype", required_argument, NULL, OPT_DTYPE},
        {"param", required_argument, NULL, OPT_PARAM}, {"chunk-rows", required_argument, NULL, OPT_CHUNK},
        {"gzip", required_argument, NULL, OPT_GZIP}, {"threads", required_argument, NULL, OPT_THREADS},
        {"json", no_argument, NULL, CLI_OPT_JSON}, {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "f:V:N:s:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f': o->family = optarg; break;
        case 'V': if (cli_parse_size(optarg, "--vocab", "toy", &o->V)) return -1; break;
        case 'N': if (cli_parse_size(optarg, "--positions", "toy", &o->N)) return -1; break;
        case 's': if (cli_parse_u64(optarg, "--seed", "toy", &o->seed)) return -1; break;
        case 'o': o->output = optarg; break;
        case OPT_DRAFTS: o->drafts = optarg; break;
        case OPT_SAMPLES: if (cli_parse_size(optarg, "--samples", "toy", &o->samples)) return -1; break;
        case OPT_DTYPE: o->dtype = optarg; break;
        case OPT_PARAM:
            if (o->n_params == TOY_MAX_PARAMS) {
                cli_usage_error("toy", "at most %d --param options", TOY_MAX_PARAMS);
                return -1;
            }
            o->params[o->n_params++] = optarg;
            break;
        case OPT_CHUNK: if (cli_parse_size(optarg, "--chunk-rows", "toy", &o->chunk_rows)) return -1; break;
        case OPT_GZIP: if (cli_parse_u64(optarg, "--gzip", "toy", &o->gzip)) return -1; break;
        case OPT_THREADS: if (cli_parse_size(optarg, "--threads", "toy", &o->threads)) return -1; break;
        case CLI_OPT_JSON: o->json = 1; break;
        case 'h': o->help = 1; break;
        default: cli_usage_error("toy", "unrecognised option"); return -1;
        }
    }
    if (o->help)
        return 0;
    if (optind < argc) {
        cli_usage_error("toy", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    const char *missing = !o->family ? "--family" : !o->V ? "--vocab (>= 1)" : !o->N ? "--positions (>= 1)"
                        : !o->output ? "-o/--output" : NULL;
    if (missing) {
        cli_usage_error("toy", "missing %s", missing);
        return -1;
    }
    if (o->gzip > 9) {
        cli_usage_error("toy", "--gzip: %llu is not a level in 0..9", o->gzip);
        return -1;
    }
    if (o->samples > o->N) {
        cli_usage_error("toy", "--samples %zu is more than the %zu positions", o->samples, o->N);
        return -1;
    }
    return check_param_names(o);
}

/* Splits "a,b,c" in place into names (for the summary; the library splits its own copy). */
static size_t split_names(char *list, char **names, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *s = strtok_r(list, ",", &save); s && n < max; s = strtok_r(NULL, ",", &save))
        names[n++] = s;
    return n;
}

int cmd_toy(int argc, char **argv)
{
    toy_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    if (parse_args(argc, argv, &o))
        return CLI_EXIT_USAGE;
    if (o.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_toy toy;
    mdsd_toy_family family;
    mdsd_dump_dtype dtype = MDSD_DUMP_FLOAT32;
    if (mdsd_toy_family_parse(o.family, &family, &err) || (o.dtype && mdsd_dtype_parse(o.dtype, &dtype, &err)))
        return cli_report("toy", &err);
    mdsd_toy_init(&toy, family, o.V);
    for (size_t k = 0; k < o.n_params; k++)
        if (mdsd_toy_set_list(&toy, o.params[k], &err))
            return cli_report("toy", &err);
    if (mdsd_toy_check(&toy, &err))
        return cli_report("toy", &err);
    char *list = strdup(o.drafts ? o.drafts : "draft");
    char *names[CLI_MAX_DRAFTS];
    size_t n_q = list ? split_names(list, names, CLI_MAX_DRAFTS) : 0;
    if (n_q == 0) {
        free(list);
        return cli_usage_error("toy", "--drafts: give at least one name");
    }
    /* the repeated --param lists as one (no name is given twice: check_param_names) */
    char joined[64 * TOY_MAX_PARAMS * 4] = "";
    for (size_t k = 0, at = 0; k < o.n_params && at < sizeof joined; k++)
        at += (size_t)snprintf(joined + at, sizeof joined - at, "%s%s", k ? "," : "", o.params[k]);
    if (strlen(joined) + 1 >= sizeof joined) {
        free(list);
        return cli_usage_error("toy", "--param: the lists are too long");
    }
    /* refuse a directory (or unwritable place) before any work; an interrupt
     * removes the temporary dump */
    mdsd_pathset_output(cli_paths(), o.output, "-o");
    if (cli_check_paths(NULL, NULL, &err)) {
        free(list);
        return cli_report("toy", &err);
    }
    mdsd_cleanup_signals("mdsd toy", NULL);
    mdsd_toy_opts t;
    mdsd_toy_opts_init(&t);
    t.family = o.family, t.V = o.V, t.positions = o.N, t.seed = o.seed, t.drafts = o.drafts;
    t.samples = o.samples, t.dtype = o.dtype, t.params = o.n_params ? joined : NULL;
    t.chunk_rows = o.chunk_rows, t.gzip = (int)o.gzip, t.threads = o.threads;
    size_t samples = 0;
    char params[512];
    int rc = mdsd_toy_dump(o.output, &t, &samples, params, sizeof params, &err);
    if (rc == MDSD_OK) {
        if (o.json) {
            mdsd_json j;
            mdsd_json_init(&j, stdout);
            mdsd_json_object_begin(&j);
            mdsd_json_kv_string(&j, "file", o.output);
            mdsd_json_kv_string(&j, "family", mdsd_toy_family_name(family));
            mdsd_json_kv_string(&j, "params", params);
            mdsd_json_kv_integer(&j, "V", (long long)o.V);
            mdsd_json_kv_integer(&j, "rows", (long long)o.N);
            mdsd_json_kv_integer(&j, "samples", (long long)samples);
            mdsd_json_key(&j, "drafts");
            mdsd_json_array_begin(&j);
            for (size_t k = 0; k < n_q; k++)
                mdsd_json_string(&j, names[k]);
            mdsd_json_array_end(&j);
            mdsd_json_kv_string(&j, "dtype", mdsd_dtype_name(dtype));
            mdsd_json_kv_integer(&j, "seed", (long long)o.seed);
            mdsd_json_object_end(&j);
        } else {
            printf("wrote %s: %s (%s), V = %zu, %zu rows in %zu samples, %zu drafter%s, %s\n", o.output,
                   mdsd_toy_family_name(family), params, o.V, o.N, samples, n_q, n_q == 1 ? "" : "s",
                   mdsd_dtype_name(dtype));
        }
    }
    free(list);
    return rc ? cli_report("toy", &err) : CLI_EXIT_OK;
}
