/* vLLM's vocabulary in `mdsd block` (MATH.md §5.2): its "mean acceptance
 * length" (1 + accepted / drafts, bonus token included) is E[tau], and its
 * "per-position acceptance rate" at position d (accepted at d / drafts) is
 * the unconditional P(at least d accepted), not the conditional per-depth
 * rate. Checked independently of the writers:
 *  - tree dump: every tree evaluated alone (a one-tree view of the dump), its
 *    tokens accepted at each position averaged over the trees as vLLM's
 *    counters do, against the CSV's, Markdown's and LaTeX's columns, and
 *    the per-position rates' standard errors (clustered by sample) against
 *    the CSV's per_position_acceptance_rate_stderr;
 *  - Markov toy: plain speculative steps (--simulate), the accepted tokens
 *    counted per position, against the exact route's JSON keys, within 5
 *    binomial standard errors, and 1 + their sum against the mean acceptance
 *    length. Shown once to catch a planted error: the conditional rates
 *    written in place of the unconditional ones (CSV, tables and JSON) fail
 *    both tests (the shipped dump's kseq K = 2 position 2: 0.662 against the
 *    per-tree count 0.478; the toy: 1 + 2.674 against 3.481). And the public
 *    mdsd_block_markov against the internal exact route. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/block.h>

#include "block.h"
#include "testutil.h"
#include "treedump.h"

#define SHIPPED "data/kjv-trees.h5"
#define TOY "papers/block/toys/toy3.txt"

/* The field `name` of CSV row `line` (header `head`), no quoting needed here. */
static void csv_field(const char *head, const char *line, const char *name, char *out, size_t size)
{
    char h[4096], l[4096];
    snprintf(h, sizeof h, "%s", head);
    snprintf(l, sizeof l, "%s", line);
    h[strcspn(h, "\n")] = l[strcspn(l, "\n")] = 0;
    char *hs = NULL;
    char *hf = strtok_r(h, ",", &hs);
    char *lp = l; /* split by hand: the row has empty fields */
    while (hf) {
        char *comma = strchr(lp, ',');
        size_t len = comma ? (size_t)(comma - lp) : strlen(lp);
        if (!strcmp(hf, name)) {
            cr_assert(len < size);
            memcpy(out, lp, len);
            out[len] = 0;
            return;
        }
        cr_assert(comma, "row ends before column %s: %s", name, line);
        lp = comma + 1;
        hf = strtok_r(NULL, ",", &hs);
    }
    cr_assert_fail("no column %s in %s", name, head);
}

/* "a;b;c" -> v[0..] */
static size_t list_values(const char *text, double *v, size_t cap)
{
    size_t n = 0;
    const char *p = text;
    while (*p && n < cap) {
        char *end;
        v[n++] = strtod(p, &end);
        cr_assert(end != p, "not a number list: %s", text);
        p = *end == ';' ? end + 1 : end;
    }
    return n;
}

/* Mean over the dump's trees of each tree's own reach_d, every tree
 * evaluated alone: reach[0..L]; and its standard error clustered by sample
 * (CR1: C/(C-1) sum_k (a_k - reach n_k)^2 / n^2 over the samples' sums a_k
 * of n_k trees), se[1..L]. */
