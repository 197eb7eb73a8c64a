/* check_verify.c - checks of the verifiers (MATH.md section 3): validity
 * (the output follows p, by simulation), exact acceptance formulas against
 * simulation, acceptance never above alpha* of the scheme, and the papers'
 * results on k-Seq, SpecHub, Hu et al.'s greedy verifier and Khisti et al.'s
 * importance sampling. Verifiers are simulated through env->verifiers and
 * their exact rates come from env->exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_impl.h"
#include "dist.h"
#include "montecarlo.h"
#include "rng.h"

typedef struct {
    mdsd_verifier_kind v;
    mdsd_scheme_kind s;
    size_t n_lo, n_hi;
} vcase;

/* Verifiers with closed-form or enumerated exact rates (tolerance 1e-9). */
static const vcase exact_cases[] = {
    {MDSD_VERIFIER_SD, MDSD_SCHEME_IID, 1, 1},       {MDSD_VERIFIER_RRS, MDSD_SCHEME_IID, 2, 3},
    {MDSD_VERIFIER_RRS, MDSD_SCHEME_MULTI, 2, 3},    {MDSD_VERIFIER_RRSW, MDSD_SCHEME_WOR, 2, 3},
    {MDSD_VERIFIER_KSEQ, MDSD_SCHEME_IID, 2, 3},     {MDSD_VERIFIER_SPECHUB, MDSD_SCHEME_HUB, 2, 2},
    {MDSD_VERIFIER_GREEDY, MDSD_SCHEME_GREEDY, 2, 3},
    {MDSD_VERIFIER_OT, MDSD_SCHEME_IID, 1, 4},       {MDSD_VERIFIER_OT, MDSD_SCHEME_GREEDY, 2, 3},
    {MDSD_VERIFIER_OT, MDSD_SCHEME_HUB, 2, 2},
};
/* Verifiers whose rates come from an LP (tolerance 1e-7). */
static const vcase lp_cases[] = {
    {MDSD_VERIFIER_IS, MDSD_SCHEME_IID, 2, 3},   {MDSD_VERIFIER_IS, MDSD_SCHEME_MULTI, 2, 2},
    {MDSD_VERIFIER_OTM, MDSD_SCHEME_IID, 2, 3},  {MDSD_VERIFIER_OTM, MDSD_SCHEME_WOR, 2, 3},
    {MDSD_VERIFIER_OTM, MDSD_SCHEME_HUB, 2, 2},  {MDSD_VERIFIER_OTM, MDSD_SCHEME_CPS, 2, 3},
};

static size_t case_n(mdsd_check_ctx *c, const vcase *vc)
{
    size_t hi = vc->n_hi;
    while (hi > vc->n_lo && pow((double)c->V, (double)hi) > 256.0)
        hi--;
    return chk_int(c, vc->n_lo, hi);
}

/* ---- every verifier <= alpha* of its scheme ------------------------------------ */

static int le_alpha(mdsd_check_ctx *c, const vcase *cases, size_t count, mdsd_err *err)
{
    for (size_t k = 0; k < count; k++) {
        size_t n = case_n(c, &cases[k]);
        mdsd_scheme s;
        if (!chk_scheme(c, cases[k].s, n, &s))
            continue;
        double av, astar;
        int rc = chk_exact(c, cases[k].v, &s, NULL, &av, NULL, err);
        if (rc == MDSD_OK)
            rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &astar, err);
        if (rc)
            return rc;
        if (cases[k].v == MDSD_VERIFIER_OTM)
            c->acc[0] = fmax(c->acc[0], fabs(av - astar));
        chk_record(c, n, fmax(0.0, av - astar), "%s on %s, n = %zu: alpha %.17g, alpha* (brute) %.17g",
                   mdsd_verifier_name(cases[k].v), mdsd_scheme_name(s.kind), n, av, astar);
    }
    return MDSD_OK;
}

