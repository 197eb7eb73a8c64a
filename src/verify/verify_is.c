/* verify_is.c - Khisti et al.'s canonical two-step verifier (`is`): importance
 * weighted sampling picks one draft (iws.h), then single-draft speculative
 * sampling between its law r and the target p: accept the selected token u
 * with probability min(1, p(u)/r(u)), else output a draw from
 * norm((p - r)+). The output follows p for any weights.
 *
 * Acceptance. The selected token is accepted with probability
 * sum_i min(p(i), r(i)); but a residual draw can also equal a draft that was
 * not selected, which counts as acceptance (y in S(x)). So
 *     alpha = sum_i min(p(i), r(i)) + P(rejected, residual draw in S(x)).
 * With the full LP at n = 2 the second term vanishes (the first is already
 * alpha*_iid, Khisti Thm 1); with the truncated LP or n > 2 it need not.
 * Exact: for n <= 2 in O(V + s^2) from the weights; for n > 2 by enumerating
 * the draft tuples (guarded by opts->max_tuples).
 *
 * Per-draft rates: the selected draft's index when its test accepts (the
 * earlier draft when several hold the token), otherwise the lowest index
 * holding the residual draw. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "dist.h"
#include "iws.h"
#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t V, n;
    mdsd_iws w;
    double *acc;                   /* [V] min(1, p/r), 0 where r = 0 */
    double *res;                   /* [V] norm((p - r)+), or p where that vanishes */
    gsl_ran_discrete_t *residual;  /* alias table of res */
} is_state;

static int is_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_IID && s->kind != MDSD_SCHEME_MULTI)
        return mdsd_vc_wrong_scheme("is", s, "independent drafts (iid or multi)", err);
    return MDSD_OK;
}

static void is_release(void *state)
{
    is_state *st = state;
    if (!st)
        return;
    mdsd_iws_free(&st->w);
    free(st->acc);
    free(st->res);
    if (st->residual)
        gsl_ran_discrete_free(st->residual);
    free(st);
}

/* Solves the weights and derives the speculative-sampling step. */
static int is_build(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                    bool face, is_state **out, mdsd_err *err)
{
    size_t V = s->V;
    is_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "is: out of memory");
    st->V = V, st->n = s->n;
    mdsd_iws_opts wo = {opts ? opts->is_top : 0, MDSD_IWS_RANK_DEFICIT, 0, face, 0.0};
    int rc = mdsd_iws_solve(p, s->q, V, s->n, s->kind == MDSD_SCHEME_MULTI, &wo, &st->w, err);
    if (rc != MDSD_OK) {
        is_release(st);
        return rc;
    }
    st->acc = malloc(V * sizeof *st->acc);
    st->res = malloc(V * sizeof *st->res);
    if (!st->acc || !st->res) {
        is_release(st);
        return mdsd_fail(err, MDSD_ENOMEM, "is: out of memory (V = %zu)", V);
    }
    for (size_t i = 0; i < V; i++) {
        double r = st->w.r[i];
        st->acc[i] = r > 0.0 ? fmin(1.0, p[i] / r) : 0.0;
    }
    /* Rejection needs r(u) > p(u) somewhere, hence mass in (p - r)+; where
     * rounding left none, the residual is p (never drawn, but valid). */
    mdsd_vc_residual(p, st->w.r, V, st->res);
    *out = st;
    return MDSD_OK;
}

static int is_prepare_face(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           bool face, void **state, mdsd_err *err)
{
    is_state *st;
    int rc = is_build(p, s, opts, face, &st, err);
    if (rc != MDSD_OK)
        return rc;
    st->residual = mdsd_vc_alias(st->res, p, s->V, "is", err);
    if (!st->residual) {
        is_release(st);
        return MDSD_ENOMEM;
    }
    *state = st;
    return MDSD_OK;
}

static int is_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                      void **state, mdsd_err *err)
{
    return is_prepare_face(p, s, opts, false, state, err);
}

