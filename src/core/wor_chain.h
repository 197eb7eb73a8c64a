/* wor_chain.h - the inside of wor_q.c's workspace, for the routes that run
 * its quadrature along orders other than a chain (wor_bucket.c). Internal. */
#ifndef MDSD_WOR_CHAIN_H
#define MDSD_WOR_CHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "wor_q.h"

/* Gauss-Legendre nodes per panel. On a panel [T, 2T] every exponential that
 * still matters has rate a with a T <= 37, and the error of G-point
 * Gauss-Legendre on e^{-a t} is about e^{-aT} (aT/4)^{2G} / (2G)!, at most
 * 3e-16 over aT for G = 12; 14 leaves a margin for the polynomial factors. */
#define GL_POINTS 14
/* t_max >= RANGE / lambda: the integrand is below e^{-RANGE} times
 * combinatorial factors there; the tail is checked on every evaluation. */
#define RANGE 64.0
#define TAIL_TOL 1e-16
/* A token's power series stops where its tail is below this fraction of the
 * token's own first-order size. */
#define SERIES_TOL 1e-17
#define MAX_ORDER 64
/* Series orders every small token gets in registers (see scan_setup). */
#define FIXED_ORDER 8
#define BLOCK 64
#define EXPONENTS 90
#define MAX_RESTARTS 6
/* Quadrature nodes evaluated together (vector lanes over the nodes). */
#define NODE_CHUNK 64

/* The branch and bound's open intervals (a, b) of prefix lengths, with Q at
 * both ends (the chain's and the buckets' searches). */
typedef struct {
    size_t *ab; /* [2 cap] */
    double *Q;  /* [2 cap] */
    size_t cap, top;
} mdsd_wor_stack;

struct mdsd_wor_chain {
    size_t cap_V, n, L;          /* L = n - 1: counts j < n matter */
    size_t n_cap;                /* n the small tables are sized for */
    double rho, inv_rho;         /* small tokens: q t_max <= rho */
    double w_fixed;              /* largest w whose series needs <= FIXED_ORDER terms */
    /* the chain */
    const double *q;
    const uint32_t *chain;
    size_t N;
    double *S;                   /* [N+1] q mass of prefixes */
    double *R;                   /* [N+1] q mass of suffixes (r of H_i) */
    double *P;                   /* [N+1] target mass of prefixes (chain_min) */
    double lambda;
    /* set-up for one t_max */
    double t_max, thr;
    bool vector_exp;             /* see mdsd_wor_nodes */
    size_t K, node_cap;
    double *t, *w, *tau;         /* [K] nodes, weights, t / t_max */
    size_t nb, big_cap, table_cap;
    size_t *big_pos;             /* [nb] chain positions of the big tokens, increasing */
    double *big_q;
    double *ebig, *bbig;         /* [nb * K]: e^{-q t}, 1 - e^{-q t} */
    unsigned char order_of[EXPONENTS]; /* series order by binary exponent of w */
    double *blk;                 /* [(N/BLOCK + 1) * (MAX_ORDER + 1)]: sums of w^m before block */
    double *blk_qs;              /* [N/BLOCK + 1] small-token q mass before block */
    unsigned char *blk_M;        /* [N/BLOCK + 1] largest order used before block */
    double *a;                   /* [(L+1) * (MAX_ORDER + 1)]: a_{l,m} = [z^m](e^z - 1)^l */
    double gl_x[GL_POINTS], gl_w[GL_POINTS]; /* Gauss-Legendre on [0, 1] */
    /* evaluation scratch */
    double *Shat, *coef, *pi, *Pl;
    mdsd_wor_stack bb;           /* branch and bound */
};

/* ---- shared with wor_bucket.c ---------------------------------------- */

/* Series order of a small token with w = q t_max in (0, rho], from the
 * binary exponent of w / rho (no frexp: the bits directly). */
static inline unsigned mdsd_wor_order_for(const mdsd_wor_chain *c, double w)
{
    double u = w * c->inv_rho;
    uint64_t bits;
    memcpy(&bits, &u, sizeof bits);
    int idx = 1022 - (int)((bits >> 52) & 0x7ff); /* u in [2^{-idx-1}, 2^{-idx}) */
    if (idx < 0)
        idx = 0;
    if (idx >= EXPONENTS)
        idx = EXPONENTS - 1;
    return c->order_of[idx];
}

/* Adds w^1..w^m to acc[1..m]. */
static inline void mdsd_wor_add_powers(double *acc, double w, unsigned m)
{
    double x = w;
    for (unsigned j = 1; j <= m; j++) {
        acc[j] += x;
        x *= w;
    }
}

/* Grows *ptr to hold want elements (doubling); -1 when out of memory. */
int mdsd_wor_grow(void **ptr, size_t *cap, size_t want, size_t elem);

/* Pushes (a, b, Q(a), Q(b)); -1 when out of memory. */
int mdsd_wor_stack_push(mdsd_wor_stack *s, size_t a, size_t b, double Qa, double Qb);

/* Pops the last interval pushed; 0 when there is none. */
static inline int mdsd_wor_stack_pop(mdsd_wor_stack *s, size_t *a, size_t *b, double *Qa,
                                     double *Qb)
{
    if (s->top == 0)
        return 0;
    s->top--;
    *a = s->ab[2 * s->top], *b = s->ab[2 * s->top + 1];
    *Qa = s->Q[2 * s->top], *Qb = s->Q[2 * s->top + 1];
    return 1;
}

void mdsd_wor_stack_free(mdsd_wor_stack *s);

/* t_max = max(4, RANGE / lambda) for lambda = the q mass outside the n - 1
 * largest tokens; refuses (naming the problem) where lambda is not positive
 * or too small for the quadrature's range. */
int mdsd_wor_range(const mdsd_wor_chain *c, double lambda, double *t_max, mdsd_err *err);

/* The quadrature nodes for t_max and thr = rho / t_max; clears the big
 * tokens. vector_exp: the node tables' exponentials by mdsd_exp_nonpos
 * (vexp.h, within an ulp or so of libm's, vectorised) instead of libm's exp
 * and expm1, which the chain route keeps (its values stay the same bits). */
int mdsd_wor_nodes(mdsd_wor_chain *c, double t_max, bool vector_exp, mdsd_err *err);

/* Appends a big token (q > thr) at scan position pos: its e^{-q t} and
 * 1 - e^{-q t} at every node. The big tokens of a prefix must be the first
 * ones appended. */
int mdsd_wor_add_big(mdsd_wor_chain *c, size_t pos, double x, mdsd_err *err);

/* One quadrature of Q(H) from its small tokens' power sums Sh[2..M] with
 * Sh[1] = qs t_max (qs their q mass), r = q(H^c) and the first nbH big
 * tokens; *tail receives e^{-r t} R(t) at the last node. */
double mdsd_wor_quad(mdsd_wor_chain *c, const double *Sh, unsigned M, double qs, double r,
                     size_t nbH, double *tail);

/* Whether a quadrature's value and tail pass the checks of mdsd_wor_chain_Q. */
static inline int mdsd_wor_quad_ok(double v, double tail)
{
    return tail <= TAIL_TOL && v >= -1e-12 && v <= 1.0 + 1e-12 && v == v;
}

#endif
