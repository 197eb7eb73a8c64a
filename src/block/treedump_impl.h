/* treedump_impl.h - the row checks of the tree-dump reader, shared by
 * treedump.c (open, evaluate) and treedump_rows.c. */
#ifndef MDSD_TREEDUMP_IMPL_H
#define MDSD_TREEDUMP_IMPL_H

#include <hdf5.h>

#include "treedump.h"

/* Reads an integer dataset of t->N values (rank 1, or rank 2 with cols). */
int mdsd_treedump_read_ints(hid_t file, const mdsd_tree_dump *t, const char *name, size_t cols,
                            hid_t memtype, void *out, mdsd_err *err);

/* Every row against the tree rules; builds root[] and the child lists. */
int mdsd_treedump_check_rows(mdsd_tree_dump *t, mdsd_err *err);

/* A live dump (t->live, rows checked): /tree_position and /tree_tau, one
 * value per tree, each tree of a sample where the one before stopped. */
int mdsd_treedump_check_live_rows(hid_t file, const mdsd_tree_dump *t, mdsd_err *err);

/* Row `row` of t (of the file f, where it is row `local`): every token it
 * drafts must have positive probability in q, its draft law (the
 * drafter's `logits` at the tree temperature): else the tree holds a draft
 * it could not have drawn, and its E[tau] would count it. */
int mdsd_treedump_check_drafts(const mdsd_tree_dump *t, const mdsd_tree_dump *f, size_t row,
                               size_t local, const float *logits, const double *q, mdsd_err *err);

#endif
