/* treedump_write.c - the tree-dump writer (mdsd/treewrite.h): a version-1
 * dump written by dump.h's writer, with the tree datasets and attributes of
 * data/README.md ("Tree dumps") added before it is published.
 *
 * Each tree is checked as the reader checks it before anything of it is
 * written: its structure by the reader's own row check
 * (mdsd_treedump_check_rows on a view of the one tree), its logits as the
 * dump validator and the tree reader do, and its place among the trees
 * (sample order; live blocks one after the other) here. finish then opens
 * the closed temporary file with mdsd_tree_dump_open, so that a file the
 * reader would refuse is never published. */
#include <mdsd/treewrite.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dump_impl.h"
#include "opts.h"
#include "treedump_impl.h"

struct mdsd_tree_dump_writer {
    char path[4096];
    mdsd_dump_writer *dw;
    mdsd_policy pol;
    size_t V, S, n_drafts;
    int drafter;                 /* index of the tree drafter in the layout's drafters */
    char drafter_name[MDSD_DUMP_NAME_MAX];
    double T;
    struct {
        int on;
        mdsd_verifier_kind verifier;
    } live;
    mdsd_dump_dtype dtype;
    /* the tree datasets of every tree written, [N] (slots [N * S]) */
    size_t N, cap, trees;
    long long *parent;
    int *depth, *edge, *slots, *sample, *position, *tau;
    /* scratch for one tree: stored logits of a row, its draft law, sample ids */
    float *row;
    double *q;
    int *tree_sample;
    size_t tree_cap;
};

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_tree_dump_layout_init)(mdsd_tree_dump_layout *layout, size_t size)
{
    mdsd_tree_dump_layout d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_dump_layout_init(&d.dump);
    d.temperature = 1.0;
    mdsd_opts_fill(layout, size, &d, sizeof d);
}

size_t mdsd_tree_dump_writer_slots(const mdsd_tree_dump_writer *w)
{
    return w ? w->S : 0;
}

void mdsd_tree_dump_writer_free(mdsd_tree_dump_writer *w)
{
    if (!w)
        return;
    mdsd_dump_writer_abort(w->dw);
    free(w->parent), free(w->depth), free(w->edge), free(w->slots);
    free(w->sample), free(w->position), free(w->tau);
    free(w->row), free(w->q), free(w->tree_sample);
    free(w);
}

/* The layout's tree policy into w->pol, w->S (the reader's read_policy, from
 * arguments instead of attributes). */
static int layout_policy(mdsd_tree_dump_writer *w, const mdsd_tree_dump_layout *l, mdsd_err *err)
{
    const char *p = w->path;
    /* the policy's name and kind are the registry's (mdsd/registry.h) */
    const mdsd_registry_entry *pe = mdsd_registry_find(MDSD_NAME_POLICY, l->policy);
    if (!pe)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': policy '%s' is neither seq nor tree",
                         p, l->policy ? l->policy : "(NULL)");
    w->pol.depth = l->depth;
    mdsd_err e;
    if (pe->kind == MDSD_POLICY_SEQ) {
        w->pol.kind = MDSD_POLICY_SEQ;
        w->pol.scheme = MDSD_SCHEME_IID;
        if (l->scheme && strcmp(l->scheme, "iid"))
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': scheme '%s' with policy seq (its K "
                             "sequences are drawn iid: the scheme must be iid)", p, l->scheme);
        w->pol.sequences = l->sequences;
        w->S = l->sequences;
    } else {
        w->pol.kind = MDSD_POLICY_TREE;
        if (mdsd_scheme_parse(l->scheme ? l->scheme : "iid", &w->pol.scheme, &e))
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': scheme: %s", p, e.msg);
        if (!l->widths)
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': policy tree without widths", p);
        for (size_t d = 0; d < l->depth && d < MDSD_BLOCK_MAX_DEPTH; d++) {
            w->pol.width[d] = l->widths[d];
            if (w->S < l->widths[d])
                w->S = l->widths[d];
        }
    }
    if (mdsd_policy_check(&w->pol, &e))
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': %s", p, e.msg);
    if (w->pol.kind == MDSD_POLICY_TREE && w->pol.scheme == MDSD_SCHEME_HUB)
        for (size_t d = 0; d < w->pol.depth; d++)
            if (w->pol.width[d] != 2)
                return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': scheme hub drafts two children "
                                 "per node: width w_%zu = %zu must be 2", p, d + 1, w->pol.width[d]);
    if (!(l->temperature > 0.0) || !isfinite(l->temperature))
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': temperature %g is not a temperature > 0",
                         p, l->temperature);
    w->T = l->temperature;
    if (l->live_verifier) {
        if (mdsd_verifier_parse(l->live_verifier, &w->live.verifier, &e))
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': live_verifier: %s", p, e.msg);
        w->live.on = 1;
    }
    return MDSD_OK;
}

