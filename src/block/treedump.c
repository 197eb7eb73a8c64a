/* treedump.c - reading, checking and evaluating tree dumps (treedump.h).
 * The logits come through dump.h's reader; the tree datasets (small
 * integer arrays) are read here whole with HDF5. */
#include "treedump.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>
#include <omp.h>

#include "blockv.h"
#include "treedump_impl.h"
#include "cluster.h"
#include "dist.h"

static const char *attr_text(const mdsd_dump *d, const char *name)
{
    for (size_t i = 0; i < d->n_attrs; i++)
        if (!strcmp(d->attrs[i].name, name))
            return d->attrs[i].value;
    return NULL;
}

static int attr_size(const mdsd_tree_dump *t, const char *name, size_t lo, size_t hi,
                     size_t *out, mdsd_err *err)
{
    const char *s = attr_text(t->dump, name);
    char *end;
    if (!s)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree dump without the root attribute %s",
                         t->path, name);
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < (long long)lo || v > (long long)hi)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: root attribute %s = '%s' is not an integer in "
                         "[%zu, %zu]", t->path, name, s, lo, hi);
    *out = (size_t)v;
    return MDSD_OK;
}

void mdsd_tree_dump_close(mdsd_tree_dump *t)
{
    if (!t)
        return;
    if (t->n_parts) /* dump is the first file's */
        for (size_t k = 0; k < t->n_parts; k++)
            mdsd_tree_dump_close(t->parts[k]);
    else
        mdsd_dump_close(t->dump);
    free(t->parts);
    free(t->part_row0);
    free(t->parent);
    free(t->depth);
    free(t->edge);
    free(t->slots);
    free(t->sample);
    free(t->root);
    free(t->kid_start);
    free(t->kid);
    free(t);
}

/* tree_contexts and tree_live_verifier (treedump.h). */
static int read_contexts(mdsd_tree_dump *t, mdsd_err *err)
{
    const char *contexts = attr_text(t->dump, "tree_contexts");
    const char *verifier = attr_text(t->dump, "tree_live_verifier");
    t->live = contexts && !strcmp(contexts, "live");
    if (contexts && !t->live && strcmp(contexts, "positions"))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_contexts '%s' is neither positions nor live",
                         t->path, contexts);
    if (!t->live)
        return verifier ? mdsd_fail(err, MDSD_EFORMAT, "%s: tree_live_verifier without "
                                    "tree_contexts = live", t->path)
                        : MDSD_OK;
    mdsd_err e;
    if (!verifier)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_contexts = live without tree_live_verifier",
                         t->path);
    if (mdsd_verifier_parse(verifier, &t->live_verifier, &e))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_live_verifier: %s", t->path, e.msg);
    return MDSD_OK;
}

static int read_policy(mdsd_tree_dump *t, mdsd_err *err)
{
    const mdsd_dump *d = t->dump;
    const char *s = attr_text(d, "mdsd_tree");
    if (!s || strcmp(s, "1"))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: not a tree dump (root attribute mdsd_tree = 1 "
                         "missing; flat dumps go to mdsd table)", t->path);
    const char *policy = attr_text(d, "tree_policy"), *scheme = attr_text(d, "tree_scheme");
    const char *drafter = attr_text(d, "tree_drafter"), *temp = attr_text(d, "tree_temperature");
    if (!policy || !scheme || !drafter || !temp)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree dump without tree_policy, tree_scheme, "
                         "tree_drafter or tree_temperature", t->path);
    int rc = attr_size(t, "tree_depth", 1, MDSD_BLOCK_MAX_DEPTH, &t->pol.depth, err);
    if (rc)
        return rc;
    /* the policy's name and kind are the registry's (mdsd/registry.h) */
    const mdsd_registry_entry *pe = mdsd_registry_find(MDSD_NAME_POLICY, policy);
    if (pe && pe->kind == MDSD_POLICY_SEQ) {
        t->pol.kind = MDSD_POLICY_SEQ;
        t->pol.scheme = MDSD_SCHEME_IID;
        /* read, though a seq dump's sequences are always iid: a dump that
         * says otherwise was not drawn as the reader evaluates it */
        if (strcmp(scheme, "iid"))
            return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_scheme '%s' with tree_policy seq (its K "
                             "sequences are drawn iid: tree_scheme must be iid)", t->path, scheme);
        if ((rc = attr_size(t, "tree_sequences", 1, MDSD_BLOCK_MAX_DRAFTS, &t->pol.sequences, err)))
            return rc;
        t->S = t->pol.sequences;
    } else if (pe && pe->kind == MDSD_POLICY_TREE) {
        t->pol.kind = MDSD_POLICY_TREE;
        mdsd_err e;
        if (mdsd_scheme_parse(scheme, &t->pol.scheme, &e))
            return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_scheme: %s", t->path, e.msg);
        const char *w = attr_text(d, "tree_widths");
        size_t n = 0;
        char *end;
        for (const char *c = w; c && *c; n++) {
            long v = strtol(c, &end, 10);
            if (end == c || v < 1 || v > MDSD_BLOCK_MAX_DRAFTS || n >= MDSD_BLOCK_MAX_DEPTH)
                return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_widths '%s' is not a list of "
                                 "widths in [1, %d]", t->path, w, MDSD_BLOCK_MAX_DRAFTS);
            t->pol.width[n] = (size_t)v;
            if (t->S < (size_t)v)
                t->S = (size_t)v;
            c = *end == ',' ? end + 1 : end;
            if (*end && *end != ',')
                return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_widths '%s': bad separator",
                                 t->path, w);
        }
        if (n != t->pol.depth)
            return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_widths '%s' has %zu widths, tree_depth "
                             "is %zu", t->path, w ? w : "", n, t->pol.depth);
    } else {
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_policy '%s' is neither seq nor tree",
                         t->path, policy);
    }
    if ((rc = mdsd_policy_check(&t->pol, err)))
        return rc;
    t->drafter = mdsd_dump_find_draft(d, drafter);
    if (t->drafter < 0)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_drafter '%s' is not a drafter of the dump",
                         t->path, drafter);
    char *end;
    t->T = strtod(temp, &end);
    if (end == temp || *end || !(t->T > 0.0) || !isfinite(t->T))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: tree_temperature '%s' is not a temperature > 0",
                         t->path, temp);
    return read_contexts(t, err);
}

