/* The LPs of MATH.md section 2: full OTM LP = reduced LP = subset selection
 * (computed here by enumerating all 2^V subsets, an independent route), the
 * rational simplex, the optimal plan, the MathProg models through glpsol,
 * the CPLEX/MPS export, the size guard and `mdsd lp`. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <glpk.h>

#include "glpk_solve.h"
#include "testutil.h"

#define LP_TOL 1e-7

/* A random custom joint: a few random tuples with Dirichlet-like masses. */
static void random_custom(gsl_rng *r, size_t V, size_t n, mdsd_joint *D)
{
    size_t count = 1 + gsl_rng_uniform_int(r, 12);
    D->n = n;
    D->count = count;
    D->tokens = malloc(count * n * sizeof *D->tokens);
    D->prob = malloc(count * sizeof *D->prob);
    toy_distribution(r, gsl_rng_uniform(r) < 0.5 ? TOY_DIRICHLET : TOY_SPARSE, count, D->prob);
    for (size_t i = 0; i < count * n; i++)
        D->tokens[i] = (int)gsl_rng_uniform_int(r, V);
    cr_assert_eq(mdsd_joint_validate(D, V, NULL), MDSD_OK);
    cr_assert_eq(mdsd_joint_sort(D, NULL), MDSD_OK);
}

typedef struct {
    size_t V, n;
    mdsd_scheme_kind kind;
    double p[16], q[4 * 16];
    mdsd_joint custom;
    mdsd_joint D;
} instance;

/* Draws instance number i; returns false when the scheme does not apply. */
static bool random_instance(gsl_rng *r, unsigned i, instance *in)
{
    memset(in, 0, sizeof *in);
    in->V = 2 + gsl_rng_uniform_int(r, 5);
    in->n = 1 + gsl_rng_uniform_int(r, 4);
    in->kind = (mdsd_scheme_kind)(i % MDSD_SCHEME_COUNT);
    if (in->kind == MDSD_SCHEME_HUB)
        in->n = 2;
    toy_pair(r, i / MDSD_SCHEME_COUNT, in->V, in->p, in->q);
    if (in->kind == MDSD_SCHEME_MULTI)
        for (size_t j = 1; j < in->n; j++)
            toy_pair(r, i + j, in->V, in->q + j * in->V, in->q + j * in->V);
    mdsd_scheme s = {in->kind, in->n, in->V, in->q, NULL};
    if (in->kind == MDSD_SCHEME_CUSTOM) {
        random_custom(r, in->V, in->n, &in->custom);
        s.custom = &in->custom;
    }
    if (mdsd_scheme_check(&s, NULL) != MDSD_OK) {
        mdsd_joint_free(&in->custom);
        return false;
    }
    mdsd_err err;
    cr_assert_eq(mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &in->D, &err), MDSD_OK, "%s", err.msg);
    return true;
}

static void instance_free(instance *in)
{
    mdsd_joint_free(&in->D);
    mdsd_joint_free(&in->custom);
}

static double solve(bool reduced, const instance *in, const mdsd_lp_opts *opts,
                    mdsd_lp_result *res)
{
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = (reduced ? mdsd_lp_reduced : mdsd_lp_full)(in->p, in->V, &in->D, opts, res, &err);
    cr_assert_eq(rc, MDSD_OK, "%s LP (%s, V = %zu, n = %zu, q = %.17g %.17g %.17g %.17g %.17g %.17g): %s", reduced ? "reduced" : "full",
                 mdsd_scheme_name(in->kind), in->V, in->n, in->q[0], in->q[1], in->q[2], in->q[3], in->q[4], in->q[5], err.msg);
    return res->alpha;
}

