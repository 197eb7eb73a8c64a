/* registry.c - the one table of names (mdsd/registry.h). Everything that
 * names a verifier, scheme or policy reads this table: verifier.c's parser
 * and kind names, scheme.c's, the block verifiers' and optima's parser of
 * mdsd block, the CLI's sweeps, Python (mdsd.VERIFIERS, AUDIT_VERIFIERS,
 * SCHEMES) and the runner. The implementations (verifier.c's and blockv.c's
 * ops tables) are indexed by kind; tests/test_registry.c checks that their
 * ops carry these names and schemes and that check() accepts exactly the
 * schemes listed here. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#define B(s) MDSD_SCHEME_BIT(MDSD_SCHEME_##s)
/* The jobs of a token-level verifier: every one where it has a conditional
 * output law given the drafts (mdsd_verifier_law: the block jobs integrate
 * the verifier's randomness out through it), else the table job only
 * (mdsd_verifier_check then decides on the scheme). */
#define ALL_JOBS (MDSD_JOB_TABLE | MDSD_JOB_MARKOV | MDSD_JOB_TREES | MDSD_JOB_LIVE)
#define V(name, kind, desc, schemes, scheme, audit) \
    V_JOBS(name, kind, desc, schemes, scheme, audit, ALL_JOBS)
#define V_JOBS(name, kind, desc, schemes, scheme, audit, jobs)                                   \
    {name, MDSD_NAME_VERIFIER, MDSD_VERIFIER_##kind, desc, jobs, schemes, MDSD_SCHEME_##scheme,   \
     audit, 1}
#define BV(name, kind, desc) \
    {name, MDSD_NAME_BLOCK_VERIFIER, kind, desc, MDSD_JOB_MARKOV | MDSD_JOB_TREES, 0, 0, 0, 1}
#define OPT(name, kind, desc) \
    {name, MDSD_NAME_BLOCK_OPTIMUM, kind, desc, MDSD_JOB_MARKOV, 0, 0, 0, 1}

static const mdsd_registry_entry entries[] = {
    V("sd", SD, "speculative sampling (Leviathan; Chen), n = 1",
      B(IID) | B(WOR) | B(GREEDY) | B(CPS) | B(MULTI), IID, 0),
    V("rrs", RRS, "recursive rejection sampling (SpecInfer)", B(IID) | B(MULTI), IID, 0),
    V("rrsw", RRSW, "recursive SD without replacement (Jeon et al.)", B(WOR), WOR, 0),
    V("kseq", KSEQ, "SpecTr's k-Seq", B(IID), IID, 0),
    V("spechub", SPECHUB, "SpecHub's transport plan, n = 2", B(HUB), HUB, 0),
    V("greedy", GREEDY, "Hu et al. section 5", B(GREEDY), GREEDY, 0),
    V("is", IS, "Khisti et al.'s importance-sampling selection", B(IID) | B(MULTI), IID, 0),
    V("otm", OTM, "the optimal plan of the solved full LP (toy V)",
      B(IID) | B(WOR) | B(GREEDY) | B(HUB) | B(CPS) | B(MULTI) | B(CUSTOM), IID, 0),
    V("ot", OT, "alpha* at any V, the key race (MATH.md section 3.10)", B(IID) | B(GREEDY) | B(HUB),
      IID, 0),
    V("is-face", IS_FACE, "is, n = 3, best stage-1 optimum (Remark 4)", B(IID), IID, 1),
    V_JOBS("rrs-skipdup", RRS_SKIPDUP, "rrs skipping repeated drafts (NOT valid, n >= 3)", B(IID),
           IID, 1, MDSD_JOB_TABLE),
    V_JOBS("spechub-hubaccept", SPECHUB_HUBACCEPT,
           "spechub accepting the hub outright when p(a) > 1 - 1e-3 (NOT valid)", B(HUB), HUB, 1,
           MDSD_JOB_TABLE),
    V_JOBS("rrsw-f32", RRSW_F32, "rrsw with float32 q(x)/(1 - sum earlier) (NOT valid)", B(WOR),
           WOR, 1, MDSD_JOB_TABLE),
    BV("bv", 0, "Block Verification, Sun et al. (seq, K = 1)"),
    BV("gbv", 1, "greedy multi-path block verification, Thomas & Pal (seq)"),
    BV("traversal", 2, "Traversal Verification, Weng et al. (seq; iid and wor trees)"),
    OPT("optimal-token", MDSD_OPTIMUM_TOKEN, "the best token-level verifier (backward induction)"),
    OPT("otm-tiebreak", MDSD_OPTIMUM_TIEBREAK,
        "alpha* at every node, ties broken by the children's values"),
    OPT("optimal-block", MDSD_OPTIMUM_BLOCK,
        "the best lossless verifier that sees the whole draft (an LP)"),
    {"iid", MDSD_NAME_SCHEME, MDSD_SCHEME_IID, "with replacement", 0, 0, 0, 0, 0},
    {"wor", MDSD_NAME_SCHEME, MDSD_SCHEME_WOR, "sequential, without replacement", 0, 0, 0, 0, 0},
    {"greedy", MDSD_NAME_SCHEME, MDSD_SCHEME_GREEDY, "top n - 1 of q, the last drawn", 0, 0, 0, 0,
     0},
    {"hub", MDSD_NAME_SCHEME, MDSD_SCHEME_HUB, "SpecHub section 4, n = 2", 0, 0, 0, 0, 0},
    {"cps", MDSD_NAME_SCHEME, MDSD_SCHEME_CPS, "conditional Poisson", 0, 0, 0, 0, 0},
    {"multi", MDSD_NAME_SCHEME, MDSD_SCHEME_MULTI, "different drafters", 0, 0, 0, 0, 0},
    {"custom", MDSD_NAME_SCHEME, MDSD_SCHEME_CUSTOM, "a sparse list of tuples", 0, 0, 0, 0, 0},
    {"seq", MDSD_NAME_POLICY, 0, "K independent sequences of depth L", 0, 0, 0, 0, 0},
    {"tree", MDSD_NAME_POLICY, 1, "a tree of widths W1, .., WL under a scheme", 0, 0, 0, 0, 0},
};