static int is_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const is_state *st = state;
    size_t from;
    int u = mdsd_iws_select(&st->w, drafts, rng, &from);
    if (st->acc[u] >= 1.0 || gsl_rng_uniform(rng) < st->acc[u]) {
        *accepted_index = (int)from;
        return u;
    }
    int y = (int)gsl_ran_discrete(rng, st->residual);
    *accepted_index = mdsd_vc_first_match(drafts, st->n, y);
    return y;
}

/* n = 2: the residual draw hits the unselected draft. Draft j's share is
 * sum_i a(i) rej(i) sum_{k != i} b(k) res(k) W(i, k), with (a, b) the laws of
 * the other draft and of draft j, rej = 1 - acc. (With both drafts equal to
 * i the draw cannot be i: rej(i) > 0 means r(i) > p(i), so res(i) = 0.) */
static int is_exact_pair(const is_state *st, const double *q, bool multi, double *per_draft,
                         mdsd_err *err)
{
    size_t V = st->V;
    const mdsd_iws_stage *stage = &st->w.stage[0];
    double *bres = malloc(2 * V * sizeof *bres), *beat = bres + V;
    if (!bres)
        return mdsd_fail(err, MDSD_ENOMEM, "is: out of memory (V = %zu)", V);
    for (size_t j = 0; j < 2; j++) {
        const double *a = multi ? q + (1 - j) * V : q, *b = multi ? q + j * V : q;
        for (size_t k = 0; k < V; k++)
            bres[k] = b[k] * st->res[k];
        mdsd_iws_beaten(stage, V, bres, j == 1, beat); /* the selected draft is 1 - j */
        double extra = 0.0;
        for (size_t i = 0; i < V; i++)
            extra += a[i] * (1.0 - st->acc[i]) * beat[i];
        per_draft[j] += extra;
    }
    free(bres);
    return MDSD_OK;
}

/* n > 2: every tuple of D, following the selection's branches. */
static void is_exact_follow(const is_state *st, const int *x, size_t k, int u, size_t at,
                            double prob, double *per_draft)
{
    if (prob == 0.0)
        return;
    if (k < st->w.stages) {
        int v = x[k + 1];
        double keep = v == u ? 1.0 : mdsd_iws_keep(&st->w.stage[k], u, v);
        is_exact_follow(st, x, k + 1, u, at, prob * keep, per_draft);
        if (keep < 1.0)
            is_exact_follow(st, x, k + 1, v, k + 1, prob * (1.0 - keep), per_draft);
        return;
    }
    per_draft[at] += prob * st->acc[u];
    double miss = prob * (1.0 - st->acc[u]);
    for (size_t j = 0; j < st->n && miss > 0.0; j++) {
        int first = 1;
        for (size_t l = 0; l < j; l++)
            first &= x[l] != x[j];
        if (first && x[j] != u)
            per_draft[j] += miss * st->res[x[j]];
    }
}

static int is_exact_face(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                         bool face, double *alpha, double *per_draft, mdsd_err *err)
{
    size_t max = opts && opts->max_tuples ? opts->max_tuples : MDSD_JOINT_MAX_TUPLES;
    double tuples = mdsd_scheme_joint_size(s);
    if (s->n > 2 && tuples > (double)max)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_TRIALS,
                                "is: the exact rate for n = %zu > 2 drafts enumerates %.3g draft tuples, "
                                "above the limit of %zu; use Monte Carlo (`trials`)", s->n, tuples, max);
    is_state *st;
    int rc = is_build(p, s, opts, face, &st, err);
    if (rc != MDSD_OK)
        return rc;
    memset(per_draft, 0, s->n * sizeof *per_draft);
    if (s->n <= 2) {
        mdsd_iws_per_draft(&st->w, p, per_draft);
        if (s->n == 2)
            rc = is_exact_pair(st, s->q, s->kind == MDSD_SCHEME_MULTI, per_draft, err);
    } else {
        mdsd_joint D;
        rc = mdsd_scheme_joint(s, max, &D, err);
        for (size_t t = 0; rc == MDSD_OK && t < D.count; t++) {
            const int *x = D.tokens + t * s->n;
            is_exact_follow(st, x, 0, x[0], 0, D.prob[t], per_draft);
        }
        if (rc == MDSD_OK)
            mdsd_joint_free(&D);
    }
    *alpha = 0.0;
    for (size_t j = 0; j < s->n; j++)
        *alpha += per_draft[j];
    is_release(st);
    return rc;
}