static int open_file(const char *path, mdsd_tree_dump **out, mdsd_err *err)
{
    *out = NULL;
    mdsd_tree_dump *t = calloc(1, sizeof *t);
    if (!t)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    snprintf(t->path, sizeof t->path, "%s", path);
    int rc = mdsd_dump_open(path, &t->dump, err);
    if (rc == MDSD_OK) {
        t->N = t->dump->N;
        t->V = t->dump->V;
        rc = read_policy(t, err);
    }
    if (rc == MDSD_OK) {
        t->parent = malloc(t->N * sizeof *t->parent);
        t->depth = malloc(t->N * sizeof *t->depth);
        t->edge = malloc(t->N * sizeof *t->edge);
        t->slots = malloc(t->N * t->S * sizeof *t->slots);
        t->sample = malloc(t->N * sizeof *t->sample);
        if (!t->parent || !t->depth || !t->edge || !t->slots || !t->sample)
            rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory for %zu rows", path, t->N);
    }
    if (rc == MDSD_OK) {
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0)
            rc = mdsd_fail(err, MDSD_EIO, "%s: cannot open as HDF5", path);
        if (rc == MDSD_OK)
            rc = mdsd_treedump_read_ints(f, t, "/parent", 0, H5T_NATIVE_LLONG, t->parent, err);
        if (rc == MDSD_OK)
            rc = mdsd_treedump_read_ints(f, t, "/depth", 0, H5T_NATIVE_INT, t->depth, err);
        if (rc == MDSD_OK)
            rc = mdsd_treedump_read_ints(f, t, "/edge", 0, H5T_NATIVE_INT, t->edge, err);
        if (rc == MDSD_OK)
            rc = mdsd_treedump_read_ints(f, t, "/slots", t->S, H5T_NATIVE_INT, t->slots, err);
        if (rc == MDSD_OK)
            rc = mdsd_treedump_read_ints(f, t, "/tree_sample", 0, H5T_NATIVE_INT, t->sample, err);
        if (rc == MDSD_OK)
            rc = mdsd_treedump_check_rows(t, err);
        if (rc == MDSD_OK && t->live)
            rc = mdsd_treedump_check_live_rows(f, t, err);
        if (f >= 0)
            H5Fclose(f);
    }
    if (rc) {
        mdsd_tree_dump_close(t);
        return rc;
    }
    *out = t;
    return MDSD_OK;
}

/* A file of a split tree dump against the first: parts of one dataset
 * (mdsd_dump_check_part) drawn with the same tree policy. */
static int check_tree_part(const mdsd_tree_dump *first, const mdsd_tree_dump *t, mdsd_err *err)
{
    int rc = mdsd_dump_check_part(first->dump, t->dump, first->drafter, t->drafter, err);
    if (rc)
        return rc;
    const mdsd_policy *a = &first->pol, *b = &t->pol;
    bool same = a->kind == b->kind && a->depth == b->depth;
    if (same && a->kind == MDSD_POLICY_SEQ)
        same = a->sequences == b->sequences;
    else if (same)
        for (size_t d = 0; d < a->depth; d++)
            same &= a->width[d] == b->width[d];
    const char *what = !same ? "tree policy (tree_policy, tree_depth, tree_sequences or tree_widths)"
                       : a->kind == MDSD_POLICY_TREE && a->scheme != b->scheme ? "tree_scheme"
                       : strcmp(attr_text(first->dump, "tree_drafter"), attr_text(t->dump, "tree_drafter"))
                           ? "tree_drafter"
                       : first->T != t->T ? "tree_temperature"
                       : first->live != t->live || (first->live && first->live_verifier != t->live_verifier)
                           ? "tree_contexts or tree_live_verifier"
                           : NULL;
    if (what)
        return mdsd_fail(err, MDSD_EINVAL, "%s: its %s differs from that of %s, the first file of the "
                         "same split dump: the files are not parts of one dataset", t->path, what,
                         first->path);
    return MDSD_OK;
}

