/* blockengine.h - `mdsd block DUMP... --engine-metrics FILE.json`: what a
 * serving engine (vLLM, SGLang) reports for its speculative decoding, read
 * from a small JSON file (data/README.md, "Engine counters"), set beside the
 * toolkit's estimate for the same verifier and policy on each dump and
 * beside the best verifier the job evaluated at that policy, with the gap
 * (toolkit - engine) and its standard error. */
#ifndef MDSD_BLOCKENGINE_H
#define MDSD_BLOCKENGINE_H

#include <stdio.h>

#include "blockjob_impl.h"

/* The file's largest size (it holds a few numbers). */
#define MDSD_ENGINE_MAX_BYTES (1u << 20)

struct mdsd_engine_metrics {
    const char *path;
    char engine[16];           /* "vllm", "sglang", "other" */
    char verifier_given[64];   /* as the file names it */
    char label[256];           /* optional free text ("" = none) */
    mdsd_block_case c;         /* the toolkit's verifier and policy */
    double mal;                /* mean acceptance length (E[tau], bonus token included) */
    double mal_se;             /* its standard error from steps (NAN: no steps) */
    int has_rates;
    double rate[MDSD_BLOCK_MAX_DEPTH + 1];     /* [1..L]: P(at least d accepted) */
    double rate_se[MDSD_BLOCK_MAX_DEPTH + 1];  /* NAN: no steps */
    unsigned long long steps;  /* verification steps counted (0: not given) */
};

/* The comparison of a finished job: per row, whether it is the engine's
 * case (bit 1) and/or the best verifier at the engine's policy on its dump
 * (bit 2). */
struct mdsd_engine_cmp {
    const mdsd_engine_metrics *m;
    unsigned char *role;   /* [n rows] */
    size_t n;
};

/* Reads and checks the file (errors name the file, key and value). */
int mdsd_engine_metrics_read(const char *path, mdsd_engine_metrics *m, mdsd_err *err);
/* Dump t (its cases[nc] as the job makes them) must answer the engine's
 * policy and the job must evaluate the engine's case there. */
int mdsd_engine_check_dump(const mdsd_engine_metrics *m, const mdsd_tree_dump *t,
                           const mdsd_block_case *cases, size_t nc, mdsd_err *err);
/* The roles of rows[n] (cmp->role malloc'd; free with mdsd_engine_cmp_free). */
int mdsd_engine_compare(const mdsd_engine_metrics *m, const mdsd_block_row *rows, size_t n,
                        mdsd_engine_cmp *cmp, mdsd_err *err);
void mdsd_engine_cmp_free(mdsd_engine_cmp *cmp);

/* The CSV's engine columns: the header's tail (",engine,..."), and row i's. */
void mdsd_engine_csv_header(FILE *f);
void mdsd_engine_csv_fields(FILE *f, const mdsd_engine_cmp *cmp, size_t i, const mdsd_block_row *row);
/* The Markdown (latex 0) or LaTeX (1) table of the comparison. */
void mdsd_engine_write_table(FILE *f, int latex, const mdsd_engine_cmp *cmp,
                             const mdsd_block_row *rows, size_t n);

#endif