static void per_tree_reach(mdsd_tree_dump *t, const mdsd_block_case *c, double *reach, double *se)
{
    size_t L = c->pol.depth, *root = t->root, n = t->n_trees;
    double *each = calloc(n * (L + 1), sizeof *each);
    for (size_t d = 0; d <= L; d++)
        reach[d] = 0.0;
    for (size_t i = 0; i < n; i++) {
        mdsd_block_dump_result one;
        mdsd_err err;
        t->root = root + i, t->n_trees = 1;
        cr_assert_eq(mdsd_tree_dump_eval(t, c, 1, NULL, 1, NULL, NULL, &one, &err), 0, "%s",
                     err.msg);
        for (size_t d = 0; d <= L; d++)
            reach[d] += each[i * (L + 1) + d] = one.reach[d];
    }
    t->root = root, t->n_trees = n;
    for (size_t d = 0; d <= L; d++)
        reach[d] /= (double)n;
    for (size_t d = 1; d <= L; d++) {
        double zz = 0.0, a = 0.0, nk = 0.0;
        size_t C = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i > 0 && (i == n || t->sample[root[i]] != t->sample[root[i - 1]])) {
                zz += (a - reach[d] * nk) * (a - reach[d] * nk), C++;
                a = nk = 0.0;
            }
            if (i < n)
                a += each[i * (L + 1) + d], nk += 1.0;
        }
        cr_assert(C > 1);
        se[d] = sqrt((double)C / (double)(C - 1) * zz) / (double)n;
    }
    free(each);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(block_vllm, tree_dump_columns_match_per_tree_counts)
{
    char dir[] = "/tmp/mdsd-test-vllm-XXXXXX", cmd[1024], *out = NULL;
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "block " SHIPPED " --verifiers kseq,rrs --sequences 2,4 "
             "-o %s/b.csv --markdown %s/b.md --latex %s/b.tex", dir, dir, dir);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    free(out);
    char path[256];
    snprintf(path, sizeof path, "%s/b.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    char head[4096], line[4096], field[1024];
    cr_assert(fgets(head, sizeof head, f));
    cr_assert(strstr(head, ",per_depth_stderr,contexts,mean_acceptance_length,per_position_acceptance_rate,"
                           "per_position_acceptance_rate_stderr\n"),
              "the vLLM columns and the rates' standard errors extend the header: %s", head);
    mdsd_tree_dump *t;
    mdsd_err err;
    cr_assert_eq(mdsd_tree_dump_open(SHIPPED, &t, &err), MDSD_OK, "%s", err.msg);
    size_t rows = 0;
    snprintf(path, sizeof path, "%s/b.md", dir);
    char *md = strdup(slurp(path));
    snprintf(path, sizeof path, "%s/b.tex", dir);
    char *tex = strdup(slurp(path));
    /* the tables name vLLM's terms in their captions: E[tau] is printed once */
    cr_assert(strstr(md, "vLLM's mean acceptance length") && strstr(md, "| E[tau] (s.e.) | reach |"), "%s", md);
    cr_assert(strstr(tex, "vLLM's mean acceptance length") && strstr(tex, "& $E[\\tau]$ (s.e.) & $r_L$"),
              "%s", tex);
    while (fgets(line, sizeof line, f)) {
        mdsd_block_case c = {0, t->pol, 0};
        csv_field(head, line, "verifier", field, sizeof field);
        cr_assert_eq(mdsd_block_case_parse(field, &c, NULL), MDSD_OK);
        csv_field(head, line, "depth", field, sizeof field);
        c.pol.depth = (size_t)atoi(field);
        csv_field(head, line, "sequences", field, sizeof field);
        c.pol.sequences = (size_t)atoi(field);
        size_t L = c.pol.depth;
        double reach[MDSD_BLOCK_MAX_DEPTH + 1], pos[MDSD_BLOCK_MAX_DEPTH], cond[MDSD_BLOCK_MAX_DEPTH];
        double reach_se[MDSD_BLOCK_MAX_DEPTH + 1], pos_se[MDSD_BLOCK_MAX_DEPTH];
        per_tree_reach(t, &c, reach, reach_se);
        csv_field(head, line, "per_position_acceptance_rate_stderr", field, sizeof field);
        cr_assert_eq(list_values(field, pos_se, MDSD_BLOCK_MAX_DEPTH), L, "%s", field);
        for (size_t d = 1; d <= L; d++)
            cr_assert(reach_se[d] > 0 && fabs(pos_se[d - 1] - reach_se[d]) <= 1e-8 * reach_se[d],
                      "%s position %zu: s.e. %.9g, per-tree recomputation %.12g", line, d,
                      pos_se[d - 1], reach_se[d]);
        if (L == 1) { /* reach_1 = E[tau] - 1: the same s.e. */
            csv_field(head, line, "stderr", field, sizeof field);
            cr_assert(fabs(pos_se[0] - strtod(field, NULL)) <= 1e-8 * pos_se[0], "%s", line);
        }
        csv_field(head, line, "per_position_acceptance_rate", field, sizeof field);
        cr_assert_eq(list_values(field, pos, MDSD_BLOCK_MAX_DEPTH), L, "%s", field);
        csv_field(head, line, "per_depth", field, sizeof field);
        cr_assert_eq(list_values(field, cond, MDSD_BLOCK_MAX_DEPTH), L);
        /* vLLM: 1 + accepted / drafts, accepted = the tokens accepted at each position */
        double accepted = 0.0;
        for (size_t d = 1; d <= L; d++) {
            cr_assert(fabs(pos[d - 1] - reach[d]) <= 5e-9, "%s L=%zu K=%zu position %zu: %.9g, "
                      "per-tree count %.12g", line, L, c.pol.sequences, d, pos[d - 1], reach[d]);
            accepted += reach[d];
        }
        csv_field(head, line, "mean_acceptance_length", field, sizeof field);
        double mal = strtod(field, NULL);
        cr_assert(fabs(mal - (1.0 + accepted)) <= 1e-12, "%s: %.17g vs 1 + %.17g", line, mal,
                  accepted);
        csv_field(head, line, "block_efficiency", field, sizeof field);
        cr_assert_eq(mal, strtod(field, NULL));
        /* the table rows print both: Markdown E[tau] (s.e.) to 4 places and every reach
         * to 3, LaTeX E[tau] (s.e.) to 3 places and the last reach */
        char want[256], reaches[128];
        size_t at = 0;
        for (size_t d = 1; d <= L; d++)
            at += (size_t)snprintf(reaches + at, sizeof reaches - at, d > 1 ? " %.3f" : "%.3f",
                                   reach[d]);
        csv_field(head, line, "stderr", field, sizeof field);
        double se = strtod(field, NULL);
        snprintf(want, sizeof want, "| %.4f (%.4f) | %s |", mal, se, reaches);
        cr_assert(strstr(md, want), "Markdown lacks '%s'", want);
        snprintf(want, sizeof want, "& %zu & %.3f (%.3f) & %.3f", L, mal, se, reach[L]);
        cr_assert(strstr(tex, want), "LaTeX lacks '%s'", want);
        if (L >= 2)
            cr_assert(fabs(cond[1] - pos[1]) > 1e-3, "conditional and unconditional differ");
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, 2 * 2 * t->pol.depth, "2 verifiers x 2 K x L depths: %zu rows", rows);
    free(md), free(tex);
    mdsd_tree_dump_close(t);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A JSON key's number array (or number: n = 1) from one-line JSON. */
static size_t json_numbers(const char *json, const char *key, double *v, size_t cap)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    cr_assert(p, "no key %s in %s", key, json);
    p += strlen(pat);
    size_t n = 0;
    int array = *p == '[';
    p += array;
    while (n < cap) {
        char *end;
        v[n++] = strtod(p, &end);
        cr_assert(end != p, "%s: not a number at %s", key, p);
        if (!array || *end != ',')
            break;
        p = end + 1;
    }
    return n;
}