mdsd_tree_dump_writer *mdsd_tree_dump_writer_new(const char *path, const mdsd_tree_dump_layout *l,
                                                 mdsd_err *err)
{
    if (!path || !l) {
        mdsd_fail(err, MDSD_EINVAL, "tree dump writer: no %s given (NULL)", !path ? "path" : "layout");
        return NULL;
    }
    if (mdsd_opts_check(l->size, sizeof *l, "mdsd_tree_dump_layout", NULL, err) ||
        mdsd_opts_check(l->dump.size, sizeof l->dump, "mdsd_dump_layout", "dump", err))
        return NULL;
    const mdsd_dump_layout *d = &l->dump;
    if ((unsigned)d->dtype > MDSD_DUMP_BFLOAT16) {
        mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': unknown logits dtype %d", path, (int)d->dtype);
        return NULL;
    }
    mdsd_tree_dump_writer *w = calloc(1, sizeof *w);
    if (!w) {
        mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(w->path, sizeof w->path, "%s", path);
    w->V = d->V;
    w->n_drafts = d->n_drafts;
    w->dtype = d->dtype;
    int rc = layout_policy(w, l, err);
    for (size_t k = 0; rc == MDSD_OK && k < d->n_extra; k++)
        if (d->extra_names[k] && (!strncmp(d->extra_names[k], "tree_", 5) ||
                                  !strcmp(d->extra_names[k], "mdsd_tree")))
            rc = mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': extra root attribute '%s': the tree "
                           "attributes are the writer's (give them in the layout)", path,
                           d->extra_names[k]);
    if (rc == MDSD_OK && d->n_drafts > 0 && !d->draft_names)
        rc = mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': n_drafts = %zu without draft_names", path,
                       d->n_drafts);
    if (rc == MDSD_OK && d->n_drafts > 0) {
        w->drafter = -1;
        for (size_t j = 0; j < d->n_drafts; j++)
            if (d->draft_names[j] && (l->drafter ? !strcmp(d->draft_names[j], l->drafter) : j == 0))
                w->drafter = (int)j;
        if (w->drafter < 0)
            rc = mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': drafter '%s' is not one of the "
                           "layout's draft_names", path, l->drafter);
        else
            snprintf(w->drafter_name, sizeof w->drafter_name, "%s", d->draft_names[w->drafter]);
    }
    if (rc == MDSD_OK && d->V > (size_t)INT32_MAX)
        rc = mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': V = %zu does not fit the int32 token ids",
                       path, d->V);
    if (rc == MDSD_OK && d->V > 0 && (!(w->row = malloc(d->V * sizeof *w->row)) ||
                                      !(w->q = malloc(d->V * sizeof *w->q))))
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    /* the version-1 part: V, drafters, names and everything else checked there */
    /* a tree's logits are complete rows: -inf is probability 0 (the tree
     * checks refuse a drafted token there) */
    mdsd_dump_layout complete = *d;
    complete.neg_inf = MDSD_DUMP_NEG_INF_ZERO;
    if (rc == MDSD_OK)
        rc = mdsd_dump_writer_open(path, &complete, &w->dw, err);
    if (rc) {
        mdsd_tree_dump_writer_free(w);
        return NULL;
    }
    return w;
}

