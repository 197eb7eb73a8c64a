/* check_alpha.c - checks of the optimal acceptance rate alpha* (MATH.md
 * section 2): the independent routes agree, and the closed forms and
 * theorems of Khisti et al. and SpecTr hold. alpha* comes from the injected
 * solver (env->bound); the formulas under test are computed here, by
 * enumeration over all token sets where they are minima over sets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "check_impl.h"

/* n drafts for a scheme on V tokens, keeping V^n (the enumeration and the
 * LPs) small: at most `max_tuples` tuples. */
static size_t pick_n(mdsd_check_ctx *c, size_t lo, size_t hi, double max_tuples)
{
    while (hi > lo && pow((double)c->V, (double)hi) > max_tuples)
        hi--;
    return chk_int(c, lo, hi);
}

/* ---- alpha-routes: sort and k2 against brute force ---------------------------- */

static const mdsd_scheme_kind sort_schemes[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR,
                                                MDSD_SCHEME_GREEDY, MDSD_SCHEME_HUB,
                                                MDSD_SCHEME_CPS};

static int run_routes(mdsd_check_ctx *c, mdsd_err *err)
{
    static const mdsd_bound_method methods[] = {MDSD_BOUND_SORT, MDSD_BOUND_K2, MDSD_BOUND_AUTO};
    for (size_t k = 0; k < sizeof sort_schemes / sizeof *sort_schemes; k++) {
        mdsd_scheme_kind kind = sort_schemes[k];
        size_t n = kind == MDSD_SCHEME_HUB ? 2 : pick_n(c, kind == MDSD_SCHEME_GREEDY ? 2 : 1, 4, 4096);
        mdsd_scheme s;
        if (!chk_scheme(c, kind, n, &s))
            continue;
        double brute;
        int rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &brute, err);
        if (rc)
            return rc;
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
            if (!mdsd_bound_applies(methods[m], &s))
                continue;
            double a;
            if ((rc = chk_alpha(c, &s, methods[m], &a, err)))
                return rc;
            chk_record(c, n, fabs(a - brute), "%s, n = %zu: %s %.17g, brute %.17g",
                       mdsd_scheme_name(kind), n, mdsd_bound_method_name(methods[m]), a, brute);
        }
    }
    return MDSD_OK;
}

/* ---- alpha-routes-lp: full and reduced LP against brute force ----------------- */

/* A random sparse joint law: 1..2V tuples, Dirichlet(1) masses. */
static int random_custom(mdsd_check_ctx *c, size_t n, mdsd_joint *D, mdsd_err *err)
{
    size_t m = chk_int(c, 1, 2 * c->V);
    D->n = n;
    D->count = m;
    D->tokens = malloc(m * n * sizeof *D->tokens);
    D->prob = malloc(m * sizeof *D->prob);
    double *ones = malloc(m * sizeof *ones);
    if (!D->tokens || !D->prob || !ones) {
        free(ones);
        return mdsd_fail(err, MDSD_ENOMEM, "custom joint: out of memory");
    }
    for (size_t i = 0; i < m * n; i++)
        D->tokens[i] = (int)gsl_rng_uniform_int(c->rng, c->V);
    for (size_t i = 0; i < m; i++)
        ones[i] = 1.0;
    gsl_ran_dirichlet(c->rng, m, ones, D->prob);
    free(ones);
    int rc = mdsd_joint_validate(D, c->V, err);
    return rc ? rc : mdsd_joint_sort(D, err);
}

static int routes_lp_case(mdsd_check_ctx *c, const mdsd_scheme *s, mdsd_err *err)
{
    static const mdsd_bound_method lps[] = {MDSD_BOUND_LP_FULL, MDSD_BOUND_LP_REDUCED};
    double brute;
    int rc = chk_alpha(c, s, MDSD_BOUND_BRUTE, &brute, err);
    for (size_t m = 0; rc == MDSD_OK && m < 2; m++) {
        double a;
        if ((rc = chk_alpha(c, s, lps[m], &a, err)) == MDSD_OK)
            chk_record(c, s->n, fabs(a - brute), "%s, n = %zu: %s %.17g, brute %.17g",
                       mdsd_scheme_name(s->kind), s->n, mdsd_bound_method_name(lps[m]), a, brute);
    }
    return rc;
}

