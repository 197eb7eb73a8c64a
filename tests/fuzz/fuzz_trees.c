/* libFuzzer harness: the tree-dump reader and evaluator (src/block/treedump*.c),
 * as `mdsd block DUMP` uses them. Structured: every input starts from one
 * small valid tree dump (V = 4, two trees of one sample, seq K = 2 or tree
 * 2,1, L = 2), and the input's bytes are edits to its fields - /parent,
 * /depth, /edge, /slots, /tree_sample, /tree_position, /tree_tau, a target
 * or draft logit (-inf, +-1e30, ...), tree_temperature, tree_scheme, the
 * policy, live or not, a live dataset left out - so that every run reaches
 * the row checks instead of libhdf5's parser (fuzz_dump covers that). The
 * dump is written (the library's writer, then HDF5), opened, and evaluated
 * on its own case (the verifier of its scheme, or its live verifier).
 * Invariants:
 * - a refusal names its problem (a message);
 * - a dump that opens has n_trees >= 1 trees covering rows 0..N-1; if seq,
 *   its tree_scheme is iid; if live, every tree has one /tree_position and
 *   /tree_tau, tau in [1, L + 1], each sample from position 0 and each tree
 *   where the one before stopped (checked here on the arrays written);
 * - an evaluation that succeeds has every drafted token of positive draft
 *   probability at tree_temperature (recomputed here) and E[tau] finite in
 *   [1, L + 1].
 *
 *   run: build/fuzz/fuzz_trees -detect_leaks=0 -max_total_time=60 CORPUS_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "dist.h"
#include "dump.h"
#include "treedump.h"

#define TV 4 /* vocabulary */
#define TN 5 /* rows */
#define TS 2 /* slots */
#define TL 2 /* depth */

typedef struct {
    float target[TN * TV], draft[TN * TV];
    long long parent[TN];
    int depth[TN], edge[TN], slots[TN * TS], sample[TN], position[TN], tau[TN];
    int tree[TN], index[TN], tokens[TN];
    double T;
    const char *scheme;
    int tree_policy; /* 0: seq K = 2; 1: tree widths 2,1 */
    int live, drop;  /* drop: 1 = no /tree_tau, 2 = no /tree_position */
} base_dump;

/* Tree 0: root (row 0) drafts 1, 2, its children rows 1 (edge 1) and 2
 * (edge 2); tree 1 (rows 3, 4) where tree 0's block stopped (tau 1). */
static void base(base_dump *b)
{
    static const long long parent[TN] = {-1, 0, 0, -1, 3};
    static const int depth[TN] = {0, 1, 1, 0, 1}, edge[TN] = {-1, 1, 2, -1, 2};
    static const int slots[TN * TS] = {1, 2, 3, -1, -1, 0, 2, 2, 1, 3};
    static const int tree[TN] = {0, 0, 0, 1, 1}, index[TN] = {0, 1, 2, 0, 1};
    static const int position[TN] = {0, 0, 0, 1, 1}, tau[TN] = {1, 1, 1, 2, 2};
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < TN * TV; i++) {
        b->target[i] = (float)((int)(i * 7 % 11) - 5) / 4.0f;
        b->draft[i] = (float)((int)(i * 5 % 13) - 6) / 5.0f;
    }
    memcpy(b->parent, parent, sizeof parent);
    memcpy(b->depth, depth, sizeof depth);
    memcpy(b->edge, edge, sizeof edge);
    memcpy(b->slots, slots, sizeof slots);
    memcpy(b->tree, tree, sizeof tree);
    memcpy(b->index, index, sizeof index);
    memcpy(b->position, position, sizeof position);
    memcpy(b->tau, tau, sizeof tau);
    b->T = 1.0;
    b->scheme = "iid";
}

/* A logit from a byte: the edge values first, else a small grid. */
static float logit_of(uint8_t v)
{
    static const float special[] = {-INFINITY, -1e30f, 1e30f, -1e4f, 1e4f, 0.0f, -88.0f, 88.0f};
    return v < 8 ? special[v] : (float)((int8_t)v) / 8.0f;
}