/* The files' rows concatenated into t (see treedump.h); each file's tree
 * arrays are freed once copied. */
static int join_parts(mdsd_tree_dump *t, mdsd_err *err)
{
    size_t N = t->part_row0[t->n_parts];
    t->N = N;
    t->parent = malloc(N * sizeof *t->parent);
    t->depth = malloc(N * sizeof *t->depth);
    t->edge = malloc(N * sizeof *t->edge);
    t->slots = malloc(N * t->S * sizeof *t->slots);
    t->sample = malloc(N * sizeof *t->sample);
    t->root = malloc((N + 1) * sizeof *t->root);
    t->kid_start = malloc((N + 1) * sizeof *t->kid_start);
    t->kid = malloc((N ? N : 1) * sizeof *t->kid);
    if (!t->parent || !t->depth || !t->edge || !t->slots || !t->sample || !t->root ||
        !t->kid_start || !t->kid)
        return mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory for %zu rows", t->path, N);
    int id = -1; /* the sample's number in the whole dump: a new one at each change */
    size_t kids = 0;
    t->kid_start[0] = 0;
    for (size_t k = 0; k < t->n_parts; k++) {
        mdsd_tree_dump *f = t->parts[k];
        size_t r0 = t->part_row0[k];
        for (size_t u = 0; u < f->N; u++) {
            t->parent[r0 + u] = f->parent[u] < 0 ? -1 : f->parent[u] + (long long)r0;
            t->depth[r0 + u] = f->depth[u];
            t->edge[r0 + u] = f->edge[u];
            memcpy(t->slots + (r0 + u) * t->S, f->slots + u * t->S, t->S * sizeof *t->slots);
            if (u == 0 || f->sample[u] != f->sample[u - 1]) /* rows are in sample order */
                id++;
            t->sample[r0 + u] = id;
            for (size_t a = f->kid_start[u]; a < f->kid_start[u + 1]; a++)
                t->kid[kids++] = f->kid[a] + r0;
            t->kid_start[r0 + u + 1] = kids;
        }
        for (size_t i = 0; i < f->n_trees; i++)
            t->root[t->n_trees++] = f->root[i] + r0;
        free(f->parent), free(f->depth), free(f->edge), free(f->slots), free(f->sample);
        free(f->root), free(f->kid_start), free(f->kid);
        f->parent = NULL, f->depth = NULL, f->edge = NULL, f->slots = NULL, f->sample = NULL;
        f->root = NULL, f->kid_start = NULL, f->kid = NULL;
    }
    t->root[t->n_trees] = N;
    return MDSD_OK;
}