/* Room for `more` rows in the tree arrays and for one tree of `more` rows. */
static int reserve(mdsd_tree_dump_writer *w, size_t more, mdsd_err *err)
{
    if (w->tree_cap < more) {
        int *s = realloc(w->tree_sample, more * sizeof *s);
        if (!s)
            return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
        w->tree_sample = s;
        w->tree_cap = more;
    }
    if (w->N + more <= w->cap)
        return MDSD_OK;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->N + more)
        cap *= 2;
    long long *par = realloc(w->parent, cap * sizeof *par);
    if (par)
        w->parent = par;
    int **ints[] = {&w->depth, &w->edge, &w->sample, &w->position, &w->tau};
    int ok = par != NULL;
    for (size_t k = 0; ok && k < sizeof ints / sizeof *ints; k++) {
        int *x = realloc(*ints[k], cap * sizeof *x);
        ok = x != NULL;
        if (ok)
            *ints[k] = x;
    }
    int *sl = ok ? realloc(w->slots, cap * w->S * sizeof *sl) : NULL;
    if (!sl)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory for %zu tree rows", cap);
    w->slots = sl;
    w->cap = cap;
    return MDSD_OK;
}

/* The logits of one row as stored (rounded to the dump's dtype), refusing
 * what the writer and the validator refuse: NaN, +inf (also by overflow of
 * the dtype), a row without a finite value. */
static int stored_row(mdsd_tree_dump_writer *w, const char *what, size_t tree, size_t r,
                      const float *x, mdsd_err *err)
{
    int finite = 0;
    for (size_t i = 0; i < w->V; i++) {
        float v = x[i];
        if (isnan(v) || v == INFINITY)
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: %s row %zu, logit %zu is %s",
                             w->path, tree, what, r, i, isnan(v) ? "NaN" : "+inf");
        if (w->dtype == MDSD_DUMP_FLOAT16)
            v = mdsd_half_to_float(mdsd_float_to_half(v));
        else if (w->dtype == MDSD_DUMP_BFLOAT16)
            v = mdsd_bfloat16_to_float(mdsd_float_to_bfloat16(v));
        if (v == INFINITY)
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: %s row %zu, logit %zu = %g "
                             "overflows %s", w->path, tree, what, r, i, (double)x[i],
                             mdsd_dtype_name(w->dtype));
        finite |= isfinite(v);
        w->row[i] = v;
    }
    if (!finite)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: %s row %zu has no finite "
                         "logit (all -inf)", w->path, tree, what, r);
    return MDSD_OK;
}

/* The tree's logits, and every drafted token against the draft law the
 * reader will compute from the stored drafter logits. */
static int check_logits(mdsd_tree_dump_writer *w, size_t tree, size_t rows, const float *target,
                        const float *const *drafts, const int32_t *slots, mdsd_err *err)
{
    char what[MDSD_DUMP_NAME_MAX + 32];
    for (size_t r = 0; r < rows; r++) {
        int rc = stored_row(w, "target", tree, r, target + r * w->V, err);
        for (size_t j = 0; rc == MDSD_OK && j < w->n_drafts; j++) {
            snprintf(what, sizeof what, "drafts[%zu]", j);
            rc = stored_row(w, what, tree, r, drafts[j] + r * w->V, err);
            if (rc || (int)j != w->drafter)
                continue;
            /* the reader's draft law: softmax(stored logits / T) */
            if ((rc = mdsd_softmax_float(w->row, w->V, w->T, w->q, what, err)))
                break;
            for (size_t s = 0; s < w->S; s++) {
                int32_t t = slots[r * w->S + s];
                if (t >= 0 && (size_t)t < w->V && !(w->q[t] > 0.0))
                    return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: slots row %zu, "
                                     "slot %zu: drafted token %d has draft probability %g under "
                                     "drafter '%s' (logit %g at temperature %g, as stored): the "
                                     "tree could not have drawn it", w->path, tree, r, s, (int)t,
                                     w->q[t], w->drafter_name, (double)w->row[t], w->T);
            }
        }
        if (rc)
            return rc;
    }
    return MDSD_OK;
}

