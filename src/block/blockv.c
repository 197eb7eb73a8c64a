/* blockv.c - the block verifiers' table, their exact route on a Markov toy
 * pair (every draft enumerated), and the exact check of the stopped-chain
 * condition (blockv.h, MATH.md §5.6-5.7). */
#include "blockv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "block_impl.h"
#include "treedump.h"

static const mdsd_blockv_ops *const table[MDSD_BLOCKV_COUNT] = {
    [MDSD_BLOCKV_BV] = &mdsd_blockv_bv_ops,
    [MDSD_BLOCKV_GBV] = &mdsd_blockv_gbv_ops,
    [MDSD_BLOCKV_TRAVERSAL] = &mdsd_blockv_traversal_ops,
};

const mdsd_blockv_ops *mdsd_blockv(mdsd_blockv_kind kind)
{
    return (unsigned)kind < MDSD_BLOCKV_COUNT ? table[kind] : NULL;
}

/* Names are the registry's (class MDSD_NAME_BLOCK_VERIFIER, kind = the enum
 * value); test_registry.c checks that each ops' name is its entry's. */
const char *mdsd_blockv_name(mdsd_blockv_kind kind)
{
    const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_BLOCK_VERIFIER, (int)kind);
    return (unsigned)kind < MDSD_BLOCKV_COUNT && e ? e->name : "?";
}

int mdsd_blockv_parse(const char *name, mdsd_blockv_kind *kind, mdsd_err *err)
{
    const mdsd_registry_entry *e = mdsd_registry_find(MDSD_NAME_BLOCK_VERIFIER, name);
    if (e && e->kind < MDSD_BLOCKV_COUNT) {
        *kind = (mdsd_blockv_kind)e->kind;
        return MDSD_OK;
    }
    char names[128];
    return mdsd_fail(err, MDSD_EINVAL, "unknown block verifier '%s' (%s)", name,
                     mdsd_registry_join(MDSD_NAME_BLOCK_VERIFIER, -1, ", ", names, sizeof names));
}

/* ---- cases of the tree-dump job ------------------------------------------ */

_Static_assert(MDSD_POLICY_SEQ == 0 && MDSD_POLICY_TREE == 1, "the registry's policy kinds");
_Static_assert(MDSD_BLOCK_CASE_VERIFIERS == MDSD_VERIFIER_KINDS + MDSD_BLOCKV_COUNT,
               "treedump.h counts the block verifiers");

const char *mdsd_block_case_name(const mdsd_block_case *c)
{
    return c->block ? mdsd_blockv_name((mdsd_blockv_kind)(c->block - 1)) : mdsd_verifier_name(c->v);
}

int mdsd_block_case_parse(const char *name, mdsd_block_case *c, mdsd_err *err)
{
    mdsd_blockv_kind k = MDSD_BLOCKV_COUNT;
    if (mdsd_blockv_parse(name, &k, NULL) == MDSD_OK) {
        c->block = 1 + (int)k;
        c->v = MDSD_VERIFIER_SD;
        return MDSD_OK;
    }
    mdsd_err why;
    char names[128];
    if (mdsd_verifier_parse(name, &c->v, &why) != MDSD_OK)
        return mdsd_fail(err, MDSD_EINVAL, "%s; or a block verifier: %s", why.msg,
                         mdsd_registry_join(MDSD_NAME_BLOCK_VERIFIER, -1, ", ", names,
                                            sizeof names));
    c->block = 0;
    return MDSD_OK;
}

int mdsd_block_case_check(const mdsd_block_case *c, mdsd_err *err)
{
    if (c->block)
        return mdsd_blockv((mdsd_blockv_kind)(c->block - 1))->check(&c->pol, err);
    const mdsd_policy *pol = &c->pol;
    size_t n = pol->kind == MDSD_POLICY_SEQ ? pol->sequences : pol->width[0];
    double q[2] = {0.5, 0.5};
    mdsd_scheme s = {pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pol->scheme, n, 2, q, NULL};
    if (c->v == MDSD_VERIFIER_SD && n != 1)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "sd verifies one draft");
    return mdsd_verifier_check(c->v, &s, err);
}

