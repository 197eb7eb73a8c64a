/* The registry of names (mdsd/registry.h, src/core/registry.c) against what the
 * library does with each name: the ops tables carry its names, default schemes and
 * exact forms; check() accepts exactly the schemes it lists; the block verifiers
 * and policies are numbered as it numbers them; the audit variants lie past the
 * public enum. Then tests/python/test_registry.py: no list of verifier names
 * elsewhere in the tree, and the CLI's jobs, Python and the runner take exactly
 * the names the registry says they take. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "blockv.h"
#include "registry.h"
#include "testutil.h"
#include "verifier.h"

/* The ops of each kind, by symbol (not by name: the names are what is checked). */
static const mdsd_verifier_ops *const token_ops[MDSD_VERIFIER_KINDS] = {
    [MDSD_VERIFIER_SD] = &mdsd_verify_sd_ops,
    [MDSD_VERIFIER_RRS] = &mdsd_verify_rrs_ops,
    [MDSD_VERIFIER_RRSW] = &mdsd_verify_rrsw_ops,
    [MDSD_VERIFIER_KSEQ] = &mdsd_verify_kseq_ops,
    [MDSD_VERIFIER_SPECHUB] = &mdsd_verify_spechub_ops,
    [MDSD_VERIFIER_GREEDY] = &mdsd_verify_greedy_ops,
    [MDSD_VERIFIER_IS] = &mdsd_verify_is_ops,
    [MDSD_VERIFIER_OTM] = &mdsd_verify_otm_ops,
    [MDSD_VERIFIER_OT] = &mdsd_verify_ot_ops,
    [MDSD_VERIFIER_IS_FACE] = &mdsd_verify_is_face_ops,
    [MDSD_VERIFIER_RRS_SKIPDUP] = &mdsd_verify_rrs_skipdup_ops,
    [MDSD_VERIFIER_SPECHUB_HUBACCEPT] = &mdsd_verify_spechub_hubaccept_ops,
    [MDSD_VERIFIER_RRSW_F32] = &mdsd_verify_rrsw_f32_ops,
};

Test(registry, entries_are_unique_and_numbered_from_zero)
{
    size_t n = mdsd_registry_count();
    cr_assert(n > 0);
    cr_assert_null(mdsd_registry_at(n));
    cr_assert_null(mdsd_registry_find(MDSD_NAME_VERIFIER, NULL));
    cr_assert_null(mdsd_registry_find(MDSD_NAME_VERIFIER, "bogus"));
    cr_assert_null(mdsd_registry_find(MDSD_NAME_VERIFIER, "bv")); /* another class's name */
    for (int c = 0; c < MDSD_NAME_CLASSES; c++) {
        int kinds = mdsd_registry_kinds((mdsd_name_class)c);
        for (int k = 0; k < kinds; k++) /* kinds 0 .. kinds - 1, each once */
            cr_assert_not_null(mdsd_registry_kind((mdsd_name_class)c, k), "class %d kind %d", c, k);
        cr_assert_null(mdsd_registry_kind((mdsd_name_class)c, kinds));
    }
    for (size_t i = 0; i < n; i++) {
        const mdsd_registry_entry *e = mdsd_registry_at(i);
        cr_assert(e->name && e->name[0] && e->description && e->description[0], "entry %zu", i);
        cr_assert_eq(mdsd_registry_find(e->cls, e->name), e, "%s is not found as itself", e->name);
        cr_assert(e->audit == 0 || e->audit == 1);
        cr_assert(e->exact == 0 || e->exact == 1);
    }
}

/* Whether verifier `kind` passes mdsd_verifier_check on scheme sk for some n in 1..4. */
static int runs_on(mdsd_verifier_kind kind, mdsd_scheme_kind sk)
{
    double q[4 * 6];
    for (size_t i = 0; i < 4 * 6; i++)
        q[i] = 1.0 / 6;
    int ok = 0;
    for (size_t n = 1; n <= 4; n++) {
        int tok[3 * 4];
        double pr[3] = {0.5, 0.3, 0.2};
        for (size_t t = 0; t < 3; t++)
            for (size_t j = 0; j < n; j++)
                tok[t * n + j] = (int)(t + j);
        mdsd_joint J = {n, 3, tok, pr};
        mdsd_scheme s = {sk, n, 6, q, sk == MDSD_SCHEME_CUSTOM ? &J : NULL};
        ok |= mdsd_verifier_check(kind, &s, NULL) == MDSD_OK;
    }
    return ok;
}

/* Whether the verifier has a conditional output law (what the block jobs integrate). */
static int has_law(mdsd_verifier_kind kind)
{
    double p[6] = {0.3, 0.2, 0.2, 0.1, 0.1, 0.1}, q[6] = {0.1, 0.1, 0.2, 0.2, 0.2, 0.2};
    const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_VERIFIER, (int)kind);
    size_t n = !strcmp(e->name, "sd") ? 1 : !strcmp(e->name, "is-face") ? 3 : 2;
    mdsd_scheme s = {e->scheme, n, 6, q, NULL};
    mdsd_err err;
    mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, NULL, &err);
    cr_assert_not_null(v, "%s: %s", e->name, err.msg);
    int drafts[3] = {0, 1, 2};
    double py[3];
    int rc = mdsd_verifier_law(v, drafts, py, NULL);
    mdsd_verifier_free(v);
    cr_assert(rc == MDSD_OK || rc == MDSD_EUNSUPPORTED, "%s: %d", e->name, rc);
    return rc == MDSD_OK;
}

