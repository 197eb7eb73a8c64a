/* Verifiers: every verifier's output follows p (chi-square, and two planted
 * invalid verifiers are rejected by the same test), Monte-Carlo acceptance
 * and per-draft rates agree with the exact forms, exact forms against
 * independent enumerations, every verifier <= alpha* of its scheme, and the
 * papers' claims (Hu Thm 7, SpecHub Cor. 1 and Thm 4, SpecTr's k-Seq facts).
 *
 * alpha* here is the subset enumeration 1 + min_H [p(H) - Q(H)] over all 2^V
 * subsets with Q from mdsd_joint_Q: a reference independent of the bounds
 * module. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>

#include "testutil.h"
#include "montecarlo.h"
#include "verifier.h"

/* A correct verifier fails a chi-square test with probability 1e-6; seeds
 * are fixed, so outcomes are deterministic. */
#define SIGNIFICANCE 1e-6
#define INSTANCES 5
#define TRIALS 200000 /* per instance: 10^6 per verifier */
#define VMAX 6
#define NMAX 3
/* Agreement of exact forms with enumerations: 1e-9, plus the rounding the
 * enumerated D carries from its divisions by 1 - q(prefix) (scheme.c
 * computes 1 - q(x) by subtraction: relative error ~1e-16 / (1 - q(x))). */
#define EXACT_TOL 1e-9
static double tol_for(const double *q, size_t V)
{
    return EXACT_TOL + 1e-14 / (1.0 - q[mdsd_argmax(q, V)] + 1e-300);
}

typedef struct {
    size_t V, n;
    double p[VMAX];
    double q[NMAX * VMAX]; /* one row, or n rows for multi */
    mdsd_scheme s;
} instance;

static size_t drafts_for(mdsd_verifier_kind kind, unsigned i)
{
    switch (kind) {
    case MDSD_VERIFIER_SD: return 1;
    case MDSD_VERIFIER_SPECHUB: return 2;
    default: return 2 + i % 2;
    }
}

/* A random instance on which `kind` is defined (retrying pair kinds that
 * leave too few tokens for wor, greedy or hub). multi: a second drafter. */
static void make_instance_of(gsl_rng *r, unsigned i, unsigned pair_kind, mdsd_verifier_kind kind,
                             bool multi, instance *in)
{
    for (unsigned attempt = 0;; attempt++) {
        memset(in, 0, sizeof *in);
        in->V = 3 + (i + attempt) % (VMAX - 2);
        in->n = drafts_for(kind, i);
        toy_pair(r, pair_kind + attempt, in->V, in->p, in->q);
        mdsd_scheme_kind sk = mdsd_verifier_scheme(kind);
        if (multi) {
            sk = MDSD_SCHEME_MULTI;
            for (size_t j = 1; j < in->n; j++)
                toy_distribution(r, (toy_family)((i + j) % 3), in->V, in->q + j * in->V);
        }
        in->s = (mdsd_scheme){sk, in->n, in->V, in->q, NULL};
        if (mdsd_verifier_check(kind, &in->s, NULL) == MDSD_OK)
            return;
        cr_assert_lt(attempt, 50, "no valid instance for %s", mdsd_verifier_name(kind));
    }
}

static void make_instance(gsl_rng *r, unsigned i, mdsd_verifier_kind kind, bool multi,
                          instance *in)
{
    make_instance_of(r, i, i, kind, multi, in);
}

static void describe(const instance *in, char *buf, size_t len)
{
    int k = snprintf(buf, len, "V=%zu n=%zu p=[", in->V, in->n);
    for (size_t x = 0; x < in->V; x++)
        k += snprintf(buf + k, len - (size_t)k, x ? ",%.3g" : "%.3g", in->p[x]);
    k += snprintf(buf + k, len - (size_t)k, "] q=[");
    for (size_t x = 0; x < in->V; x++)
        k += snprintf(buf + k, len - (size_t)k, x ? ",%.3g" : "%.3g", in->q[x]);
    snprintf(buf + k, len - (size_t)k, "]");
}

static mdsd_joint enumerate(const mdsd_scheme *s)
{
    mdsd_joint D;
    mdsd_err err;
    cr_assert_eq(mdsd_scheme_joint(s, MDSD_JOINT_MAX_TUPLES, &D, &err), MDSD_OK, "%s", err.msg);
    return D;
}

