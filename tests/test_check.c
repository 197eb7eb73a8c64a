/* The theorem regression suite (check.h): the quick profile passes, every
 * must-hold check FAILS when a planted error is fed to the solver or
 * verifier it calls (no check that cannot fail), the findings move when the
 * formula under test is replaced, and the runner's options, errors and the
 * mdsd check command line. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "check_impl.h"
#include "testutil.h"

/* ---- planted errors ---------------------------------------------------------- */

/* The bound perturbation: alpha -> mul * alpha + add for one method (and
 * optionally one scheme kind and one n); flip inverts k2's Thm 2 flag;
 * hu_wor answers sort-on-cps with brute-on-wor (the correct wor value). */
static struct {
    mdsd_bound_method method;
    int scheme; /* -1: any */
    size_t n;   /* 0: any */
    double mul, add;
    bool flip, hu_wor, fail;
} PB;

static void bound_plant(mdsd_bound_method m, int scheme, size_t n, double mul, double add)
{
    memset(&PB, 0, sizeof PB);
    PB.method = m, PB.scheme = scheme, PB.n = n, PB.mul = mul, PB.add = add;
}

static int planted_bound(const double *p, const mdsd_scheme *s, mdsd_bound_method m,
                         const mdsd_bound_opts *opts, mdsd_bound_workspace *ws,
                         mdsd_bound_result *res, mdsd_err *err)
{
    if (PB.fail)
        return mdsd_fail(err, MDSD_ESOLVER, "planted solver failure");
    if (PB.hu_wor && m == MDSD_BOUND_SORT && s->kind == MDSD_SCHEME_CPS) {
        mdsd_scheme w = *s;
        w.kind = MDSD_SCHEME_WOR;
        return mdsd_bound_alpha(p, &w, MDSD_BOUND_BRUTE, opts, ws, res, err);
    }
    int rc = mdsd_bound_alpha(p, s, m, opts, ws, res, err);
    if (rc || m != PB.method || (PB.scheme >= 0 && (int)s->kind != PB.scheme) || (PB.n && s->n != PB.n))
        return rc;
    res->alpha = PB.mul * res->alpha + PB.add;
    if (PB.flip && res->alpha_one >= 0)
        res->alpha_one = !res->alpha_one;
    return rc;
}

/* The exact-rate perturbation: alpha -> mul * alpha + add for one verifier;
 * per_draft[pd] += pd_add. */
static struct {
    mdsd_verifier_kind kind;
    double mul, add;
    int pd;
    double pd_add;
} PE;

static void exact_plant(mdsd_verifier_kind k, double mul, double add)
{
    memset(&PE, 0, sizeof PE);
    PE.kind = k, PE.mul = mul, PE.add = add, PE.pd = -1;
}

static int planted_exact(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                         const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                         mdsd_err *err)
{
    int rc = mdsd_verifier_exact(kind, p, s, opts, alpha, per_draft, err);
    if (rc || kind != PE.kind)
        return rc;
    *alpha = PE.mul * *alpha + PE.add;
    if (per_draft && PE.pd >= 0)
        per_draft[PE.pd] += PE.pd_add;
    return rc;
}

static double Q_add;
static int planted_cps_Q(const double *q, size_t V, size_t n, const unsigned char *H, double *Q,
                         mdsd_err *err)
{
    int rc = mdsd_cps_Q(q, V, n, H, Q, err);
    *Q += Q_add;
    return rc;
}

static int planted_wor_Q(const double *q, size_t V, size_t n, const unsigned char *H, double *Q,
                         mdsd_err *err)
{
    int rc = mdsd_wor_Q(q, V, n, H, Q, err);
    *Q += Q_add;
    return rc;
}

/* A verifier that, after the real one, moves its output to the next token
 * with probability 0.1: its output no longer follows p. */
static const mdsd_verifier_ops *biased_inner;
typedef struct {
    const mdsd_verifier_ops *inner;
    void *state;
    size_t V;
} biased_state;

static int biased_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *o,
                          void **state, mdsd_err *err)
{
    biased_state *b = calloc(1, sizeof *b);
    b->inner = biased_inner;
    b->V = s->V;
    *state = b;
    return b->inner->prepare(p, s, o, &b->state, err);
}

