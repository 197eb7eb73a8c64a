/* checkjob.c - the `mdsd check` job (mdsd/check.h): selects the registered
 * checks (check.h) by name and family, runs them with the real solvers and
 * hands back one outcome per check. The CLI and Python call mdsd_check_run
 * and mdsd_check_list, so both print the same results. */
#include <mdsd/check.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "opts.h"

#define CHECK_MAX_TRIALS 100000000ULL /* as the CLI's --trials documents */

/* An outcome with the storage its strings point into. */
typedef struct {
    mdsd_check_outcome pub;
    mdsd_check_result res;
    char families[128], bound[32];
} outcome_box;

/* The report the caller sees is the first member: mdsd_check_report_free casts back. */
typedef struct {
    mdsd_check_report pub;
    char family[64];
    size_t n_selected;
    outcome_box *boxes; /* [mdsd_check_count()], box i = check i */
    const mdsd_check_outcome **ptrs;
} report_box;

void (mdsd_check_opts_init)(mdsd_check_opts *opts, size_t size)
{
    mdsd_check_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.seed = 1;
    d.threads = 1;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

static void families_text(const mdsd_check *c, char *buf, size_t size)
{
    size_t len = 0, k = 0;
    buf[0] = '\0';
    for (int f = 0; f < MDSD_TOY_FAMILIES && len < size; f++)
        if (mdsd_check_uses_family(c, f))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", k++ ? "," : "",
                                    mdsd_toy_family_name((mdsd_toy_family)f));
    if (k == MDSD_TOY_FAMILIES)
        snprintf(buf, size, "all");
}

/* The registry's fields of box->pub; the result fields from box->res
 * (a list: none run, status pass, worst NaN). */
static void fill_outcome(outcome_box *b, const mdsd_check *c)
{
    mdsd_check_outcome *o = &b->pub;
    const mdsd_check_result *r = &b->res;
    families_text(c, b->families, sizeof b->families);
    mdsd_check_bound_text(c, b->bound, sizeof b->bound);
    o->name = c->name;
    o->source = c->source;
    o->claim = c->claim;
    o->measure = c->measure;
    o->must_hold = c->must_hold;
    o->pvalue = c->pvalue;
    o->tol = c->tol;
    o->bound = b->bound;
    o->families = b->families;
    o->V_min = c->V_min;
    o->V_max = c->V_max;
    o->status = r->check ? r->status : MDSD_CHECK_PASS;
    o->status_name = mdsd_check_status_name(o->status);
    o->instances = r->instances;
    o->draws = r->draws;
    o->cases = r->cases;
    o->counterexamples = r->counterexamples;
    o->errors = r->errors;
    o->worst = r->check ? r->worst : NAN;
    o->summary = r->summary;
    o->error = r->error;
    o->has_worst = r->has_worst;
    o->worst_draw = r->worst_draw;
    o->worst_family = r->has_worst ? mdsd_toy_family_name(r->worst_family) : NULL;
    o->worst_V = r->worst_V;
    o->worst_n = r->worst_n;
    o->worst_nq = r->worst_nq;
    o->worst_p = r->has_worst ? r->worst_p : NULL;
    o->worst_q = r->has_worst ? r->worst_q : NULL;
    o->worst_note = r->worst_note;
}

void mdsd_check_report_free(mdsd_check_report *report)
{
    if (!report)
        return;
    report_box *rb = (report_box *)report;
    for (size_t i = 0; rb->boxes && i < mdsd_check_count(); i++)
        mdsd_check_result_free(&rb->boxes[i].res); /* a box not run holds NULLs */
    free(rb->boxes);
    free(rb->ptrs);
    free(rb);
}

/* Marks the checks named in `only` ("a,b"; NULL: all) in sel[]. */
static int select_checks(const char *only, bool *sel, mdsd_err *err)
{
    size_t n = mdsd_check_count();
    for (size_t i = 0; i < n; i++)
        sel[i] = only == NULL;
    if (!only)
        return MDSD_OK;
    char *copy = strdup(only), *save = NULL;
    if (!copy)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        mdsd_err e;
        const mdsd_check *c = mdsd_check_find(name, &e);
        if (!c) {
            free(copy);
            return mdsd_fail(err, e.code, "only: %s", e.msg);
        }
        for (size_t i = 0; i < n; i++)
            sel[i] |= mdsd_check_get(i) == c;
    }
    free(copy);
    return MDSD_OK;
}

/* Validates opts and sets up the report with the settings used and a box per
 * check selected (for a list: per check selected that uses the family). */