static mdsd_verifier *prepare(mdsd_verifier_kind kind, const instance *in)
{
    mdsd_err err;
    mdsd_verifier *v = mdsd_verifier_alloc(kind, in->p, &in->s, NULL, &err);
    cr_assert_not_null(v, "%s: %s", mdsd_verifier_name(kind), err.msg);
    return v;
}

/* |estimate - exact| within 5 binomial standard errors of the exact rate. */
static void assert_within_5se(double estimate, double exact, uint64_t trials, const char *what,
                              const char *ctx)
{
    double se = sqrt(exact * (1.0 - exact) / (double)trials);
    cr_assert_leq(fabs(estimate - exact), 5.0 * se + 1e-12,
                  "%s: Monte Carlo %.6f vs exact %.6f (5 SE = %.2g) on %s", what, estimate,
                  exact, 5.0 * se, ctx);
}

/* drafts[j] == y for the reported j, and j < 0 exactly when y is no draft. */
static void check_accepted_index(const mdsd_verifier *v, const instance *in, uint64_t seed)
{
    mdsd_sampler *sm = mdsd_sampler_alloc(&in->s, NULL);
    gsl_rng *r = mdsd_rng_alloc(seed);
    int drafts[NMAX];
    for (int t = 0; t < 20000; t++) {
        mdsd_sampler_draw(sm, r, drafts);
        int j, y = mdsd_verifier_verify(v, drafts, r, &j);
        cr_assert(y >= 0 && (size_t)y < in->V);
        bool is_draft = false;
        for (size_t l = 0; l < in->n; l++)
            is_draft |= drafts[l] == y;
        cr_assert(j < 0 ? !is_draft : drafts[j] == y, "accepted index %d, output %d", j, y);
    }
    gsl_rng_free(r);
    mdsd_sampler_free(sm);
}

/* The main statistical check of one verifier on INSTANCES toy instances. */
static void check_verifier(mdsd_verifier_kind kind, bool multi)
{
    gsl_rng *r = mdsd_rng_alloc(7000 + kind + 100 * multi);
    for (unsigned i = 0; i < INSTANCES; i++) {
        instance in;
        char ctx[512];
        /* toy_pair kinds: mostly general pairs (0: Dirichlet/softmax, 5: two
         * Dirichlet, 4: sparse), the last instance an edge case (p = q,
         * one-hot q or disjoint supports) that varies with the verifier. */
        static const unsigned pair_kinds[INSTANCES] = {0, 5, 4, 0, 0};
        unsigned pk = i + 1 < INSTANCES ? pair_kinds[i] : 1 + (kind + multi) % 3;
        make_instance_of(r, i, pk, kind, multi, &in);
        describe(&in, ctx, sizeof ctx);
        double alpha, per_draft[NMAX];
        mdsd_err err;
        cr_assert_eq(mdsd_verifier_exact(kind, in.p, &in.s, NULL, &alpha, per_draft, &err),
                     MDSD_OK, "%s", err.msg);
        mdsd_verifier *v = prepare(kind, &in);
        mdsd_mc_result mc = test_simulate(v, TRIALS, 100 + i);
        mdsd_gof g = mdsd_mc_check_output(&mc, in.p);
        cr_assert_gt(g.p_value, SIGNIFICANCE, "%s: output is not p (X2 = %g, dof %zu, p = %g) on %s",
                     mdsd_verifier_name(kind), g.statistic, g.dof, g.p_value, ctx);
        assert_within_5se(mc.alpha, alpha, TRIALS, mdsd_verifier_name(kind), ctx);
        cr_log_info("%s %u: alpha exact %.6f, MC %.6f (z = %.2f), output p-value %.3g",
                    mdsd_verifier_name(kind), i, alpha, mc.alpha,
                    mc.se > 0 ? (mc.alpha - alpha) / mc.se : 0.0, g.p_value);
        for (size_t j = 0; j < in.n; j++)
            assert_within_5se((double)mc.per_draft[j] / TRIALS, per_draft[j], TRIALS,
                              "per-draft rate", ctx);
        check_accepted_index(v, &in, 900 + i);
        mdsd_mc_result_free(&mc);
        mdsd_verifier_free(v);
    }
    gsl_rng_free(r);
}

