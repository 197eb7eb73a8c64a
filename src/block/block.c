/* block.c - block efficiency of token-level recursive verification on a
 * Markov toy pair (block.h): the exact recursion, the sampled trees with
 * the verifier's randomness integrated out, and the plain simulation.
 *
 * All three see a node through (depth d, its last token, n drafts) and the
 * verifier prepared for (p(.|token), scheme with n drafts from q(.|token)),
 * cached per (token, n): the Markov pair makes a node's laws depend on its
 * last token only. */
#include "block.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_impl.h"
#include "rng.h"

void mdsd_block_opts_init(mdsd_block_opts *o)
{
    memset(o, 0, sizeof *o);
    o->trials = 10000;
    o->seed = 1;
    mdsd_verifier_opts_init(&o->vopts);
}

int mdsd_policy_check(const mdsd_policy *pol, mdsd_err *err)
{
    if (pol->depth < 1 || pol->depth > MDSD_BLOCK_MAX_DEPTH)
        return mdsd_fail(err, MDSD_EINVAL, "block: depth L = %zu outside [1, %d]", pol->depth,
                         MDSD_BLOCK_MAX_DEPTH);
    if (pol->kind == MDSD_POLICY_SEQ) {
        if (pol->sequences < 1 || pol->sequences > MDSD_BLOCK_MAX_DRAFTS)
            return mdsd_fail(err, MDSD_EINVAL, "block: sequences K = %zu outside [1, %d]",
                             pol->sequences, MDSD_BLOCK_MAX_DRAFTS);
        return MDSD_OK;
    }
    if (pol->kind != MDSD_POLICY_TREE)
        return mdsd_fail(err, MDSD_EINVAL, "block: unknown drafting policy %d", (int)pol->kind);
    for (size_t d = 0; d < pol->depth; d++)
        if (pol->width[d] < 1 || pol->width[d] > MDSD_BLOCK_MAX_DRAFTS)
            return mdsd_fail(err, MDSD_EINVAL, "block: tree width w_%zu = %zu outside [1, %d]",
                             d + 1, pol->width[d], MDSD_BLOCK_MAX_DRAFTS);
    switch (pol->scheme) {
    case MDSD_SCHEME_IID:
    case MDSD_SCHEME_WOR:
    case MDSD_SCHEME_GREEDY:
    case MDSD_SCHEME_HUB:
        return MDSD_OK;
    default:
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "block: tree scheme %s not supported (iid, wor, "
                         "greedy, hub)", mdsd_scheme_name(pol->scheme));
    }
}

const char *mdsd_policy_describe(const mdsd_policy *pol, char *buf, size_t size)
{
    if (pol->kind == MDSD_POLICY_SEQ) {
        snprintf(buf, size, "seq K=%zu L=%zu", pol->sequences, pol->depth);
        return buf;
    }
    size_t at = (size_t)snprintf(buf, size, "tree ");
    for (size_t d = 0; d < pol->depth && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, d ? ",%zu" : "%zu", pol->width[d]);
    if (at < size)
        snprintf(buf + at, size - at, " %s", mdsd_scheme_name(pol->scheme));
    return buf;
}

double mdsd_policy_size(const mdsd_policy *pol)
{
    if (pol->kind == MDSD_POLICY_SEQ)
        return (double)pol->sequences * (double)pol->depth;
    double size = 0.0, level = 1.0;
    for (size_t d = 0; d < pol->depth; d++) {
        level *= (double)pol->width[d];
        size += level;
    }
    return size;
}

/* ---- the shared context ------------------------------------------------ */