static int run_routes_lp(mdsd_check_ctx *c, mdsd_err *err)
{
    static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR, MDSD_SCHEME_GREEDY,
                                             MDSD_SCHEME_HUB, MDSD_SCHEME_CPS, MDSD_SCHEME_MULTI,
                                             MDSD_SCHEME_CUSTOM};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        mdsd_scheme_kind kind = kinds[k];
        size_t n = kind == MDSD_SCHEME_HUB ? 2 : pick_n(c, kind == MDSD_SCHEME_GREEDY ? 2 : 1, 4, 256);
        mdsd_scheme s;
        int rc;
        if (kind == MDSD_SCHEME_CUSTOM) {
            mdsd_joint D = {0};
            rc = random_custom(c, n, &D, err);
            s = (mdsd_scheme){MDSD_SCHEME_CUSTOM, n, c->V, NULL, &D};
            if (rc == MDSD_OK)
                rc = routes_lp_case(c, &s, err);
            mdsd_joint_free(&D);
        } else {
            rc = chk_scheme(c, kind, n, &s) ? routes_lp_case(c, &s, err) : MDSD_OK;
        }
        if (rc)
            return rc;
    }
    return MDSD_OK;
}

/* ---- Khisti et al.: Thm 3 (k = 2 closed form), Thm 2, the n-draft formula ---- */

/* min over all sets S of p(S) + q(S^c)^2 + 2 q(S) q(S^c), as printed (Thm 3). */
static double khisti_thm3(const double *p, const double *q, size_t V, unsigned long *argS)
{
    double best = INFINITY;
    for (unsigned long S = 0; S < (1ul << V); S++) {
        double pS = chk_mass(p, V, S), qS = chk_mass(q, V, S);
        double qC = chk_mass(q, V, ~S & ((1ul << V) - 1));
        double v = pS + qC * qC + 2.0 * qS * qC;
        if (v < best)
            best = v, *argS = S;
    }
    return best;
}

/* min over all S of p(S) + 1 - q(S)^n: Thm 3 with the exponent 2 replaced by
 * n (the conjecture; Hu et al.'s iid formula). */
static double khisti_n(const double *p, const double *q, size_t V, size_t n)
{
    double best = INFINITY;
    for (unsigned long S = 0; S < (1ul << V); S++) {
        double v = chk_mass(p, V, S) + 1.0 - pow(chk_mass(q, V, S), (double)n);
        if (v < best)
            best = v;
    }
    return best;
}

static int run_k2(mdsd_check_ctx *c, mdsd_err *err)
{
    mdsd_scheme s;
    if (!chk_scheme(c, MDSD_SCHEME_IID, 2, &s))
        return MDSD_CHECK_NA;
    unsigned long S = 0;
    double F = khisti_thm3(c->p, c->q, c->V, &S), lp, k2;
    int rc = chk_alpha(c, &s, MDSD_BOUND_LP_FULL, &lp, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &s, MDSD_BOUND_K2, &k2, err);
    if (rc)
        return rc;
    chk_record(c, 2, fabs(F - lp), "Thm 3 formula %.17g (S = mask %#lx), lp-full %.17g", F, S, lp);
    chk_record(c, 2, fabs(F - k2), "Thm 3 formula %.17g, library k2 %.17g", F, k2);
    return MDSD_OK;
}

