#include "wor_bucket.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

#include "simd.h"
#include "wor_chain.h"

/* Per bucket, one vector of 8: p mass, token count, the small tokens' q
 * mass and their sums of w^2..w^ROW_ORDER (w = q t_max). Small tokens whose
 * series needs more orders ("medium": w >= w_row) and the big ones are
 * listed too. */
#define ROW 8
#define ROW_ORDER 6
/* Tokens per vectorised step of the pass. */
#define CHUNK 256

/* Tests only (mdsd_wor_bucket_plant): the inside of the unsorted buckets
 * left unbounded, a planted error the comparisons must catch. */
static int plant_unbounded_inside;

void mdsd_wor_bucket_plant(int unbounded_inside)
{
    plant_unbounded_inside = unbounded_inside;
}

typedef struct {
    uint32_t key; /* its bucket, then its number among the used ones */
    uint32_t x;   /* token */
} listed_token;

struct mdsd_wor_buckets {
    size_t V;
    double *acc;           /* [(MDSD_QP_BUCKETS + 1) * ROW] per bucket (zero between calls) */
    uint32_t *uidx;        /* [MDSD_QP_BUCKETS + 1] used-bucket number of a bucket */
    /* the used buckets in scan order, u = 0..U-1 */
    size_t U, N;
    uint32_t *kid;         /* [V] bucket of u */
    size_t *pos;           /* [V + 1] scan position where u starts (pos[U] = N) */
    double *rows;          /* [(V + 1) * ROW] small q mass, w^2..w^ROW_ORDER before u */
    /* at the start of bucket u (u = U: the end): p and q mass of the prefix
     * (compensated), q mass of the rest; Ib = Pb + q(B) / r_hi(B) less a
     * rounding allowance, +inf once sorted (the bound of its inside) */
    double *Pb, *Sb, *Rb, *Ib; /* [V + 1] */
    size_t *off;           /* [V] where a sorted bucket's positions are in pP, pS, pR */
    size_t pool;           /* pool entries in use */
    double *pP, *pS, *pR;  /* [V] P, S, R inside the sorted buckets */
    size_t *sorted_list;   /* [V] the sorted buckets, in the order sorted */
    size_t n_sorted;
    size_t *nbig;          /* [V + 1] big tokens in the buckets before u */
    size_t *nmed;          /* [V + 1] medium tokens in the buckets before u */
    unsigned char *sorted; /* [V] bucket u's tokens are in o->order at pos[u] */
    listed_token *list;    /* the tokens with w >= w_row, by token */
    size_t n_list, list_cap;
    uint32_t *big;         /* the big tokens (q > thr) in the exact order */
    size_t n_big, big_cap;
    listed_token *med;     /* the medium tokens by bucket */
    size_t n_med, med_cap;
    double *ext;           /* [(n_med + 1) * ext_w]: their sums of w^(ROW_ORDER+1).. before each */
    unsigned char *ext_M;  /* [n_med + 1] the largest order in those sums */
    size_t ext_w, ext_cap, ext_M_cap;
    mdsd_wor_stack bb;     /* the branch and bound */
    double w_row;          /* smallest w whose series may need more than ROW_ORDER orders */
    /* the call's inputs */
    const double *p, *q;
    mdsd_qp_order *o;
    mdsd_wor_chain *c;
};

mdsd_wor_buckets *mdsd_wor_buckets_alloc(size_t V, mdsd_err *err)
{
    mdsd_wor_buckets *wb = calloc(1, sizeof *wb);
    size_t cap = V + 1;
    if (wb) {
        wb->V = V;
        /* rows on cache lines: one vector add each */
        size_t acc_bytes = (MDSD_QP_BUCKETS + 1) * ROW * sizeof *wb->acc;
        wb->acc = aligned_alloc(64, acc_bytes);
        if (wb->acc)
            memset(wb->acc, 0, acc_bytes);
        wb->uidx = malloc((MDSD_QP_BUCKETS + 1) * sizeof *wb->uidx);
        wb->kid = malloc(cap * sizeof *wb->kid);
        wb->pos = malloc((cap + 1) * sizeof *wb->pos);
        wb->rows = malloc((cap + 1) * ROW * sizeof *wb->rows);
        wb->Pb = malloc((cap + 1) * sizeof *wb->Pb);
        wb->Sb = malloc((cap + 1) * sizeof *wb->Sb);
        wb->Rb = malloc((cap + 1) * sizeof *wb->Rb);
        wb->Ib = malloc((cap + 1) * sizeof *wb->Ib);
        wb->off = malloc(cap * sizeof *wb->off);
        wb->pP = malloc(cap * sizeof *wb->pP);
        wb->pS = malloc(cap * sizeof *wb->pS);
        wb->pR = malloc(cap * sizeof *wb->pR);
        wb->sorted_list = malloc(cap * sizeof *wb->sorted_list);
        wb->nbig = malloc((cap + 1) * sizeof *wb->nbig);
        wb->nmed = malloc((cap + 1) * sizeof *wb->nmed);
        wb->sorted = malloc(cap);
    }
    if (!wb || !wb->acc || !wb->uidx || !wb->kid || !wb->pos || !wb->rows || !wb->Pb || !wb->Sb ||
        !wb->Rb || !wb->Ib || !wb->off || !wb->pP || !wb->pS || !wb->pR || !wb->sorted_list ||
        !wb->nbig || !wb->nmed || !wb->sorted) {
        mdsd_wor_buckets_free(wb);
        mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory for the buckets (V = %zu)", V);
        return NULL;
    }
    return wb;
}