Test(lp, full_reduced_and_subset_selection_agree, .timeout = 60)
{
    gsl_rng *r = mdsd_rng_alloc(31);
    unsigned solved = 0, per_kind[MDSD_SCHEME_COUNT] = {0};
    double worst = 0.0;
    for (unsigned i = 0; solved < 420; i++) {
        instance in;
        if (!random_instance(r, i, &in))
            continue;
        mdsd_lp_result full, red;
        double a_full = solve(false, &in, NULL, &full);
        double a_red = solve(true, &in, NULL, &red);
        double a_sub = test_alpha_star_joint(in.p, in.V, &in.D);
        cr_assert(a_full >= 0.0 && a_full <= 1.0 && a_red >= 0.0 && a_red <= 1.0);
        cr_assert_float_eq(a_full, a_sub, LP_TOL, "instance %u (%s, V = %zu, n = %zu): full %.12g, subset %.12g",
                           i, mdsd_scheme_name(in.kind), in.V, in.n, a_full, a_sub);
        cr_assert_float_eq(a_red, a_sub, LP_TOL, "instance %u (%s, V = %zu, n = %zu): reduced %.12g, subset %.12g",
                           i, mdsd_scheme_name(in.kind), in.V, in.n, a_red, a_sub);
        cr_assert_eq(full.vars, in.V * in.D.count);
        cr_assert_eq(full.vars, mdsd_lp_full_vars(in.V, &in.D));
        size_t vars, sets;
        cr_assert_eq(mdsd_lp_reduced_size(&in.D, &vars, &sets, NULL), MDSD_OK);
        cr_assert_eq(red.vars, vars);
        cr_assert(sets <= in.D.count && vars <= full.vars);
        worst = fmax(worst, fmax(fabs(a_full - a_sub), fabs(a_red - a_sub)));
        per_kind[in.kind]++;
        solved++;
        instance_free(&in);
    }
    for (int k = 0; k < MDSD_SCHEME_COUNT; k++)
        cr_assert_geq(per_kind[k], 20, "scheme %s: only %u instances", mdsd_scheme_name(k), per_kind[k]);
    cr_log_info("full = reduced = subset selection on %u instances, worst error %.3g", solved, worst);
    gsl_rng_free(r);
}

/* A hand-checked instance: p = (1/2, 1/2, 0), iid q = (0, 0, 1) can never be
 * accepted; with q = p and n = 1 everything is accepted. */
Test(lp, known_values)
{
    instance in = {.V = 3, .n = 2, .kind = MDSD_SCHEME_IID, .p = {0.5, 0.5, 0.0}, .q = {0, 0, 1}};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 3, in.q, NULL};
    cr_assert_eq(mdsd_scheme_joint(&s, 100, &in.D, NULL), MDSD_OK);
    mdsd_lp_result res;
    cr_assert_float_eq(solve(false, &in, NULL, &res), 0.0, 1e-12);
    cr_assert_float_eq(solve(true, &in, NULL, &res), 0.0, 1e-12);
    mdsd_joint_free(&in.D);
    /* Bernoulli closed form (SpecTr): b = 0.3, a = 0.6, n = 2:
     * min(b, 1 - (1-a)^2) + min(1 - b, 1 - a^2) = 0.3 + 0.64 = 0.94. */
    double pb[2] = {0.3, 0.7}, qb[2] = {0.6, 0.4};
    memcpy(in.p, pb, sizeof pb);
    mdsd_scheme sb = {MDSD_SCHEME_IID, 2, 2, qb, NULL};
    in.V = 2;
    cr_assert_eq(mdsd_scheme_joint(&sb, 100, &in.D, NULL), MDSD_OK);
    cr_assert_float_eq(solve(false, &in, NULL, &res), 0.94, 1e-12);
    cr_assert_float_eq(solve(true, &in, NULL, &res), 0.94, 1e-12);
    mdsd_joint_free(&in.D);
}

Test(lp, exact_arithmetic_agrees_with_simplex, .timeout = 60)
{
    gsl_rng *r = mdsd_rng_alloc(32);
    mdsd_lp_opts exact = {.exact_arith = true};
    unsigned solved = 0;
    for (unsigned i = 0; solved < 60; i++) {
        instance in;
        if (!random_instance(r, i, &in))
            continue;
        mdsd_lp_result a, b;
        for (int reduced = 0; reduced < 2; reduced++) {
            double simplex = solve(reduced, &in, NULL, &a);
            double rational = solve(reduced, &in, &exact, &b);
            cr_assert_float_eq(simplex, rational, 1e-9, "instance %u %s: simplex %.17g, exact %.17g", i,
                               reduced ? "reduced" : "full", simplex, rational);
        }
        solved++;
        instance_free(&in);
    }
    gsl_rng_free(r);
}