static int biased_verify(const void *state, const int *drafts, gsl_rng *rng, int *j)
{
    const biased_state *b = state;
    int y = b->inner->verify(b->state, drafts, rng, j);
    if (gsl_rng_uniform(rng) < 0.1) {
        *j = -1;
        return (int)((size_t)(y + 1) % b->V);
    }
    return y;
}

static void biased_release(void *state)
{
    biased_state *b = state;
    if (b->state)
        b->inner->release(b->state);
    free(b);
}

static mdsd_verifier_ops biased_ops(const mdsd_verifier_ops *inner)
{
    biased_inner = inner;
    return (mdsd_verifier_ops){"planted-biased", inner->scheme, inner->check, biased_prepare,
                               biased_verify, biased_release, NULL};
}

/* SpecHub's Algorithm 3 as printed (tests/test_verifier.c has the same
 * transcription): p'(a) is only lowered in the x1 = a branch, so the hub
 * token a is over-produced. */
typedef struct {
    size_t V;
    int a;
    double *p, *q, L1, L2;
    gsl_ran_discrete_t *res1, *res2;
} alg3_state;

static void alg3_release(void *state)
{
    alg3_state *st = state;
    gsl_ran_discrete_free(st->res1);
    gsl_ran_discrete_free(st->res2);
    free(st->p);
    free(st->q);
    free(st);
}

static int alg3_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *o,
                        void **state, mdsd_err *err)
{
    (void)o, (void)err;
    size_t V = s->V;
    alg3_state *st = calloc(1, sizeof *st);
    st->V = V;
    st->p = malloc(V * sizeof *st->p);
    st->q = malloc(V * sizeof *st->q);
    double *w = calloc(V, sizeof *w), *w2 = calloc(V, sizeof *w2);
    st->a = (int)mdsd_argmax(s->q, V);
    double qa = s->q[st->a];
    for (size_t x = 0; x < V; x++) {
        st->p[x] = p[x], st->q[x] = s->q[x];
        if ((int)x == st->a)
            continue;
        double pp = fmax(p[x] - s->q[x], 0.0), Qax = qa * s->q[x] / (1 - qa);
        st->L1 += fmax(s->q[x] - p[x], 0.0);
        st->L2 += fmax(Qax - pp, 0.0);
        w[x] = w2[x] = fmax(pp - Qax, 0.0);
    }
    w[st->a] = p[st->a];
    w2[st->a] = fmax(p[st->a] - st->L1, 0.0);
    st->res1 = gsl_ran_discrete_preproc(V, w);
    st->res2 = gsl_ran_discrete_preproc(V, w2);
    free(w);
    free(w2);
    *state = st;
    return MDSD_OK;
}

static int alg3_verify(const void *state, const int *drafts, gsl_rng *rng, int *j)
{
    const alg3_state *st = state;
    int a = st->a, x1 = drafts[0], x2 = drafts[1];
    double qa = st->q[a];
    if (x2 == a) {
        if (gsl_rng_uniform(rng) * st->q[x1] < st->p[x1])
            return *j = 0, x1;
        if (gsl_rng_uniform(rng) * st->L1 < st->p[a])
            return *j = 1, a;
        return (int)gsl_ran_discrete(rng, st->res2);
    }
    double pp = fmax(st->p[x2] - st->q[x2], 0.0), Qax = qa * st->q[x2] / (1 - qa);
    if (gsl_rng_uniform(rng) * Qax < pp)
        return *j = 1, x2;
    if (gsl_rng_uniform(rng) * st->L2 < st->p[a])
        return *j = 0, a;
    return (int)gsl_ran_discrete(rng, st->res1);
}

static const mdsd_verifier_ops alg3_ops = {"planted-spechub-algorithm-3", MDSD_SCHEME_HUB, NULL,
                                           alg3_prepare, alg3_verify, alg3_release, NULL};

/* ---- helpers ----------------------------------------------------------------- */

static mdsd_check_env env_default(void)
{
    mdsd_check_env env;
    mdsd_check_env_default(&env);
    return env;
}

static mdsd_check_cfg opts_quick(void)
{
    mdsd_check_cfg o;
    mdsd_check_cfg_init(&o, MDSD_CHECK_QUICK);
    return o;
}

