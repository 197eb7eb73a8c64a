/* mdsd/registry.h - the one list of the names the toolkit accepts: the
 * token-level verifiers, the block verifiers, the block optima, the draft
 * schemes and the block draft policies. Each entry says what the name is,
 * which jobs and schemes take it, whether it is an audit variant and whether
 * it has an exact rate. The CLI's -v/--verifiers/--scheme spellings, the
 * library's parsers and messages, Python's mdsd.VERIFIERS, AUDIT_VERIFIERS
 * and SCHEMES and the runner's --tree-live choices are all read from it
 * (tests/python/test_registry.py fails on a list of names kept elsewhere).
 *
 *   for (size_t i = 0; i < mdsd_registry_count(); i++) {
 *       const mdsd_registry_entry *e = mdsd_registry_at(i);
 *       if (e->cls == MDSD_NAME_VERIFIER && !e->audit) ... e->name, e->kind
 *   }
 *
 * Entries are returned by pointer and never allocated by the caller, so
 * fields may be added at the end without breaking the ABI of .so.0. */
#ifndef MDSD_PUBLIC_REGISTRY_H
#define MDSD_PUBLIC_REGISTRY_H

#include <mdsd/scheme.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MDSD_NAME_VERIFIER,        /* token-level verifier; kind: its mdsd_verifier_kind value */
    MDSD_NAME_BLOCK_VERIFIER,  /* sees the whole draft (mdsd block); kind: 0, 1, .. in order */
    MDSD_NAME_BLOCK_OPTIMUM,   /* an optimum computed exactly on a Markov toy (mdsd block -v) */
    MDSD_NAME_SCHEME,          /* draft scheme; kind: its mdsd_scheme_kind */
    MDSD_NAME_POLICY,          /* block draft policy (tree_policy); kind: 0 seq, 1 tree */
    MDSD_NAME_CLASSES
} mdsd_name_class;

/* Jobs that take a name (mdsd_registry_entry.jobs, a bit set). */
#define MDSD_JOB_TABLE  1u  /* mdsd table -v, mdsd.batch, mdsd.evaluate, mdsd.Verifier */
#define MDSD_JOB_MARKOV 2u  /* mdsd block --markov -v, mdsd_block_markov (its exact and sampled
                             * routes; token level: a verifier with an output law given the
                             * drafts, mdsd_verifier_law) */
#define MDSD_JOB_TREES  4u  /* mdsd block DUMP --verifiers (tree dumps), mdsd_block_run */
#define MDSD_JOB_LIVE   8u  /* live decoding: mdsd block --markov --live; without audit: the
                             * runner's --tree-live */

/* Bit of scheme kind s in mdsd_registry_entry.schemes. */
#define MDSD_SCHEME_BIT(s) (1u << (unsigned)(s))

typedef struct {
    const char *name;            /* the CLI and Python spelling */
    mdsd_name_class cls;
    int kind;                    /* value within the class (see mdsd_name_class) */
    const char *description;     /* one line */
    unsigned jobs;               /* MDSD_JOB_* bits */
    /* Verifiers: MDSD_SCHEME_BIT of every scheme it is defined on (for some
     * n; sd: n = 1, spechub: n = 2, is-face: n = 3); others 0. */
    unsigned schemes;
    mdsd_scheme_kind scheme;     /* verifiers: the scheme it is designed for */
    int audit;                   /* 1: an audit variant, not for use (the tests show the
                                  * statistical checks catch it); not in mdsd.VERIFIERS */
    int exact;                   /* 1: exact rate (token level: mdsd_verifier_rate;
                                  * block: the exact route of mdsd block --markov) */
} mdsd_registry_entry;

/* Number of entries; entry i (NULL past the end), in a fixed order: within
 * a class by kind. */
MDSD_API size_t mdsd_registry_count(void);
MDSD_API const mdsd_registry_entry *mdsd_registry_at(size_t i);
/* The entry of class cls named name; NULL if none. */
MDSD_API const mdsd_registry_entry *mdsd_registry_find(mdsd_name_class cls, const char *name);

#ifdef __cplusplus
}
#endif
#endif
