/* mdsd toy: synthetic logit dumps of the toy families, for demos, tests and
 * benchmarks. Every row is a function of (seed, row) only, so a dump is
 * reproducible from --seed whatever the thread count or chunking. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "cli.h"
#include "outfile.h"

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

/* Splits "a,b,c" in place into names. */
static size_t split_names(char *list, char **names, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *s = strtok_r(list, ",", &save); s && n < max; s = strtok_r(NULL, ",", &save))
        names[n++] = s;
    return n;
}

/* Row `row`'s instance: logits as float, and the emitted token drawn from
 * softmax(target logits) with the same row stream. */
static int make_row(const mdsd_toy *toy, unsigned long long seed, size_t row, size_t n_q,
                    gsl_rng *r, double *work, float *target, float *const *drafts, int *token,
                    mdsd_err *err)
{
    size_t V = toy->V;
    mdsd_rng_reseed(r, mdsd_seed_mix(seed, row, mdsd_seed_name(mdsd_toy_family_name(toy->family))));
    double *lp = work, *lq = work + V, *p = work + (n_q + 1) * V;
    int rc = mdsd_toy_logits(toy, row, r, lp, n_q, lq, err);
    if (rc == MDSD_OK)
        rc = mdsd_softmax(lp, V, 1.0, p, "toy target", err);
    if (rc)
        return rc;
    double u = gsl_rng_uniform(r), acc = 0.0;
    size_t tok = V - 1;
    for (size_t i = 0; i < V; i++) {
        acc += p[i];
        if (u < acc) {
            tok = i;
            break;
        }
    }
    while (p[tok] == 0.0 && tok > 0) /* rounding left u past the last positive entry */
        tok--;
    *token = (int)tok;
    for (size_t i = 0; i < V; i++)
        target[i] = (float)lp[i];
    for (size_t j = 0; j < n_q; j++)
        for (size_t i = 0; i < V; i++)
            drafts[j][i] = (float)lq[j * V + i];
    return MDSD_OK;
}

typedef struct {
    size_t cap, V, n_q;
    float *target, **drafts;
    int *tokens, *sample_id, *position;
} row_block;

static void block_free(row_block *b)
{
    for (size_t j = 0; b->drafts && j < b->n_q; j++)
        free(b->drafts[j]);
    free(b->drafts);
    free(b->target);
    free(b->tokens);
    free(b->sample_id);
    free(b->position);
}

static int block_alloc(row_block *b, size_t cap, size_t V, size_t n_q)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->V = V;
    b->n_q = n_q;
    b->target = malloc(cap * V * sizeof *b->target);
    b->drafts = calloc(n_q, sizeof *b->drafts);
    b->tokens = malloc(cap * sizeof(int));
    b->sample_id = malloc(cap * sizeof(int));
    b->position = malloc(cap * sizeof(int));
    int ok = b->target && b->drafts && b->tokens && b->sample_id && b->position;
    for (size_t j = 0; ok && j < n_q; j++)
        ok = (b->drafts[j] = malloc(cap * V * sizeof **b->drafts)) != NULL;
    return ok ? MDSD_OK : MDSD_ENOMEM;
}

/* Fills rows [row0, row0 + rows) in parallel; each thread has its own
 * generator and work space, and every row reseeds from (seed, row). */
static int fill_block(const mdsd_toy *toy, const toy_opts *o, size_t samples, size_t row0,
                      size_t rows, row_block *b, mdsd_err *err)
{
    int rc = MDSD_OK;
    size_t n_q = b->n_q, V = b->V;
#pragma omp parallel
    {
        gsl_rng *r = mdsd_rng_alloc(0);
        double *work = malloc((n_q + 2) * V * sizeof *work);
        float **dptr = malloc(n_q * sizeof *dptr);
        mdsd_err local;
        mdsd_err_clear(&local);
        int mine = (r && work && dptr) ? MDSD_OK : mdsd_fail(&local, MDSD_ENOMEM, "out of memory");
#pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < rows; i++) {
            if (mine)
                continue;
            size_t row = row0 + i;
            for (size_t j = 0; j < n_q; j++)
                dptr[j] = b->drafts[j] + i * V;
            mine = make_row(toy, o->seed, row, n_q, r, work, b->target + i * V, dptr, &b->tokens[i], &local);
            /* sample k holds rows [k N / K, (k + 1) N / K) */
            /* k = the largest k with floor(k N / K) <= row */
            size_t k = (size_t)(((unsigned long long)(row + 1) * samples + o->N - 1) / o->N - 1);
            b->sample_id[i] = (int)k;
            b->position[i] = (int)(row - (size_t)((unsigned long long)k * o->N / samples));
        }
#pragma omp critical
        if (mine && rc == MDSD_OK) {
            rc = mine;
            *err = local;
        }
        gsl_rng_free(r);
        free(work);
        free(dptr);
    }
    return rc;
}