static int run_le_alpha(mdsd_check_ctx *c, mdsd_err *err)
{
    return le_alpha(c, exact_cases, sizeof exact_cases / sizeof *exact_cases, err);
}

static int run_lp_le_alpha(mdsd_check_ctx *c, mdsd_err *err)
{
    return le_alpha(c, lp_cases, sizeof lp_cases / sizeof *lp_cases, err);
}

static void sum_lp_le_alpha(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "otm attains alpha*: max |alpha(otm) - alpha*| = %.3g", c->acc[0]);
}

/* ---- Monte Carlo: output ~ p, and exact acceptance = simulated ---------------- */

static int simulate(mdsd_check_ctx *c, mdsd_verifier_kind kind, const mdsd_scheme *s, bool histogram,
                    mdsd_mc_result *mc, mdsd_err *err)
{
    const mdsd_verifier_ops *ops = c->env->verifiers[kind];
    if (!ops)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "no verifier %s in the environment",
                         mdsd_verifier_name(kind));
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc_ops(ops, c->p, s, NULL, &e);
    if (!v)
        return mdsd_fail_from(err, &e, "check: verifier");
    mdsd_mc_opts mo;
    mdsd_mc_opts_init(&mo);
    mo.trials = c->opts->trials;
    mo.seed = mdsd_seed_mix(c->opts->seed, mdsd_seed_name(c->def->name), c->draw);
    mo.position = c->case_index++;
    mo.threads = c->opts->threads;
    mo.histogram = histogram;
    int rc = mdsd_mc_run(v, &mo, mc, err);
    mdsd_verifier_free(v);
    return rc;
}

static int mc_cases(mdsd_check_ctx *c, bool output, const vcase *cases, size_t count, mdsd_err *err)
{
    for (size_t k = 0; k < count; k++) {
        size_t n = case_n(c, &cases[k]);
        mdsd_scheme s;
        if (!chk_scheme(c, cases[k].s, n, &s))
            continue;
        double exact = 0.0;
        int rc = output ? MDSD_OK : chk_exact(c, cases[k].v, &s, NULL, &exact, NULL, err);
        mdsd_mc_result mc;
        memset(&mc, 0, sizeof mc);
        if (rc == MDSD_OK)
            rc = simulate(c, cases[k].v, &s, output, &mc, err);
        if (rc == MDSD_OK) {
            const char *vn = mdsd_verifier_name(cases[k].v), *sn = mdsd_scheme_name(s.kind);
            if (output) {
                mdsd_gof g = chk_gof(mc.histogram, c->p, c->V);
                rc = chk_record_p(c, n, g.p_value, "%s on %s, n = %zu: chi-square %.4g, %zu dof, "
                                  "p-value %.3g over %llu trials", vn, sn, n, g.statistic, g.dof,
                                  g.p_value, (unsigned long long)mc.trials);
            } else {
                uint64_t hits = 0;
                for (size_t j = 0; j < n; j++)
                    hits += mc.per_draft[j];
                double pv = chk_binomial_p(hits, mc.trials, exact);
                rc = chk_record_p(c, n, pv, "%s on %s, n = %zu: exact alpha %.6g, simulated %.6g "
                                  "(%llu trials), p-value %.3g", vn, sn, n, exact,
                                  (double)hits / (double)mc.trials, (unsigned long long)mc.trials, pv);
            }
        }
        mdsd_mc_result_free(&mc);
        if (rc)
            return rc;
    }
    return MDSD_OK;
}

static int run_outputs_p(mdsd_check_ctx *c, mdsd_err *err)
{
    int rc = mc_cases(c, true, exact_cases, sizeof exact_cases / sizeof *exact_cases, err);
    return rc ? rc : mc_cases(c, true, lp_cases, sizeof lp_cases / sizeof *lp_cases, err);
}

