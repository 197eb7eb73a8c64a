/* verify_rrsw_f32.c - AUDIT VARIANT, NOT A VALID VERIFIER.
 *
 * Reproduces a behaviour found in a public peer implementation of recursive
 * speculative decoding without replacement (rrsw; Jeon et al.; the EAGLE-based
 * path of the SpecHub authors' evaluation code, rewritten here from its
 * description, no code copied): the draft probability of the j-th draft is
 * computed in float32 as
 *     q_j(x) = q(x) / (1 - sum_{l<j} q(x_l)),      all in float32,
 * for the tokens not drawn yet (0 for the drawn ones). When q is nearly
 * one-hot the denominator loses every significant digit: with q(top) =
 * 1 - 10^-8, float32 rounds q(top) to 1 and the denominator after drawing top
 * to 0, so q_2 = inf, every second draft is rejected and its residual
 * (p_2 - q_2)+ loses the tokens the draft could have proposed. The drafts
 * themselves follow the true without-replacement law (the scheme's sampler).
 * Everything else is rrsw (verify_rrsw.c) in double precision:
 *   accept x_j w.p. min(1, p_j(x_j)/q_j(x_j)), else p_{j+1} = norm((p_j - q_j)+),
 *   all rejected: output y ~ p_{n+1}
 * (a residual of mass 0 falls back to p_j, the library's convention). On
 * p = (0.4, 0.26, 0.085 x 4), q = (1 - 1e-8, 1e-8, 0 x 4), n = 2: alpha 0.40
 * against rrsw's 0.66, and token 1 is never output (papers/FINDINGS.md).
 *
 * Exact rate by enumerating the draw paths (guard opts->max_paths on
 * |supp q|^n): each path's steps as above; the final residual draw counts
 * when it equals a draft. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verifier.h"
#include "verify_common.h"

typedef struct {
    size_t n, V;
    double *p;   /* [V] the target */
    double *q;   /* [V] the draft law (double, what the sampler uses) */
    float *qf;   /* [V] the peer's float32 copy */
} f32_state;

static int f32_check(const mdsd_scheme *s, mdsd_err *err)
{
    if (s->kind != MDSD_SCHEME_WOR)
        return mdsd_vc_wrong_scheme("rrsw-f32", s, "drafts without replacement (wor)", err);
    return MDSD_OK;
}

static void f32_release(void *state)
{
    f32_state *st = state;
    free(st->p);
    free(st->q);
    free(st->qf);
    free(st);
}

static int f32_prepare(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                       void **state, mdsd_err *err)
{
    (void)opts;
    size_t V = s->V;
    f32_state *st = calloc(1, sizeof *st);
    if (!st)
        return mdsd_fail(err, MDSD_ENOMEM, "rrsw-f32: out of memory");
    *state = st;
    st->n = s->n, st->V = V;
    st->p = mdsd_vc_malloc(V * sizeof *st->p, "rrsw-f32", err);
    st->q = mdsd_vc_malloc(V * sizeof *st->q, "rrsw-f32", err);
    st->qf = mdsd_vc_malloc(V * sizeof *st->qf, "rrsw-f32", err);
    if (!st->p || !st->q || !st->qf)
        return MDSD_ENOMEM;
    memcpy(st->p, p, V * sizeof *p);
    memcpy(st->q, s->q, V * sizeof *st->q);
    for (size_t x = 0; x < V; x++)
        st->qf[x] = (float)s->q[x];
    return MDSD_OK;
}

/* The peer's q_j: qf(x) / (1 - sum of the drawn qf), in float32; drawn tokens 0.
 * A zero denominator gives +inf for qf(x) > 0 (what IEEE float32 division does). */
static void draft_law_f32(const float *qf, const unsigned char *drawn, float drawn_sum, size_t V,
                          double *out)
{
    volatile float denom = 1.0f - drawn_sum; /* volatile: keep the float32 rounding */
    for (size_t x = 0; x < V; x++) {
        if (drawn[x] || qf[x] == 0.0f)
            out[x] = 0.0;
        else if (denom <= 0.0f)
            out[x] = INFINITY;
        else
            out[x] = (double)(float)(qf[x] / denom);
    }
}

/* p_next = norm((p - qj)+); a residual of mass 0 is p (never drawn on a valid path). */
static void residual_inf(const double *p, const double *qj, size_t V, double *next)
{
    for (size_t x = 0; x < V; x++)
        next[x] = p[x] > qj[x] ? p[x] - qj[x] : 0.0;
    double mass = 0.0;
    for (size_t x = 0; x < V; x++)
        mass += next[x];
    if (mass > 0.0)
        for (size_t x = 0; x < V; x++)
            next[x] /= mass;
    else
        memcpy(next, p, V * sizeof *p);
}

static double ratio_of(double pj, double qj)
{
    if (qj == 0.0)
        return 1.0; /* a draft the peer believes impossible: accepted */
    double r = pj / qj;
    return r < 1.0 ? r : 1.0;
}