Test(lp, optimal_plan_is_a_coupling_with_alpha_accepted, .timeout = 60)
{
    gsl_rng *r = mdsd_rng_alloc(33);
    mdsd_lp_opts opts = {.want_plan = true};
    unsigned solved = 0;
    for (unsigned i = 0; solved < 80; i++) {
        instance in;
        if (!random_instance(r, i, &in))
            continue;
        mdsd_lp_result res;
        solve(false, &in, &opts, &res);
        cr_assert_not_null(res.plan);
        size_t V = in.V, T = in.D.count;
        double accepted = 0.0;
        for (size_t t = 0; t < T; t++) {
            double row = 0.0;
            for (size_t y = 0; y < V; y++) {
                double v = res.plan[t * V + y];
                cr_assert(v >= 0.0);
                row += v;
                for (size_t j = 0; j < in.D.n; j++)
                    if (in.D.tokens[t * in.D.n + j] == (int)y) {
                        accepted += v;
                        break;
                    }
            }
            cr_assert_float_eq(row, in.D.prob[t], LP_TOL, "instance %u tuple %zu", i, t);
        }
        for (size_t y = 0; y < V; y++) {
            double col = 0.0;
            for (size_t t = 0; t < T; t++)
                col += res.plan[t * V + y];
            cr_assert_float_eq(col, in.p[y], LP_TOL, "instance %u token %zu", i, y);
        }
        cr_assert_float_eq(accepted, res.alpha, LP_TOL, "instance %u", i);
        mdsd_lp_result_free(&res);
        cr_assert_null(res.plan);
        solved++;
        instance_free(&in);
    }
    gsl_rng_free(r);
}

Test(lp, size_guard_refuses_with_the_count_and_a_method)
{
    double q[40], p[40];
    for (int i = 0; i < 40; i++)
        p[i] = q[i] = 1.0 / 40;
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 40, q, NULL};
    instance in = {.V = 40, .n = 3};
    memcpy(in.p, p, 16 * sizeof *p); /* unused: the guard fires first */
    cr_assert_eq(mdsd_scheme_joint(&s, MDSD_JOINT_MAX_TUPLES, &in.D, NULL), MDSD_OK);
    mdsd_lp_opts opts = {.max_vars = 100000};
    mdsd_lp_result res;
    mdsd_err err;
    cr_assert_eq(mdsd_lp_full(p, 40, &in.D, &opts, &res, &err), MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "2560000 variables") && strstr(err.msg, "`method sort`") &&
              strstr(err.msg, "lp-reduced"), "%s", err.msg);
    cr_assert_eq(res.vars, 2560000);
    cr_assert_null(res.plan);
    opts.max_vars = 1000;
    /* sets of size 1, 2, 3: 40 + 2*780 + 3*9880 = 31240 variables */
    cr_assert_eq(mdsd_lp_reduced(p, 40, &in.D, &opts, &res, &err), MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "31240 variables") && strstr(err.msg, "`method sort`"), "%s", err.msg);
    mdsd_joint_free(&in.D);
}

Test(lp, bad_input_is_refused)
{
    double p[3] = {0.5, 0.5, 0.0}, bad[3] = {0.5, 0.6, 0.0};
    int tokens[2] = {0, 3};
    double prob[1] = {1.0};
    mdsd_joint D = {2, 1, tokens, prob};
    mdsd_lp_result res;
    mdsd_err err;
    cr_assert_eq(mdsd_lp_full(p, 3, &D, NULL, &res, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "token 3 is outside [0, 3)"), "%s", err.msg);
    tokens[1] = 2;
    cr_assert_eq(mdsd_lp_reduced(bad, 3, &D, NULL, &res, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "sums to 1.1"), "%s", err.msg);
    cr_assert_eq(mdsd_lp_full(p, 3, &D, NULL, &res, &err), MDSD_OK);
}

/* ---------------------------------------------------------------------------
 * The MathProg models through glpsol, and the CPLEX LP / MPS export. */

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/mdsd-test-lp-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

/* Runs glpsol on model + data and parses its "alpha* = v" line. */
static double glpsol_alpha(const char *model, const char *data)
{
    char cmd[512], line[512];
    snprintf(cmd, sizeof cmd, "glpsol -m '%s' -d '%s' 2>&1", model, data);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    double alpha = NAN;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "alpha* = ", 9))
            alpha = strtod(line + 9, NULL);
    int status = pclose(f);
    cr_assert_eq(status, 0, "glpsol failed on %s with %s", model, data);
    cr_assert(!isnan(alpha), "no 'alpha* = ' line from glpsol on %s", data);
    return alpha;
}

