/* testutil.h - random toy instances and small helpers shared by the tests.
 * Every generator is driven by a caller-owned gsl_rng with a fixed seed. */
#ifndef MDSD_TESTUTIL_H
#define MDSD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "../src/mdsd.h"

/* Families of toy distributions used across the suites. */
typedef enum {
    TOY_DIRICHLET,     /* Dirichlet(alpha) with alpha drawn in [0.2, 2] */
    TOY_SOFTMAX,       /* softmax(N(0, 2^2) logits / T), T in [0.3, 2] */
    TOY_SPARSE,        /* Dirichlet with a random subset of entries zeroed */
    TOY_ONE_HOT,       /* a single token */
    TOY_FAMILY_COUNT
} toy_family;

/* Fills p[0..V) with a random distribution of the family. */
void toy_distribution(gsl_rng *r, toy_family family, size_t V, double *p);

/* Fills p and q with a random pair; `kind` cycles through: independent
 * families, p = q, one-hot q, disjoint supports, zeros in p and in q. */
void toy_pair(gsl_rng *r, unsigned kind, size_t V, double *p, double *q);
#define TOY_PAIR_KINDS 6

/* Path of the mdsd binary under test (MDSD_BIN, default ./mdsd). */
const char *test_mdsd_bin(void);

/* Runs `mdsd ARGS` through the shell, captures stdout (and stderr if
 * merge_stderr) into a malloc'd string; returns the exit status. */
int test_run_mdsd(const char *args, int merge_stderr, char **output);

#endif