/* The tree's structure: parents, depths and tokens here, the rest by the
 * reader's row check on a view of the tree alone (rows numbered in the
 * tree). Fills the tree's rows of the arrays at w->N. */
static int check_tree(mdsd_tree_dump_writer *w, size_t tree, size_t rows, const int32_t *tokens,
                      const int64_t *parent, const int32_t *edge, const int32_t *slots,
                      int32_t sample, mdsd_err *err)
{
    const char *p = w->path;
    long long *par = w->parent + w->N;
    int *depth = w->depth + w->N;
    for (size_t u = 0; u < rows; u++) {
        if (u == 0 ? parent[0] != -1 : parent[u] < 0 || (uint64_t)parent[u] >= u)
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: parent row %zu is %lld: %s",
                             p, tree, u, (long long)parent[u],
                             u == 0 ? "row 0 is the root (parent -1)"
                                    : "not an earlier row of this tree (one tree per call)");
        par[u] = parent[u];
        depth[u] = u == 0 ? 0 : depth[parent[u]] + 1;
        if ((size_t)depth[u] >= w->pol.depth)
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: row %zu is at depth %d, "
                             "beyond the dump's depth L - 1 = %zu (rows are the nodes of depth < L)",
                             p, tree, u, depth[u], w->pol.depth - 1);
        if (tokens[u] < 0 || (size_t)tokens[u] >= w->V)
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: tokens row %zu is %d, "
                             "outside [0, %zu)", p, tree, u, (int)tokens[u], w->V);
        w->tree_sample[u] = sample;
    }
    memcpy(w->edge + w->N, edge, rows * sizeof *edge);
    memcpy(w->slots + w->N * w->S, slots, rows * w->S * sizeof *slots);
    mdsd_tree_dump v;
    memset(&v, 0, sizeof v);
    snprintf(v.path, sizeof v.path, "tree dump '%.3900s': tree %zu", p, tree);
    v.pol = w->pol;
    v.N = rows;
    v.V = w->V;
    v.S = w->S;
    v.parent = par;
    v.depth = depth;
    v.edge = w->edge + w->N;
    v.slots = w->slots + w->N * w->S;
    v.sample = w->tree_sample;
    int rc = mdsd_treedump_check_rows(&v, err);
    free(v.root), free(v.kid_start), free(v.kid);
    return rc;
}

/* The tree's place: samples in order; on a live dump each block where the
 * one before it stopped (the reader's mdsd_treedump_check_live_rows). */
static int check_place(const mdsd_tree_dump_writer *w, size_t tree, int32_t sample,
                       int32_t position, int32_t tau, mdsd_err *err)
{
    const char *p = w->path;
    if (sample < 0 || position < 0)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: %s %d is negative", p, tree,
                         sample < 0 ? "sample" : "position", sample < 0 ? sample : position);
    size_t last = w->N ? w->N - 1 : 0; /* a row of the tree before */
    int first = w->N == 0 || w->sample[last] != sample;
    if (w->N && sample < w->sample[last])
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: sample %d after sample %d "
                         "(trees must be in sample order)", p, tree, sample, w->sample[last]);
    if (!w->live.on)
        return tau == 0 ? MDSD_OK
                        : mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: tau %d on a dump "
                                    "of fixed positions (tau is for live dumps: give 0)", p, tree, tau);
    size_t L = w->pol.depth;
    if (tau < 1 || (size_t)tau > L + 1)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: tau %d outside [1, %zu] (a "
                         "block of depth %zu yields 1 to %zu tokens)", p, tree, tau, L + 1, L, L + 1);
    long long want = first ? 0 : (long long)w->position[last] + w->tau[last];
    if (position != want)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu: position %d, but %s starts "
                         "at %lld", p, tree, position,
                         first ? "the live run of a new sample" : "the block after the tree before", want);
    return MDSD_OK;
}

