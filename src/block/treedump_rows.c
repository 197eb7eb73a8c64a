/* treedump_rows.c - the tree datasets of a tree dump read and checked row
 * by row (treedump_impl.h): the tree rules, the live fields against each
 * other, and every drafted token against the draft law it came from. */
#include "treedump_impl.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads an integer dataset of `count` values (rank 1, or rank 2 with cols). */
int mdsd_treedump_read_ints(hid_t file, const mdsd_tree_dump *t, const char *name, size_t cols,
                            hid_t memtype, void *out, mdsd_err *err)
{
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree dump without dataset %s", t->path, name);
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: cannot open dataset %s", t->path, name);
    hid_t sp = H5Dget_space(ds), ty = H5Dget_type(ds);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    int rc = MDSD_OK;
    if (H5Tget_class(ty) != H5T_INTEGER)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: dataset %s is not an integer dataset", t->path, name);
    else if (rank != (cols ? 2 : 1) || dims[0] != t->N || (cols && dims[1] != cols)) {
        /* the second extent only where there is one ("[100]", not "[1000]") */
        char has[64] = "", want[64] = "";
        if (rank == 2)
            snprintf(has, sizeof has, " x %llu", (unsigned long long)dims[1]);
        if (cols)
            snprintf(want, sizeof want, " x %zu", cols);
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: dataset %s has shape [%llu%s], expected [%zu%s]",
                       t->path, name, (unsigned long long)dims[0], has, t->N, want);
    }
    else if (H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        rc = mdsd_fail(err, MDSD_EIO, "%s: cannot read dataset %s (values out of range?)",
                       t->path, name);
    H5Tclose(ty);
    H5Sclose(sp);
    H5Dclose(ds);
    return rc;
}


/* Every row against the tree rules; builds root[] and the child lists. */
int mdsd_treedump_check_rows(mdsd_tree_dump *t, mdsd_err *err)
{
    size_t N = t->N, S = t->S, L = t->pol.depth;
    t->root = malloc((N + 1) * sizeof *t->root);
    t->kid_start = calloc(N + 1, sizeof *t->kid_start);
    t->kid = malloc(N * sizeof *t->kid);
    if (!t->root || !t->kid_start || !t->kid)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", t->path);
    const char *p = t->path;
    for (size_t u = 0; u < N; u++) {
        long long par = t->parent[u];
        const int *sl = t->slots + u * S;
        if (par == -1) {
            if (t->depth[u] != 0 || t->edge[u] != -1)
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu: a root (parent -1) needs depth "
                                 "0 and edge -1, has %d and %d", p, u, t->depth[u], t->edge[u]);
            if (t->n_trees && t->sample[u] < t->sample[t->root[t->n_trees - 1]])
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /tree_sample: sample %d "
                                 "after sample %d (trees must be in sample order)", p, u,
                                 t->sample[u], t->sample[t->root[t->n_trees - 1]]);
            t->root[t->n_trees++] = u;
        } else {
            if (par < 0 || (size_t)par >= u || t->n_trees == 0 ||
                (size_t)par < t->root[t->n_trees - 1])
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /parent: %lld is not an "
                                 "earlier row of the same tree", p, u, par);
            if (t->depth[u] != t->depth[par] + 1)
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /depth: %d, its parent's is "
                                 "%d", p, u, t->depth[u], t->depth[par]);
            if (t->sample[u] != t->sample[par])
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /tree_sample: %d differs "
                                 "from its parent's %d", p, u, t->sample[u], t->sample[par]);
            int found = 0;
            for (size_t s = 0; s < S; s++)
                found |= t->slots[(size_t)par * S + s] == t->edge[u];
            if (t->edge[u] < 0 || !found)
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /edge: token %d is not among "
                                 "its parent's drafts", p, u, t->edge[u]);
        }
        if (t->depth[u] < 0 || (size_t)t->depth[u] >= L)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /depth: %d outside [0, %zu)", p,
                             u, t->depth[u], L);
        for (size_t s = 0; s < S; s++) {
            if (sl[s] < -1 || sl[s] >= (int)t->V)
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /slots: token %d outside "
                                 "[0, %zu) (-1 = unused)", p, u, sl[s], t->V);
            int want;
            if (t->pol.kind == MDSD_POLICY_TREE)
                want = s < t->pol.width[t->depth[u]];
            else if (par == -1)
                want = 1;
            else
                want = t->slots[(size_t)par * S + s] == t->edge[u];
            if (want != (sl[s] >= 0))
                return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu of /slots: slot %zu is %s, the "
                                 "policy says it is %s", p, u, s, sl[s] >= 0 ? "used" : "unused",
                                 want ? "used" : "unused");
        }
    }
    if (t->n_trees == 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: no root row (parent -1)", p);
    t->root[t->n_trees] = N;
    /* children lists: count, prefix sums, fill */
    size_t *fill = calloc(N + 1, sizeof *fill);
    if (!fill)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", p);
    for (size_t u = 0; u < N; u++)
        if (t->parent[u] >= 0)
            t->kid_start[t->parent[u] + 1]++;
    for (size_t u = 0; u < N; u++)
        t->kid_start[u + 1] += t->kid_start[u];
    for (size_t u = 0; u < N; u++)
        if (t->parent[u] >= 0) {
            size_t par = (size_t)t->parent[u];
            t->kid[t->kid_start[par] + fill[par]++] = u;
        }
    free(fill);
    /* one child per distinct drafted token below depth L - 1, none at L - 1 */
    for (size_t u = 0; u < N; u++) {
        const int *sl = t->slots + u * S;
        size_t distinct = 0;
        for (size_t s = 0; s < S; s++) {
            int first = sl[s] >= 0;
            for (size_t r = 0; r < s && first; r++)
                first = sl[r] != sl[s];
            distinct += first;
        }
        size_t kids = t->kid_start[u + 1] - t->kid_start[u];
        size_t want = (size_t)t->depth[u] + 1 < L ? distinct : 0;
        for (size_t a = t->kid_start[u]; a < t->kid_start[u + 1]; a++)
            for (size_t b = t->kid_start[u]; b < a; b++)
                if (t->edge[t->kid[a]] == t->edge[t->kid[b]])
                    return mdsd_fail(err, MDSD_EFORMAT, "%s: rows %zu and %zu: two children of "
                                     "row %zu with edge %d", p, t->kid[b], t->kid[a], u,
                                     t->edge[t->kid[a]]);
        if (kids != want)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: row %zu has %zu child rows, expected %zu "
                             "(one per distinct drafted token below depth %zu)", p, u, kids, want,
                             L - 1);
    }
    return MDSD_OK;
}

