/* `mdsd block DUMP --engine-metrics FILE.json` (job/blockengine.c) and the
 * strict JSON reader under it (io/jsonread.c).
 *  - jsonread: an RFC 8259 document read back value by value (escapes,
 *    surrogate pairs to UTF-8, integral numbers); every malformed text of a
 *    list refused with its own message, and nesting bounded at 64;
 *  - block_engine: on the shipped tree dump, the CSV with --engine-metrics
 *    is the CSV without it plus the engine columns (nothing of the toolkit's
 *    changed); the engine's row roles (same: its verifier at its K and L,
 *    best: the largest E[tau] there, found here from the CSV), the gap
 *    toolkit - engine, and the standard errors recomputed here from the
 *    distribution of tau the per-position rates give (P(tau = t), not the
 *    (2d + 1) identity the code uses); SGLang's two accept-rate formulas;
 *    the Markdown table's lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "jsonread.h"
#include "testutil.h"

#define SHIPPED "data/kjv-trees.h5"

Test(jsonread, reads_a_document_back)
{
    const char *text = "{\"a\": [1, -0.5e2, true, false, null, 0],\n \"s\": \"\\u00e9\\ud83d\\ude00\\n\\\"/\","
                       " \"o\": {}, \"e\": []}";
    mdsd_jv *v;
    mdsd_err err;
    cr_assert_eq(mdsd_json_parse(text, strlen(text), "t", &v, &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(v->kind, MDSD_JV_OBJECT);
    cr_assert_eq(v->n, 4);
    const mdsd_jv *a = mdsd_jv_get(v, "a"), *s = mdsd_jv_get(v, "s");
    cr_assert(a && a->kind == MDSD_JV_ARRAY && a->n == 6);
    cr_assert(a->items[0].kind == MDSD_JV_NUMBER && a->items[0].num == 1.0 && a->items[0].integral);
    cr_assert(a->items[1].num == -50.0 && !a->items[1].integral);
    cr_assert(a->items[2].kind == MDSD_JV_BOOL && a->items[2].b && !a->items[3].b);
    cr_assert_eq(a->items[4].kind, MDSD_JV_NULL);
    cr_assert(a->items[5].num == 0.0 && a->items[5].integral);
    cr_assert(s && s->kind == MDSD_JV_STRING);
    cr_assert_str_eq(s->str, "\xc3\xa9\xf0\x9f\x98\x80\n\"/");
    cr_assert_eq(mdsd_jv_get(v, "s")->line, 2);
    cr_assert(mdsd_jv_get(v, "o")->kind == MDSD_JV_OBJECT && mdsd_jv_get(v, "o")->n == 0);
    cr_assert_null(mdsd_jv_get(v, "absent"));
    mdsd_jv_free(v);
}

Test(jsonread, refuses_what_rfc8259_does_not_allow)
{
    static const struct {
        const char *text, *fragment;
    } bad[] = {
        {"", "ends where a value"}, {"  ", "ends where a value"}, {"{", "an object key must be"},
        {"[1,]", "trailing comma"}, {"{\"a\":1,}", "trailing comma"}, {"[1 2]", "expected ',' or ']'"},
        {"{\"a\" 1}", "expected ':'"}, {"{1:2}", "key must be a string"}, {"01", "leading zero"},
        {"-01", "leading zero"}, {"1.", "digit after '.'"}, {".5", "unexpected character"},
        {"+1", "unexpected character"}, {"-", "needs a digit"}, {"1e", "exponent"},
        {"1e+", "exponent"}, {"0x10", "text after"}, {"NaN", "unexpected character"},
        {"Infinity", "unexpected character"}, {"-Infinity", "needs a digit"},
        {"'a'", "unexpected character"}, {"\"\\x\"", "unknown escape"}, {"\"a", "closing quote"},
        {"\"\\u12\"", "four hex digits"}, {"\"\\ud800\"", "high surrogate"},
        {"\"\\ud800\\u0041\"", "high surrogate"}, {"\"\\udc00\"", "lone low surrogate"},
        {"\"\\u0000\"", "\\u0000"}, {"{\"a\":1,\"a\":2}", "given twice"}, {"tru", "unexpected"},
        {"nul", "unexpected"}, {"[] []", "text after"}, {"\"\x01\"", "control character"},
        {"\"\t\"", "control character"}, {"\"\xff\"", "not UTF-8"}, {"\"\xc0\xaf\"", "not UTF-8"},
        {"\"\xe0\x80\xaf\"", "not UTF-8"}, {"\"\xed\xa0\x80\"", "not UTF-8"},
        {"\"\xf4\x90\x80\x80\"", "not UTF-8"}, {"\"\xe2\x82\"", "not UTF-8"}, {"1e400", "range"},
        {"-1e400", "range"}, {"/* c */ 1", "unexpected"}, {"\xef\xbb\xbf{}", "unexpected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mdsd_jv *v = NULL;
        mdsd_err err;
        mdsd_err_clear(&err);
        int rc = mdsd_json_parse(bad[i].text, strlen(bad[i].text), "f.json", &v, &err);
        cr_expect_eq(rc, MDSD_EFORMAT, "accepted: '%s'", bad[i].text);
        cr_expect_null(v);
        cr_expect(strstr(err.msg, bad[i].fragment) && strstr(err.msg, "f.json: line 1, column"),
                  "'%s': message '%s' lacks '%s'", bad[i].text, err.msg, bad[i].fragment);
    }
    /* NUL bytes (strlen would stop at them) */
    mdsd_jv *v = NULL;
    mdsd_err err;
    cr_expect_eq(mdsd_json_parse("[1,\0]", 5, "f", &v, &err), MDSD_EFORMAT);
    cr_expect(strstr(err.msg, "column 4: a NUL byte"), "%s", err.msg);
    /* 64 levels are read, 65 refused (the recursion is bounded) */
    char deep[200];
    for (int depth = 64; depth <= 65; depth++) {
        memset(deep, '[', (size_t)depth);
        memset(deep + depth, ']', (size_t)depth);
        int rc = mdsd_json_parse(deep, 2 * (size_t)depth, "f", &v, &err);
        cr_expect_eq(rc, depth == 64 ? MDSD_OK : MDSD_EFORMAT, "depth %d", depth);
        mdsd_jv_free(v);
        v = NULL;
    }
}