int mdsd_tree_dump_open(const char *path, mdsd_tree_dump **out, mdsd_err *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return open_file(path, out, err);
    char **paths = NULL;
    size_t n = 0;
    int rc = mdsd_dump_parts(path, &paths, &n, err);
    if (rc)
        return rc;
    mdsd_tree_dump *t = calloc(1, sizeof *t);
    if (t) {
        t->parts = calloc(n, sizeof *t->parts);
        t->part_row0 = calloc(n + 1, sizeof *t->part_row0);
    }
    if (!t || !t->parts || !t->part_row0) {
        mdsd_dump_parts_free(paths, n);
        mdsd_tree_dump_close(t);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    snprintf(t->path, sizeof t->path, "%s", path);
    for (size_t k = 0; k < n && rc == MDSD_OK; k++) {
        if ((rc = open_file(paths[k], &t->parts[k], err)))
            break;
        t->n_parts = k + 1;
        if (k > 0)
            rc = check_tree_part(t->parts[0], t->parts[k], err);
        t->part_row0[k + 1] = t->part_row0[k] + t->parts[k]->N;
    }
    mdsd_dump_parts_free(paths, n);
    if (rc == MDSD_OK) {
        const mdsd_tree_dump *f = t->parts[0];
        t->dump = f->dump;
        t->pol = f->pol;
        t->drafter = f->drafter;
        t->T = f->T;
        t->live = f->live;
        t->live_verifier = f->live_verifier;
        t->V = f->V;
        t->S = f->S;
        rc = join_parts(t, err);
    }
    if (rc) {
        mdsd_tree_dump_close(t);
        return rc;
    }
    *out = t;
    return MDSD_OK;
}

int mdsd_tree_dump_check_case(const mdsd_tree_dump *t, const mdsd_policy *pol, mdsd_err *err)
{
    int rc = mdsd_policy_check(pol, err);
    if (rc)
        return rc;
    if (pol->kind != t->pol.kind)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "%s holds %s trees", t->path,
                         t->pol.kind == MDSD_POLICY_SEQ ? "seq" : "tree");
    if (pol->depth > t->pol.depth)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "%s: depth %zu beyond the dump's %zu", t->path,
                         pol->depth, t->pol.depth);
    if (pol->kind == MDSD_POLICY_SEQ) {
        if (pol->sequences > t->pol.sequences)
            return mdsd_fail(err, MDSD_EUNSUPPORTED, "%s: %zu sequences, the dump has %zu",
                             t->path, pol->sequences, t->pol.sequences);
        return MDSD_OK;
    }
    if (pol->scheme != t->pol.scheme)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "%s: scheme %s, the dump's trees are %s", t->path,
                         mdsd_scheme_name(pol->scheme), mdsd_scheme_name(t->pol.scheme));
    int prefix_ok = pol->scheme == MDSD_SCHEME_IID || pol->scheme == MDSD_SCHEME_WOR;
    for (size_t d = 0; d < pol->depth; d++)
        if (pol->width[d] > t->pol.width[d] || (!prefix_ok && pol->width[d] != t->pol.width[d]))
            return mdsd_fail(err, MDSD_EUNSUPPORTED, "%s: width %zu at depth %zu: the dump's "
                             "is %zu%s", t->path, pol->width[d], d + 1, t->pol.width[d],
                             prefix_ok ? "" : " (greedy and hub trees: their own widths only)");
    return MDSD_OK;
}

int mdsd_tree_dump_check_live(const mdsd_tree_dump *t, const mdsd_block_case *c, mdsd_err *err)
{
    if (!t->live)
        return MDSD_OK;
    const mdsd_policy *a = &t->pol, *b = &c->pol;
    bool same = !c->block && c->v == t->live_verifier && a->kind == b->kind &&
                a->depth == b->depth;
    if (same && a->kind == MDSD_POLICY_SEQ)
        same = a->sequences == b->sequences;
    for (size_t d = 0; same && a->kind == MDSD_POLICY_TREE && d < a->depth; d++)
        same = a->width[d] == b->width[d] && a->scheme == b->scheme;
    char want[128], got[128];
    if (!same)
        return mdsd_fail(err, MDSD_EUNSUPPORTED, "%s holds the trees of live decoding with %s, %s: "
                         "%s, %s at those block starts is neither live decoding nor a position "
                         "average (MATH.md 5.9)", t->path, mdsd_verifier_name(t->live_verifier),
                         mdsd_policy_describe(a, want, sizeof want), mdsd_block_case_name(c),
                         mdsd_policy_describe(b, got, sizeof got));
    return MDSD_OK;
}

/* ---- evaluation -------------------------------------------------------- */

typedef struct {
    const mdsd_tree_dump *t;
    const double *p, *q;  /* [rows of the tree * V], row u at (u - root) * V */
    const float *zp, *zq; /* the stored logits they are the softmaxes of, laid out alike */
    size_t root;
    const mdsd_verifier_opts *vopts;
} tree_view;

/* "FILE: row R" of row u (of its file, for a split dump). */
static void row_name(const mdsd_tree_dump *t, size_t u, char *out, size_t size)
{
    size_t k = 0;
    while (k < t->n_parts && u >= t->part_row0[k + 1])
        k++;
    if (t->n_parts)
        snprintf(out, size, "%s: row %zu", t->parts[k]->path, u - t->part_row0[k]);
    else
        snprintf(out, size, "%s: row %zu", t->path, u);
}

/* R[k-1] += P(at least k more accepted | tree) from row u at depth d, the
 * drafts being the slots in `mask` (seq) or the first w_{d+1} (tree). */
