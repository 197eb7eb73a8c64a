/* dtree.c - realised drafts for the block verifiers (dtree.h): the trie,
 * the enumeration of every draft of a Markov toy pair, and a tree of a tree
 * dump. */
#include "dtree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "treedump.h"

int mdsd_dtree_init(mdsd_dtree *t, size_t V, size_t L, size_t K, mdsd_err *err)
{
    memset(t, 0, sizeof *t);
    t->V = V, t->L = L, t->K = K;
    if (K > MDSD_BLOCK_MAX_DRAFTS)
        return mdsd_fail(err, MDSD_EINVAL, "block: %zu sequences, at most %d", K,
                         MDSD_BLOCK_MAX_DRAFTS);
    return MDSD_OK;
}

void mdsd_dtree_free(mdsd_dtree *t)
{
    free(t->parent), free(t->depth), free(t->token), free(t->kid), free(t->sib), free(t->last);
    free(t->count), free(t->seqs), free((void *)t->p), free((void *)t->q);
    free((void *)t->zp), free((void *)t->zq);
    memset(t, 0, sizeof *t);
}

static int grow(mdsd_dtree *t)
{
    if (t->n < t->cap)
        return 0;
    size_t cap = t->cap ? 2 * t->cap : 64;
#define GROW(f)                                                                                    \
    do {                                                                                           \
        void *g = realloc((void *)t->f, cap * sizeof *t->f);                                      \
        if (!g)                                                                                    \
            return -1;                                                                             \
        memcpy(&t->f, &g, sizeof g);                                                               \
    } while (0)
    GROW(parent);
    GROW(depth);
    GROW(token);
    GROW(kid);
    GROW(sib);
    GROW(last);
    GROW(count);
    GROW(seqs);
    GROW(p);
    GROW(q);
    GROW(zp);
    GROW(zq);
#undef GROW
    t->cap = cap;
    return 0;
}

static int add_node(mdsd_dtree *t, int parent, int token, const double *p, const double *q)
{
    if (grow(t))
        return -1;
    int u = (int)t->n++;
    t->parent[u] = parent;
    t->depth[u] = parent < 0 ? 0 : t->depth[parent] + 1;
    t->token[u] = token;
    t->kid[u] = t->sib[u] = t->last[u] = -1;
    t->count[u] = parent < 0 ? 0 : 1;
    t->seqs[u] = 0;
    t->p[u] = p;
    t->q[u] = q;
    t->zp[u] = t->zq[u] = NULL;
    if (parent >= 0) {
        if (t->last[parent] < 0)
            t->kid[parent] = u;
        else
            t->sib[t->last[parent]] = u;
        t->last[parent] = u;
    }
    return u;
}

void mdsd_dtree_root(mdsd_dtree *t, int token, const double *p, const double *q)
{
    t->n = 0;
    if (add_node(t, -1, token, p, q) == 0 && t->K)
        t->seqs[0] = t->K >= 32 ? ~0u : (1u << t->K) - 1u;
}

int mdsd_dtree_draft(mdsd_dtree *t, int parent, int token, size_t k, const double *p,
                     const double *q)
{
    int u = t->kid[parent];
    while (u >= 0 && t->token[u] != token)
        u = t->sib[u];
    if (u >= 0)
        t->count[u]++;
    else if ((u = add_node(t, parent, token, p, q)) < 0)
        return -1;
    if (t->K)
        t->seqs[u] |= 1u << k;
    return u;
}

/* Children are added after their parents and removed before them, so the
 * nodes removed are whole child lists: their parents lose every child. */
void mdsd_dtree_truncate(mdsd_dtree *t, size_t n0)
{
    for (size_t u = n0; u < t->n; u++) {
        int par = t->parent[u];
        if (par >= 0 && (size_t)par < n0)
            t->kid[par] = t->last[par] = -1;
    }
    t->n = n0;
}

void mdsd_dtree_path(const mdsd_dtree *t, int u, int *path)
{
    for (; u > 0; u = t->parent[u])
        path[t->depth[u] - 1] = t->token[u];
}

/* ---- every draft of a Markov pair --------------------------------------- */

typedef struct {
    const mdsd_markov *m;
    const mdsd_policy *pol;
    size_t nmax, max_tuples;
    mdsd_joint **joint;      /* [V * (nmax + 1)]: the node laws, by (token, drafts) */
    double **count;          /* [L * V * (nmax + 1)]: memo of outcome counts */
    mdsd_dtree *t;
    mdsd_dtree_visit visit;
    void *ctx;
} enum_ctx;

static size_t drafts_at(const enum_ctx *e, int depth, unsigned seqs)
{
    if (e->pol->kind == MDSD_POLICY_SEQ)
        return (size_t)__builtin_popcount(seqs);
    return e->pol->width[depth];
}

