/* verify_ot.c - `ot`: a verifier whose acceptance is alpha*(p, D) at any
 * vocabulary (MATH.md §3.10), without the LP of otm.
 *
 * What was read and what is derived. Thomas & Pal, "Partial Resolution"
 * (NeurIPS 2025) and "Global Resolution" (ICLR 2026, arXiv 2511.15898) solve
 * for the optimal transport of i.i.d. drafts; only their abstracts could be
 * read here. The construction below is derived from public mathematics
 * (MATH.md §2.3's min cut, Gale's supply-demand theorem, the key race of
 * ot_plan.h) and proved in MATH.md §3.10; it is not a transcription of
 * either paper.
 *
 *   iid     the key race of ot_plan.c: each draw gets an independent key
 *           on a line laid out in the q/p order (its token's pieces of the
 *           line, uniform inside them), the largest key is selected and
 *           accepted with min(1, p/r); else y ~ norm((p - min(p, r))+).
 *           alpha = sum_y min(p(y), r(y)) = 1 + p(H) - Q(H) = alpha*.
 *   greedy  the greedy verifier (verify_greedy.c): Hu et al.'s Thm 7 shows
 *           it attains alpha* of the greedy scheme.
 *   hub     the same rule with T = {a}, a = argmax q: the free draft x is
 *           accepted w.p. min(1, p(x)/q'(x)), q' = q off a renormalised,
 *           else y ~ norm((p - q')+), whose mass on a is a draft too:
 *           alpha = p(a) + sum_{x != a} min(p(x), q'(x)) = alpha*_hub (§2.5).
 *   wor, cps, multi, custom: refused (otm solves them on toys). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "ot_plan.h"
#include "verifier.h"
#include "verify_common.h"

_Static_assert(MDSD_OT_MAX_DRAFTS == MDSD_LAW_MAX_DRAFTS, "ot plans take the law's drafts");

typedef struct {
    mdsd_scheme_kind kind;
    size_t n;
    int hub_a;             /* hub: argmax q */
    mdsd_ot_plan plan;     /* iid */
    void *greedy;          /* greedy, hub: the greedy verifier's state */
} ot_state;

static int ot_check(const mdsd_scheme *s, mdsd_err *err)
{
    switch (s->kind) {
    case MDSD_SCHEME_IID:
        if (s->n > MDSD_LAW_MAX_DRAFTS)
            return mdsd_fail(err, MDSD_ETOOBIG, "ot: n = %zu drafts is above the limit of %d",
                             s->n, MDSD_LAW_MAX_DRAFTS);
        return MDSD_OK;
    case MDSD_SCHEME_GREEDY:
        return mdsd_verify_greedy_ops.check(s, err);
    case MDSD_SCHEME_HUB:
        return MDSD_OK;
    default:
        return mdsd_fail(err, MDSD_EUNSUPPORTED,
                         "ot: the %s scheme is not supported (ot takes iid, greedy and hub; otm "
                         "solves the full LP of any scheme on toy vocabularies)",
                         mdsd_scheme_name(s->kind));
    }
}

/* The greedy scheme with n = 2 that hub's set law equals (MATH.md §2.5). */
static mdsd_scheme as_greedy(const mdsd_scheme *s)
{
    mdsd_scheme g = *s;
    g.kind = MDSD_SCHEME_GREEDY;
    g.n = 2;
    return g;
}

static void ot_release(void *state)
{
    ot_state *st = state;
    if (!st)
        return;
    mdsd_ot_plan_free(&st->plan);
    if (st->greedy)
        mdsd_verify_greedy_ops.release(st->greedy);
    free(st);
}

/* Refuses a plan whose acceptance fell short of its own cut's alpha* by more
 * than rounding (MATH.md §3.10 proves it cannot; this keeps the claim
 * checked on every position rather than assumed). */
static int plan_attains(const mdsd_ot_plan *pl, mdsd_err *err)
{
    if (pl->alpha >= pl->alpha_cut - 1e-12)
        return MDSD_OK;
    return mdsd_fail(err, MDSD_ESOLVER,
                     "ot: the plan accepts %.17g, short of alpha* = %.17g by %.3g (V = %zu, "
                     "n = %zu); please report this instance",
                     pl->alpha, pl->alpha_cut, pl->alpha_cut - pl->alpha, pl->V, pl->n);
}

static int prepare_with(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                        const float *zp, const float *zq, void **state, mdsd_err *err)
{
    ot_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "ot: out of memory");
    st->kind = s->kind;
    st->n = s->n;
    int rc;
    if (s->kind == MDSD_SCHEME_IID) {
        rc = mdsd_ot_plan_build_logits(&st->plan, p, s->q, s->V, s->n, zp, zq, err);
        if (rc == MDSD_OK)
            rc = plan_attains(&st->plan, err);
    } else {
        mdsd_scheme g = s->kind == MDSD_SCHEME_HUB ? as_greedy(s) : *s;
        st->hub_a = (int)mdsd_argmax(s->q, s->V);
        rc = mdsd_verify_greedy_ops.prepare(p, &g, opts, &st->greedy, err);
    }
    if (rc != MDSD_OK) {
        ot_release(st);
        return rc;
    }
    *state = st;
    return MDSD_OK;
}

static int ot_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                      void **state, mdsd_err *err)
{
    return prepare_with(p, s, opts, NULL, NULL, state, err);
}

