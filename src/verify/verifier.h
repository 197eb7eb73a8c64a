/* verifier.h - multi-draft verifiers (MATH.md section 3): given the target p
 * and the n draft tokens, output one token y that follows p exactly; the
 * verifier *accepts* when y is one of the drafts.
 *
 *   sd       Leviathan / Chen speculative sampling          n = 1
 *   rrs      recursive rejection sampling (SpecInfer)      iid, or multi
 *   rrsw     recursive SD without replacement (Jeon et al.) wor
 *   kseq     SpecTr's k-Seq                                 iid
 *   spechub  SpecHub's transport plan                       hub (n = 2)
 *   greedy   Hu et al. section 5                            greedy
 *   is       Khisti et al.'s importance-sampling selection  iid, n = 2 (pairs for n > 2)
 *   otm      the optimal plan of the solved full LP         any scheme (toy V)
 *   ot       alpha* at any V (the key race, MATH §3.10)     iid, greedy, hub
 *
 * Audit variants (verify_<name>.c says what each reproduces):
 *   is-face            is, n = 3, best stage-1 optimum (Remark 4)   iid, n = 3
 *   rrs-skipdup        rrs skipping repeated drafts (NOT valid, n >= 3)   iid
 *   spechub-hubaccept  spechub accepting the hub outright when p(a) > 1 - 1e-3 (NOT valid)
 *   rrsw-f32           rrsw with float32 q(x)/(1 - sum earlier) (NOT valid)  wor
 *
 * Use: mdsd_verifier_alloc does the O(V) per-position set-up (residuals,
 * alias tables, rho*, LP, ...) once; mdsd_verifier_verify then costs O(n) or
 * O(n log V) per call and is thread-safe for distinct rngs. The drafts passed
 * to verify must come from the scheme given at alloc (mdsd_sampler_draw).
 * mdsd_verifier_exact gives the exact acceptance rate and the per-draft rates
 * where a closed form or an exact enumeration exists.
 *
 * Each verifier lives in its own verify_<name>.c and exports one
 * mdsd_verifier_ops table (below); verifier.c dispatches through them. The
 * names, default schemes and flags of every kind are the registry's
 * (registry.c); the ops' own name and scheme equal them (test_registry.c). */
#ifndef MDSD_VERIFIER_H
#define MDSD_VERIFIER_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "err.h"
#include "scheme.h"

/* mdsd_verifier_kind, mdsd_verifier_opts: the public header; the audit
 * variants' kinds (MDSD_VERIFIER_IS_FACE .., MDSD_VERIFIER_KINDS) and every
 * name: the registry. */
#include <mdsd/verifier.h>
#include "registry.h"

/* Default guard of the rrsw exact rates: at most this many draw paths
 * enumerated (the literal route: |supp q|^n; the certified one: visits). */
#define MDSD_RRSW_MAX_PATHS 10000000.0

/* Width of the certified interval of rrsw's exact rate (verify_rrsw.c). */
#define MDSD_RRSW_TOLERANCE 1e-9


/* Zeroes opts: every field then means its default. */

const char *mdsd_verifier_name(mdsd_verifier_kind kind);
/* Parses a verifier name; MDSD_EINVAL with the list of names if unknown. */
mdsd_status mdsd_verifier_parse(const char *name, mdsd_verifier_kind *kind, mdsd_err *err);

/* The draft scheme a verifier runs on by default (sd: iid with n = 1;
 * rrs: iid, also multi; otm: iid, any scheme accepted). */
mdsd_scheme_kind mdsd_verifier_scheme(mdsd_verifier_kind kind);

/* Whether the verifier is defined for scheme s (kind, n); MDSD_EUNSUPPORTED
 * with the reason if not, MDSD_EINVAL if s itself is ill-defined. */
int mdsd_verifier_check(mdsd_verifier_kind kind, const mdsd_scheme *s, mdsd_err *err);

/* A verifier prepared for one position (p, scheme). Copies what it needs:
 * p and the scheme's arrays may be freed afterwards. */
typedef struct mdsd_verifier mdsd_verifier;