/* GLPK's default simplex settings, silent. */
static glp_smcp quiet_smcp(void)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    return parm;
}

/* Re-reads an exported LP with GLPK's readers and solves it. */
static double reread_alpha(const char *path, mdsd_lp_format format)
{
    glp_prob *P = glp_create_prob();
    glp_term_out(GLP_OFF);
    int rc = format == MDSD_LP_FORMAT_MPS ? glp_read_mps(P, GLP_MPS_FILE, NULL, path)
                                          : glp_read_lp(P, NULL, path);
    cr_assert_eq(rc, 0, "GLPK cannot read back %s", path);
    glp_smcp parm = quiet_smcp();
    cr_assert_eq(glp_simplex(P, &parm), 0);
    cr_assert_eq(glp_get_status(P), GLP_OPT);
    /* the MPS file minimises -alpha */
    double alpha = format == MDSD_LP_FORMAT_MPS ? -glp_get_obj_val(P) : glp_get_obj_val(P);
    if (format == MDSD_LP_FORMAT_MPS)
        cr_assert_eq(glp_get_obj_dir(P), GLP_MIN);
    glp_delete_prob(P);
    glp_term_out(GLP_ON);
    return alpha;
}

Test(lp, glpsol_models_and_exports_agree_with_the_c_solver, .timeout = 60)
{
    make_tmpdir();
    gsl_rng *r = mdsd_rng_alloc(34);
    unsigned solved = 0;
    const char *models[2] = {"lp/otm_full.mod", "lp/otm_reduced.mod"};
    for (unsigned i = 0; solved < 14; i++) {
        instance in;
        if (!random_instance(r, i, &in))
            continue;
        for (int reduced = 0; reduced < 2; reduced++) {
            mdsd_lp_result res;
            double a = solve(reduced, &in, NULL, &res);
            char path[128];
            mdsd_err err;
            snprintf(path, sizeof path, "%s/inst%u_%d.dat", tmpdir, i, reduced);
            cr_assert_eq(mdsd_lp_write(in.p, in.V, &in.D, reduced, MDSD_LP_FORMAT_MATHPROG_DATA,
                                       path, &err), MDSD_OK, "%s", err.msg);
            double g = glpsol_alpha(models[reduced], path);
            cr_assert_float_eq(a, g, LP_TOL, "instance %u (%s): C %.12g, glpsol %s %.12g", i,
                               mdsd_scheme_name(in.kind), a, models[reduced], g);
            mdsd_lp_format formats[2] = {MDSD_LP_FORMAT_CPLEX, MDSD_LP_FORMAT_MPS};
            for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof path, "%s/inst%u_%d.%s", tmpdir, i, reduced, k ? "mps" : "lp");
                cr_assert_eq(mdsd_lp_write(in.p, in.V, &in.D, reduced, formats[k], path, &err),
                             MDSD_OK, "%s", err.msg);
                double e = reread_alpha(path, formats[k]);
                cr_assert_float_eq(a, e, LP_TOL, "instance %u: C %.12g, re-read %s %.12g", i, a, path, e);
            }
        }
        solved++;
        instance_free(&in);
    }
    gsl_rng_free(r);
    remove_tmpdir();
}

Test(lp, export_to_an_unwritable_place_fails_cleanly)
{
    double p[2] = {0.5, 0.5};
    int tokens[2] = {0, 1};
    double prob[1] = {1.0};
    mdsd_joint D = {2, 1, tokens, prob};
    mdsd_err err;
    for (int f = 0; f < 3; f++) {
        int rc = mdsd_lp_write(p, 2, &D, f == 1, (mdsd_lp_format)f, "/nonexistent-dir/x.lp", &err);
        cr_assert_eq(rc, MDSD_EIO, "format %d: %s", f, err.msg);
        cr_assert(strstr(err.msg, "/nonexistent-dir/x.lp"), "%s", err.msg);
    }
    mdsd_lp_format fmt;
    cr_assert_eq(mdsd_lp_format_parse("a.mps", &fmt, NULL), MDSD_OK);
    cr_assert_eq(fmt, MDSD_LP_FORMAT_MPS);
    cr_assert_eq(mdsd_lp_format_parse("a.txt", &fmt, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "a.txt"), "%s", err.msg);
}