static const mdsd_check *find(const char *name)
{
    mdsd_err err;
    const mdsd_check *c = mdsd_check_find(name, &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static mdsd_check_result run(const char *name, const mdsd_check_env *env, const mdsd_check_cfg *o)
{
    mdsd_check_result r;
    mdsd_err err;
    mdsd_err_clear(&err);
    cr_assert_eq(mdsd_check_run_one(find(name), env, o, &r, &err), MDSD_OK, "%s: %s", name, err.msg);
    return r;
}

/* ---- the quick profile passes ------------------------------------------------------ */

Test(check, quick_profile_passes_every_must_hold_check)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    size_t findings = 0;
    for (size_t i = 0; i < mdsd_check_count(); i++) {
        const mdsd_check *c = mdsd_check_get(i);
        mdsd_check_result r;
        mdsd_err err;
        cr_assert_eq(mdsd_check_run_one(c, &env, &o, &r, &err), MDSD_OK, "%s: %s", c->name, err.msg);
        cr_expect_eq(r.instances, o.count, "%s: %zu instances of %zu (%s)", c->name, r.instances,
                     o.count, r.error);
        if (c->must_hold)
            cr_expect_eq(r.status, MDSD_CHECK_PASS, "%s: %s, worst %g (%s) %s", c->name,
                         mdsd_check_status_name(r.status), r.worst, r.worst_note, r.error);
        else
            findings += r.status == MDSD_CHECK_FINDING;
        cr_expect(r.cases >= r.instances, "%s: %zu cases", c->name, r.cases);
        mdsd_check_result_free(&r);
    }
    cr_expect_gt(findings, 0);
}

/* ---- every must-hold check detects a planted error ---------------------------------- */

static void p_sort(mdsd_check_env *e) { bound_plant(MDSD_BOUND_SORT, -1, 0, 1, 1e-6); e->bound = planted_bound; }
static void p_lp_reduced(mdsd_check_env *e) { bound_plant(MDSD_BOUND_LP_REDUCED, -1, 0, 1, 1e-6); e->bound = planted_bound; }
static void p_k2(mdsd_check_env *e) { bound_plant(MDSD_BOUND_K2, -1, 0, 1, 1e-6); e->bound = planted_bound; }
static void p_k2_flag(mdsd_check_env *e) { bound_plant(MDSD_BOUND_K2, -1, 0, 1, 0); PB.flip = true; e->bound = planted_bound; }
static void p_lp_full(mdsd_check_env *e) { bound_plant(MDSD_BOUND_LP_FULL, -1, 0, 1, 1e-6); e->bound = planted_bound; }
static void p_sort_n20(mdsd_check_env *e) { bound_plant(MDSD_BOUND_SORT, MDSD_SCHEME_IID, 20, 0.5, 0); e->bound = planted_bound; }
static void p_brute_half(mdsd_check_env *e) { bound_plant(MDSD_BOUND_BRUTE, -1, 0, 0.5, 0); e->bound = planted_bound; }
static void p_brute(mdsd_check_env *e) { bound_plant(MDSD_BOUND_BRUTE, -1, 0, 1, 1e-6); e->bound = planted_bound; }
static void p_brute_hub(mdsd_check_env *e) { bound_plant(MDSD_BOUND_BRUTE, MDSD_SCHEME_HUB, 0, 1, 1e-6); e->bound = planted_bound; }
static void p_kseq_half(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_KSEQ, 0.5, 0); e->exact = planted_exact; }
static void p_kseq(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_KSEQ, 1, -1e-6); e->exact = planted_exact; }
static void p_rrs_up(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_RRS, 1, 0.5); e->exact = planted_exact; }
static void p_otm(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_OTM, 1, 1e-6); e->exact = planted_exact; }
static void p_greedy_mc(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_GREEDY, 1, 0.1); e->exact = planted_exact; }
static void p_greedy(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_GREEDY, 1, -1e-6); e->exact = planted_exact; }
static void p_rrs_thm3(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_RRS, 1, 0.05); e->exact = planted_exact; }
static void p_hub_down(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_SPECHUB, 1, -0.05); e->exact = planted_exact; }
static void p_is(mdsd_check_env *e) { exact_plant(MDSD_VERIFIER_IS, 1, -1e-6); e->exact = planted_exact; }
static void p_cps_Q(mdsd_check_env *e) { Q_add = 1e-9; e->cps_Q = planted_cps_Q; }
static void p_wor_Q(mdsd_check_env *e) { Q_add = 1e-9; e->wor_Q = planted_wor_Q; }
static mdsd_verifier_ops biased;
static void p_biased_kseq(mdsd_check_env *e) { biased = biased_ops(&mdsd_verify_kseq_ops); e->verifiers[MDSD_VERIFIER_KSEQ] = &biased; }
static void p_alg3(mdsd_check_env *e) { e->verifiers[MDSD_VERIFIER_SPECHUB] = &alg3_ops; }