static int eval_node(const tree_view *tv, const mdsd_block_case *c, size_t u, size_t d,
                     unsigned mask, double *R, mdsd_err *err)
{
    const mdsd_tree_dump *t = tv->t;
    size_t V = t->V, left = c->pol.depth - d, n = 0;
    int x[MDSD_BLOCK_MAX_DRAFTS];
    unsigned slot_of[MDSD_BLOCK_MAX_DRAFTS];
    const int *sl = t->slots + u * t->S;
    if (c->pol.kind == MDSD_POLICY_SEQ) {
        for (size_t s = 0; s < c->pol.sequences; s++)
            if (mask >> s & 1u)
                slot_of[n] = (unsigned)s, x[n++] = sl[s];
    } else {
        for (size_t s = 0; s < c->pol.width[d]; s++)
            slot_of[s] = (unsigned)s, x[n++] = sl[s];
    }
    if (n == 0)
        return MDSD_OK;
    const double *p = tv->p + (u - tv->root) * V, *q = tv->q + (u - tv->root) * V;
    mdsd_scheme s = {c->pol.kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : c->pol.scheme, n, V, q,
                     NULL};
    mdsd_err e;
    /* the logits let ot order tokens by p/q exactly, independently of exp */
    mdsd_verifier *v = mdsd_verifier_alloc_logits(c->v, p, &s, tv->vopts,
                                                  tv->zp + (u - tv->root) * V,
                                                  tv->zq + (u - tv->root) * V, &e);
    if (!v) {
        char where[4200];
        row_name(t, u, where, sizeof where);
        return mdsd_fail(err, e.code, "%s: %s", where, e.msg);
    }
    double py[MDSD_BLOCK_MAX_DRAFTS];
    int rc = mdsd_verifier_law(v, x, py, err);
    mdsd_verifier_free(v);
    for (size_t j = 0; rc == MDSD_OK && j < n; j++) {
        unsigned sub = 0;
        int first = 1;
        for (size_t k = 0; k < n; k++)
            if (x[k] == x[j]) {
                first &= k >= j;
                sub |= 1u << slot_of[k];
            }
        if (!first || !(py[j] > 0.0))
            continue;
        R[0] += py[j];
        if (left > 1) {
            size_t child = SIZE_MAX;
            for (size_t a = t->kid_start[u]; a < t->kid_start[u + 1]; a++)
                if (t->edge[t->kid[a]] == x[j])
                    child = t->kid[a];
            if (child == SIZE_MAX) {
                char where[4200];
                row_name(t, u, where, sizeof where);
                return mdsd_fail(err, MDSD_EFORMAT, "%s: no child row for token %d", where, x[j]);
            }
            double cr[MDSD_BLOCK_MAX_DEPTH] = {0};
            rc = eval_node(tv, c, child, d + 1, sub, cr, err);
            for (size_t k = 1; k < left; k++)
                R[k] += py[j] * cr[k - 1];
        }
    }
    return rc;
}

/* Rows [row0, row0 + rows) of the target (target = 1) or the tree drafter
 * as softmax(logits / T) in dst, read from the files that hold them (a
 * split dump's rows may span files); buf holds rows * V floats. */
static int read_probs(const mdsd_tree_dump *t, int target, size_t row0, size_t rows, float *buf,
                      double *dst, mdsd_err *err)
{
    size_t V = t->V, done = 0;
    while (done < rows) {
        size_t k = 0, row = row0 + done;
        const mdsd_tree_dump *f = t;
        size_t local = row, n = rows - done;
        if (t->n_parts) {
            while (row >= t->part_row0[k + 1])
                k++;
            f = t->parts[k];
            local = row - t->part_row0[k];
            if (n > t->part_row0[k + 1] - row)
                n = t->part_row0[k + 1] - row;
        }
        int w = target ? MDSD_DUMP_TARGET : f->drafter;
        float *b = buf + done * V;
        int rc = mdsd_dump_read_logits(f->dump, w, local, n, b, err);
        if (rc == MDSD_OK)
            rc = mdsd_dump_check_logits(f->dump, w, local, n, b, err);
        for (size_t r = 0; rc == MDSD_OK && r < n; r++) {
            char what[8192];
            snprintf(what, sizeof what, "%s: row %zu of %s", f->path, local + r,
                     mdsd_dump_model_at(f->dump, w)->path);
            rc = mdsd_softmax_float(b + r * V, V, t->T, dst + (done + r) * V, what, err);
            if (rc == MDSD_OK && !target)
                rc = mdsd_treedump_check_drafts(t, f, row + r, local + r, b + r * V,
                                                dst + (done + r) * V, err);
        }
        if (rc)
            return rc;
        done += n;
    }
    return MDSD_OK;
}

/* Trees read per block: rows of up to this many trees at once. */
#define TREES_PER_BLOCK 16

/* Standard error of R = sum_k a_k / sum_k b_k over C clusters by the delta
 * method: the linearised cluster totals z_k = a_k - R b_k give
 * var(R) = C/(C-1) sum_k z_k^2 / (sum_k b_k)^2 (CR1, as mdsd_cluster). */
static double ratio_stderr(const double *a, const double *b, size_t C)
{
    double A = 0.0, B = 0.0, zz = 0.0;
    for (size_t k = 0; k < C; k++)
        A += a[k], B += b[k];
    if (C < 2 || !(B > 0.0))
        return 0.0;
    double R = A / B;
    for (size_t k = 0; k < C; k++) {
        double z = a[k] - R * b[k];
        zz += z * z;
    }
    return sqrt((double)C / (double)(C - 1) * zz) / B;
}

/* The clusters of the per-depth standard errors: cl[i] is tree i's cluster,
 * 1-based - its sample, or its own index when the dump holds one sample (as
 * mdsd_cluster falls back to i.i.d.); *ncl clusters. */
