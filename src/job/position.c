/* position.c - the per-position evaluator (position.h), and one row of a
 * dump through it: every cell of the table job's plan (engine.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "engine.h"
#include "montecarlo.h"
#include "position.h"

int mdsd_position_alpha(mdsd_position_worker *w, const mdsd_scheme *s, double *alpha, mdsd_err *err)
{
    mdsd_bound_result res = {0};
    mdsd_bound_opts opts = {.pq_tag = w->pq_tag};
    int rc = mdsd_bound_alpha(w->p, s, MDSD_BOUND_AUTO, &opts, w->bound, &res, err);
    *alpha = res.alpha;
    return rc;
}

/* Monte Carlo for a verifier without an exact form at this size. */
static int simulate(const mdsd_position_settings *st, mdsd_position_worker *w,
                    mdsd_verifier_kind kind, const mdsd_scheme *s, uint64_t position, double *rate,
                    double *per_draft, mdsd_err *err)
{
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc(kind, w->p, s, st->verifier_opts, &e);
    if (!v) {
        char what[64];
        snprintf(what, sizeof what, "%s: verifier", st->who);
        return mdsd_fail_from(err, &e, what);
    }
    mdsd_mc_opts mc;
    mdsd_mc_opts_init(&mc);
    mc.trials = st->trials;
    mc.seed = st->seed;
    mc.position = position;
    mc.threads = 1; /* the rows are already spread over the threads */
    mc.histogram = false;
    mdsd_mc_result res;
    int rc = mdsd_mc_run(v, &mc, &res, err);
    if (rc == MDSD_OK) {
        *rate = res.alpha;
        for (size_t j = 0; j < s->n; j++)
            per_draft[j] = (double)res.per_draft[j] / (double)res.trials;
        mdsd_mc_result_free(&res);
    }
    mdsd_verifier_free(v);
    return rc;
}

int mdsd_position_rate(const mdsd_position_settings *st, mdsd_position_worker *w,
                       mdsd_verifier_kind kind, const mdsd_scheme *s, uint64_t position, double *rate,
                       double *per_draft, bool *exact, mdsd_err *err)
{
    *exact = false;
    if (st->simulate)
        return simulate(st, w, kind, s, position, rate, per_draft, err);
    int rc = mdsd_verifier_exact(kind, w->p, s, st->verifier_opts, rate, per_draft, err);
    *exact = rc == MDSD_OK;
    if ((rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG) && st->trials > 0)
        rc = simulate(st, w, kind, s, position, rate, per_draft, err);
    return rc;
}

int mdsd_position_no_exact(const mdsd_position_settings *st, mdsd_position_worker *w,
                           mdsd_verifier_kind kind, const mdsd_scheme *s, int rc,
                           bool keep_message, const char *trials_hint, mdsd_err *err)
{
    if (st->trials > 0 || st->simulate)
        return rc; /* Monte Carlo was tried: its set-up's message names what blocks it */
    /* Monte Carlo helps only where the verifier can be set up for sampling: is needs
     * the LP of its weights for both, so past that LP's guard the fix is --is-top S,
     * which the set-up's message names; passing --trials would fail the same way. */
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc(kind, w->p, s, st->verifier_opts, &e);
    if (!v)
        return mdsd_fail(err, rc, "no exact acceptance at this size, and Monte Carlo cannot "
                         "stand in: %s", e.msg);
    mdsd_verifier_free(v);
    if (keep_message) {
        char what[512];
        snprintf(what, sizeof what, "%s", err->msg);
        return mdsd_fail(err, rc, "%s; %s", what, trials_hint);
    }
    return mdsd_fail(err, rc, "no exact acceptance at this size; %s%s", trials_hint,
                     kind == MDSD_VERIFIER_RRSW && rc == MDSD_ETOOBIG
                         ? " (rrsw: or raise --max-paths, the guard on its draw-path visits)" : "");
}

/* Decoding truncation (top-k, then top-p) of both models, as a decoder
 * applies it before speculative sampling. */
int mdsd_position_pq(const mdsd_position_settings *st, mdsd_position_worker *w, const float *tf,
                     const double *td, const float *df, const double *dd, size_t V, mdsd_err *err)
{
    int rc = tf ? mdsd_softmax_float(tf, V, st->T, w->p, "target", err)
                : mdsd_softmax(td, V, st->T, w->p, "target", err);
    if (rc == MDSD_OK)
        rc = df ? mdsd_softmax_float(df, V, st->T, w->q, "draft", err)
                : mdsd_softmax(dd, V, st->T, w->q, "draft", err);
    double top_p = st->top_p > 0.0 ? st->top_p : 1.0;
    if (rc == MDSD_OK && (st->top_k > 0 || top_p < 1.0)) {
        rc = mdsd_truncate(w->p, V, st->top_k, top_p, err);
        if (rc == MDSD_OK)
            rc = mdsd_truncate(w->q, V, st->top_k, top_p, err);
    }
    w->pq_tag++;
    return rc;
}