static int start(const mdsd_check_opts *opts, bool listing, mdsd_check_cfg *cfg,
                 report_box **out, mdsd_err *err)
{
    *out = NULL;
    if (!opts)
        return mdsd_fail(err, MDSD_EINVAL, "check: no options given (NULL)");
    int rc = mdsd_opts_check(opts->size, sizeof *opts, "mdsd_check_opts", NULL, err);
    if (rc)
        return rc;
    mdsd_check_profile profile = MDSD_CHECK_QUICK;
    mdsd_err e;
    if (opts->profile && mdsd_check_profile_parse(opts->profile, &profile, &e))
        return mdsd_fail(err, e.code, "profile: %s", e.msg);
    mdsd_check_cfg_init(cfg, profile);
    cfg->seed = opts->seed;
    cfg->threads = opts->threads;
    if (opts->count)
        cfg->count = opts->count;
    if (opts->trials)
        cfg->trials = opts->trials;
    if (opts->threads < 0)
        return mdsd_fail(err, MDSD_EINVAL, "check: threads = %d is negative", opts->threads);
    if (!listing && cfg->trials > CHECK_MAX_TRIALS)
        return mdsd_fail(err, MDSD_EINVAL, "check: trials = %llu must be in [1, 10^8]",
                         (unsigned long long)cfg->trials);
    if (opts->family) {
        mdsd_toy_family f;
        if (mdsd_toy_family_parse(opts->family, &f, &e))
            return mdsd_fail(err, e.code, "family: %s", e.msg);
        cfg->family = (int)f;
    }
    size_t n = mdsd_check_count();
    bool *sel = calloc(n, sizeof *sel);
    report_box *rb = calloc(1, sizeof *rb);
    if (rb) {
        rb->boxes = calloc(n, sizeof *rb->boxes);
        rb->ptrs = calloc(n, sizeof *rb->ptrs);
    }
    if (!sel || !rb || !rb->boxes || !rb->ptrs) {
        free(sel);
        if (rb)
            mdsd_check_report_free(&rb->pub);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    if ((rc = select_checks(opts->only, sel, err))) {
        free(sel);
        mdsd_check_report_free(&rb->pub);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        if (sel[i] && (!listing || mdsd_check_uses_family(mdsd_check_get(i), cfg->family)))
            rb->ptrs[rb->n_selected++] = &rb->boxes[i].pub;
    free(sel);
    mdsd_check_report *r = &rb->pub;
    r->profile = profile == MDSD_CHECK_THOROUGH ? "thorough" : "quick";
    r->count = cfg->count;
    r->seed = cfg->seed;
    r->trials = cfg->trials;
    if (opts->family) {
        snprintf(rb->family, sizeof rb->family, "%s", mdsd_toy_family_name((mdsd_toy_family)cfg->family));
        r->family = rb->family;
    }
    r->checks = rb->ptrs;
    *out = rb;
    return MDSD_OK;
}

/* The index in the registry of the box behind ptrs[k]. */
static size_t box_index(const report_box *rb, size_t k)
{
    return (size_t)((const outcome_box *)rb->ptrs[k] - rb->boxes);
}

mdsd_status mdsd_check_list(const mdsd_check_opts *opts, mdsd_check_report **report,
                            mdsd_err *err)
{
    if (!report)
        return mdsd_fail(err, MDSD_EINVAL, "check: no report pointer given (NULL)");
    mdsd_check_cfg cfg;
    report_box *rb;
    int rc = start(opts, true, &cfg, &rb, err);
    if (rc) {
        *report = NULL;
        return rc;
    }
    for (size_t k = 0; k < rb->n_selected; k++) {
        size_t i = box_index(rb, k);
        fill_outcome(&rb->boxes[i], mdsd_check_get(i));
    }
    rb->pub.n_checks = rb->n_selected;
    *report = &rb->pub;
    return MDSD_OK;
}

mdsd_status mdsd_check_run(const mdsd_check_opts *opts, mdsd_check_report **report,
                           mdsd_err *err)
{
    if (!report)
        return mdsd_fail(err, MDSD_EINVAL, "check: no report pointer given (NULL)");
    *report = NULL;
    mdsd_check_cfg cfg;
    report_box *rb;
    int rc = start(opts, false, &cfg, &rb, err);
    if (rc)
        return rc;
    mdsd_check_env env;
    mdsd_check_env_default(&env);
    mdsd_check_report *r = &rb->pub;
    size_t total = rb->n_selected;
    for (size_t k = 0; k < total; k++) {
        size_t i = box_index(rb, k);
        outcome_box *b = &rb->boxes[i];
        if ((rc = mdsd_check_run_one(mdsd_check_get(i), &env, &cfg, &b->res, err)))
            break; /* the report's free releases what the run allocated */
        fill_outcome(b, mdsd_check_get(i));
        r->n_checks++;
        r->passed += b->res.status == MDSD_CHECK_PASS;
        r->failed += b->res.status == MDSD_CHECK_FAIL;
        r->findings += b->res.status == MDSD_CHECK_FINDING;
        r->skipped += b->res.status == MDSD_CHECK_SKIP;
        if (opts->on_check)
            opts->on_check(&b->pub, opts->progress_ctx);
        if (opts->on_progress)
            opts->on_progress(k + 1, total, opts->progress_ctx);
    }
    if (rc) {
        mdsd_check_report_free(r);
        return rc;
    }
    *report = r;
    return MDSD_OK;
}