void mdsd_wor_buckets_free(mdsd_wor_buckets *wb)
{
    if (!wb)
        return;
    free(wb->acc), free(wb->uidx), free(wb->kid), free(wb->pos), free(wb->rows);
    free(wb->Pb), free(wb->Sb), free(wb->Rb), free(wb->Ib), free(wb->off), free(wb->pP);
    free(wb->pS), free(wb->pR), free(wb->sorted_list), free(wb->nbig), free(wb->nmed);
    free(wb->sorted);
    free(wb->list), free(wb->big), free(wb->med);
    free(wb->ext), free(wb->ext_M), mdsd_wor_stack_free(&wb->bb);
    free(wb);
}

/* ---- set-up: the integration range ---------------------------------------- */

/* Over q[0..m): the largest value, and the sum in MDSD_LANES lanes added in
 * order (the same bits from every clone). */
MDSD_SIMD_CLONES static void chunk_max_sum(const double *q, size_t m, double *mx, double *sum)
{
    double l_max[MDSD_LANES] = {0}, l_sum[MDSD_LANES] = {0};
    size_t i = 0;
    for (; i + MDSD_LANES <= m; i += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double v = q[i + j];
            l_max[j] = v > l_max[j] ? v : l_max[j];
            l_sum[j] += v;
        }
    }
    for (size_t j = 0; i < m; i++, j++) {
        l_max[j] = q[i] > l_max[j] ? q[i] : l_max[j];
        l_sum[j] += q[i];
    }
    double a = 0.0, b = 0.0;
    for (size_t j = 0; j < MDSD_LANES; j++) {
        a = l_max[j] > a ? l_max[j] : a;
        b += l_sum[j];
    }
    *mx = a, *sum = b;
}

/* lambda = q mass outside the L = min(n - 1, 64) largest q (as
 * mdsd_wor_chain_set: the total less the top mass unless that is below 1e-6,
 * then the rest summed directly). Chunks whose largest q cannot enter the
 * top are skipped after one vector pass. */
static double mass_outside_top(const double *q, size_t V, size_t L)
{
    if (L == 0)
        return 1.0;
    L = L < 64 ? L : 64;
    double top[64], total = 0.0, tc = 0.0;
    size_t at[64], have = 0;
    for (size_t x0 = 0; x0 < V; x0 += CHUNK) {
        size_t m = V - x0 < CHUNK ? V - x0 : CHUNK;
        double mx, sum;
        chunk_max_sum(q + x0, m, &mx, &sum);
        MDSD_NEUMAIER_ADD(total, tc, sum);
        if (!(mx > 0.0) || (have == L && !(mx > top[L - 1])))
            continue;
        for (size_t x = x0; x < x0 + m; x++) {
            double v = q[x];
            if (!(v > 0.0) || (have == L && !(v > top[L - 1])))
                continue;
            size_t j = have < L ? have++ : L - 1;
            while (j > 0 && top[j - 1] < v) {
                top[j] = top[j - 1], at[j] = at[j - 1];
                j--;
            }
            top[j] = v, at[j] = x;
        }
    }
    double mtop = 0.0;
    for (size_t j = 0; j < have; j++)
        mtop += top[j];
    double lambda = (total + tc) - mtop;
    if (lambda < 1e-6) { /* far below 1e-16 possibly: sum the rest directly */
        double s = 0.0, comp = 0.0;
        for (size_t x = 0; x < V; x++) {
            bool is_top = false;
            for (size_t j = 0; j < have; j++)
                is_top |= at[j] == x;
            if (!is_top && q[x] > 0.0)
                MDSD_NEUMAIER_ADD(s, comp, q[x]);
        }
        lambda = s + comp;
    }
    return lambda;
}

/* ---- set-up: the buckets ------------------------------------------------------- */

/* buf[i] = (p, 1, x, w^2, .., w^ROW_ORDER) with x = q for the small tokens
 * (q <= thr), 0 for the big ones, w = x t_max. */
MDSD_SIMD_CLONES static void chunk_rows(const double *p, const double *q, size_t m, double thr,
                                        double t_max, double (*buf)[ROW])
{
#pragma omp simd
    for (size_t i = 0; i < m; i++) {
        double x = q[i];
        x = x > thr ? 0.0 : x;
        double w = x * t_max, w2 = w * w, w3 = w2 * w, w4 = w2 * w2;
        buf[i][0] = p[i], buf[i][1] = 1.0, buf[i][2] = x, buf[i][3] = w2;
        buf[i][4] = w3, buf[i][5] = w4, buf[i][6] = w4 * w, buf[i][7] = w4 * w2;
    }
}

/* acc[key[i]] += buf[i], a row of ROW doubles per token (one vector add). */
MDSD_SIMD_CLONES static void scatter_rows(double *acc, const uint32_t *key, size_t m,
                                          const double (*buf)[ROW])
{
    for (size_t i = 0; i < m; i++) {
        double *row = acc + (size_t)key[i] * ROW;
#pragma omp simd
        for (size_t r = 0; r < ROW; r++)
            row[r] += buf[i][r];
    }
}