static int run_exact_mc(mdsd_check_ctx *c, mdsd_err *err)
{
    int rc = mc_cases(c, false, exact_cases, sizeof exact_cases / sizeof *exact_cases, err);
    return rc ? rc : mc_cases(c, false, lp_cases, sizeof lp_cases / sizeof *lp_cases, err);
}

/* ---- k-Seq (SpecTr) ------------------------------------------------------------ */

static int run_kseq_bounds(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = 1;
    while (n < 4 && pow((double)c->V, (double)(n + 1)) <= 256.0)
        n++;
    n = chk_int(c, 1, n);
    mdsd_scheme s;
    chk_scheme(c, MDSD_SCHEME_IID, n, &s);
    double ak, astar, ub;
    int rc = chk_exact(c, MDSD_VERIFIER_KSEQ, &s, NULL, &ak, NULL, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &astar, err);
    if (rc == MDSD_OK)
        rc = chk_spectr_upper(c->p, c->q, c->V, n, &ub, err);
    if (rc)
        return rc;
    double cn = 1.0 - pow(1.0 - 1.0 / (double)n, (double)n), ce = 1.0 - exp(-1.0);
    if (astar > 0.0)
        c->acc[0] = c->cnt[0]++ ? fmin(c->acc[0], ak / astar) : ak / astar;
    chk_record(c, n, fmax(0.0, fmax(cn * ub - ak, ce * astar - ak)),
               "n = %zu: alpha(kseq) %.17g; (1-(1-1/n)^n) ub_n = %.17g; (1-1/e) alpha* = %.17g", n,
               ak, cn * ub, ce * astar);
    return MDSD_OK;
}

static void sum_kseq_bounds(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "smallest alpha(kseq) / alpha* = %.4f", c->acc[0]);
}

static int run_kseq_uniform(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = 1;
    while (n < 4 && pow((double)c->V, (double)(n + 1)) <= 4096.0)
        n++;
    n = chk_int(c, 1, n);
    mdsd_scheme s;
    chk_scheme(c, MDSD_SCHEME_IID, n, &s);
    double ak, astar;
    int rc = chk_exact(c, MDSD_VERIFIER_KSEQ, &s, NULL, &ak, NULL, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &astar, err);
    if (rc)
        return rc;
    chk_record(c, n, fabs(ak - astar), "d = %zu, r = %g, n = %zu: alpha(kseq) %.17g, alpha* %.17g",
               c->toy.d, c->toy.r, n, ak, astar);
    return MDSD_OK;
}

/* ---- Hu et al. Thm 7: the greedy verifier attains alpha*(greedy) ---------------- */

static int run_greedy(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = 2;
    while (n < 4 && pow((double)c->V, (double)(n + 1)) <= 4096.0)
        n++;
    n = chk_int(c, 2, n);
    mdsd_scheme s;
    if (!chk_scheme(c, MDSD_SCHEME_GREEDY, n, &s))
        return MDSD_CHECK_NA;
    double ag, astar;
    int rc = chk_exact(c, MDSD_VERIFIER_GREEDY, &s, NULL, &ag, NULL, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &astar, err);
    if (rc)
        return rc;
    chk_record(c, n, fabs(ag - astar), "n = %zu: alpha(greedy verifier) %.17g, alpha*(greedy) %.17g",
               n, ag, astar);
    return MDSD_OK;
}

/* ---- SpecHub --------------------------------------------------------------------- */

/* Cor. 1: the hub token a is output, and so accepted (every hub tuple holds
 * a), with probability p(a); simulated, exact binomial test. */