static int write_dump(const toy_opts *o, const mdsd_toy *toy, char **names, size_t n_q,
                      mdsd_dump_dtype dtype, size_t samples, mdsd_err *err)
{
    char dataset[64], params[512], seed[32], target_model[300];
    snprintf(dataset, sizeof dataset, "toy:%s", mdsd_toy_family_name(toy->family));
    mdsd_toy_describe(toy, params, sizeof params);
    snprintf(seed, sizeof seed, "%llu", o->seed);
    snprintf(target_model, sizeof target_model, "toy-%s-target", mdsd_toy_family_name(toy->family));
    char (*models)[300] = malloc(n_q * sizeof *models);
    const char **model_ptr = malloc(n_q * sizeof *model_ptr);
    if (!models || !model_ptr) {
        free(models);
        free(model_ptr);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < n_q; j++) {
        snprintf(models[j], sizeof models[j], "toy-%s-%s", mdsd_toy_family_name(toy->family), names[j]);
        model_ptr[j] = models[j];
    }
    const char *extra_names[] = {"toy_family", "toy_params", "toy_seed"};
    const char *extra_values[] = {mdsd_toy_family_name(toy->family), params, seed};
    char creator[64];
    snprintf(creator, sizeof creator, "mdsd %s (mdsd toy)", MDSD_VERSION);
    mdsd_dump_spec spec = {
        .V = toy->V, .dtype = dtype, .chunk_rows = o->chunk_rows, .gzip = (int)o->gzip,
        .creator = creator, .dataset = dataset, .tokenizer = "none (toy token ids)",
        .generation_temperature = 1.0, .target_model = target_model, .n_drafts = n_q,
        .draft_names = (const char *const *)names, .draft_models = model_ptr,
        .n_extra = 3, .extra_names = extra_names, .extra_values = extra_values};
    mdsd_dump_writer *w = NULL;
    row_block b;
    /* rows generated per append: a chunk, but at most ~64 MB of floats */
    size_t cap = o->chunk_rows ? o->chunk_rows : MDSD_DUMP_CHUNK_ROWS;
    size_t row_bytes = (1 + n_q) * toy->V * sizeof(float), limit = (64u << 20) / row_bytes;
    if (cap > limit)
        cap = limit ? limit : 1;
    int rc = block_alloc(&b, cap, toy->V, n_q);
    if (rc)
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory for %zu rows of V = %zu", cap, toy->V);
    if (rc == MDSD_OK)
        rc = mdsd_dump_writer_open(o->output, &spec, &w, err);
    for (size_t row0 = 0; rc == MDSD_OK && row0 < o->N; row0 += cap) {
        size_t rows = o->N - row0 < cap ? o->N - row0 : cap;
        rc = fill_block(toy, o, samples, row0, rows, &b, err);
        if (rc == MDSD_OK)
            rc = mdsd_dump_writer_append(w, rows, b.target, (const float *const *)b.drafts, b.tokens,
                                         b.sample_id, b.position, err);
    }
    if (w && rc == MDSD_OK)
        rc = mdsd_dump_writer_commit(w, err);
    else if (w)
        mdsd_dump_writer_abort(w);
    block_free(&b);
    free(models);
    free(model_ptr);
    return rc;
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
    size_t samples = o.samples ? o.samples : (o.N + 127) / 128;
    if (o.threads)
        omp_set_num_threads((int)o.threads);
    /* refuse a directory (or unwritable place) before any work; an interrupt
     * removes the temporary dump */
    mdsd_pathset_output(cli_paths(), o.output, "-o");
    if (cli_check_paths(NULL, NULL, &err)) {
        free(list);
        return cli_report("toy", &err);
    }
    mdsd_cleanup_signals("mdsd toy", NULL);
    int rc = write_dump(&o, &toy, names, n_q, dtype, samples, &err);
    if (rc == MDSD_OK) {
        char params[512];
        mdsd_toy_describe(&toy, params, sizeof params);
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