/* acc[key[i]] += (p, 1, x, w^2, .., w^ROW_ORDER) for the m tokens of a chunk:
 * chunk_rows and scatter_rows, or on AVX-512 the same arithmetic fused (8
 * tokens' values, transposed in registers into their rows): the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
_Static_assert(ROW == 8, "the AVX-512 kernel transposes 8 x 8");

__attribute__((target("avx512f"))) static void rows_avx512(const double *p, const double *q,
                                                           const uint32_t *key, size_t m,
                                                           double thr, double t_max, double *acc)
{
    const __m512d vthr = _mm512_set1_pd(thr), vt = _mm512_set1_pd(t_max);
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= m; i += 8) {
        __m512d x = _mm512_loadu_pd(q + i);
        x = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, vthr, _CMP_GT_OQ), x, zero);
        __m512d w = _mm512_mul_pd(x, vt), w2 = _mm512_mul_pd(w, w), w3 = _mm512_mul_pd(w2, w);
        __m512d w4 = _mm512_mul_pd(w2, w2), w5 = _mm512_mul_pd(w4, w), w6 = _mm512_mul_pd(w4, w2);
        /* rows r = (p, 1, x, w2, w3, w4, w5, w6) -> token j's row = column j */
        __m512d a0 = _mm512_unpacklo_pd(_mm512_loadu_pd(p + i), one);
        __m512d b0 = _mm512_unpackhi_pd(_mm512_loadu_pd(p + i), one);
        __m512d a1 = _mm512_unpacklo_pd(x, w2), b1 = _mm512_unpackhi_pd(x, w2);
        __m512d a2 = _mm512_unpacklo_pd(w3, w4), b2 = _mm512_unpackhi_pd(w3, w4);
        __m512d a3 = _mm512_unpacklo_pd(w5, w6), b3 = _mm512_unpackhi_pd(w5, w6);
        __m512d c = _mm512_shuffle_f64x2(a0, a1, 0x88), d = _mm512_shuffle_f64x2(a2, a3, 0x88);
        __m512d e = _mm512_shuffle_f64x2(a0, a1, 0xdd), f = _mm512_shuffle_f64x2(a2, a3, 0xdd);
        __m512d g = _mm512_shuffle_f64x2(b0, b1, 0x88), h = _mm512_shuffle_f64x2(b2, b3, 0x88);
        __m512d k = _mm512_shuffle_f64x2(b0, b1, 0xdd), l = _mm512_shuffle_f64x2(b2, b3, 0xdd);
#define ADD_ROW(j, v)                                                      \
    do {                                                                   \
        double *row_ = acc + (size_t)key[i + (j)] * ROW;                   \
        _mm512_storeu_pd(row_, _mm512_add_pd(_mm512_loadu_pd(row_), (v))); \
    } while (0)
        ADD_ROW(0, _mm512_shuffle_f64x2(c, d, 0x88));
        ADD_ROW(1, _mm512_shuffle_f64x2(g, h, 0x88));
        ADD_ROW(2, _mm512_shuffle_f64x2(e, f, 0x88));
        ADD_ROW(3, _mm512_shuffle_f64x2(k, l, 0x88));
        ADD_ROW(4, _mm512_shuffle_f64x2(c, d, 0xdd));
        ADD_ROW(5, _mm512_shuffle_f64x2(g, h, 0xdd));
        ADD_ROW(6, _mm512_shuffle_f64x2(e, f, 0xdd));
        ADD_ROW(7, _mm512_shuffle_f64x2(k, l, 0xdd));
#undef ADD_ROW
    }
    for (; i < m; i++) {
        double x = q[i];
        x = x > thr ? 0.0 : x;
        double w = x * t_max, w2 = w * w, w3 = w2 * w, w4 = w2 * w2;
        double r[ROW] = {p[i], 1.0, x, w2, w3, w4, w4 * w, w4 * w2};
        double *row = acc + (size_t)key[i] * ROW;
        for (size_t j = 0; j < ROW; j++)
            row[j] += r[j];
    }
}

static int use_avx512(void)
{
    static _Atomic int use = -1; /* racing first calls store the same value */
    int u = atomic_load_explicit(&use, memory_order_relaxed);
    if (u < 0) {
        __builtin_cpu_init();
        u = __builtin_cpu_supports("avx512f") != 0;
        atomic_store_explicit(&use, u, memory_order_relaxed);
    }
    return u;
}
#else
static int use_avx512(void)
{
    return 0;
}
#define rows_avx512(p, q, key, m, thr, t_max, acc) ((void)0)
#endif

static void add_rows(const double *p, const double *q, const uint32_t *key, size_t m, double thr,
                     double t_max, double *acc, double (*buf)[ROW])
{
    if (use_avx512()) {
        rows_avx512(p, q, key, m, thr, t_max, acc);
        return;
    }
    chunk_rows(p, q, m, thr, t_max, buf);
    scatter_rows(acc, key, m, (const double (*)[ROW])buf);
}

/* One pass over the tokens: their buckets (qporder.h), each bucket's row
 * and list of tokens (o->next from its head, as mdsd_qp_bucket_fill), and
 * the tokens with w >= w_row listed. */