static int run_cor1(mdsd_check_ctx *c, mdsd_err *err)
{
    mdsd_scheme s;
    if (!chk_scheme(c, MDSD_SCHEME_HUB, 2, &s))
        return MDSD_CHECK_NA;
    const mdsd_verifier_ops *ops = c->env->verifiers[MDSD_VERIFIER_SPECHUB];
    if (!ops)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "no verifier spechub in the environment");
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc_ops(ops, c->p, &s, NULL, &e);
    mdsd_sampler *sm = v ? mdsd_sampler_alloc(&s, &e) : NULL;
    gsl_rng *r = mdsd_rng_alloc(mdsd_seed_mix(c->opts->seed, mdsd_seed_name(c->def->name), c->draw));
    if (!v || !sm || !r) {
        mdsd_verifier_free(v);
        mdsd_sampler_free(sm);
        if (r)
            gsl_rng_free(r);
        return !v || !sm ? mdsd_fail_from(err, &e, "check: spechub")
                         : mdsd_fail(err, MDSD_ENOMEM, "check: out of memory for a random stream");
    }
    int a = (int)mdsd_argmax(c->q, c->V), drafts[2];
    uint64_t T = c->opts->trials, hits = 0;
    for (uint64_t t = 0; t < T; t++) {
        int j;
        mdsd_sampler_draw(sm, r, drafts);
        int y = mdsd_verifier_verify(v, drafts, r, &j);
        hits += y == a && j >= 0;
    }
    mdsd_verifier_free(v);
    mdsd_sampler_free(sm);
    gsl_rng_free(r);
    double pv = chk_binomial_p(hits, T, c->p[a]);
    return chk_record_p(c, 2, pv, "hub token %d: p(a) = %.6g, accepted as a in %.6g of %llu trials, "
                        "p-value %.3g", a, c->p[a], (double)hits / (double)T, (unsigned long long)T, pv);
}

/* The hub a and q(a) / (1 - q(a)) (with 1 - q(a) summed, not subtracted);
 * 0 when the hub scheme is not defined. */
static int hub_ratio(const mdsd_check_ctx *c, double *ratio)
{
    size_t a = mdsd_argmax(c->q, c->V);
    double rest = 0.0;
    for (size_t x = 0; x < c->V; x++)
        if (x != a)
            rest += c->q[x];
    *ratio = c->q[a] / rest;
    mdsd_scheme s;
    return chk_scheme(c, MDSD_SCHEME_HUB, 2, &s);
}

/* Thm 3: if q(a)/(1 - q(a)) > 1 - alpha_1, alpha_1 = sum min(p, q) (the first
 * draft's rate), SpecHub's acceptance beats rrs's (iid, n = 2). The printed
 * statement says "higher acceptance rate in the second draft"; its proof
 * compares, token by token x != a, the second-draft acceptance
 * min((p - q)+, r q(x)) of SpecHub with min((p - q)+, (1 - alpha_1) q(x)) of
 * rrs and adds that SpecHub accepts a with probability p(a), the most
 * possible: so what it proves, and what is tested, is the total acceptance
 * alpha(spechub) >= alpha(rrs). The literal per-draft reading is the finding
 * spechub-thm3-draft2. */
static int thm3_rates(mdsd_check_ctx *c, double *hub, double *rrs, mdsd_err *err)
{
    double ratio;
    if (!hub_ratio(c, &ratio))
        return MDSD_CHECK_NA;
    double alpha1 = 0.0;
    for (size_t x = 0; x < c->V; x++)
        alpha1 += fmin(c->p[x], c->q[x]);
    if (!(ratio > 1.0 - alpha1))
        return MDSD_CHECK_NA;
    mdsd_scheme h, iid;
    chk_scheme(c, MDSD_SCHEME_HUB, 2, &h);
    chk_scheme(c, MDSD_SCHEME_IID, 2, &iid);
    int rc = chk_exact(c, MDSD_VERIFIER_SPECHUB, &h, NULL, &hub[0], hub + 1, err);
    return rc ? rc : chk_exact(c, MDSD_VERIFIER_RRS, &iid, NULL, &rrs[0], rrs + 1, err);
}

