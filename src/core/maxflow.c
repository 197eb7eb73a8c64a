/* maxflow.c - alpha*(p, D) as the maximum flow of maxflow.h: push-relabel
 * (Goldberg and Tarjan 1988; highest-label selection, global relabels and the
 * gap heuristic as in Cherkassky and Goldberg's hi_pr, after a greedy start),
 * first phase only: a maximum preflow already gives the minimum cut, which is
 * all alpha* needs. On a multi-drafter law at V = 1,000, n = 2 (500,500 sets)
 * the greedy start and the gap heuristic took the flow from 12.7 M relabels
 * and 323 global relabels (4.2 s for the whole call) to 0.19 M and 4 (0.27 s).
 *
 * Nodes: sets 0..K-1, tokens K..K+V-1; the source and the sink are implicit
 * (every source arc is saturated at the start and never needs to be
 * undone; a token's arc to the sink is its residual r[y]). Set -> token arcs
 * are unbounded, so a set pushes its whole excess at once, and the residual
 * of token -> set is the flow f[m] on membership m.
 *
 * Floating point: every push either empties the excess or saturates the arc,
 * and both are then set to exactly 0, so the combinatorial bounds on the
 * number of pushes and relabels hold as in exact arithmetic; rounding only
 * moves flow conservation by about 1e-16 per push, which the certificate
 * (maxflow.h) bounds. Labels: a node that can reach the sink does so through
 * distinct tokens, at distance <= 2V, so any label >= 2V + 1 means "cannot"
 * (the node is dead: its excess stays and it is on the source side). */
#include "maxflow.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"

#define NIL UINT32_MAX

typedef struct {
    size_t K, V, N, M;
    const size_t *start;  /* set k: memberships start[k] .. start[k+1] */
    const int *members;   /* token of membership m */
    const double *p;
    uint32_t dead;        /* label meaning "cannot reach the sink" */
    double *ex;           /* [N] excess */
    double *f;            /* [M] flow set -> token on membership m */
    double *r;            /* [V] residual of token -> sink */
    uint32_t *lab;        /* [N] distance labels */
    uint32_t *nxt;        /* [N] next node in the same active bucket */
    uint32_t *cur;        /* [N] current arc */
    uint32_t *head;       /* [dead] active bucket heads */
    uint32_t *tstart;     /* [V+1] token y: arcs tstart[y] .. tstart[y+1] */
    uint32_t *tset;       /* [M] set of the token's arc */
    uint32_t *tmem;       /* [M] membership of the token's arc */
    uint32_t *queue;      /* [N] BFS queue */
    uint32_t *lhead;      /* [dead] every live node by label: list heads */
    uint32_t *lnext, *lprev; /* [N] the doubly linked lists */
    uint32_t lmax;        /* highest label whose list may be non-empty */
    uint32_t amax;        /* highest bucket that may be non-empty */
    size_t work, pushes, relabels, globals, gaps;
} flow_net;

static void list_link(flow_net *g, uint32_t u, uint32_t d)
{
    g->lprev[u] = NIL;
    g->lnext[u] = g->lhead[d];
    if (g->lhead[d] != NIL)
        g->lprev[g->lhead[d]] = u;
    g->lhead[d] = u;
    if (d > g->lmax)
        g->lmax = d;
}

static void list_unlink(flow_net *g, uint32_t u, uint32_t d)
{
    if (g->lprev[u] != NIL)
        g->lnext[g->lprev[u]] = g->lnext[u];
    else
        g->lhead[d] = g->lnext[u];
    if (g->lnext[u] != NIL)
        g->lprev[g->lnext[u]] = g->lprev[u];
}

static void activate(flow_net *g, uint32_t u)
{
    uint32_t d = g->lab[u];
    g->nxt[u] = g->head[d];
    g->head[d] = u;
    if (d > g->amax)
        g->amax = d;
}