static int fill(mdsd_wor_buckets *wb, size_t V, mdsd_err *err)
{
    mdsd_qp_order *o = wb->o;
    int rc = mdsd_qp_bucket_reset(o, err);
    if (rc)
        return rc;
    const double *p = wb->p, *q = wb->q;
    double thr = wb->c->thr, t_max = wb->c->t_max, q_row = wb->w_row / t_max;
    double buf[CHUNK][ROW];
    uint32_t key[CHUNK], lo = MDSD_QP_BUCKETS, hi = 0;
    mdsd_qp_bucket *b = o->bucket;
    uint32_t *next = o->next;
    wb->n_list = 0;
    for (size_t x0 = 0; x0 < V; x0 += CHUNK) {
        size_t m = V - x0 < CHUNK ? V - x0 : CHUNK;
        mdsd_qp_bucket_keys(p + x0, q + x0, m, key, &lo, &hi);
        add_rows(p + x0, q + x0, key, m, thr, t_max, wb->acc, buf);
        const double *qc = q + x0;
        for (size_t i = 0; i < m; i++) {
            uint32_t x = (uint32_t)(x0 + i), *head = &b[key[i]].head;
            next[x] = *head; /* B->n is set from the row */
            *head = x;
            if (qc[i] >= q_row) {
                if (mdsd_wor_grow((void **)&wb->list, &wb->list_cap, wb->n_list + 1,
                                  sizeof *wb->list)) {
                    /* the bucket sums must be zero for the next call */
                    memset(wb->acc, 0, (MDSD_QP_BUCKETS + 1) * ROW * sizeof *wb->acc);
                    return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
                }
                wb->list[wb->n_list++] = (listed_token){key[i], x};
            }
        }
    }
    o->lo = lo, o->hi = hi;
    double *dummy = wb->acc + (size_t)MDSD_QP_BUCKETS * ROW; /* q = 0 */
    o->n_scan = V - (size_t)dummy[1];
    memset(dummy, 0, ROW * sizeof *dummy);
    for (uint32_t k = lo; k <= hi && lo <= hi; k++) {
        const double *row = wb->acc + (size_t)k * ROW;
        b[k].n = (uint32_t)row[1], b[k].p = row[0], b[k].q = row[2];
    }
    o->n_zero_p = lo == 0 ? b[0].n : 0;
    for (size_t i = 0; i < wb->n_list; i++) { /* the big tokens' q (not in the rows) */
        double x = q[wb->list[i].x];
        if (x > thr)
            b[wb->list[i].key].q += x;
    }
    return MDSD_OK;
}

/* The used buckets in scan order: numbers, starts, p and q mass at their
 * starts (compensated), the bound's terms, the rows before each (the
 * bucket rows cleared for the next call); the q mass of the rest. */
static void number_buckets(mdsd_wor_buckets *wb)
{
    const mdsd_qp_order *o = wb->o;
    size_t U = 0;
    double P = 0.0, Pc = 0.0, S = 0.0, Sc = 0.0, qs = 0.0, qc = 0.0;
    double *rows = wb->rows;
    memset(rows, 0, ROW * sizeof *rows);
    wb->pos[0] = 0;
    wb->Pb[0] = wb->Sb[0] = 0.0;
    for (uint32_t k = o->lo; k <= o->hi && o->lo <= o->hi; k++) {
        const mdsd_qp_bucket *B = o->bucket + k;
        double *row = wb->acc + (size_t)k * ROW;
        if (!B->n)
            continue;
        wb->uidx[k] = (uint32_t)U;
        wb->kid[U] = k;
        wb->sorted[U] = 0;
        wb->pos[U + 1] = wb->pos[U] + B->n;
        /* p over any part of B >= its q / r_hi (each token has q/p <= r_hi);
         * allowance: plain sums of B->n terms and the rounded q/p */
        double inner = B->q / mdsd_qp_bucket_ratio_hi(k);
        double slack = ((double)B->n + 4.0) * DBL_EPSILON * (B->p + inner);
        wb->Ib[U] = plant_unbounded_inside ? INFINITY : (P + Pc) + inner - slack;
        MDSD_NEUMAIER_ADD(P, Pc, B->p);
        MDSD_NEUMAIER_ADD(S, Sc, B->q);
        wb->Pb[U + 1] = P + Pc;
        wb->Sb[U + 1] = S + Sc;
        double *prev = rows + U * ROW, *next = prev + ROW;
        MDSD_NEUMAIER_ADD(qs, qc, row[2]);
        next[0] = qs + qc;
        for (size_t r = 1; r < ROW; r++) /* w^2.. at next[1..] */
            next[r] = r <= ROW_ORDER - 1 ? prev[r] + row[r + 2] : 0.0;
        memset(row, 0, ROW * sizeof *row);
        U++;
    }
    wb->U = U;
    wb->N = wb->pos[U];
    wb->n_sorted = wb->pool = 0;
    wb->Ib[U] = INFINITY;
    double R = 0.0, Rc = 0.0;
    wb->Rb[U] = 0.0;
    for (size_t u = U; u-- > 0;) {
        MDSD_NEUMAIER_ADD(R, Rc, o->bucket[wb->kid[u]].q);
        wb->Rb[u] = R + Rc;
    }
}

/* p and q mass of the prefix of length i (a usable position), q mass of the rest. */
typedef struct {
    double P, S, R;
} masses;