Test(verifier, sd_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_SD, false); }
Test(verifier, rrs_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_RRS, false); }
Test(verifier, rrs_multi_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_RRS, true); }
Test(verifier, rrsw_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_RRSW, false); }
Test(verifier, kseq_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_KSEQ, false); }
Test(verifier, spechub_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_SPECHUB, false); }
Test(verifier, greedy_outputs_p_and_matches_exact) { check_verifier(MDSD_VERIFIER_GREEDY, false); }

/* ---- planted invalid verifiers: the same test must reject them ---------- */

typedef struct {
    size_t V;
    int a;
    double p[VMAX], q[VMAX], pa_after_hub1, L1, L2;
    gsl_ran_discrete_t *residual, *residual2;
} planted_state;

static void planted_release(void *state)
{
    planted_state *st = state;
    gsl_ran_discrete_free(st->residual);
    if (st->residual2)
        gsl_ran_discrete_free(st->residual2);
    free(st);
}

/* SpecTr section 4's counterexample: each draft accepted independently with
 * min(1, p/q), then the single-draft residual norm((p - q)+). */
static int independent_prepare(const double *p, const mdsd_scheme *s,
                               const mdsd_verifier_opts *o, void **state, mdsd_err *err)
{
    (void)o, (void)err;
    planted_state *st = calloc(1, sizeof *st);
    st->V = s->V;
    double w[VMAX];
    for (size_t x = 0; x < s->V; x++) {
        st->p[x] = p[x], st->q[x] = s->q[x];
        w[x] = p[x] > s->q[x] ? p[x] - s->q[x] : 0.0;
    }
    st->residual = gsl_ran_discrete_preproc(s->V, w);
    *state = st;
    return MDSD_OK;
}

static int independent_verify(const void *state, const int *drafts, gsl_rng *rng, int *j)
{
    const planted_state *st = state;
    for (int l = 0; l < 2; l++)
        if (gsl_rng_uniform(rng) * st->q[drafts[l]] < st->p[drafts[l]]) {
            *j = l;
            return drafts[l];
        }
    return (int)gsl_ran_discrete(rng, st->residual);
}

static const mdsd_verifier_ops independent_ops = {
    "planted-independent", MDSD_SCHEME_IID, NULL, independent_prepare, independent_verify,
    planted_release, NULL};

/* SpecHub's Algorithm 3 as printed: the hub token's residual p'(a) is only
 * lowered inside the x1 = a branch, so the x2 = a branch still offers a its
 * full p(a), and the final residual keeps p''(a) = p'(a). */
static int literal_hub_prepare(const double *p, const mdsd_scheme *s,
                               const mdsd_verifier_opts *o, void **state, mdsd_err *err)
{
    (void)o, (void)err;
    planted_state *st = calloc(1, sizeof *st);
    size_t V = s->V;
    st->V = V;
    st->a = (int)mdsd_argmax(s->q, V);
    double qa = s->q[st->a], w[VMAX], w2[VMAX];
    for (size_t x = 0; x < V; x++) {
        st->p[x] = p[x], st->q[x] = s->q[x];
        if ((int)x == st->a)
            continue;
        double pp = fmax(p[x] - s->q[x], 0.0), Qax = qa * s->q[x] / (1 - qa);
        st->L1 += fmax(s->q[x] - p[x], 0.0); /* sum_x Q'(x, a) */
        st->L2 += fmax(Qax - pp, 0.0);       /* sum_x Q'(a, x) */
        w[x] = w2[x] = fmax(pp - Qax, 0.0);  /* p''(x) */
    }
    w[st->a] = p[st->a];                               /* x1 = a: p''(a) = p'(a) = p(a) */
    w2[st->a] = fmax(p[st->a] - st->L1, 0.0);          /* x2 = a: p''(a) = max(p'(a) - L1, 0) */
    st->residual = gsl_ran_discrete_preproc(V, w);
    st->residual2 = gsl_ran_discrete_preproc(V, w2);
    *state = st;
    return MDSD_OK;
}

