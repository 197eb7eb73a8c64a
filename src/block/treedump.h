/* treedump.h - tree dumps (data/README.md, "Tree dumps"): a version-1 logit
 * dump whose rows are the nodes of sampled draft trees, with /parent,
 * /depth, /edge, /slots, /tree_sample, /tree_position and the root
 * attributes mdsd_tree = 1, tree_policy, tree_depth, tree_sequences or
 * tree_widths, tree_scheme, tree_drafter, tree_temperature.
 *
 * mdsd_tree_dump_eval gives, per case (verifier, sub-policy), the mean over
 * trees of E[tau | tree] - the verifier's randomness integrated out exactly
 * through its output law at every node - with the standard error clustered
 * by sample (/tree_sample). A seq dump of K sequences and depth L also
 * answers every K' <= K (the first K' sequences) and L' <= L; an iid or wor
 * tree dump every prefix of its widths (the first draws of an iid or wor
 * draw are an iid or wor draw); greedy and hub trees only their own widths,
 * at any L' <= L. Deterministic: no random numbers, and per-tree values are
 * added in row order, so results do not depend on the thread count. */
#ifndef MDSD_TREEDUMP_H
#define MDSD_TREEDUMP_H

#include <stddef.h>
#include <stdio.h>

#include "block.h"
#include "dump.h"

typedef struct mdsd_tree_dump_s {
    mdsd_dump *dump;
    char path[4096];
    mdsd_policy pol;          /* the policy the trees were drawn with */
    int drafter;              /* index of the tree drafter in dump->drafts */
    double T;                 /* tree_temperature: softmax(logits / T) */
    /* Root attribute tree_contexts = "live" (absent or "positions": trees at
     * fixed response positions): the trees were drawn at the block starts of
     * live speculative decoding with tree_live_verifier under pol
     * (MATH.md §5.9). Only that case is live tokens per target call, and
     * mdsd_tree_dump_eval refuses every other. */
    int live;
    mdsd_verifier_kind live_verifier;
    size_t N, V, S;           /* rows, vocabulary, slots per row */
    long long *parent;        /* [N] */
    int *depth, *edge;        /* [N] */
    int *slots;               /* [N * S]: the node's drafts in draft order, -1 = unused */
    int *sample;              /* [N] /tree_sample */
    size_t n_trees;
    size_t *root;             /* [n_trees + 1]: tree i holds rows root[i] .. root[i+1]-1 */
    size_t *kid_start;        /* [N + 1] children of row u: kid[kid_start[u] .. kid_start[u+1]) */
    size_t *kid;              /* [N] */
    /* A tree dump split across files (a directory, mdsd_dump_parts): each
     * file opened and checked on its own, the arrays above their
     * concatenation (rows numbered across the files, samples renumbered
     * 0, 1, .. so that samples of different files are distinct), dump the
     * first file's. One file: n_parts = 0. */
    size_t n_parts;
    struct mdsd_tree_dump_s **parts;  /* [n_parts] */
    size_t *part_row0;                /* [n_parts + 1]: file k holds rows part_row0[k] .. */
} mdsd_tree_dump;

/* Opens and checks a tree dump: the version-1 structure (mdsd_dump_open),
 * the tree attributes, and every row of the tree datasets (parents before
 * children, depths, edges among the parent's drafts, one child per distinct
 * drafted token below depth L - 1, slots as the policy fills them). The
 * error names the file, dataset, row and value. A directory is a tree dump
 * split across its *.h5 files (in name order), read as one: every file must
 * have the first one's vocabulary, models, tokenizer, generation
 * temperature and tree attributes (policy, depth, sequences or widths,
 * scheme, drafter, tree temperature), else the error names the file. */
int mdsd_tree_dump_open(const char *path, mdsd_tree_dump **out, mdsd_err *err);
void mdsd_tree_dump_close(mdsd_tree_dump *t);

/* One evaluation: a verifier on a sub-policy of the dump's. */
typedef struct {
    mdsd_verifier_kind v;     /* the token-level verifier at every node (block = 0) */
    mdsd_policy pol;
    int block;                /* 0, or 1 + a block verifier (mdsd_blockv_kind, blockv.h) */
} mdsd_block_case;

