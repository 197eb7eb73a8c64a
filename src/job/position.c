/* position.c - the per-position evaluator (position.h), and one row of a
 * dump through it: every cell of the table job's plan (engine.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "engine.h"
#include "interval.h"
#include "montecarlo.h"
#include "position.h"
#include "wor_bucket.h"

/* Whether alpha* of s has a route that needs no full q/p order (bound.c's
 * sort-free routes: iid and cps by buckets, wor with n >= 3 from
 * MDSD_WOR_BUCKET_MIN_V on). The table job builds the full order only for the
 * schemes that need it (wor n = 2 and small V), which share it through the
 * position's tag; the others take the same route as mdsd_batch_eval. */
static bool sort_free(const mdsd_scheme *s)
{
    return s->kind == MDSD_SCHEME_IID || s->kind == MDSD_SCHEME_CPS ||
           (s->kind == MDSD_SCHEME_WOR && (s->n == 1 || (s->n >= 3 && s->V >= MDSD_WOR_BUCKET_MIN_V)));
}

int mdsd_position_alpha(mdsd_position_worker *w, const mdsd_scheme *s, double *alpha, mdsd_err *err)
{
    mdsd_bound_result res = {0};
    mdsd_bound_opts opts = {.pq_tag = sort_free(s) ? 0 : w->pq_tag};
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
                         ? " (rrsw: or raise `max_paths`, the guard on its draw-path visits)" : "");
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

/* ---- truncated rows (MATH.md §2.9) ---- */

/* A model's row as known probabilities at T = 1: a complete row by the
 * softmax, a truncated one (its finite entries log-probabilities of the full
 * distribution, -inf unseen) as exp of the kept entries divided by kept +
 * missing, unseen -1; the plug-in completion (the missing mass spread evenly
 * over the unseen tokens) into full[V]. */
static int known_row(const float *logits, size_t V, bool truncated, double missing, double *known,
                     double *full, mdsd_partial_row *out, const char *who, mdsd_err *err)
{
    *out = (mdsd_partial_row){known, 0, 0};
    if (!truncated) {
        int rc = mdsd_softmax_float(logits, V, 1.0, full, who, err);
        if (rc == MDSD_OK)
            memcpy(known, full, V * sizeof *known);
        return rc;
    }
    double kept = 0, smallest = INFINITY;
    size_t unseen = 0;
    for (size_t v = 0; v < V; v++) {
        float l = logits[v];
        if (l == -INFINITY) {
            known[v] = -1, unseen++;
            continue;
        }
        if (!(l <= 0.0f))
            return mdsd_fail(err, MDSD_EINVAL, "%s row, token %zu: %.9g is not a log-probability "
                             "(a truncated row holds log-probabilities of the full distribution, "
                             "each <= 0)", who, v, (double)l);
        known[v] = exp((double)l);
        kept += known[v];
    }
    /* float32 log-probabilities round the kept mass by ~1e-7 relative; a
     * larger mismatch means the entries are not what the record says */
    if (!(fabs(kept + missing - 1.0) <= 1e-4))
        return mdsd_fail(err, MDSD_EINVAL, "%s row: the kept probabilities sum to %.9g and the "
                         "recorded missing mass is %.9g: together %.9g, not 1 (the finite entries "
                         "are not log-probabilities of the full distribution at T = 1)", who, kept,
                         missing, kept + missing);
    double total = kept + missing;
    for (size_t v = 0; v < V; v++)
        if (known[v] >= 0) {
            known[v] /= total;
            smallest = fmin(smallest, known[v]);
        }
    out->missing = missing / total;
    out->cap = isfinite(smallest) ? smallest : 0;
    for (size_t v = 0; v < V; v++)
        full[v] = known[v] >= 0 ? known[v] : out->missing / (double)unseen;
    return MDSD_OK;
}

/* A row where either model is truncated: the alpha* cells (iid only, as
 * column.c makes sure) at the plug-in completion, and their intervals. */
