/* verify_rrsw_exact.c - exact acceptance rates of rrsw (verify_rrsw.c, Jeon
 * et al.; MATH.md §3.4), two routes: every draw path with the definition
 * transcribed literally (mdsd_rrsw_exact_paths, |supp q|^n paths: the
 * independent slow route the tests compare with, and the fallback where c
 * overflows), and the scalar recursion summed over the sequences of rejected
 * tokens: an interval [lo, hi] proven to hold alpha, hi - lo <= 1e-9
 * (mdsd_rrsw_exact_bounds; the .exact op's route). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"
#include "dist.h"
#include "keysort.h"
#include "verifier.h"
#include "verify_common.h"
#include "rrsw_shared.h"

/* ---- exact rates by enumerating draw paths ------------------------------ */

typedef struct {
    size_t n, V;
    const double *q;
    double *pj;              /* [n * V]: row j = p_j along the current path */
    double *qj;              /* [V] scratch: q_j */
    unsigned char *removed;  /* [V] tokens drawn (and rejected) on the current path */
    double *per_draft;
} rrsw_paths;

/* q_j = q off the removed tokens, renormalised by R = 1 - q(removed). */
static void draft_row(const rrsw_paths *w, double R, double *qj)
{
    for (size_t v = 0; v < w->V; v++)
        qj[v] = w->removed[v] ? 0.0 : w->q[v] / R;
}

/* q mass off the removed tokens, summed directly (no 1 - q(removed)). */
static double remaining(const rrsw_paths *w)
{
    double s = 0.0, c = 0.0;
    for (size_t v = 0; v < w->V; v++) {
        if (w->removed[v])
            continue;
        MDSD_KAHAN_ADD(s, c, w->q[v]);
    }
    return s;
}

/* Node at depth j (0-based) reached with probability prob. */
static void walk(rrsw_paths *w, size_t j, double prob)
{
    size_t V = w->V;
    double R = remaining(w);
    const double *pj = w->pj + j * V;
    int last = j + 1 == w->n;
    draft_row(w, R, w->qj);
    if (!last)
        mdsd_vc_residual(pj, w->qj, V, w->pj + (j + 1) * V); /* p_{j+1}: the same for every x_j */
    double acc = 0.0;
    for (size_t x = 0; x < V; x++) {
        if (w->removed[x] || w->q[x] <= 0.0)
            continue;
        double qx = w->q[x] / R;
        double a = pj[x] >= qx ? 1.0 : pj[x] / qx;
        acc += qx * a;
        if (last || a >= 1.0)
            continue;
        w->removed[x] = 1;
        walk(w, j + 1, prob * qx * (1.0 - a));
        w->removed[x] = 0;
    }
    w->per_draft[j] += prob * acc;
}

int mdsd_rrsw_exact_paths(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                          double *alpha, double *per_draft, mdsd_err *err)
{
    size_t n = s->n, V = s->V;
    double paths = pow((double)mdsd_support_size(s->q, V), (double)n);
    if (paths > opts->max_paths)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_MAX_PATHS,
                                "rrsw: exact rates enumerate %.3g draw paths (|supp q|^n with n = %zu), "
                                "above the limit of %.3g (`max_paths`); estimate by Monte Carlo "
                                "instead (`trials`)",
                                paths, n, opts->max_paths);
    rrsw_paths w = {n, V, s->q, NULL, NULL, NULL, per_draft};
    w.pj = mdsd_vc_malloc(n * V * sizeof *w.pj, "rrsw", err);
    w.qj = mdsd_vc_malloc(V * sizeof *w.qj, "rrsw", err);
    w.removed = calloc(V, 1);
    int rc = MDSD_OK;
    if (!w.pj || !w.qj || !w.removed) {
        rc = mdsd_fail(err, MDSD_ENOMEM, "rrsw: out of memory");
    } else {
        memcpy(w.pj, p, V * sizeof *p);
        memset(per_draft, 0, n * sizeof *per_draft);
        walk(&w, 0, 1.0);
        *alpha = mdsd_sum(per_draft, n);
    }
    free(w.pj), free(w.qj), free(w.removed);
    return rc;
}