static int f32_verify(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index)
{
    const f32_state *st = state;
    size_t V = st->V;
    double *buf = malloc(3 * V * sizeof *buf);
    unsigned char *drawn = calloc(V, 1);
    if (!buf || !drawn) { /* verify cannot fail: output p's argmax-free fallback */
        free(buf), free(drawn);
        *accepted_index = -1;
        return drafts[0];
    }
    double *pj = buf, *qj = buf + V, *next = buf + 2 * V;
    memcpy(pj, st->p, V * sizeof *pj);
    float drawn_sum = 0.0f;
    int y = -1;
    for (size_t j = 0; j < st->n && y < 0; j++) {
        int x = drafts[j];
        draft_law_f32(st->qf, drawn, drawn_sum, V, qj);
        if (gsl_rng_uniform(rng) < ratio_of(pj[x], qj[x])) {
            *accepted_index = (int)j;
            y = x;
            break;
        }
        residual_inf(pj, qj, V, next);
        memcpy(pj, next, V * sizeof *pj);
        drawn[x] = 1;
        drawn_sum += st->qf[x];
    }
    if (y < 0) { /* inverse CDF on p_{n+1} */
        double u = gsl_rng_uniform(rng), c = 0.0;
        y = (int)V - 1;
        while (y > 0 && pj[y] == 0.0)
            y--;
        for (size_t x = 0; x < V; x++) {
            c += pj[x];
            if (u < c && pj[x] > 0.0) {
                y = (int)x;
                break;
            }
        }
        *accepted_index = -1;
    }
    free(buf), free(drawn);
    return y;
}

typedef struct {
    const f32_state *st;
    int *x;               /* [n] drafts of the current path */
    unsigned char *drawn; /* [V] */
    double *rows;         /* [(n + 1) * V] p_j for each depth */
    double *qj;           /* [(n) * V] */
    double *per_draft;
} f32_walk;

static void walk(f32_walk *w, size_t j, float drawn_sum, double prob)
{
    const f32_state *st = w->st;
    size_t V = st->V, n = st->n;
    const double *pj = w->rows + j * V;
    if (j == n) { /* the final residual draw hits a draft: counts as acceptance */
        for (size_t l = 0; l < n; l++)
            w->per_draft[l] += prob * pj[w->x[l]];
        return;
    }
    double left = 0.0; /* true law of the next draw: q over the undrawn, summed */
    for (size_t x = 0; x < V; x++)
        if (!w->drawn[x])
            left += st->q[x];
    double *qj = w->qj + j * V, *next = w->rows + (j + 1) * V;
    draft_law_f32(st->qf, w->drawn, drawn_sum, V, qj);
    for (size_t x = 0; x < V; x++) {
        if (w->drawn[x] || st->q[x] == 0.0)
            continue;
        double px = prob * st->q[x] / left;
        double acc = ratio_of(pj[x], qj[x]);
        w->per_draft[j] += px * acc;
        if (acc >= 1.0)
            continue;
        residual_inf(pj, qj, V, next);
        w->x[j] = (int)x;
        w->drawn[x] = 1;
        walk(w, j + 1, drawn_sum + st->qf[x], px * (1.0 - acc));
        w->drawn[x] = 0;
    }
}

static int f32_exact(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                     double *alpha, double *per_draft, mdsd_err *err)
{
    size_t n = s->n, V = s->V, support = 0;
    for (size_t x = 0; x < V; x++)
        support += s->q[x] > 0.0;
    double paths = pow((double)support, (double)n);
    if (paths > opts->max_paths)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_TRIALS,
                                "rrsw-f32: the exact rate enumerates %.3g draw paths, "
                                "above the limit of %.3g; use Monte Carlo (`trials`)", paths,
                                opts->max_paths);
    void *state;
    int rc = f32_prepare(p, s, opts, &state, err);
    f32_walk w = {state, calloc(n, sizeof(int)), calloc(V, 1),
                  malloc((n + 1) * V * sizeof(double)), malloc((n ? n : 1) * V * sizeof(double)),
                  per_draft};
    if (rc == MDSD_OK && (!w.x || !w.drawn || !w.rows || !w.qj))
        rc = mdsd_fail(err, MDSD_ENOMEM, "rrsw-f32: out of memory (V = %zu)", V);
    if (rc == MDSD_OK) {
        memset(per_draft, 0, n * sizeof *per_draft);
        memcpy(w.rows, p, V * sizeof *p);
        walk(&w, 0, 0.0f, 1.0);
        *alpha = 0.0;
        for (size_t j = 0; j < n; j++)
            *alpha += per_draft[j];
    }
    free(w.x), free(w.drawn), free(w.rows), free(w.qj);
    f32_release(state);
    return rc;
}

const mdsd_verifier_ops mdsd_verify_rrsw_f32_ops = {
    .name = "rrsw-f32",
    .scheme = MDSD_SCHEME_WOR,
    .check = f32_check,
    .prepare = f32_prepare,
    .verify = f32_verify,
    .release = f32_release,
    .exact = f32_exact,
};
