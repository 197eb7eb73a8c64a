#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

static void normalise(double *p, size_t V)
{
    double s = 0.0;
    for (size_t i = 0; i < V; i++)
        s += p[i];
    for (size_t i = 0; i < V; i++)
        p[i] /= s;
}

static void dirichlet(gsl_rng *r, size_t V, double *p)
{
    double a = 0.2 + 1.8 * gsl_rng_uniform(r);
    for (size_t i = 0; i < V; i++)
        p[i] = gsl_ran_gamma(r, a, 1.0) + 1e-300;
    normalise(p, V);
}

void toy_distribution(gsl_rng *r, toy_family family, size_t V, double *p)
{
    switch (family) {
    case TOY_DIRICHLET:
        dirichlet(r, V, p);
        break;
    case TOY_SOFTMAX: {
        double T = 0.3 + 1.7 * gsl_rng_uniform(r);
        for (size_t i = 0; i < V; i++)
            p[i] = gsl_ran_gaussian(r, 2.0);
        mdsd_softmax(p, V, T, p, "toy", NULL);
        break;
    }
    case TOY_SPARSE: {
        dirichlet(r, V, p);
        size_t keep = gsl_rng_uniform_int(r, V);
        for (size_t i = 0; i < V; i++)
            if (i != keep && gsl_rng_uniform(r) < 0.4)
                p[i] = 0.0;
        normalise(p, V);
        break;
    }
    case TOY_ONE_HOT:
    default: {
        size_t k = gsl_rng_uniform_int(r, V);
        for (size_t i = 0; i < V; i++)
            p[i] = i == k;
        break;
    }
    }
}

void toy_pair(gsl_rng *r, unsigned kind, size_t V, double *p, double *q)
{
    switch (kind % TOY_PAIR_KINDS) {
    case 0:
        toy_distribution(r, TOY_DIRICHLET, V, p);
        toy_distribution(r, TOY_SOFTMAX, V, q);
        break;
    case 1:
        toy_distribution(r, TOY_SOFTMAX, V, p);
        memcpy(q, p, V * sizeof *q);
        break;
    case 2:
        toy_distribution(r, TOY_DIRICHLET, V, p);
        toy_distribution(r, TOY_ONE_HOT, V, q);
        break;
    case 3: { /* disjoint supports: p on the lower half, q on the upper */
        size_t half = V / 2 ? V / 2 : 1;
        for (size_t i = 0; i < V; i++) {
            p[i] = i < half ? 0.1 + gsl_rng_uniform(r) : 0.0;
            q[i] = i >= half || half == V ? 0.1 + gsl_rng_uniform(r) : 0.0;
        }
        normalise(p, V);
        normalise(q, V);
        break;
    }
    case 4:
        toy_distribution(r, TOY_SPARSE, V, p);
        toy_distribution(r, TOY_SPARSE, V, q);
        break;
    default:
        toy_distribution(r, TOY_DIRICHLET, V, p);
        toy_distribution(r, TOY_DIRICHLET, V, q);
        break;
    }
}

/* test_hard_pair (testutil.h): a hard pair on V tokens, by kind:
 * 0  softmax of logits with gaps up to 40 at T in [0.01, 0.05]: masses down
 *    to subnormal and zero;
 * 1  near-one-hot: 1 - O(1e-12) on one token, the rest spread (or subnormal);
 * 2  exact ties: values from a set of two or three levels;
 * 3  zeros in both, disjoint tails, one subnormal entry. */