#define N_ENTRIES (sizeof entries / sizeof entries[0])

size_t mdsd_registry_count(void)
{
    return N_ENTRIES;
}

const mdsd_registry_entry *mdsd_registry_at(size_t i)
{
    return i < N_ENTRIES ? &entries[i] : NULL;
}

const mdsd_registry_entry *mdsd_registry_find(mdsd_name_class cls, const char *name)
{
    for (size_t i = 0; name && i < N_ENTRIES; i++)
        if (entries[i].cls == cls && !strcmp(entries[i].name, name))
            return &entries[i];
    return NULL;
}

const mdsd_registry_entry *mdsd_registry_kind(mdsd_name_class cls, int kind)
{
    for (size_t i = 0; i < N_ENTRIES; i++)
        if (entries[i].cls == cls && entries[i].kind == kind)
            return &entries[i];
    return NULL;
}

int mdsd_registry_kinds(mdsd_name_class cls)
{
    int n = 0;
    for (size_t i = 0; i < N_ENTRIES; i++)
        n += entries[i].cls == cls;
    return n;
}

const char *mdsd_registry_join(mdsd_name_class cls, int audit, const char *last, char *buf,
                               size_t size)
{
    size_t len = 0, count = 0, total = 0;
    for (size_t i = 0; i < N_ENTRIES; i++)
        total += entries[i].cls == cls && (audit < 0 || entries[i].audit == audit);
    buf[0] = '\0';
    for (int k = 0; k < mdsd_registry_kinds(cls); k++) {
        const mdsd_registry_entry *e = mdsd_registry_kind(cls, k);
        if (!e || (audit >= 0 && e->audit != audit))
            continue;
        const char *sep = count == 0 ? "" : count + 1 == total ? last : ", ";
        int w = snprintf(buf + len, size - len, "%s%s", sep, e->name);
        if (w < 0 || (size_t)w >= size - len) {
            buf[len] = '\0'; /* truncated: the names that fitted whole */
            break;
        }
        len += (size_t)w;
        count++;
    }
    return buf;
}