static int node_joint(enum_ctx *e, int tok, size_t n, const mdsd_joint **out, mdsd_err *err)
{
    size_t cell = (size_t)tok * (e->nmax + 1) + n;
    if (!e->joint[cell]) {
        mdsd_joint *D = calloc(1, sizeof *D);
        mdsd_scheme s = {e->pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : e->pol->scheme, n,
                         e->m->V, e->m->q + (size_t)tok * e->m->V, NULL};
        mdsd_err why;
        if (!D)
            return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        int rc = mdsd_scheme_check(&s, &why);
        if (rc != MDSD_OK) {
            free(D);
            return mdsd_fail(err, rc, "block: after token %d (%zu drafts): %s", tok, n, why.msg);
        }
        if ((rc = mdsd_scheme_joint(&s, e->max_tuples, D, err)) != MDSD_OK) {
            free(D);
            return rc;
        }
        e->joint[cell] = D;
    }
    *out = e->joint[cell];
    return MDSD_OK;
}

/* The outcomes below a node (depth d, token tok, n drafts; seq: n sequences). */
static int count_node(enum_ctx *e, size_t d, int tok, size_t n, double *out, mdsd_err *err)
{
    size_t L = e->pol->depth, V = e->m->V;
    if (d >= L) {
        *out = 1.0;
        return MDSD_OK;
    }
    size_t key = (d * V + (size_t)tok) * (e->nmax + 1) + n;
    if (e->count[key]) {
        *out = *e->count[key];
        return MDSD_OK;
    }
    const mdsd_joint *D;
    int rc = node_joint(e, tok, n, &D, err);
    double total = 0.0;
    for (size_t t = 0; rc == MDSD_OK && t < D->count; t++) {
        const int *x = D->tokens + t * n;
        double prod = 1.0;
        for (size_t j = 0; rc == MDSD_OK && j < n; j++) {
            size_t same = 0, first = 1;
            for (size_t k = 0; k < n; k++)
                if (x[k] == x[j])
                    same++, first &= k >= j;
            if (!first)
                continue;
            double c;
            size_t nc = e->pol->kind == MDSD_POLICY_SEQ ? same
                        : d + 1 < L ? e->pol->width[d + 1] : 0;
            rc = count_node(e, d + 1, x[j], nc, &c, err);
            prod *= c;
        }
        total += prod;
    }
    if (rc == MDSD_OK) {
        if (!(e->count[key] = malloc(sizeof(double))))
            return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        *e->count[key] = total;
        *out = total;
    }
    return rc;
}

static int expand(enum_ctx *e, size_t next, double prob, mdsd_err *err)
{
    mdsd_dtree *t = e->t;
    size_t L = e->pol->depth, V = e->m->V;
    while (next < t->n && (size_t)t->depth[next] >= L)
        next++;
    if (next == t->n)
        return e->visit(e->ctx, t, prob, err);
    int u = (int)next;
    size_t n = drafts_at(e, t->depth[u], t->seqs[u]);
    size_t seq_of[MDSD_BLOCK_MAX_DRAFTS], ns = 0;
    for (size_t k = 0; t->K && k < t->K; k++)
        if (t->seqs[u] >> k & 1u)
            seq_of[ns++] = k;
    const mdsd_joint *D;
    int rc = node_joint(e, t->token[u], n, &D, err);
    size_t n0 = t->n;
    for (size_t i = 0; rc == MDSD_OK && i < D->count; i++) {
        const int *x = D->tokens + i * n;
        for (size_t j = 0; j < n && rc == MDSD_OK; j++) {
            const double *p = e->m->p + (size_t)x[j] * V, *q = e->m->q + (size_t)x[j] * V;
            if (mdsd_dtree_draft(t, u, x[j], t->K ? seq_of[j] : 0, p, q) < 0)
                rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        }
        if (rc == MDSD_OK)
            rc = expand(e, next + 1, prob * D->prob[i], err);
        mdsd_dtree_truncate(t, n0);
    }
    return rc;
}

static int enum_setup(enum_ctx *e, const mdsd_markov *m, const mdsd_policy *pol, mdsd_err *err)
{
    memset(e, 0, sizeof *e);
    int rc = mdsd_policy_check(pol, err);
    if (rc)
        return rc;
    e->m = m, e->pol = pol;
    e->nmax = pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0;
    for (size_t d = 0; pol->kind == MDSD_POLICY_TREE && d < pol->depth; d++)
        if (pol->width[d] > e->nmax)
            e->nmax = pol->width[d];
    e->max_tuples = MDSD_JOINT_MAX_TUPLES;
    e->joint = calloc(m->V * (e->nmax + 1), sizeof *e->joint);
    e->count = calloc(pol->depth * m->V * (e->nmax + 1), sizeof *e->count);
    if (!e->joint || !e->count)
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    return MDSD_OK;
}

static void enum_free(enum_ctx *e)
{
    size_t cells = e->m ? e->m->V * (e->nmax + 1) : 0;
    for (size_t i = 0; e->joint && i < cells; i++)
        if (e->joint[i]) {
            mdsd_joint_free(e->joint[i]);
            free(e->joint[i]);
        }
    for (size_t i = 0; e->count && i < cells * e->pol->depth; i++)
        free(e->count[i]);
    free(e->joint);
    free(e->count);
}

static size_t root_drafts(const mdsd_policy *pol)
{
    return pol->kind == MDSD_POLICY_SEQ ? pol->sequences : pol->width[0];
}