/* ---- the job ------------------------------------------------------------ */

/* fields of one CSV line (no quoted fields here) into f[cap]; their count */
static size_t split(char *line, char **f, size_t cap)
{
    size_t n = 0;
    line[strcspn(line, "\n")] = 0;
    for (char *p = line;; p++) {
        char *comma = strchr(p, ',');
        if (n < cap)
            f[n++] = p;
        if (!comma)
            break;
        *comma = 0;
        p = comma;
    }
    return n;
}

static size_t column(char **head, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(head[i], name))
            return i;
    cr_assert_fail("no column %s", name);
    return 0;
}

static size_t list(const char *text, double *v, size_t cap)
{
    size_t n = 0;
    for (const char *p = text; *p && n < cap;) {
        char *end;
        v[n++] = strtod(p, &end);
        p = *end == ';' ? end + 1 : end;
    }
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    char *buf = calloc(1 << 20, 1);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* The engine's rates -> P(tau = t), t = 1..L+1; the s.e. of the mean of
 * `steps` steps, computed from that distribution. */
static double se_from_rates(const double *r, size_t L, double steps)
{
    double reach[40] = {1.0}, m = 0.0, m2 = 0.0;
    for (size_t d = 1; d <= L; d++)
        reach[d] = r[d - 1];
    for (size_t t = 1; t <= L + 1; t++) {
        double p = reach[t - 1] - (t <= L ? reach[t] : 0.0);
        m += (double)t * p, m2 += (double)t * (double)t * p;
    }
    return sqrt((m2 - m * m) / steps);
}

/* One job with the engine file `json` (its verifier `verifier`, the
 * toolkit's `toolkit`, K sequences, L = 4, `rates`, mal, steps 5000): every
 * check above; whether the best row was another verifier's. */
static int check_job(const char *json, const char *engine, const char *verifier, const char *toolkit,
                     const char *K, const double *rates, double mal)
{
    char dir[] = "/tmp/mdsd-engine-XXXXXX", path[256], cmd[1024], *out;
    cr_assert(mkdtemp(dir));
    const double steps = 5000;
    snprintf(path, sizeof path, "%s/e.json", dir);
    write_file(path, json);
    snprintf(cmd, sizeof cmd, "block %s --sequences 1,2 --depth 2,4 -o %s/a.csv --engine-metrics %s "
             "--markdown %s/a.md", SHIPPED, dir, path, dir);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "block %s --sequences 1,2 --depth 2,4 -o %s/b.csv", SHIPPED, dir);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    free(out);
    char pa[300], pb[300];
    snprintf(pa, sizeof pa, "%s/a.csv", dir);
    snprintf(pb, sizeof pb, "%s/b.csv", dir);
    char *a = slurp(pa), *b = slurp(pb);
    /* each line of a = the line of b + the engine columns */
    char *sa = NULL, *sb = NULL, *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb);
    char *head[64], *row[64][64], *lines[64];
    size_t nh = 0, nrows = 0, width = 0;
    for (size_t k = 0; la && lb; k++, la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb)) {
        size_t len = strlen(lb);
        cr_assert(!strncmp(la, lb, len) && la[len] == ',', "line %zu:\n%s\n%s", k, la, lb);
        if (k == 0) {
            cr_assert_str_eq(la + len, ",engine,engine_verifier,engine_role,engine_steps,"
                             "engine_mean_acceptance_length,engine_mean_acceptance_length_stderr,"
                             "engine_gap,engine_gap_stderr,engine_per_position_acceptance_rate,"
                             "engine_per_position_gap,engine_per_position_gap_stderr");
            nh = split(la, head, 64);
        } else {
            cr_assert(nrows < 64);
            lines[nrows] = la;
            width = split(la, row[nrows], 64);
            cr_assert_eq(width, nh, "row %zu has %zu fields", k, width);
            nrows++;
        }
    }
    cr_assert(!la && !lb, "a.csv and b.csv differ in length");
    (void)lines;
    size_t cv = column(head, nh, "verifier"), ck = column(head, nh, "sequences"),
           cl = column(head, nh, "depth"), ct = column(head, nh, "block_efficiency"),
           cs = column(head, nh, "stderr"), cr = column(head, nh, "engine_role"),
           cm = column(head, nh, "engine_mean_acceptance_length"),
           cms = column(head, nh, "engine_mean_acceptance_length_stderr"),
           cg = column(head, nh, "engine_gap"), cgs = column(head, nh, "engine_gap_stderr"),
           cpr = column(head, nh, "engine_per_position_acceptance_rate"),
           cpg = column(head, nh, "engine_per_position_gap"),
           cpgs = column(head, nh, "engine_per_position_gap_stderr"),
           creach = column(head, nh, "per_position_acceptance_rate"),
           creach_se = column(head, nh, "per_position_acceptance_rate_stderr"),
           cst = column(head, nh, "engine_steps");
    /* the best at K = 1, L = 4 found here */
    size_t best = nrows, same = nrows;
    for (size_t i = 0; i < nrows; i++)
        if (!strcmp(row[i][ck], K) && !strcmp(row[i][cl], "4")) {
            if (best == nrows || strtod(row[i][ct], NULL) > strtod(row[best][ct], NULL))
                best = i;
            if (!strcmp(row[i][cv], toolkit))
                same = i;
        }
    cr_assert(best < nrows && same < nrows);
    double want_se = se_from_rates(rates, 4, steps);
    size_t seen = 0;
    for (size_t i = 0; i < nrows; i++) {
        const char *role = row[i][cr];
        int is_same = i == same, is_best = i == best;
        const char *want = is_same && is_best ? "same;best" : is_same ? "same" : is_best ? "best" : "";
        cr_expect_str_eq(role, want, "row %zu (%s K=%s L=%s)", i, row[i][cv], row[i][ck], row[i][cl]);
        if (!*want) {
            for (size_t c = column(head, nh, "engine"); c < nh; c++)
                cr_expect_str_eq(row[i][c], "", "row %zu column %s", i, head[c]);
            continue;
        }
        seen++;
        double tau = strtod(row[i][ct], NULL), se = strtod(row[i][cs], NULL);
        cr_expect_str_eq(row[i][cst], "5000");
        cr_expect_eq(strtod(row[i][cm], NULL), mal);
        cr_expect(fabs(strtod(row[i][cms], NULL) - want_se) < 1e-12, "%s vs %.17g", row[i][cms], want_se);
        cr_expect(fabs(strtod(row[i][cg], NULL) - (tau - mal)) < 1e-12);
        cr_expect(fabs(strtod(row[i][cgs], NULL) - sqrt(se * se + want_se * want_se)) < 1e-12);
        double er[8], reach[8], reach_se[8], g[8], gs[8];
        cr_assert_eq(list(row[i][cpr], er, 8), 4);
        cr_assert_eq(list(row[i][creach], reach, 8), 4);
        cr_assert_eq(list(row[i][creach_se], reach_se, 8), 4);
        cr_assert_eq(list(row[i][cpg], g, 8), 4);
        cr_assert_eq(list(row[i][cpgs], gs, 8), 4);
        for (size_t d = 0; d < 4; d++) {
            double ese = sqrt(rates[d] * (1 - rates[d]) / steps);
            cr_expect_eq(er[d], rates[d]);
            cr_expect(fabs(g[d] - (reach[d] - rates[d])) < 1e-8, "position %zu", d + 1);
            cr_expect(fabs(gs[d] - sqrt(reach_se[d] * reach_se[d] + ese * ese)) < 1e-8);
        }
    }
    cr_expect_eq(seen, best == same ? 1 : 2);
    /* the Markdown: the toolkit's table, then the engine's */
    char pm[300], line[256];
    snprintf(pm, sizeof pm, "%s/a.md", dir);
    char *md = slurp(pm);
    cr_expect(strstr(md, "Engine counters: "), "%s", md);
    char name[128];
    if (strcmp(verifier, toolkit))
        snprintf(name, sizeof name, "%s = %s", verifier, toolkit);
    else
        snprintf(name, sizeof name, "%s", verifier);
    snprintf(line, sizeof line, "| %s | %s | live | %.4f (%.4f) |  | %.3f %.3f %.3f %.3f |", engine,
             name, mal, want_se, rates[0], rates[1], rates[2], rates[3]);
    cr_expect(strstr(md, line), "no line '%s' in\n%s", line, md);
    double tau = strtod(row[same][ct], NULL), se = strtod(row[same][cs], NULL);
    snprintf(line, sizeof line, "| %s | positions | %.4f (%.4f) | %+.4f (%.4f) |", toolkit, tau, se,
             tau - mal, sqrt(se * se + want_se * want_se));
    cr_expect(strstr(md, line), "no line '%s' in\n%s", line, md);
    if (best != same) {
        tau = strtod(row[best][ct], NULL), se = strtod(row[best][cs], NULL);
        snprintf(line, sizeof line, "| toolkit, best | %s | positions | %.4f (%.4f) | %+.4f (%.4f) |",
                 row[best][cv], tau, se, tau - mal, sqrt(se * se + want_se * want_se));
        cr_expect(strstr(md, line), "no line '%s' in\n%s", line, md);
    }
    free(md), free(a), free(b);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
    return best != same;
}

