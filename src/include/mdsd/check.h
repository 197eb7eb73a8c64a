/* mdsd/check.h - the theorem regression suite (`mdsd check`) from C: each
 * registered check evaluates a published result (theorem, closed form,
 * algorithm, empirical claim) on random instances of the toy families
 * (mdsd/toy.h) and reports its worst deviation. Must-hold checks pass or
 * fail against their tolerance; formulas and claims under test are findings,
 * with their worst instance. The CLI prints what mdsd_check_run returns, so
 * both give the same results for the same options.
 *
 * Reproducibility: instance i of check C draws from the stream (seed, C, i),
 * so a result depends on (check, seed, count, family, trials) only: not on
 * `only`, the order or the thread count. */
#ifndef MDSD_PUBLIC_CHECK_H
#define MDSD_PUBLIC_CHECK_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MDSD_CHECK_PASS,
    MDSD_CHECK_FAIL,
    MDSD_CHECK_FINDING, /* a published formula or claim under test: never a failure */
    MDSD_CHECK_SKIP     /* the check does not draw from the family asked for */
} mdsd_check_status;

/* One check: what the registry says of it, and (mdsd_check_run) what it found.
 * Every pointer is the library's (static text, or storage of the report that
 * holds the outcome, valid until mdsd_check_report_free). The library owns
 * these structs: a later release may append fields. */
typedef struct {
    const char *name;
    const char *source;     /* paper, theorem / equation */
    const char *claim;      /* what is asserted */
    const char *measure;    /* what `worst` measures */
    int must_hold;          /* 1: pass or fail; 0: a finding */
    int pvalue;             /* 1: worst is the smallest p-value times the number of tests
                             * (Bonferroni), failing below tol; 0: a deviation failing above */
    double tol;
    const char *bound;      /* the tolerance as text: "<= 1e-09" or ">= 1e-06" */
    const char *families;   /* the toy families drawn from: "all" or "uniform,zipf" */
    size_t V_min, V_max;    /* vocabulary sizes drawn (bernoulli: 2) */
    /* ---- results (mdsd_check_run; in a list: status PASS, counts 0, worst NaN) ---- */
    mdsd_check_status status;
    const char *status_name;     /* "pass", "fail", "finding", "skip" */
    size_t instances;            /* instances the claim was evaluated on */
    size_t draws;                /* instances drawn (some may miss a hypothesis) */
    size_t cases;                /* comparisons made */
    size_t counterexamples;      /* cases beyond the tolerance */
    size_t errors;               /* instances on which a solver failed (the check fails) */
    double worst;                /* NaN when nothing was evaluated */
    const char *summary;         /* check-specific totals; "" if none */
    const char *error;           /* the first solver failure; "" if none */
    /* The worst instance (has_worst): draw index, family, V, n of the worst case,
     * p [worst_V], the drafters' rows q [worst_nq * worst_V] (row 0 is q), and
     * what was compared. */
    int has_worst;
    size_t worst_draw;
    const char *worst_family;
    size_t worst_V, worst_n, worst_nq;
    const double *worst_p, *worst_q;
    const char *worst_note;
} mdsd_check_outcome;

typedef struct {
    size_t size;          /* set by the _init below; checked by the library (mdsd/common.h) */
    const char *profile;  /* "quick" (NULL: 25 instances, 3000 trials) or "thorough"
                           * (10^4 instances, 10^4 trials): the defaults of count, trials */
    size_t count;         /* instances per check (0: the profile's); a check with a
                           * hypothesis draws until count instances satisfy it, at most
                           * 20 * count */
    uint64_t seed;        /* _init: 1 */
    uint64_t trials;      /* Monte-Carlo trials per verifier and instance, <= 10^8
                           * (0: the profile's) */
    const char *family;   /* only instances of this toy family (mdsd/toy.h); checks that
                           * do not use it are skipped (listed: left out); NULL: all */
    const char *only;     /* only these checks, "name,name"; NULL: every check */
    int threads;          /* OpenMP threads of the Monte-Carlo runs (_init: 1; 0: OpenMP's
                           * default); the results do not depend on it */
    /* Called in the calling thread as each check finishes (NULL: none), in registry
     * order, with the outcome the report will hold. */
    void (*on_check)(const mdsd_check_outcome *outcome, void *ctx);
    /* Called as checks finish: checks done, checks selected (NULL: none). */
    void (*on_progress)(uint64_t done, uint64_t total, void *ctx);
    void *progress_ctx;   /* passed to both callbacks */
} mdsd_check_opts;

/* What a run or a list returns: the settings used and one outcome per check
 * selected (registry order). Free with mdsd_check_report_free. */
typedef struct {
    const char *profile;        /* "quick" or "thorough" */
    size_t count;               /* instances per check, as used */
    uint64_t seed, trials;
    const char *family;         /* NULL: every family */
    size_t passed, failed, findings, skipped;
    size_t n_checks;
    const mdsd_check_outcome *const *checks; /* [n_checks] */
} mdsd_check_report;

/* Zeroes opts, sets seed = 1, threads = 1 and size. */
MDSD_API void mdsd_check_opts_init(mdsd_check_opts *opts, size_t size);
#define mdsd_check_opts_init(opts) mdsd_check_opts_init((opts), sizeof *(opts))

/* Runs the checks selected and sets *report (NULL on failure). A must-hold check
 * that fails is a result (report->failed), not an error of this call, which fails
 * on bad options (MDSD_EINVAL, the message naming the option: "family: ...",
 * "only: ...", "count ...", "trials ...", "profile: ..."), memory, or
 * mdsd_interrupt (MDSD_EINTERRUPTED, within one instance). */
MDSD_API mdsd_status mdsd_check_run(const mdsd_check_opts *opts, mdsd_check_report **report,
                                    mdsd_err *err);
/* The checks selected by only and family, without running them (outcomes hold the
 * registry's fields). count, trials, seed, threads and the callbacks are not used. */
MDSD_API mdsd_status mdsd_check_list(const mdsd_check_opts *opts, mdsd_check_report **report,
                                     mdsd_err *err);
/* Accepts NULL. */
MDSD_API void mdsd_check_report_free(mdsd_check_report *report);

#ifdef __cplusplus
}
#endif
#endif
