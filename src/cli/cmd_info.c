/* mdsd info: what a logit dump holds, and with --validate whether every row
 * of it is usable. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: mdsd info DUMP [--validate] [--json]\n"
    "Summarises an HDF5 logit dump (format of data/README.md): format version,\n"
    "rows, samples, V, target and drafter models with their dtype and chunking,\n"
    "and every attribute of '/'. Opening already checks the structure: datasets\n"
    "present, ranks, dtypes, lengths, and V agreeing between target and drafters.\n\n"
    "      --validate  also read every row: logits finite (-inf allowed, not all),\n"
    "                  tokens in [0, V), positions increasing within a sample,\n"
    "                  samples contiguous; names the first bad row\n"
    "      --json      print one JSON object\n"
    "  -h, --help      this help\n"
    "\nExit status 1 (with the problem named) if the dump is unreadable or invalid.\n"
    "JSON keys: file, format, rows, samples, max_sample_rows, V, creator, created,\n"
    "dataset, tokenizer, generation_temperature (null if absent), target and\n"
    "drafts[] ({name, model, vocab_size, dropped_padding, dtype, chunk_rows,\n"
    "gzip, truncated_rows, max_missing_mass}; -1 = attribute absent), attributes ({name: value as text}),\n"
    "validated (true, or false without --validate).\n";

static void print_model(const mdsd_dump_model *m)
{
    printf("  %-12s model '%s', vocab_size ", m->name, m->model);
    if (m->vocab_size >= 0)
        printf("%lld", m->vocab_size);
    else
        printf("(absent)");
    if (m->dropped_padding >= 0)
        printf(", dropped_padding %lld", m->dropped_padding);
    printf(", %s, ", mdsd_dtype_name(m->dtype));
    if (m->chunk_rows)
        printf("chunks of %zu rows", m->chunk_rows);
    else
        printf("contiguous");
    if (m->gzip)
        printf(", gzip %d", m->gzip);
    printf("\n");
    if (m->truncated_rows)
        printf("  %-12s %zu truncated top-k rows (missing mass up to %.3g): only `mdsd table -t 1 -s "
               "iid -v none` reads them (certified intervals of alpha*)\n",
               "", m->truncated_rows, m->max_missing_mass);
}

static void print_text(const mdsd_dump *d, int validated)
{
    printf("file          %s\n", d->path);
    printf("format        %d\n", d->format);
    printf("rows          %zu\n", d->N);
    printf("samples       %zu (longest %zu rows)\n", d->n_samples, d->max_sample_rows);
    printf("V             %zu\n", d->V);
    printf("target:\n");
    print_model(&d->target);
    printf("drafts (%zu):\n", d->n_drafts);
    for (size_t j = 0; j < d->n_drafts; j++)
        print_model(&d->drafts[j]);
    printf("attributes:\n");
    for (size_t k = 0; k < d->n_attrs; k++)
        printf("  %-22s %s\n", d->attrs[k].name, d->attrs[k].value);
    if (validated)
        printf("valid         yes: all %zu rows of the target and %zu drafter%s checked\n", d->N,
               d->n_drafts, d->n_drafts == 1 ? "" : "s");
}

static void json_model(mdsd_json *j, const mdsd_dump_model *m)
{
    mdsd_json_object_begin(j);
    mdsd_json_kv_string(j, "name", m->name);
    mdsd_json_kv_string(j, "model", m->model);
    mdsd_json_kv_integer(j, "vocab_size", m->vocab_size);
    mdsd_json_kv_integer(j, "dropped_padding", m->dropped_padding);
    mdsd_json_kv_string(j, "dtype", mdsd_dtype_name(m->dtype));
    mdsd_json_kv_integer(j, "chunk_rows", (long long)m->chunk_rows);
    mdsd_json_kv_integer(j, "gzip", m->gzip);
    mdsd_json_kv_integer(j, "truncated_rows", (long long)m->truncated_rows);
    mdsd_json_kv_number(j, "max_missing_mass", m->max_missing_mass);
    mdsd_json_object_end(j);
}

static void print_json(const mdsd_dump *d, int validated)
{
    mdsd_json j;
    mdsd_json_init(&j, stdout);
    mdsd_json_object_begin(&j);
    mdsd_json_kv_string(&j, "file", d->path);
    mdsd_json_kv_integer(&j, "format", d->format);
    mdsd_json_kv_integer(&j, "rows", (long long)d->N);
    mdsd_json_kv_integer(&j, "samples", (long long)d->n_samples);
    mdsd_json_kv_integer(&j, "max_sample_rows", (long long)d->max_sample_rows);
    mdsd_json_kv_integer(&j, "V", (long long)d->V);
    mdsd_json_kv_string(&j, "creator", d->creator);
    mdsd_json_kv_string(&j, "created", d->created);
    mdsd_json_kv_string(&j, "dataset", d->dataset);
    mdsd_json_kv_string(&j, "tokenizer", d->tokenizer);
    mdsd_json_kv_number(&j, "generation_temperature", d->generation_temperature);
    mdsd_json_key(&j, "target");
    json_model(&j, &d->target);
    mdsd_json_key(&j, "drafts");
    mdsd_json_array_begin(&j);
    for (size_t k = 0; k < d->n_drafts; k++)
        json_model(&j, &d->drafts[k]);
    mdsd_json_array_end(&j);
    mdsd_json_key(&j, "attributes");
    mdsd_json_object_begin(&j);
    for (size_t k = 0; k < d->n_attrs; k++)
        mdsd_json_kv_string(&j, d->attrs[k].name, d->attrs[k].value);
    mdsd_json_object_end(&j);
    mdsd_json_kv_bool(&j, "validated", validated);
    mdsd_json_object_end(&j);
}

static void progress(size_t done, size_t N, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "\rmdsd info: validating %zu / %zu rows", done, N);
    if (done == N)
        fprintf(stderr, "\n");
}

int cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {{"validate", no_argument, NULL, 'v'},
                                             {"json", no_argument, NULL, CLI_OPT_JSON},
                                             {"help", no_argument, NULL, 'h'},
                                             {0, 0, 0, 0}};
    int validate = 0, json = 0, opt;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'v': validate = 1; break;
        case CLI_OPT_JSON: json = 1; break;
        case 'h': fputs(usage_text, stdout); return CLI_EXIT_OK;
        default: return cli_usage_error("info", "unrecognised option");
        }
    }
    if (optind + 1 != argc)
        return cli_usage_error("info", optind == argc ? "missing DUMP" : "give exactly one DUMP");
    mdsd_err err;
    mdsd_err_clear(&err);
    mdsd_dump *d;
    mdsd_pathset_dump(cli_paths(), argv[optind]);
    if (cli_check_paths(NULL, NULL, &err) || mdsd_dump_open_truncated(argv[optind], &d, &err))
        return cli_report("info", &err);
    int rc = MDSD_OK;
    if (validate)
        rc = mdsd_dump_validate(d, isatty(STDERR_FILENO) ? progress : NULL, NULL, &err);
    if (rc && isatty(STDERR_FILENO))
        fprintf(stderr, "\n");
    if (rc == MDSD_OK) {
        if (json)
            print_json(d, validate);
        else
            print_text(d, validate);
    }
    mdsd_dump_close(d);
    return rc ? cli_report("info", &err) : CLI_EXIT_OK;
}