void test_hard_pair(gsl_rng *r, unsigned kind, size_t V, double *p, double *q)
{
    double logits[16];
    switch (kind % 4) {
    case 0:
        for (int w = 0; w < 2; w++) {
            double T = 0.01 + 0.04 * gsl_rng_uniform(r), at = 0.0;
            for (size_t x = 0; x < V; x++) {
                at -= gsl_rng_uniform(r) < 0.3 ? 0.0 : 40.0 * gsl_rng_uniform(r);
                logits[x] = gsl_rng_uniform(r) < 0.1 ? -INFINITY : at;
            }
            logits[gsl_rng_uniform_int(r, V)] = 0.0; /* at least one finite logit */
            mdsd_softmax(logits, V, T, w ? q : p, "hard", NULL);
        }
        break;
    case 1:
        for (int w = 0; w < 2; w++) {
            double *d = w ? q : p, tiny = gsl_rng_uniform(r) < 0.5 ? 1e-12 : 1e-310;
            size_t top = gsl_rng_uniform_int(r, V);
            double rest = 0.0;
            for (size_t x = 0; x < V; x++)
                if (x != top)
                    rest += d[x] = tiny * gsl_rng_uniform(r);
            d[top] = 1.0 - rest;
        }
        break;
    case 2:
        for (int w = 0; w < 2; w++) {
            double *d = w ? q : p, levels[3] = {1.0, 2.0, 0.0}, s = 0.0;
            for (size_t x = 0; x < V; x++)
                s += d[x] = levels[gsl_rng_uniform_int(r, 2 + (w == 0))];
            if (s == 0.0)
                d[0] = s = 1.0;
            for (size_t x = 0; x < V; x++)
                d[x] /= s;
        }
        break;
    default:
        toy_pair(r, 3 + gsl_rng_uniform_int(r, 3), V, p, q);
        q[gsl_rng_uniform_int(r, V)] += 4e-320;
        {
            double s = 0.0;
            for (size_t x = 0; x < V; x++)
                s += q[x];
            for (size_t x = 0; x < V; x++)
                q[x] /= s;
        }
        break;
    }
}

const char *test_mdsd_bin(void)
{
    const char *bin = getenv("MDSD_BIN");
    return bin && *bin ? bin : "./mdsd";
}