/* NULL opts means defaults. Returns NULL and fills err on failure. */
mdsd_verifier *mdsd_verifier_alloc(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                                   const mdsd_verifier_opts *opts, mdsd_err *err);

/* Verifies one draft tuple drafts[0..n). Returns the output token y (y ~ p
 * over the draws of drafts and rng). *accepted_index (if non-NULL) gets the
 * index j of the accepted draft, so drafts[j] == y, or -1 when y is not a
 * draft. Sequential verifiers report the step whose test accepted; when y
 * comes from a residual draw and equals a draft, the lowest such j. */
int mdsd_verifier_verify(const mdsd_verifier *v, const int *drafts, gsl_rng *rng,
                         int *accepted_index);

/* Most drafts the law ops handle. */
#define MDSD_LAW_MAX_DRAFTS 64

/* The verifier's conditional output law given the drafts (its own randomness
 * integrated out exactly): py[j] = P(y == drafts[j] | drafts), j < n; the
 * acceptance given the drafts is the sum over distinct tokens. The recursive
 * (block) verification of src/block is built on it. MDSD_EUNSUPPORTED where
 * the verifier has no law op or n > MDSD_LAW_MAX_DRAFTS. */
int mdsd_verifier_law(const mdsd_verifier *v, const int *drafts, double *py, mdsd_err *err);

mdsd_verifier_kind mdsd_verifier_kind_of(const mdsd_verifier *v);
const char *mdsd_verifier_name_of(const mdsd_verifier *v); /* its ops' name */
const mdsd_scheme *mdsd_verifier_scheme_of(const mdsd_verifier *v); /* its own copy */
void mdsd_verifier_free(mdsd_verifier *v);

/* Exact acceptance rate alpha = P(y in S(x)) and, if per_draft is non-NULL,
 * per_draft[j] = P(the j-th draft is the one accepted) for j < n (same
 * convention as accepted_index; they sum to alpha). MDSD_EUNSUPPORTED where
 * the verifier has no exact form; MDSD_ETOOBIG where the exact enumeration
 * exceeds its guard (the message suggests Monte Carlo, --trials). */
int mdsd_verifier_exact(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                        const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                        mdsd_err *err);

/* mdsd_verifier_exact, and [*alpha_lo, *alpha_hi] (either may be NULL) an
 * interval proven to hold alpha: rrsw's exact rate is certified to
 * MDSD_RRSW_TOLERANCE (alpha is its midpoint); for the others lo = hi = alpha. */
int mdsd_verifier_exact_bounds(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                               const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                               double *alpha_lo, double *alpha_hi, mdsd_err *err);

/* rrsw's two routes to the exact rate (opts with defaults filled in, p and s
 * checked): the certified interval of the scalar recursion (the .exact op:
 * alpha and per_draft are midpoints, hi - lo <= MDSD_RRSW_TOLERANCE or
 * MDSD_ETOOBIG), and the literal enumeration of every draw path with
 * explicit p_j, q_j arrays (|supp q|^n <= opts->max_paths), kept as the
 * independent slow route for the tests. tolerance <= 0 means
 * MDSD_RRSW_TOLERANCE; the tests pass wider ones to exercise the cuts. */
int mdsd_rrsw_exact_bounds(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                           double tolerance, double *alpha, double *per_draft, double *alpha_lo,
                           double *alpha_hi, mdsd_err *err);
int mdsd_rrsw_exact_paths(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                          double *alpha, double *per_draft, mdsd_err *err);

/* ---- for implementers of a verifier ------------------------------------

 * A verifier file verify_<name>.c defines one `const mdsd_verifier_ops
 * mdsd_verify_<name>_ops` and verifier.c lists it in its table (one line,
 * `[MDSD_VERIFIER_<NAME>] = &mdsd_verify_<name>_ops,`; a kind without an
 * entry is refused with MDSD_EUNSUPPORTED "not built in"). The ops get
 * their arguments already checked: p validated with the scheme's V, the scheme
 * passing mdsd_scheme_check and ops->check; opts with defaults filled in. */