int mdsd_dtree_outcomes(const mdsd_markov *m, const mdsd_policy *pol, int root, double *count,
                        mdsd_err *err)
{
    enum_ctx e;
    int rc = enum_setup(&e, m, pol, err);
    if (rc == MDSD_OK)
        rc = count_node(&e, 0, root, root_drafts(pol), count, err);
    enum_free(&e);
    return rc;
}

int mdsd_dtree_enumerate(const mdsd_markov *m, const mdsd_policy *pol, int root,
                         size_t max_outcomes, mdsd_dtree_visit visit, void *ctx, mdsd_err *err)
{
    enum_ctx e;
    double count = 0.0;
    size_t limit = max_outcomes ? max_outcomes : MDSD_JOINT_MAX_TUPLES;
    int rc = enum_setup(&e, m, pol, err);
    if (rc == MDSD_OK)
        rc = count_node(&e, 0, root, root_drafts(pol), &count, err);
    if (rc == MDSD_OK && count > (double)limit) {
        char desc[128];
        rc = mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_TRIALS,
                              "block: %s on V = %zu has %.3g draft outcomes, above "
                              "the enumeration guard %zu: use `trials T` (sampled drafts) instead",
                              mdsd_policy_describe(pol, desc, sizeof desc), m->V, count, limit);
    }
    mdsd_dtree t;
    if (rc == MDSD_OK)
        rc = mdsd_dtree_init(&t, m->V, pol->depth,
                             pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0, err);
    if (rc == MDSD_OK) {
        e.t = &t, e.visit = visit, e.ctx = ctx;
        mdsd_dtree_root(&t, root, m->p + (size_t)root * m->V, m->q + (size_t)root * m->V);
        rc = t.n == 1 ? expand(&e, 0, 1.0, err) : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        mdsd_dtree_free(&t);
    }
    enum_free(&e);
    return rc;
}

/* ---- a tree of a tree dump ------------------------------------------------ */

typedef struct {
    const mdsd_tree_dump *d;
    const mdsd_policy *pol;
    const double *p, *q;
    const float *zp, *zq;
    size_t row0;
    mdsd_dtree *t;
} dump_ctx;

/* The stored logits of row r (NULL when the dump's are not at hand). */
static const float *logits_at(const dump_ctx *c, const float *z, size_t r)
{
    return z ? z + (r - c->row0) * c->d->V : NULL;
}

/* The child row of row u with edge tok, or SIZE_MAX (u's drafts at the
 * dump's last depth have none). */
static size_t child_row(const mdsd_tree_dump *d, size_t u, int tok)
{
    for (size_t a = d->kid_start[u]; a < d->kid_start[u + 1]; a++)
        if (d->edge[d->kid[a]] == tok)
            return d->kid[a];
    return SIZE_MAX;
}

static int from_row(dump_ctx *c, size_t row, int node, mdsd_err *err)
{
    const mdsd_tree_dump *d = c->d;
    mdsd_dtree *t = c->t;
    size_t depth = (size_t)t->depth[node], V = d->V;
    if (depth >= c->pol->depth)
        return MDSD_OK;
    const int *sl = d->slots + row * d->S;
    size_t slots = c->pol->kind == MDSD_POLICY_SEQ ? c->pol->sequences : c->pol->width[depth];
    size_t n0 = t->n;
    for (size_t s = 0; s < slots; s++) {
        if (c->pol->kind == MDSD_POLICY_SEQ && !(t->seqs[node] >> s & 1u))
            continue;
        size_t kr = child_row(d, row, sl[s]);
        const double *p = kr == SIZE_MAX ? NULL : c->p + (kr - c->row0) * V;
        const double *q = kr == SIZE_MAX ? NULL : c->q + (kr - c->row0) * V;
        int u = mdsd_dtree_draft(t, node, sl[s], s, p, q);
        if (u < 0)
            return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
        if (kr != SIZE_MAX)
            t->zp[u] = logits_at(c, c->zp, kr), t->zq[u] = logits_at(c, c->zq, kr);
    }
    size_t n1 = t->n;
    for (size_t u = n0; u < n1; u++) {
        if ((size_t)t->depth[u] >= c->pol->depth)
            continue;
        size_t kr = child_row(d, row, t->token[u]);
        if (kr == SIZE_MAX)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu: no child row for token %d",
                             d->path, row, t->token[u]);
        int rc = from_row(c, kr, (int)u, err);
        if (rc)
            return rc;
    }
    return MDSD_OK;
}

int mdsd_dtree_from_dump(const struct mdsd_tree_dump_s *d, size_t tree, const mdsd_policy *pol,
                         const double *p, const double *q, const float *zp, const float *zq,
                         mdsd_dtree *t, mdsd_err *err)
{
    size_t root = d->root[tree];
    t->V = d->V, t->L = pol->depth, t->K = pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0;
    mdsd_dtree_root(t, -1, p, q);
    if (t->n != 1)
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    t->zp[0] = zp, t->zq[0] = zq;
    dump_ctx c = {d, pol, p, q, zp, zq, root, t};
    return from_row(&c, root, 0, err);
}