int test_run_mdsd(const char *args, int merge_stderr, char **output)
{
    size_t len = strlen(test_mdsd_bin()) + strlen(args) + 32;
    char *cmd = malloc(len);
    snprintf(cmd, len, "%s %s%s", test_mdsd_bin(), args, merge_stderr ? " 2>&1" : " 2>/dev/null");
    FILE *f = popen(cmd, "r");
    free(cmd);
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    size_t got;
    while (f && (got = fread(buf + used, 1, cap - used - 1, f)) > 0) {
        used += got;
        if (cap - used < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[used] = '\0';
    int status = f ? pclose(f) : -1;
    *output = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int test_run_shell(const char *cmd, char **output)
{
    size_t len = strlen(cmd) + 16;
    char *full = malloc(len);
    snprintf(full, len, "( %s ) 2>&1", cmd);
    FILE *f = popen(full, "r");
    free(full);
    size_t cap = 8192, used = 0, got;
    char *buf = malloc(cap);
    while (f && (got = fread(buf + used, 1, cap - used - 1, f)) > 0) {
        used += got;
        if (cap - used < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[used] = '\0';
    int status = f ? pclose(f) : -1;
    *output = buf;
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *test_shell_ok(const char *cmd)
{
    char *out;
    int rc = test_run_shell(cmd, &out);
    cr_assert_eq(rc, 0, "`%s` exited %d:\n%s", cmd, rc, out);
    return out;
}

const char *test_build_dir(void)
{
    const char *b = getenv("MDSD_BUILD");
    return b && *b ? b : "build/release";
}

int test_release_build(const char *suite)
{
    if (!strstr(test_build_dir(), "sanitize"))
        return 1;
    /* a note, not cr_log_warn: Criterion exits 1 after a logged warning */
    fprintf(stderr, "%s: install and Python tests run in the release build only\n", suite);
    return 0;
}

void test_toy_markov(mdsd_markov *m, size_t V, uint64_t seed)
{
    gsl_rng *r = mdsd_rng_alloc(seed);
    m->V = V;
    m->p = malloc(V * V * sizeof *m->p);
    m->q = malloc(V * V * sizeof *m->q);
    for (size_t i = 0; i < V * V; i += V) {
        toy_distribution(r, TOY_DIRICHLET, V, m->p + i);
        toy_distribution(r, TOY_DIRICHLET, V, m->q + i);
        for (size_t x = 0; x < V; x++)
            m->q[i + x] = 0.8 * m->q[i + x] + 0.2 / (double)V;
    }
    gsl_rng_free(r);
}

double test_alpha_star_joint(const double *p, size_t V, const mdsd_joint *D)
{
    cr_assert_leq(V, 24, "the subset reference enumerates 2^V subsets");
    unsigned char in_H[24];
    double best = 0.0; /* H = empty set */
    for (unsigned long mask = 1; mask < (1ul << V); mask++) {
        double pH = 0.0;
        for (size_t v = 0; v < V; v++) {
            in_H[v] = (mask >> v) & 1;
            pH += in_H[v] ? p[v] : 0.0;
        }
        double gap = pH - mdsd_joint_Q(D, in_H);
        if (gap < best)
            best = gap;
    }
    return 1.0 + best;
}

double test_alpha_star(const double *p, const mdsd_scheme *s)
{
    mdsd_joint D;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_scheme_joint(s, MDSD_JOINT_MAX_TUPLES, &D, &err), MDSD_OK, "%s", err.msg);
    double a = test_alpha_star_joint(p, s->V, &D);
    mdsd_joint_free(&D);
    return a;
}

mdsd_mc_result test_simulate(const mdsd_verifier *v, uint64_t trials, uint64_t seed)
{
    mdsd_mc_opts o;
    mdsd_mc_opts_init(&o);
    o.trials = trials;
    o.seed = seed;
    o.threads = 1;
    mdsd_mc_result res;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_mc_run(v, &o, &res, &err), MDSD_OK, "%s", err.msg);
    return res;
}

void test_assert_within_5se(double estimate, double exact, uint64_t trials, const char *what)
{
    double se = sqrt(fmax(exact * (1.0 - exact), 0.0) / (double)trials);
    cr_assert_leq(fabs(estimate - exact), 5.0 * se + 1e-12,
                  "%s: Monte Carlo %.6f vs exact %.6f (5 SE = %.2g)", what, estimate, exact,
                  5.0 * se);
}

void test_h5_attr_string(hid_t f, const char *name, const char *value)
{
    hid_t ty = H5Tcopy(H5T_C_S1);
    H5Tset_size(ty, H5T_VARIABLE);
    H5Tset_cset(ty, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, ty, &value);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(ty);
}

void test_h5_attr_int(hid_t f, const char *name, hid_t type, const void *v, hsize_t n)
{
    hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, v);
    H5Aclose(a);
    H5Sclose(sp);
}

void test_h5_dataset(hid_t f, const char *name, hid_t type, const void *v, hsize_t n, hsize_t cols)
{
    hsize_t dims[2] = {n, cols};
    hid_t sp = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(sp);
}

/* test_large_pair (testutil.h): a large LLM-like pair: logits quantised to 1/64 (ties, and ties up to
 * rounding after the softmax), by kind: moderate temperature; T <= 0.05 with
 * wide gaps (subnormal and zero masses); near-one-hot q; p = q up to a few
 * tokens; zeros in p or q; three exact levels. */
void test_large_pair(gsl_rng *r, unsigned kind, size_t V, double *z, double *p, double *q)
{
    for (int w = 0; w < 2; w++) {
        double *d = w ? q : p;
        double T = kind % 6 == 1 ? 0.01 + 0.04 * gsl_rng_uniform(r) : 0.3 + 1.5 * gsl_rng_uniform(r);
        for (size_t x = 0; x < V; x++) {
            double v = kind % 6 == 1 ? -40.0 * gsl_rng_uniform(r) * gsl_rng_uniform(r)
                                     : gsl_ran_gaussian(r, 2.0);
            if (kind % 6 == 5)
                v = (double)gsl_rng_uniform_int(r, 3);
            z[x] = round(v * 64.0) / 64.0;
            if (kind % 6 == 4 && gsl_rng_uniform(r) < 0.2)
                z[x] = -INFINITY;
        }
        if (kind % 6 == 2 && w)
            z[gsl_rng_uniform_int(r, V)] += 60.0; /* near-one-hot q */
        z[gsl_rng_uniform_int(r, V)] = 1.0;       /* at least one finite logit */
        mdsd_softmax(z, V, T, d, "large", NULL);
        if (kind % 6 == 3 && w) { /* q = p but for a few tokens */
            memcpy(q, p, V * sizeof *q);
            for (int k = 0; k < 5; k++)
                q[gsl_rng_uniform_int(r, V)] *= 1.5;
            double s = 0.0;
            for (size_t x = 0; x < V; x++)
                s += q[x];
            for (size_t x = 0; x < V; x++)
                q[x] /= s;
        }
    }
}

/* mdsd_bound_alpha by method m, asserted to succeed and lie in [0, 1]. */
double test_bound_alpha(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                       mdsd_bound_workspace *ws, unsigned char *H, mdsd_bound_result *out)
{
    mdsd_bound_result res = {0};
    res.subset = H;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_bound_alpha(p, s, m, NULL, ws, &res, &err);
    cr_assert_eq(rc, MDSD_OK, "%s on %s (V = %zu, n = %zu): %s", mdsd_bound_method_name(m),
                 mdsd_scheme_name(s->kind), s->V, s->n, err.msg);
    cr_assert(res.alpha >= 0.0 && res.alpha <= 1.0);
    if (out)
        *out = res;
    return res.alpha;
}