Test(block_vllm, markov_json_against_simulated_steps)
{
    char *exact = NULL, *sim = NULL;
    const char *pol = "block --markov " TOY " --sequences 2 --depth 3 -v kseq --json";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --exact", pol);
    cr_assert_eq(test_run_mdsd(cmd, 0, &exact), 0, "%s", exact);
    const uint64_t T = 200000;
    snprintf(cmd, sizeof cmd, "%s --simulate --trials %llu --seed 7", pol, (unsigned long long)T);
    cr_assert_eq(test_run_mdsd(cmd, 0, &sim), 0, "%s", sim);
    double ex[8], mc[8], tau[1], mal[1], mtau[1];
    cr_assert_eq(json_numbers(exact, "per_position_acceptance_rate", ex, 8), 3);
    cr_assert_eq(json_numbers(sim, "per_position_acceptance_rate", mc, 8), 3);
    json_numbers(exact, "block_efficiency", tau, 1);
    json_numbers(exact, "mean_acceptance_length", mal, 1);
    cr_assert_eq(tau[0], mal[0]);
    json_numbers(sim, "mean_acceptance_length", mtau, 1);
    double accepted = 0.0;
    for (size_t d = 0; d < 3; d++) {
        double se = sqrt(ex[d] * (1.0 - ex[d]) / (double)T);
        cr_assert(fabs(mc[d] - ex[d]) <= 5.0 * se, "position %zu: simulated %.6f, exact %.6f "
                  "(s.e. %.2g)", d + 1, mc[d], ex[d], se);
        accepted += ex[d];
    }
    cr_assert(fabs(mal[0] - (1.0 + accepted)) <= 1e-12, "%.17g vs 1 + %.17g", mal[0], accepted);
    free(exact), free(sim);
}

