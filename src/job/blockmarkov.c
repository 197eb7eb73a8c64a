/* blockmarkov.c - E[tau] of one verifier and policy on a Markov toy pair
 * (`mdsd block --markov`, mdsd_block_markov in mdsd/block.h): the options
 * checked, the route run (exact, sampled trees, simulated steps, a block
 * verifier's, or one of the optima), optionally optimal-token beside it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mdsd/block.h>

#include "block.h"
#include "blockmarkov.h"
#include "blockv.h"
#include "opts.h"
#include "parse.h"
#include "runopts.h"

_Static_assert(MDSD_BLOCK_MARKOV_MAX_DEPTH == MDSD_BLOCK_MAX_DEPTH, "public depth bound");

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_block_markov_opts_init)(mdsd_block_markov_opts *opts, size_t size)
{
    mdsd_block_markov_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.seed = 1;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

static int usage(bool *flag, mdsd_err *err, const char *msg, const char *arg)
{
    *flag = true;
    return mdsd_fail(err, MDSD_EINVAL, msg, arg);
}

/* The policy of the options; a refusal is a usage error. */
static int policy_of(const mdsd_block_markov_opts *o, mdsd_policy *pol, bool *bad, mdsd_err *err)
{
    memset(pol, 0, sizeof *pol);
    if (o->tree && (o->sequences || o->depth))
        return usage(bad, err, "%s", "`tree` excludes `sequences` and `depth`");
    if (!o->tree && (!o->sequences || !o->depth))
        return usage(bad, err, "%s", "give `sequences K` and `depth L`, or `tree W1,W2,...`");
    if (o->scheme && !o->tree)
        return usage(bad, err, "%s", "`scheme` is for `tree` (seq drafts are iid)");
    if (!o->tree) {
        pol->kind = MDSD_POLICY_SEQ;
        pol->sequences = o->sequences;
        pol->depth = o->depth;
        return MDSD_OK;
    }
    pol->kind = MDSD_POLICY_TREE;
    pol->scheme = MDSD_SCHEME_IID;
    double *w = NULL;
    size_t n = 0;
    if (mdsd_parse_vector(o->tree, "`tree`", &w, &n, err) != MDSD_OK) {
        *bad = true;
        return err->code;
    }
    int wrong = n < 1 || n > MDSD_BLOCK_MAX_DEPTH;
    for (size_t d = 0; !wrong && d < n; d++) {
        wrong = !(w[d] >= 1.0 && w[d] <= MDSD_BLOCK_MAX_DRAFTS && w[d] == floor(w[d]));
        pol->width[d] = wrong ? 0 : (size_t)w[d];
    }
    free(w);
    if (wrong) {
        *bad = true;
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_TREE,
                                "`tree %s`: give 1 to %d widths, integers in [1, %d]",
                                o->tree, MDSD_BLOCK_MAX_DEPTH, MDSD_BLOCK_MAX_DRAFTS);
    }
    pol->depth = n;
    if (o->scheme && mdsd_scheme_parse(o->scheme, &pol->scheme, err) != MDSD_OK) {
        *bad = true;
        return err->code;
    }
    return MDSD_OK;
}

static int check_route(const mdsd_block_markov_opts *o, bool *bad, mdsd_err *err)
{
    const char *v = o->verifier;
    if (!v)
        return usage(bad, err, "%s", "missing `verifier`");
    if (!strcmp(v, "optimal"))
        return usage(bad, err, "%s", "`verifier optimal` names no class: give `verifier optimal-token` (the best "
                     "token-level verifier) or `verifier optimal-block` (the best lossless verifier that "
                     "sees the whole draft)");
    if (mdsd_registry_find(MDSD_NAME_BLOCK_OPTIMUM, v) && o->trials)
        return usage(bad, err, "`verifier %s` is computed exactly: drop `trials`", v);
    if (o->simulate && !o->trials)
        return usage(bad, err, "%s", "`simulate` needs `trials T`");
    if (o->trials == 1)
        return usage(bad, err, "%s", "`trials` must be at least 2 (for the standard error)");
    return MDSD_OK;
}