/* Exact order of two big tokens: bucket, then q/p decreasing, then index. */
static bool big_before(const mdsd_wor_buckets *wb, const listed_token *x, const listed_token *y)
{
    if (x->key != y->key)
        return x->key < y->key;
    if (x->key != 0) {
        double rx = wb->q[x->x] / wb->p[x->x], ry = wb->q[y->x] / wb->p[y->x];
        if (rx != ry)
            return rx > ry;
    }
    return x->x < y->x;
}

/* The listed tokens sorted out: the big ones in the exact order with their
 * node tables, the medium ones by bucket with the prefix sums of their
 * orders above ROW_ORDER; how many of each lie before every bucket. */
static int listed(mdsd_wor_buckets *wb, mdsd_err *err)
{
    mdsd_wor_chain *c = wb->c;
    size_t nb = 0, nm = 0, U = wb->U;
    for (size_t i = 0; i < wb->n_list; i++)
        if (wb->q[wb->list[i].x] > c->thr)
            nb++;
        else
            nm++;
    if (mdsd_wor_grow((void **)&wb->big, &wb->big_cap, nb + 1, sizeof *wb->big) ||
        mdsd_wor_grow((void **)&wb->med, &wb->med_cap, nm + 1, sizeof *wb->med))
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    /* big: insertion sort (few); medium: counting sort by bucket */
    listed_token bigs[64], *bl = nb <= 64 ? bigs : malloc(nb * sizeof *bl);
    if (!bl)
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    memset(wb->nmed, 0, (U + 1) * sizeof *wb->nmed);
    memset(wb->nbig, 0, (U + 1) * sizeof *wb->nbig);
    size_t k = 0;
    for (size_t i = 0; i < wb->n_list; i++) {
        listed_token t = {wb->uidx[wb->list[i].key], wb->list[i].x};
        if (wb->q[t.x] > c->thr) {
            size_t j = k++;
            for (; j > 0 && big_before(wb, &wb->list[i], &bl[j - 1]); j--)
                bl[j] = bl[j - 1];
            bl[j] = wb->list[i];
            wb->nbig[t.key + 1]++;
        } else
            wb->nmed[t.key + 1]++;
    }
    for (size_t u = 0; u < U; u++)
        wb->nbig[u + 1] += wb->nbig[u], wb->nmed[u + 1] += wb->nmed[u];
    for (size_t i = 0; i < wb->n_list; i++) {
        listed_token t = {wb->uidx[wb->list[i].key], wb->list[i].x};
        if (!(wb->q[t.x] > c->thr))
            wb->med[wb->nmed[t.key]++] = t; /* nmed[u] moves to the start of u + 1 */
    }
    for (size_t u = U; u > 0; u--)
        wb->nmed[u] = wb->nmed[u - 1];
    wb->nmed[0] = 0;
    int rc = MDSD_OK;
    for (size_t i = 0; i < nb && rc == MDSD_OK; i++) {
        wb->big[i] = bl[i].x;
        rc = mdsd_wor_add_big(c, i, wb->q[bl[i].x], err);
    }
    if (bl != bigs)
        free(bl);
    wb->n_big = nb, wb->n_med = nm;
    if (rc)
        return rc;
    /* prefix sums of w^(ROW_ORDER+1)..w^m over the medium tokens in order */
    unsigned Mmax = ROW_ORDER;
    for (size_t i = 0; i < nm; i++) {
        unsigned m = mdsd_wor_order_for(c, wb->q[wb->med[i].x] * c->t_max);
        Mmax = m > Mmax ? m : Mmax;
    }
    size_t w = Mmax - ROW_ORDER + 1; /* slot 0 unused: orders ROW_ORDER+1.. at 1.. */
    if (mdsd_wor_grow((void **)&wb->ext, &wb->ext_cap, (nm + 1) * w, sizeof *wb->ext) ||
        mdsd_wor_grow((void **)&wb->ext_M, &wb->ext_M_cap, nm + 1, 1))
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    wb->ext_w = w;
    memset(wb->ext, 0, w * sizeof *wb->ext);
    wb->ext_M[0] = ROW_ORDER;
    for (size_t i = 0; i < nm; i++) {
        const double *prev = wb->ext + i * w;
        double *next = wb->ext + (i + 1) * w, x = wb->q[wb->med[i].x] * c->t_max, pw = x;
        unsigned m = mdsd_wor_order_for(c, x);
        for (unsigned o = 2; o <= ROW_ORDER; o++)
            pw *= x;
        for (size_t o = 0; o < w; o++)
            next[o] = prev[o];
        for (unsigned o = ROW_ORDER + 1; o <= m; o++) {
            pw *= x;
            next[o - ROW_ORDER] += pw;
        }
        wb->ext_M[i + 1] = (unsigned char)(m > wb->ext_M[i] ? m : wb->ext_M[i]);
    }
    return MDSD_OK;
}

/* ---- positions ------------------------------------------------------------ */