static size_t *tree_clusters(const mdsd_tree_dump *t, size_t *ncl)
{
    size_t n = 0, *cl = malloc((t->n_trees + 1) * sizeof *cl);
    for (size_t i = 0; cl && i < t->n_trees; i++) {
        n += i == 0 || t->sample[t->root[i]] != t->sample[t->root[i - 1]];
        cl[i] = n;
    }
    if (cl && n == 1) {
        for (size_t i = 0; i < t->n_trees; i++)
            cl[i] = i + 1;
        n = t->n_trees;
    }
    *ncl = n;
    return cl;
}

/* Boundary k of N (shard.h's rule on trees): the first tree of the k-th
 * equal share, moved on to the first tree of the next sample. */
static size_t shard_tree(const mdsd_tree_dump *t, size_t k, size_t N)
{
    size_t n = t->n_trees, i = (n / N) * k + (n % N) * k / N;
    if (k == 0 || k >= N)
        return k == 0 ? 0 : n;
    while (i > 0 && i < n && t->sample[t->root[i]] == t->sample[t->root[i - 1]])
        i++;
    return i;
}

void mdsd_tree_dump_shard_trees(const mdsd_tree_dump *t, size_t shard, size_t shards, size_t *first,
                                size_t *end)
{
    *first = shards ? shard_tree(t, shard - 1, shards) : 0;
    *end = shards ? shard_tree(t, shard, shards) : t->n_trees;
}

/* Every case's results from its fold: cs (E[tau | tree] clustered by
 * sample) and csum (per cluster k: its trees, d = 0, and its sums of
 * reach_d); reach_d is the sum of the clusters' sums in cluster order, so a
 * merge of shards does the same arithmetic. */
static void finish_results(size_t L, const mdsd_block_case *cases, size_t ncases,
                           const mdsd_cluster_stats *cs, const double *csum, size_t ncl,
                           mdsd_block_dump_result *res)
{
    for (size_t c = 0; c < ncases; c++) {
        mdsd_block_dump_result *r = &res[c];
        memset(r, 0, sizeof *r);
        r->tau = mdsd_cluster_mean(&cs[c]);
        r->se = mdsd_cluster_stderr(&cs[c]);
        r->trees = (size_t)mdsd_cluster_count(&cs[c]);
        r->samples = (size_t)mdsd_cluster_groups(&cs[c]);
        r->reach[0] = r->rate[0] = 1.0;
        for (size_t d = 1; d <= cases[c].pol.depth; d++) {
            double sum = 0.0;
            for (size_t k = 0; k < ncl; k++)
                sum += csum[(c * (L + 1) + d) * ncl + k];
            r->reach[d] = sum / (double)r->trees;
            r->rate[d] = r->reach[d - 1] > 0.0 ? r->reach[d] / r->reach[d - 1] : 0.0;
            r->rate_se[d] = ratio_stderr(csum + (c * (L + 1) + d) * ncl,
                                         csum + (c * (L + 1) + d - 1) * ncl, ncl);
            r->reach_se[d] = ratio_stderr(csum + (c * (L + 1) + d) * ncl,
                                          csum + c * (L + 1) * ncl, ncl); /* over trees */
        }
    }
}

/* A shard's sample line: "g SAMPLE TREES K0 K1", then per case the Welford
 * mean and m2 of E[tau | tree] over the sample's trees and, per cluster
 * K0 <= k < K1 (0-based), its csum for d = 0..L of the case; hex floats. */
static void write_sample_line(FILE *out, long long sample, const mdsd_welford *w, size_t k0,
                              size_t k1, const mdsd_block_case *cases, size_t ncases, size_t L,
                              const double *csum, size_t ncl)
{
    fprintf(out, "g %lld %llu %zu %zu", sample, (unsigned long long)w[0].count, k0, k1);
    for (size_t c = 0; c < ncases; c++) {
        fprintf(out, " %a %a", w[c].mean, w[c].m2);
        for (size_t k = k0; k < k1; k++)
            for (size_t d = 0; d <= cases[c].pol.depth; d++)
                fprintf(out, " %a", csum[(c * (L + 1) + d) * ncl + k]);
    }
    fputc('\n', out);
}

