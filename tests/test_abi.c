/* The public API from C++ and its ABI rules (mdsd/common.h): every public header alone
 * and all together under g++ -std=c++17 -Wall -Wextra -Werror -pedantic; every exported
 * function referenced from C++ and linked (a header without its extern "C" fails to
 * link); tests/api/idioms.cpp and the README's Library example built as C++17 against
 * the build's libmdsd.so and run; statuses declared as mdsd_status; an options struct
 * of a size the library does not know refused by every function that takes one, and
 * an _init that never writes past the caller's size; the Python mirrors of the structs
 * the size of the C structs. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

#include "testutil.h"

#define CXX "g++ -std=c++17 -Wall -Wextra -Werror -pedantic -Isrc/include"

Test(abi, every_public_header_compiles_as_cxx17_alone_and_together)
{
    char *out = test_shell_ok("set -e; for h in src/include/mdsd/*.h; do n=$(basename $h); "
                              "printf '#include <mdsd/%s>\\n' $n | " CXX " -fsyntax-only -x c++ -; "
                              "if grep -q 'MDSD_API' $h && ! grep -q 'extern \"C\"' $h; then "
                              "echo \"$n: no extern C\"; exit 1; fi; "
                              "echo $n; done; "
                              "for h in src/include/mdsd/*.h; do printf '#include <mdsd/%s>\\n' "
                              "$(basename $h); done | tac | " CXX " -fsyntax-only -x c++ -; "
                              "echo together");
    cr_assert(strstr(out, "merge.h") && strstr(out, "treewrite.h") && strstr(out, "together"),
              "%s", out);
    free(out);
}

/* Each exported function (src/api/libmdsd.map) referenced from C++: a declaration
 * outside extern "C" would be mangled and not link. */
Test(abi, every_exported_function_links_from_cxx, .timeout = 120)
{
    if (!test_release_build("abi"))
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "set -e; d=$(mktemp -d); "
             "{ echo '#include <mdsd/mdsd.h>'; echo 'using fp = void (*)();'; "
             "echo 'fp all[] = {'; awk '/global:/ {on = 1; next} /local:/ {on = 0} on "
             "{gsub(/[ ;]/, \"\"); if ($0 != \"\") print \"reinterpret_cast<fp>(&\" $0 \"),\"}' "
             "src/api/libmdsd.map; echo '};'; echo 'int main() { for (fp f : all) if (!f) "
             "return 1; return 0; }'; } > $d/all.cpp; "
             CXX " -o $d/all $d/all.cpp -L%s -lmdsd -Wl,-rpath,$PWD/%s; $d/all; "
             "grep -c reinterpret_cast $d/all.cpp; rm -rf $d",
             test_build_dir(), test_build_dir());
    char *out = test_shell_ok(cmd);
    cr_assert(atoi(out) > 60, "functions referenced: %s", out);
    free(out);
}

Test(abi, documented_idioms_build_as_cxx17_and_run, .timeout = 120)
{
    if (!test_release_build("abi"))
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "set -e; d=$(mktemp -d); " CXX " -o $d/idioms tests/api/idioms.cpp -L%s -lmdsd "
             "-Wl,-rpath,$PWD/%s; $d/idioms; "
             "awk '/^## Library/ {on = 1} on && /^```c$/ {code = 1; next} code && /^```$/ {exit} "
             "code' README.md > $d/readme.cpp; test -s $d/readme.cpp; "
             CXX " -o $d/readme $d/readme.cpp -L%s -lmdsd -Wl,-rpath,$PWD/%s; $d/readme; rm -rf $d",
             test_build_dir(), test_build_dir(), test_build_dir(), test_build_dir());
    char *out = test_shell_ok(cmd);
    cr_assert(strstr(out, "idioms: ok"), "%s", out);
    cr_assert(strstr(out, "alpha* = 0.86"), "README example as C++:\n%s", out);
    free(out);
}

/* A fallible function returns mdsd_status; only the two that return a descriptor
 * (-1 on failure) return int. */
Test(abi, statuses_are_declared_mdsd_status)
{
    char *out = test_shell_ok("grep -ho 'MDSD_API int [a-z0-9_]*' src/include/mdsd/*.h | "
                              "LC_ALL=C sort | tr '\\n' ' '");
    cr_assert_str_eq(out, "MDSD_API int mdsd_output_lock MDSD_API int mdsd_output_temp ");
    free(out);
}