static void edit(base_dump *b, const uint8_t *e)
{
    static const double temps[] = {1.0, 1e-3, 1e-300, 0.5, 2.0, 1e-6, 30.0, 0.05};
    static const char *const schemes[] = {"iid", "wor", "greedy", "hub", "bogus", "", "IID", "cps"};
    int8_t v = (int8_t)e[2];
    size_t i = e[1];
    switch (e[0] % 13) {
    case 0: b->parent[i % TN] = v; break;
    case 1: b->depth[i % TN] = v; break;
    case 2: b->edge[i % TN] = v; break;
    case 3: b->slots[i % (TN * TS)] = v; break;
    case 4: b->sample[i % TN] = v; break;
    case 5: b->position[i % TN] = v; break;
    case 6: b->tau[i % TN] = v; break;
    case 7: b->draft[i % (TN * TV)] = logit_of(e[2]); break;
    case 8: b->target[i % (TN * TV)] = logit_of(e[2]); break;
    case 9: b->T = temps[e[2] % 8]; break;
    case 10: b->scheme = schemes[e[2] % 8]; break;
    case 11: b->tree_policy = e[2] & 1, b->live = (e[2] >> 1) & 1; break;
    default: b->drop = e[2] % 3; break;
    }
}

static void attr_string(hid_t f, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, &value);
    H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

static void attr_num(hid_t f, const char *name, hid_t type, const void *v, hsize_t n)
{
    hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, v);
    H5Aclose(a), H5Sclose(sp);
}

static void dataset(hid_t f, const char *name, hid_t type, const void *v, hsize_t cols)
{
    hsize_t dims[2] = {TN, cols};
    hid_t sp = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d), H5Sclose(sp);
}

/* 0: written; else the writer refused the logits (NaN, +inf: not a dump). */
static int write_dump(const char *path, const base_dump *b)
{
    const char *names[1] = {"toy"};
    mdsd_dump_spec spec = {.V = TV, .dtype = MDSD_DUMP_FLOAT32, .creator = "fuzz",
                           .generation_temperature = 1.0, .target_model = "p", .n_drafts = 1,
                           .draft_names = names};
    mdsd_dump_writer *w;
    mdsd_err err;
    if (mdsd_dump_writer_open(path, &spec, &w, &err))
        return -1;
    const float *drafts[1] = {b->draft};
    if (mdsd_dump_writer_append(w, TN, b->target, drafts, b->tokens, b->tree, b->index, &err)) {
        mdsd_dump_writer_abort(w);
        return -1;
    }
    if (mdsd_dump_writer_commit(w, &err))
        return -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return -1;
    int one = 1;
    long long depth = TL, K = TS, widths[TL] = {2, 1};
    attr_num(f, "mdsd_tree", H5T_NATIVE_INT, &one, 0);
    attr_string(f, "tree_policy", b->tree_policy ? "tree" : "seq");
    attr_string(f, "tree_scheme", b->scheme);
    attr_string(f, "tree_drafter", "toy");
    attr_num(f, "tree_depth", H5T_NATIVE_LLONG, &depth, 0);
    if (b->tree_policy)
        attr_num(f, "tree_widths", H5T_NATIVE_LLONG, widths, TL);
    else
        attr_num(f, "tree_sequences", H5T_NATIVE_LLONG, &K, 0);
    attr_num(f, "tree_temperature", H5T_NATIVE_DOUBLE, &b->T, 0);
    if (b->live) {
        attr_string(f, "tree_contexts", "live");
        attr_string(f, "tree_live_verifier", "rrs");
    }
    dataset(f, "/parent", H5T_NATIVE_LLONG, b->parent, 0);
    dataset(f, "/depth", H5T_NATIVE_INT, b->depth, 0);
    dataset(f, "/edge", H5T_NATIVE_INT, b->edge, 0);
    dataset(f, "/slots", H5T_NATIVE_INT, b->slots, TS);
    dataset(f, "/tree_sample", H5T_NATIVE_INT, b->sample, 0);
    if (b->drop != 2)
        dataset(f, "/tree_position", H5T_NATIVE_INT, b->position, 0);
    if (b->live && b->drop != 1)
        dataset(f, "/tree_tau", H5T_NATIVE_INT, b->tau, 0);
    H5Fclose(f);
    return 0;
}

static void must_name(int rc, const mdsd_err *err)
{
    if (rc != MDSD_OK && err->msg[0] == '\0')
        abort();
}