/* Moves delta of excess to node w, activating it if it had none. */
static void receive(flow_net *g, uint32_t w, double delta)
{
    bool was_idle = !(g->ex[w] > 0.0);
    g->ex[w] += delta;
    if (was_idle && g->lab[w] < g->dead)
        activate(g, w);
    g->pushes++;
}

/* Exact distances to the sink in the residual graph by a backward BFS from
 * the sink; nodes it does not reach get the dead label. With buckets, the
 * active nodes are then filed again. */
static void global_relabel(flow_net *g, bool buckets)
{
    size_t K = g->K, V = g->V, qh = 0, qt = 0;
    for (size_t u = 0; u < g->N; u++)
        g->lab[u] = g->dead;
    for (size_t y = 0; y < V; y++)
        if (g->r[y] > 0.0) {
            g->lab[K + y] = 1;
            g->queue[qt++] = (uint32_t)(K + y);
        }
    while (qh < qt) {
        uint32_t u = g->queue[qh++], d = g->lab[u] + 1;
        if (u >= K) { /* token: every set containing it reaches it */
            size_t y = u - K;
            for (uint32_t i = g->tstart[y]; i < g->tstart[y + 1]; i++) {
                uint32_t s = g->tset[i];
                if (g->lab[s] == g->dead) {
                    g->lab[s] = d;
                    g->queue[qt++] = s;
                }
            }
        } else { /* set: a member that sends it flow reaches it */
            for (size_t m = g->start[u]; m < g->start[u + 1]; m++) {
                uint32_t w = (uint32_t)(K + (size_t)g->members[m]);
                if (g->f[m] > 0.0 && g->lab[w] == g->dead) {
                    g->lab[w] = d;
                    g->queue[qt++] = w;
                }
            }
        }
    }
    for (uint32_t d = 0; d < g->dead; d++)
        g->lhead[d] = NIL;
    g->lmax = 0;
    for (size_t u = 0; u < g->N; u++) {
        g->cur[u] = u < K ? (uint32_t)g->start[u] : g->tstart[u - K];
        if (g->lab[u] < g->dead)
            list_link(g, (uint32_t)u, g->lab[u]);
    }
    g->globals++;
    if (!buckets)
        return;
    for (uint32_t d = 0; d < g->dead; d++)
        g->head[d] = NIL;
    g->amax = 0;
    for (size_t u = 0; u < g->N; u++)
        if (g->ex[u] > 0.0 && g->lab[u] < g->dead)
            activate(g, (uint32_t)u);
}

/* Live node u raised from its label to label. When that leaves its old
 * label without nodes, the labels above it are cut off from the sink (a
 * residual path descends one label per arc at most): the gap heuristic
 * kills every node above, u included. */
static void set_label(flow_net *g, uint32_t u, uint32_t label)
{
    uint32_t old = g->lab[u];
    list_unlink(g, u, old);
    g->relabels++;
    if (g->lhead[old] == NIL) {
        for (uint32_t d = old + 1; d <= g->lmax; d++) {
            for (uint32_t w = g->lhead[d]; w != NIL; w = g->lnext[w])
                g->lab[w] = g->dead;
            g->lhead[d] = NIL;
        }
        g->lmax = old;
        g->lab[u] = g->dead;
        g->gaps++;
        return;
    }
    g->lab[u] = label < g->dead ? label : g->dead;
    if (label < g->dead)
        list_link(g, u, label);
}

/* A set pushes its whole excess along an admissible arc (unbounded), after
 * relabelling it if it has none. */
