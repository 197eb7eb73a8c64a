/* ot_plan.c - the construction of ot_plan.h (MATH.md §3.10).
 *
 * 1. Layout: the tokens with q > 0 in the exact q/p order of sort-and-scan
 *    (qporder.h), bin b of length len(b) = q(tok[b]) / q's total at
 *    S_b = len(0) + ... + len(b - 1) (a double-double prefix, so that
 *    differences of positions keep their digits).
 * 2. The cut (for the check only): m minimises P_k - S_k^n over k = 0..K
 *    (P_k = p of the first k bins' tokens); alpha* = 1 + P_m - S_m^n.
 * 3. Vertex allocation: each token on its own bin, r(b) = len(b) wbar(b).
 * 4. One sweep upwards: a token with r > p gives mass of its own bin to the
 *    tokens below it that have r < p (a stack, nearest first), taking mass
 *    of their lowest bins in exchange, until r = p or the stack is empty.
 *    Each exchange of delta mass between bins a < b moves delta (wbar(b) -
 *    wbar(a)) of inflow; MATH.md §3.10 proves that the excess left over is
 *    1 - alpha*, so that sum min(p, r) = alpha* (and, as every optimal plan
 *    must, r <= p above the cut and r >= p on it).
 * 5. The inflows are recomputed from the final pieces, and the acceptance
 *    min(1, p/r) and the residual come from them: the output law is p
 *    whatever rounding did to the exchanges. */
#include "ot_plan.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>

#include "bsum.h"
#include "dist.h"
#include "qporder.h"
#include "verify_common.h"

/* ---- the line -------------------------------------------------------- */

/* h_{d}(x, y) = sum_{i=0..d} x^i y^(d-i), for every d = 0..deg into h[]. */
static void h2_all(double x, double y, size_t deg, double *h)
{
    double ym = 1.0;
    h[0] = 1.0;
    for (size_t d = 1; d <= deg; d++) {
        ym *= y;
        h[d] = x * h[d - 1] + ym;
    }
}

/* h_d(x, y, z), the complete homogeneous symmetric polynomial of degree d. */
static double h3(double x, double y, double z, size_t d)
{
    double h[MDSD_OT_MAX_DRAFTS + 1];
    h2_all(y, z, d, h);
    double s = 0.0, xi = 1.0;
    for (size_t i = 0; i <= d; i++) {
        s += xi * h[d - i];
        xi *= x;
    }
    return s;
}

/* x^k by squaring (k <= 64). */
static double ipow(double x, size_t k)
{
    double r = 1.0;
    while (k) {
        if (k & 1)
            r *= x;
        x *= x;
        k >>= 1;
    }
    return r;
}

/* Arrays carved out of one allocation (one block per plan and one for the
 * builder's scratch: fewer fresh pages to fault in per position). */
typedef struct {
    char *base;
    size_t used;
} carve;