int mdsd_bk_init(mdsd_bk *c, const mdsd_markov *m, const mdsd_policy *pol,
                 mdsd_verifier_kind v, const mdsd_block_opts *o, mdsd_err *err)
{
    memset(c, 0, sizeof *c);
    int rc = mdsd_policy_check(pol, err);
    if (rc)
        return rc;
    if (!m || !m->p || !m->q || m->V < 1)
        return mdsd_fail(err, MDSD_EINVAL, "block: no Markov pair");
    c->m = m;
    c->pol = *pol;
    c->v = v;
    if (o)
        c->o = *o;
    else
        mdsd_block_opts_init(&c->o);
    c->nmax = pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0;
    for (size_t d = 0; pol->kind == MDSD_POLICY_TREE && d < pol->depth; d++)
        if (pol->width[d] > c->nmax)
            c->nmax = pol->width[d];
    size_t cells = m->V * (c->nmax + 1);
    c->ver = calloc(cells, sizeof *c->ver);
    c->smp = calloc(cells, sizeof *c->smp);
    if (!c->ver || !c->smp) {
        mdsd_bk_free(c);
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    }
    return MDSD_OK;
}

void mdsd_bk_free(mdsd_bk *c)
{
    size_t cells = c->m ? c->m->V * (c->nmax + 1) : 0;
    for (size_t i = 0; c->ver && i < cells; i++)
        mdsd_verifier_free(c->ver[i]);
    for (size_t i = 0; c->smp && i < cells; i++)
        mdsd_sampler_free(c->smp[i]);
    free(c->ver);
    free(c->smp);
    c->ver = NULL;
    c->smp = NULL;
}

void mdsd_bk_scheme(const mdsd_bk *c, int tok, size_t n, mdsd_scheme *s)
{
    memset(s, 0, sizeof *s);
    s->kind = c->pol.kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : c->pol.scheme;
    s->n = n;
    s->V = c->m->V;
    s->q = c->m->q + (size_t)tok * c->m->V;
}

/* Prepared lazily; under a critical section, as the sampled route's threads
 * share the cache. */
int mdsd_bk_verifier(mdsd_bk *c, int tok, size_t n, const mdsd_verifier **out, mdsd_err *err)
{
    size_t cell = (size_t)tok * (c->nmax + 1) + n;
    int rc = MDSD_OK;
#pragma omp critical(mdsd_block_cache)
    {
        if (!c->ver[cell]) {
            mdsd_scheme s;
            mdsd_bk_scheme(c, tok, n, &s);
            char what[64];
            snprintf(what, sizeof what, "block: after token %d", tok);
            mdsd_err e;
            c->ver[cell] = mdsd_verifier_alloc(c->v, c->m->p + (size_t)tok * c->m->V, &s,
                                               &c->o.vopts, &e);
            if (!c->ver[cell])
                rc = mdsd_fail(err, e.code, "%s (%zu drafts): %s", what, n, e.msg);
        }
    }
    *out = c->ver[cell];
    return rc;
}

int mdsd_bk_sampler(mdsd_bk *c, int tok, size_t n, const mdsd_sampler **out, mdsd_err *err)
{
    size_t cell = (size_t)tok * (c->nmax + 1) + n;
    int rc = MDSD_OK;
#pragma omp critical(mdsd_block_cache)
    {
        if (!c->smp[cell]) {
            mdsd_scheme s;
            mdsd_bk_scheme(c, tok, n, &s);
            mdsd_err e;
            if (mdsd_scheme_check(&s, &e) != MDSD_OK)
                rc = mdsd_fail(err, e.code, "block: after token %d (%zu drafts): %s", tok, n,
                               e.msg);
            else if (!(c->smp[cell] = mdsd_sampler_alloc(&s, &e)))
                rc = mdsd_fail(err, e.code, "block: after token %d: %s", tok, e.msg);
        }
    }
    *out = c->smp[cell];
    return rc;
}

size_t mdsd_bk_drafts_at(const mdsd_bk *c, size_t d, size_t m)
{
    return c->pol.kind == MDSD_POLICY_SEQ ? m : c->pol.width[d];
}

void mdsd_bk_finish(mdsd_block_result *res, size_t L, const double *reach_sum, double count)
{
    res->depth = L;
    res->reach[0] = 1.0;
    res->rate[0] = 1.0;
    double tau = 1.0;
    for (size_t d = 1; d <= L; d++) {
        res->reach[d] = reach_sum[d] / count;
        tau += res->reach[d];
        res->rate[d] = res->reach[d - 1] > 0.0 ? res->reach[d] / res->reach[d - 1] : 0.0;
    }
    res->tau = tau;
}