/* Number of entries of ratio[0..m) (decreasing) above c. */
static size_t count_above(const double *ratio, size_t m, double c)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ratio[mid] > c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- exact rates by the scalar recursion: a certified interval -----------
 *
 * A path rejects x_1, .., x_{j} (distinct) at steps 1..j and reaches step
 * j + 1 in the state (c, Z, R) of the header; D = {x_1..x_j}. Given it:
 *
 *   accept at this step    a(c, Z, R) = sum_y min(q(y)/R, (p(y) - c q(y))+/Z),
 *   draw y and reject it   r(y) = q(y)/R - (p(y) - c q(y))+/Z  for y not in D
 *                          with ratio p/q < c' = c + Z/R (0 above),
 *
 * and a rejected y leads to (c', F(c'), R - q(y)). The drawn tokens need no
 * care in a: each has ratio below the c of the step that rejected it, so
 * (p - c q)+ = 0 there and later. With the tokens sorted by ratio and prefix
 * sums, a is O(1) once the two switch indices K = #{ratio > c} and
 * K' = #{ratio > c'} are known: a = Q(K')/R + [P(K) - P(K') - c (Q(K) - Q(K'))]/Z
 * (the min switches exactly at ratio c'). So alpha is a sum over ordered
 * sequences of distinct rejected tokens of length < n of the products of
 * their r, times the a of the step they lead to.
 *
 * Two ways of not visiting every sequence, each adding a proven amount to an
 * interval [lo, hi] that holds alpha:
 *
 * 1. The last rejection (step n - 1): a child y leads to the leaf value
 *    g(t) = a(c', Z', R - t) at t = q(y), nondecreasing in t. The children
 *    with q(y) <= s (a prefix of the tokens by q ascending, cut where the
 *    bound below fits the node's budget, and s <= R/2 so that R - s does not
 *    cancel) are summed through their moments M_k = sum r(y) q(y)^k,
 *    k = 0, 1, 2, which are the totals over all undrawn tokens (prefix sums
 *    along the ratio order) less the children enumerated. On t in [0, s]
 *    split the tokens y' of g by ratio:
 *      ratio > c' + Z'/(R - s)        term q(y')/(R - t)      (mass Q_hi)
 *      ratio in (c' + Z'/R, that]      term in [q/R, min(q/(R - t), e)]
 *                                      with e = (p - c' q)/Z'  (the zone)
 *      ratio in (c', c' + Z'/R]        term e, constant        (sum E_lo)
 *    and sum_y r(y)/(R - q(y)) = M_0/R + M_1/R^2 + M_2/R^3 + rest, with
 *    0 <= rest <= s M_2 / (R^3 (R - s)) (q^3/(R - q) <= s q^2/(R - s)).
 *    The width is Q_hi s M_2/(R^3 (R - s)) plus the zone's mass times
 *    M_1/R^2 + ...: third order in s, first order in the zone, which holds
 *    the tokens whose branch of the min changes on [0, s] (few: a ratio
 *    window of relative width ~ s/R).
 * 2. Any earlier rejection: the children with q(y) <= s are bounded by
 *    [a(c', Z', R), 1] each (a child's continuation is at least its own step's
 *    acceptance, and a is nonincreasing in R), times their exact total M_0.
 *
 * Each node gets a budget (absolute width): a last-rejection node spends all
 * of it on its cut; an earlier node spends 1/8 on its cut and shares the
 * rest among its enumerated children in proportion to their r. The root's
 * budget is RRSW_BUDGET of the tolerance; the rest covers rounding, counted
 * as it goes (b->slack: double sums of the children, the moments' totals less
 * them, each with its error bound) and added to both ends. The budgets steer
 * the cuts only: the interval is what the bounds add up to, and it is
 * refused (ETOOBIG) if wider than the tolerance, as is an enumeration past
 * opts->max_paths visits (at n >= 4 and LLM vocabularies the steps before the
 * last enumerate nearly every sequence: refused up front from an estimate;
 * with the guard raised above it the interval comes out, ~40 s per position
 * at V = 32,000, n = 4: pruning whole paths by their mass cannot shorten
 * that, the pruned mass at width 1e-9 leaves ~1e8 of them, README).
 * Where c overflows (the undrawn q mass is subnormal) the literal route is
 * used if small enough, else the rate is refused. */

/* Nodes whose undrawn draft mass R is below this enumerate every child: the
 * moment bounds divide by R^3, and the totals subtract drawn tokens. */
#define RRSW_MOMENT_MIN_R 0.05

/* Leaves per node whose switch index is searched from the last sibling's. */
#define RRSW_LEAF_HINTS 32

/* Share of the tolerance the cuts may use; the rest covers rounding. */
#define RRSW_BUDGET 0.9

/* Prefix sums along the ratio order, kept together by use: P and Q are
 * read together wherever a switch index lands (one cache line, and the
 * pairs of all V + 1 indices fit in L2 at V = 32,000), the four higher
 * sums only by the totals. */
typedef struct {
    long double P, Q; /* sums of p, q */
} rrsw_prefix;
typedef struct {
    long double Q2, Q3, PQ1, PQ2; /* sums of q^2, q^3, p q, p q^2 */
} rrsw_prefix_hi;

typedef struct {
    size_t V, n;
    const double *p, *q;
    /* All V tokens by p/q decreasing: q = 0 first (+inf; those with p = 0
     * too, they add nothing), p = 0 last (ratio 0), ties by token. */
    double *ratio;                            /* [V] along the order */
    int *pos;                                 /* [V] position of each token */
    int *tok;                                 /* [V] token at each position */
    rrsw_prefix *pre;                         /* [V + 1] prefix sums along it */
    rrsw_prefix_hi *pre_hi;                   /* [V + 1] the same */
    int *by_q;                                /* [V] tokens by q ascending */
    double *rq, *rp;                          /* [V] q and p by q ascending */
    int *rpos;                                /* [V] ratio position by q ascending */
    int *q_rank;                              /* [V] rank of each token in that */
    long double *A;                           /* [V + 1] prefix sums of q by q ascending */
    double *A2, *A3;                          /* [V + 1] the same of q^2, q^3: they only
                                               * steer the cuts (cut_width) */
    void *block;
} rrsw_tables;

static void tables_free(rrsw_tables *t)
{
    free(t->ratio), free(t->pos), free(t->by_q), free(t->q_rank), free(t->block);
    free(t->rq), free(t->rp), free(t->rpos), free(t->tok);
}

static int tables_build(rrsw_tables *t, const double *p, const double *q, size_t V, size_t n,
                        mdsd_err *err)
{
    memset(t, 0, sizeof *t);
    t->V = V, t->n = n, t->p = p, t->q = q;
    t->ratio = mdsd_vc_malloc(V * sizeof *t->ratio, "rrsw", err);
    t->pos = mdsd_vc_malloc(V * sizeof *t->pos, "rrsw", err);
    t->by_q = mdsd_vc_malloc(V * sizeof *t->by_q, "rrsw", err);
    t->q_rank = mdsd_vc_malloc(V * sizeof *t->q_rank, "rrsw", err);
    t->rq = mdsd_vc_malloc(V * sizeof *t->rq, "rrsw", err);
    t->tok = mdsd_vc_malloc(V * sizeof *t->tok, "rrsw", err);
    t->rp = mdsd_vc_malloc(V * sizeof *t->rp, "rrsw", err);
    t->rpos = mdsd_vc_malloc(V * sizeof *t->rpos, "rrsw", err);
    t->block = mdsd_vc_malloc((V + 1) * (sizeof(rrsw_prefix) + sizeof(rrsw_prefix_hi) +
                                         sizeof(long double) + 2 * sizeof(double)),
                              "rrsw", err);
    /* tokens by a double key (keysort.h): p/q descending, then q ascending */
    mdsd_keysort ks;
    int rc = mdsd_keysort_init(&ks, V, err);
    uint32_t *tok = mdsd_vc_malloc(V * sizeof *tok, "rrsw", err);
    double *dkey = mdsd_vc_malloc(V * sizeof *dkey, "rrsw", err);
    if (rc || !t->ratio || !t->pos || !t->by_q || !t->q_rank || !t->block || !t->rq || !t->rp ||
        !t->rpos || !t->tok || !tok || !dkey) {
        if (rc == MDSD_OK)
            mdsd_keysort_destroy(&ks);
        free(tok), free(dkey);
        tables_free(t);
        return MDSD_ENOMEM;
    }
    t->pre = t->block;
    t->pre_hi = (rrsw_prefix_hi *)(t->pre + (V + 1));
    t->A = (long double *)(t->pre_hi + (V + 1));
    t->A2 = (double *)(t->A + (V + 1));
    t->A3 = t->A2 + (V + 1);

    for (size_t x = 0; x < V; x++)
        dkey[x] = q[x] > 0.0 ? p[x] / q[x] : INFINITY;
    mdsd_keysort_tokens(&ks, dkey, true, V, tok);
    /* The six prefix sums in two passes of three running sums each, held
     * in registers (x87 has eight: six sums and their terms spilled to
     * memory, and an 80-bit store reloaded at once is slow); the same
     * additions in the same order. The first pass gathers p and q in the
     * ratio order into rp and rq (scratch here, refilled in q order below). */
    rrsw_prefix *pre = t->pre;
    rrsw_prefix_hi *hi = t->pre_hi;
    pre[0] = (rrsw_prefix){0.0L, 0.0L};
    hi[0] = (rrsw_prefix_hi){0.0L, 0.0L, 0.0L, 0.0L};
    long double s0 = 0.0L, s1 = 0.0L, s2 = 0.0L;
    for (size_t i = 0; i < V; i++) {
        int x = tok[i];
        if (i + 16 < V) /* a gather in token order: fetch ahead */
            __builtin_prefetch(p + tok[i + 16]), __builtin_prefetch(q + tok[i + 16]),
                __builtin_prefetch(dkey + tok[i + 16]);
        t->rp[i] = p[x], t->rq[i] = q[x];
        long double px = p[x], qx = q[x];
        t->pos[x] = (int)i;
        t->tok[i] = x;
        t->ratio[i] = dkey[x];
        pre[i + 1].P = s0 = s0 + px;
        pre[i + 1].Q = s1 = s1 + qx;
        hi[i + 1].Q2 = s2 = s2 + qx * qx;
    }
    s0 = s1 = s2 = 0.0L;
    for (size_t i = 0; i < V; i++) {
        long double px = t->rp[i], qx = t->rq[i];
        hi[i + 1].Q3 = s0 = s0 + qx * qx * qx;
        hi[i + 1].PQ1 = s1 = s1 + px * qx;
        hi[i + 1].PQ2 = s2 = s2 + px * qx * qx;
    }

    mdsd_keysort_tokens(&ks, q, false, V, tok);
    t->A[0] = 0.0L;
    t->A2[0] = t->A3[0] = 0.0;
    long double a1 = 0.0L; /* running sums, as above */
    double a2 = 0.0, a3 = 0.0;
    for (size_t r = 0; r < V; r++) {
        if (r + 16 < V)
            __builtin_prefetch(p + tok[r + 16]), __builtin_prefetch(q + tok[r + 16]),
                __builtin_prefetch(t->pos + tok[r + 16]);
        long double qx = q[tok[r]];
        t->by_q[r] = tok[r];
        t->rq[r] = q[tok[r]];
        t->rp[r] = p[tok[r]];
        t->rpos[r] = t->pos[tok[r]];
        t->q_rank[tok[r]] = (int)r;
        t->A[r + 1] = a1 = a1 + qx;
        t->A2[r + 1] = a2 = a2 + (double)(qx * qx);
        t->A3[r + 1] = a3 = a3 + (double)(qx * qx * qx);
    }
    mdsd_keysort_destroy(&ks);
    free(tok), free(dkey);
    return MDSD_OK;
}

static size_t above(const rrsw_tables *t, double c)
{
    return count_above(t->ratio, t->V, c);
}

/* above(t, c) searched outward from a nearby index (siblings of a node
 * query nearly the same c): the same value, in O(log distance). */
static size_t above_near(const rrsw_tables *t, double c, size_t hint)
{
    const double *ratio = t->ratio;
    size_t m = t->V, lo, hi, step = 1;
    if (hint > m)
        hint = m;
    if (hint < m && ratio[hint] > c) { /* the answer is past hint */
        lo = hint + 1;
        while (hint + step < m && ratio[hint + step] > c) {
            lo = hint + step + 1;
            step *= 2;
        }
        hi = hint + step < m ? hint + step : m;
    } else { /* at or before hint */
        hi = hint;
        lo = 0;
        while (step <= hint) {
            if (ratio[hint - step] > c) {
                lo = hint - step + 1;
                break;
            }
            hi = hint - step;
            step *= 2;
        }
    }
    /* ratio[..lo) > c >= ratio[hi..): bisect what is left */
    return lo + count_above(ratio + lo, hi - lo, c);
}

/* F(c) = sum (p - c q)+, with K = above(c). */
static double residual_at(const rrsw_tables *t, double c, size_t K)
{
    double F = (double)(t->pre[K].P - (long double)c * t->pre[K].Q);
    return F > 0.0 ? F : 0.0;
}

/* a(c, Z, R) with K = above(c), K1 = above(c + Z/R) <= K. */
static double accept_at(const rrsw_tables *t, double c, double Z, double R, size_t K, size_t K1)
{
    long double band = (t->pre[K].P - t->pre[K1].P) - (long double)c * (t->pre[K].Q - t->pre[K1].Q);
    return (double)(t->pre[K1].Q / R + (band > 0.0L ? band : 0.0L) / Z);
}

/* r of the token at position i of the ratio order (p, q its masses) at a
 * node (c, Z, R) with K = above(c), K1 = above(c'): classified by position,
 * the same way as the totals below. */
static double reject_at(size_t i, double p, double q, double c, double Z, double R, size_t K,
                        size_t K1)
{
    if (i < K1)
        return 0.0;
    if (i >= K)
        return q / R;
    return q / R - (p - c * q) / Z;
}

/* sum over every token of r q^k from the prefix sums of q^(k+1) (at V, K,
 * K1) and of p q^k (at K, K1): ratio <= c: the total less the prefix, an
 * absolute error of one long-double ulp of the total, as for the band. */
static inline long double total_at(long double qV, long double qK, long double qK1, long double pK,
                                   long double pK1, double c, double Z, double R)
{
    long double qb = qK - qK1, pb = pK - pK1;
    return ((qV - qK) + qb) / R - (pb - (long double)c * qb) / Z;
}

/* Totals T[k] = sum over the undrawn y of r(y) q(y)^k, k = 0, 1, 2: from the
 * prefix sums less the drawn tokens where R >= RRSW_MOMENT_MIN_R (the
 * subtraction loses at most 1/R of relative precision), else summed token
 * by token (a drawn token may hold nearly all of q). */
static void reject_totals(const rrsw_tables *t, double c, double Z, double R, size_t K, size_t K1,
                          const int *drawn, const int *drawn_rank, size_t nd, long double T[3])
{
    if (!(R >= RRSW_MOMENT_MIN_R)) {
        T[0] = T[1] = T[2] = 0.0L;
        for (size_t i = K1; i < t->V; i++) {
            int x = t->tok[i], is_d = 0;
            for (size_t k = 0; k < nd; k++)
                is_d |= drawn[k] == x;
            if (is_d)
                continue;
            long double r = reject_at(i, t->p[x], t->q[x], c, Z, R, K, K1), qx = t->q[x];
            T[0] += r, T[1] += r * qx, T[2] += r * qx * qx;
        }
        return;
    }
    /* read in place (a copy of 80-bit values costs more than the arithmetic) */
    const rrsw_prefix *pV = &t->pre[t->V], *pK = &t->pre[K], *pK1 = &t->pre[K1];
    const rrsw_prefix_hi *hV = &t->pre_hi[t->V], *hK = &t->pre_hi[K], *hK1 = &t->pre_hi[K1];
    T[0] = total_at(pV->Q, pK->Q, pK1->Q, pK->P, pK1->P, c, Z, R);
    T[1] = total_at(hV->Q2, hK->Q2, hK1->Q2, hK->PQ1, hK1->PQ1, c, Z, R);
    T[2] = total_at(hV->Q3, hK->Q3, hK1->Q3, hK->PQ2, hK1->PQ2, c, Z, R);
    for (size_t i = 0; i < nd; i++) { /* by q rank: the arrays the parents read */
        int rank = drawn_rank[i];
        long double qx = t->rq[rank];
        long double r = reject_at((size_t)t->rpos[rank], t->rp[rank], t->rq[rank], c, Z, R, K, K1);
        T[0] -= r, T[1] -= r * qx, T[2] -= r * qx * qx;
    }
}

typedef struct {
    const rrsw_tables *t;
    size_t n;
    int drawn[MDSD_LAW_MAX_DRAFTS];      /* tokens drawn on the current path */
    int drawn_rank[MDSD_LAW_MAX_DRAFTS]; /* and their ranks in q ascending */
    long double lo, hi, slack;
    long double *pd_lo, *pd_hi; /* [n] */
    double visits, max_visits;
    int overflow; /* some c overflowed: the undrawn q mass was subnormal */
    /* per step: the last c seen and its above(c), and hints for the
     * searches of the siblings that follow */
    double last_c[MDSD_LAW_MAX_DRAFTS];
    size_t last_K[MDSD_LAW_MAX_DRAFTS], hint_K1[MDSD_LAW_MAX_DRAFTS], hint_cut[MDSD_LAW_MAX_DRAFTS];
    size_t hint_Kz[MDSD_LAW_MAX_DRAFTS], hint_Ks[MDSD_LAW_MAX_DRAFTS];
    /* the switch index of the i-th leaf of the last sibling (mostly the same
     * token, at a nearby R) */
    size_t hint_leaf[MDSD_LAW_MAX_DRAFTS][RRSW_LEAF_HINTS];
} rrsw_bounds;

static int is_drawn(const rrsw_bounds *b, size_t nd, int x)
{
    for (size_t i = 0; i < nd; i++)
        if (b->drawn[i] == x)
            return 1;
    return 0;
}

/* Adds [lo, hi] (absolute, already weighted) to alpha and to per_draft of
 * the steps from..n-1 (lo to step `from` only). */
static void add_range(rrsw_bounds *b, size_t from, long double lo, long double hi)
{
    b->lo += lo, b->hi += hi;
    b->pd_lo[from] += lo;
    for (size_t j = from; j < b->n; j++)
        b->pd_hi[j] += hi;
}

static void add_exact(rrsw_bounds *b, size_t j, long double v)
{
    b->lo += v, b->hi += v;
    b->pd_lo[j] += v, b->pd_hi[j] += v;
}

/* The leaves of a last-rejection node and the bounds of its cut. */
typedef struct {
    const rrsw_tables *t;
    double w, c1, Z1, R;
    size_t Kz;   /* above(c1 + Z1/R) */
    size_t *Ks;  /* a hint for above(c1 + Z1/(R - s)), updated */
} leaf_cut;

/* Width of the cut at k (children of q rank < k summed by their moments),
 * from upper bounds of the moments: M_1 <= sum q^2 / R, M_2 <= sum q^3 / R
 * over those ranks. */
static double cut_width(leaf_cut *lc, size_t k)
{
    if (k == 0)
        return 0.0;
    const rrsw_tables *t = lc->t;
    double R = lc->R, s = t->rq[k - 1], Rs = R - s;
    if (!(s <= R / 2.0)) /* R - s would cancel; the cut's children keep R - q >= R/2 */
        return INFINITY;
    size_t Ks = *lc->Ks = above_near(t, lc->c1 + lc->Z1 / Rs, *lc->Ks);
    double Qhi = (double)t->pre[Ks].Q, Qzone = (double)(t->pre[lc->Kz].Q - t->pre[Ks].Q);
    double M1 = (double)t->A2[k] / R, M2 = (double)t->A3[k] / R, R3 = R * R * R;
    double taylor = s * M2 / (R3 * Rs);
    return lc->w * (Qhi * taylor + Qzone * (M1 / (R * R) + M2 / R3 + taylor));
}

/* Largest k in [0, V] (V: a bound on k) with cut_width(k) <= budget, searched outward from
 * hint (the widths grow with k; should they not, the k returned still
 * satisfies the budget, which is all correctness needs). */
static size_t largest_cut(leaf_cut *lc, double budget, size_t hint, size_t V)
{
    size_t lo, hi, step = 1; /* width(lo) <= budget < width(hi), hi = V + 1: none */
    if (hint > V)
        hint = V;
    if (cut_width(lc, hint) <= budget) {
        lo = hint;
        while (hint + step <= V && cut_width(lc, hint + step) <= budget) {
            lo = hint + step;
            step *= 2;
        }
        hi = hint + step <= V ? hint + step : V + 1;
    } else {
        hi = hint;
        lo = 0;
        while (step < hint) {
            if (cut_width(lc, hint - step) <= budget) {
                lo = hint - step;
                break;
            }
            hi = hint - step;
            step *= 2;
        }
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (cut_width(lc, mid) <= budget)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void node(rrsw_bounds *b, size_t j, double c, double Z, double R, double w, double budget);

/* The children of a node at step j = n - 2: leaves, by q decreasing, down
 * to the cut (the largest within the node's budget); the ones below it by
 * their moments. A leaf's R is R - q(x) (exact to 3 ulps where q(x) <= R/2;
 * else summed from the ranked prefix sums) and its a comes from the ratio
 * order with its switch index moving monotonically (R - q(x) grows). */
static void last_rejection(rrsw_bounds *b, size_t j, double c, double Z, double R, double w,
                           double budget, size_t K, size_t K1, double c1, double Z1)
{
    const rrsw_tables *t = b->t;
    size_t V = t->V, L = K1; /* the leaves' above(c1) */
    size_t Kz = above_near(t, c1 + Z1 / R, b->hint_Kz[j]), cut = 0;
    b->hint_Kz[j] = Kz;
    if (R >= RRSW_MOMENT_MIN_R) {
        leaf_cut lc = {t, w, c1, Z1, R, Kz, &b->hint_Ks[j]};
        cut = largest_cut(&lc, budget, b->hint_cut[j], V);
        b->hint_cut[j] = cut;
    }
    const int *drawn_rank = b->drawn_rank;
    long double PL = t->pre[L].P, QL = t->pre[L].Q;
    double E0 = 0.0, E1 = 0.0, E2 = 0.0, sum = 0.0, leaves = 0.0, half = R / 2.0;
    size_t K2 = Kz; /* above(c1 + Z1/(R - q)) <= Kz */
    int have_K2 = 0;
    double Q_K2 = 0.0, band_Z = 0.0;
    for (size_t rank = V; rank-- > cut;) {
        double qx = t->rq[rank];
        double r = reject_at((size_t)t->rpos[rank], t->rp[rank], qx, c, Z, R, K, K1);
        if (!(r > 0.0))
            continue;
        int is_d = 0;
        for (size_t i = 0; i < j; i++)
            is_d |= drawn_rank[i] == (int)rank;
        if (is_d)
            continue;
        double Rx = R - qx;
        if (!(qx <= half)) {
            b->drawn[j] = t->by_q[rank];
            Rx = mass_left_ranked(t->q_rank, t->A, V, b->drawn, j + 1);
        }
        leaves += 1.0;
        E0 += r, E1 += r * qx, E2 += r * qx * qx;
        if (!(Rx > 0.0)) { /* nothing left to draw (n > |supp q| is refused): rounding */
            add_range(b, j + 1, 0.0L, (long double)w * r);
            continue;
        }
        double c2 = c1 + Z1 / Rx;
        if (!isfinite(c2)) {
            b->overflow = 1;
            return;
        }
        size_t K2_new, i_leaf = (size_t)leaves - 1;
        if (i_leaf < RRSW_LEAF_HINTS) {
            K2_new = above_near(t, c2, b->hint_leaf[j][i_leaf]);
            b->hint_leaf[j][i_leaf] = K2_new;
        } else
            K2_new = above_near(t, c2, K2); /* c2 decreases along the loop: K2 moves forward */
        K2_new = K2_new < L ? K2_new : L;
        if (K2_new != K2 || !have_K2) { /* the leaf's a = Q(K2)/Rx + band(L, K2)/Z1 */
            K2 = K2_new, have_K2 = 1;
            long double band = (PL - t->pre[K2].P) - (long double)c1 * (QL - t->pre[K2].Q);
            Q_K2 = (double)t->pre[K2].Q;
            band_Z = (double)((band > 0.0L ? band : 0.0L) / Z1);
        }
        sum += r * (Q_K2 / Rx + band_Z);
    }
    b->visits += leaves;
    add_exact(b, j + 1, (long double)w * sum);
    /* double sums of leaves + 1 terms: relative error below (leaves + 1) eps */
    double acc_err = (leaves + 1.0) * DBL_EPSILON;
    b->slack += w * acc_err * sum;
    if (cut == 0)
        return;
    long double T[3];
    reject_totals(t, c, Z, R, K, K1, b->drawn, b->drawn_rank, j, T);
    double s = t->rq[cut - 1], Rs = R - s;
    long double M0 = T[0] - E0, M1 = T[1] - E1, M2 = T[2] - E2;
    M0 = M0 > 0.0L ? M0 : 0.0L;
    M1 = M1 > 0.0L ? (M1 < s * M0 ? M1 : s * M0) : 0.0L;
    M2 = M2 > 0.0L ? (M2 < s * M1 ? M2 : s * M1) : 0.0L;
    size_t Ks = above_near(t, c1 + Z1 / Rs, b->hint_Ks[j]);
    long double Qhi = t->pre[Ks].Q, Qzone = t->pre[Kz].Q - t->pre[Ks].Q;
    long double Ezone = ((t->pre[Kz].P - t->pre[Ks].P) - (long double)c1 * Qzone) / Z1;
    long double Elo = ((PL - t->pre[Kz].P) - (long double)c1 * (QL - t->pre[Kz].Q)) / Z1;
    Elo = Elo > 0.0L ? Elo : 0.0L;
    long double RR = R, R3 = RR * RR * RR;
    long double S_lo = M0 / RR + M1 / (RR * RR) + M2 / R3;
    long double S_hi = S_lo + s * M2 / (R3 * Rs);
    long double zone_hi = Qzone * S_hi < Ezone * M0 ? Qzone * S_hi : Ezone * M0;
    long double lo = Qhi * S_lo + (Qzone / RR + Elo) * M0;
    long double hi = Qhi * S_hi + zone_hi + Elo * M0;
    add_range(b, j + 1, w * lo, w * (hi > lo ? hi : lo));
    /* rounding of the moments, totals (long double) less the children's
     * double sums: absolute error below acc_err |E_k| + 1e-18 per term,
     * weighted by the coefficients 1/R, 1/R^2, 2/R^3 (R >= RRSW_MOMENT_MIN_R) */
    long double prefix_err = 1e-18L * (1.0L / RR + (1.0L + c) / Z); /* the totals' differences */
    b->slack += w * ((acc_err * E0 + prefix_err) / RR + (acc_err * E1 + prefix_err) / (RR * RR) +
                     2.0L * (acc_err * E2 + prefix_err) / R3) * (1.0L + Elo);
}

/* The children of a node at step j < n - 2. */
static void earlier_rejection(rrsw_bounds *b, size_t j, double c, double Z, double R, double w,
                              double budget, size_t K, size_t K1, double c1, double Z1)
{
    const rrsw_tables *t = b->t;
    size_t V = t->V, cut = 0;
    long double T[3];
    reject_totals(t, c, Z, R, K, K1, b->drawn, b->drawn_rank, j, T);
    double total = T[0] > 0.0L ? (double)T[0] : 0.0;
    double cut_budget = budget / 8.0, child_budget = budget - cut_budget;
    if (R >= RRSW_MOMENT_MIN_R && w > 0.0) { /* largest k with w A[k]/R <= cut_budget */
        long double limit = (long double)cut_budget * R / w;
        size_t lo = 0, hi = V;
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (t->A[mid] <= limit)
                lo = mid;
            else
                hi = mid - 1;
        }
        cut = lo;
    }
    double share = total > 0.0 ? child_budget / total : 0.0;
    long double E0 = 0.0L;
    for (size_t rank = V; rank-- > cut;) {
        double r = reject_at((size_t)t->rpos[rank], t->rp[rank], t->rq[rank], c, Z, R, K, K1);
        if (!(r > 0.0))
            continue;
        int x = t->by_q[rank];
        if (is_drawn(b, j, x))
            continue;
        b->drawn[j] = x;
        b->drawn_rank[j] = (int)rank;
        double qx = t->rq[rank]; /* R - q(x) is exact to 3 ulps where q(x) <= R/2 */
        double Rx = qx <= R / 2.0 ? R - qx : mass_left_ranked(t->q_rank, t->A, V, b->drawn, j + 1);
        b->visits += 1.0;
        E0 += r;
        if (!(Rx > 0.0)) {
            add_range(b, j + 1, 0.0L, (long double)w * r);
            continue;
        }
        node(b, j + 1, c1, Z1, Rx, w * r, share * r);
        if (b->visits > b->max_visits || b->overflow)
            return;
    }
    if (cut == 0)
        return;
    long double M0 = T[0] - E0;
    M0 = M0 > 0.0L ? M0 : 0.0L;
    size_t L = above(t, c1);
    double a_lo = accept_at(t, c1, Z1, R, L, above_near(t, c1 + Z1 / R, L));
    add_range(b, j + 1, w * M0 * a_lo, w * M0);
    b->slack += w * (1e-15L * (1.0L + 1.0L / R) + 1e-18L * (1.0L + c) / Z);
}

/* A node at step j (0-based) with state (c, Z, R), reached with probability
 * w, allowed a width of budget. */
static void node(rrsw_bounds *b, size_t j, double c, double Z, double R, double w, double budget)
{
    const rrsw_tables *t = b->t;
    if (b->last_c[j] != c) { /* siblings share c */
        b->last_c[j] = c;
        b->last_K[j] = above(t, c);
        b->hint_K1[j] = b->last_K[j];
    }
    size_t K = b->last_K[j];
    double c1 = c + Z / R;
    if (!isfinite(c1)) {
        b->overflow = 1;
        return;
    }
    size_t K1 = above_near(t, c1, b->hint_K1[j]);
    b->hint_K1[j] = K1;
    if (K1 > K)
        K1 = K;
    add_exact(b, j, (long double)w * accept_at(t, c, Z, R, K, K1));
    if (j + 1 == b->n)
        return;
    double Z1 = residual_at(t, c1, K1);
    if (!(Z1 > 0.0) || K1 == 0) {
        /* p_j = q_j on the undrawn tokens: rejection has probability 0, what
         * the sums leave is rounding */
        long double T[3];
        reject_totals(t, c, Z, R, K, K1, b->drawn, b->drawn_rank, j, T);
        add_range(b, j + 1, 0.0L, w * (T[0] > 0.0L ? T[0] : 0.0L));
        return;
    }
    if (j + 2 == b->n)
        last_rejection(b, j, c, Z, R, w, budget, K, K1, c1, Z1);
    else
        earlier_rejection(b, j, c, Z, R, w, budget, K, K1, c1, Z1);
}

int mdsd_rrsw_exact_bounds(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           double tolerance, double *alpha, double *per_draft, double *alpha_lo,
                           double *alpha_hi, mdsd_err *err)
{
    size_t n = s->n, V = s->V;
    if (!(tolerance > 0.0))
        tolerance = MDSD_RRSW_TOLERANCE;
    if (n > MDSD_LAW_MAX_DRAFTS)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_TRIALS,
                                "rrsw: exact rates handle n <= %d drafts, not %zu; "
                                "estimate by Monte Carlo instead (`trials`)", MDSD_LAW_MAX_DRAFTS, n);
    rrsw_tables t;
    int rc = tables_build(&t, p, s->q, V, n, err);
    if (rc)
        return rc;
    rrsw_bounds b = {.t = &t, .n = n, .max_visits = opts->max_paths};
    b.pd_lo = calloc(2 * n, sizeof *b.pd_lo);
    if (!b.pd_lo) {
        tables_free(&t);
        return mdsd_fail(err, MDSD_ENOMEM, "rrsw: out of memory");
    }
    b.pd_hi = b.pd_lo + n;
    size_t K0 = above(&t, 0.0);
    double Z = residual_at(&t, 0.0, K0), R = (double)t.A[V];
    for (size_t j = 0; j < n; j++)
        b.last_c[j] = NAN; /* compares unequal to every c */
    if (n >= 4) {
        /* Steps before the last rejection enumerate their children nearly
         * all (their cuts only drop a tail of mass ~ the tolerance): about
         * N0 N1^(n-3) visits, N0 = #{ratio <= c_1} rejectable at step 1,
         * N1 = #{ratio <= c_1 + Z_1/R_1} (fewer than at any later step).
         * Refuse at once rather than after max_paths visits. */
        double c1 = Z / R;
        size_t K1 = above(&t, c1);
        double Z1 = residual_at(&t, c1, K1);
        double N0 = (double)(V - K1), N1 = Z1 > 0.0 ? (double)(V - above(&t, c1 + Z1 / R)) : 0.0;
        double estimate = N0 * pow(N1, (double)(n - 3));
        if (estimate > b.max_visits) {
            free(b.pd_lo);
            tables_free(&t);
            return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_MAX_PATHS,
                                    "rrsw: the exact rate needs about %.3g draw-path visits at V = %zu, "
                                    "n = %zu, above the limit of %.3g (`max_paths`); estimate by Monte "
                                    "Carlo instead (`trials`)", estimate, V, n, b.max_visits);
        }
    }
    node(&b, 0, 0.0, Z, R, 1.0, RRSW_BUDGET * tolerance);
    long double slack = b.slack + 1e-14L * (long double)n;
    long double lo = b.lo - slack, hi = b.hi + slack;
    if (b.overflow) {
        /* c_j = c_{j-1} + Z/R past the double range: only q mass below
         * DBL_MIN was left undrawn. The literal enumeration has no such
         * scalar; use it where it is small enough. */
        double paths = pow((double)mdsd_support_size(s->q, V), (double)n);
        rc = paths <= opts->max_paths
                 ? mdsd_rrsw_exact_paths(p, s, opts, alpha, per_draft, err)
                 : mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_MAX_PATHS,
                                    "rrsw: the exact rate's recursion overflows (draft mass left "
                                    "undrawn is subnormal) and |supp q|^n = %.3g draw paths exceed "
                                    "`max_paths`; estimate by Monte Carlo instead (`trials`)", paths);
        if (rc == MDSD_OK && alpha_lo)
            *alpha_lo = *alpha;
        if (rc == MDSD_OK && alpha_hi)
            *alpha_hi = *alpha;
    } else if (b.visits > b.max_visits)
        rc = mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_MAX_PATHS,
                              "rrsw: the exact rate needs more than %.3g draw-path visits (`max_paths`) at "
                              "V = %zu, n = %zu; estimate by Monte Carlo instead (`trials`)",
                              b.max_visits, V, n);
    else if (!(hi - lo <= tolerance))
        rc = mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_TRIALS,
                              "rrsw: the exact rate's interval [%.17g, %.17g] is wider than %g at V = %zu, "
                              "n = %zu; estimate by Monte Carlo instead (`trials`)",
                              (double)lo, (double)hi, tolerance, V, n);
    else {
        *alpha = (double)((lo + hi) / 2.0L);
        if (alpha_lo)
            *alpha_lo = (double)lo;
        if (alpha_hi)
            *alpha_hi = (double)hi;
        for (size_t j = 0; j < n; j++)
            per_draft[j] = (double)((b.pd_lo[j] + b.pd_hi[j]) / 2.0L);
    }
    free(b.pd_lo);
    tables_free(&t);
    return rc;
}