/* vLLM's name for its verifier (sd) at K = 1, where every verifier is sd's */
Test(block_engine, vllm_beside_the_toolkit_and_nothing_of_it_changed, .timeout = 120)
{
    const double rates[4] = {0.62, 0.38, 0.19, 0.12};
    cr_expect_eq(check_job("{\"engine\": \"vllm\", \"verifier\": \"rejection_sampler\", \"sequences\": 1,\n"
                           " \"depth\": 4, \"mean_acceptance_length\": 2.31,\n"
                           " \"per_position_acceptance_rate\": [0.62, 0.38, 0.19, 0.12], \"steps\": 5000}\n",
                           "vllm", "rejection_sampler", "sd", "1", rates, 2.31), 0);
}

/* rrs at K = 2: kseq does better on the shipped dump (2.693 against 2.577),
 * so the best row is another row */
Test(block_engine, best_is_another_verifier, .timeout = 120)
{
    const double rates[4] = {0.7, 0.45, 0.27, 0.18};
    cr_expect_eq(check_job("{\"engine\": \"other\", \"verifier\": \"rrs\", \"sequences\": 2, \"depth\": 4,"
                           " \"mean_acceptance_length\": 2.6, \"per_position_acceptance_rate\":"
                           " [0.7, 0.45, 0.27, 0.18], \"steps\": 5000, \"label\": \"a | b\"}",
                           "other", "rrs", "rrs", "2", rates, 2.6), 1);
}