Test(registry, token_verifiers_are_the_ops_tables)
{
    cr_assert_eq(mdsd_registry_kinds(MDSD_NAME_VERIFIER), MDSD_VERIFIER_KINDS);
    for (int k = 0; k < MDSD_VERIFIER_KINDS; k++) {
        mdsd_verifier_kind kind = (mdsd_verifier_kind)k;
        const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_VERIFIER, k);
        const mdsd_verifier_ops *ops = token_ops[k];
        cr_assert_str_eq(ops->name, e->name);
        cr_assert_str_eq(mdsd_verifier_name(kind), e->name);
        cr_assert_eq(ops->scheme, e->scheme, "%s: ops scheme %d, registry %d", e->name,
                     (int)ops->scheme, (int)e->scheme);
        cr_assert_eq(mdsd_verifier_scheme(kind), e->scheme);
        cr_assert_eq(ops->exact != NULL, e->exact, "%s: exact form", e->name);
        /* the public enum holds the valid verifiers only; the audit ones follow it */
        cr_assert_eq(e->audit, k >= (int)MDSD_VERIFIER_COUNT, "%s: audit flag", e->name);
        mdsd_verifier_kind parsed;
        cr_assert_eq(mdsd_verifier_parse(e->name, &parsed, NULL), MDSD_OK);
        cr_assert_eq((int)parsed, k);
        for (int s = 0; s < MDSD_SCHEME_COUNT; s++)
            cr_expect_eq(runs_on(kind, (mdsd_scheme_kind)s),
                         (e->schemes & MDSD_SCHEME_BIT(s)) != 0, "%s on %s: check() and the "
                         "registry disagree", e->name, mdsd_scheme_name((mdsd_scheme_kind)s));
        cr_assert(e->schemes & MDSD_SCHEME_BIT(e->scheme), "%s: its own scheme", e->name);
        cr_assert_eq(e->jobs, has_law(kind) ? MDSD_JOB_TABLE | MDSD_JOB_MARKOV | MDSD_JOB_TREES |
                     MDSD_JOB_LIVE : MDSD_JOB_TABLE, "%s: the block jobs need the output law",
                     e->name);
    }
    mdsd_err err;
    mdsd_verifier_kind k;
    cr_assert_eq(mdsd_verifier_parse("bogus", &k, &err), MDSD_EINVAL);
    for (int i = 0; i < MDSD_VERIFIER_KINDS; i++) /* the message lists every name */
        cr_assert(strstr(err.msg, mdsd_verifier_name((mdsd_verifier_kind)i)), "%s", err.msg);
    cr_assert(strstr(err.msg, "; audit variants: "), "%s", err.msg);
}

Test(registry, block_names_schemes_and_policies)
{
    cr_assert_eq(mdsd_registry_kinds(MDSD_NAME_BLOCK_VERIFIER), MDSD_BLOCKV_COUNT);
    for (int k = 0; k < MDSD_BLOCKV_COUNT; k++) {
        const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_BLOCK_VERIFIER, k);
        cr_assert_str_eq(mdsd_blockv((mdsd_blockv_kind)k)->name, e->name);
        mdsd_blockv_kind parsed;
        cr_assert_eq(mdsd_blockv_parse(e->name, &parsed, NULL), MDSD_OK);
        cr_assert_eq((int)parsed, k);
        cr_assert_eq(e->jobs, MDSD_JOB_MARKOV | MDSD_JOB_TREES);
    }
    for (int k = 0; k < mdsd_registry_kinds(MDSD_NAME_BLOCK_OPTIMUM); k++)
        cr_assert_eq(mdsd_registry_kind(MDSD_NAME_BLOCK_OPTIMUM, k)->jobs, MDSD_JOB_MARKOV);
    cr_assert_eq(mdsd_registry_kinds(MDSD_NAME_SCHEME), MDSD_SCHEME_COUNT);
    for (int k = 0; k < MDSD_SCHEME_COUNT; k++) {
        const mdsd_registry_entry *e = mdsd_registry_kind(MDSD_NAME_SCHEME, k);
        mdsd_scheme_kind parsed;
        cr_assert_str_eq(mdsd_scheme_name((mdsd_scheme_kind)k), e->name);
        cr_assert_eq(mdsd_scheme_parse(e->name, &parsed, NULL), MDSD_OK);
        cr_assert_eq((int)parsed, k);
    }
    cr_assert_eq(mdsd_registry_find(MDSD_NAME_POLICY, "seq")->kind, MDSD_POLICY_SEQ);
    cr_assert_eq(mdsd_registry_find(MDSD_NAME_POLICY, "tree")->kind, MDSD_POLICY_TREE);
    cr_assert_eq(mdsd_registry_kinds(MDSD_NAME_POLICY), 2);
    char buf[16];
    cr_assert_str_eq(mdsd_registry_join(MDSD_NAME_POLICY, -1, " or ", buf, sizeof buf),
                     "seq or tree");
    cr_assert_str_eq(mdsd_registry_join(MDSD_NAME_POLICY, -1, " or ", buf, 6), "seq"); /* cut */
}

/* The tree-wide checks and the jobs' acceptance, from Python (one Criterion test so that
 * the summary counts it). */
Test(registry, no_list_elsewhere_and_jobs_take_what_it_says, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src:src/python:tests/python /usr/bin/python3 -m "
                              "unittest test_registry 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}
