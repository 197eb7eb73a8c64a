/* Rows in memory as a column of the table job (mdsd_row_arrays, <mdsd/dump.h>;
 * what mdsd.evaluate runs on): the results CSV is the dump route's byte for
 * byte (drafters handed over out of name order, several samples, every kind of
 * cell), and what a dump would be refused for is refused, naming the label,
 * the row and the value; rows in memory are never resumed or sharded. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

#include "testutil.h"

enum { N = 48, V = 40, ROWS_PER_SAMPLE = 6 };

typedef struct {
    float target[N * V], a[N * V], b[N * V];
    int32_t sample[N], position[N];
    const char *names[2];
    const float *planes[2];
    mdsd_row_arrays arrays;
} rows;

static void make_rows(rows *r)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < (size_t)N * V; i++) {
        /* a cheap LCG: the logits need only be varied, with a wide gap now and then */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) / 9007199254740992.0;
        r->target[i] = (float)(6 * u - 3 + (i % 17 == 0 ? 9 : 0));
        r->a[i] = (float)(0.7 * r->target[i] + 2 * u);
        r->b[i] = (float)(r->target[i] - 4 * u + (i % 23 == 0 ? -30 : 0));
    }
    for (int i = 0; i < N; i++)
        r->sample[i] = 100 + i / ROWS_PER_SAMPLE, r->position[i] = 3 + i % ROWS_PER_SAMPLE;
    /* out of name order: the dump lists its drafters by name, so must the arrays */
    r->names[0] = "b", r->names[1] = "a";
    r->planes[0] = r->b, r->planes[1] = r->a;
    mdsd_row_arrays_init(&r->arrays);
    r->arrays.label = "mine";
    r->arrays.N = N, r->arrays.V = V, r->arrays.target = r->target;
    r->arrays.n_drafters = 2, r->arrays.drafter_names = r->names, r->arrays.drafts = r->planes;
    r->arrays.sample_id = r->sample, r->arrays.position = r->position;
}

static void write_dump(const rows *r, const char *path)
{
    const char *names[] = {"a", "b"};
    const float *planes[] = {r->a, r->b};
    mdsd_dump_layout l;
    mdsd_dump_layout_init(&l);
    l.V = V, l.n_drafts = 2, l.draft_names = names, l.neg_inf = MDSD_DUMP_NEG_INF_ZERO;
    mdsd_err err;
    mdsd_dump_writer *w = mdsd_dump_writer_new(path, &l, &err);
    cr_assert(w, "%s", err.msg);
    int32_t tokens[N] = {0};
    cr_assert_eq(mdsd_dump_writer_write(w, N, r->target, planes, tokens, r->sample, r->position, &err),
                 MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_finish(w, &err), MDSD_OK, "%s", err.msg);
}

static const double temps[] = {0.4, 1.0};
static const size_t counts[] = {2, 3};
static const mdsd_scheme_kind schemes[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR};
static const mdsd_verifier_kind verifiers[] = {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ, MDSD_VERIFIER_OT};
static const char *const drafters[] = {"a", "b"};

static void job(mdsd_table_opts *o, const char *out)
{
    mdsd_table_opts_init(o);
    o->n_temperatures = 2, o->temperatures = temps;
    o->n_counts = 2, o->draft_counts = counts;
    o->n_schemes = 2, o->schemes = schemes;
    o->n_verifiers = 3, o->verifiers = verifiers;
    o->n_draft_models = 2, o->draft_models = drafters;
    o->trials = 200, o->threads = 1, o->output = out;
}

/* Whether hay holds needle, letters compared without case (nan / NaN). */
static int holds(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && (hay[i] | 32) == (needle[i] | 32))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(row_arrays, the_csv_is_the_dump_routes_byte_for_byte, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-arrays-XXXXXX", dump[300], via_dump[300], via_arrays[300];
    cr_assert(mkdtemp(dir));
    snprintf(dump, sizeof dump, "%s/mine", dir); /* the dump's column is its file name */
    snprintf(via_dump, sizeof via_dump, "%s/dump.csv", dir);
    snprintf(via_arrays, sizeof via_arrays, "%s/arrays.csv", dir);
    static rows r;
    make_rows(&r);
    write_dump(&r, dump);
    mdsd_table_opts o;
    mdsd_err err;
    job(&o, via_dump);
    const char *dumps[] = {dump};
    o.n_dumps = 1, o.dumps = dumps;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_OK, "%s", err.msg);
    job(&o, via_arrays);
    o.n_arrays = 1, o.arrays = &r.arrays;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_OK, "%s", err.msg);
    char *a = slurp(via_dump), *b = slurp(via_arrays);
    cr_assert(a && b);
    cr_assert(strstr(a, "\nmine:a,") && strstr(a, "\nmine:b,"), "%s", a);
    cr_assert_str_eq(b, a, "rows in memory and the same rows in a dump differ");
    free(a), free(b);
    /* one sample (NULL ids) and row-index positions: as a dump of zeros and 0..N-1 */
    int32_t zeros[N] = {0}, index[N];
    for (int i = 0; i < N; i++)
        index[i] = i;
    const char *single[] = {"a"};
    const float *plane[] = {r.a};
    mdsd_row_arrays one = r.arrays;
    one.n_drafters = 1, one.drafter_names = single, one.drafts = plane;
    one.sample_id = NULL, one.position = NULL;
    const char *names[] = {"a"};
    mdsd_dump_layout l;
    mdsd_dump_layout_init(&l);
    l.V = V, l.n_drafts = 1, l.draft_names = names, l.neg_inf = MDSD_DUMP_NEG_INF_ZERO;
    unlink(dump);
    mdsd_dump_writer *w = mdsd_dump_writer_new(dump, &l, &err);
    cr_assert(w, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_write(w, N, r.target, plane, zeros, zeros, index, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_dump_writer_finish(w, &err), MDSD_OK, "%s", err.msg);
    job(&o, via_dump);
    o.n_draft_models = 0, o.n_dumps = 1, o.dumps = dumps;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_OK, "%s", err.msg);
    job(&o, via_arrays);
    o.n_draft_models = 0, o.n_arrays = 1, o.arrays = &one;
    cr_assert_eq(mdsd_table_run(&o, &err), MDSD_OK, "%s", err.msg);
    a = slurp(via_dump), b = slurp(via_arrays);
    cr_assert(a && b);
    cr_assert_str_eq(b, a, "one sample: rows in memory and the same rows in a dump differ");
    free(a), free(b);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The job's error for arrays changed by `change`; the output is never written. */
