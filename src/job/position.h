/* position.h - the one per-position evaluator: a row of target and draft
 * logits -> (p, q) at a temperature, top-k / top-p truncated -> alpha* of a
 * scheme and a verifier's acceptance (exact where a closed form exists, else
 * Monte Carlo on the row's own stream). The table job (unit.c, through
 * mdsd_position_eval) and mdsd_batch_eval (api/api_batch.c) both run it, so
 * one row of a dump gives the same numbers in both (mdsd/batch.h). */
#ifndef MDSD_POSITION_H
#define MDSD_POSITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bound.h"
#include "verifier.h"

/* What rows are evaluated with. */
typedef struct {
    double T;                  /* temperature; 0 = argmax */
    size_t top_k;              /* 0 = none */
    double top_p;              /* 1 (or 0) = none */
    uint64_t trials;           /* Monte Carlo where no exact form; 0 = none */
    bool simulate;             /* Monte Carlo for every verifier */
    uint64_t seed;             /* the Monte-Carlo streams' seed (position: the row's) */
    const mdsd_verifier_opts *verifier_opts;
    const char *who;           /* message prefix: "table", "batch" */
} mdsd_position_settings;

/* A thread's scratch. */
typedef struct {
    double *p, *q;                 /* [V] */
    mdsd_bound_workspace *bound;   /* the alpha* solvers' scratch */
    uint64_t pq_tag;               /* bumped with each new (p, q): lets the alpha* of one
                                      position share the q/p order */
    /* truncated rows (MATH.md §2.9), allocated at the first one: the known
     * probabilities (-1 = unseen) and the interval's scratch */
    double *known_p, *known_q;     /* [V] */
    struct mdsd_interval_ws *interval;
} mdsd_position_worker;

mdsd_position_worker *mdsd_position_workers_alloc(int count, size_t V, size_t max_n, const char *who,
                                                  mdsd_err *err);
void mdsd_position_workers_free(mdsd_position_worker *w, int count);

/* w->p, w->q from one row of float (tf, df) or double (td, dd) logits [V]. */
int mdsd_position_pq(const mdsd_position_settings *st, mdsd_position_worker *w, const float *tf,
                     const double *td, const float *df, const double *dd, size_t V, mdsd_err *err);
/* alpha* of scheme s (its q is w->q) at w->p, by the auto method. */
int mdsd_position_alpha(mdsd_position_worker *w, const mdsd_scheme *s, double *alpha, mdsd_err *err);
/* The acceptance of verifier kind at (w->p, s): exact (*exact) unless
 * st->simulate, else Monte Carlo at stream coordinate `position`; without
 * trials a verifier with no exact form here returns MDSD_EUNSUPPORTED or
 * MDSD_ETOOBIG with its own message (the caller says what to do). */
int mdsd_position_rate(const mdsd_position_settings *st, mdsd_position_worker *w,
                       mdsd_verifier_kind kind, const mdsd_scheme *s, uint64_t position, double *rate,
                       double *per_draft, bool *exact, mdsd_err *err);
/* The message for rc (MDSD_EUNSUPPORTED, MDSD_ETOOBIG) of mdsd_position_rate, saying
 * what resolves it; returns rc. Without trials: trials_hint ("pass `trials K` for
 * Monte Carlo"), after err's message when keep_message, where the verifier can be set
 * up for Monte Carlo at (w->p, s); where it cannot (is past its LP's guard), the
 * set-up's message, which names the fix (--is-top S). With trials (Monte Carlo
 * tried), err's message as it is. */
int mdsd_position_no_exact(const mdsd_position_settings *st, mdsd_position_worker *w,
                           mdsd_verifier_kind kind, const mdsd_scheme *s, int rc,
                           bool keep_message, const char *trials_hint, mdsd_err *err);

#endif