static int run_thm2(mdsd_check_ctx *c, mdsd_err *err)
{
    /* Half the instances move p towards q (p = q satisfies the condition), so
     * that both sides of the "iff", and its boundary, are exercised. */
    if (gsl_rng_uniform_int(c->rng, 2)) {
        double t = gsl_rng_uniform(c->rng);
        t *= t;
        for (size_t x = 0; x < c->V; x++)
            c->p[x] = (1.0 - t) * c->q[x] + t * c->p[x];
    }
    mdsd_scheme s;
    if (!chk_scheme(c, MDSD_SCHEME_IID, 2, &s))
        return MDSD_CHECK_NA;
    double margin = 0.0; /* min over S of p(S) - q(S)^2; S = {} gives 0 */
    for (unsigned long S = 1; S < (1ul << c->V); S++) {
        double qS = chk_mass(c->q, c->V, S), g = chk_mass(c->p, c->V, S) - qS * qS;
        if (g < margin)
            margin = g;
    }
    bool cond = margin >= -MDSD_BOUND_K2_TOL;
    double lp;
    mdsd_bound_result k2;
    int rc = chk_alpha(c, &s, MDSD_BOUND_LP_FULL, &lp, err);
    if (rc == MDSD_OK)
        rc = chk_alpha_res(c, &s, MDSD_BOUND_K2, &k2, err);
    if (rc)
        return rc;
    c->cnt[0] += cond;
    c->cnt[1] += lp >= 1.0 - 1e-7;
    if ((k2.alpha_one == 1) != cond)
        chk_record(c, 2, 1.0, "library's Thm 2 flag says %d, enumeration min_S p(S) - q(S)^2 = %.3g",
                   k2.alpha_one, margin);
    else if (cond)
        chk_record(c, 2, fabs(1.0 - lp), "condition holds (margin %.3g) but lp-full alpha* = %.17g",
                   margin, lp);
    else
        chk_record(c, 2, fmax(0.0, lp - (1.0 + margin)),
                   "condition fails (margin %.3g) but lp-full alpha* = %.17g", margin, lp);
    return MDSD_OK;
}

static void sum_thm2(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "condition held on %zu of %zu instances; lp-full alpha* = 1 on %zu",
             c->cnt[0], c->res->instances, c->cnt[1]);
}

static int run_conjecture(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = c->V <= 4 ? chk_int(c, 3, 4) : 3;
    mdsd_scheme s;
    if (!chk_scheme(c, MDSD_SCHEME_IID, n, &s))
        return MDSD_CHECK_NA;
    double F = khisti_n(c->p, c->q, c->V, n), lp, sort;
    int rc = chk_alpha(c, &s, MDSD_BOUND_LP_FULL, &lp, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &s, MDSD_BOUND_SORT, &sort, err);
    if (rc)
        return rc;
    chk_record(c, n, fabs(F - lp), "n = %zu: min_S p(S) + 1 - q(S)^n = %.17g, lp-full %.17g", n, F, lp);
    chk_record(c, n, fabs(F - sort), "n = %zu: min_S p(S) + 1 - q(S)^n = %.17g, sort %.17g", n, F, sort);
    return MDSD_OK;
}

/* ---- SpecTr Lemma 1: alpha*_iid non-decreasing in n, limit p(supp q) ---------- */

static int run_lemma1(mdsd_check_ctx *c, mdsd_err *err)
{
    double L = 0.0, qmin = 1.0;
    for (size_t x = 0; x < c->V; x++)
        if (c->q[x] > 0.0) {
            L += c->p[x];
            qmin = fmin(qmin, c->q[x]);
        }
    double prev = 0.0, worst = 0.0, last = 0.0;
    size_t worst_n = 1;
    const char *what = "";
    for (size_t n = 1; n <= 65536; n = n < 32 ? n + 1 : 2 * n) {
        mdsd_scheme s;
        chk_scheme(c, MDSD_SCHEME_IID, n, &s);
        double a;
        int rc = chk_alpha(c, &s, MDSD_BOUND_SORT, &a, err);
        if (rc)
            return rc;
        /* alpha* >= min(L, 1 - (1 - qmin)^n) >= L - (1 - qmin)^n: the sets H
         * not covering supp q have Q(H) <= (1 - qmin)^n (Hu's subset form). */
        double down = n > 1 ? prev - a : 0.0, over = a - L, under = L - pow(1.0 - qmin, (double)n) - a;
        double d = fmax(down, fmax(over, under));
        if (d > worst || n == 1) {
            worst = d, worst_n = n;
            what = d == down ? "decrease from n - 1" : d == over ? "above p(supp q)" : "below the limit's rate";
        }
        prev = last = a;
    }
    c->cnt[0] += fabs(last - L) <= 1e-9;
    chk_record(c, worst_n, worst, "worst at n = %zu (%s); p(supp q) = %.17g, alpha*(65536) = %.17g",
               worst_n, what, L, last);
    return MDSD_OK;
}