static int run_thm3(mdsd_check_ctx *c, mdsd_err *err)
{
    double hub[3], rrs[3];
    int rc = thm3_rates(c, hub, rrs, err);
    if (rc)
        return rc;
    chk_record(c, 2, fmax(0.0, rrs[0] - hub[0]), "alpha(spechub) %.17g, alpha(rrs, iid) %.17g",
               hub[0], rrs[0]);
    return MDSD_OK;
}

static int run_thm3_draft2(mdsd_check_ctx *c, mdsd_err *err)
{
    double hub[3], rrs[3];
    int rc = thm3_rates(c, hub, rrs, err);
    if (rc)
        return rc;
    chk_record(c, 2, fmax(0.0, rrs[2] - hub[2]),
               "P(draft 2 accepted): spechub %.17g, rrs %.17g (totals %.6g, %.6g)", hub[2], rrs[2],
               hub[0], rrs[0]);
    return MDSD_OK;
}

static void sum_hyp(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "hypothesis held on %zu of %zu draws; claim violated (beyond %.0e) on %zu",
             c->res->instances, c->res->draws, c->def->tol, c->res->counterexamples);
}

/* Thm 4: q(a) > 1/2 => alpha(spechub) >= alpha*_iid(n = 2). Instances with
 * q(a) <= 1/2 are sharpened (q^2 renormalised, repeatedly) until q(a) > 1/2. */
static int run_thm4(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t a = mdsd_argmax(c->q, c->V);
    for (int it = 0; it < 60 && !(c->q[a] > 0.5); it++) {
        double z = 0.0;
        for (size_t x = 0; x < c->V; x++)
            z += c->q[x] * c->q[x];
        for (size_t x = 0; x < c->V; x++)
            c->q[x] = c->q[x] * c->q[x] / z;
    }
    double ratio;
    if (!(c->q[a] > 0.5) || !hub_ratio(c, &ratio))
        return MDSD_CHECK_NA;
    mdsd_scheme h, iid;
    chk_scheme(c, MDSD_SCHEME_HUB, 2, &h);
    chk_scheme(c, MDSD_SCHEME_IID, 2, &iid);
    double hub, astar;
    int rc = chk_exact(c, MDSD_VERIFIER_SPECHUB, &h, NULL, &hub, NULL, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &iid, MDSD_BOUND_BRUTE, &astar, err);
    if (rc)
        return rc;
    c->acc[0] += hub - astar;
    chk_record(c, 2, fmax(0.0, astar - hub), "q(a) = %.6g: alpha(spechub) %.17g, alpha*_iid(2) %.17g",
               c->q[a], hub, astar);
    return MDSD_OK;
}

static void sum_thm4(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "mean alpha(spechub) - alpha*_iid(2) = %.4f over %zu instances with q(a) > 1/2",
             c->acc[0] / (double)c->res->instances, c->res->instances);
}

/* SpecHub App. D (Table 4): uniform-logit toy pairs, V = 50, the (T, lambda)
 * grid of the table. */
static const double tab4_T[] = {0.1, 0.1, 0.25, 0.25, 0.5, 0.5};
static const double tab4_lambda[] = {0.7, 0.5, 0.7, 0.5, 0.7, 0.5};

static void configure_tab4(mdsd_toy *t, size_t draw, gsl_rng *r)
{
    (void)r;
    t->T = tab4_T[draw % 6];
    t->lambda = tab4_lambda[draw % 6];
}

static int run_hub_ge_rrs(mdsd_check_ctx *c, mdsd_err *err)
{
    mdsd_scheme h, iid;
    if (!chk_scheme(c, MDSD_SCHEME_HUB, 2, &h))
        return MDSD_CHECK_NA;
    chk_scheme(c, MDSD_SCHEME_IID, 2, &iid);
    double hub, rrs;
    int rc = chk_exact(c, MDSD_VERIFIER_SPECHUB, &h, NULL, &hub, NULL, err);
    if (rc == MDSD_OK)
        rc = chk_exact(c, MDSD_VERIFIER_RRS, &iid, NULL, &rrs, NULL, err);
    if (rc)
        return rc;
    size_t cell = 0;
    while (cell < 5 && !(tab4_T[cell] == c->toy.T && tab4_lambda[cell] == c->toy.lambda))
        cell++;
    c->acc[2 * cell] += rrs;
    c->acc[2 * cell + 1] += hub;
    c->cnt[cell]++;
    c->cnt[6 + cell] += rrs > hub + 1e-12;
    chk_record(c, 2, fmax(0.0, rrs - hub), "T = %g, lambda = %g: alpha(rrs) %.17g > alpha(spechub) %.17g",
               c->toy.T, c->toy.lambda, rrs, hub);
    return MDSD_OK;
}

