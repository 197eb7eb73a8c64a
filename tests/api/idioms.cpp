// idioms.cpp - the public API's documented idioms, as a C++17 program (tests/test_abi.c
// builds it with g++ -std=c++17 -Wall -Wextra -Werror -pedantic against build/release and
// runs it): statuses held in mdsd_status, every options struct set up by its _init, the
// size rule of mdsd/common.h, the one top_p convention, result strings that outlive the
// options, objects released by their _free (NULL accepted). Prints "idioms: ok".
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <mdsd/mdsd.h>

static int failures = 0;

static void expect(bool ok, const char *what, const mdsd_err &err)
{
    if (!ok) {
        std::fprintf(stderr, "idioms: %s failed (%s)\n", what, err.msg);
        failures++;
    }
}

int main()
{
    mdsd_err err;
    mdsd_err_clear(&err);
    std::vector<double> p = {0.5, 0.3, 0.2}, q = {0.2, 0.3, 0.5};
    mdsd_scheme iid = {MDSD_SCHEME_IID, 2, p.size(), q.data(), nullptr};

    // mdsd/dist.h: a status is an mdsd_status, not an int (the trap of issue 39).
    std::vector<double> t = p;
    mdsd_status s = mdsd_truncate(t.data(), t.size(), 2, 1.0, &err);
    expect(s == MDSD_OK && t[2] == 0.0, "mdsd_truncate top_k = 2", err);
    s = mdsd_truncate(t.data(), t.size(), 0, 0.0, &err); // top_p 0 is refused everywhere
    expect(s == MDSD_EINVAL, "mdsd_truncate refuses top_p = 0", err);
    mdsd_scheme_kind kind;
    s = mdsd_scheme_parse("wor", &kind, &err);
    expect(s == MDSD_OK && kind == MDSD_SCHEME_WOR, "mdsd_scheme_parse", err);
    switch (mdsd_scheme_parse("nope", &kind, &err)) {
    case MDSD_OK: expect(false, "mdsd_scheme_parse refuses 'nope'", err); break;
    default: break;
    }

    // mdsd/alpha.h with options from their _init; a size the library does not know is refused.
    mdsd_alpha_opts ao;
    mdsd_alpha_opts_init(&ao);
    mdsd_alpha_result best{};
    s = mdsd_alpha(p.data(), &iid, MDSD_ALPHA_AUTO, &ao, &best, nullptr, &err);
    expect(s == MDSD_OK && std::fabs(best.alpha - 0.86) < 1e-12, "mdsd_alpha", err);
    expect(ao.size == sizeof ao, "mdsd_alpha_opts_init sets size", err);
    ao.size = sizeof ao - 1;
    s = mdsd_alpha(p.data(), &iid, MDSD_ALPHA_AUTO, &ao, &best, nullptr, &err);
    expect(s == MDSD_EINVAL && std::strstr(err.msg, "mdsd_alpha_opts"),
           "mdsd_alpha refuses a wrong size", err);

    // mdsd/verifier.h: the decoding loop of its header comment.
    mdsd_verifier_opts vo;
    mdsd_verifier_opts_init(&vo);
    double rate = 0.0;
    s = mdsd_verifier_rate(MDSD_VERIFIER_RRS, p.data(), &iid, &vo, &rate, nullptr, &err);
    expect(s == MDSD_OK && std::fabs(rate - 0.76) < 1e-12, "mdsd_verifier_rate", err);
    mdsd_rng *rng = mdsd_rng_new(1, &err);
    mdsd_sampler *drafter = mdsd_sampler_new(&iid, &err);
    mdsd_verifier *v = mdsd_verifier_new(MDSD_VERIFIER_RRS, p.data(), &iid, &vo, &err);
    expect(rng && drafter && v, "rng, sampler, verifier", err);
    if (rng && drafter && v) {
        mdsd_token drafts[2];
        int accepted = -2;
        mdsd_sampler_draw_drafts(drafter, rng, drafts);
        mdsd_token y = mdsd_verify(v, drafts, rng, &accepted, &err);
        expect(y >= 0 && y < 3 && accepted >= -1 && accepted < 2, "mdsd_verify", err);
        mdsd_montecarlo_opts mo;
        mdsd_montecarlo_opts_init(&mo);
        mo.trials = 1000;
        mdsd_montecarlo_result mr{};
        s = mdsd_montecarlo(v, &mo, &mr, nullptr, nullptr, &err);
        expect(s == MDSD_OK && mr.trials == 1000, "mdsd_montecarlo", err);
    }
    mdsd_verifier_free(v);
    mdsd_sampler_free(drafter);
    mdsd_rng_free(rng);

    // mdsd/batch.h: rows of logits; top_p 0 refused as by mdsd_truncate.
    std::vector<float> target = {0.0f, 1.0f, 2.0f, 2.0f, 1.0f, 0.0f};
    std::vector<float> draft = {2.0f, 1.0f, 0.0f, 0.0f, 1.0f, 2.0f};
    mdsd_batch_eval_opts bo;
    mdsd_batch_eval_opts_init(&bo);
    bo.verifier = MDSD_VERIFIER_RRS;
    double alpha[2], rates[2];
    s = mdsd_batch_eval(target.data(), draft.data(), 2, 3, &bo, alpha, rates, nullptr, nullptr,
                        &err);
    expect(s == MDSD_OK && rates[0] <= alpha[0] + 1e-12, "mdsd_batch_eval", err);
    bo.top_p = 0.0;
    s = mdsd_batch_eval(target.data(), draft.data(), 2, 3, &bo, alpha, rates, nullptr, nullptr,
                        &err);
    expect(s == MDSD_EINVAL, "mdsd_batch_eval refuses top_p = 0", err);

    // mdsd/block.h: the result's verifier name outlives the caller's string.
    std::vector<double> tp = {0.7, 0.3, 0.4, 0.6}, tq = {0.5, 0.5, 0.5, 0.5};
    mdsd_block_markov_opts mk;
    mdsd_block_markov_opts_init(&mk);
    std::string name = "bv";
    mk.verifier = name.c_str();
    mk.sequences = 1, mk.depth = 2, mk.V = 2, mk.p = tp.data(), mk.q = tq.data();
    mdsd_block_markov_result br{};
    s = mdsd_block_markov(&mk, &br, &err);
    expect(s == MDSD_OK && br.verifier != name.c_str(), "mdsd_block_markov (bv)", err);
    name.assign("xx");
    expect(s == MDSD_OK && br.verifier && std::strcmp(br.verifier, "bv") == 0,
           "the result's verifier is the library's string", err);

    // The jobs' and writers' options, set up by their _init (the other fields as documented).
    mdsd_table_opts to;
    mdsd_table_opts_init(&to);
    mdsd_block_job_opts jo;
    mdsd_block_job_opts_init(&jo);
    mdsd_dump_layout dl;
    mdsd_dump_layout_init(&dl);
    mdsd_tree_dump_layout tl;
    mdsd_tree_dump_layout_init(&tl);
    expect(to.size == sizeof to && to.top_p == 1.0 && to.verifier_opts.size == sizeof vo &&
               jo.size == sizeof jo && dl.size == sizeof dl && tl.size == sizeof tl &&
               tl.dump.size == sizeof dl && tl.temperature == 1.0,
           "the _init functions", err);
    to.size = 0; // a struct not set up by its _init
    s = mdsd_table_run(&to, &err);
    expect(s == MDSD_EINVAL && std::strstr(err.msg, "mdsd_table_opts"),
           "mdsd_table_run refuses size 0", err);
    // Rows in memory as a column of the table job (no file): two rows, V = 3.
    static const float tz[6] = {1, 0, -1, 0.5f, 0.5f, 0}, qz[6] = {0, 1, -1, 0, 0.5f, 1};
    const float *planes[] = {qz};
    const char *drafter_names[] = {"small"};
    mdsd_row_arrays ra;
    mdsd_row_arrays_init(&ra);
    ra.label = "mine", ra.N = 2, ra.V = 3, ra.target = tz;
    ra.n_drafters = 1, ra.drafter_names = drafter_names, ra.drafts = planes;
    mdsd_table_opts_init(&to);
    static const double temps[] = {1.0};
    static const size_t ns[] = {2};
    to.n_temperatures = 1, to.temperatures = temps, to.n_counts = 1, to.draft_counts = ns;
    to.n_arrays = 1, to.arrays = &ra, to.output = "/nonexistent-dir/r.csv";
    s = mdsd_table_run(&to, &err); // refused for its output, after the arrays' checks
    expect(ra.size == sizeof ra && s != MDSD_OK && std::strstr(err.msg, "nonexistent-dir"),
           "a table job over rows in memory", err);

    // mdsd/plot.h: the options from their _init (n = -1 and temperature NaN: any), a
    // missing CSV refused naming it, a label without '=' refused.
    mdsd_plot_opts po;
    mdsd_plot_opts_init(&po);
    expect(po.size == sizeof po && po.n == -1 && std::isnan(po.temperature), "mdsd_plot_opts_init", err);
    mdsd_plot_series *series = nullptr;
    po.kind = "vs-drafts";
    s = mdsd_plot_series_read("/nonexistent/r.csv", &po, &series, &err);
    expect(s != MDSD_OK && series == nullptr && std::strstr(err.msg, "/nonexistent/r.csv"),
           "mdsd_plot_series_read refuses a missing CSV", err);
    const char *bad_label[] = {"rrs"};
    s = mdsd_labels_check(1, bad_label, &err);
    expect(s == MDSD_EINVAL, "mdsd_labels_check refuses 'rrs'", err);
    mdsd_plot_series_free(nullptr);

    // mdsd/check.h: the suite's list through a report the library owns.
    mdsd_check_opts co;
    mdsd_check_opts_init(&co);
    co.only = "k2-closed-form";
    mdsd_check_report *rep = nullptr;
    s = mdsd_check_list(&co, &rep, &err);
    expect(co.size == sizeof co && co.seed == 1 && s == MDSD_OK && rep && rep->n_checks == 1 &&
               std::strcmp(rep->checks[0]->name, "k2-closed-form") == 0,
           "mdsd_check_list", err);
    mdsd_check_report_free(rep);

    // mdsd/merge.h through mdsd/mdsd.h; the _free functions accept NULL.
    mdsd_status (*merge)(const char *const *, size_t, const char *, const char *, const char *,
                         mdsd_err *) = &mdsd_merge;
    s = merge(nullptr, 0, "/nonexistent/out.csv", nullptr, nullptr, &err);
    expect(s != MDSD_OK, "mdsd_merge refuses no shards", err);
    mdsd_merge_job_opts mo;
    mdsd_merge_job_opts_init(&mo);
    mo.layout = MDSD_REPORT_COMBINED;
    s = mdsd_merge_run(nullptr, 0, "/nonexistent/out.csv", &mo, &err);
    expect(s == MDSD_EINVAL && mo.size == sizeof mo, "mdsd_merge_run refuses no shards", err);

    // mdsd/report.h: options from their _init, the layout by name, the text released
    // by mdsd_report_free (NULL accepted); option_error tells a refused option.
    mdsd_report_opts ro;
    mdsd_report_opts_init(&ro);
    expect(ro.size == sizeof ro && ro.is_top == -1, "mdsd_report_opts_init", err);
    mdsd_report_layout layout = MDSD_REPORT_BOTH;
    s = mdsd_report_layout_parse("per-setting", &layout, &err);
    expect(s == MDSD_OK && layout == MDSD_REPORT_PER_SETTING, "mdsd_report_layout_parse", err);
    ro.layout = layout;
    ro.standalone = 1; // without latex: refused before any file is read
    char *text = nullptr;
    int option_error = 0;
    s = mdsd_report("/nonexistent/r.csv", nullptr, &ro, &text, &option_error, &err);
    expect(s == MDSD_EINVAL && option_error == 1 && text == nullptr,
           "mdsd_report refuses standalone without latex", err);
    ro.standalone = 0;
    s = mdsd_report("/nonexistent/r.csv", nullptr, &ro, &text, &option_error, &err);
    expect(s == MDSD_EIO && option_error == 0, "mdsd_report names an unreadable CSV", err);
    mdsd_report_free(text);

    mdsd_dump_reader_free(nullptr);
    mdsd_dump_writer_free(nullptr);
    mdsd_tree_dump_writer_free(nullptr);
    mdsd_verifier_free(nullptr);
    mdsd_sampler_free(nullptr);
    mdsd_check_report_free(nullptr);
    mdsd_rng_free(nullptr);

    if (failures)
        return 1;
    std::printf("idioms: ok (libmdsd %s)\n", mdsd_version());
    return 0;
}