/* The selection of mdsd_iws_select followed branch by branch: at stage k
 * the candidate x[k+1] replaces u with probability 1 - keep. */
static void is_law_follow(const is_state *st, const int *x, size_t k, int u, double prob,
                          double *step, double *reach)
{
    if (!(prob > 0.0))
        return;
    if (k == st->w.stages) {
        double a = st->acc[u] >= 1.0 ? 1.0 : st->acc[u];
        for (size_t j = 0; j < st->n; j++)
            if (x[j] == u) { /* the selected token's mass goes to its first draft */
                step[j] += prob * a;
                break;
            }
        *reach += prob * (1.0 - a);
        return;
    }
    int v = x[k + 1];
    if (v == u) {
        is_law_follow(st, x, k + 1, u, prob, step, reach);
        return;
    }
    double keep = mdsd_iws_keep(&st->w.stage[k], u, v);
    keep = keep >= 1.0 ? 1.0 : keep <= 0.0 ? 0.0 : keep;
    is_law_follow(st, x, k + 1, u, prob * keep, step, reach);
    is_law_follow(st, x, k + 1, v, prob * (1.0 - keep), step, reach);
}

/* The law of is_verify given the drafts: selection, speculative-sampling
 * test min(1, p/r), then the residual (whose draw may be a draft). */
static void is_law(const void *state, const int *drafts, double *py)
{
    const is_state *st = state;
    double step[MDSD_LAW_MAX_DRAFTS] = {0}, reach = 0.0;
    is_law_follow(st, drafts, 0, drafts[0], 1.0, step, &reach);
    mdsd_vc_law_collect(drafts, st->n, step, py);
    for (size_t j = 0; j < st->n; j++)
        py[j] += reach * st->res[drafts[j]];
}

static int is_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                    double *alpha, double *per_draft, mdsd_err *err)
{
    return is_exact_face(p, s, opts, false, alpha, per_draft, err);
}

/* is-face (papers/khisti, Remark 4): the same verifier, with stage 1's weights
 * chosen among its LP's optimal solutions to maximise stage 2's acceptance
 * (n = 3 iid drafts, full LP; iws.c). A variant for auditing the claim that
 * successive pairing is suboptimal, not a faster method. */
static int is_face_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_IID || s->n != 3)
        return mdsd_vc_wrong_scheme("is-face", s, "n = 3 iid drafts", err);
    return MDSD_OK;
}

static int is_face_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           void **state, mdsd_err *err)
{
    return is_prepare_face(p, s, opts, true, state, err);
}

static int is_face_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                         double *alpha, double *per_draft, mdsd_err *err)
{
    return is_exact_face(p, s, opts, true, alpha, per_draft, err);
}

const mdsd_verifier_ops mdsd_verify_is_face_ops = {
    .name = "is-face",
    .scheme = MDSD_SCHEME_IID,
    .check = is_face_check,
    .prepare = is_face_prepare,
    .verify = is_verify,
    .release = is_release,
    .exact = is_face_exact,
};

const mdsd_verifier_ops mdsd_verify_is_ops = {
    .name = "is",
    .scheme = MDSD_SCHEME_IID,
    .check = is_check,
    .prepare = is_prepare,
    .verify = is_verify,
    .release = is_release,
    .exact = is_exact,
};

const mdsd_verifier_law_fn mdsd_verify_is_law = is_law;