static void sum_hub_ge_rrs(const mdsd_check_ctx *c, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "mean alpha (rrs / spechub), rrs better on k of N:");
    for (size_t cell = 0; cell < 6 && len < size; cell++) {
        double N = (double)c->cnt[cell];
        if (c->cnt[cell])
            len += (size_t)snprintf(buf + len, size - len, "%s T=%g lambda=%g: %.4f / %.4f (%zu/%zu)",
                                    cell ? ";" : "", tab4_T[cell], tab4_lambda[cell],
                                    c->acc[2 * cell] / N, c->acc[2 * cell + 1] / N, c->cnt[6 + cell],
                                    c->cnt[cell]);
    }
}

/* ---- Khisti et al. Thm 1 (and Thm 4, different drafters): the full IS LP ------- */

static int run_is(mdsd_check_ctx *c, mdsd_err *err)
{
    mdsd_verifier_opts vo;
    mdsd_verifier_opts_init(&vo); /* is_top = 0: the full weight LP */
    static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_MULTI};
    for (size_t k = 0; k < 2; k++) {
        mdsd_scheme s;
        if (!chk_scheme(c, kinds[k], 2, &s))
            continue;
        double ai, astar;
        int rc = chk_exact(c, MDSD_VERIFIER_IS, &s, &vo, &ai, NULL, err);
        if (rc == MDSD_OK)
            rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &astar, err);
        if (rc)
            return rc;
        chk_record(c, 2, fabs(ai - astar), "%s, n = 2: alpha(is, full LP) %.17g, alpha* (brute) %.17g",
                   mdsd_scheme_name(kinds[k]), ai, astar);
    }
    return MDSD_OK;
}

