/* testutil.h - random toy instances and small helpers shared by the tests.
 * Every generator is driven by a caller-owned gsl_rng with a fixed seed. */
#ifndef MDSD_TESTUTIL_H
#define MDSD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>
#include <hdf5.h>

#include "mdsd.h"
#include "check.h"
#include "toy.h"

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

/* A hard pair on V <= 16 tokens, by kind:
 * 0  softmax of logits with gaps up to 40 at T in [0.01, 0.05]: masses down
 *    to subnormal and zero;
 * 1  near-one-hot: 1 - O(1e-12) on one token, the rest spread (or subnormal);
 * 2  exact ties: values from a set of two or three levels;
 * 3  zeros in both, disjoint tails, one subnormal entry. */
void test_hard_pair(gsl_rng *r, unsigned kind, size_t V, double *p, double *q);
#define TEST_HARD_PAIR_KINDS 4

/* A large LLM-like pair (z: V scratch logits): logits quantised to 1/64
 * (ties, and ties up to rounding after the softmax), by kind: moderate
 * temperature; T <= 0.05 with wide gaps (subnormal and zero masses);
 * near-one-hot q; p = q up to a few tokens; zeros in p or q; three levels. */
void test_large_pair(gsl_rng *r, unsigned kind, size_t V, double *z, double *p, double *q);
#define TEST_LARGE_PAIR_KINDS 6

/* The slow reference for alpha*: 1 + min over all 2^V subsets H of
 * p(H) - Q(H), with Q(H) from the enumerated joint (mdsd_joint_Q). V <= 24. */
double test_alpha_star_joint(const double *p, size_t V, const mdsd_joint *D);
/* The same for a scheme (its joint enumerated). */
double test_alpha_star(const double *p, const mdsd_scheme *s);

/* alpha* by bound.h's method m (asserted to succeed, in [0, 1]); the
 * subset into H and the full result into *out where not NULL. */
double test_bound_alpha(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                        mdsd_bound_workspace *ws, unsigned char *H, mdsd_bound_result *out);

/* Monte Carlo of a prepared verifier: `trials` trials, one thread, `seed`. */
mdsd_mc_result test_simulate(const mdsd_verifier *v, uint64_t trials, uint64_t seed);

/* Asserts |estimate - exact| <= 5 binomial standard errors of the exact rate
 * over `trials` trials (+1e-12 for rounding). */
void test_assert_within_5se(double estimate, double exact, uint64_t trials, const char *what);

/* Path of the mdsd binary under test (MDSD_BIN, default ./mdsd). */
const char *test_mdsd_bin(void);

/* Runs `mdsd ARGS` through the shell, captures stdout (and stderr if
 * merge_stderr) into a malloc'd string; returns the exit status. */
int test_run_mdsd(const char *args, int merge_stderr, char **output);

/* Runs a shell command with stderr merged into stdout; captures the output into a
 * malloc'd string; returns the exit status (-1 if it did not exit). */
int test_run_shell(const char *cmd, char **output);

/* test_run_shell that asserts exit status 0 (naming the command and its
 * output); returns the output (malloc'd). */
char *test_shell_ok(const char *cmd);

/* MDSD_BUILD, the build under test (default build/release). */
const char *test_build_dir(void);

/* Whether the build under test is not the sanitizer build: install and Python
 * tests link the release library (a sanitizer build's .so needs its runtime
 * loaded first); otherwise a note naming `suite` on stderr, and 0. */
int test_release_build(const char *suite);

/* A random Markov toy pair on V tokens: each row of p and of q Dirichlet
 * (toy.h), q mixed 4:1 with the uniform law so that no draft mass is 0;
 * m->p and m->q malloc'd. */
void test_toy_markov(mdsd_markov *m, size_t V, uint64_t seed);

/* Writing HDF5 by hand (tree dumps in the tests): a UTF-8 variable-length
 * string attribute, a numeric attribute (n = 0: scalar, else [n]), a dataset
 * [n] (cols = 0) or [n x cols]. */
void test_h5_attr_string(hid_t f, const char *name, const char *value);
void test_h5_attr_int(hid_t f, const char *name, hid_t type, const void *v, hsize_t n);
void test_h5_dataset(hid_t f, const char *name, hid_t type, const void *v, hsize_t n, hsize_t cols);

#endif
