/* bound_routes.c - alpha* by every method that applies, timed, with their
 * largest disagreement: `mdsd bound --method all` and mdsd_alpha_all (one
 * loop for both, so the CLI and Python report the same numbers). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bound.h"

/* The order routes run and are reported in. */
static const mdsd_bound_method route_order[MDSD_BOUND_ROUTES] = {
    MDSD_BOUND_SORT, MDSD_BOUND_K2, MDSD_BOUND_MAXFLOW, MDSD_BOUND_BRUTE, MDSD_BOUND_LP_REDUCED,
    MDSD_BOUND_LP_FULL};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

bool mdsd_bound_route_skipped(int rc) { return rc == MDSD_ETOOBIG || rc == MDSD_EUNSUPPORTED; }

static bool is_lp(mdsd_bound_method m)
{
    return m == MDSD_BOUND_LP_FULL || m == MDSD_BOUND_LP_REDUCED;
}

int mdsd_bound_all(const double *p, const mdsd_scheme *s, const mdsd_bound_opts *opts,
                   unsigned char *subsets, const double *planted, mdsd_bound_routes *out,
                   mdsd_err *err)
{
    memset(out, 0, sizeof *out);
    int failed = MDSD_OK;
    mdsd_err first_failure;
    mdsd_err_clear(&first_failure);
    for (size_t k = 0; k < MDSD_BOUND_ROUTES; k++) {
        mdsd_bound_route *r = &out->route[k];
        r->method = route_order[k];
        r->rc = MDSD_EUNSUPPORTED;
        r->res.subset = subsets ? subsets + k * s->V : NULL;
        r->applies = mdsd_bound_applies(r->method, s);
        if (!r->applies)
            continue;
        mdsd_err e;
        mdsd_err_clear(&e);
        double t0 = now();
        r->rc = mdsd_bound_alpha(p, s, r->method, opts, NULL, &r->res, &e);
        r->seconds = now() - t0;
        snprintf(r->why, sizeof r->why, "%s", r->rc ? e.msg : "");
        /* Tests plant an error in one route to show that a disagreement
         * fails the command (the CLI reads it from its test hook). */
        if (r->rc == MDSD_OK && planted && planted[r->method] != 0)
            r->res.alpha += planted[r->method];
        if (r->rc == MDSD_OK)
            out->ran++;
        else if (!mdsd_bound_route_skipped(r->rc) && failed == MDSD_OK)
            failed = r->rc, first_failure = e;
    }
    out->alpha = NAN;
    if (out->ran == 0) {
        if (failed) {
            *err = first_failure;
            return failed;
        }
        return mdsd_fail(err, MDSD_ETOOBIG, "no method could run: %s",
                         out->route[MDSD_BOUND_ROUTES - 1].why);
    }
    /* A cross-check that fails must fail the call: two routes that disagree
     * beyond their tolerance (1e-9 between exact routes, 1e-7 where an LP's
     * is involved) are an error naming the pair (the largest excess). */
    double worst = 0.0, excess = 0.0;
    mdsd_bound_method preferred = mdsd_bound_auto_method(s);
    mdsd_err disagreement;
    mdsd_err_clear(&disagreement);
    for (size_t a = 0; a < MDSD_BOUND_ROUTES; a++) {
        const mdsd_bound_route *ra = &out->route[a];
        if (ra->rc)
            continue;
        if (isnan(out->alpha) || ra->method == preferred)
            out->alpha = ra->res.alpha;
        for (size_t b = a + 1; b < MDSD_BOUND_ROUTES; b++) {
            const mdsd_bound_route *rb = &out->route[b];
            if (rb->rc)
                continue;
            double d = fabs(ra->res.alpha - rb->res.alpha);
            if (isnan(d) || (!isnan(worst) && d > worst))
                worst = d;
            double tol = is_lp(ra->method) || is_lp(rb->method) ? MDSD_BOUND_ROUTES_LP_TOL
                                                                 : MDSD_BOUND_ROUTES_EXACT_TOL;
            if (!(d <= tol) && !(d - tol <= excess)) {
                excess = isnan(d) ? INFINITY : d - tol;
                mdsd_fail(&disagreement, MDSD_ESOLVER, "routes disagree: %s gives %.17g, %s "
                          "gives %.17g (|difference| %.3g > tolerance %.0e); please report this "
                          "instance", mdsd_bound_method_name(ra->method), ra->res.alpha,
                          mdsd_bound_method_name(rb->method), rb->res.alpha, d, tol);
            }
        }
    }
    out->max_disagreement = worst;
    if (disagreement.code && failed == MDSD_OK) {
        failed = disagreement.code;
        first_failure = disagreement;
    }
    out->failures = failed != MDSD_OK;
    if (failed)
        *err = first_failure;
    return failed;
}