static void sum_lemma1(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "alpha*(n = 65536) within 1e-9 of p(supp q) on %zu of %zu instances "
             "(the rest have q_min too small to converge by then; their rate bound held)",
             c->cnt[0], c->res->instances);
}

/* ---- SpecTr Lemma 3: (1 - (1 - 1/n)^n) ub_n <= alpha*_iid <= ub_n ------------ */

static int run_lemma3(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = pick_n(c, 1, 4, 256);
    mdsd_scheme s;
    chk_scheme(c, MDSD_SCHEME_IID, n, &s);
    double ub, a;
    int rc = chk_spectr_upper(c->p, c->q, c->V, n, &ub, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &a, err);
    if (rc)
        return rc;
    double lo = (1.0 - pow(1.0 - 1.0 / (double)n, (double)n)) * ub;
    c->cnt[0] += fabs(a - ub) <= 1e-9;
    if (ub > 0.0)
        c->acc[0] = c->cnt[1]++ ? fmin(c->acc[0], a / ub) : a / ub;
    chk_record(c, n, fmax(0.0, fmax(a - ub, lo - a)),
               "n = %zu: lower %.17g <= alpha* (brute) %.17g <= upper %.17g", n, lo, a, ub);
    return MDSD_OK;
}

static void sum_lemma3(const mdsd_check_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "upper bound tight (within 1e-9) on %zu of %zu instances; "
             "smallest alpha*/upper %.4f", c->cnt[0], c->res->instances, c->acc[0]);
}

/* ---- SpecTr App. B closed forms ------------------------------------------------ */

static int run_bernoulli(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = chk_int(c, 1, 8);
    mdsd_scheme s;
    chk_scheme(c, MDSD_SCHEME_IID, n, &s);
    double a, b = c->p[1], dq = c->q[1], dn = (double)n;
    int rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &a, err);
    if (rc)
        return rc;
    double F = fmin(b, 1.0 - pow(1.0 - dq, dn)) + fmin(1.0 - b, 1.0 - pow(dq, dn));
    chk_record(c, n, fabs(a - F), "a = %.6g, b = %.6g, n = %zu: formula %.17g, brute %.17g", dq, b,
               n, F, a);
    return MDSD_OK;
}

static int run_uniform(mdsd_check_ctx *c, mdsd_err *err)
{
    size_t n = pick_n(c, 1, 4, 4096);
    mdsd_scheme s;
    chk_scheme(c, MDSD_SCHEME_IID, n, &s);
    double a;
    int rc = chk_alpha(c, &s, MDSD_BOUND_BRUTE, &a, err);
    if (rc)
        return rc;
    double F = 1.0 - pow(1.0 - 1.0 / c->toy.r, (double)n);
    chk_record(c, n, fabs(a - F), "d = %zu, r = %g, n = %zu: 1 - (1 - 1/r)^n = %.17g, brute %.17g",
               c->toy.d, c->toy.r, n, F, a);
    return MDSD_OK;
}

/* ---- hub alpha* = greedy alpha* at n = 2 ------------------------------------------ */

static int run_hub_greedy(mdsd_check_ctx *c, mdsd_err *err)
{
    mdsd_scheme h, g;
    if (!chk_scheme(c, MDSD_SCHEME_HUB, 2, &h) || !chk_scheme(c, MDSD_SCHEME_GREEDY, 2, &g))
        return MDSD_CHECK_NA;
    double ah, ag;
    int rc = chk_alpha(c, &h, MDSD_BOUND_BRUTE, &ah, err);
    if (rc == MDSD_OK)
        rc = chk_alpha(c, &g, MDSD_BOUND_BRUTE, &ag, err);
    if (rc)
        return rc;
    chk_record(c, 2, fabs(ah - ag), "alpha*(hub) %.17g, alpha*(greedy, n = 2) %.17g (brute)", ah, ag);
    return MDSD_OK;
}