static char *refusal(void (*change)(rows *, mdsd_table_opts *), int *code)
{
    static rows r;
    make_rows(&r);
    char dir[] = "/tmp/mdsd-arrays-XXXXXX", out[300];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/r.csv", dir);
    mdsd_table_opts o;
    job(&o, out);
    o.n_arrays = 1, o.arrays = &r.arrays;
    change(&r, &o);
    mdsd_err err;
    *code = mdsd_table_run(&o, &err);
    cr_assert(access(out, F_OK) != 0, "an output was written");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    return strdup(err.msg);
}

static void nan_at_row_7(rows *r, mdsd_table_opts *o) { (void)o; r->a[7 * V + 11] = NAN; }
static void plus_inf_in_target(rows *r, mdsd_table_opts *o) { (void)o; r->target[30 * V] = INFINITY; }
static void all_minus_inf(rows *r, mdsd_table_opts *o)
{
    (void)o;
    for (int i = 0; i < V; i++)
        r->b[5 * V + i] = -INFINITY;
}
static void split_sample(rows *r, mdsd_table_opts *o) { (void)o; r->sample[20] = 100; }
static void path_label(rows *r, mdsd_table_opts *o) { (void)o; r->arrays.label = "a/b"; }
static void twice_named(rows *r, mdsd_table_opts *o) { (void)o; r->names[0] = "a"; }
static void no_target(rows *r, mdsd_table_opts *o) { (void)o; r->arrays.target = NULL; }
static void no_rows(rows *r, mdsd_table_opts *o) { (void)o; r->arrays.N = 0; }
static void resumed(rows *r, mdsd_table_opts *o) { (void)r; o->resume = 1; }
static void unsized(rows *r, mdsd_table_opts *o) { (void)o; r->arrays.size = 0; }
static void unknown_drafter(rows *r, mdsd_table_opts *o) { (void)r; static const char *const c[] = {"c"}; o->draft_models = c, o->n_draft_models = 1; }

Test(row_arrays, what_a_dump_would_be_refused_for_is_refused_naming_label_row_and_value, .timeout = 60)
{
    struct {
        void (*change)(rows *, mdsd_table_opts *);
        int code;
        const char *said[3];
    } cases[] = {
        {nan_at_row_7, MDSD_EFORMAT, {"mine", "row 7", "nan"}},
        {plus_inf_in_target, MDSD_EFORMAT, {"mine", "row 30", "inf"}},
        {all_minus_inf, MDSD_EFORMAT, {"mine", "row 5", "/drafts/b/logits"}},
        {split_sample, MDSD_EFORMAT, {"mine", "row 20", "sample 100"}},
        {path_label, MDSD_EINVAL, {"'a/b'", "plain name", NULL}},
        {twice_named, MDSD_EINVAL, {"mine", "drafter 'a' is named twice", NULL}},
        {no_target, MDSD_EINVAL, {"mine", "no target logits", NULL}},
        {no_rows, MDSD_EINVAL, {"mine", "N = 0", NULL}},
        {resumed, MDSD_EINVAL, {"cannot be resumed", "dump", NULL}},
        {unsized, MDSD_EINVAL, {"mdsd_row_arrays", NULL, NULL}},
        {unknown_drafter, MDSD_EINVAL, {"mine", "no drafter named 'c'", NULL}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int code;
        char *msg = refusal(cases[k].change, &code);
        cr_assert_eq(code, cases[k].code, "case %zu: code %d: %s", k, code, msg);
        for (int s = 0; s < 3 && cases[k].said[s]; s++)
            cr_assert(holds(msg, cases[k].said[s]), "case %zu: '%s' not in: %s", k, cases[k].said[s], msg);
        free(msg);
    }
}