typedef struct {
    const char *name;
    mdsd_scheme_kind scheme;  /* default scheme (equals mdsd_verifier_scheme(kind)) */
    /* Scheme restrictions beyond mdsd_scheme_check; NULL = any scheme. */
    int (*check)(const mdsd_scheme *s, mdsd_err *err);
    /* Per-position set-up; *state is passed to verify and release. */
    int (*prepare)(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                   void **state, mdsd_err *err);
    /* One verification: returns y, sets *accepted_index (never NULL here) to
     * the accepting step or -1; verifier.c fills in -1 -> lowest j with
     * drafts[j] == y. */
    int (*verify)(const void *state, const int *drafts, gsl_rng *rng, int *accepted_index);
    void (*release)(void *state);
    /* Exact alpha and per_draft[n] (never NULL here); NULL = no exact form. */
    int (*exact)(const double *p, const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                 double *alpha, double *per_draft, mdsd_err *err);
} mdsd_verifier_ops;

/* The conditional output law given the drafts, the verifier's own
 * randomness integrated out: py[j] = P(y == drafts[j] | drafts) for j < n
 * (equal drafts get equal values), from the state its prepare made. Kept
 * beside the ops table (verifier.c's laws[], one per built-in verifier) so
 * that ops tables written positionally stay valid. */
typedef void (*mdsd_verifier_law_fn)(const void *state, const int *drafts, double *py);
extern const mdsd_verifier_law_fn mdsd_verify_sd_law, mdsd_verify_rrs_law, mdsd_verify_rrsw_law,
    mdsd_verify_kseq_law, mdsd_verify_spechub_law, mdsd_verify_greedy_law, mdsd_verify_is_law,
    mdsd_verify_otm_law, mdsd_verify_ot_law;

/* A verifier from ops outside the table (experimental or planted-invalid
 * verifiers in tests); kind_of then reports MDSD_VERIFIER_KINDS. */
mdsd_verifier *mdsd_verifier_alloc_ops(const mdsd_verifier_ops *ops, const double *p,
                                       const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                                       mdsd_err *err);

/* mdsd_verifier_alloc, given also the logits zp, zq (V floats each, or NULL)
 * whose softmaxes at one temperature are p and s->q: ot (iid) then orders its
 * layout by them, exactly and independently of exp (tree dumps); every other
 * verifier ignores them. */
mdsd_verifier *mdsd_verifier_alloc_logits(mdsd_verifier_kind kind, const double *p,
                                          const mdsd_scheme *s, const mdsd_verifier_opts *opts,
                                          const float *zp, const float *zq, mdsd_err *err);

extern const mdsd_verifier_ops mdsd_verify_sd_ops;
extern const mdsd_verifier_ops mdsd_verify_rrs_ops;
extern const mdsd_verifier_ops mdsd_verify_rrsw_ops;
extern const mdsd_verifier_ops mdsd_verify_kseq_ops;
extern const mdsd_verifier_ops mdsd_verify_spechub_ops;
extern const mdsd_verifier_ops mdsd_verify_greedy_ops;
extern const mdsd_verifier_ops mdsd_verify_is_ops;
extern const mdsd_verifier_ops mdsd_verify_otm_ops;
extern const mdsd_verifier_ops mdsd_verify_ot_ops;
/* ot's prepare with the layout ordered by the logits zp, zq whose softmaxes
 * (at one temperature) p and s->q are (ot_plan.h, mdsd_ot_plan_build_logits). */
int mdsd_verify_ot_prepare_logits(const double *p, const mdsd_scheme *s,
                                  const mdsd_verifier_opts *opts, const float *zp,
                                  const float *zq, void **state, mdsd_err *err);
extern const mdsd_verifier_ops mdsd_verify_is_face_ops;
extern const mdsd_verifier_ops mdsd_verify_rrs_skipdup_ops;
extern const mdsd_verifier_ops mdsd_verify_spechub_hubaccept_ops;
extern const mdsd_verifier_ops mdsd_verify_rrsw_f32_ops;

#endif