mdsd_status mdsd_tree_dump_writer_write(mdsd_tree_dump_writer *w, size_t rows, const float *target,
                                const float *const *drafts, const int32_t *tokens,
                                const int64_t *parent, const int32_t *edge, const int32_t *slots,
                                int32_t sample, int32_t position, int32_t tau, mdsd_err *err)
{
    if (!w || !target || !drafts || !tokens || !parent || !edge || !slots)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump writer: an argument is NULL");
    for (size_t j = 0; j < w->n_drafts; j++)
        if (!drafts[j])
            return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': drafts[%zu] is NULL", w->path, j);
    size_t tree = w->trees;
    if (rows == 0)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': tree %zu has no rows (a tree has at "
                         "least its root)", w->path, tree);
    if (rows > (size_t)INT32_MAX - w->N)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': more than %d rows", w->path, INT32_MAX);
    int rc = reserve(w, rows, err);
    if (rc == MDSD_OK)
        rc = check_place(w, tree, sample, position, tau, err);
    if (rc == MDSD_OK)
        rc = check_tree(w, tree, rows, tokens, parent, edge, slots, sample, err);
    if (rc == MDSD_OK)
        rc = check_logits(w, tree, rows, target, drafts, slots, err);
    if (rc)
        return rc;
    /* /sample_id = the tree, /position = the row in it (data/README.md) */
    int *ids = w->sample + w->N, *pos = w->position + w->N;
    for (size_t u = 0; u < rows; u++)
        ids[u] = (int)tree, pos[u] = (int)u;
    rc = mdsd_dump_writer_append(w->dw, rows, target, drafts, tokens, ids, pos, err);
    if (rc)
        return rc;
    for (size_t u = 0; u < rows; u++) {
        w->sample[w->N + u] = sample;
        w->position[w->N + u] = position;
        w->tau[w->N + u] = tau;
        w->parent[w->N + u] += (long long)w->N; /* tree-local -> row of the dump */
        if (u == 0)
            w->parent[w->N] = -1;
    }
    w->N += rows;
    w->trees++;
    return MDSD_OK;
}

