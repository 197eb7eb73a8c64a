/* The public tree-dump writer (mdsd/treewrite.h) from C: a small seq dump
 * written and read back by the tree-dump reader, NULL arguments refused
 * without a crash, a refused tree leaving the writer usable, and no file
 * (nor temporary file) after an abandoned or failed writer. The malformed
 * trees one by one: tests/python/test_tree_writer.py. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <mdsd/mdsd.h>

#include "treedump.h"

#define NV 5

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mdsd-treewrite-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* Files left in dir (removing them). */
static int leftovers(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            char p[512];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
            n++;
        }
    if (d)
        closedir(d);
    return n;
}

static mdsd_tree_dump_writer *seq_writer(const char *path, mdsd_err *err)
{
    static const char *names[] = {"d"};
    mdsd_tree_dump_layout l;
    mdsd_tree_dump_layout_init(&l);
    l.dump.V = NV;
    l.dump.n_drafts = 1;
    l.dump.draft_names = names;
    l.policy = "seq";
    l.sequences = 2;
    l.depth = 2;
    return mdsd_tree_dump_writer_new(path, &l, err);
}

/* The root drafts 1 (sequence 0) and 3 (sequence 1); one child each. */
static float tl[3 * NV], ql[3 * NV];
static const int32_t tokens[3] = {0, 2, 4}, edge[3] = {-1, 1, 3};
static const int64_t parent[3] = {-1, 0, 0};
static const int32_t slots[6] = {1, 3, 2, -1, -1, 0};

static int write_good(mdsd_tree_dump_writer *w, int32_t sample, mdsd_err *err)
{
    for (size_t i = 0; i < 3 * NV; i++)
        tl[i] = (float)sin((double)i), ql[i] = (float)cos((double)i);
    const float *drafts[1] = {ql};
    return mdsd_tree_dump_writer_write(w, 3, tl, drafts, tokens, parent, edge, slots, sample, 0,
                                       0, err);
}

Test(treewrite, a_seq_dump_reads_back)
{
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/t.h5", dir);
    mdsd_err err;
    mdsd_tree_dump_writer *w = seq_writer(path, &err);
    cr_assert_not_null(w, "%s", err.msg);
    cr_assert_eq(mdsd_tree_dump_writer_slots(w), 2);
    cr_assert_eq(write_good(w, 0, &err), MDSD_OK, "%s", err.msg);
    /* a bad tree: row 1's edge is not among the root's drafts; refused, nothing written */
    const float *drafts[1] = {ql};
    const int32_t bad_edge[3] = {-1, 2, 3};
    cr_assert_eq(mdsd_tree_dump_writer_write(w, 3, tl, drafts, tokens, parent, bad_edge, slots, 1, 0,
                                             0, &err), MDSD_EFORMAT);
    cr_assert(strstr(err.msg, "tree 1: row 1 of /edge: token 2 is not among its parent's drafts"),
              "%s", err.msg);
    cr_assert_eq(write_good(w, 2, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(access(path, F_OK), -1, "nothing before finish");
    cr_assert_eq(mdsd_tree_dump_writer_finish(w, &err), MDSD_OK, "%s", err.msg);
    mdsd_tree_dump *t = NULL;
    cr_assert_eq(mdsd_tree_dump_open(path, &t, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(t->n_trees, 2);
    cr_assert_eq(t->N, 6);
    cr_assert_eq(t->parent[4], 3);
    cr_assert_eq(t->depth[5], 1);
    cr_assert_eq(t->sample[3], 2);
    mdsd_tree_dump_close(t);
    cr_assert_eq(leftovers(), 1);
    rmdir(dir);
}

Test(treewrite, null_arguments_and_abandoned_writers)
{
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/t.h5", dir);
    mdsd_err err;
    cr_assert_null(mdsd_tree_dump_writer_new(NULL, NULL, NULL));
    cr_assert_null(mdsd_tree_dump_writer_new(path, NULL, &err));
    cr_assert_eq(mdsd_tree_dump_writer_write(NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0,
                                             NULL), MDSD_EINVAL);
    cr_assert_eq(mdsd_tree_dump_writer_finish(NULL, NULL), MDSD_EINVAL);
    mdsd_tree_dump_writer_free(NULL);
    cr_assert_eq(mdsd_tree_dump_writer_slots(NULL), 0);
    mdsd_tree_dump_layout l;
    mdsd_tree_dump_layout_init(&l);
    l.dump.V = NV;
    l.dump.n_drafts = 1; /* draft_names NULL */
    l.policy = "seq";
    l.sequences = 2;
    l.depth = 2;
    cr_assert_null(mdsd_tree_dump_writer_new(path, &l, &err));
    cr_assert(strstr(err.msg, "without draft_names"), "%s", err.msg);
    mdsd_tree_dump_writer *w = seq_writer(path, &err);
    const float *drafts[1] = {NULL};
    cr_assert_eq(mdsd_tree_dump_writer_write(w, 3, tl, drafts, tokens, parent, edge, slots, 0, 0, 0,
                                             &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "drafts[0] is NULL"), "%s", err.msg);
    cr_assert_eq(write_good(w, 0, &err), MDSD_OK, "%s", err.msg);
    mdsd_tree_dump_writer_free(w); /* abandoned: no file, no temporary file */
    cr_assert_eq(leftovers(), 0);
    w = seq_writer(path, &err);
    cr_assert_eq(mdsd_tree_dump_writer_finish(w, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "no tree was written"), "%s", err.msg);
    cr_assert_eq(leftovers(), 0);
    rmdir(dir);
}