/* ---- exact ------------------------------------------------------------- */

/* memo[(d * V + tok) * (nmax + 1) + m] = reach vector of the node:
 * R[k-1] = P(at least k more accepted), k = 1..L-d. */
typedef mdsd_bk_memo exact_ctx;

static int exact_node(exact_ctx *x, size_t d, int tok, size_t m, const double **out,
                      mdsd_err *err)
{
    mdsd_bk *c = x->c;
    size_t L = c->pol.depth, V = c->m->V;
    size_t key = ((size_t)d * V + (size_t)tok) * (c->nmax + 1) + (c->pol.kind == MDSD_POLICY_SEQ ? m : 0);
    if (x->memo[key]) {
        *out = x->memo[key];
        return MDSD_OK;
    }
    size_t left = L - d, n = mdsd_bk_drafts_at(c, d, m);
    double *R = calloc(left, sizeof *R);
    if (!R)
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    const mdsd_verifier *v;
    int rc = mdsd_bk_verifier(c, tok, n, &v, err);
    mdsd_joint D = {0};
    mdsd_scheme s;
    mdsd_bk_scheme(c, tok, n, &s);
    if (rc == MDSD_OK)
        rc = mdsd_scheme_joint(&s, c->o.vopts.max_tuples ? c->o.vopts.max_tuples
                                                         : MDSD_JOINT_MAX_TUPLES, &D, err);
    double py[MDSD_BLOCK_MAX_DRAFTS];
    for (size_t t = 0; rc == MDSD_OK && t < D.count; t++) {
        const int *tu = D.tokens + t * n;
        if ((rc = mdsd_verifier_law(v, tu, py, err)) != MDSD_OK)
            break;
        for (size_t j = 0; j < n && rc == MDSD_OK; j++) {
            size_t count = 1, first = 1;
            for (size_t k = 0; k < n; k++)
                if (k != j && tu[k] == tu[j]) {
                    count++;
                    first &= k > j;
                }
            if (!first || !(py[j] > 0.0))
                continue;
            double w = D.prob[t] * py[j];
            R[0] += w;
            if (left > 1) {
                const double *child;
                if ((rc = exact_node(x, d + 1, tu[j], count, &child, err)) != MDSD_OK)
                    break;
                for (size_t k = 1; k < left; k++)
                    R[k] += w * child[k - 1];
            }
        }
    }
    mdsd_joint_free(&D);
    if (rc != MDSD_OK) {
        free(R);
        return rc;
    }
    x->memo[key] = R;
    *out = R;
    return MDSD_OK;
}

int mdsd_bk_solve(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                  const mdsd_block_opts *o, mdsd_bk_node_fn node, mdsd_block_result *res,
                  mdsd_err *err)
{
    mdsd_bk c;
    int rc = mdsd_bk_init(&c, m, pol, v, o, err);
    if (rc)
        return rc;
    size_t cells = pol->depth * m->V * (c.nmax + 1);
    mdsd_bk_memo x = {&c, calloc(cells, sizeof(double *))};
    if (!x.memo) {
        mdsd_bk_free(&c);
        return mdsd_fail(err, MDSD_ENOMEM, "block: out of memory");
    }
    const double *R;
    rc = node(&x, 0, 0, pol->kind == MDSD_POLICY_SEQ ? pol->sequences : 0, &R, err);
    if (rc == MDSD_OK) {
        double sum[MDSD_BLOCK_MAX_DEPTH + 1] = {0};
        for (size_t d = 1; d <= pol->depth; d++)
            sum[d] = R[d - 1];
        memset(res, 0, sizeof *res);
        mdsd_bk_finish(res, pol->depth, sum, 1.0);
    }
    for (size_t i = 0; i < cells; i++)
        free(x.memo[i]);
    free(x.memo);
    mdsd_bk_free(&c);
    return rc;
}

int mdsd_block_exact(const mdsd_markov *m, const mdsd_policy *pol, mdsd_verifier_kind v,
                     const mdsd_block_opts *o, mdsd_block_result *res, mdsd_err *err)
{
    return mdsd_bk_solve(m, pol, v, o, exact_node, res, err);
}