static void discharge_set(flow_net *g, uint32_t u)
{
    size_t K = g->K, end = g->start[u + 1];
    uint32_t d = g->lab[u];
    size_t m = g->cur[u];
    while (m < end && g->lab[K + (size_t)g->members[m]] + 1 != d)
        m++;
    if (m == end) { /* relabel: 1 + the lowest member label */
        uint32_t best = g->dead;
        for (size_t k = g->start[u]; k < end; k++) {
            uint32_t l = g->lab[K + (size_t)g->members[k]] + 1;
            if (l < best)
                best = l, m = k;
        }
        g->work += 12 + (end - g->start[u]);
        set_label(g, u, best);
        if (g->lab[u] >= g->dead)
            return; /* no member can reach the sink: the excess stays */
    }
    g->cur[u] = (uint32_t)m;
    double delta = g->ex[u];
    g->ex[u] = 0.0;
    g->f[m] += delta;
    receive(g, (uint32_t)(K + (size_t)g->members[m]), delta);
}

/* A token pushes to the sink (label 1) and back to the sets that sent it
 * flow (label d - 1), relabelling until its excess is gone or it is dead. */
static void discharge_token(flow_net *g, uint32_t u)
{
    size_t y = u - g->K;
    uint32_t end = g->tstart[y + 1];
    for (;;) {
        uint32_t d = g->lab[u];
        if (d == 1 && g->r[y] > 0.0) {
            if (g->ex[u] >= g->r[y]) {
                g->ex[u] -= g->r[y];
                g->r[y] = 0.0;
            } else {
                g->r[y] -= g->ex[u];
                g->ex[u] = 0.0;
            }
            g->pushes++;
            if (!(g->ex[u] > 0.0))
                return;
        }
        for (uint32_t i = g->cur[u]; i < end; i++) {
            uint32_t s = g->tset[i], m = g->tmem[i];
            if (!(g->f[m] > 0.0) || g->lab[s] + 1 != d)
                continue;
            double delta;
            if (g->ex[u] >= g->f[m]) {
                delta = g->f[m];
                g->f[m] = 0.0;
                g->ex[u] -= delta;
            } else {
                delta = g->ex[u];
                g->f[m] -= delta;
                g->ex[u] = 0.0;
            }
            receive(g, s, delta);
            if (!(g->ex[u] > 0.0)) {
                g->ex[u] = 0.0;
                g->cur[u] = i;
                return;
            }
        }
        /* relabel: the sink if its arc has room, else 1 + the lowest set
         * label among the arcs back with flow */
        uint32_t best = g->r[y] > 0.0 ? 1 : g->dead;
        for (uint32_t i = g->tstart[y]; i < end; i++)
            if (g->f[g->tmem[i]] > 0.0 && g->lab[g->tset[i]] + 1 < best)
                best = g->lab[g->tset[i]] + 1;
        g->work += 12 + (end - g->tstart[y]);
        set_label(g, u, best);
        g->cur[u] = g->tstart[y];
        if (g->lab[u] >= g->dead)
            return;
    }
}

static void net_free(flow_net *g)
{
    free(g->ex), free(g->f), free(g->r), free(g->lab), free(g->nxt), free(g->cur);
    free(g->head), free(g->tstart), free(g->tset), free(g->tmem), free(g->queue);
    free(g->lhead), free(g->lnext), free(g->lprev);
}

