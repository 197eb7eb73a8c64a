/* blockmarkov.h - the Markov-toy route of the block job (blockmarkov.c): the
 * library's internal result, which mdsd_block_markov_with copies out for
 * `mdsd block --markov` (its text and JSON) and the API's callers. */
#ifndef MDSD_BLOCKMARKOV_H
#define MDSD_BLOCKMARKOV_H

#include <stdbool.h>

#include <mdsd/block.h>

#include "block.h"
#include "live.h"

typedef struct {
    mdsd_policy pol;
    size_t V;
    const char *route;       /* "exact", "sampled", "simulated" */
    const char *verifier;    /* its name (the library's static string) */
    mdsd_block_result r;
    mdsd_block_result opt;   /* optimal-token, when asked for */
    mdsd_block_live_result live; /* live decoding, when asked for (live_req) */
    bool usage;              /* out: the failure is a refused option */
} mdsd_block_markov_run;

/* live: NULL, or the live-decoding horizon to evaluate besides (exact,
 * token-level verifiers only; *live = 0 is the long run, `--live inf`). */
int mdsd_block_markov_eval(const mdsd_block_markov_opts *o, const size_t *live,
                           mdsd_block_markov_run *out, mdsd_err *err);

#endif