static size_t carve_size(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

static void *carve_take(carve *c, size_t bytes)
{
    void *p = c->base + c->used;
    c->used += carve_size(bytes);
    return p;
}

/* A per-thread cache of freed blocks: the positions of a job build one plan
 * after another of about the same size, and a block taken back from here is
 * already faulted in (fresh pages cost a third of a set-up at V = 32,000).
 * Freed on thread exit. The size of a block is kept in front of it. */
#define CACHE_SLOTS 4

typedef struct {
    void *block[CACHE_SLOTS];
} block_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_destroy(void *v)
{
    block_cache *c = v;
    for (int i = 0; i < CACHE_SLOTS; i++)
        free(c->block[i]);
    free(c);
}

static void cache_init(void)
{
    if (pthread_key_create(&cache_key, cache_destroy) != 0)
        cache_key = (pthread_key_t)-1;
}

static block_cache *cache_get(void)
{
    pthread_once(&cache_once, cache_init);
    if (cache_key == (pthread_key_t)-1)
        return NULL;
    block_cache *c = pthread_getspecific(cache_key);
    if (!c && (c = calloc(1, sizeof *c)) && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

#define BLOCK_HEADER 64 /* keeps the arrays 64-byte aligned */

/* A block of at least `bytes`: a cached one that fits, else a new one. */
static void *block_take(size_t bytes)
{
    block_cache *c = cache_get();
    for (int i = 0; c && i < CACHE_SLOTS; i++) {
        size_t *b = c->block[i];
        if (b && b[0] >= bytes) {
            c->block[i] = NULL;
            return (char *)b + BLOCK_HEADER;
        }
    }
    size_t *b = malloc(BLOCK_HEADER + bytes);
    if (!b)
        return NULL;
    b[0] = bytes;
    return (char *)b + BLOCK_HEADER;
}

/* Gives a block back: into an empty slot, else in place of the smallest
 * cached block if that is smaller; else it is freed. */
static void block_give(void *p)
{
    if (!p)
        return;
    size_t *b = (size_t *)((char *)p - BLOCK_HEADER);
    block_cache *c = cache_get();
    int slot = -1;
    for (int i = 0; c && i < CACHE_SLOTS; i++) {
        size_t *x = c->block[i];
        if (!x) {
            slot = i;
            break;
        }
        if (slot < 0 || x[0] < ((size_t *)c->block[slot])[0])
            slot = i;
    }
    if (slot < 0 || (c->block[slot] && ((size_t *)c->block[slot])[0] >= b[0])) {
        free(b);
        return;
    }
    free(c->block[slot]);
    c->block[slot] = b;
}

/* Builder scratch: the double-double prefix of the raw q along the layout. */
typedef struct {
    void *mem;       /* owns hi and lo */
    double *hi, *lo; /* [K + 1] */
    double total;    /* hi[K] + lo[K] */
} prefix;

/* len(a) + ... + len(b - 1) (a <= b), from the double-double prefix. */
static double range(const prefix *pf, size_t a, size_t b)
{
    return ((pf->hi[b] - pf->hi[a]) + (pf->lo[b] - pf->lo[a])) / pf->total;
}

/* wbar(b) - wbar(a) for bins a < b, without cancellation: with U = S_{x+1},
 * L = S_x, h_{n-1}(U_b, L_b) - h_{n-1}(U_a, L_a) = (U_b - U_a) h_{n-2}(U_b,
 * U_a, L_b) + (L_b - L_a) h_{n-2}(U_a, L_b, L_a), every term >= 0. */
static double wbar_gap(const mdsd_ot_plan *pl, const prefix *pf, size_t a, size_t b)
{
    size_t d = pl->n - 2;
    double Ub = pl->pos[b + 1], Lb = pl->pos[b], Ua = pl->pos[a + 1], La = pl->pos[a];
    return range(pf, a + 1, b + 1) * h3(Ub, Ua, Lb, d) + range(pf, a, b) * h3(Ua, Lb, La, d);
}

/* ---- pieces during the construction ------------------------------------
 *
 * A token keeps own[t], the mass left on its own bin, and a list of the
 * other bins it took mass on (nodes of one arena, in the order taken). */

typedef struct {
    uint32_t bin;
    uint32_t next; /* NIL at the end */
    double mass;
} node;

#define NIL UINT32_MAX

typedef struct {
    void *mem;                   /* owns own, first, head, tail and the sweep's stack */
    double *own;                 /* [K] mass left on the token's own bin */
    node *nodes;
    size_t count, cap;
    uint32_t *first, *head, *tail; /* [K] extra pieces: first ever, first with mass, last */
} arena;

/* Adds mass to token t's piece on `bin` (not its own), appending a node
 * unless its last one is on that bin. */
static int arena_add(arena *a, size_t t, uint32_t bin, double mass)
{
    uint32_t last = a->tail[t];
    if (last != NIL && a->nodes[last].bin == bin) {
        a->nodes[last].mass += mass;
        return MDSD_OK;
    }
    if (a->count == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        node *nn = realloc(a->nodes, cap * sizeof *nn);
        if (!nn)
            return MDSD_ENOMEM;
        a->nodes = nn, a->cap = cap;
    }
    uint32_t id = (uint32_t)a->count++;
    a->nodes[id] = (node){bin, NIL, mass};
    if (last == NIL)
        a->first[t] = a->head[t] = id;
    else
        a->nodes[last].next = id;
    a->tail[t] = id;
    return MDSD_OK;
}

/* The lowest bin on which token t (on the stack) has mass: its own bin
 * while it has mass there, then the bins of the tokens above it that it took
 * mass on, in the order the sweep met them (ascending). NIL if none; *mass
 * points at the mass. */
static uint32_t lowest_bin(arena *a, size_t t, double **mass)
{
    if (a->own[t] > 0.0) {
        *mass = &a->own[t];
        return (uint32_t)t;
    }
    uint32_t id = a->head[t];
    while (id != NIL && !(a->nodes[id].mass > 0.0))
        id = a->nodes[id].next;
    if (id == NIL)
        return NIL;
    a->head[t] = id;
    *mass = &a->nodes[id].mass;
    return a->nodes[id].bin;
}

/* ---- the sweep (MATH.md §3.10) ------------------------------------------- */

/* Bins 0..K-1 upwards: a token with r > p gives mass of its own bin to the
 * tokens below it that have r < p (a stack, nearest first), taking mass of
 * their lowest bins, until r = p or no token below has room. MATH.md §3.10:
 * k's own bin never empties and the rate is positive while k is above its
 * target and the stack is not empty; the excess left when the stack empties
 * sums to max_k (S_k^n - P_k)+ = 1 - alpha*. */
static int sweep(mdsd_ot_plan *pl, const prefix *pf, arena *a, uint32_t *stack)
{
    size_t top = 0;
    for (size_t k = 0; k < pl->K; k++) {
        double off = pl->r[k] - pl->p[k]; /* token k's excess */
        while (off > 0.0 && top > 0) {
            size_t j = stack[top - 1];
            double room = pl->p[j] - pl->r[j], *mj;
            uint32_t bj = lowest_bin(a, j, &mj);
            if (bj == NIL || bj == k || !(room > 0.0)) { /* spent (rounding only) */
                top--;
                continue;
            }
            double mk = a->own[k];
            if (!(mk > 0.0)) /* k's own bin spent: impossible but for rounding */
                break;
            /* the rate: inflow moved per unit of mass exchanged */
            double rate = wbar_gap(pl, pf, bj, k);
            double want = off < room ? off : room;
            double delta = rate > 0.0 ? want / rate : INFINITY;
            int limit = 0; /* 0: want met, 1: j's piece spent, 2: k's own bin spent */
            if (!(delta < *mj) || !(delta < mk)) {
                limit = *mj <= mk ? 1 : 2;
                delta = *mj <= mk ? *mj : mk;
            }
            double moved = limit == 0 ? want : delta * rate;
            a->own[k] = limit == 2 ? 0.0 : mk - delta;
            *mj = limit == 1 ? 0.0 : *mj - delta;
            if (arena_add(a, k, bj, delta) != MDSD_OK || arena_add(a, j, (uint32_t)k, delta))
                return MDSD_ENOMEM;
            pl->exchanges++;
            pl->r[k] -= moved;
            pl->r[j] += moved;
            if (limit == 0 && want == off) {
                pl->r[k] = pl->p[k];
                off = 0.0;
            } else {
                off -= moved;
            }
            if (limit == 0 && want == room) {
                pl->r[j] = pl->p[j];
                top--;
            }
            if (limit == 2)
                break;
        }
        if (pl->r[k] < pl->p[k])
            stack[top++] = (uint32_t)k;
    }
    return MDSD_OK;
}

/* ---- building ----------------------------------------------------------- */

static int cmp_node_bin(const void *x, const void *y)
{
    const node *a = x, *b = y;
    return (a->bin > b->bin) - (a->bin < b->bin);
}

/* The pieces into the plan's arrays, each token's by bin, merged per bin,
 * empty ones dropped; r recomputed from them. */
static int compact(mdsd_ot_plan *pl, arena *a, mdsd_err *err)
{
    size_t K = pl->K, total = K + a->count;
    size_t bytes = carve_size((K + 1) * sizeof *pl->piece_start) +
                   carve_size(total * sizeof *pl->piece_bin) +
                   2 * carve_size(total * sizeof *pl->piece_mass);
    carve c = {block_take(bytes), 0};
    if (!c.base)
        return mdsd_fail(err, MDSD_ENOMEM, "ot: out of memory");
    pl->piece_mem = c.base;
    pl->piece_start = carve_take(&c, (K + 1) * sizeof *pl->piece_start);
    pl->piece_bin = carve_take(&c, total * sizeof *pl->piece_bin);
    pl->piece_mass = carve_take(&c, total * sizeof *pl->piece_mass);
    pl->piece_cum = carve_take(&c, total * sizeof *pl->piece_cum);
    node *buf = block_take(total * sizeof *buf); /* one token's pieces, to sort */
    if (!buf)
        return mdsd_fail(err, MDSD_ENOMEM, "ot: out of memory");
    size_t out = 0;
    for (size_t t = 0; t < K; t++) {
        size_t s = pl->piece_start[t] = out, c = 0;
        if (a->first[t] == NIL) { /* untouched by the sweep: its own bin only */
            pl->piece_bin[out] = (uint32_t)t;
            pl->piece_mass[out] = a->own[t];
            pl->piece_cum[out++] = a->own[t];
            pl->r[t] = a->own[t] * pl->wbar[t];
            continue;
        }
        if (a->own[t] > 0.0)
            buf[c++] = (node){(uint32_t)t, NIL, a->own[t]};
        for (uint32_t id = a->first[t]; id != NIL; id = a->nodes[id].next)
            if (a->nodes[id].mass > 0.0)
                buf[c++] = a->nodes[id];
        /* A stack token's pieces come ascending, an excess token's mostly
         * descending (the stack's tokens lie ever lower): reverse those, then
         * an insertion sort that gives up to qsort past a few moves a piece. */
        if (c > 2 && buf[1].bin > buf[c - 1].bin)
            for (size_t i = 1, l = c - 1; i < l; i++, l--) {
                node x = buf[i];
                buf[i] = buf[l], buf[l] = x;
            }
        size_t moves = 0;
        for (size_t i = 1; i < c && moves <= 8 * c; i++) {
            node x = buf[i];
            size_t l = i;
            while (l > 0 && buf[l - 1].bin > x.bin)
                buf[l] = buf[l - 1], l--, moves++;
            buf[l] = x;
        }
        if (moves > 8 * c)
            qsort(buf, c, sizeof *buf, cmp_node_bin);
        for (size_t i = 0; i < c; i++) {
            if (out > s && pl->piece_bin[out - 1] == buf[i].bin) { /* merge */
                pl->piece_mass[out - 1] += buf[i].mass;
            } else {
                pl->piece_bin[out] = buf[i].bin;
                pl->piece_mass[out++] = buf[i].mass;
            }
        }
        double cum = 0.0, r = 0.0, comp = 0.0;
        for (size_t i = s; i < out; i++) {
            cum += pl->piece_mass[i];
            pl->piece_cum[i] = cum;
            double x = pl->piece_mass[i] * pl->wbar[pl->piece_bin[i]], u = r + x; /* Neumaier */
            comp += fabs(r) >= fabs(x) ? (r - u) + x : (x - u) + r;
            r = u;
        }
        pl->r[t] = r + comp;
    }
    block_give(buf);
    pl->piece_start[K] = out;
    pl->pieces = out;
    return MDSD_OK;
}

/* Beta, alpha and the residual's cumulative weights over [0, V). */
static void accept_and_residual(mdsd_ot_plan *pl)
{
    mdsd_bsum acc, res;
    mdsd_bsum_init(&acc);
    mdsd_bsum_init(&res);
    for (size_t b = 0; b < pl->K; b++) {
        double pb = pl->p[b], rb = pl->r[b];
        pl->beta[b] = mdsd_vc_pass(pb, rb);
        mdsd_bsum_add(&acc, rb < pb ? rb : pb);
    }
    for (size_t i = 0; i < pl->V; i++) { /* layout order; q = 0: all of p is residual */
        double w = i >= pl->K ? pl->p[i] : pl->r[i] < pl->p[i] ? pl->p[i] - pl->r[i] : 0.0;
        pl->res_w[i] = w;
        mdsd_bsum_add(&res, w);
        pl->res_cum[i] = mdsd_bsum_value(&res);
    }
    pl->alpha = mdsd_bsum_value(&acc);
    pl->residual_mass = pl->V ? pl->res_cum[pl->V - 1] : 0.0;
}

/* The line (with a double-double prefix of q along the order) and wbar. */
static void line(mdsd_ot_plan *pl, prefix *pf, const double *q)
{
    size_t K = pl->K, n = pl->n;
    double hi = 0.0, lo = 0.0;
    pf->hi[0] = pf->lo[0] = 0.0;
    for (size_t b = 0; b < K; b++) {
        double x = q[pl->tok[b]], s = hi + x, bb = s - hi; /* TwoSum */
        lo += (hi - (s - bb)) + (x - bb);
        hi = s;
        pf->hi[b + 1] = hi, pf->lo[b + 1] = lo;
    }
    pf->total = hi + lo;
    /* the line in units of q's total (one product each: within an ulp of the
     * quotient, and the same units for len, pos and the rates) */
    double inv = 1.0 / pf->total;
    for (size_t b = 0; b < K; b++) {
        pl->len[b] = q[pl->tok[b]] * inv;
        pl->pos[b] = (pf->hi[b] + pf->lo[b]) * inv;
    }
    pl->pos[K] = 1.0;
    for (size_t b = 0; b < K; b++) { /* h_{n-1}(U, L) = U h_{n-2}(U, L) + L^(n-1) */
        double U = pl->pos[b + 1], L = pl->pos[b], h = 1.0, Ld = 1.0;
        for (size_t d = 1; d < n; d++) {
            Ld *= L;
            h = U * h + Ld;
        }
        pl->wbar[b] = h;
    }
}

/* qporder.h's groups (1: p = 0 < q by index; 2: p, q > 0; 3: q = 0), group 2
 * ordered by the logits' exact difference instead of the double ratio
 * (q/p decreasing = zp - zq increasing; ties by index; keysort.h). */
static void logit_order(mdsd_qp_order *o, const double *p, const double *q, const float *zp,
                        const float *zq, size_t V)
{
    size_t n1 = 0, n2 = 0;
    for (size_t x = 0; x < V; x++)
        if (q[x] > 0.0 && p[x] == 0.0)
            o->order[n1++] = (uint32_t)x;
    uint32_t *mid = o->order + n1;
    for (size_t x = 0; x < V; x++)
        if (q[x] > 0.0 && p[x] > 0.0)
            mid[n2++] = (uint32_t)x;
    mdsd_keysort_logit_gap(&o->ks, zp, zq, mid, n2);
    size_t at = n1 + n2;
    for (size_t x = 0; x < V; x++)
        if (!(q[x] > 0.0))
            o->order[at++] = (uint32_t)x;
    o->n_zero_p = n1;
    o->n_scan = n1 + n2;
}

static int layout(mdsd_ot_plan *pl, prefix *pf, const double *p, const double *q, const float *zp,
                  const float *zq, mdsd_err *err)
{
    size_t V = pl->V;
    mdsd_qp_order o;
    int rc = mdsd_qp_order_init(&o, V, err);
    if (rc != MDSD_OK)
        return rc;
    if (zp && zq) {
        logit_order(&o, p, q, zp, zq, V);
    } else {
        mdsd_qp_order_compute(&o, p, q, V);
    }
    size_t K = pl->K = o.n_scan;
    size_t dK = carve_size((K + 1) * sizeof(double)), dV = carve_size(V * sizeof(double));
    size_t bytes = carve_size(V * sizeof *pl->tok) + carve_size(V * sizeof *pl->bin_of) +
                   5 * dK + 3 * dV;
    carve c = {block_take(bytes), 0};
    carve w = {block_take(2 * dK), 0};
    if (!c.base || !w.base) {
        block_give(c.base);
        block_give(w.base);
        mdsd_fail(err, MDSD_ENOMEM, "ot: out of memory (V = %zu)", V);
        mdsd_qp_order_destroy(&o);
        return MDSD_ENOMEM;
    }
    pl->mem = c.base;
    pl->tok = carve_take(&c, V * sizeof *pl->tok);
    pl->bin_of = carve_take(&c, V * sizeof *pl->bin_of);
    pl->len = carve_take(&c, (K + 1) * sizeof(double));
    pl->pos = carve_take(&c, (K + 1) * sizeof(double));
    pl->wbar = carve_take(&c, (K + 1) * sizeof(double));
    pl->p = carve_take(&c, V * sizeof(double));
    pl->r = carve_take(&c, (K + 1) * sizeof(double));
    pl->beta = carve_take(&c, (K + 1) * sizeof(double));
    pl->res_w = carve_take(&c, V * sizeof(double));
    pl->res_cum = carve_take(&c, V * sizeof(double));
    pf->mem = w.base;
    pf->hi = carve_take(&w, (K + 1) * sizeof(double));
    pf->lo = carve_take(&w, (K + 1) * sizeof(double));
    memset(pl->bin_of, 0xff, V * sizeof *pl->bin_of); /* -1 */
    for (size_t b = 0; b < V; b++) { /* the bins, then the tokens with q = 0 */
        uint32_t t = o.order[b];
        pl->tok[b] = t;
        pl->p[b] = p[t];
        if (b < K)
            pl->bin_of[t] = (int32_t)b;
    }
    mdsd_qp_order_destroy(&o);
    line(pl, pf, q);
    return MDSD_OK;
}

/* The cut: m = the first minimiser of P_k - S_k^n, k = 0..K. */
static void cut(mdsd_ot_plan *pl)
{
    mdsd_bsum P;
    mdsd_bsum_init(&P);
    double best = 0.0;
    pl->m = 0;
    for (size_t k = 1; k <= pl->K; k++) {
        mdsd_bsum_add(&P, pl->p[k - 1]);
        double f = mdsd_bsum_value(&P) - ipow(pl->pos[k], pl->n);
        if (f < best)
            best = f, pl->m = k;
    }
    pl->alpha_cut = 1.0 + best;
}

static int build(mdsd_ot_plan *pl, const double *p, const double *q, size_t V, size_t n,
                 const float *zp, const float *zq, int planted, mdsd_err *err);

int mdsd_ot_plan_build(mdsd_ot_plan *pl, const double *p, const double *q, size_t V, size_t n,
                       mdsd_err *err)
{
    return build(pl, p, q, V, n, NULL, NULL, 0, err);
}

int mdsd_ot_plan_build_logits(mdsd_ot_plan *pl, const double *p, const double *q, size_t V,
                              size_t n, const float *zp, const float *zq, mdsd_err *err)
{
    return build(pl, p, q, V, n, zp, zq, 0, err);
}

int mdsd_ot_plan_build_planted(mdsd_ot_plan *pl, const double *p, const double *q, size_t V,
                               size_t n, int planted, mdsd_err *err)
{
    return build(pl, p, q, V, n, NULL, NULL, planted, err);
}

static int build(mdsd_ot_plan *pl, const double *p, const double *q, size_t V, size_t n,
                 const float *zp, const float *zq, int planted, mdsd_err *err)
{
    memset(pl, 0, sizeof *pl);
    if (n < 1 || n > MDSD_OT_MAX_DRAFTS)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "ot: n = %zu drafts (1..%d)", n,
                         MDSD_OT_MAX_DRAFTS);
    pl->V = V, pl->n = n;
    prefix pf = {0};
    arena a = {0};
    uint32_t *stack = NULL;
    int rc = layout(pl, &pf, p, q, zp, zq, err);
    if (rc == MDSD_OK) {
        cut(pl);
        size_t K = pl->K;
        if (planted && pl->m > 0 && pl->m < K) { /* tests: the tokens at the cut swapped */
            uint32_t t0 = pl->tok[pl->m - 1], t1 = pl->tok[pl->m];
            pl->tok[pl->m - 1] = t1, pl->tok[pl->m] = t0;
            pl->bin_of[t1] = (int32_t)(pl->m - 1), pl->bin_of[t0] = (int32_t)pl->m;
            pl->p[pl->m - 1] = p[t1], pl->p[pl->m] = p[t0];
            line(pl, &pf, q);
        }
        size_t bytes = carve_size(K * sizeof *a.own + 1) + 4 * carve_size(K * sizeof *stack + 1);
        carve c = {block_take(bytes), 0};
        rc = c.base ? MDSD_OK : MDSD_ENOMEM;
        if (rc == MDSD_OK) {
            a.mem = c.base;
            a.own = carve_take(&c, K * sizeof *a.own + 1);
            a.first = carve_take(&c, K * sizeof *a.first + 1);
            a.head = carve_take(&c, K * sizeof *a.head + 1);
            a.tail = carve_take(&c, K * sizeof *a.tail + 1);
            stack = carve_take(&c, K * sizeof *stack + 1);
        }
        if (rc == MDSD_OK) {
            memcpy(a.own, pl->len, K * sizeof *a.own);
            memset(a.first, 0xff, K * sizeof *a.first); /* NIL */
            memset(a.head, 0xff, K * sizeof *a.head);
            memset(a.tail, 0xff, K * sizeof *a.tail);
            for (size_t t = 0; t < K; t++)
                pl->r[t] = pl->len[t] * pl->wbar[t];
        }
        if (rc == MDSD_OK && n >= 2) /* n = 1: r = q, and sum min(p, r) is alpha* already */
            rc = sweep(pl, &pf, &a, stack);
        if (rc == MDSD_ENOMEM)
            mdsd_fail(err, MDSD_ENOMEM, "ot: out of memory (V = %zu)", V);
        if (rc == MDSD_OK)
            rc = compact(pl, &a, err);
        if (rc == MDSD_OK)
            accept_and_residual(pl);
    }
    block_give(pf.mem);
    block_give(a.mem);
    free(a.nodes);
    if (rc != MDSD_OK)
        mdsd_ot_plan_free(pl);
    return rc;
}

void mdsd_ot_plan_free(mdsd_ot_plan *pl)
{
    block_give(pl->mem);
    block_give(pl->piece_mem);
    memset(pl, 0, sizeof *pl);
}

/* A draw from the residual (p - min(p, r))+ over [0, V): the first token
 * whose cumulative weight exceeds u times the total. */
static int residual_draw(const mdsd_ot_plan *pl, gsl_rng *rng)
{
    double u = gsl_rng_uniform(rng) * pl->residual_mass;
    size_t lo = 0, hi = pl->V - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pl->res_cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (int)pl->tok[lo];
}

/* ---- verifying ---------------------------------------------------------- */

/* A draw's key: its bin, then 64 uniform bits (ties: probability 2^-64). */
typedef struct {
    int64_t bin;
    uint64_t bits;
} key;

static key draw_key(const mdsd_ot_plan *pl, size_t t, gsl_rng *rng)
{
    size_t s = pl->piece_start[t], e = pl->piece_start[t + 1];
    size_t i = s;
    if (e - s > 1) { /* the piece by its mass: first cumulative mass above u */
        double u = gsl_rng_uniform(rng) * pl->piece_cum[e - 1];
        size_t lo = s, hi = e - 1;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pl->piece_cum[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        i = lo;
    }
    uint64_t bits = (uint64_t)gsl_rng_get(rng) << 32;
    bits |= (uint64_t)gsl_rng_get(rng);
    return (key){pl->piece_bin[i], bits};
}

int mdsd_ot_plan_verify(const mdsd_ot_plan *pl, const int *x, gsl_rng *rng, int *winner)
{
    key best = {-1, 0};
    int w = -1;
    for (size_t j = 0; j < pl->n; j++) {
        int32_t b = x[j] >= 0 && (size_t)x[j] < pl->V ? pl->bin_of[x[j]] : -1;
        if (b < 0) /* q = 0: no key, never selected */
            continue;
        key k = draw_key(pl, (size_t)b, rng);
        if (w < 0 || k.bin > best.bin || (k.bin == best.bin && k.bits > best.bits))
            best = k, w = (int)j;
    }
    *winner = w;
    if (w >= 0) {
        size_t t = (size_t)pl->bin_of[x[w]];
        if (gsl_rng_uniform(rng) * pl->r[t] < pl->p[t])
            return x[w];
    }
    *winner = -1;
    return residual_draw(pl, rng);
}

/* ---- the law given the drafts ------------------------------------------- */

/* Gauss-Legendre nodes on [0, 1] exact for degree < 2 N; N <= 32. */
typedef struct {
    size_t N;
    double x[32], w[32];
} gl_rule;

static void gl_rule_make(gl_rule *g, size_t degree)
{
    size_t N = degree / 2 + 1;
    if (N > 32)
        N = 32;
    gsl_integration_glfixed_table *t = gsl_integration_glfixed_table_alloc(N);
    g->N = N;
    for (size_t i = 0; i < N; i++)
        gsl_integration_glfixed_point(0.0, 1.0, i, &g->x[i], &g->w[i], t);
    gsl_integration_glfixed_table_free(t);
}

/* The drafts' distinct tokens (bins) tok[0..d), the probability acc[i]
 * that a draw of tok[i] is selected and accepted, and *reject, that the
 * selected draw is rejected (or that no draft has a key). */
static size_t law_core(const mdsd_ot_plan *pl, const int *x, size_t *tok, double *acc,
                       double *reject)
{
    size_t n = pl->n, d = 0;
    size_t cnt[MDSD_OT_MAX_DRAFTS];
    for (size_t j = 0; j < n; j++) { /* distinct drafted tokens with q > 0 */
        int32_t b = x[j] >= 0 && (size_t)x[j] < pl->V ? pl->bin_of[x[j]] : -1;
        if (b < 0)
            continue;
        size_t i = 0;
        while (i < d && tok[i] != (size_t)b)
            i++;
        if (i == d)
            tok[d] = (size_t)b, cnt[d++] = 0;
        cnt[i]++;
    }
    size_t draws = 0;
    for (size_t i = 0; i < d; i++)
        draws += cnt[i];
    /* win[i] = P(a draw of token i holds the largest key), by a merge of the
     * tokens' pieces in bin order: inside bin b the CDF of token i's key is
     * A_i + a_i t (t the position in the bin), a polynomial integrand of
     * degree draws - 1, integrated exactly by Gauss-Legendre */
    double win[MDSD_OT_MAX_DRAFTS] = {0}, below[MDSD_OT_MAX_DRAFTS] = {0};
    size_t at[MDSD_OT_MAX_DRAFTS];
    for (size_t i = 0; i < d; i++)
        at[i] = pl->piece_start[tok[i]];
    gl_rule g;
    gl_rule_make(&g, draws ? draws - 1 : 0);
    for (;;) {
        uint32_t bin = UINT32_MAX;
        for (size_t i = 0; i < d; i++)
            if (at[i] < pl->piece_start[tok[i] + 1] && pl->piece_bin[at[i]] < bin)
                bin = pl->piece_bin[at[i]];
        if (bin == UINT32_MAX)
            break;
        double slope[MDSD_OT_MAX_DRAFTS];
        int dead = 0; /* a token with no mass at or below this bin: nobody wins here */
        for (size_t i = 0; i < d; i++) {
            double q = pl->len[tok[i]];
            int here = at[i] < pl->piece_start[tok[i] + 1] && pl->piece_bin[at[i]] == bin;
            slope[i] = here ? pl->piece_mass[at[i]] / q : 0.0;
            dead |= below[i] == 0.0 && slope[i] == 0.0;
        }
        for (size_t i = 0; !dead && i < d; i++) {
            if (slope[i] == 0.0)
                continue;
            double s = 0.0;
            for (size_t k = 0; k < g.N; k++) {
                double t = g.x[k], f = 1.0;
                for (size_t l = 0; l < d; l++) {
                    double F = below[l] + slope[l] * t;
                    size_t e = l == i ? cnt[l] - 1 : cnt[l];
                    for (size_t c = 0; c < e; c++)
                        f *= F;
                }
                s += g.w[k] * f;
            }
            win[i] += (double)cnt[i] * slope[i] * s;
        }
        for (size_t i = 0; i < d; i++)
            if (slope[i] > 0.0) {
                below[i] += slope[i];
                at[i]++;
            }
    }
    *reject = d == 0 ? 1.0 : 0.0;
    for (size_t i = 0; i < d; i++) {
        acc[i] = win[i] * pl->beta[tok[i]];
        *reject += win[i] * (1.0 - pl->beta[tok[i]]);
    }
    return d;
}

void mdsd_ot_plan_law(const mdsd_ot_plan *pl, const int *x, double *py)
{
    size_t tok[MDSD_OT_MAX_DRAFTS];
    double acc[MDSD_OT_MAX_DRAFTS], reject;
    size_t d = law_core(pl, x, tok, acc, &reject);
    for (size_t j = 0; j < pl->n; j++) {
        int32_t b = x[j] >= 0 && (size_t)x[j] < pl->V ? pl->bin_of[x[j]] : -1;
        double v = 0.0;
        for (size_t i = 0; i < d; i++)
            if (b >= 0 && tok[i] == (size_t)b)
                v = acc[i];
        if (reject > 0.0 && pl->residual_mass > 0.0 && x[j] >= 0 && (size_t)x[j] < pl->V)
            v += b >= 0 ? reject * pl->res_w[b] / pl->residual_mass : 0.0;
        py[j] = v;
    }
}

void mdsd_ot_plan_law_full(const mdsd_ot_plan *pl, const int *x, double *out)
{
    size_t tok[MDSD_OT_MAX_DRAFTS];
    double acc[MDSD_OT_MAX_DRAFTS], reject;
    size_t d = law_core(pl, x, tok, acc, &reject);
    for (size_t i = 0; i < pl->V; i++)
        out[pl->tok[i]] = reject > 0.0 && pl->residual_mass > 0.0
                              ? reject * pl->res_w[i] / pl->residual_mass
                              : 0.0;
    for (size_t i = 0; i < d; i++)
        out[pl->tok[tok[i]]] += acc[i];
}

/* ---- exact per-draft rates ---------------------------------------------- */

int mdsd_ot_plan_per_draft(const mdsd_ot_plan *pl, double *per_draft, mdsd_err *err)
{
    size_t n = pl->n;
    (void)err;
    gl_rule g;
    gl_rule_make(&g, n ? n - 1 : 0);
    mdsd_bsum sum[MDSD_OT_MAX_DRAFTS];
    for (size_t j = 0; j < n; j++)
        mdsd_bsum_init(&sum[j]);
    /* P(winner token y, first occurrence of y at draw j) = integral over the
     * winner's key u of (u - a)^j [u^(n-1-j) + (n-1-j) a u^(n-2-j)] m(y, b) dt
     * in bin b, with u = S_b + len(b) t and a = (y's mass below u) */
    for (size_t t = 0; t < pl->K; t++) {
        if (!(pl->beta[t] > 0.0))
            continue;
        double A = 0.0; /* y's mass below the current piece's bin */
        for (size_t i = pl->piece_start[t]; i < pl->piece_start[t + 1]; i++) {
            uint32_t b = pl->piece_bin[i];
            double m = pl->piece_mass[i], S = pl->pos[b], L = pl->len[b];
            double o0 = S - A, o1 = L - m; /* others' mass below u: o0 + o1 t */
            for (size_t k = 0; k < g.N; k++) {
                double tt = g.x[k];
                double u = S + L * tt, a = A + m * tt, o = o0 + o1 * tt;
                double wk = g.w[k] * m * pl->beta[t];
                double opow = 1.0;
                for (size_t j = 0; j < n; j++) {
                    size_t e = n - 1 - j;
                    double upow = 1.0;
                    for (size_t c = 0; c + 1 < e; c++)
                        upow *= u;
                    /* u^e + e a u^(e-1), with upow = u^(e-1) */
                    double bracket = e ? upow * (u + (double)e * a) : 1.0;
                    mdsd_bsum_add(&sum[j], wk * opow * bracket);
                    opow *= o;
                }
            }
            A += m;
        }
    }
    for (size_t j = 0; j < n; j++)
        per_draft[j] = mdsd_bsum_value(&sum[j]);
    return MDSD_OK;
}