const mdsd_check mdsd_checks_alpha[] = {
    {"alpha-routes", "Hu et al. (ICLR 2025) sec. 3 (subset form), Thm 3-6 (sort and scan), Thm 7; Khisti et al. Thm 3",
     "alpha* by sort (iid, wor, greedy, hub, cps), k2 (iid, n = 2) and auto equals brute force over all subsets",
     "max |alpha*(method) - alpha*(brute)|", true, false, 1e-9, FAM_ALL, 2, 8, NULL, run_routes, NULL},
    {"alpha-routes-lp", "SpecTr (NeurIPS 2023) eq. 4; SpecHub (EMNLP 2024) sec. 3.2; Hu et al. eq. 9",
     "the full and the reduced OTM LP give alpha* = brute force, for iid, wor, greedy, hub, cps, multi and random custom D",
     "max |alpha*(LP) - alpha*(brute)|", true, false, 1e-7, FAM_ALL, 2, 5, NULL, run_routes_lp, NULL},
    {"k2-closed-form", "Khisti et al. (NeurIPS 2024) Thm 3",
     "alpha*_iid(n = 2) = min_S { p(S) + q(S^c)^2 + 2 q(S) q(S^c) } (all S enumerated) = lp-full = library k2",
     "max |formula - alpha*|", true, false, 1e-7, FAM_ALL, 2, 8, NULL, run_k2, NULL},
    {"khisti-thm2", "Khisti et al. (NeurIPS 2024) Thm 2",
     "alpha*_iid(n = 2) = 1 iff p(S) >= q(S)^2 for every S (and alpha* <= 1 + min_S p(S) - q(S)^2 otherwise); library k2 flag agrees",
     "max deviation from the iff (1 = flag disagrees)", true, false, 1e-7, FAM_ALL, 2, 8, NULL, run_thm2, sum_thm2},
    {"khisti-conjecture", "Khisti et al. (NeurIPS 2024) sec. 3, n-draft conjecture; Hu et al. sec. 4.2.2 (iid formula)",
     "for n = 3, 4: alpha*_iid = min_S { p(S) + 1 - q(S)^n } = lp-full = sort",
     "max |formula - alpha*|", true, false, 1e-7, FAM_ALL, 2, 5, NULL, run_conjecture, NULL},
    {"spectr-lemma1", "SpecTr (NeurIPS 2023) Lemma 1",
     "alpha*_iid(n) is non-decreasing in n (n = 1..32, 64, .., 65536) and tends to p(supp q), within (1 - q_min)^n",
     "max violation", true, false, 1e-9, FAM_ALL, 2, 10, NULL, run_lemma1, sum_lemma1},
    {"spectr-lemma3", "SpecTr (NeurIPS 2023) Lemma 3",
     "(1 - (1 - 1/n)^n) ub_n <= alpha*_iid <= ub_n, ub_n SpecTr's upper bound (MATH.md), n = 1..4",
     "max violation", true, false, 1e-9, FAM_ALL, 2, 5, NULL, run_lemma3, sum_lemma3},
    {"bernoulli-closed-form", "SpecTr (NeurIPS 2023) App. B, Bernoulli example",
     "target Ber(b), draft Ber(a): alpha*_iid = min(b, 1 - (1 - a)^n) + min(1 - b, 1 - a^n), n = 1..8",
     "max |formula - alpha*(brute)|", true, false, 1e-9, FAM(MDSD_TOY_BERNOULLI), 2, 2, NULL,
     run_bernoulli, NULL},
    {"uniform-closed-form", "SpecTr (NeurIPS 2023) App. B, uniform example",
     "draft U(d), target uniform on d/r of its symbols: alpha*_iid = 1 - (1 - 1/r)^n, n = 1..4",
     "max |formula - alpha*(brute)|", true, false, 1e-9, FAM(MDSD_TOY_UNIFORM), 2, 8, NULL,
     run_uniform, NULL},
    {"hub-eq-greedy", "SpecHub (EMNLP 2024) sec. 4; Hu et al. sec. 5 (MATH.md: the same value)",
     "alpha*(hub) = alpha*(greedy, n = 2) (brute force on both joints)",
     "max |alpha*(hub) - alpha*(greedy)|", true, false, 1e-9, FAM_ALL, 2, 8, NULL, run_hub_greedy, NULL},
};
const size_t mdsd_checks_alpha_count = sizeof mdsd_checks_alpha / sizeof *mdsd_checks_alpha;