static const struct {
    const char *check;
    void (*plant)(mdsd_check_env *env);
    const char *what;
} plants[] = {
    {"alpha-routes", p_sort, "sort + 1e-6"},
    {"alpha-routes-lp", p_lp_reduced, "lp-reduced + 1e-6"},
    {"k2-closed-form", p_k2, "k2 + 1e-6"},
    {"khisti-thm2", p_k2_flag, "k2's Thm 2 flag inverted"},
    {"khisti-conjecture", p_lp_full, "lp-full + 1e-6"},
    {"spectr-lemma1", p_sort_n20, "sort halved at n = 20"},
    {"spectr-lemma3", p_brute_half, "brute halved"},
    {"bernoulli-closed-form", p_brute, "brute + 1e-6"},
    {"uniform-closed-form", p_brute, "brute + 1e-6"},
    {"hub-eq-greedy", p_brute_hub, "brute on hub + 1e-6"},
    {"kseq-lower-bounds", p_kseq_half, "kseq exact halved"},
    {"kseq-uniform-optimal", p_kseq, "kseq exact - 1e-6"},
    {"verifier-le-alpha", p_rrs_up, "rrs exact + 0.5"},
    {"verifier-lp-le-alpha", p_otm, "otm exact + 1e-6"},
    {"verifier-outputs-p", p_biased_kseq, "kseq output moved w.p. 0.1"},
    {"verifier-exact-mc", p_greedy_mc, "greedy exact + 0.1"},
    {"hu-thm7-greedy", p_greedy, "greedy exact - 1e-6"},
    {"spechub-cor1", p_alg3, "SpecHub Algorithm 3 as printed"},
    {"spechub-thm3", p_rrs_thm3, "rrs exact + 0.05"},
    {"spechub-thm4", p_hub_down, "spechub exact - 0.05"},
    {"khisti-thm1-is", p_is, "is exact - 1e-6"},
    {"hu-Q-cps", p_cps_Q, "cps Q + 1e-9"},
    {"wor-Q-exact", p_wor_Q, "wor Q + 1e-9"},
};

Test(check, every_must_hold_check_has_a_planted_error)
{
    for (size_t i = 0; i < mdsd_check_count(); i++) {
        const mdsd_check *c = mdsd_check_get(i);
        if (!c->must_hold)
            continue;
        size_t k = 0;
        while (k < sizeof plants / sizeof *plants && strcmp(plants[k].check, c->name))
            k++;
        cr_expect_lt(k, sizeof plants / sizeof *plants, "must-hold check %s has no planted error",
                     c->name);
    }
}

Test(check, every_must_hold_check_fails_on_its_planted_error)
{
    mdsd_check_cfg o = opts_quick();
    for (size_t k = 0; k < sizeof plants / sizeof *plants; k++) {
        mdsd_check_env env = env_default();
        plants[k].plant(&env);
        mdsd_check_result r = run(plants[k].check, &env, &o);
        cr_log_info("%s with %s: worst %g, %zu counterexamples", plants[k].check, plants[k].what,
                    r.worst, r.counterexamples);
        cr_expect_eq(r.status, MDSD_CHECK_FAIL, "%s did not detect %s (worst %g)", plants[k].check,
                     plants[k].what, r.worst);
        cr_expect(r.has_worst && r.worst_note[0], "%s: no worst instance reported", plants[k].check);
        mdsd_check_result_free(&r);
    }
}

/* ---- findings respond to the formula under test --------------------------------------- */