/* The live fields of a dump that opened, against the arrays written. */
static void check_live(const mdsd_tree_dump *t, const base_dump *b)
{
    for (size_t i = 0; i < t->n_trees; i++) {
        size_t r0 = t->root[i];
        for (size_t u = r0; u < t->root[i + 1]; u++)
            if (b->position[u] != b->position[r0] || b->tau[u] != b->tau[r0])
                abort();
        if (b->tau[r0] < 1 || b->tau[r0] > TL + 1)
            abort();
        int first = i == 0 || b->sample[r0] != b->sample[t->root[i - 1]];
        int want = first ? 0 : b->position[t->root[i - 1]] + b->tau[t->root[i - 1]];
        if (b->position[r0] != want)
            abort();
    }
}

/* Every drafted token of a dump that was evaluated has q > 0. */
static void check_drafts(const mdsd_tree_dump *t, const base_dump *b)
{
    for (size_t u = 0; u < t->N; u++) {
        double q[TV];
        if (mdsd_softmax_float(b->draft + u * TV, TV, t->T, q, "q", NULL) != MDSD_OK)
            abort(); /* the evaluation read this row */
        for (size_t s = 0; s < t->S; s++)
            if (t->slots[u * t->S + s] >= 0 && !(q[t->slots[u * t->S + s]] > 0.0))
                abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("MDSD_HDF5_NO_PROBE", "1", 1);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long count;
    if (size < 1)
        return 0;
    base_dump b;
    base(&b);
    /* the first byte: the policy (seq or tree 2,1, whose depth-1 rows draft
     * one token) and live or not; then the edits */
    b.tree_policy = data[0] & 1, b.live = (data[0] >> 1) & 1;
    if (b.tree_policy) {
        static const int tree_slots[TN * TS] = {1, 2, 3, -1, 0, -1, 2, 2, 1, -1};
        memcpy(b.slots, tree_slots, sizeof tree_slots);
    }
    for (size_t k = 1; k + 3 <= size && k < 1 + 3 * 64; k += 3)
        edit(&b, data + k);
    char path[96];
    snprintf(path, sizeof path, "/tmp/mdsd-fuzz-trees-%ld-%lu.h5", (long)getpid(), count++);
    if (write_dump(path, &b) != 0) {
        unlink(path);
        return 0;
    }
    mdsd_tree_dump *t = NULL;
    mdsd_err err;
    mdsd_err_clear(&err);
    int rc = mdsd_tree_dump_open(path, &t, &err);
    must_name(rc, &err);
    /* triage: MDSD_FUZZ_TREES_VERBOSE=1 says what became of each input */
    int verbose = getenv("MDSD_FUZZ_TREES_VERBOSE") != NULL;
    if (verbose && rc)
        fprintf(stderr, "refused at open: %s\n", err.msg);
    if (rc == MDSD_OK) {
        if (t->n_trees < 1 || t->root[0] != 0 || t->root[t->n_trees] != t->N || t->N != TN)
            abort();
        if (t->pol.kind == MDSD_POLICY_SEQ && strcmp(b.scheme, "iid"))
            abort(); /* a seq dump's tree_scheme is read */
        if (t->live)
            check_live(t, &b);
        mdsd_verifier_kind v = t->live ? t->live_verifier
                               : t->pol.kind == MDSD_POLICY_SEQ || t->pol.scheme == MDSD_SCHEME_IID
                                   ? MDSD_VERIFIER_RRS
                               : t->pol.scheme == MDSD_SCHEME_WOR    ? MDSD_VERIFIER_RRSW
                               : t->pol.scheme == MDSD_SCHEME_GREEDY ? MDSD_VERIFIER_GREEDY
                                                                     : MDSD_VERIFIER_SPECHUB;
        mdsd_block_case c = {v, t->pol, 0};
        mdsd_block_dump_result res;
        mdsd_err_clear(&err);
        rc = mdsd_tree_dump_eval(t, &c, 1, NULL, 1, NULL, NULL, &res, &err);
        must_name(rc, &err);
        if (verbose && rc)
            fprintf(stderr, "refused at evaluation: %s\n", err.msg);
        else if (verbose)
            fprintf(stderr, "evaluated: E[tau] %.6f\n", res.tau);
        if (rc == MDSD_OK) {
            check_drafts(t, &b);
            if (!isfinite(res.tau) || res.tau < 1.0 - 1e-9 || res.tau > TL + 1 + 1e-9)
                abort();
        }
        mdsd_tree_dump_close(t);
    }
    unlink(path);
    return 0;
}