static int net_alloc(flow_net *g, const double *p, size_t V, const mdsd_set_law *S, mdsd_err *err)
{
    memset(g, 0, sizeof *g);
    g->K = S->count;
    g->V = V;
    g->N = g->K + V;
    g->M = S->start[S->count];
    g->start = S->start;
    g->members = S->members;
    g->p = p;
    if (g->N >= NIL || g->M >= NIL || 2 * V + 1 >= NIL)
        return mdsd_fail(err, MDSD_ETOOBIG, "maxflow: %zu sets and %zu tokens are more than "
                         "32-bit node indices hold", g->K, V);
    g->dead = (uint32_t)(2 * V + 1);
    g->ex = calloc(g->N, sizeof *g->ex);
    g->f = calloc(g->M + 1, sizeof *g->f);
    g->r = malloc(V * sizeof *g->r);
    g->lab = malloc(g->N * sizeof *g->lab);
    g->nxt = malloc(g->N * sizeof *g->nxt);
    g->cur = malloc(g->N * sizeof *g->cur);
    g->head = malloc(g->dead * sizeof *g->head);
    g->tstart = calloc(V + 1, sizeof *g->tstart);
    g->tset = malloc((g->M + 1) * sizeof *g->tset);
    g->tmem = malloc((g->M + 1) * sizeof *g->tmem);
    g->queue = malloc(g->N * sizeof *g->queue);
    g->lhead = malloc(g->dead * sizeof *g->lhead);
    g->lnext = malloc(g->N * sizeof *g->lnext);
    g->lprev = malloc(g->N * sizeof *g->lprev);
    if (!g->ex || !g->f || !g->r || !g->lab || !g->nxt || !g->cur || !g->head || !g->tstart ||
        !g->tset || !g->tmem || !g->queue || !g->lhead ||
        !g->lnext || !g->lprev) {
        net_free(g);
        return mdsd_fail(err, MDSD_ENOMEM, "maxflow: out of memory for %zu sets, %zu arcs",
                         g->K, g->M);
    }
    /* token -> set arcs: a counting sort of the memberships by token */
    for (size_t m = 0; m < g->M; m++)
        g->tstart[S->members[m] + 1]++;
    for (size_t y = 0; y < V; y++)
        g->tstart[y + 1] += g->tstart[y];
    memcpy(g->cur, g->tstart, V * sizeof *g->cur); /* fill positions */
    for (size_t k = 0; k < g->K; k++)
        for (size_t m = S->start[k]; m < S->start[k + 1]; m++) {
            uint32_t at = g->cur[S->members[m]]++;
            g->tset[at] = (uint32_t)k;
            g->tmem[at] = (uint32_t)m;
        }
    for (size_t y = 0; y < V; y++)
        g->r[y] = p[y];
    for (size_t k = 0; k < g->K; k++)
        g->ex[k] = S->mass[k]; /* the source arcs, saturated */
    return MDSD_OK;
}

/* A greedy start: each set sends what it can straight on to the sink through
 * members with room left, so that push-relabel only moves the rest. Every
 * step saturates the sink arc or empties the set, as a push does. */
static void greedy_start(flow_net *g)
{
    for (size_t k = 0; k < g->K; k++)
        for (size_t m = g->start[k]; m < g->start[k + 1] && g->ex[k] > 0.0; m++) {
            size_t y = (size_t)g->members[m];
            if (!(g->r[y] > 0.0))
                continue;
            double delta;
            if (g->ex[k] >= g->r[y]) {
                delta = g->r[y];
                g->r[y] = 0.0;
                g->ex[k] -= delta;
            } else {
                delta = g->ex[k];
                g->r[y] -= delta;
                g->ex[k] = 0.0;
            }
            g->f[m] += delta;
        }
}

/* The certificate of maxflow.h from the final residual graph: H = tokens
 * that cannot reach the sink; cut = p(H) + Dbar(sets not inside H); a
 * feasible flow from f (each set's outflow scaled down to its mass where
 * rounding left it above, each token passing min(p(y), inflow)). */
static void certify(flow_net *g, const mdsd_set_law *S, unsigned char *inH, double *cut,
                    double *flow, double *in, double *inc)
{
    size_t K = g->K, V = g->V;
    double c = 0.0, cc = 0.0;
    for (size_t y = 0; y < V; y++) {
        inH[y] = g->lab[K + y] >= g->dead;
        if (inH[y])
            MDSD_NEUMAIER_ADD(c, cc, g->p[y]);
        in[y] = inc[y] = 0.0;
    }
    for (size_t k = 0; k < K; k++) {
        bool inside = true;
        double out = 0.0, oc = 0.0;
        for (size_t m = S->start[k]; m < S->start[k + 1]; m++) {
            inside = inside && inH[S->members[m]];
            MDSD_NEUMAIER_ADD(out, oc, g->f[m]);
        }
        if (!inside)
            MDSD_NEUMAIER_ADD(c, cc, S->mass[k]);
        out += oc;
        double scale = out > S->mass[k] ? S->mass[k] / out : 1.0;
        for (size_t m = S->start[k]; m < S->start[k + 1]; m++)
            MDSD_NEUMAIER_ADD(in[S->members[m]], inc[S->members[m]], scale * g->f[m]);
    }
    double F = 0.0, Fc = 0.0;
    for (size_t y = 0; y < V; y++) {
        double v = in[y] + inc[y];
        MDSD_NEUMAIER_ADD(F, Fc, v < g->p[y] ? v : g->p[y]);
    }
    *cut = c + cc;
    *flow = F + Fc;
}