Test(check, hu_Q_wor_finding_vanishes_when_the_exact_wor_Q_replaces_hus)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    mdsd_check_result r = run("hu-Q-wor", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FINDING);
    cr_expect_gt(r.worst, 1e-3, "Hu's Q should disagree with wor (worst %g)", r.worst);
    cr_expect_gt(r.counterexamples, 0);
    mdsd_check_result_free(&r);
    env.cps_Q = mdsd_wor_Q; /* the correct formula: no disagreement left */
    r = run("hu-Q-wor", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FINDING);
    cr_expect_lt(r.worst, 1e-12, "worst %g", r.worst);
    cr_expect_eq(r.counterexamples, 0);
    mdsd_check_result_free(&r);
}

Test(check, hu_alpha_wor_finding_vanishes_with_the_true_wor_alpha)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    mdsd_check_result r = run("hu-alpha-wor", &env, &o);
    cr_expect_gt(r.counterexamples, 0);
    mdsd_check_result_free(&r);
    memset(&PB, 0, sizeof PB);
    PB.method = MDSD_BOUND_METHOD_COUNT;
    PB.hu_wor = true;
    env.bound = planted_bound;
    r = run("hu-alpha-wor", &env, &o);
    cr_expect_eq(r.counterexamples, 0, "worst %g", r.worst);
    mdsd_check_result_free(&r);
}

Test(check, wor_ge_iid_finding_reports_planted_counterexamples)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    bound_plant(MDSD_BOUND_SORT, MDSD_SCHEME_WOR, 0, 1, -0.3);
    env.bound = planted_bound;
    mdsd_check_result r = run("wor-ge-iid", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FINDING);
    cr_expect_gt(r.counterexamples, 0);
    cr_expect_gt(r.worst, 0.1);
    mdsd_check_result_free(&r);
}

Test(check, spechub_ge_rrs_finding_has_counterexamples_on_the_app_d_family)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    mdsd_check_result r = run("spechub-ge-rrs", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FINDING);
    cr_expect_gt(r.counterexamples, 0, "SpecHub > rrs is reported false on this family");
    cr_expect_eq(r.worst_family, MDSD_TOY_SPECHUB);
    cr_expect(strstr(r.summary, "T=0.5 lambda=0.5"), "%s", r.summary);
    mdsd_check_result_free(&r);
    exact_plant(MDSD_VERIFIER_RRS, 1, -1.0);
    env.exact = planted_exact;
    r = run("spechub-ge-rrs", &env, &o);
    cr_expect_eq(r.counterexamples, 0);
    mdsd_check_result_free(&r);
}

Test(check, spechub_thm3_literal_reading_finding_responds_to_draft_2_rates)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    exact_plant(MDSD_VERIFIER_RRS, 1, 0);
    PE.pd = 1, PE.pd_add = 0.5;
    env.exact = planted_exact;
    mdsd_check_result r = run("spechub-thm3-draft2", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FINDING);
    cr_expect_eq(r.counterexamples, r.instances);
    mdsd_check_result_free(&r);
}

/* ---- the runner ---------------------------------------------------------------------- */

Test(check, results_depend_on_the_seed_only)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    o.count = 10;
    mdsd_check_result a = run("spechub-thm3", &env, &o), b = run("spechub-thm3", &env, &o);
    cr_expect_eq(a.worst, b.worst);
    cr_expect_eq(a.draws, b.draws);
    cr_expect_eq(a.worst_draw, b.worst_draw);
    cr_expect_eq(memcmp(a.worst_p, b.worst_p, a.worst_V * sizeof *a.worst_p), 0);
    o.seed = 2;
    mdsd_check_result c = run("spechub-thm3", &env, &o);
    cr_expect(c.worst_V != a.worst_V || memcmp(a.worst_p, c.worst_p, a.worst_V * sizeof *a.worst_p),
              "seed 2 drew the same worst instance");
    mdsd_check_result_free(&a);
    mdsd_check_result_free(&b);
    mdsd_check_result_free(&c);
}