/* SGLang's accept rate, both formulas, into E[tau]; without steps the gap's
 * s.e. is the toolkit's alone and the engine's is empty. */
Test(block_engine, sglang_accept_rate_formulas, .timeout = 120)
{
    static const struct {
        const char *json;
        double mal;
    } cases[] = {
        {"{\"engine\":\"sglang\",\"verifier\":\"kseq\",\"sequences\":4,\"depth\":4,\"accept_rate\":0.6,"
         "\"num_draft_tokens\":5,\"accept_rate_formula\":\"tokens\"}", 3.0},
        {"{\"engine\":\"sglang\",\"verifier\":\"kseq\",\"sequences\":4,\"depth\":4,\"accept_rate\":0.25,"
         "\"num_draft_tokens\":5,\"accept_rate_formula\":\"drafts\"}", 2.0},
    };
    for (size_t k = 0; k < 2; k++) {
        char dir[] = "/tmp/mdsd-engine-XXXXXX", path[256], cmd[1024], *out;
        cr_assert(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/e.json", dir);
        write_file(path, cases[k].json);
        snprintf(cmd, sizeof cmd, "block %s --sequences 4 --depth 4 --verifiers kseq -o %s/a.csv "
                 "--engine-metrics %s", SHIPPED, dir, path);
        cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
        free(out);
        snprintf(path, sizeof path, "%s/a.csv", dir);
        char *text = slurp(path), *save = NULL, *h = strtok_r(text, "\n", &save),
             *r = strtok_r(NULL, "\n", &save), *head[64], *f[64];
        cr_assert(r && !strtok_r(NULL, "\n", &save), "one row expected");
        size_t nh = split(h, head, 64);
        cr_assert_eq(split(r, f, 64), nh);
        cr_expect_str_eq(f[column(head, nh, "engine_role")], "same;best");
        cr_expect_str_eq(f[column(head, nh, "engine")], "sglang");
        cr_expect(fabs(strtod(f[column(head, nh, "engine_mean_acceptance_length")], NULL) - cases[k].mal) < 1e-12);
        cr_expect_str_eq(f[column(head, nh, "engine_mean_acceptance_length_stderr")], "");
        cr_expect_str_eq(f[column(head, nh, "engine_steps")], "");
        cr_expect_str_eq(f[column(head, nh, "engine_gap_stderr")], f[column(head, nh, "stderr")]);
        cr_expect_str_eq(f[column(head, nh, "engine_per_position_acceptance_rate")], "");
        free(text);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        free(test_shell_ok(cmd));
    }
}

/* The LaTeX output with the engine's table compiles (engine names such as
 * rejection_sampler escaped); pdflatex is one of make deps' packages. */
Test(block_engine, latex_table_compiles, .timeout = 120)
{
    char dir[] = "/tmp/mdsd-engine-XXXXXX", path[256], cmd[1024], *out;
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/e.json", dir);
    write_file(path, "{\"engine\":\"vllm\",\"verifier\":\"rejection_sampler\",\"sequences\":1,\"depth\":4,"
                     "\"mean_acceptance_length\":2.31,\"steps\":100,\"label\":\"50% of_all {x}\"}");
    snprintf(cmd, sizeof cmd, "block %s --depth 4 --latex %s/t.tex --engine-metrics %s", SHIPPED, dir, path);
    cr_assert_eq(test_run_mdsd(cmd, 1, &out), 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/t.tex", dir);
    char *tex = slurp(path);
    cr_expect(strstr(tex, "vllm & rejection\\_sampler = sd & live & 2.3100 ("), "%s", tex);
    free(tex);
    snprintf(cmd, sizeof cmd, "cd %s && printf '\\\\documentclass{article}\\\\usepackage{booktabs,graphicx}\\\\begin{document}"
             "\\\\input{t.tex}\\\\end{document}\\n' > doc.tex && pdflatex -interaction=nonstopmode "
             "-halt-on-error doc.tex", dir);
    free(test_shell_ok(cmd));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}