static int run_route(const mdsd_block_markov_opts *o, const mdsd_markov *m,
                     const mdsd_policy *pol, const mdsd_block_opts *bo, const size_t *live,
                     mdsd_block_markov_run *out, mdsd_err *err)
{
    const char *vn = o->verifier;
    const mdsd_registry_entry *optimum = mdsd_registry_find(MDSD_NAME_BLOCK_OPTIMUM, vn);
    int opt_token = optimum && optimum->kind == MDSD_OPTIMUM_TOKEN;
    int tiebreak = optimum && optimum->kind == MDSD_OPTIMUM_TIEBREAK;
    int opt_block = optimum && optimum->kind == MDSD_OPTIMUM_BLOCK;
    mdsd_verifier_kind kind = MDSD_VERIFIER_OTM;
    mdsd_blockv_kind bkind = MDSD_BLOCKV_COUNT;
    mdsd_err e;
    if (!optimum && mdsd_blockv_parse(vn, &bkind, NULL) != MDSD_OK &&
        mdsd_verifier_parse(vn, &kind, &e) != MDSD_OK) { /* e: not err, which the message fills */
        char bvs[128], opts[128];
        return mdsd_fail(err, MDSD_EINVAL, "%s; or a block verifier (%s), or %s", e.msg,
                         mdsd_registry_join(MDSD_NAME_BLOCK_VERIFIER, -1, ", ", bvs, sizeof bvs),
                         mdsd_registry_join(MDSD_NAME_BLOCK_OPTIMUM, -1, ", ", opts, sizeof opts));
    }
    const mdsd_blockv_ops *bv = mdsd_blockv(bkind);
    /* the registry's copy of the name, not the caller's string (which may not outlive the
     * result) */
    out->verifier = optimum ? optimum->name
                    : bv    ? mdsd_blockv_name(bkind)
                            : mdsd_verifier_name(kind);
    if (live && (bv || opt_token || tiebreak || opt_block))
        return mdsd_fail_option(err, MDSD_EUNSUPPORTED, MDSD_OPTION_HORIZON,
                                "`horizon`: token-level verifiers only, not %s", vn);
    int rc = live ? mdsd_block_live_exact(m, pol, kind, *live, bo, &out->live, NULL, err) : MDSD_OK;
    if (rc)
        return rc;
    mdsd_block_result *r = &out->r;
    if (opt_token && o->optimal) {
        *r = out->opt;
        return MDSD_OK;
    }
    if (opt_token)
        return mdsd_block_optimal_token(m, pol, bo, r, err);
    if (tiebreak)
        return mdsd_block_otm_tiebreak(m, pol, bo, r, err);
    if (opt_block)
        return mdsd_block_optimal_block(m, pol, bo, r, err);
    if (bv && o->trials > 0)
        return (o->simulate ? mdsd_blockv_simulate : mdsd_blockv_sampled)(m, pol, bv, bo, r, err);
    if (bv)
        return mdsd_blockv_exact(m, pol, bv, bo, r, err);
    if (o->trials > 0)
        return (o->simulate ? mdsd_block_simulate : mdsd_block_sampled)(m, pol, kind, bo, r, err);
    return mdsd_block_exact(m, pol, kind, bo, r, err);
}

int mdsd_block_markov_eval(const mdsd_block_markov_opts *o, const size_t *live,
                           mdsd_block_markov_run *out, mdsd_err *err)
{
    memset(out, 0, sizeof *out);
    if (!o || (!o->markov && !o->p && !o->q))
        return usage(&out->usage, err, "%s", "missing `markov FILE`");
    if (o->markov && (o->p || o->q))
        return usage(&out->usage, err, "%s", "a Markov pair from a file (markov) or from arrays "
                     "(V, p, q), not both");
    int rc = check_route(o, &out->usage, err);
    if (rc == MDSD_OK)
        rc = policy_of(o, &out->pol, &out->usage, err);
    if (rc)
        return rc;
    mdsd_markov m = {0};
    if ((rc = o->markov ? mdsd_markov_read(o->markov, &m, err)
                        : mdsd_markov_from_arrays(o->V, o->p, o->q, &m, err)))
        return rc;
    mdsd_block_opts bo;
    mdsd_block_opts_init(&bo);
    bo.trials = o->trials;
    bo.seed = o->seed;
    bo.threads = o->threads;
    bo.max_seconds = o->force ? INFINITY : 0.0;
    out->V = m.V;
    out->route = o->trials > 0 ? (o->simulate ? "simulated" : "sampled") : "exact";
    if (o->optimal)
        rc = mdsd_block_optimal_token(&m, &out->pol, &bo, &out->opt, err);
    if (rc == MDSD_OK)
        rc = run_route(o, &m, &out->pol, &bo, live, out, err);
    mdsd_markov_free(&m);
    return rc;
}