Test(check, family_filter_and_skips)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    o.count = 6;
    o.family = MDSD_TOY_DIRICHLET;
    mdsd_check_result r = run("bernoulli-closed-form", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_SKIP);
    cr_expect_eq(r.instances, 0);
    mdsd_check_result_free(&r);
    o.family = MDSD_TOY_BERNOULLI;
    r = run("alpha-routes", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_PASS);
    cr_expect_eq(r.worst_family, MDSD_TOY_BERNOULLI);
    cr_expect_eq(r.worst_V, 2);
    mdsd_check_result_free(&r);
    cr_expect(mdsd_check_uses_family(find("uniform-closed-form"), MDSD_TOY_UNIFORM));
    cr_expect(!mdsd_check_uses_family(find("uniform-closed-form"), MDSD_TOY_ZIPF));
}

Test(check, hypotheses_draw_more_instances)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    mdsd_check_result r = run("spechub-thm3", &env, &o);
    cr_expect_eq(r.instances, o.count);
    cr_expect_gt(r.draws, r.instances, "every draw met Thm 3's hypothesis?");
    cr_expect(strstr(r.summary, "hypothesis held"), "%s", r.summary);
    mdsd_check_result_free(&r);
}

Test(check, solver_errors_fail_the_check_with_the_message)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    memset(&PB, 0, sizeof PB);
    PB.fail = true;
    env.bound = planted_bound;
    mdsd_check_result r = run("alpha-routes", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FAIL);
    cr_expect(strstr(r.error, "planted solver failure") && strstr(r.error, "first: instance 0"), "%s",
              r.error);
    cr_expect_eq(r.errors, o.count, "the run goes on after an error");
    cr_expect(r.has_worst && r.worst_draw == 0 && isinf(r.worst), "worst %g", r.worst);
    mdsd_check_result_free(&r);
    env = env_default();
    env.verifiers[MDSD_VERIFIER_OTM] = NULL;
    r = run("verifier-outputs-p", &env, &o);
    cr_expect_eq(r.status, MDSD_CHECK_FAIL);
    cr_expect(strstr(r.error, "no verifier otm"), "%s", r.error);
    cr_expect_eq(r.worst, 0.0, "an error is p-value 0");
    mdsd_check_result_free(&r);
}

Test(check, bad_options_and_names)
{
    mdsd_check_env env = env_default();
    mdsd_check_cfg o = opts_quick();
    mdsd_check_result r;
    mdsd_err err;
    o.count = 0;
    cr_expect_eq(mdsd_check_run_one(find("alpha-routes"), &env, &o, &r, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "`count`"), "%s", err.msg);
    mdsd_check_result_free(&r);
    o = opts_quick();
    o.family = MDSD_TOY_FAMILIES;
    cr_expect_eq(mdsd_check_run_one(find("alpha-routes"), &env, &o, &r, &err), MDSD_EINVAL);
    mdsd_check_result_free(&r);
    cr_expect_null(mdsd_check_find("no-such-check", &err));
    cr_expect(strstr(err.msg, "no-such-check") && strstr(err.msg, "alpha-routes"), "%s", err.msg);
    mdsd_check_profile pr;
    cr_expect_eq(mdsd_check_profile_parse("thorough", &pr, &err), MDSD_OK);
    cr_expect_eq(pr, MDSD_CHECK_THOROUGH);
    cr_expect_eq(mdsd_check_profile_parse("fast", &pr, &err), MDSD_EINVAL);
    mdsd_check_cfg th;
    mdsd_check_cfg_init(&th, MDSD_CHECK_THOROUGH);
    cr_expect_geq(th.count, 10000);
}

Test(check, every_check_names_its_source)
{
    for (size_t i = 0; i < mdsd_check_count(); i++) {
        const mdsd_check *c = mdsd_check_get(i);
        cr_expect(c->source && c->source[0] && c->claim && c->claim[0] && c->measure, "%s", c->name);
        for (size_t j = 0; j < i; j++)
            cr_expect(strcmp(c->name, mdsd_check_get(j)->name), "duplicate check %s", c->name);
    }
}

/* The chi-square test pools until the pool expects >= 5: one observation of a
 * 1e-7 cell in 3000 trials is not evidence (a pool of the rare cells alone
 * would say p ~ 1e-17), a real bias and an impossible output are. */
