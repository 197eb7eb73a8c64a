/* registry.h - the library's side of the name registry (mdsd/registry.h):
 * lookups by kind and the name lists of the parsers' messages, so that no
 * other file keeps a list of verifier, scheme or policy names. */
#ifndef MDSD_REGISTRY_H
#define MDSD_REGISTRY_H

#include <stddef.h>

#include <mdsd/registry.h>
#include <mdsd/verifier.h>

/* The audit variants' kinds (mdsd/registry.h): past the public enum, so that a
 * caller enumerating mdsd_verifier_kind meets only valid verifiers; reachable
 * by name (mdsd_verifier_parse, mdsd_registry_find). Their values are those
 * they had in the public enum before (9 .. 12). */
#define MDSD_VERIFIER_IS_FACE ((mdsd_verifier_kind)(MDSD_VERIFIER_COUNT + 0))
#define MDSD_VERIFIER_RRS_SKIPDUP ((mdsd_verifier_kind)(MDSD_VERIFIER_COUNT + 1))
#define MDSD_VERIFIER_SPECHUB_HUBACCEPT ((mdsd_verifier_kind)(MDSD_VERIFIER_COUNT + 2))
#define MDSD_VERIFIER_RRSW_F32 ((mdsd_verifier_kind)(MDSD_VERIFIER_COUNT + 3))
/* Every token-level kind, audit variants included. */
#define MDSD_VERIFIER_KINDS (MDSD_VERIFIER_COUNT + 4)

/* The kinds of the block optima (class MDSD_NAME_BLOCK_OPTIMUM). */
enum { MDSD_OPTIMUM_TOKEN, MDSD_OPTIMUM_TIEBREAK, MDSD_OPTIMUM_BLOCK };

/* The entry of class cls and kind `kind`; NULL if none. */
const mdsd_registry_entry *mdsd_registry_kind(mdsd_name_class cls, int kind);

/* The number of entries of class cls: the kinds are 0 .. that - 1. */
int mdsd_registry_kinds(mdsd_name_class cls);

/* The names of class cls whose audit flag is `audit` (-1: any), in kind
 * order, joined by ", " and `last` before the final one (" or ", ", "):
 * "sd, rrs, ... or ot". Past size - 1 characters: the names that fit whole. */
const char *mdsd_registry_join(mdsd_name_class cls, int audit, const char *last, char *buf,
                               size_t size);

#endif