/* ---------------------------------------------------------------------------
 * mdsd lp */

Test(lp, cli_solves_writes_and_reports)
{
    make_tmpdir();
    char args[512], *out;
    /* Bernoulli: alpha* = min(b, 1-(1-a)^2) + min(1-b, 1-a^2) = 0.3 + 0.64 */
    cr_assert_eq(test_run_mdsd("lp -p 0.3,0.7 -q 0.6,0.4 -n 2 --scheme iid --json", 0, &out), 0);
    cr_assert(strstr(out, "\"alpha\":0.9399999") || strstr(out, "\"alpha\":0.94"), "%s", out);
    cr_assert(strstr(out, "\"method\":\"lp-full\"") && strstr(out, "\"vars\":8") &&
              strstr(out, "\"rows\":5") && strstr(out, "\"scheme\":\"iid\""), "%s", out);
    free(out);
    snprintf(args, sizeof args,
             "lp -p 0.3,0.7 -q 0.6,0.4 -q 0.2,0.8 -n 2 --scheme multi --reduced --exact-arith "
             "--write-data %s/m.dat --write %s/m.lp --json", tmpdir, tmpdir);
    cr_assert_eq(test_run_mdsd(args, 0, &out), 0);
    cr_assert(strstr(out, "\"method\":\"lp-reduced\"") && strstr(out, "\"exact_arith\":true"), "%s", out);
    double cli_alpha = strtod(strstr(out, "\"alpha\":") + 8, NULL);
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/m.dat", tmpdir);
    cr_assert_float_eq(glpsol_alpha("lp/otm_reduced.mod", path), cli_alpha, LP_TOL);
    snprintf(path, sizeof path, "%s/m.lp", tmpdir);
    cr_assert_float_eq(reread_alpha(path, MDSD_LP_FORMAT_CPLEX), cli_alpha, LP_TOL);
    /* multi, n = 2: D(x1, x2) = q1(x1) q2(x2); subset selection by hand:
     * H = {0}: 0.3 - 0.6*0.2 = 0.18; H = {1}: 0.7 - 0.4*0.8 = 0.38 -> alpha* = 1 */
    cr_assert_float_eq(cli_alpha, 1.0, 1e-12);
    /* custom scheme from a file; V from -p */
    snprintf(path, sizeof path, "%s/custom.txt", tmpdir);
    FILE *f = fopen(path, "w");
    fprintf(f, "# x1 x2 prob\n0 0 0.5\n2 2 0.5\n");
    fclose(f);
    snprintf(args, sizeof args, "lp -p 0.2,0.3,0.5 --scheme custom --custom %s --plan", path);
    cr_assert_eq(test_run_mdsd(args, 0, &out), 0);
    /* accepted: min(0.2, 0.5) + min(0.5, 0.5) = 0.7 */
    cr_assert(strstr(out, "alpha* = 0.7\n") && strstr(out, "pi(y = 2, x = (2,2)) = 0.5"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("lp --help", 0, &out), 0);
    cr_assert(strstr(out, "JSON keys") && strstr(out, "alpha") && strstr(out, "rows"), "%s", out);
    free(out);
    remove_tmpdir();
}

Test(lp, cli_bad_input)
{
    char *out;
    cr_assert_eq(test_run_mdsd("lp -q 0.5,0.5 -n 2 --scheme iid", 1, &out), 1);
    cr_assert(strstr(out, "missing -p/--target"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("lp -p 0.5,0.5 -q 0.5,0.5 -n 2", 1, &out), 2);
    cr_assert(strstr(out, "missing --scheme"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("lp -p 0.5,0.5 -q 0.5,0.5 --scheme iid --write x.txt", 1, &out), 2);
    cr_assert(strstr(out, "must end in .lp"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("lp -p 0.5,0.5 -q 0.5,0.5 --scheme multi -n 2", 1, &out), 1);
    cr_assert(strstr(out, "needs 2 -q/--draft"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("lp -p 0.5,0.5 -q 0.5,0.5 -n 3 --scheme iid --max-vars 10", 1, &out), 1);
    cr_assert(strstr(out, "16 variables") && strstr(out, "exceed the limit of 10") &&
              strstr(out, "--method sort"), "%s", out);
    free(out);
    /* nothing is left behind when the output cannot be written */
    cr_assert_eq(test_run_mdsd("lp -p 0.5,0.5 -q 0.5,0.5 --scheme iid --write /nonexistent-dir/a.mps", 1, &out), 1);
    cr_assert(strstr(out, "/nonexistent-dir/a.mps"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("lp -p 0.5,0.5 --scheme custom --custom /nonexistent-file", 1, &out), 1);
    cr_assert(strstr(out, "/nonexistent-file"), "%s", out);
    free(out);
}

/* The cycling guard of mdsd_glpk_solve (glpk_solve.h). The fixture is an LP
 * on which GLPK's default primal simplex cycles (an importance-weight stage of
 * a real dump, which ran for hours): the plain simplex must reach the guard's
 * iteration limit (so the fixture still cycles, and this test can fail), and
 * the guarded solve must end optimal with the optimum of the dual simplex, an
 * independent route. */
static glp_prob *read_fixture_lp(const char *path)
{
    glp_prob *P = glp_create_prob();
    cr_assert_eq(glp_read_lp(P, NULL, path), 0, "cannot read %s", path);
    return P;
}

Test(glpk_solve, cycling_simplex_is_rerun, .timeout = 60)
{
    const char *path = "tests/fixtures/glpk-cycling-iws-stage.lp";
    int old_out = glp_term_out(GLP_OFF);
    glp_prob *P = read_fixture_lp(path);
    int dims = glp_get_num_rows(P) + glp_get_num_cols(P);
    cr_assert_eq(dims, 50 + 1275);
    glp_smcp parm = quiet_smcp();
    parm.it_lim = mdsd_glpk_cycle_limit(P);
    cr_assert_eq(parm.it_lim, 20 * dims + 1000);
    cr_assert_eq(glp_simplex(P, &parm), GLP_EITLIM, "the fixture no longer cycles under "
                 "GLPK's default simplex: this test no longer tests the guard");
    glp_delete_prob(P);

    P = read_fixture_lp(path);
    parm = quiet_smcp();
    parm.meth = GLP_DUALP;
    cr_assert_eq(glp_simplex(P, &parm), 0);
    cr_assert_eq(glp_get_status(P), GLP_OPT);
    double dual_optimum = glp_get_obj_val(P);
    glp_delete_prob(P);

    P = read_fixture_lp(path);
    parm = quiet_smcp();
    const char *stage;
    cr_assert_eq(mdsd_glpk_solve(P, &parm, MDSD_GLPK_FLOAT, 0, &stage), 0);
    cr_assert_eq(glp_get_status(P), GLP_OPT);
    cr_assert_eq(parm.it_lim, INT_MAX, "the caller's settings are restored");
    cr_assert(fabs(glp_get_obj_val(P) - dual_optimum) <= 1e-12, "guarded %.17g, dual simplex %.17g",
              glp_get_obj_val(P), dual_optimum);
    glp_delete_prob(P);
    glp_term_out(old_out);
}

/* The guard leaves an LP that never reaches its limit as it was: the same
 * iterations and the same solution as the plain simplex (stage 1 of the same
 * row, 88 iterations). */
Test(glpk_solve, guard_leaves_other_lps_alone, .timeout = 60)
{
    int old_out = glp_term_out(GLP_OFF);
    glp_prob *P[2];
    for (int k = 0; k < 2; k++)
        P[k] = read_fixture_lp("tests/fixtures/glpk-iws-stage1.lp");
    glp_smcp parm = quiet_smcp();
    parm.it_lim = 100000; /* the plain run, bounded in case it ever cycles */
    cr_assert_eq(glp_simplex(P[0], &parm), 0);
    parm.it_lim = INT_MAX;
    const char *stage;
    cr_assert_eq(mdsd_glpk_solve(P[1], &parm, MDSD_GLPK_FLOAT, 0, &stage), 0);
    cr_assert_eq(glp_get_status(P[0]), GLP_OPT);
    cr_assert_eq(glp_get_status(P[1]), GLP_OPT);
    cr_assert_eq(glp_get_it_cnt(P[0]), glp_get_it_cnt(P[1]));
    for (int j = 1; j <= glp_get_num_cols(P[0]); j++)
        cr_assert_eq(glp_get_col_prim(P[0], j), glp_get_col_prim(P[1], j), "column %d", j);
    glp_delete_prob(P[0]);
    glp_delete_prob(P[1]);
    glp_term_out(old_out);
}
