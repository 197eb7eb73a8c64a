/* The public check call (mdsd/check.h), through the public headers only: the
 * outcomes of a run match the registry's list and do not depend on `only`,
 * the callbacks see each check once, bad options are refused naming the
 * option, and mdsd_interrupt stops the run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

static mdsd_check_report *run(const char *only, size_t count, uint64_t seed)
{
    mdsd_check_opts o;
    mdsd_check_opts_init(&o);
    o.only = only, o.count = count, o.seed = seed, o.trials = 200;
    mdsd_check_report *rep = (mdsd_check_report *)1;
    mdsd_err err;
    cr_assert_eq(mdsd_check_run(&o, &rep, &err), MDSD_OK, "%s: %s", only, err.msg);
    cr_assert_not_null(rep);
    return rep;
}

static const mdsd_check_outcome *named(const mdsd_check_report *rep, const char *name)
{
    for (size_t i = 0; i < rep->n_checks; i++)
        if (!strcmp(rep->checks[i]->name, name))
            return rep->checks[i];
    cr_assert_fail("%s not in the report", name);
    return NULL;
}

Test(check_api, run_reports_settings_and_outcomes)
{
    mdsd_check_report *rep = run("hu-Q-cps,hu-Q-wor,k2-closed-form", 4, 3);
    cr_expect_str_eq(rep->profile, "quick");
    cr_expect_eq(rep->count, 4);
    cr_expect_eq(rep->seed, 3);
    cr_expect_eq(rep->trials, 200);
    cr_expect_null(rep->family);
    cr_assert_eq(rep->n_checks, 3);
    /* registry order, not the order asked for */
    cr_expect_str_eq(rep->checks[0]->name, "k2-closed-form");
    const mdsd_check_outcome *cps = named(rep, "hu-Q-cps"), *wor = named(rep, "hu-Q-wor");
    cr_expect_eq(cps->status, MDSD_CHECK_PASS);
    cr_expect_str_eq(cps->status_name, "pass");
    cr_expect(cps->must_hold && cps->instances == 4 && cps->worst <= cps->tol, "%g", cps->worst);
    cr_expect_eq(wor->status, MDSD_CHECK_FINDING);
    cr_expect(!wor->must_hold && wor->has_worst && wor->worst_p && wor->worst_q, "worst instance");
    double sum = 0;
    for (size_t i = 0; i < wor->worst_V; i++)
        sum += wor->worst_p[i];
    cr_expect_float_eq(sum, 1.0, 1e-9, "worst p sums to %g", sum);
    cr_expect(wor->worst_family && wor->worst_note[0] && wor->summary[0], "detail text");
    cr_expect_eq(rep->passed + rep->findings, 3);
    cr_expect_eq(rep->failed + rep->skipped, 0);

    /* the registry's fields are the list's */
    mdsd_check_opts o;
    mdsd_check_opts_init(&o);
    o.only = "hu-Q-wor";
    mdsd_check_report *list = NULL;
    mdsd_err err;
    cr_assert_eq(mdsd_check_list(&o, &list, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(list->n_checks, 1);
    const mdsd_check_outcome *l = list->checks[0];
    cr_expect_str_eq(l->source, wor->source);
    cr_expect_str_eq(l->claim, wor->claim);
    cr_expect_str_eq(l->bound, wor->bound);
    cr_expect_str_eq(l->families, wor->families);
    cr_expect(l->tol == wor->tol && l->V_min == wor->V_min && l->V_max == wor->V_max, "fields");
    cr_expect(isnan(l->worst) && l->instances == 0, "a list runs nothing");

    /* a check's result does not depend on which others run with it */
    mdsd_check_report *alone = run("hu-Q-wor", 4, 3);
    const mdsd_check_outcome *a = alone->checks[0];
    cr_expect(a->worst == wor->worst && a->cases == wor->cases && a->worst_draw == wor->worst_draw,
              "alone %g vs %g", a->worst, wor->worst);
    cr_expect_str_eq(a->summary, wor->summary);
    mdsd_check_report *other = run("hu-Q-wor", 4, 4);
    cr_expect(strcmp(other->checks[0]->summary, wor->summary) || other->checks[0]->worst != wor->worst,
              "another seed gives other instances");
    mdsd_check_report_free(other);
    mdsd_check_report_free(alone);
    mdsd_check_report_free(list);
    mdsd_check_report_free(rep);
    mdsd_check_report_free(NULL);
}

static struct {
    size_t calls, progress, last_done, last_total;
    char names[256];
} seen;

static void on_check(const mdsd_check_outcome *o, void *ctx)
{
    cr_expect_eq(ctx, &seen);
    seen.calls++;
    strncat(seen.names, o->name, sizeof seen.names - strlen(seen.names) - 2);
    strcat(seen.names, " ");
}

static void on_progress(uint64_t done, uint64_t total, void *ctx)
{
    cr_expect_eq(ctx, &seen);
    seen.progress++;
    seen.last_done = done, seen.last_total = total;
}

Test(check_api, callbacks_see_each_check_once_and_family_skips)
{
    memset(&seen, 0, sizeof seen);
    mdsd_check_opts o;
    mdsd_check_opts_init(&o);
    o.only = "k2-closed-form,uniform-closed-form";
    o.family = "dirichlet", o.count = 3;
    o.on_check = on_check, o.on_progress = on_progress, o.progress_ctx = &seen;
    mdsd_check_report *rep = NULL;
    mdsd_err err;
    cr_assert_eq(mdsd_check_run(&o, &rep, &err), MDSD_OK, "%s", err.msg);
    cr_expect_eq(seen.calls, 2);
    cr_expect_str_eq(seen.names, "k2-closed-form uniform-closed-form ");
    cr_expect(seen.progress == 2 && seen.last_done == 2 && seen.last_total == 2, "progress");
    cr_expect_str_eq(rep->family, "dirichlet");
    cr_expect_eq(named(rep, "uniform-closed-form")->status, MDSD_CHECK_SKIP);
    cr_expect_eq(rep->skipped, 1);
    cr_expect_eq(rep->passed, 1);
    mdsd_check_report_free(rep);
    /* a list leaves out the checks that do not use the family */
    cr_assert_eq(mdsd_check_list(&o, &rep, &err), MDSD_OK, "%s", err.msg);
    cr_expect_eq(rep->n_checks, 1);
    cr_expect_str_eq(rep->checks[0]->name, "k2-closed-form");
    cr_expect_str_eq(rep->checks[0]->families, "all");
    cr_expect_str_eq(rep->checks[0]->bound, "<= 1e-07");
    mdsd_check_report_free(rep);
    o.only = "bernoulli-closed-form", o.family = NULL;
    cr_assert_eq(mdsd_check_list(&o, &rep, &err), MDSD_OK, "%s", err.msg);
    cr_expect_str_eq(rep->checks[0]->families, "bernoulli");
    cr_expect(rep->checks[0]->V_min == 2 && rep->checks[0]->V_max == 2, "V range");
    mdsd_check_report_free(rep);
}

Test(check_api, bad_options_are_refused_naming_the_option)
{
    static const struct {
        const char *profile, *family, *only;
        uint64_t trials;
        const char *msg;
    } cases[] = {
        {"slow", NULL, NULL, 0, "profile: unknown profile 'slow'"},
        {NULL, "nope", NULL, 0, "family: unknown toy family 'nope'"},
        {NULL, NULL, "k2-closed-form,nope", 0, "only: unknown check 'nope'"},
        {NULL, NULL, NULL, 100000001, "trials = 100000001 must be in [1, 10^8]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        mdsd_check_opts o;
        mdsd_check_opts_init(&o);
        o.profile = cases[k].profile, o.family = cases[k].family, o.only = cases[k].only;
        o.trials = cases[k].trials;
        mdsd_check_report *rep = (mdsd_check_report *)1;
        mdsd_err err;
        cr_expect_eq(mdsd_check_run(&o, &rep, &err), MDSD_EINVAL, "case %zu", k);
        cr_expect_null(rep, "case %zu", k);
        cr_expect(strstr(err.msg, cases[k].msg), "case %zu: %s", k, err.msg);
    }
    mdsd_check_opts o;
    mdsd_check_opts_init(&o);
    o.threads = -1;
    mdsd_check_report *rep;
    mdsd_err err;
    cr_expect_eq(mdsd_check_run(&o, &rep, &err), MDSD_EINVAL);
    cr_expect(strstr(err.msg, "threads"), "%s", err.msg);
    cr_expect_eq(mdsd_check_run(NULL, &rep, &err), MDSD_EINVAL);
    cr_expect_eq(mdsd_check_run(&o, NULL, &err), MDSD_EINVAL);
    cr_expect_eq(mdsd_check_list(&o, NULL, NULL), MDSD_EINVAL);
}

Test(check_api, interrupt_stops_the_run)
{
    mdsd_check_opts o;
    mdsd_check_opts_init(&o);
    o.only = "k2-closed-form";
    mdsd_check_report *rep = (mdsd_check_report *)1;
    mdsd_err err;
    mdsd_interrupt();
    int rc = mdsd_check_run(&o, &rep, &err);
    mdsd_interrupt_clear();
    cr_expect_eq(rc, MDSD_EINTERRUPTED, "%d: %s", rc, err.msg);
    cr_expect_null(rep);
    cr_expect(strstr(err.msg, "interrupted"), "%s", err.msg);
    cr_assert_eq(mdsd_check_run(&o, &rep, &err), MDSD_OK, "after the clear: %s", err.msg);
    mdsd_check_report_free(rep);
}