int mdsd_maxflow_alpha(const double *p, size_t V, const mdsd_set_law *S,
                       mdsd_maxflow_result *res, unsigned char *H, mdsd_err *err)
{
    memset(res, 0, sizeof *res);
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "maxflow: empty vocabulary");
    for (size_t m = 0; m < S->start[S->count]; m++)
        if (S->members[m] < 0 || (size_t)S->members[m] >= V)
            return mdsd_fail(err, MDSD_EINVAL, "maxflow: token %d outside [0, %zu)",
                             S->members[m], V);
    flow_net g;
    int rc = net_alloc(&g, p, V, S, err);
    if (rc)
        return rc;
    unsigned char *inH = H ? H : malloc(V);
    double *in = malloc(2 * V * sizeof *in);
    if (!inH || !in) {
        if (!H)
            free(inH);
        free(in);
        net_free(&g);
        return mdsd_fail(err, MDSD_ENOMEM, "maxflow: out of memory");
    }
    /* hi_pr's frequency: a global relabel after relabels that scanned about
     * half the graph's size in arcs */
    size_t period = (6 * g.N + g.M) / 2;
    greedy_start(&g);
    global_relabel(&g, true);
    for (;;) {
        uint32_t u = g.head[g.amax];
        if (u == NIL) {
            if (g.amax == 0)
                break;
            g.amax--;
            continue;
        }
        g.head[g.amax] = g.nxt[u];
        if (g.lab[u] >= g.dead)
            continue; /* killed by a gap while it waited */
        if (u < g.K)
            discharge_set(&g, u);
        else
            discharge_token(&g, u);
        if (g.work > period) {
            g.work = 0;
            global_relabel(&g, true);
        }
        /* Each relabel raises a label, which stays below dead: more relabels
         * than N * dead would mean a broken invariant, not a slow instance. */
        if (g.relabels > g.N * (size_t)g.dead) {
            rc = mdsd_fail(err, MDSD_ESOLVER, "maxflow: push-relabel did not terminate "
                           "(%zu relabels on %zu nodes); please report this instance",
                           g.relabels, g.N);
            break;
        }
    }
    if (rc) {
        if (!H)
            free(inH);
        free(in);
        net_free(&g);
        return rc;
    }
    global_relabel(&g, false); /* the cut: exact reachability of the sink */
    double cut, flow;
    certify(&g, S, inH, &cut, &flow, in, in + V);
    res->alpha = cut;
    res->flow = flow;
    res->sets = g.K;
    res->arcs = g.M;
    res->pushes = g.pushes;
    res->relabels = g.relabels;
    res->global_relabels = g.globals;
    res->gaps = g.gaps;
    if (!(fabs(cut - flow) <= MDSD_MAXFLOW_CERT_TOL))
        rc = mdsd_fail(err, MDSD_ESOLVER,
                       "maxflow: the cut value %.17g and the flow value %.17g differ by %.3g, "
                       "more than %.0e: no certified alpha*; please report this instance",
                       cut, flow, fabs(cut - flow), MDSD_MAXFLOW_CERT_TOL);
    if (!H)
        free(inH);
    free(in);
    net_free(&g);
    return rc;
}