static int literal_hub_verify(const void *state, const int *drafts, gsl_rng *rng, int *j)
{
    const planted_state *st = state;
    int a = st->a, x1 = drafts[0], x2 = drafts[1];
    double qa = st->q[a];
    if (x2 == a) {
        if (gsl_rng_uniform(rng) * st->q[x1] < st->p[x1])
            return *j = 0, x1;
        if (gsl_rng_uniform(rng) * st->L1 < st->p[a]) /* p'(a) = p(a) on this path */
            return *j = 1, a;
        return (int)gsl_ran_discrete(rng, st->residual2);
    }
    double pp = fmax(st->p[x2] - st->q[x2], 0.0), Qax = qa * st->q[x2] / (1 - qa);
    if (gsl_rng_uniform(rng) * Qax < pp)
        return *j = 1, x2;
    if (gsl_rng_uniform(rng) * st->L2 < st->p[a])
        return *j = 0, a;
    return (int)gsl_ran_discrete(rng, st->residual);
}

static const mdsd_verifier_ops literal_hub_ops = {
    "planted-spechub-algorithm-3", MDSD_SCHEME_HUB, NULL, literal_hub_prepare,
    literal_hub_verify, planted_release, NULL};

static double planted_pvalue(const mdsd_verifier_ops *ops, mdsd_scheme_kind kind,
                             const double *p, const double *q, size_t V)
{
    mdsd_scheme s = {kind, 2, V, q, NULL};
    mdsd_err err;
    mdsd_verifier *v = mdsd_verifier_alloc_ops(ops, p, &s, NULL, &err);
    cr_assert_not_null(v, "%s", err.msg);
    mdsd_mc_result mc = test_simulate(v, TRIALS, 5);
    double pv = mdsd_mc_check_output(&mc, p).p_value;
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
    return pv;
}

Test(verifier, planted_independent_acceptance_is_rejected)
{
    static const double p[4] = {0.1, 0.2, 0.3, 0.4}, q[4] = {0.4, 0.3, 0.2, 0.1};
    double pv = planted_pvalue(&independent_ops, MDSD_SCHEME_IID, p, q, 4);
    cr_log_info("independent acceptance: p-value %g", pv);
    cr_assert_lt(pv, SIGNIFICANCE, "the output test missed SpecTr's counterexample (p = %g)", pv);
    /* ... and rrs, its correct version, passes on the same instance. */
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 4, q, NULL};
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRS, p, &s, NULL, NULL);
    mdsd_mc_result mc = test_simulate(v, TRIALS, 5);
    cr_assert_gt(mdsd_mc_check_output(&mc, p).p_value, SIGNIFICANCE);
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

Test(verifier, planted_literal_spechub_algorithm_3_is_rejected)
{
    static const double p[4] = {0.3, 0.1, 0.4, 0.2}, q[4] = {0.4, 0.3, 0.2, 0.1};
    double pv = planted_pvalue(&literal_hub_ops, MDSD_SCHEME_HUB, p, q, 4);
    cr_log_info("literal Algorithm 3: p-value %g", pv);
    cr_assert_lt(pv, SIGNIFICANCE, "the output test missed the printed Algorithm 3 (p = %g)", pv);
    mdsd_scheme s = {MDSD_SCHEME_HUB, 2, 4, q, NULL};
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_SPECHUB, p, &s, NULL, NULL);
    mdsd_mc_result mc = test_simulate(v, TRIALS, 5);
    cr_assert_gt(mdsd_mc_check_output(&mc, p).p_value, SIGNIFICANCE);
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

/* ---- exact forms against alpha* and independent enumerations ------------ */

static const mdsd_verifier_kind mine[] = {
    MDSD_VERIFIER_SD, MDSD_VERIFIER_RRS, MDSD_VERIFIER_RRSW,
    MDSD_VERIFIER_KSEQ, MDSD_VERIFIER_SPECHUB, MDSD_VERIFIER_GREEDY,
};