/* The policy as the public API describes it. */
static void policy_public(const mdsd_policy *pol, mdsd_block_policy *out)
{
    memset(out, 0, sizeof *out);
    out->tree = pol->kind == MDSD_POLICY_TREE;
    out->sequences = pol->sequences;
    out->depth = pol->depth;
    for (size_t d = 0; out->tree && d < pol->depth; d++)
        out->widths[d] = pol->width[d];
    out->scheme = mdsd_scheme_name(pol->scheme);
    mdsd_policy_describe(pol, out->text, sizeof out->text);
}

/* mdsd_block_markov, and the live-decoding horizon *live (NULL: none) into *lr;
 * run->usage: whether a failure is a refused option; policy (NULL: not wanted). */
static int markov_public(const mdsd_block_markov_opts *o, const size_t *live,
                         mdsd_block_markov_result *res, mdsd_block_markov_live_result *lr,
                         mdsd_run_opts *run, mdsd_block_policy *policy, mdsd_err *err)
{
    mdsd_block_markov_run out;
    memset(res, 0, sizeof *res);
    mdsd_run_opts r;
    int rc = o ? mdsd_opts_check(o->size, sizeof *o, "mdsd_block_markov_opts", NULL, err) : MDSD_OK;
    if (rc == MDSD_OK)
        rc = mdsd_run_opts_take(run, "block", &r, err);
    if (rc == MDSD_OK && live && o && o->trials)
        rc = mdsd_fail(err, MDSD_EINVAL, "%s", "live decoding is exact: drop `trials`");
    if (rc)
        return rc;
    rc = mdsd_block_markov_eval(o, live, &out, err);
    mdsd_run_opts_usage(run, out.usage);
    if (rc)
        return rc;
    if (lr) {
        lr->horizon = out.live.horizon;
        lr->live_block_efficiency = out.live.live;
        lr->position_block_efficiency = out.live.positions;
        lr->live_calls = out.live.calls;
    }
    if (policy)
        policy_public(&out.pol, policy);
    const mdsd_block_result *b = &out.r;
    res->V = out.V;
    res->depth = out.pol.depth;
    res->tree_size = mdsd_policy_size(&out.pol);
    res->route = out.route;
    res->verifier = out.verifier;
    res->block_efficiency = b->tau;
    res->se = b->se;
    res->trials = b->trials;
    for (size_t d = 0; d <= out.pol.depth; d++) {
        res->reach[d] = b->reach[d];
        res->per_depth[d] = d ? b->rate[d] : 1.0;
    }
    res->optimal_token = o->optimal ? out.opt.tau : NAN;
    return MDSD_OK;
}

mdsd_status mdsd_block_markov(const mdsd_block_markov_opts *o, mdsd_block_markov_result *res, mdsd_err *err)
{
    return mdsd_block_markov_with(o, NULL, 0, res, NULL, NULL, err);
}

mdsd_status mdsd_block_markov_live(const mdsd_block_markov_opts *o, size_t horizon,
                                   mdsd_block_markov_result *res,
                                   mdsd_block_markov_live_result *live, mdsd_err *err)
{
    if (!live)
        return mdsd_fail(err, MDSD_EINVAL, "block: no result given (NULL)");
    return mdsd_block_markov_with(o, NULL, horizon, res, live, NULL, err);
}

mdsd_status mdsd_block_markov_with(const mdsd_block_markov_opts *o, mdsd_run_opts *run,
                                   size_t horizon, mdsd_block_markov_result *res,
                                   mdsd_block_markov_live_result *live, mdsd_block_policy *policy,
                                   mdsd_err *err)
{
    if (!res)
        return mdsd_fail(err, MDSD_EINVAL, "block: no result given (NULL)");
    if (live)
        memset(live, 0, sizeof *live);
    return markov_public(o, live ? &horizon : NULL, res, live, run, policy, err);
}
