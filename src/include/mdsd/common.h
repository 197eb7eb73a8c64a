/* mdsd/common.h - what every part of the public API shares: status codes, the
 * error record, the token type, the random stream, the library version.
 *
 * Conventions of the whole public API (mdsd/mdsd.h):
 *   - Every fallible function returns an mdsd_status (0 = MDSD_OK) or NULL and,
 *     on failure, fills an optional mdsd_err: NULL is accepted for it
 *     everywhere, and every failure sets its own code and message (a message
 *     names the input: file, dataset, row, index, value).
 *   - Options: every options struct has an _init function that writes the
 *     defaults; passing NULL for the options means those defaults. Set a struct
 *     up with its _init, then set fields: one built by hand or with = {0} is
 *     refused (see "Options structs and the ABI" below).
 *   - Ownership: an object made by X_new (or X_open) is released by X_free,
 *     which frees the object itself and accepts NULL. Result structs hold no
 *     caller buffers and nothing to free; arrays the caller wants filled are
 *     separate arguments with their lengths stated. A string in a result
 *     (mdsd_block_markov_result.route, .verifier) is the library's static
 *     storage, valid for the whole process, never a pointer into the options.
 *   - top_p (decoding truncation, everywhere: mdsd_truncate, mdsd_batch_eval_opts,
 *     mdsd_table_opts) is in (0, 1], 1 = no truncation; 0 is refused
 *     (MDSD_EINVAL), as are values outside (0, 1] and NaN. top_k: 0 = none.
 *   - Distributions are double[V], index = token id; tokens are mdsd_token.
 *   - Inputs are validated (finite, non-negative, summing to 1 within 1e-6,
 *     renormalised) and never modified, unless a function says so.
 *
 * Options structs and the ABI of libmdsd.so.0. Every options struct
 * (mdsd_alpha_opts, mdsd_verifier_opts, mdsd_montecarlo_opts,
 * mdsd_batch_eval_opts, mdsd_table_opts, mdsd_block_job_opts,
 * mdsd_block_markov_opts, mdsd_dump_layout, mdsd_tree_dump_layout, mdsd_toy_opts,
 * mdsd_plot_opts, mdsd_check_opts, mdsd_row_arrays, mdsd_report_opts, mdsd_merge_job_opts,
 * mdsd_run_opts)
 * begins with
 * `size_t size`. Its _init, e.g. mdsd_alpha_opts_init(&o), is a macro over the
 * exported function of the same name that passes sizeof o, the size the
 * caller was compiled with: the library writes the defaults into those bytes
 * only (never past them) and sets o.size. Every function taking the struct,
 * or an outer struct holding it (verifier_opts, dump), refuses a size it does
 * not know with MDSD_EINVAL and a message naming the struct and both sizes.
 * Rule: this release knows exactly one size per struct, its own sizeof. A
 * later release of the same soname only appends fields, and accepts each
 * earlier release's size, defaulting the fields past it; any other change to
 * an options struct (a field appended to mdsd_verifier_opts or mdsd_dump_layout,
 * which sit inside other structs, is one) takes a new soname. (Bindings that cannot use the
 * macros, such as ctypes, call the function with the struct's size.) */
#ifndef MDSD_PUBLIC_COMMON_H
#define MDSD_PUBLIC_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Marks the library's exported functions (it is built with -fvisibility=hidden). */
#ifndef MDSD_API
#if defined(__GNUC__) || defined(__clang__)
#define MDSD_API __attribute__((visibility("default")))
#else
#define MDSD_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A token id in [0, V). */
typedef int32_t mdsd_token;

typedef enum {
    MDSD_OK = 0,
    MDSD_EINVAL,       /* invalid argument or input value */
    MDSD_ENOMEM,       /* allocation failed */
    MDSD_ETOOBIG,      /* problem larger than the method's guard */
    MDSD_EIO,          /* file could not be read or written */
    MDSD_EFORMAT,      /* file exists but its content is malformed */
    MDSD_ESOLVER,      /* an external solver (GLPK, GSL root finder) failed */
    MDSD_EUNSUPPORTED, /* method does not apply to this scheme / instance */
    MDSD_EINTERRUPTED  /* stopped by mdsd_interrupt (appended: the values above stay) */
} mdsd_status;

/* The error record. msg names options in the API's words, each option's C name
 * in backquotes ("raise `max_paths`"): mdsd_option_words (mdsd/option.h) gives it
 * in the CLI's or Python's. option is the mdsd_option the error concerns
 * (MDSD_OPTION_NONE when none or several). option was appended after msg before
 * the first release (no tag yet): the layout of this soname, 0, includes it. */
typedef struct {
    int code;       /* an mdsd_status */
    char msg[512];  /* what went wrong, naming the input */
    int option;     /* an mdsd_option, MDSD_OPTION_NONE (0) when none */
} mdsd_err;

/* Clears err to MDSD_OK with an empty message and no option (NULL allowed). */
MDSD_API void mdsd_err_clear(mdsd_err *err);
/* A fixed description of a status code. */
MDSD_API const char *mdsd_strerror(int code);
/* The library's version, e.g. "0.1.0". */
MDSD_API const char *mdsd_version(void);

/* Stops the long calls (mdsd_batch_eval, mdsd_batch_eval_double, mdsd_table_run,
 * mdsd_block_run over tree dumps, and their _recorded forms, mdsd_block_markov's
 * trials, mdsd_montecarlo, mdsd_toy_dump, mdsd_check_run): they check a process-wide flag
 * at every row (tree, block of trials, check instance) and return MDSD_EINTERRUPTED at the next
 * one, their temporary files removed and their checkpoint OUTPUT.partial (the
 * finished units, which resume = 1 continues to the bytes of an uninterrupted
 * run) kept. Async-signal-safe (one lock-free atomic store): a SIGINT handler may
 * call it. The flag stays set, and every long call started meanwhile returns
 * MDSD_EINTERRUPTED at once, until mdsd_interrupt_clear: call that once the
 * interrupted call has returned. */
MDSD_API void mdsd_interrupt(void);
MDSD_API void mdsd_interrupt_clear(void);

/* A random stream (GSL's taus2). Every random result of the library is a
 * function of the seeds given, never of threads or time. */
typedef struct mdsd_rng mdsd_rng;
MDSD_API mdsd_rng *mdsd_rng_new(uint64_t seed, mdsd_err *err);
/* Restarts the stream from seed. */
MDSD_API void mdsd_rng_seed(mdsd_rng *rng, uint64_t seed);
/* A uniform double in [0, 1). */
MDSD_API double mdsd_rng_uniform(mdsd_rng *rng);
MDSD_API void mdsd_rng_free(mdsd_rng *rng);

#ifdef __cplusplus
}
#endif
#endif