Test(verifier, every_verifier_is_at_most_alpha_star_of_its_scheme)
{
    gsl_rng *r = mdsd_rng_alloc(31);
    for (size_t k = 0; k < sizeof mine / sizeof *mine; k++) {
        for (unsigned i = 0; i < 150; i++) {
            instance in;
            make_instance(r, i, mine[k], mine[k] == MDSD_VERIFIER_RRS && i % 3 == 0, &in);
            double alpha, per_draft[NMAX], star = test_alpha_star(in.p, &in.s);
            cr_assert_eq(mdsd_verifier_exact(mine[k], in.p, &in.s, NULL, &alpha, per_draft, NULL),
                         MDSD_OK);
            char ctx[512];
            describe(&in, ctx, sizeof ctx);
            cr_assert_leq(alpha, star + tol_for(in.q, in.V), "%s: alpha %.15g > alpha* %.15g on %s",
                          mdsd_verifier_name(mine[k]), alpha, star, ctx);
            cr_assert_geq(alpha, -1e-15);
            double total = 0.0;
            for (size_t j = 0; j < in.n; j++)
                total += per_draft[j];
            cr_assert_float_eq(total, alpha, 1e-12, "per-draft rates must sum to alpha");
        }
    }
    gsl_rng_free(r);
}

/* Hu Thm 7: the greedy verifier attains alpha*(greedy), whose closed form is
 * p(T) + sum_{x not in T} min(p(x), q(x)/(1 - q(T))). */
Test(verifier, greedy_attains_alpha_star_of_the_greedy_scheme)
{
    gsl_rng *r = mdsd_rng_alloc(32);
    for (unsigned i = 0; i < 300; i++) {
        instance in;
        make_instance(r, i, MDSD_VERIFIER_GREEDY, false, &in);
        double alpha, star = test_alpha_star(in.p, &in.s);
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_GREEDY, in.p, &in.s, NULL, &alpha, NULL,
                                         NULL), MDSD_OK);
        int T[NMAX];
        mdsd_top_indices(in.q, in.V, in.n - 1, T);
        double pT = 0.0, qT = 0.0, closed = 0.0;
        for (size_t j = 0; j + 1 < in.n; j++)
            pT += in.p[T[j]], qT += in.q[T[j]];
        for (size_t x = 0; x < in.V; x++) {
            bool inT = false;
            for (size_t j = 0; j + 1 < in.n; j++)
                inT |= T[j] == (int)x;
            if (!inT)
                closed += fmin(in.p[x], in.q[x] / (1.0 - qT));
        }
        closed += pT;
        cr_assert_float_eq(alpha, star, tol_for(in.q, in.V), "greedy %.15g vs alpha* %.15g", alpha, star);
        cr_assert_float_eq(alpha, closed, tol_for(in.q, in.V));
    }
    gsl_rng_free(r);
}

/* SpecHub: alpha = p(a) + sum_{x != a} min(p, q/(1-q(a))) = alpha*(hub);
 * Thm 4: q(a) > 1/2 implies alpha_spechub >= alpha*_iid(n = 2). */
Test(verifier, spechub_attains_alpha_star_of_hub_and_thm_4_holds)
{
    gsl_rng *r = mdsd_rng_alloc(33);
    int thm4_cases = 0;
    for (unsigned i = 0; i < 300; i++) {
        instance in;
        make_instance(r, i, MDSD_VERIFIER_SPECHUB, false, &in);
        double alpha, star = test_alpha_star(in.p, &in.s);
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_SPECHUB, in.p, &in.s, NULL, &alpha, NULL,
                                         NULL), MDSD_OK);
        size_t a = mdsd_argmax(in.q, in.V);
        double closed = in.p[a];
        for (size_t x = 0; x < in.V; x++)
            if (x != a)
                closed += fmin(in.p[x], in.q[x] / (1.0 - in.q[a]));
        cr_assert_float_eq(alpha, closed, tol_for(in.q, in.V));
        cr_assert_float_eq(alpha, star, tol_for(in.q, in.V), "spechub %.15g vs alpha*(hub) %.15g", alpha, star);
        if (in.q[a] > 0.5) {
            mdsd_scheme iid = {MDSD_SCHEME_IID, 2, in.V, in.q, NULL};
            cr_assert_geq(alpha, test_alpha_star(in.p, &iid) - tol_for(in.q, in.V), "SpecHub Thm 4 fails");
            thm4_cases++;
        }
    }
    cr_assert_gt(thm4_cases, 20);
    gsl_rng_free(r);
}