/* Verifiers a case list can name: the token-level ones and the block ones. */
#define MDSD_BLOCK_CASE_VERIFIERS (MDSD_VERIFIER_KINDS + 3)

/* The case's verifier name ("rrs", "bv", ...); parses one into c->v and
 * c->block (MDSD_EINVAL listing the names), leaving c->pol. */
const char *mdsd_block_case_name(const mdsd_block_case *c);
int mdsd_block_case_parse(const char *name, mdsd_block_case *c, mdsd_err *err);
/* Whether the case's verifier is defined for its policy (its scheme at the
 * root's drafts; MDSD_EUNSUPPORTED with the reason if not). */
int mdsd_block_case_check(const mdsd_block_case *c, mdsd_err *err);

/* On a live dump, whether c is its live case (the live verifier on the
 * dump's own policy): MDSD_EUNSUPPORTED naming that case if not. MDSD_OK on a
 * dump of fixed positions. */
int mdsd_tree_dump_check_live(const mdsd_tree_dump *t, const mdsd_block_case *c, mdsd_err *err);

/* Whether pol is a sub-policy the dump answers (see above); err says why not. */
int mdsd_tree_dump_check_case(const mdsd_tree_dump *t, const mdsd_policy *pol, mdsd_err *err);

typedef struct {
    double tau, se;                        /* mean E[tau | tree], clustered s.e. */
    size_t trees, samples;
    double reach[MDSD_BLOCK_MAX_DEPTH + 1];
    double rate[MDSD_BLOCK_MAX_DEPTH + 1];
    /* rate_se[d]: standard error of rate[d], a ratio of two means (trees
     * reaching depth d over trees reaching d - 1), by the delta method with
     * the CR1 sandwich clustered by sample as for tau (by tree when the dump
     * holds one sample). At depth 1 it equals se of tau at L = 1. */
    double rate_se[MDSD_BLOCK_MAX_DEPTH + 1];
    /* reach_se[d]: standard error of reach[d] (vLLM's per-position
     * acceptance rate), a mean over trees, clustered by sample as se. */
    double reach_se[MDSD_BLOCK_MAX_DEPTH + 1];
} mdsd_block_dump_result;

/* Evaluates every case over every tree; res[ncases]. threads: 0 = OpenMP
 * default. progress (may be NULL) after each block of trees. */
int mdsd_tree_dump_eval(mdsd_tree_dump *t, const mdsd_block_case *cases, size_t ncases,
                        const mdsd_verifier_opts *vopts, int threads,
                        void (*progress)(size_t done, size_t total, void *ctx), void *ctx,
                        mdsd_block_dump_result *res, mdsd_err *err);

/* Scale-out (mdsd block --shard I/N, MPI ranks; shard.h's rule on trees):
 * shard I of N (shards 0: every tree) evaluates the trees of the samples
 * that start in its share of the trees and, when lines is not NULL, writes
 * one line per sample (its E[tau | tree] Welford summary and its clusters'
 * reach sums, hex floats) and counts them in *n_lines. res then holds the
 * shard's own results. */
int mdsd_tree_dump_eval_part(mdsd_tree_dump *t, const mdsd_block_case *cases, size_t ncases,
                             const mdsd_verifier_opts *vopts, int threads,
                             void (*progress)(size_t done, size_t total, void *ctx), void *ctx,
                             size_t shard, size_t shards, FILE *lines, size_t *n_lines,
                             mdsd_block_dump_result *res, mdsd_err *err);

/* The trees [*first, *end) of shard `shard` of `shards` (0: all). */
void mdsd_tree_dump_shard_trees(const mdsd_tree_dump *t, size_t shard, size_t shards, size_t *first,
                                size_t *end);

/* Folds the sample lines of every shard (parts[i], named names[i] in
 * messages; in shard order) into res: bit for bit the results of
 * mdsd_tree_dump_eval. A missing, repeated or damaged sample is refused. */
int mdsd_tree_dump_fold(const mdsd_tree_dump *t, const mdsd_block_case *cases, size_t ncases,
                        const char *const *parts, const char *const *names, size_t n_parts,
                        mdsd_block_dump_result *res, mdsd_err *err);

#endif