int mdsd_verify_ot_prepare_logits(const double *p, const mdsd_scheme *s,
                                  const mdsd_verifier_opts *opts, const float *zp,
                                  const float *zq, void **state, mdsd_err *err)
{
    return prepare_with(p, s, opts, zp, zq, state, err);
}

/* hub tuples are (x, a) or (a, x); the greedy rule reads (a, x). */
static const int *greedy_order(const ot_state *st, const int *drafts, int *buf)
{
    if (st->kind != MDSD_SCHEME_HUB)
        return drafts;
    buf[0] = st->hub_a;
    buf[1] = drafts[0] == st->hub_a ? drafts[1] : drafts[0];
    return buf;
}

static int ot_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const ot_state *st = state;
    *accepted_index = -1; /* verifier.c: the first draft equal to y */
    if (st->kind == MDSD_SCHEME_IID) {
        int winner;
        return mdsd_ot_plan_verify(&st->plan, drafts, rng, &winner);
    }
    int buf[2], j;
    return mdsd_verify_greedy_ops.verify(st->greedy, greedy_order(st, drafts, buf), rng, &j);
}

static void ot_law(const void *state, const int *drafts, double *py)
{
    const ot_state *st = state;
    if (st->kind == MDSD_SCHEME_IID) {
        mdsd_ot_plan_law(&st->plan, drafts, py);
        return;
    }
    int buf[2];
    double g[MDSD_LAW_MAX_DRAFTS];
    mdsd_verify_greedy_law(st->greedy, greedy_order(st, drafts, buf), g);
    if (st->kind != MDSD_SCHEME_HUB) {
        memcpy(py, g, st->n * sizeof *py);
        return;
    }
    /* back to the tuple's own order: g[0] is a's, g[1] the free draft's */
    for (size_t j = 0; j < 2; j++)
        py[j] = drafts[j] == st->hub_a ? g[0] : g[1];
}

/* hub's per-draft rates (first occurrence in the tuple): (x, a) has
 * probability q(x), (a, x) probability q(a) q'(x); x is accepted with
 * beta(x) = min(1, p(x)/q'(x)), and a comes from the residual with
 * (1 - beta(x)) p(a) / R, R = sum (p - q')+. */
static int hub_exact(const double *p, const mdsd_scheme *s, double *alpha, double *per_draft,
                     mdsd_err *err)
{
    size_t V = s->V;
    int a = (int)mdsd_argmax(s->q, V);
    double *qr = mdsd_vc_malloc(V * sizeof *qr, "ot", err);
    if (!qr)
        return MDSD_ENOMEM;
    memcpy(qr, s->q, V * sizeof *qr);
    qr[a] = 0.0;
    mdsd_vc_normalise(qr, V, mdsd_sum(qr, V));
    double *t = mdsd_vc_malloc(4 * V * sizeof *t, "ot", err);
    if (!t) {
        free(qr);
        return MDSD_ENOMEM;
    }
    double *first_x = t, *first_a = t + V, *second_a = t + 2 * V, *second_x = t + 3 * V;
    double R = 0.0;
    for (size_t x = 0; x < V; x++)
        R += p[x] > qr[x] ? p[x] - qr[x] : 0.0;
    double ra = R > 0.0 ? (p[a] > qr[a] ? p[a] - qr[a] : 0.0) / R : 0.0;
    for (size_t x = 0; x < V; x++) {
        double beta = (int)x == a ? 0.0 : mdsd_vc_pass(p[x], qr[x]);
        double qx = (int)x == a ? 0.0 : s->q[x], qpx = (int)x == a ? 0.0 : qr[x];
        first_x[x] = qx * beta;                          /* (x, a), x accepted */
        second_a[x] = qx * (1.0 - beta) * ra;            /* (x, a), a from the residual */
        first_a[x] = s->q[a] * qpx * (1.0 - beta) * ra;  /* (a, x), a from the residual */
        second_x[x] = s->q[a] * qpx * beta;              /* (a, x), x accepted */
    }
    per_draft[0] = mdsd_sum(first_x, V) + mdsd_sum(first_a, V);
    per_draft[1] = mdsd_sum(second_a, V) + mdsd_sum(second_x, V);
    *alpha = per_draft[0] + per_draft[1];
    free(t);
    free(qr);
    return MDSD_OK;
}

static int ot_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                    double *alpha, double *per_draft, mdsd_err *err)
{
    if (s->kind == MDSD_SCHEME_GREEDY)
        return mdsd_verify_greedy_ops.exact(p, s, opts, alpha, per_draft, err);
    if (s->kind == MDSD_SCHEME_HUB)
        return hub_exact(p, s, alpha, per_draft, err);
    mdsd_ot_plan pl;
    int rc = mdsd_ot_plan_build(&pl, p, s->q, s->V, s->n, err);
    if (rc != MDSD_OK)
        return rc;
    rc = plan_attains(&pl, err);
    if (rc == MDSD_OK)
        rc = mdsd_ot_plan_per_draft(&pl, per_draft, err);
    if (rc == MDSD_OK)
        *alpha = pl.alpha;
    mdsd_ot_plan_free(&pl);
    return rc;
}

const mdsd_verifier_ops mdsd_verify_ot_ops = {
    .name = "ot",
    .scheme = MDSD_SCHEME_IID,
    .check = ot_check,
    .prepare = ot_prepare,
    .verify = ot_verify,
    .release = ot_release,
    .exact = ot_exact,
};

const mdsd_verifier_law_fn mdsd_verify_ot_law = ot_law;