/* SpecHub Cor. 1: the hub token is output with probability p(a). */
Test(verifier, spechub_outputs_the_hub_token_with_probability_p_a)
{
    static const double p[5] = {0.05, 0.3, 0.25, 0.3, 0.1}, q[5] = {0.45, 0.05, 0.2, 0.1, 0.2};
    mdsd_scheme s = {MDSD_SCHEME_HUB, 2, 5, q, NULL};
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_SPECHUB, p, &s, NULL, NULL);
    mdsd_mc_result mc = test_simulate(v, TRIALS, 11);
    assert_within_5se((double)mc.histogram[0] / TRIALS, p[0], TRIALS, "P(output = a)", "Cor. 1");
    mdsd_mc_result_free(&mc);
    mdsd_verifier_free(v);
}

/* rrs (iid and multi): the exact per-draft rates against a direct sum over
 * the enumerated tuples of prod_{l<j} (1 - a_l(x_l)) a_j(x_j), with the
 * residual chain recomputed here. */
Test(verifier, rrs_exact_rates_match_a_sum_over_tuples)
{
    gsl_rng *r = mdsd_rng_alloc(34);
    for (unsigned i = 0; i < 200; i++) {
        instance in;
        make_instance(r, i, MDSD_VERIFIER_RRS, i % 2, &in);
        size_t V = in.V, n = in.n, qstep = in.s.kind == MDSD_SCHEME_MULTI ? V : 0;
        double chain[NMAX][VMAX];
        memcpy(chain[0], in.p, V * sizeof(double));
        for (size_t j = 0; j + 1 < n; j++) {
            const double *qj = in.q + j * qstep;
            double mass = 0.0;
            for (size_t x = 0; x < V; x++)
                mass += chain[j + 1][x] = fmax(chain[j][x] - qj[x], 0.0);
            for (size_t x = 0; x < V; x++)
                chain[j + 1][x] = mass > 0 ? chain[j + 1][x] / mass : chain[j][x];
        }
        double want[NMAX] = {0}, got[NMAX], alpha;
        mdsd_joint D = enumerate(&in.s);
        for (size_t t = 0; t < D.count; t++) {
            double reach = D.prob[t];
            for (size_t j = 0; j < n; j++) {
                int x = D.tokens[t * n + j];
                double a = fmin(1.0, chain[j][x] / in.q[j * qstep + (size_t)x]);
                want[j] += reach * a;
                reach *= 1.0 - a;
            }
        }
        mdsd_joint_free(&D);
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_RRS, in.p, &in.s, NULL, &alpha, got, NULL),
                     MDSD_OK);
        for (size_t j = 0; j < n; j++)
            cr_assert_float_eq(got[j], want[j], 1e-12, "draft %zu: %.15g vs %.15g", j, got[j],
                               want[j]);
    }
    gsl_rng_free(r);
}

/* SpecTr: draft uniform on d symbols, target uniform on d/r of them:
 * alpha*_iid = 1 - (1 - 1/r)^n and k-Seq attains it. */
Test(verifier, kseq_attains_the_uniform_optimum)
{
    double q[6], p[6];
    for (size_t d = 2; d <= 6; d++)
        for (size_t keep = 1; keep <= d; keep++)
            if (d % keep == 0)
                for (size_t n = 1; n <= 3; n++) {
                    for (size_t x = 0; x < 6; x++) {
                        q[x] = x < d ? 1.0 / (double)d : 0.0;
                        p[x] = x < keep ? 1.0 / (double)keep : 0.0;
                    }
                    double rr = (double)d / (double)keep, alpha;
                    mdsd_scheme s = {MDSD_SCHEME_IID, n, 6, q, NULL};
                    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_KSEQ, p, &s, NULL, &alpha, NULL,
                                                     NULL), MDSD_OK);
                    double want = 1.0 - pow(1.0 - 1.0 / rr, (double)n);
                    cr_assert_float_eq(alpha, want, 1e-12, "d=%zu r=%g n=%zu", d, rr, n);
                    cr_assert_float_eq(test_alpha_star(p, &s), want, 1e-12);
                }
}