/* One integer dataset of the tree, [N] or [N x cols]. */
static int write_ints(mdsd_tree_dump_writer *w, hid_t file, const char *name, hid_t ftype,
                      hid_t mtype, size_t cols, const void *data, mdsd_err *err)
{
    hsize_t dims[2] = {w->N, cols};
    hid_t s = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t ds = s < 0 ? -1 : H5Dcreate2(file, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t st = ds < 0 ? -1 : H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    dump_h5_close(ds);
    dump_h5_close(s);
    char why[256];
    return st < 0 ? mdsd_fail(err, MDSD_EIO, "cannot write tree dump '%s': %s (%s)", w->path, name,
                              dump_h5_reason(why, sizeof why))
                  : MDSD_OK;
}

static int write_tree_attrs(mdsd_tree_dump_writer *w, hid_t file, mdsd_err *err)
{
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    int one = 1;
    const mdsd_policy *pol = &w->pol;
    int seq = pol->kind == MDSD_POLICY_SEQ;
    int ok = root >= 0 && dump_write_attr(root, "mdsd_tree", H5T_STD_I32LE, H5T_NATIVE_INT, &one) >= 0 &&
             dump_write_attr_string(root, "tree_policy", seq ? "seq" : "tree") >= 0 &&
             dump_write_attr_i64(root, "tree_depth", (long long)pol->depth) >= 0 &&
             dump_write_attr_string(root, "tree_scheme", mdsd_scheme_name(pol->scheme)) >= 0 &&
             dump_write_attr_string(root, "tree_drafter", w->drafter_name) >= 0 &&
             dump_write_attr(root, "tree_temperature", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &w->T) >= 0;
    if (ok && seq) {
        ok = dump_write_attr_i64(root, "tree_sequences", (long long)pol->sequences) >= 0;
    } else if (ok) {
        long long widths[MDSD_BLOCK_MAX_DEPTH];
        for (size_t d = 0; d < pol->depth; d++)
            widths[d] = (long long)pol->width[d];
        hsize_t n = pol->depth;
        hid_t s = H5Screate_simple(1, &n, NULL);
        hid_t a = s < 0 ? -1 : H5Acreate2(root, "tree_widths", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
        ok = a >= 0 && H5Awrite(a, H5T_NATIVE_LLONG, widths) >= 0;
        dump_h5_close(a);
        dump_h5_close(s);
    }
    if (ok && w->live.on)
        ok = dump_write_attr_string(root, "tree_contexts", "live") >= 0 &&
             dump_write_attr_string(root, "tree_live_verifier", mdsd_verifier_name(w->live.verifier)) >= 0;
    dump_h5_close(root);
    char why[256];
    return ok ? MDSD_OK
              : mdsd_fail(err, MDSD_EIO, "cannot write tree dump '%s': the tree attributes of '/' (%s)",
                          w->path, dump_h5_reason(why, sizeof why));
}

/* The gate of finish: the reader opens the finished file, or it is not published. */
static int reader_accepts(const char *tmp, void *ctx, mdsd_err *err)
{
    const mdsd_tree_dump_writer *w = ctx;
    mdsd_tree_dump *t = NULL;
    mdsd_err e;
    mdsd_err_clear(&e);
    int rc = mdsd_tree_dump_open(tmp, &t, &e);
    mdsd_tree_dump_close(t);
    if (rc)
        return mdsd_fail(err, rc, "tree dump '%s' not written: the tree-dump reader refuses it (a "
                         "bug of the writer): %s", w->path, e.msg);
    return MDSD_OK;
}

mdsd_status mdsd_tree_dump_writer_finish(mdsd_tree_dump_writer *w, mdsd_err *err)
{
    if (!w)
        return mdsd_fail(err, MDSD_EINVAL, "tree dump writer: NULL");
    int rc = MDSD_OK;
    if (w->trees == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "tree dump '%s': no tree was written (an empty dump is "
                       "invalid)", w->path);
    hid_t f = rc ? -1 : dump_writer_file(w->dw);
    if (rc == MDSD_OK)
        rc = write_tree_attrs(w, f, err);
    if (rc == MDSD_OK)
        rc = write_ints(w, f, "/parent", H5T_STD_I64LE, H5T_NATIVE_LLONG, 0, w->parent, err);
    if (rc == MDSD_OK)
        rc = write_ints(w, f, "/depth", H5T_STD_I32LE, H5T_NATIVE_INT, 0, w->depth, err);
    if (rc == MDSD_OK)
        rc = write_ints(w, f, "/edge", H5T_STD_I32LE, H5T_NATIVE_INT, 0, w->edge, err);
    if (rc == MDSD_OK)
        rc = write_ints(w, f, "/slots", H5T_STD_I32LE, H5T_NATIVE_INT, w->S, w->slots, err);
    if (rc == MDSD_OK)
        rc = write_ints(w, f, "/tree_sample", H5T_STD_I32LE, H5T_NATIVE_INT, 0, w->sample, err);
    if (rc == MDSD_OK)
        rc = write_ints(w, f, "/tree_position", H5T_STD_I32LE, H5T_NATIVE_INT, 0, w->position, err);
    if (rc == MDSD_OK && w->live.on)
        rc = write_ints(w, f, "/tree_tau", H5T_STD_I32LE, H5T_NATIVE_INT, 0, w->tau, err);
    if (rc == MDSD_OK) {
        mdsd_dump_writer *dw = w->dw;
        w->dw = NULL; /* commit frees it, whatever the result */
        rc = dump_writer_commit_checked(dw, reader_accepts, w, err);
    }
    mdsd_tree_dump_writer_free(w);
    return rc;
}