Test(check, goodness_of_fit_pools_rare_cells)
{
    static const double prob[4] = {0.7, 0.2999998, 1e-7, 1e-7};
    static const uint64_t rare[4] = {2100, 899, 1, 0}, biased[4] = {2300, 700, 0, 0};
    cr_expect_gt(mdsd_chisq_gof(rare, prob, 4, 5.0).p_value, 0.01);
    cr_expect_gt(chk_gof(rare, prob, 4).p_value, 0.01);
    cr_expect_lt(chk_gof(biased, prob, 4).p_value, 1e-6);
    static const double zero[3] = {0.5, 0.5, 0.0};
    static const uint64_t impossible[3] = {1500, 1499, 1};
    cr_expect_eq(chk_gof(impossible, zero, 3).p_value, 0.0);
}

/* ---- mdsd check ------------------------------------------------------------------------ */

Test(check_cli, list_and_json)
{
    char *out;
    cr_assert_eq(test_run_mdsd("check --list", 0, &out), 0);
    for (size_t i = 0; i < mdsd_check_count(); i++)
        cr_expect(strstr(out, mdsd_check_get(i)->name), "%s missing from --list", mdsd_check_get(i)->name);
    cr_expect(strstr(out, "Khisti et al. (NeurIPS 2024) Thm 2"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("check --list --family uniform", 0, &out), 0);
    cr_expect(strstr(out, "uniform-closed-form") && !strstr(out, "bernoulli-closed-form"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("check --list --json --only spechub-thm3", 0, &out), 0);
    cr_expect(strstr(out, "\"checks\":[{\"name\":\"spechub-thm3\"") && strstr(out, "\"must_hold\":true"),
              "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("check --only hu-Q-cps,hu-Q-wor --count 4 --seed 3 --json", 0, &out), 0);
    cr_expect(strstr(out, "\"name\":\"hu-Q-cps\"") && strstr(out, "\"status\":\"pass\""), "%s", out);
    cr_expect(strstr(out, "\"name\":\"hu-Q-wor\"") && strstr(out, "\"status\":\"finding\""), "%s", out);
    cr_expect(strstr(out, "\"detail\":{\"draw\":") && strstr(out, "\"failed\":0"), "%s", out);
    cr_expect(strstr(out, "\"instances\":4") && strstr(out, "\"seed\":3"), "%s", out);
    free(out);
}

Test(check_cli, table_and_skips)
{
    char *out;
    cr_assert_eq(test_run_mdsd("check --only k2-closed-form --only uniform-closed-form --count 3 "
                               "--family dirichlet", 0, &out), 0);
    cr_expect(strstr(out, "instances") && strstr(out, "worst") && strstr(out, "status"), "%s", out);
    cr_expect(strstr(out, "k2-closed-form") && strstr(out, " pass "), "%s", out);
    cr_expect(strstr(out, "uniform-closed-form") && strstr(out, " skip "), "%s", out);
    cr_expect(strstr(out, "1 passed, 0 failed, 0 findings, 1 skipped"), "%s", out);
    free(out);
    cr_assert_eq(test_run_mdsd("check --only spechub-ge-rrs --count 6 --trials 10", 0, &out), 0);
    cr_expect(strstr(out, "finding") && strstr(out, "worst: instance"), "%s", out);
    free(out);
}

Test(check_cli, usage_errors)
{
    static const struct {
        const char *args, *msg;
    } cases[] = {
        {"check --only nope", "unknown check 'nope'"},
        {"check --family nope", "unknown toy family 'nope'"},
        {"check --count 0", "--count"},
        {"check --trials 0", "--trials"},
        {"check --profile fast", "unknown profile 'fast'"},
        {"check --count x", "not a non-negative integer"},
        {"check extra", "unexpected argument 'extra'"},
        {"check --frobnicate", "unrecognised option"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *out;
        cr_expect_eq(test_run_mdsd(cases[k].args, 1, &out), 2, "%s", cases[k].args);
        cr_expect(strstr(out, cases[k].msg), "%s: %s", cases[k].args, out);
        free(out);
    }
    char *out;
    cr_expect_eq(test_run_mdsd("check --help", 0, &out), 0);
    cr_expect(strstr(out, "JSON keys") && strstr(out, "--profile"), "%s", out);
    free(out);
}