static int eval_truncated(const unit_ctx *u, worker *w, const float *target, const float *draft,
                          const mdsd_position_truncation *tr, double *alpha, double *lo, double *hi,
                          mdsd_err *err)
{
    size_t V = u->V;
    if (!w->interval) {
        w->known_p = malloc(V * sizeof *w->known_p);
        w->known_q = malloc(V * sizeof *w->known_q);
        w->interval = mdsd_interval_ws_alloc(V);
        if (!w->known_p || !w->known_q || !w->interval)
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory for V = %zu", V);
    }
    mdsd_partial_row kp, kq;
    int rc = known_row(target, V, tr->target, tr->target_missing, w->known_p, w->p, &kp, "target", err);
    if (rc == MDSD_OK)
        rc = known_row(draft, V, tr->draft, tr->draft_missing, w->known_q, w->q, &kq, "draft", err);
    w->pq_tag++;
    const plan *pl = u->pl;
    for (size_t c = 0; c < pl->count && rc == MDSD_OK; c++) {
        const cell *ce = &pl->cells[c];
        if (ce->verifier >= 0 || ce->scheme != MDSD_SCHEME_IID)
            return mdsd_fail(err, MDSD_EUNSUPPORTED, "a truncated row reached a cell without an "
                             "interval; please report this");
        mdsd_scheme s = {ce->scheme, ce->n, V, w->q, NULL};
        rc = mdsd_position_alpha(w, &s, &alpha[c], err);
        if (rc == MDSD_OK)
            rc = mdsd_interval_iid(&kp, &kq, V, ce->n, w->interval, &lo[c], &hi[c], err);
        /* the plug-in completion is one of the completions: a point outside
         * its own interval is a defect, never printed */
        if (rc == MDSD_OK && !(alpha[c] >= lo[c] - 1e-9 && alpha[c] <= hi[c] + 1e-9))
            rc = mdsd_fail(err, MDSD_ESOLVER, "alpha* %.17g at the plug-in completion is outside its "
                           "interval [%.17g, %.17g]; please report this row", alpha[c], lo[c], hi[c]);
    }
    return rc;
}

/* Evaluates every cell at one row: alpha[cells], per_draft[cells * max_n]. */
int mdsd_position_eval(const unit_ctx *u, worker *w, const float *target, const float *draft,
                       size_t row, const mdsd_position_truncation *tr, double *alpha, double *lo,
                       double *hi, double *per_draft, bool *exact, mdsd_err *err)
{
    if (row == u->fail_row)
        return mdsd_fail(err, MDSD_EINVAL, "%s, row %zu: failed on purpose (test hook "
                         "MDSD_TABLE_FAIL)", u->label, row);
    const plan *pl = u->pl;
    if (tr->target || tr->draft) {
        memset(per_draft, 0, pl->count * pl->max_n * sizeof *per_draft);
        for (size_t c = 0; c < pl->count; c++)
            exact[c] = true;
        int rc = eval_truncated(u, w, target, draft, tr, alpha, lo, hi, err);
        if (rc) {
            char what[600];
            snprintf(what, sizeof what, "%s", err->msg);
            mdsd_fail(err, rc, "%s, row %zu (truncated, T = %g): %s", u->label, row, u->T, what);
        }
        return rc;
    }
    int rc = mdsd_position_pq(&u->set, w, target, NULL, draft, NULL, u->V, err);
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
                                        "pass `trials K` for Monte Carlo", err);
        if (rc == MDSD_OK && ce->verifier == MDSD_VERIFIER_OT && exact[c])
            rc = ot_attains(w, &s, alpha[c], err);
        lo[c] = hi[c] = alpha[c]; /* a complete row: the interval is the point */
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
        free(w[i].p), free(w[i].q), free(w[i].known_p), free(w[i].known_q);
        mdsd_interval_ws_free(w[i].interval);
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