int mdsd_tree_dump_eval_part(mdsd_tree_dump *t, const mdsd_block_case *cases, size_t ncases,
                             const mdsd_verifier_opts *vopts, int threads,
                             void (*progress)(size_t done, size_t total, void *ctx), void *ctx,
                             size_t shard, size_t shards, FILE *lines, size_t *n_lines,
                             mdsd_block_dump_result *res, mdsd_err *err)
{
    for (size_t c = 0; c < ncases; c++) {
        int rc = mdsd_tree_dump_check_case(t, &cases[c].pol, err);
        if (rc == MDSD_OK && cases[c].block)
            rc = mdsd_block_case_check(&cases[c], err);
        if (rc == MDSD_OK)
            rc = mdsd_tree_dump_check_live(t, &cases[c], err);
        if (rc)
            return rc;
    }
    size_t tb, te;
    mdsd_tree_dump_shard_trees(t, shard, shards, &tb, &te);
    size_t V = t->V, L = t->pol.depth, max_rows = 0;
    for (size_t i = tb; i < te; i++)
        if (t->root[i + 1] - t->root[i] > max_rows)
            max_rows = t->root[i + 1] - t->root[i];
    size_t cap = (max_rows ? max_rows : 1) * TREES_PER_BLOCK;
    /* the target's logits, then the drafter's: kept beside p and q, from
     * which the block verifiers rank tokens by p/q without exp */
    float *buf = malloc(2 * cap * V * sizeof *buf), *zq = buf ? buf + cap * V : NULL;
    double *p = malloc(cap * V * sizeof *p), *q = malloc(cap * V * sizeof *q);
    double *val = malloc(TREES_PER_BLOCK * ncases * (L + 1) * sizeof *val);
    mdsd_cluster_stats *cs = malloc(ncases * sizeof *cs);
    mdsd_welford *sw = malloc(ncases * sizeof *sw); /* the open sample's, for the lines */
    /* csum[(c (L + 1) + d) ncl + k - 1]: the sum of reach_d over cluster k
     * (d = 0: the cluster's tree count), cl[i] tree i's cluster */
    size_t ncl = 0, *cl = tree_clusters(t, &ncl);
    double *csum = calloc(ncases * (L + 1) * (ncl ? ncl : 1), sizeof *csum);
    int rc = MDSD_OK;
    if (!buf || !p || !q || !val || !cs || !sw || !cl || !csum)
        rc = mdsd_fail(err, MDSD_ENOMEM, "%s: out of memory for a block of trees", t->path);
    for (size_t c = 0; c < ncases && rc == MDSD_OK; c++)
        mdsd_cluster_init(&cs[c]), mdsd_welford_init(&sw[c]);
    size_t open_first = tb, count = 0; /* the open sample's first tree; lines written */
    for (size_t first = tb; rc == MDSD_OK && first < te; first += TREES_PER_BLOCK) {
        size_t last = first + TREES_PER_BLOCK < te ? first + TREES_PER_BLOCK : te;
        size_t row0 = t->root[first], rows = t->root[last] - row0;
        rc = read_probs(t, 1, row0, rows, buf, p, err);
        if (rc == MDSD_OK)
            rc = read_probs(t, 0, row0, rows, zq, q, err);
        if (rc != MDSD_OK)
            break;
        size_t ntr = last - first, jobs = ntr * ncases;
        int failed = 0;
        mdsd_err first_err = {0, "", MDSD_OPTION_NONE};
        long long failed_job = -1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : omp_get_max_threads())
        for (size_t job = 0; job < jobs; job++) {
            size_t i = first + job / ncases, c = job % ncases;
            tree_view tv = {t, p + (t->root[i] - row0) * V, q + (t->root[i] - row0) * V,
                            buf + (t->root[i] - row0) * V, zq + (t->root[i] - row0) * V,
                            t->root[i], vopts};
            double R[MDSD_BLOCK_MAX_DEPTH] = {0};
            mdsd_err e = {0, "", MDSD_OPTION_NONE};
            unsigned all = cases[c].pol.kind == MDSD_POLICY_SEQ
                               ? (1u << cases[c].pol.sequences) - 1u : 0u;
            int jrc = mdsd_interrupted() ? mdsd_fail_interrupted(&e, "block") /* mdsd_interrupt */
                      : cases[c].block
                          ? mdsd_blockv_dump_tree(t, i, mdsd_blockv((mdsd_blockv_kind)(cases[c].block - 1)),
                                                  &cases[c].pol, tv.p, tv.q, tv.zp, tv.zq, R, &e)
                          : eval_node(&tv, &cases[c], t->root[i], 0, all, R, &e);
            double *out = val + job * (L + 1);
            out[0] = 1.0;
            for (size_t d = 0; d < cases[c].pol.depth; d++)
                out[0] += R[d], out[d + 1] = R[d];
            if (jrc != MDSD_OK) {
#pragma omp critical(mdsd_treedump_err)
                if (failed_job < 0 || (long long)job < failed_job) {
                    failed_job = (long long)job;
                    first_err = e;
                    failed = 1;
                }
            }
        }
        if (failed) {
            rc = first_err.code ? first_err.code : MDSD_EINVAL;
            if (err)
                *err = first_err;
            break;
        }
        for (size_t job = 0; job < jobs; job++) { /* in row order: thread-count invariant */
            size_t i = first + job / ncases, c = job % ncases;
            if (c == 0 && i > open_first && t->sample[t->root[i]] != t->sample[t->root[i - 1]]) {
                if (lines)
                    write_sample_line(lines, t->sample[t->root[open_first]], sw, cl[open_first] - 1,
                                      cl[i - 1], cases, ncases, L, csum, ncl), count++;
                for (size_t k = 0; k < ncases; k++)
                    mdsd_welford_init(&sw[k]);
                open_first = i;
            }
            const double *v = val + job * (L + 1);
            mdsd_cluster_add(&cs[c], t->sample[t->root[i]], v[0]);
            mdsd_welford_add(&sw[c], v[0]);
            csum[(c * (L + 1)) * ncl + cl[i] - 1] += 1.0;
            for (size_t d = 1; d <= cases[c].pol.depth; d++)
                csum[(c * (L + 1) + d) * ncl + cl[i] - 1] += v[d];
        }
        if (progress)
            progress(last - tb, te - tb, ctx);
    }
    if (rc == MDSD_OK && lines && te > tb)
        write_sample_line(lines, t->sample[t->root[open_first]], sw, cl[open_first] - 1, cl[te - 1],
                          cases, ncases, L, csum, ncl), count++;
    if (n_lines)
        *n_lines = count;
    if (rc == MDSD_OK)
        finish_results(L, cases, ncases, cs, csum, ncl, res);
    free(buf);
    free(p);
    free(q);
    free(val);
    free(cs);
    free(sw);
    free(cl);
    free(csum);
    return rc;
}