/* ot's exact rate is alpha* of its scheme (MATH.md §3.10): checked at every
 * position against sort-and-scan, so that an ot row can never print a value
 * off the scheme's alpha* line. */
static int ot_attains(mdsd_position_worker *w, const mdsd_scheme *s, double rate, mdsd_err *err)
{
    double star;
    int rc = mdsd_position_alpha(w, s, &star, err);
    if (rc == MDSD_OK && !(fabs(rate - star) <= 1e-9))
        rc = mdsd_fail(err, MDSD_ESOLVER, "ot's acceptance %.17g is not alpha* = %.17g (off by "
                       "%.3g); please report this position", rate, star, fabs(rate - star));
    return rc;
}

/* Evaluates every cell at one row: alpha[cells], per_draft[cells * max_n]. */
int mdsd_position_eval(const unit_ctx *u, worker *w, const float *target, const float *draft,
                       size_t row, double *alpha, double *per_draft, bool *exact, mdsd_err *err)
{
    if (row == u->fail_row)
        return mdsd_fail(err, MDSD_EINVAL, "%s, row %zu: failed on purpose (test hook "
                         "MDSD_TABLE_FAIL)", u->label, row);
    int rc = mdsd_position_pq(&u->set, w, target, NULL, draft, NULL, u->V, err);
    const plan *pl = u->pl;
    for (size_t c = 0; c < pl->count && rc == MDSD_OK; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_scheme s = {ce->scheme, ce->n, u->V, w->q, NULL};
        double *pd = per_draft + c * pl->max_n;
        memset(pd, 0, pl->max_n * sizeof *pd);
        exact[c] = true;
        if (ce->verifier < 0)
            rc = mdsd_position_alpha(w, &s, &alpha[c], err);
        else if ((rc = mdsd_position_rate(&u->set, w, (mdsd_verifier_kind)ce->verifier, &s, row,
                                          &alpha[c], pd, &exact[c], err)) == MDSD_EUNSUPPORTED ||
                 rc == MDSD_ETOOBIG)
            rc = mdsd_position_no_exact(&u->set, w, (mdsd_verifier_kind)ce->verifier, &s, rc, false,
                                        "pass --trials K for Monte Carlo", err);
        if (rc == MDSD_OK && ce->verifier == MDSD_VERIFIER_OT && exact[c])
            rc = ot_attains(w, &s, alpha[c], err);
        if (rc) {
            char what[600];
            snprintf(what, sizeof what, "%s", err->msg);
            mdsd_fail(err, rc, "%s, row %zu (T = %g, n = %zu, %s, %s): %s", u->label, row, u->T,
                      ce->n, mdsd_scheme_name(ce->scheme),
                      ce->verifier < 0 ? "alpha*" : mdsd_verifier_name((mdsd_verifier_kind)ce->verifier),
                      what);
        }
    }
    if (rc && strncmp(err->msg, u->label, strlen(u->label)) != 0) {
        char what[600];
        snprintf(what, sizeof what, "%s", err->msg);
        mdsd_fail(err, rc, "%s, row %zu (T = %g): %s", u->label, row, u->T, what);
    }
    return rc;
}

/* Entropies (nats) of p and q and their total variation distance. */
void mdsd_position_stats(const double *p, const double *q, size_t V, double out[3])
{
    double hp = 0, hq = 0, tv = 0;
    for (size_t v = 0; v < V; v++) {
        if (p[v] > 0)
            hp -= p[v] * log(p[v]);
        if (q[v] > 0)
            hq -= q[v] * log(q[v]);
        tv += fabs(p[v] - q[v]);
    }
    out[0] = hp, out[1] = hq, out[2] = 0.5 * tv;
}

void mdsd_position_workers_free(mdsd_position_worker *w, int count)
{
    for (int i = 0; w && i < count; i++) {
        free(w[i].p), free(w[i].q);
        mdsd_bound_workspace_free(w[i].bound);
    }
    free(w);
}

mdsd_position_worker *mdsd_position_workers_alloc(int count, size_t V, size_t max_n, const char *who,
                                                  mdsd_err *err)
{
    mdsd_position_worker *w = calloc((size_t)count, sizeof *w);
    for (int i = 0; w && i < count; i++) {
        w[i].p = malloc(V * sizeof *w[i].p);
        w[i].q = malloc(V * sizeof *w[i].q);
        w[i].bound = mdsd_bound_workspace_alloc(V, max_n, err);
        if (!w[i].p || !w[i].q || !w[i].bound) {
            mdsd_position_workers_free(w, count);
            w = NULL;
        }
    }
    if (!w)
        mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory for V = %zu", who, V);
    return w;
}