/* SpecTr: p_acc(k-Seq) >= (1 - 1/e) alpha*_iid. */
Test(verifier, kseq_is_within_1_minus_1_over_e_of_optimal)
{
    gsl_rng *r = mdsd_rng_alloc(35);
    for (unsigned i = 0; i < 300; i++) {
        instance in;
        make_instance(r, i, MDSD_VERIFIER_KSEQ, false, &in);
        double alpha, star = test_alpha_star(in.p, &in.s);
        cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_KSEQ, in.p, &in.s, NULL, &alpha, NULL,
                                         NULL), MDSD_OK);
        cr_assert_geq(alpha, (1.0 - exp(-1.0)) * star - EXACT_TOL, "k-Seq %.6f vs alpha* %.6f",
                      alpha, star);
    }
    gsl_rng_free(r);
}

/* ---- the Monte-Carlo engine ---------------------------------------------- */

Test(verifier, monte_carlo_does_not_depend_on_the_thread_count)
{
    static const double p[5] = {0.1, 0.2, 0.3, 0.25, 0.15}, q[5] = {0.3, 0.3, 0.2, 0.1, 0.1};
    mdsd_scheme s = {MDSD_SCHEME_IID, 3, 5, q, NULL};
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_KSEQ, p, &s, NULL, NULL);
    mdsd_mc_opts o;
    mdsd_mc_opts_init(&o);
    o.trials = 3 * MDSD_MC_BLOCK + 17;
    o.seed = 9;
    mdsd_mc_result one, two;
    o.threads = 1;
    cr_assert_eq(mdsd_mc_run(v, &o, &one, NULL), MDSD_OK);
    o.threads = 2;
    cr_assert_eq(mdsd_mc_run(v, &o, &two, NULL), MDSD_OK);
    cr_assert_eq(one.alpha, two.alpha);
    cr_assert_eq(one.se, two.se);
    cr_assert_eq(memcmp(one.per_draft, two.per_draft, 3 * sizeof(uint64_t)), 0);
    cr_assert_eq(memcmp(one.histogram, two.histogram, 5 * sizeof(uint64_t)), 0);
    cr_assert(one.ci_low < one.alpha && one.alpha < one.ci_high);
    o.position = 1; /* another position: another stream */
    mdsd_mc_result other;
    cr_assert_eq(mdsd_mc_run(v, &o, &other, NULL), MDSD_OK);
    cr_assert_neq(memcmp(one.histogram, other.histogram, 5 * sizeof(uint64_t)), 0);
    mdsd_mc_result_free(&one), mdsd_mc_result_free(&two), mdsd_mc_result_free(&other);
    mdsd_verifier_free(v);
}

Test(verifier, wilson_interval_is_correct_at_known_points)
{
    double lo, hi;
    mdsd_mc_wilson(50, 100, 0.95, &lo, &hi); /* textbook: [0.4038, 0.5962] */
    cr_assert_float_eq(lo, 0.403832, 1e-6);
    cr_assert_float_eq(hi, 0.596168, 1e-6);
    mdsd_mc_wilson(0, 100, 0.95, &lo, &hi);
    cr_assert_float_eq(lo, 0.0, 1e-15);
    cr_assert_float_eq(hi, 0.036994, 1e-6);
}

/* ---- refusals ------------------------------------------------------------- */

