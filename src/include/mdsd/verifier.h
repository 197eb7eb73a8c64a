/* mdsd/verifier.h - multi-draft verifiers (MATH.md section 3): given the
 * target p and the n draft tokens, output one token y that follows p exactly;
 * the verifier accepts when y is one of the drafts.
 *
 *   sd       speculative sampling (Leviathan; Chen)   n = 1
 *   rrs      recursive rejection sampling (SpecInfer) iid, multi
 *   rrsw     recursive SD without replacement          wor
 *   kseq     SpecTr's k-Seq                            iid
 *   spechub  SpecHub's transport plan                  hub (n = 2)
 *   greedy   Hu et al. section 5                       greedy
 *   is       Khisti et al.'s importance sampling       iid
 *   otm      the optimal plan of the full LP           any scheme (small V)
 *   ot       alpha* at any V without an LP             iid, greedy, hub
 *
 * In a decoding loop: per position, mdsd_verifier_new(kind, p, scheme) (O(V)
 * set-up), drafts from mdsd_sampler_draw_drafts (or your draft model), then
 * mdsd_verify -> the next token; mdsd_verifier_free. */
#ifndef MDSD_PUBLIC_VERIFIER_H
#define MDSD_PUBLIC_VERIFIER_H

#include <mdsd/scheme.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MDSD_VERIFIER_SD,
    MDSD_VERIFIER_RRS,
    MDSD_VERIFIER_RRSW,
    MDSD_VERIFIER_KSEQ,
    MDSD_VERIFIER_SPECHUB,
    MDSD_VERIFIER_GREEDY,
    MDSD_VERIFIER_IS,
    MDSD_VERIFIER_OTM,
    MDSD_VERIFIER_OT,
    /* The number of valid verifiers. The audit variants (not for use: is-face
     * searches the optimal face of Remark 4's stage 1; rrs-skipdup,
     * spechub-hubaccept, rrsw-f32 reproduce behaviours of a peer
     * implementation that differ from the published algorithms, papers/) are
     * not members: their kinds lie past MDSD_VERIFIER_COUNT and come from
     * their names (mdsd_verifier_parse, mdsd/registry.h). */
    MDSD_VERIFIER_COUNT
} mdsd_verifier_kind;

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    size_t is_top;      /* is: free weights only among the top-s tokens of q (0 = full LP) */
    double max_paths;   /* rrsw exact: guard on |supp q|^n paths (0 = 10^7) */
    size_t max_tuples;  /* otm, is: guard on enumerated tuples (0 = 2^22) */
} mdsd_verifier_opts;

/* Zeroes opts (every field then means its default) and sets size. */
MDSD_API void mdsd_verifier_opts_init(mdsd_verifier_opts *opts, size_t size);
#define mdsd_verifier_opts_init(opts) mdsd_verifier_opts_init((opts), sizeof *(opts))

/* The names of mdsd/registry.h (class MDSD_NAME_VERIFIER), audit variants
 * included; "?" for a kind that is none. */
MDSD_API const char *mdsd_verifier_name(mdsd_verifier_kind kind);
MDSD_API mdsd_status mdsd_verifier_parse(const char *name, mdsd_verifier_kind *kind, mdsd_err *err);
/* The scheme a verifier is designed for (sd: iid with n = 1). */
MDSD_API mdsd_scheme_kind mdsd_verifier_scheme(mdsd_verifier_kind kind);

/* Exact acceptance rate alpha = P(y is a draft) and, if per_draft is not
 * NULL, per_draft[j] (j < s->n) = P(the j-th draft is the one accepted); they
 * sum to alpha. MDSD_EUNSUPPORTED where the verifier has no exact form
 * (use mdsd_montecarlo), MDSD_ETOOBIG past the enumeration guard. */
MDSD_API mdsd_status mdsd_verifier_rate(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                       const mdsd_verifier_opts *opts, double *alpha, double *per_draft,
                       mdsd_err *err);

/* A verifier prepared for one position (p, scheme); copies what it needs. */
typedef struct mdsd_verifier mdsd_verifier;
MDSD_API mdsd_verifier *mdsd_verifier_new(mdsd_verifier_kind kind, const double *p, const mdsd_scheme *s,
                                 const mdsd_verifier_opts *opts, mdsd_err *err);
/* Verifies drafts[0..n) (drawn from the verifier's scheme) and returns the
 * output token y, which follows p over the drafts' and rng's randomness.
 * *accepted_index (if not NULL) = the index j of the accepted draft
 * (drafts[j] == y), or -1 when y is not a draft. Thread-safe for distinct rngs.
 * Returns -1 (and sets err) when a draft is outside [0, V) or the tuple cannot
 * come from the scheme (probability 0 under its joint law: a draft of q = 0, a
 * repeated token under wor or cps, greedy's top tokens or the hub out of place,
 * a tuple absent from a custom joint). */
MDSD_API mdsd_token mdsd_verify(const mdsd_verifier *v, const mdsd_token *drafts, mdsd_rng *rng,
                       int *accepted_index, mdsd_err *err);
MDSD_API void mdsd_verifier_free(mdsd_verifier *v);

/* Monte Carlo: `trials` times, draw drafts from the scheme's exact sampler
 * and verify. Streams are a function of (seed, position, verifier) and of
 * nothing else (not of threads). */
typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    uint64_t trials;    /* default 10^6 */
    uint64_t seed;      /* default 1 */
    uint64_t position;  /* stream coordinate; default 0 */
    int threads;        /* 0 = OpenMP's default, 1 = serial */
} mdsd_montecarlo_opts;

/* Writes the defaults and size. */
MDSD_API void mdsd_montecarlo_opts_init(mdsd_montecarlo_opts *opts, size_t size);
#define mdsd_montecarlo_opts_init(opts) mdsd_montecarlo_opts_init((opts), sizeof *(opts))

typedef struct {
    uint64_t trials;
    double alpha;            /* acceptance frequency */
    double se;               /* its standard error */
    double ci_low, ci_high;  /* 95% Wilson interval */
} mdsd_montecarlo_result;

/* per_draft (NULL or [n]) receives each draft's acceptance frequency;
 * histogram (NULL or [V]) the output-token counts. */
MDSD_API mdsd_status mdsd_montecarlo(const mdsd_verifier *v, const mdsd_montecarlo_opts *opts,
                    mdsd_montecarlo_result *res, double *per_draft, uint64_t *histogram,
                    mdsd_err *err);

/* accept --check-output: Pearson chi-square test of an output histogram
 * (mdsd_montecarlo's, [V]) against p [V] (validated and renormalised as every
 * p the library takes), the least likely cells pooled until
 * each expects >= 5 draws. p_value = P(chi2_dof >= statistic); a count in a
 * cell of probability 0 gives p_value = 0. MDSD_EINVAL on NULL, V = 0 or an
 * all-zero histogram. */
MDSD_API mdsd_status mdsd_output_chisq(const uint64_t *histogram, const double *p, size_t V,
                                       double *statistic, size_t *dof, double *p_value,
                                       mdsd_err *err);

#ifdef __cplusplus
}
#endif
#endif