/* The bucket holding scan position i < N. */
static size_t bucket_at(const mdsd_wor_buckets *wb, size_t i)
{
    size_t lo = 0, hi = wb->U - 1; /* largest u with pos[u] <= i */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (wb->pos[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Puts bucket u in the exact order and fills P, S, R inside it. */
static void sort_bucket(mdsd_wor_buckets *wb, size_t u)
{
    size_t a = wb->pos[u], e = wb->pos[u + 1];
    uint32_t *tok = wb->o->order + a;
    mdsd_qp_bucket_sort_one(wb->o, wb->p, wb->q, wb->kid[u], tok);
    /* positions a + 1 .. e - 1 at pool entries off .. off + e - a - 2 */
    size_t off = wb->off[u] = wb->pool;
    wb->pool += e - a - 1;
    double P = wb->Pb[u], Pc = 0.0, S = wb->Sb[u], Sc = 0.0, R = wb->Rb[u + 1], Rc = 0.0;
    for (size_t i = a + 1; i < e; i++) {
        MDSD_NEUMAIER_ADD(P, Pc, wb->p[tok[i - a - 1]]);
        MDSD_NEUMAIER_ADD(S, Sc, wb->q[tok[i - a - 1]]);
        wb->pP[off + i - a - 1] = P + Pc;
        wb->pS[off + i - a - 1] = S + Sc;
    }
    for (size_t i = e - 1; i > a; i--) {
        MDSD_NEUMAIER_ADD(R, Rc, wb->q[tok[i - a]]);
        wb->pR[off + i - a - 1] = R + Rc;
    }
    wb->sorted[u] = 1;
    wb->Ib[u] = INFINITY; /* its positions are bounded one by one */
    wb->sorted_list[wb->n_sorted++] = u;
}

/* The masses at position i: a bucket start (or N), or inside a sorted bucket. */
static masses at(const mdsd_wor_buckets *wb, size_t i)
{
    if (i >= wb->N)
        return (masses){wb->Pb[wb->U], wb->Sb[wb->U], 0.0};
    size_t u = bucket_at(wb, i);
    if (i == wb->pos[u])
        return (masses){wb->Pb[u], wb->Sb[u], wb->Rb[u]};
    size_t k = wb->off[u] + (i - wb->pos[u] - 1);
    return (masses){wb->pP[k], wb->pS[k], wb->pR[k]};
}

/* Makes scan position i usable (a bucket start, or inside a sorted bucket). */
static void reach(mdsd_wor_buckets *wb, size_t i)
{
    if (i >= wb->N)
        return;
    size_t u = bucket_at(wb, i);
    if (i != wb->pos[u] && !wb->sorted[u])
        sort_bucket(wb, u);
}

/* Q(H_i) for a usable position i; *ok = 0 where the quadrature's checks fail. */
static double Q_at(mdsd_wor_buckets *wb, size_t i, int *ok)
{
    mdsd_wor_chain *c = wb->c;
    *ok = 1;
    if (i < c->n)
        return 0.0;
    if (i >= wb->N)
        return 1.0;
    size_t u = bucket_at(wb, i), j = i - wb->pos[u], nbH = wb->nbig[u], km = wb->nmed[u];
    double Sh[MAX_ORDER + 1] = {0}, qs = wb->rows[u * ROW];
    for (size_t r = 2; r <= ROW_ORDER; r++)
        Sh[r] = wb->rows[u * ROW + r - 1];
    unsigned M = wb->ext_M[km];
    const double *ext = wb->ext + km * wb->ext_w;
    for (unsigned o = ROW_ORDER + 1; o <= M; o++)
        Sh[o] = ext[o - ROW_ORDER];
    const uint32_t *tok = wb->o->order + wb->pos[u];
    double part = 0.0;
    for (size_t k = 0; k < j; k++) {
        double x = wb->q[tok[k]];
        if (x > c->thr) {
            nbH++;
            continue;
        }
        double w = x * c->t_max;
        unsigned m = mdsd_wor_order_for(c, w);
        M = m > M ? m : M;
        mdsd_wor_add_powers(Sh, w, m);
        part += x;
    }
    qs += part;
    Sh[1] = qs * c->t_max;
    double r = j ? wb->pR[wb->off[u] + j - 1] : wb->Rb[u];
    double tail, v = mdsd_wor_quad(c, Sh, M, qs, r, nbH, &tail);
    if (!mdsd_wor_quad_ok(v, tail)) {
        *ok = 0;
        return 0.0;
    }
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* q mass between positions a < i with masses ma, mi (as mdsd_wor_chain_min's
 * mass_between). */
static inline double mass_between(masses ma, masses mi)
{
    return ma.R <= 0.5 ? ma.R - mi.R : mi.S - ma.S;
}

typedef struct {
    double lb;     /* lower bound of p(H_i) - Q(H_i) over a < i < b */
    size_t at;     /* where: a position, or */
    size_t bucket; /* the inside of this unsorted bucket (at = SIZE_MAX) */
} interval_bound;

/* min over u < m of (Pe[u] - slope m_u) and (Ib[u] - slope m_u), m_u the q
 * mass from a to the end of bucket u: from the suffix masses R (mR = 1,
 * m_u = Ra - Re[u]) or the prefix masses S (m_u = Se[u] - Sa); branch-free
 * over MDSD_LANES lanes (min is exact: the same value from every clone). */
MDSD_SIMD_CLONES static double buckets_min(const double *Pe, const double *Ib, const double *Me,
                                           size_t m, double slope, double base, double sign)
{
    double l[MDSD_LANES];
    for (size_t j = 0; j < MDSD_LANES; j++)
        l[j] = INFINITY;
    size_t u = 0;
    for (; u + MDSD_LANES <= m; u += MDSD_LANES) {
#pragma omp simd
        for (size_t j = 0; j < MDSD_LANES; j++) {
            double ch = slope * (sign * (Me[u + j] - base));
            double v = (Pe[u + j] < Ib[u + j] ? Pe[u + j] : Ib[u + j]) - ch;
            l[j] = v < l[j] ? v : l[j];
        }
    }
    for (size_t j = 0; u < m; u++, j++) {
        double ch = slope * (sign * (Me[u] - base));
        double v = (Pe[u] < Ib[u] ? Pe[u] : Ib[u]) - ch;
        l[j] = v < l[j] ? v : l[j];
    }
    double r = INFINITY;
    for (size_t j = 0; j < MDSD_LANES; j++)
        r = l[j] < r ? l[j] : r;
    return r;
}

/* Lower bound over (a, b) from the chord of Q (q-convexity) and, inside an
 * unsorted bucket, p's growth of at least q / r_hi (wor_bucket.h); with
 * want_at, where it is attained. */
static interval_bound bound_between(const mdsd_wor_buckets *wb, size_t a, size_t b, double Qa,
                                    double Qb, double prune)
{
    interval_bound ib = {INFINITY, a + 1, 0};
    masses ma = at(wb, a);
    double span = mass_between(ma, at(wb, b));
    if (!(span > 0.0)) { /* masses below rounding: only Q <= Q(H_b) */
        ib.lb = ma.P - Qb;
        ib.at = a + (b - a) / 2;
        return ib;
    }
    double slope = (Qb - Qa) / span;
    bool useR = ma.R <= 0.5; /* as mass_between */
    const double *Me = useR ? wb->Rb + 1 : wb->Sb + 1; /* at the ends of the buckets */
    double base = useR ? ma.R : ma.S, sign = useR ? -1.0 : 1.0;
    /* whole buckets ua..ue-1 (their ends are inside (a, b)); the last one,
     * ue, ends at b (only its inside) or holds b (then it is sorted) */
    size_t ua = bucket_at(wb, a), ue = bucket_at(wb, b - 1);
    double v = buckets_min(wb->Pb + 1 + ua, wb->Ib + ua, Me + ua, ue - ua, slope, base, sign) - Qa;
    double last = wb->Ib[ue] - (Qa + slope * (sign * (Me[ue] - base)));
    ib.lb = v < last ? v : last;
    for (size_t k = 0; k < wb->n_sorted; k++) { /* token by token */
        size_t u = wb->sorted_list[k], s = wb->pos[u], e = wb->pos[u + 1];
        if (e <= a || s >= b)
            continue;
        size_t i0 = s + 1 > a + 1 ? s + 1 : a + 1, i1 = e < b - 1 ? e : b - 1;
        /* P - chord along the bucket's order changes by p(x) - slope q(x)
         * per token, nondecreasing (p/q never decreases): its minimum is
         * before the first positive step, found by bisection */
        const uint32_t *tok = wb->o->order;
        size_t l = i0, h = i1 + 1;
        while (l < h) {
            size_t mid = l + (h - l) / 2;
            uint32_t x = tok[mid - 1];
            if (wb->p[x] - slope * wb->q[x] > 0.0)
                h = mid;
            else
                l = mid + 1;
        }
        size_t j = l > i0 ? l - 1 : i0;
        masses mj = at(wb, j);
        double t = mj.P - (Qa + slope * mass_between(ma, mj));
        if (t < ib.lb)
            ib.lb = t, ib.at = j;
    }
    if (!(ib.lb < prune) || ib.lb < (v < last ? v : last)) /* pruned, or a token's */
        return ib;
    /* where: the first bucket attaining the minimum (same arithmetic) */
    if (last <= v) {
        ib.at = SIZE_MAX, ib.bucket = ue;
        return ib;
    }
    for (size_t u = ua; u < ue; u++) {
        double ch = slope * (sign * (Me[u] - base));
        if (wb->Pb[u + 1] - ch - Qa == v) {
            ib.at = wb->pos[u + 1];
            return ib;
        }
        if (wb->Ib[u] - ch - Qa == v) {
            ib.at = SIZE_MAX, ib.bucket = u;
            return ib;
        }
    }
    return ib;
}

/* A usable position near x in (a, b): x itself, else the nearer start of
 * its bucket or the next inside (a, b), else x with its bucket sorted. */
static size_t snap(mdsd_wor_buckets *wb, size_t x, size_t a, size_t b)
{
    size_t u = bucket_at(wb, x), s = wb->pos[u], e = wb->pos[u + 1];
    if (x == s || wb->sorted[u])
        return x;
    bool s_in = s > a, e_in = e < b;
    if (s_in && (!e_in || x - s <= e - x))
        return s;
    if (e_in)
        return e;
    sort_bucket(wb, u);
    return x;
}

/* The split point of (a, b) given its bound: the bound's minimiser (an end
 * of its bucket where it lies inside an unsorted one), moved to the middle
 * when within an eighth of an end (as mdsd_wor_chain_min); SIZE_MAX when the
 * bucket holding the minimiser spans (a, b) (it is sorted: bound again). */
static size_t split_at(mdsd_wor_buckets *wb, const interval_bound *ib, size_t a, size_t b)
{
    size_t m = ib->at;
    if (m == SIZE_MAX) { /* inside an unsorted bucket: sort it, bound again */
        sort_bucket(wb, ib->bucket);
        return SIZE_MAX;
    }
    m = snap(wb, m, a, b);
    size_t span = b - a;
    if (m - a < span / 8 || b - m < span / 8)
        m = snap(wb, a + span / 2, a, b);
    return m;
}

/* The branch and bound of mdsd_wor_chain_min over the usable positions. */
static int search(mdsd_wor_buckets *wb, double tol, double *fmin, size_t *argmin,
                  size_t *evaluations, bool *fallback, mdsd_err *err)
{
    size_t n = wb->c->n, N = wb->N, evals = 1;
    mdsd_wor_stack *st = &wb->bb;
    st->top = 0;
    double best = 0.0; /* the empty set */
    size_t best_i = 0;
    int ok;
    reach(wb, n);
    double Qlo = Q_at(wb, n, &ok);
    if (!ok) {
        *fallback = true;
        return MDSD_OK;
    }
    if (at(wb, n).P - Qlo < best)
        best = at(wb, n).P - Qlo, best_i = n;
    if (wb->Pb[wb->U] - 1.0 < best)
        best = wb->Pb[wb->U] - 1.0, best_i = N;
    if (mdsd_wor_stack_push(st, n, N, Qlo, 1.0))
        return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    size_t a, b;
    double Qa, Qb;
    while (mdsd_wor_stack_pop(st, &a, &b, &Qa, &Qb)) {
        if (b - a < 2)
            continue;
        interval_bound ib = bound_between(wb, a, b, Qa, Qb, best - tol);
        if (ib.lb >= best - tol)
            continue;
        size_t m = split_at(wb, &ib, a, b);
        if (m == SIZE_MAX) { /* its bucket is sorted now: bound again */
            if (mdsd_wor_stack_push(st, a, b, Qa, Qb))
                return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
            continue;
        }
        double Qm = Q_at(wb, m, &ok);
        if (!ok) {
            *fallback = true;
            return MDSD_OK;
        }
        evals++;
        double Pm = at(wb, m).P;
        if (Pm - Qm < best)
            best = Pm - Qm, best_i = m;
        size_t j = ib.at == SIZE_MAX ? wb->pos[ib.bucket] : ib.at;
        int fail = j < m ? mdsd_wor_stack_push(st, m, b, Qm, Qb) ||
                               mdsd_wor_stack_push(st, a, m, Qa, Qm)
                         : mdsd_wor_stack_push(st, a, m, Qa, Qm) ||
                               mdsd_wor_stack_push(st, m, b, Qm, Qb);
        if (fail)
            return mdsd_fail(err, MDSD_ENOMEM, "wor: out of memory");
    }
    *fmin = best;
    *argmin = best_i;
    *evaluations = evals;
    return MDSD_OK;
}

/* H = the prefix of length i of the exact order. */
static void prefix_subset(const mdsd_wor_buckets *wb, size_t i, size_t V, unsigned char *H)
{
    uint32_t k_end = i >= wb->N ? MDSD_QP_BUCKETS : wb->kid[bucket_at(wb, i)];
    for (size_t x = 0; x < V; x++)
        H[x] = wb->q[x] > 0.0 && mdsd_qp_bucket_of(wb->p[x], wb->q[x]) < k_end;
    if (i < wb->N) {
        size_t u = bucket_at(wb, i);
        for (size_t k = wb->pos[u]; k < i; k++)
            H[wb->o->order[k]] = 1;
    }
}

/* Smallest w (a power of two times rho) from which a token's series may
 * need more than ROW_ORDER orders (as w_fixed of wor_q.c for FIXED_ORDER). */
static double row_limit(const mdsd_wor_chain *c)
{
    int e = 0;
    while (e + 1 < EXPONENTS && c->order_of[e] > ROW_ORDER)
        e++;
    return ldexp(c->rho, -e);
}

int mdsd_wor_bucket_min(mdsd_wor_buckets *wb, mdsd_wor_chain *c, mdsd_qp_order *o,
                        const double *p, const double *q, size_t V, double tol, double *fmin,
                        unsigned char *H, size_t *evaluations, bool *fallback, mdsd_err *err)
{
    *fallback = false;
    wb->p = p, wb->q = q, wb->o = o, wb->c = c;
    double t_max, lambda = mass_outside_top(q, V, c->L);
    mdsd_err quiet;
    if (c->n < 3 || mdsd_wor_range(c, lambda, &t_max, &quiet)) { /* the full route says why */
        *fallback = true;
        return MDSD_OK;
    }
    wb->w_row = row_limit(c);
    int rc = mdsd_wor_nodes(c, t_max, true, err);
    if (rc == MDSD_OK)
        rc = fill(wb, V, err);
    if (rc)
        return rc;
    number_buckets(wb);
    if (wb->N < c->n) {
        *fallback = true;
        return MDSD_OK;
    }
    if ((rc = listed(wb, err)))
        return rc;
    size_t argmin = 0;
    rc = search(wb, tol, fmin, &argmin, evaluations, fallback, err);
    if (rc == MDSD_OK && !*fallback && H)
        prefix_subset(wb, argmin, V, H);
    return rc;
}