Test(verifier, verifiers_refuse_schemes_they_are_not_defined_on)
{
    static const double p[4] = {0.25, 0.25, 0.25, 0.25}, q[4] = {0.4, 0.3, 0.2, 0.1};
    struct {
        mdsd_verifier_kind kind;
        mdsd_scheme_kind scheme;
        size_t n;
    } bad[] = {
        {MDSD_VERIFIER_SD, MDSD_SCHEME_IID, 2},    {MDSD_VERIFIER_RRS, MDSD_SCHEME_WOR, 2},
        {MDSD_VERIFIER_RRSW, MDSD_SCHEME_IID, 2},  {MDSD_VERIFIER_KSEQ, MDSD_SCHEME_WOR, 2},
        {MDSD_VERIFIER_SPECHUB, MDSD_SCHEME_IID, 2}, {MDSD_VERIFIER_GREEDY, MDSD_SCHEME_IID, 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mdsd_scheme s = {bad[i].scheme, bad[i].n, 4, q, NULL};
        mdsd_err err;
        cr_assert_null(mdsd_verifier_alloc(bad[i].kind, p, &s, NULL, &err));
        cr_assert_eq(err.code, MDSD_EUNSUPPORTED);
        cr_assert(strstr(err.msg, mdsd_verifier_name(bad[i].kind)) &&
                  strstr(err.msg, mdsd_scheme_name(bad[i].scheme)), "%s", err.msg);
    }
}

Test(verifier, bad_target_and_oversized_enumeration_are_reported)
{
    static const double q[4] = {0.4, 0.3, 0.2, 0.1}, bad_p[4] = {0.5, 0.5, -0.1, 0.1};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 4, q, NULL};
    mdsd_err err;
    cr_assert_null(mdsd_verifier_alloc(MDSD_VERIFIER_RRS, bad_p, &s, NULL, &err));
    cr_assert(strstr(err.msg, "target") && strstr(err.msg, "index 2"), "%s", err.msg);
    double alpha;
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_KSEQ, bad_p, &s, NULL, &alpha, NULL, &err),
                 MDSD_EINVAL);
    double uq[20], up[20];
    for (int x = 0; x < 20; x++)
        uq[x] = x < 10 ? 0.08 : 0.02, up[x] = 0.05;
    mdsd_scheme w = {MDSD_SCHEME_WOR, 6, 20, uq, NULL};
    mdsd_verifier_opts few;
    mdsd_verifier_opts_init(&few);
    few.max_paths = 50; /* the certified route visits more draw paths than that */
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_RRSW, up, &w, &few, &alpha, NULL, &err),
                 MDSD_ETOOBIG);
    cr_assert(strstr(err.msg, "`trials`"), "%s", err.msg);
    const mdsd_verifier_ops *ops[] = {&mdsd_verify_sd_ops, &mdsd_verify_rrs_ops,
                                      &mdsd_verify_rrsw_ops, &mdsd_verify_kseq_ops,
                                      &mdsd_verify_spechub_ops, &mdsd_verify_greedy_ops};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++) {
        cr_assert_str_eq(ops[i]->name, mdsd_verifier_name(mine[i]));
        cr_assert_eq(ops[i]->scheme, mdsd_verifier_scheme(mine[i]));
    }
    mdsd_verifier_kind k;
    cr_assert_eq(mdsd_verifier_parse("bogus", &k, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "bogus") && strstr(err.msg, "spechub"), "%s", err.msg);
    for (int i = 0; i < MDSD_VERIFIER_KINDS; i++) {
        cr_assert_eq(mdsd_verifier_parse(mdsd_verifier_name((mdsd_verifier_kind)i), &k, NULL),
                     MDSD_OK);
        cr_assert_eq((int)k, i);
    }
}

/* Regression (found by mdsd check): drawing the tokens that hold nearly all
 * of q left 1 - q(drawn) to rounding, and rrsw's exact rate became NaN and
 * its simulation could accept on garbage. */
Test(verifier, rrsw_with_nearly_one_hot_draft)
{
    static const double p[3] = {0.07496, 0.92504 - 5.2e-9, 5.2e-9};
    static const double q[3] = {1 - 1.66e-5 - 6.7e-20, 6.7e-20, 1.66e-5};
    mdsd_scheme s = {MDSD_SCHEME_WOR, 3, 3, q, NULL};
    double alpha, per_draft[3];
    cr_assert_eq(mdsd_verifier_exact(MDSD_VERIFIER_RRSW, p, &s, NULL, &alpha, per_draft, NULL), MDSD_OK);
    cr_assert_float_eq(alpha, 1.0, 1e-12);
    cr_assert_float_eq(per_draft[0], 0.07496 + 6.7e-20 + 5.2e-9, 1e-12); /* sum min(p, q) */
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRSW, p, &s, NULL, NULL);
    mdsd_mc_opts mc;
    mdsd_mc_opts_init(&mc);
    mc.trials = 100000;
    mdsd_mc_result res;
    cr_assert_eq(mdsd_mc_run(v, &mc, &res, NULL), MDSD_OK);
    cr_assert_eq(res.alpha, 1.0);
    cr_assert_gt(mdsd_mc_check_output(&res, p).p_value, 1e-6);
    mdsd_mc_result_free(&res);
    mdsd_verifier_free(v);
}