int mdsd_tree_dump_eval(mdsd_tree_dump *t, const mdsd_block_case *cases, size_t ncases,
                        const mdsd_verifier_opts *vopts, int threads,
                        void (*progress)(size_t done, size_t total, void *ctx), void *ctx,
                        mdsd_block_dump_result *res, mdsd_err *err)
{
    return mdsd_tree_dump_eval_part(t, cases, ncases, vopts, threads, progress, ctx, 0, 0, NULL, NULL,
                                    res, err);
}

static bool next_double(const char **s, double *x)
{
    char *end;
    *x = strtod(*s, &end);
    if (end == *s || (*end != ' ' && *end != '\n' && *end != '\0'))
        return false;
    *s = end;
    return true;
}

int mdsd_tree_dump_fold(const mdsd_tree_dump *t, const mdsd_block_case *cases, size_t ncases,
                        const char *const *parts, const char *const *names, size_t n_parts,
                        mdsd_block_dump_result *res, mdsd_err *err)
{
    size_t L = t->pol.depth, ncl = 0, *cl = tree_clusters(t, &ncl);
    mdsd_cluster_stats *cs = malloc(ncases * sizeof *cs);
    double *csum = calloc(ncases * (L + 1) * (ncl ? ncl : 1), sizeof *csum);
    int rc = cl && cs && csum ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    for (size_t c = 0; c < ncases && rc == MDSD_OK; c++)
        mdsd_cluster_init(&cs[c]);
    size_t next_k = 0;
    unsigned long long trees = 0;
    bool have_last = false;
    long long last = 0;
    for (size_t i = 0; i < n_parts && rc == MDSD_OK; i++) {
        const char *s = parts[i];
        for (size_t m = 1; rc == MDSD_OK && s[0] == 'g' && s[1] == ' '; m++) {
            long long sample;
            unsigned long long n;
            size_t k0, k1;
            int used = 0;
            bool ok = sscanf(s, "g %lld %llu %zu %zu%n", &sample, &n, &k0, &k1, &used) == 4 && n > 0 &&
                      k0 == next_k && k1 > k0 && k1 <= ncl && !(have_last && sample == last);
            const char *at = s + used;
            for (size_t c = 0; ok && c < ncases; c++) {
                mdsd_welford w = {n, 0.0, 0.0};
                ok = next_double(&at, &w.mean) && next_double(&at, &w.m2);
                for (size_t k = k0; ok && k < k1; k++)
                    for (size_t d = 0; ok && d <= cases[c].pol.depth; d++)
                        ok = next_double(&at, &csum[(c * (L + 1) + d) * ncl + k]);
                if (ok)
                    mdsd_cluster_add_group(&cs[c], &w);
            }
            if (!ok || (*at != '\n' && *at != '\0'))
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': %s, sample line %zu: not the summary of "
                               "the next sample's %zu cases (damaged, or a shard of other cases)",
                               names[i], t->path, m, ncases);
            have_last = true;
            last = sample;
            next_k = k1;
            trees += n;
            s = at + (*at == '\n');
        }
    }
    if (rc == MDSD_OK && (next_k != ncl || trees != t->n_trees))
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: the shards hold %llu of its %zu trees", t->path, trees,
                       t->n_trees);
    if (rc == MDSD_OK)
        finish_results(L, cases, ncases, cs, csum, ncl, res);
    free(cl);
    free(cs);
    free(csum);
    return rc;
}
