/* mdsd/option.h - the options the library's messages name, in each front end's
 * words, from one table.
 *
 * A library message names an option by its C name in backquotes, the field of
 * an options struct or the argument that holds it: "`max_paths` (1e7) exceeded:
 * raise `max_paths`", optionally with a value inside the same quotes: "use
 * `method sort`". mdsd_option_words rewrites each such marker into one
 * spelling: the CLI's ("--max-paths", "--method sort") or Python's
 * ("max_paths=", "method=sort"); a backquoted text that is not an option
 * stays as it is. An error that concerns one option also carries it in
 * mdsd_err.option (mdsd/common.h). */
#ifndef MDSD_PUBLIC_OPTION_H
#define MDSD_PUBLIC_OPTION_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Appended only: the values stay across releases of the same soname. */
typedef enum {
    MDSD_OPTION_NONE = 0,
    MDSD_OPTION_MAX_PATHS,
    MDSD_OPTION_MAX_TUPLES,
    MDSD_OPTION_IS_TOP,
    MDSD_OPTION_TRIALS,
    MDSD_OPTION_SIMULATE,
    MDSD_OPTION_METHOD,
    MDSD_OPTION_FORCE,
    MDSD_OPTION_LOGITS,
    MDSD_OPTION_JOINT,
    MDSD_OPTION_TEMPERATURES,
    MDSD_OPTION_DRAFT_COUNTS,
    MDSD_OPTION_DRAFTS,
    MDSD_OPTION_SCHEMES,
    MDSD_OPTION_METHODS,
    MDSD_OPTION_DUMPS,
    MDSD_OPTION_DUMP,
    MDSD_OPTION_OUTPUT,
    MDSD_OPTION_RESUME,
    MDSD_OPTION_DISCARD_PARTIAL,
    MDSD_OPTION_VERIFIERS,
    MDSD_OPTION_VERIFIER,
    MDSD_OPTION_SEQUENCES,
    MDSD_OPTION_DEPTHS,
    MDSD_OPTION_DEPTH,
    MDSD_OPTION_TREE,
    MDSD_OPTION_SCHEME,
    MDSD_OPTION_COSTS,
    MDSD_OPTION_ENGINE_METRICS,
    MDSD_OPTION_SHARD,
    MDSD_OPTION_MARKDOWN,
    MDSD_OPTION_LATEX,
    MDSD_OPTION_PER_POSITION,
    MDSD_OPTION_ROWS,
    MDSD_OPTION_DRAFT_MODELS,
    MDSD_OPTION_TOP_K,
    MDSD_OPTION_TOP_P,
    MDSD_OPTION_LABELS,
    MDSD_OPTION_PAIRED,
    MDSD_OPTION_LAYOUT,
    MDSD_OPTION_STANDALONE,
    MDSD_OPTION_CSV,
    MDSD_OPTION_MARKOV,
    MDSD_OPTION_HORIZON,
    MDSD_OPTION_PAPER_SIZE,
    MDSD_OPTION_LEGEND,
    MDSD_OPTION_N,
    MDSD_OPTION_TEMPERATURE,
    MDSD_OPTION_KIND,
    MDSD_OPTION_TERMINAL,
    MDSD_OPTION_SCRIPTS,
    MDSD_OPTION_COUNT,
    MDSD_OPTION_CHECKPOINT_SECONDS,
    MDSD_OPTION_LIMIT /* one past the last option (it moves as options are appended) */
} mdsd_option;

typedef enum {
    MDSD_SPELL_C = 0,  /* the C name: "max_paths" (the marker's text) */
    MDSD_SPELL_CLI,    /* the mdsd command line's: "--max-paths" */
    MDSD_SPELL_PYTHON  /* the Python package's keyword: "max_paths=" */
} mdsd_spelling;

/* The option's name in that spelling (static storage); NULL for MDSD_OPTION_NONE,
 * a value out of range or an unknown spelling. */
MDSD_API const char *mdsd_option_name(int option, int spelling);
/* The option whose C name is name (a NUL-terminated string), else MDSD_OPTION_NONE. */
MDSD_API mdsd_option mdsd_option_lookup(const char *name);
/* msg with every marker "`NAME`" or "`NAME VALUE`" (NAME an option's C name) in
 * that spelling: the CLI's "--max-paths", "--method sort"; Python's "max_paths=",
 * "method=sort" (VALUE after its "="; an option whose Python spelling does not end
 * in "=", "resume=True", is never given one), and "max_paths:" for a marker that
 * labels what follows ("`max_paths`: ..."). MDSD_SPELL_C leaves msg as it is.
 * Writes at most size bytes to out, NUL-terminated (truncated as snprintf does;
 * out may be NULL when size is 0); returns the length of the whole result. */
MDSD_API size_t mdsd_option_words(const char *msg, int spelling, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
