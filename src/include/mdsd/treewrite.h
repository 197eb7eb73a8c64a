/* mdsd/treewrite.h - writing a tree dump (data/README.md, "Tree dumps") from
 * your own draft-and-verify loop: the file `mdsd block` reads.
 *
 * A tree dump is a version-1 dump (mdsd/dump.h) whose rows are the nodes of
 * sampled draft trees, with the target's and the drafters' logits after each
 * node's prefix. The writer takes one whole tree per call and checks it as
 * the reader does (src/block/treedump_rows.c: parents, edges, slots as the
 * policy fills them, one child per distinct drafted token below depth
 * L - 1; NaN, +inf and all -inf logit rows; tokens outside [0, V); a drafted
 * token of draft probability 0 at the tree temperature; samples out of
 * order; on a live dump, blocks that do not follow each other), refusing a
 * bad tree with a message naming the file, the tree, the argument, the row
 * and the value; a refused tree writes nothing and the writer stays usable.
 * Nothing appears under the path until mdsd_tree_dump_writer_finish, which
 * also opens the finished temporary file with the reader before renaming it.
 *
 * The drafts must have been drawn from softmax(stored logits / T): with
 * dtype float16 or bfloat16, round the drafter's logits to that type before
 * drawing (or write float32, exact). */
#ifndef MDSD_PUBLIC_TREEWRITE_H
#define MDSD_PUBLIC_TREEWRITE_H

#include <mdsd/common.h>
#include <mdsd/dump.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t size;  /* set by the _init below; checked by the library (mdsd/common.h) */
    mdsd_dump_layout dump;      /* the version-1 part (mdsd_dump_layout_init): V, dtype,
                                 * models, drafter names; root attributes named tree_* or
                                 * mdsd_tree among dump.extra_names are refused */
    const char *policy;         /* "seq": K i.i.d. draft sequences; "tree": widths */
    size_t sequences;           /* seq: K in [1, 16] */
    size_t depth;               /* L in [1, 32]: the draft length (tree: the widths given) */
    const size_t *widths;       /* tree: w_1 .. w_L, each in [1, 16] */
    const char *scheme;         /* tree: iid, wor, greedy or hub; seq: iid; NULL = iid */
    const char *drafter;        /* the drafter (of dump.draft_names) that drew the trees;
                                 * NULL = the first */
    double temperature;         /* T > 0: drafts drawn from softmax(stored logits / T) */
    const char *live_verifier;  /* NULL: trees at fixed response positions; else the trees are
                                 * the blocks of live decoding with this token-level verifier
                                 * (tree_contexts = live) */
} mdsd_tree_dump_layout;

/* Zeroes layout and sets size (mdsd_dump_layout_init for dump); temperature = 1. */
MDSD_API void mdsd_tree_dump_layout_init(mdsd_tree_dump_layout *layout, size_t size);
#define mdsd_tree_dump_layout_init(layout) mdsd_tree_dump_layout_init((layout), sizeof *(layout))

typedef struct mdsd_tree_dump_writer mdsd_tree_dump_writer;

MDSD_API mdsd_tree_dump_writer *mdsd_tree_dump_writer_new(const char *path,
                                                          const mdsd_tree_dump_layout *layout,
                                                          mdsd_err *err);
/* S, the slots per row: K (seq) or the largest width (tree). */
MDSD_API size_t mdsd_tree_dump_writer_slots(const mdsd_tree_dump_writer *w);

/* Appends one tree of `rows` nodes (row 0 its root, every row's parent
 * before it; the nodes of depth < L only):
 *   target[rows * V], drafts[j][rows * V]  logits after each node's prefix
 *   tokens[rows]   at the root the token the target emitted at the tree's
 *                  position, elsewhere a token the target samples after
 *                  the node's prefix (in [0, V))
 *   parent[rows]   -1 for row 0, else the earlier row this one extends
 *   edge[rows]     -1 for row 0, else the token this row adds to its
 *                  parent's prefix (one of the parent's slots)
 *   slots[rows * S] the node's drafts in draft order, -1 = unused (seq: slot
 *                  k = the token sequence k drafted here, where it passes;
 *                  tree: the w_{d+1} children drawn at depth d)
 *   sample, position  the response and the position in it whose prefix is
 *                  the tree's context (trees in sample order)
 *   tau            live dumps: the tokens the block yielded in the live run
 *                  (in [1, L + 1]; the next tree of the sample starts at
 *                  position + tau); 0 on a dump of fixed positions. */
MDSD_API mdsd_status mdsd_tree_dump_writer_write(mdsd_tree_dump_writer *w, size_t rows, const float *target,
                                         const float *const *drafts, const int32_t *tokens,
                                         const int64_t *parent, const int32_t *edge,
                                         const int32_t *slots, int32_t sample, int32_t position,
                                         int32_t tau, mdsd_err *err);
/* Writes the tree datasets, closes, syncs, checks the file with the reader
 * and renames it onto the path; frees w whatever the result (after a
 * failure no file is left). Fails if no tree was written. */
MDSD_API mdsd_status mdsd_tree_dump_writer_finish(mdsd_tree_dump_writer *w, mdsd_err *err);
/* Abandons the file (the temporary file is removed) and frees w; NULL allowed. */
MDSD_API void mdsd_tree_dump_writer_free(mdsd_tree_dump_writer *w);

#ifdef __cplusplus
}
#endif
#endif