/* The public mdsd_block_markov (mdsd/block.h) against the internal exact
 * route on the same toy: the same E[tau] and reaches (vLLM's per-position
 * rates), the conditional rates their ratios, optimal-token beside it; a
 * refused option is EINVAL naming it. */
Test(block_vllm, public_markov_api_matches_the_exact_route)
{
    mdsd_block_markov_opts o;
    mdsd_block_markov_opts_init(&o);
    o.markov = TOY, o.verifier = "kseq", o.sequences = 2, o.depth = 3, o.optimal = 1;
    mdsd_block_markov_result r;
    mdsd_err err;
    cr_assert_eq(mdsd_block_markov(&o, &r, &err), MDSD_OK, "%s", err.msg);
    mdsd_markov m = {0};
    cr_assert_eq(mdsd_markov_read(TOY, &m, &err), MDSD_OK, "%s", err.msg);
    mdsd_policy pol = {.kind = MDSD_POLICY_SEQ, .depth = 3, .sequences = 2};
    mdsd_block_opts bo;
    mdsd_block_opts_init(&bo);
    mdsd_block_result ex, opt;
    cr_assert_eq(mdsd_block_exact(&m, &pol, MDSD_VERIFIER_KSEQ, &bo, &ex, &err), MDSD_OK);
    cr_assert_eq(mdsd_block_optimal_token(&m, &pol, &bo, &opt, &err), MDSD_OK);
    cr_assert_eq(r.block_efficiency, ex.tau);
    cr_assert_eq(r.optimal_token, opt.tau);
    cr_assert_eq(r.depth, 3);
    cr_assert_str_eq(r.route, "exact");
    cr_assert_str_eq(r.verifier, "kseq");
    double sum = 0.0;
    for (size_t d = 1; d <= 3; d++) {
        cr_assert_eq(r.reach[d], ex.reach[d]);
        cr_assert(fabs(r.per_depth[d] - r.reach[d] / r.reach[d - 1]) <= 1e-15);
        sum += r.reach[d];
    }
    cr_assert(fabs(r.block_efficiency - (1.0 + sum)) <= 1e-12);
    mdsd_markov_free(&m);
    o.tree = "2,2";
    cr_assert_eq(mdsd_block_markov(&o, &r, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "`tree` excludes"), "%s", err.msg);
    o.tree = NULL, o.verifier = "nope";
    cr_assert_eq(mdsd_block_markov(&o, &r, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "unknown verifier 'nope'") && strstr(err.msg, "optimal-block"), "%s",
              err.msg);
}