/* The tree holding row u (root[] is sorted). */
static size_t tree_of(const mdsd_tree_dump *t, size_t u)
{
    size_t lo = 0, hi = t->n_trees; /* root[lo] <= u < root[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->root[mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int mdsd_treedump_check_live_rows(hid_t file, const mdsd_tree_dump *t, mdsd_err *err)
{
    size_t N = t->N, L = t->pol.depth;
    int *pos = malloc((N ? N : 1) * sizeof *pos), *tau = malloc((N ? N : 1) * sizeof *tau);
    int rc = pos && tau ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory", t->path);
    if (rc == MDSD_OK)
        rc = mdsd_treedump_read_ints(file, t, "/tree_position", 0, H5T_NATIVE_INT, pos, err);
    if (rc == MDSD_OK)
        rc = mdsd_treedump_read_ints(file, t, "/tree_tau", 0, H5T_NATIVE_INT, tau, err);
    const char *p = t->path;
    for (size_t i = 0; rc == MDSD_OK && i < t->n_trees; i++) {
        size_t r0 = t->root[i];
        for (size_t u = r0 + 1; rc == MDSD_OK && u < t->root[i + 1]; u++) {
            bool moved = pos[u] != pos[r0]; /* else tau differs, if anything */
            const int *field = moved ? pos : tau;
            if (moved || tau[u] != tau[r0])
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s: tree %zu, row %zu of %s: %d, the tree's root "
                               "(row %zu) has %d (one value per tree)", p, i, u,
                               moved ? "/tree_position" : "/tree_tau", field[u], r0, field[r0]);
        }
        if (rc)
            break;
        if (tau[r0] < 1 || (size_t)tau[r0] > L + 1) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: tree %zu (row %zu) of /tree_tau: %d outside [1, %zu] "
                           "(a block of depth %zu yields 1 to %zu tokens)", p, i, r0, tau[r0], L + 1, L,
                           L + 1);
            break;
        }
        /* a live run starts at position 0 and its next block where this one stopped */
        bool first = i == 0 || t->sample[r0] != t->sample[t->root[i - 1]];
        size_t prev = first ? 0 : t->root[i - 1];
        long long want = first ? 0 : (long long)pos[prev] + tau[prev];
        if (pos[r0] != want) {
            if (first)
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s: tree %zu (row %zu) of /tree_position: %d, but it "
                               "is the first tree of sample %d, whose live run starts at position 0", p,
                               i, r0, pos[r0], t->sample[r0]);
            else
                rc = mdsd_fail(err, MDSD_EFORMAT, "%s: tree %zu (row %zu) of /tree_position: %d, but the "
                               "tree before it in sample %d (row %zu) starts at %d and yielded /tree_tau "
                               "%d tokens: this block starts at %lld", p, i, r0, pos[r0], t->sample[r0],
                               prev, pos[prev], tau[prev], want);
        }
    }
    free(pos);
    free(tau);
    return rc;
}

int mdsd_treedump_check_drafts(const mdsd_tree_dump *t, const mdsd_tree_dump *f, size_t row,
                               size_t local, const float *logits, const double *q, mdsd_err *err)
{
    const int *sl = t->slots + row * t->S;
    for (size_t s = 0; s < t->S; s++) {
        if (sl[s] < 0 || q[sl[s]] > 0.0)
            continue;
        size_t tree = tree_of(t, row);
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree %zu, node %zu (row %zu of /slots), slot %zu: "
                         "drafted token %d has draft probability %g under %s (logit %g at "
                         "tree_temperature %g): the tree could not have drawn it", f->path, tree,
                         row - t->root[tree], local, s, sl[s], q[sl[s]],
                         mdsd_dump_model_at(f->dump, f->drafter)->path, (double)logits[sl[s]], t->T);
    }
    return MDSD_OK;
}
