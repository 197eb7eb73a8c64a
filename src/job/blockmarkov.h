/* blockmarkov.h - the Markov-toy route of the block job (blockmarkov.c), as
 * `mdsd block --markov` runs it: the library's internal result, which the
 * CLI prints (its text and JSON) and mdsd_block_markov copies out. */
#ifndef MDSD_BLOCKMARKOV_H
#define MDSD_BLOCKMARKOV_H

#include <stdbool.h>

#include <mdsd/block.h>

#include "block.h"

typedef struct {
    mdsd_policy pol;
    size_t V;
    const char *route;       /* "exact", "sampled", "simulated" */
    const char *verifier;    /* its name (static, or the options' text) */
    mdsd_block_result r;
    mdsd_block_result opt;   /* optimal-token, when asked for */
    bool usage;              /* out: the failure is a refused option */
} mdsd_block_markov_run;

int mdsd_block_markov_eval(const mdsd_block_markov_opts *o, mdsd_block_markov_run *out,
                           mdsd_err *err);

#endif