/* ---- the size rule ---- */

static void refused(int rc, const mdsd_err *err, const char *type)
{
    cr_assert_eq(rc, MDSD_EINVAL, "%s: %d (%s)", type, rc, err->msg);
    cr_assert(strstr(err->msg, type) && strstr(err->msg, "size"), "%s", err->msg);
}

Test(abi, an_options_struct_of_another_size_is_refused)
{
    double p[3] = {0.5, 0.3, 0.2}, q[3] = {0.2, 0.3, 0.5}, rate;
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 3, q, NULL};
    mdsd_err err;
    const size_t wrong[] = {0, 1, sizeof(size_t), 4096};
    for (size_t w = 0; w < sizeof wrong / sizeof *wrong; w++) {
        mdsd_alpha_opts ao;
        mdsd_alpha_opts_init(&ao);
        ao.size = wrong[w];
        mdsd_alpha_result ar;
        refused(mdsd_alpha(p, &s, MDSD_ALPHA_AUTO, &ao, &ar, NULL, &err), &err, "mdsd_alpha_opts");
        mdsd_alpha_routes routes;
        mdsd_alpha_routes_init(&routes);
        refused(mdsd_alpha_all(p, &s, &ao, &routes, NULL, &err), &err, "mdsd_alpha_opts");
        routes.size = wrong[w];
        refused(mdsd_alpha_all(p, &s, NULL, &routes, NULL, &err), &err, "mdsd_alpha_routes");
        mdsd_toy_opts toy;
        mdsd_toy_opts_init(&toy);
        toy.family = "zipf", toy.V = 4, toy.positions = 2, toy.size = wrong[w];
        refused(mdsd_toy_dump("/tmp/mdsd-abi-never.h5", &toy, NULL, NULL, 0, &err), &err,
                "mdsd_toy_opts");
        mdsd_plot_opts po;
        mdsd_plot_opts_init(&po);
        po.kind = "vs-drafts", po.size = wrong[w];
        mdsd_plot_series *series = NULL;
        refused(mdsd_plot_series_read("/tmp/mdsd-abi-never.csv", &po, &series, &err), &err,
                "mdsd_plot_opts");
        refused(mdsd_plot("/tmp/mdsd-abi-never.csv", "/tmp/mdsd-abi-never.png", &po, &err), &err,
                "mdsd_plot_opts");
        refused(mdsd_plot_check_opts(&po, &err), &err, "mdsd_plot_opts");
        mdsd_check_opts chk;
        mdsd_check_opts_init(&chk);
        chk.size = wrong[w];
        mdsd_check_report *rep = NULL;
        refused(mdsd_check_run(&chk, &rep, &err), &err, "mdsd_check_opts");
        refused(mdsd_check_list(&chk, &rep, &err), &err, "mdsd_check_opts");
        cr_assert_null(rep);
        mdsd_report_opts ro;
        mdsd_report_opts_init(&ro);
        ro.size = wrong[w];
        char *text = NULL;
        refused(mdsd_report("/tmp/mdsd-abi-never.csv", NULL, &ro, &text, NULL, &err), &err,
                "mdsd_report_opts");
        mdsd_merge_job_opts mjo;
        mdsd_merge_job_opts_init(&mjo);
        mjo.size = wrong[w];
        const char *shard[] = {"/tmp/mdsd-abi-never.agg"};
        refused(mdsd_merge_run(shard, 1, "/tmp/mdsd-abi-never.csv", &mjo, &err), &err,
                "mdsd_merge_job_opts");

        mdsd_verifier_opts vo;
        mdsd_verifier_opts_init(&vo);
        vo.size = wrong[w];
        refused(mdsd_verifier_rate(MDSD_VERIFIER_RRS, p, &s, &vo, &rate, NULL, &err), &err,
                "mdsd_verifier_opts");
        cr_assert_null(mdsd_verifier_new(MDSD_VERIFIER_RRS, p, &s, &vo, &err));
        refused(err.code, &err, "mdsd_verifier_opts");

        mdsd_verifier *v = mdsd_verifier_new(MDSD_VERIFIER_RRS, p, &s, NULL, &err);
        cr_assert_not_null(v, "%s", err.msg);
        mdsd_montecarlo_opts mo;
        mdsd_montecarlo_opts_init(&mo);
        mo.size = wrong[w];
        mdsd_montecarlo_result mr;
        refused(mdsd_montecarlo(v, &mo, &mr, NULL, NULL, &err), &err, "mdsd_montecarlo_opts");
        mdsd_verifier_free(v);

        float t[3] = {0, 1, 2}, d[3] = {2, 1, 0};
        double a;
        mdsd_batch_eval_opts bo;
        mdsd_batch_eval_opts_init(&bo);
        bo.size = wrong[w];
        refused(mdsd_batch_eval(t, d, 1, 3, &bo, &a, NULL, NULL, NULL, &err), &err,
                "mdsd_batch_eval_opts");
        mdsd_batch_eval_opts_init(&bo);
        bo.verifier_opts.size = wrong[w];
        refused(mdsd_batch_eval(t, d, 1, 3, &bo, &a, NULL, NULL, NULL, &err), &err,
                "mdsd_verifier_opts");
        cr_assert(strstr(err.msg, "verifier_opts, an mdsd_verifier_opts"), "%s", err.msg);

        const char *dumps[] = {"data/kjv-ngram.h5"};
        mdsd_table_opts to;
        mdsd_table_opts_init(&to);
        to.n_dumps = 1, to.dumps = dumps, to.output = "/nonexistent/out.csv";
        to.size = wrong[w];
        refused(mdsd_table_run(&to, &err), &err, "mdsd_table_opts");
        refused(mdsd_table_run_recorded(&to, "t", 0, NULL, &err), &err, "mdsd_table_opts");
        mdsd_table_opts_init(&to);
        to.verifier_opts.size = wrong[w];
        refused(mdsd_table_run(&to, &err), &err, "mdsd_verifier_opts");

        mdsd_block_job_opts jo;
        mdsd_block_job_opts_init(&jo);
        jo.n_dumps = 1, jo.dumps = dumps, jo.output = "/nonexistent/out.csv";
        jo.size = wrong[w];
        refused(mdsd_block_run(&jo, &err), &err, "mdsd_block_job_opts");
        refused(mdsd_block_run_recorded(&jo, "t", 0, NULL, &err), &err, "mdsd_block_job_opts");

        double tp[4] = {0.7, 0.3, 0.4, 0.6}, tq[4] = {0.5, 0.5, 0.5, 0.5};
        mdsd_block_markov_opts mk;
        mdsd_block_markov_opts_init(&mk);
        mk.verifier = "sd", mk.sequences = 1, mk.depth = 2, mk.V = 2, mk.p = tp, mk.q = tq;
        mk.size = wrong[w];
        mdsd_block_markov_result br;
        refused(mdsd_block_markov(&mk, &br, &err), &err, "mdsd_block_markov_opts");

        static const char *names[] = {"d"};
        mdsd_dump_layout dl;
        mdsd_dump_layout_init(&dl);
        dl.V = 3, dl.n_drafts = 1, dl.draft_names = names;
        dl.size = wrong[w];
        cr_assert_null(mdsd_dump_writer_new("/tmp/mdsd-abi-never.h5", &dl, &err));
        refused(err.code, &err, "mdsd_dump_layout");
        mdsd_tree_dump_layout tl;
        mdsd_tree_dump_layout_init(&tl);
        tl.dump.V = 3, tl.dump.n_drafts = 1, tl.dump.draft_names = names;
        tl.policy = "seq", tl.sequences = 1, tl.depth = 1;
        tl.size = wrong[w];
        cr_assert_null(mdsd_tree_dump_writer_new("/tmp/mdsd-abi-never.h5", &tl, &err));
        refused(err.code, &err, "mdsd_tree_dump_layout");
        mdsd_tree_dump_layout_init(&tl);
        tl.dump.size = wrong[w];
        cr_assert_null(mdsd_tree_dump_writer_new("/tmp/mdsd-abi-never.h5", &tl, &err));
        refused(err.code, &err, "mdsd_dump_layout");
    }
    cr_assert_eq(access("/tmp/mdsd-abi-never.h5", F_OK), -1);
    /* the right size, as _init sets it, and NULL options (the defaults) still run */
    mdsd_alpha_opts ao;
    mdsd_alpha_opts_init(&ao);
    mdsd_alpha_result ar;
    cr_assert_eq(mdsd_alpha(p, &s, MDSD_ALPHA_AUTO, &ao, &ar, NULL, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_alpha(p, &s, MDSD_ALPHA_AUTO, NULL, &ar, NULL, &err), MDSD_OK, "%s", err.msg);
    mdsd_alpha_routes routes;
    mdsd_alpha_routes_init(&routes);
    cr_assert_eq(mdsd_alpha_all(p, &s, &ao, &routes, NULL, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(routes.size, sizeof routes);
    cr_assert_eq(routes.alpha, ar.alpha); /* iid: sort, auto's method, gives the value */
}

/* A caller built against a header with a smaller struct: the library's _init writes
 * its first `size` bytes only, records that size, and the struct is then refused. */
Test(abi, init_never_writes_past_the_callers_size)
{
    _Alignas(16) unsigned char buf[sizeof(mdsd_table_opts) + 64];
    const size_t sizes[] = {0, 3, sizeof(size_t), sizeof(size_t) + 8, sizeof(mdsd_table_opts)};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        memset(buf, 0xa5, sizeof buf);
        (mdsd_table_opts_init)((mdsd_table_opts *)buf, sizes[k]);
        for (size_t i = sizes[k]; i < sizeof buf; i++)
            cr_assert_eq(buf[i], 0xa5, "size %zu: byte %zu written", sizes[k], i);
        if (sizes[k] >= sizeof(size_t)) {
            size_t recorded;
            memcpy(&recorded, buf, sizeof recorded);
            cr_assert_eq(recorded, sizes[k]);
        }
    }
    mdsd_table_opts to;
    memcpy(&to, buf, sizeof to);
    cr_assert_eq(to.size, sizeof to);
    cr_assert_eq(to.top_p, 1.0);
    cr_assert_eq(to.verifier_opts.size, sizeof to.verifier_opts);
    (mdsd_alpha_opts_init)(NULL, sizeof(mdsd_alpha_opts)); /* NULL: nothing, no crash */
}

/* The ctypes mirrors (src/python/mdsd/_lib.py) have the C structs' sizes. */
Test(abi, python_mirrors_have_the_c_sizes, .timeout = 60)
{
    if (!test_release_build("abi"))
        return;
    /* one row per mirrored struct: a new struct is one more line, not a new format */
    static const struct { const char *mirror; size_t size; } structs[] = {
        {"AlphaOpts", sizeof(mdsd_alpha_opts)}, {"VerifierOpts", sizeof(mdsd_verifier_opts)},
        {"MonteCarloOpts", sizeof(mdsd_montecarlo_opts)}, {"BatchEvalOpts", sizeof(mdsd_batch_eval_opts)},
        {"TableOpts", sizeof(mdsd_table_opts)}, {"BlockJobOpts", sizeof(mdsd_block_job_opts)},
        {"BlockMarkovOpts", sizeof(mdsd_block_markov_opts)}, {"DumpLayout", sizeof(mdsd_dump_layout)},
        {"TreeDumpLayout", sizeof(mdsd_tree_dump_layout)},
        {"BlockMarkovResult", sizeof(mdsd_block_markov_result)},
        {"AlphaRoutes", sizeof(mdsd_alpha_routes)}, {"ToyOpts", sizeof(mdsd_toy_opts)},
        {"RowArrays", sizeof(mdsd_row_arrays)}, {"PlotOpts", sizeof(mdsd_plot_opts)},
        {"CheckOpts", sizeof(mdsd_check_opts)}, {"ReportOpts", sizeof(mdsd_report_opts)},
        {"MergeJobOpts", sizeof(mdsd_merge_job_opts)}, {"RunOpts", sizeof(mdsd_run_opts)},
        {"ShardText", sizeof(mdsd_shard_text)}, {"BlockPolicy", sizeof(mdsd_block_policy)},
        {"Err", sizeof(mdsd_err)},
    };
    char cmd[2048], want[1024];
    size_t len = (size_t)snprintf(cmd, sizeof cmd, "PYTHONPATH=src/python /usr/bin/python3 -c 'import ctypes; "
                                  "from mdsd import _lib as L; print(*[ctypes.sizeof(c) for c in (");
    size_t wl = 0;
    for (size_t i = 0; i < sizeof structs / sizeof *structs; i++) {
        len += (size_t)snprintf(cmd + len, sizeof cmd - len, "L.%s, ", structs[i].mirror);
        wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%zu", i ? " " : "", structs[i].size);
    }
    snprintf(cmd + len, sizeof cmd - len, ")])'");
    snprintf(want + wl, sizeof want - wl, "\n");
    char *out = test_shell_ok(cmd);
    cr_assert_str_eq(out, want);
    free(out);
}

/* The mirror of mdsd_run_opts (the CLI's way into the jobs) has its fields in the C
 * order: every field's offset, not just the size. */
Test(abi, python_run_opts_mirror_has_the_c_offsets, .timeout = 60)
{
    if (!test_release_build("abi"))
        return;
#define RUN_FIELD(f) {#f, offsetof(mdsd_run_opts, f)}
    static const struct { const char *name; size_t offset; } fields[] = {
        RUN_FIELD(size), RUN_FIELD(tool), RUN_FIELD(n_words), RUN_FIELD(words),
        RUN_FIELD(on_note), RUN_FIELD(note_ctx), RUN_FIELD(progress_bar), RUN_FIELD(stdout_used),
        RUN_FIELD(cleanup_signals), RUN_FIELD(shard_text), RUN_FIELD(shard_size),
        RUN_FIELD(test_fail), RUN_FIELD(test_fail_column), RUN_FIELD(test_fail_row),
        RUN_FIELD(test_block_rows), RUN_FIELD(test_stop_after), RUN_FIELD(usage),
    };
#undef RUN_FIELD
    char want[1024];
    size_t wl = 0;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        wl += (size_t)snprintf(want + wl, sizeof want - wl, " %s=%zu", fields[i].name,
                               fields[i].offset);
    snprintf(want + wl, sizeof want - wl, "\n");
    char *out = test_shell_ok("PYTHONPATH=src/python /usr/bin/python3 -c 'from mdsd import _lib as L; "
                              "print(\"\".join(\" %s=%d\" % (f, getattr(L.RunOpts, f).offset) "
                              "for f, _ in L.RunOpts._fields_))'");
    cr_assert_str_eq(out, want);
    free(out);
}

/* A front end's run options of a size the library does not know are refused by
 * every function that takes them, before any work. */
Test(abi, run_opts_of_another_size_are_refused)
{
    const size_t wrong[] = {0, 1, sizeof(size_t), 4096};
    const char *dumps[] = {"data/kjv-ngram.h5"}, *trees[] = {"data/kjv-trees.h5"};
    const char *shard[] = {"/tmp/mdsd-abi-never.agg"};
    for (size_t w = 0; w < sizeof wrong / sizeof *wrong; w++) {
        mdsd_err err;
        mdsd_run_opts run;
        mdsd_run_opts_init(&run);
        cr_assert_eq(run.size, sizeof run);
        run.size = wrong[w];
        mdsd_table_opts to;
        mdsd_table_opts_init(&to);
        to.n_dumps = 1, to.dumps = dumps, to.output = "/tmp/mdsd-abi-never.csv";
        refused(mdsd_table_run_with(&to, &run, &err), &err, "mdsd_run_opts");
        refused(mdsd_table_check(&to, &run, &err), &err, "mdsd_run_opts");
        mdsd_shard_text text = {"rank 0", "#mdsd-table-shard 3\n", 20};
        refused(mdsd_table_merge_texts(&to, &run, &text, 1, &err), &err, "mdsd_run_opts");
        mdsd_block_job_opts jo;
        mdsd_block_job_opts_init(&jo);
        jo.n_dumps = 1, jo.dumps = trees, jo.output = "/tmp/mdsd-abi-never.csv";
        refused(mdsd_block_run_with(&jo, &run, &err), &err, "mdsd_run_opts");
        double tp[4] = {0.7, 0.3, 0.4, 0.6}, tq[4] = {0.5, 0.5, 0.5, 0.5};
        mdsd_block_markov_opts mk;
        mdsd_block_markov_opts_init(&mk);
        mk.verifier = "sd", mk.sequences = 1, mk.depth = 2, mk.V = 2, mk.p = tp, mk.q = tq;
        mdsd_block_markov_result br;
        refused(mdsd_block_markov_with(&mk, &run, 0, &br, NULL, NULL, &err), &err, "mdsd_run_opts");
        refused(mdsd_merge_with(shard, 1, "/tmp/mdsd-abi-never.csv", NULL, &run, &err), &err,
                "mdsd_run_opts");
        refused(mdsd_merge_texts(&text, 1, "/tmp/mdsd-abi-never.csv", NULL, &run, &err), &err,
                "mdsd_run_opts");
    }
    cr_assert_eq(access("/tmp/mdsd-abi-never.csv", F_OK), -1);
}

/* mdsd_block_markov_with: the result of mdsd_block_markov, the policy it read, and a
 * refused option told apart (run.usage) from a failure of the input. */
Test(abi, markov_with_reports_the_policy_and_usage)
{
    double tp[4] = {0.7, 0.3, 0.4, 0.6}, tq[4] = {0.5, 0.5, 0.5, 0.5};
    mdsd_block_markov_opts mk;
    mdsd_block_markov_opts_init(&mk);
    mk.verifier = "rrsw", mk.tree = "2,1", mk.scheme = "wor", mk.V = 2, mk.p = tp, mk.q = tq;
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    mdsd_block_markov_result a, b;
    mdsd_block_policy pol;
    mdsd_err err;
    cr_assert_eq(mdsd_block_markov_with(&mk, &run, 0, &a, NULL, &pol, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(mdsd_block_markov(&mk, &b, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    cr_assert(pol.tree == 1 && pol.depth == 2 && pol.widths[0] == 2 && pol.widths[1] == 1);
    cr_assert_str_eq(pol.scheme, "wor");
    cr_assert_str_eq(pol.text, "tree 2,1 wor");
    cr_assert_eq(run.usage, 0);
    mk.verifier = NULL; /* an option refused */
    cr_assert_eq(mdsd_block_markov_with(&mk, &run, 0, &a, NULL, &pol, &err), MDSD_EINVAL);
    cr_assert_eq(run.usage, 1, "%s", err.msg);
    mk.verifier = "rrsw";
    tp[0] = 0.5; /* a row that does not sum to 1: the input, not an option */
    cr_assert_neq(mdsd_block_markov_with(&mk, &run, 0, &a, NULL, &pol, &err), MDSD_OK);
    cr_assert_eq(run.usage, 0, "%s", err.msg);
}

/* mdsd_block_markov_result.verifier is the library's string, not the caller's. */
Test(abi, markov_result_names_outlive_the_options)
{
    const char *names[] = {"bv", "sd", "optimal-token"};
    for (size_t k = 0; k < 3; k++) {
        char mine[32];
        snprintf(mine, sizeof mine, "%s", names[k]);
        double tp[4] = {0.7, 0.3, 0.4, 0.6}, tq[4] = {0.5, 0.5, 0.5, 0.5};
        mdsd_block_markov_opts mk;
        mdsd_block_markov_opts_init(&mk);
        mk.verifier = mine, mk.sequences = 1, mk.depth = 2, mk.V = 2, mk.p = tp, mk.q = tq;
        mdsd_block_markov_result r;
        mdsd_err err;
        cr_assert_eq(mdsd_block_markov(&mk, &r, &err), MDSD_OK, "%s: %s", names[k], err.msg);
        cr_assert(r.verifier != mine);
        memset(mine, 'x', sizeof mine - 1);
        cr_assert_str_eq(r.verifier, names[k]);
    }
}

/* One top_p convention: (0, 1], 1 = none, 0 refused (mdsd/common.h). */
Test(abi, top_p_zero_is_refused_everywhere)
{
    double p[3] = {0.5, 0.3, 0.2};
    mdsd_err err;
    cr_assert_eq(mdsd_truncate(p, 3, 0, 0.0, &err), MDSD_EINVAL);
    float t[3] = {0, 1, 2}, d[3] = {2, 1, 0};
    double a;
    mdsd_batch_eval_opts bo;
    mdsd_batch_eval_opts_init(&bo);
    bo.top_p = 0.0;
    cr_assert_eq(mdsd_batch_eval(t, d, 1, 3, &bo, &a, NULL, NULL, NULL, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "top_p 0 is not in (0, 1]"), "%s", err.msg);
    bo.top_p = 1.0;
    cr_assert_eq(mdsd_batch_eval(t, d, 1, 3, &bo, &a, NULL, NULL, NULL, &err), MDSD_OK, "%s",
                 err.msg);
    const char *dumps[] = {"data/kjv-ngram.h5"};
    mdsd_table_opts to;
    mdsd_table_opts_init(&to);
    to.n_dumps = 1, to.dumps = dumps, to.output = "/nonexistent/out.csv", to.top_p = 0.0;
    cr_assert_eq(mdsd_table_run(&to, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "top-p 0 is not in (0, 1]"), "%s", err.msg);
}