const mdsd_check mdsd_checks_verify[] = {
    {"kseq-lower-bounds", "SpecTr (NeurIPS 2023) Thm 1 with Lemma 3",
     "alpha(kseq) >= (1 - (1 - 1/n)^n) ub_n and >= (1 - 1/e) alpha*_iid, n = 1..4",
     "max violation", true, false, 1e-9, FAM_ALL, 2, 5, NULL, run_kseq_bounds, sum_kseq_bounds},
    {"kseq-uniform-optimal", "SpecTr (NeurIPS 2023) App. B, uniform example",
     "on the uniform family k-Seq attains alpha*_iid, n = 1..4",
     "max |alpha(kseq) - alpha*(brute)|", true, false, 1e-9, FAM(MDSD_TOY_UNIFORM), 2, 8, NULL,
     run_kseq_uniform, NULL},
    {"verifier-le-alpha", "definition of alpha* (SpecTr eq. 4; Hu et al. eq. 7)",
     "sd, rrs (iid, multi), rrsw, kseq, spechub, greedy: exact alpha <= alpha* (brute) of the scheme",
     "max alpha - alpha*", true, false, 1e-9, FAM_ALL, 2, 6, NULL, run_le_alpha, NULL},
    {"verifier-lp-le-alpha", "definition of alpha* (SpecTr eq. 4; Hu et al. eq. 7)",
     "is (iid, multi) and otm (iid, wor, hub, cps), rates from LPs: alpha <= alpha* (brute)",
     "max alpha - alpha*", true, false, 1e-7, FAM_ALL, 2, 6, NULL, run_lp_le_alpha, sum_lp_le_alpha},
    {"verifier-outputs-p", "validity: Leviathan et al.; SpecTr Thm 1; SpecHub Thm 2; Hu et al. sec. 5.2; Khisti et al. Thm 1",
     "every verifier's simulated output follows p (chi-square; family-wise significance 1e-6, Bonferroni)",
     "min p-value x tests", true, true, 1e-6, FAM_ALL, 2, 6, NULL, run_outputs_p, NULL},
    {"verifier-exact-mc", "the exact acceptance formulas of MATH.md sec. 3 (SpecTr Thm 1, SpecHub B.3, Hu Thm 7, ...)",
     "every verifier's exact alpha equals its simulated acceptance (exact binomial test; family-wise 1e-6)",
     "min p-value x tests", true, true, 1e-6, FAM_ALL, 2, 6, NULL, run_exact_mc, NULL},
    {"hu-thm7-greedy", "Hu et al. (ICLR 2025) Thm 7",
     "the greedy verifier attains alpha*(greedy drafts), n = 2..4",
     "max |alpha(greedy) - alpha*(brute)|", true, false, 1e-9, FAM_ALL, 2, 8, NULL, run_greedy, NULL},
    {"spechub-cor1", "SpecHub (EMNLP 2024) Cor. 1",
     "SpecHub outputs, and so accepts, the hub token a = argmax q with probability p(a) (simulated; exact binomial test, family-wise 1e-6)",
     "min p-value x tests", true, true, 1e-6, FAM_ALL, 2, 6, NULL, run_cor1, NULL},
    {"spechub-thm3", "SpecHub (EMNLP 2024) Thm 3 (App. B.3)",
     "if q(a)/(1 - q(a)) > 1 - sum min(p, q), then the TOTAL acceptance alpha(spechub) >= alpha(rrs, iid, n = 2) (what the proof shows)",
     "max alpha(rrs) - alpha(spechub)", true, false, 1e-9, FAM_ALL, 2, 8, NULL, run_thm3, sum_hyp},
    {"spechub-thm4", "SpecHub (EMNLP 2024) Thm 4 (App. B.3)",
     "q(a) > 1/2 => alpha(spechub) >= alpha*_iid(n = 2) (q sharpened until q(a) > 1/2)",
     "max alpha*_iid - alpha(spechub)", true, false, 1e-9, FAM_ALL, 2, 8, NULL, run_thm4, sum_thm4},
    {"khisti-thm1-is", "Khisti et al. (NeurIPS 2024) Thm 1; Thm 4 / App. G (different drafters)",
     "the is verifier with the full weight LP attains alpha* at n = 2 (iid, and multi)",
     "max |alpha(is) - alpha*(brute)|", true, false, 1e-7, FAM_ALL, 2, 7, NULL, run_is, NULL},
    {"spechub-thm3-draft2", "SpecHub (EMNLP 2024) Thm 3, literal reading",
     "under Thm 3's hypothesis, P(draft 2 accepted) of spechub >= that of rrs (the statement's words; not what its proof shows)",
     "max P2(rrs) - P2(spechub)", false, false, 1e-9, FAM_ALL, 2, 8, NULL, run_thm3_draft2, sum_hyp},
    {"spechub-ge-rrs", "SpecHub (EMNLP 2024) sec. 5 and App. D, Table 4 (empirical claim)",
     "alpha(spechub) >= alpha(rrs, iid, n = 2) on the uniform-logit toy family (V = 50, Table 4's T and lambda)",
     "max alpha(rrs) - alpha(spechub)", false, false, 1e-12, FAM(MDSD_TOY_SPECHUB), 50, 50,
     configure_tab4, run_hub_ge_rrs, sum_hub_ge_rrs},
};
const size_t mdsd_checks_verify_count = sizeof mdsd_checks_verify / sizeof *mdsd_checks_verify;