/* ---- exact --------------------------------------------------------------- */

typedef struct {
    const mdsd_blockv_ops *v;
    size_t L;
    double reach[MDSD_BLOCK_MAX_DEPTH + 1];
    double *stop;
    size_t cap;
} exact_ctx;

static int grow_stop(double **stop, size_t *cap, size_t n, mdsd_err *err)
{
    if (n <= *cap)
        return MDSD_OK;
    double *s = realloc(*stop, n * sizeof *s);
    if (!s)
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    *stop = s, *cap = n;
    return MDSD_OK;
}

static int exact_visit(void *ctx, const mdsd_dtree *t, double prob, mdsd_err *err)
{
    exact_ctx *e = ctx;
    int rc = grow_stop(&e->stop, &e->cap, t->n, err);
    if (rc == MDSD_OK)
        rc = e->v->law(t, e->stop, NULL, err);
    for (size_t u = 0; rc == MDSD_OK && u < t->n; u++)
        for (int d = 1; d <= t->depth[u]; d++)
            e->reach[d] += prob * e->stop[u];
    return rc;
}

int mdsd_blockv_exact(const mdsd_markov *m, const mdsd_policy *pol, const mdsd_blockv_ops *v,
                      const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    int rc = mdsd_policy_check(pol, err);
    if (rc == MDSD_OK)
        rc = v->check(pol, err);
    if (rc)
        return rc;
    exact_ctx e = {v, pol->depth, {0}, NULL, 0};
    rc = mdsd_dtree_enumerate(m, pol, 0, o ? o->vopts.max_tuples : 0, exact_visit, &e, err);
    if (rc == MDSD_OK) {
        memset(res, 0, sizeof *res);
        mdsd_bk_finish(res, pol->depth, e.reach, 1.0);
    }
    free(e.stop);
    return rc;
}

int mdsd_blockv_dump_tree(const struct mdsd_tree_dump_s *d, size_t tree, const mdsd_blockv_ops *v,
                          const mdsd_policy *pol, const double *p, const double *q,
                          const float *zp, const float *zq, double *R, mdsd_err *err)
{
    mdsd_dtree t;
    double *stop = NULL;
    int rc = mdsd_dtree_init(&t, d->V, pol->depth,
                             pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0, err);
    if (rc == MDSD_OK)
        rc = mdsd_dtree_from_dump(d, tree, pol, p, q, zp, zq, &t, err);
    if (rc == MDSD_OK && !(stop = malloc(t.n * sizeof *stop)))
        rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    if (rc == MDSD_OK)
        rc = v->law(&t, stop, NULL, err);
    if (rc != MDSD_OK && rc != MDSD_ENOMEM) { /* name the tree */
        mdsd_err e = *err;
        rc = mdsd_fail(err, rc, "%s: tree %zu (row %zu): %s", d->path, tree, d->root[tree], e.msg);
    }
    for (size_t u = 0; rc == MDSD_OK && u < t.n; u++)
        for (int k = 1; k <= t.depth[u]; k++)
            R[k - 1] += stop[u];
    free(stop);
    mdsd_dtree_free(&t);
    return rc;
}

/* ---- the stopped-chain condition ------------------------------------------ */

typedef struct {
    const mdsd_blockv_ops *v;
    size_t V, L;
    size_t off[MDSD_BLOCK_MAX_DEPTH + 3]; /* off[l]: the first code of length l */
    double *out;                          /* [off[L + 2]]: P(output string = w) */
    double *stop, *next;
    size_t cap;
} chain_ctx;

static size_t code_of(const chain_ctx *c, const int *w, size_t len)
{
    size_t v = 0;
    for (size_t i = 0; i < len; i++)
        v = v * c->V + (size_t)w[i];
    return c->off[len] + v;
}

static int chain_visit(void *ctx, const mdsd_dtree *t, double prob, mdsd_err *err)
{
    chain_ctx *c = ctx;
    int rc = grow_stop(&c->stop, &c->cap, t->n, err);
    free(c->next);
    c->next = rc == MDSD_OK ? malloc(t->n * c->V * sizeof *c->next) : NULL;
    if (rc == MDSD_OK && !c->next)
        rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    if (rc == MDSD_OK)
        rc = c->v->law(t, c->stop, c->next, err);
    int w[MDSD_BLOCK_MAX_DEPTH + 1];
    for (size_t u = 0; rc == MDSD_OK && u < t->n; u++) {
        if (!(c->stop[u] > 0.0))
            continue;
        size_t len = (size_t)t->depth[u];
        mdsd_dtree_path(t, (int)u, w);
        for (size_t b = 0; b < c->V; b++) {
            w[len] = (int)b;
            c->out[code_of(c, w, len + 1)] += prob * c->stop[u] * c->next[u * c->V + b];
        }
    }
    return rc;
}

/* start(w) = P(output starts with w) for every code, from the longest. */
static void starts(const chain_ctx *c, double *start)
{
    size_t V = c->V;
    for (size_t len = c->L + 1; len >= 1; len--)
        for (size_t i = 0; i < c->off[len + 1] - c->off[len]; i++) {
            size_t w = c->off[len] + i;
            double s = c->out[w];
            if (len <= c->L)
                for (size_t b = 0; b < V; b++)
                    s += start[c->off[len + 1] + i * V + b];
            start[w] = s;
        }
}

int mdsd_block_stopped_chain(const mdsd_markov *m, const mdsd_policy *pol,
                             const mdsd_blockv_ops *v, int root, double *max_dev, double *first_dev,
                             mdsd_err *err)
{
    size_t V = m->V, L = pol->depth;
    int rc = mdsd_policy_check(pol, err);
    if (rc == MDSD_OK)
        rc = v->check(pol, err);
    if (rc)
        return rc;
    chain_ctx c = {v, V, L, {0}, NULL, NULL, NULL, 0};
    double codes = 0.0, pw = 1.0;
    for (size_t l = 0; l <= L + 2; l++) {
        c.off[l] = (size_t)codes;
        codes += pw;
        pw *= (double)V;
    }
    if (codes > (double)((size_t)1 << 26))
        return mdsd_fail(err, MDSD_ETOOBIG, "block: %.3g output strings to check: a smaller toy",
                         codes);
    c.out = calloc(c.off[L + 2], sizeof *c.out);
    double *start = calloc(c.off[L + 2], sizeof *start);
    if (!c.out || !start)
        rc = mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    if (rc == MDSD_OK)
        rc = mdsd_dtree_enumerate(m, pol, root, 0, chain_visit, &c, err);
    double dev = 0.0;
    if (first_dev)
        *first_dev = 0.0;
    if (rc == MDSD_OK) {
        starts(&c, start);
        for (size_t len = 0; len <= L; len++)
            for (size_t i = 0; i < c.off[len + 1] - c.off[len]; i++) {
                size_t last = len == 0 ? (size_t)root : i % V;
                double ext = 0.0;
                for (size_t b = 0; b < V; b++)
                    ext += start[c.off[len + 1] + i * V + b];
                for (size_t b = 0; b < V; b++) {
                    double lhs = start[c.off[len + 1] + i * V + b];
                    double d = fabs(lhs - ext * m->p[last * V + b]);
                    if (d > dev)
                        dev = d;
                    if (len == 0 && first_dev && d > *first_dev)
                        *first_dev = d;
                }
            }
        *max_dev = dev;
    }
    free(c.out), free(start), free(c.stop), free(c.next);
    return rc;
}
