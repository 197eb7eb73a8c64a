/* blockengine.c - an engine's speculative-decoding counters beside the
 * block job's estimates (blockengine.h; the file's keys: data/README.md,
 * "Engine counters"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockengine.h"
#include "csv.h"
#include "jsonread.h"
#include "report.h"

/* Engine verifier names and the toolkit verifier each one is. vLLM's
 * RejectionSampler is Leviathan et al.'s speculative sampling of one draft
 * chain (arXiv 2211.17192, cited in its source): the toolkit's sd. No SGLang
 * name is mapped: give the toolkit's name of the verifier the setup runs. */
static const struct {
    const char *engine, *name, *toolkit;
} aliases[] = {
    {"vllm", "rejection_sampler", "sd"},
};

static const char *const engines[] = {"vllm", "sglang", "other"};

static const char *const known_keys[] = {
    "engine", "verifier", "sequences", "widths", "depth", "mean_acceptance_length",
    "accept_rate", "num_draft_tokens", "accept_rate_formula", "per_position_acceptance_rate",
    "steps", "label"};

static int bad(const mdsd_engine_metrics *m, mdsd_err *err, const char *key, const char *fmt,
               double value)
{
    char why[256];
    snprintf(why, sizeof why, fmt, value);
    return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"%s\": %s", m->path, key, why);
}

static int want_kind(const mdsd_engine_metrics *m, const mdsd_jv *v, const char *key,
                     mdsd_jv_kind kind, const char *what, mdsd_err *err)
{
    if (v && v->kind == kind)
        return MDSD_OK;
    return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"%s\" is %s (line %zu), not %s", m->path, key,
                     mdsd_jv_kind_name(v), v ? v->line : 0, what);
}

/* An integer in [lo, hi] written as one (no fraction, no exponent). */
static int want_size(const mdsd_engine_metrics *m, const mdsd_jv *v, const char *key, double lo,
                     double hi, unsigned long long *out, mdsd_err *err)
{
    int rc = want_kind(m, v, key, MDSD_JV_NUMBER, "a number", err);
    if (rc)
        return rc;
    if (!v->integral || v->num < lo || v->num > hi) {
        char fmt[160];
        snprintf(fmt, sizeof fmt, "%%.17g is not an integer in [%.0f, %.0f]", lo, hi);
        return bad(m, err, key, fmt, v->num);
    }
    *out = (unsigned long long)v->num;
    return MDSD_OK;
}

static int want_string(const mdsd_engine_metrics *m, const mdsd_jv *v, const char *key, char *out,
                       size_t size, mdsd_err *err)
{
    int rc = want_kind(m, v, key, MDSD_JV_STRING, "a string", err);
    for (const char *c = rc ? "" : v->str; *c; c++)
        if ((unsigned char)*c < 0x20) /* it is printed on a line of the tables */
            return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"%s\": a control character (0x%02x) in "
                             "the string", m->path, key, (unsigned)(unsigned char)*c);
    if (rc == MDSD_OK && strlen(v->str) >= size)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: key \"%s\": a string of more than %zu bytes",
                       m->path, key, size - 1);
    if (rc == MDSD_OK)
        snprintf(out, size, "%s", v->str);
    return rc;
}

/* The verifier: the engine's alias, or a toolkit name. */
static int read_verifier(mdsd_engine_metrics *m, const mdsd_jv *doc, mdsd_err *err)
{
    int rc = want_string(m, mdsd_jv_get(doc, "verifier"), "verifier", m->verifier_given,
                         sizeof m->verifier_given, err);
    if (rc)
        return rc;
    const char *name = m->verifier_given;
    for (size_t k = 0; k < sizeof aliases / sizeof aliases[0]; k++)
        if (!strcmp(aliases[k].engine, m->engine) && !strcmp(aliases[k].name, name))
            name = aliases[k].toolkit;
    mdsd_err e;
    if (mdsd_block_case_parse(name, &m->c, &e) == MDSD_OK)
        return MDSD_OK;
    return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"verifier\": \"%s\" is neither a toolkit verifier "
                     "(%.300s) nor an engine name mapped to one (vllm: rejection_sampler = sd)",
                     m->path, m->verifier_given, e.msg);
}

static int read_policy(mdsd_engine_metrics *m, const mdsd_jv *doc, mdsd_err *err)
{
    const mdsd_jv *seq = mdsd_jv_get(doc, "sequences"), *widths = mdsd_jv_get(doc, "widths");
    unsigned long long L = 0, K = 0;
    int rc = want_size(m, mdsd_jv_get(doc, "depth"), "depth", 1, MDSD_BLOCK_MAX_DEPTH, &L, err);
    if (rc)
        return rc;
    m->c.pol.depth = (size_t)L;
    if (!seq == !widths)
        return mdsd_fail(err, MDSD_EFORMAT, "%s: give one of \"sequences\" (K draft sequences: a "
                         "seq dump) and \"widths\" (a tree dump's W1..WL)%s", m->path,
                         seq ? ", not both" : "");
    if (seq) {
        if ((rc = want_size(m, seq, "sequences", 1, 1e6, &K, err)))
            return rc;
        m->c.pol.kind = MDSD_POLICY_SEQ;
        m->c.pol.sequences = (size_t)K;
        return MDSD_OK;
    }
    if ((rc = want_kind(m, widths, "widths", MDSD_JV_ARRAY, "an array", err)))
        return rc;
    if (widths->n != L)
        return bad(m, err, "widths", "%.0f widths, not one per depth (\"depth\")", (double)widths->n);
    m->c.pol.kind = MDSD_POLICY_TREE;
    for (size_t d = 0; d < L; d++) {
        char key[32];
        snprintf(key, sizeof key, "widths[%zu]", d);
        if ((rc = want_size(m, &widths->items[d], key, 1, 1e6, &K, err)))
            return rc;
        m->c.pol.width[d] = (size_t)K;
    }
    return MDSD_OK;
}

/* SGLang's accept rate into E[tau]: "tokens" (accepted tokens, the bonus
 * included, over num_draft_tokens per step: E[tau] / N) or "drafts"
 * (accepted drafts over N - 1 per step: (E[tau] - 1) / (N - 1)). */
static int read_accept_rate(mdsd_engine_metrics *m, const mdsd_jv *doc, mdsd_err *err)
{
    const mdsd_jv *ar = mdsd_jv_get(doc, "accept_rate");
    unsigned long long N = 0;
    char formula[16];
    int rc = want_kind(m, ar, "accept_rate", MDSD_JV_NUMBER, "a number", err);
    if (rc == MDSD_OK)
        rc = want_size(m, mdsd_jv_get(doc, "num_draft_tokens"), "num_draft_tokens", 2, 1e6, &N, err);
    if (rc == MDSD_OK)
        rc = want_string(m, mdsd_jv_get(doc, "accept_rate_formula"), "accept_rate_formula", formula,
                         sizeof formula, err);
    if (rc)
        return rc;
    if (!(ar->num >= 0.0 && ar->num <= 1.0))
        return bad(m, err, "accept_rate", "%.17g is not a rate in [0, 1]", ar->num);
    if (!strcmp(formula, "tokens"))
        m->mal = ar->num * (double)N;
    else if (!strcmp(formula, "drafts"))
        m->mal = 1.0 + ar->num * (double)(N - 1);
    else
        return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"accept_rate_formula\": \"%s\" is neither "
                         "\"tokens\" (E[tau] / num_draft_tokens) nor \"drafts\" ((E[tau] - 1) / "
                         "(num_draft_tokens - 1))", m->path, formula);
    if (!(m->mal >= 1.0))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"accept_rate\": %.17g x num_draft_tokens %llu "
                         "is E[tau] = %.17g < 1 (a step emits at least one token): not the "
                         "\"tokens\" formula", m->path, ar->num, N, m->mal);
    return MDSD_OK;
}

static int read_rates(mdsd_engine_metrics *m, const mdsd_jv *r, mdsd_err *err)
{
    size_t L = m->c.pol.depth;
    int rc = want_kind(m, r, "per_position_acceptance_rate", MDSD_JV_ARRAY, "an array", err);
    if (rc)
        return rc;
    if (r->n != L)
        return bad(m, err, "per_position_acceptance_rate", "%.0f rates, not one per position 1..depth",
                   (double)r->n);
    double sum = 0.0;
    for (size_t d = 1; d <= L; d++) {
        char key[64];
        snprintf(key, sizeof key, "per_position_acceptance_rate[%zu]", d - 1);
        const mdsd_jv *x = &r->items[d - 1];
        if ((rc = want_kind(m, x, key, MDSD_JV_NUMBER, "a number", err)))
            return rc;
        if (!(x->num >= 0.0 && x->num <= 1.0))
            return bad(m, err, key, "%.17g is not a rate in [0, 1]", x->num);
        /* vLLM's rate at d is P(at least d accepted): it cannot rise with d;
         * a rising list is the conditional rates, which are not these */
        if (d > 1 && x->num > m->rate[d - 1])
            return mdsd_fail(err, MDSD_EFORMAT, "%s: key \"%s\": %.17g > %.17g at the position "
                             "before: vLLM's per-position rates (accepted at d / drafts) never rise "
                             "(conditional rates P(d | d-1) are not these)", m->path, key, x->num,
                             m->rate[d - 1]);
        m->rate[d] = x->num;
        sum += x->num;
    }
    m->has_rates = 1;
    /* 1 + sum of the rates is the mean acceptance length, exactly in vLLM's
     * counters; the tolerance is rounding of printed figures (2 decimals) */
    if (fabs(1.0 + sum - m->mal) > 5e-3 * (double)(L + 1))
        return mdsd_fail(err, MDSD_EFORMAT, "%s: 1 + the sum of \"per_position_acceptance_rate\" is "
                         "%.9g, the mean acceptance length %.9g: they differ by more than rounding "
                         "(5e-3 (depth + 1))", m->path, 1.0 + sum, m->mal);
    return MDSD_OK;
}

/* Standard errors from `steps` i.i.d. steps: tau - 1 = accepted drafts of a
 * step, P(tau >= d + 1) = rate_d, so E[tau^2] = 1 + sum (2d + 1) rate_d;
 * without the rates Var(tau) <= (E[tau] - 1)(L + 1 - E[tau]) (Bhatia-Davis,
 * tau in [1, L + 1]), the larger s.e. */
static void standard_errors(mdsd_engine_metrics *m)
{
    size_t L = m->c.pol.depth;
    m->mal_se = NAN;
    for (size_t d = 0; d <= L; d++)
        m->rate_se[d] = NAN;
    if (!m->steps)
        return;
    double N = (double)m->steps, var;
    if (m->has_rates) {
        double e2 = 1.0;
        for (size_t d = 1; d <= L; d++) {
            e2 += (2.0 * (double)d + 1.0) * m->rate[d];
            m->rate_se[d] = sqrt(m->rate[d] * (1.0 - m->rate[d]) / N);
        }
        var = e2 - m->mal * m->mal;
    } else {
        var = (m->mal - 1.0) * ((double)L + 1.0 - m->mal);
    }
    m->mal_se = sqrt((var > 0.0 ? var : 0.0) / N);
}

int mdsd_engine_metrics_read(const char *path, mdsd_engine_metrics *m, mdsd_err *err)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    mdsd_jv *doc;
    int rc = mdsd_json_read_file(path, MDSD_ENGINE_MAX_BYTES, &doc, err);
    if (rc)
        return rc;
    if (doc->kind != MDSD_JV_OBJECT)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: the file holds %s, not a JSON object", path,
                       mdsd_jv_kind_name(doc));
    for (size_t i = 0; rc == MDSD_OK && i < doc->n; i++) {
        size_t k = 0;
        while (k < sizeof known_keys / sizeof known_keys[0] && strcmp(known_keys[k], doc->keys[i]))
            k++;
        if (k == sizeof known_keys / sizeof known_keys[0])
            rc = mdsd_fail(err, MDSD_EFORMAT, "%s: unknown key \"%.200s\" (line %zu; the keys: "
                           "data/README.md, 'Engine counters')", path, doc->keys[i], doc->items[i].line);
    }
    if (rc == MDSD_OK)
        rc = want_string(m, mdsd_jv_get(doc, "engine"), "engine", m->engine, sizeof m->engine, err);
    if (rc == MDSD_OK && strcmp(m->engine, engines[0]) && strcmp(m->engine, engines[1]) &&
        strcmp(m->engine, engines[2]))
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: key \"engine\": \"%s\" is none of vllm, sglang, other",
                       path, m->engine);
    if (rc == MDSD_OK)
        rc = read_verifier(m, doc, err);
    if (rc == MDSD_OK)
        rc = read_policy(m, doc, err);
    const mdsd_jv *mal = mdsd_jv_get(doc, "mean_acceptance_length"), *ar = mdsd_jv_get(doc, "accept_rate");
    if (rc == MDSD_OK && !mal == !ar)
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: give one of \"mean_acceptance_length\" and "
                       "\"accept_rate\" (with \"num_draft_tokens\", \"accept_rate_formula\")%s", path,
                       mal ? ", not both" : "");
    if (rc == MDSD_OK && !ar && (mdsd_jv_get(doc, "num_draft_tokens") ||
                                 mdsd_jv_get(doc, "accept_rate_formula")))
        rc = mdsd_fail(err, MDSD_EFORMAT, "%s: \"num_draft_tokens\" and \"accept_rate_formula\" go "
                       "with \"accept_rate\" only", path);
    if (rc == MDSD_OK && mal) {
        rc = want_kind(m, mal, "mean_acceptance_length", MDSD_JV_NUMBER, "a number", err);
        m->mal = rc ? 0.0 : mal->num;
    } else if (rc == MDSD_OK) {
        rc = read_accept_rate(m, doc, err);
    }
    double L = (double)m->c.pol.depth;
    if (rc == MDSD_OK && !(m->mal >= 1.0 && m->mal <= L + 1.0))
        rc = bad(m, err, mal ? "mean_acceptance_length" : "accept_rate", "E[tau] = %.17g is outside "
                 "[1, depth + 1] (a step emits 1 to depth + 1 tokens, the bonus token included)", m->mal);
    const mdsd_jv *rates = mdsd_jv_get(doc, "per_position_acceptance_rate");
    if (rc == MDSD_OK && rates)
        rc = read_rates(m, rates, err);
    const mdsd_jv *steps = mdsd_jv_get(doc, "steps"), *label = mdsd_jv_get(doc, "label");
    if (rc == MDSD_OK && steps)
        rc = want_size(m, steps, "steps", 1, 9007199254740992.0, &m->steps, err);
    if (rc == MDSD_OK && label)
        rc = want_string(m, label, "label", m->label, sizeof m->label, err);
    if (rc == MDSD_OK)
        standard_errors(m);
    mdsd_jv_free(doc);
    return rc;
}

static int same_policy(const mdsd_policy *a, const mdsd_policy *b)
{
    if (a->kind != b->kind || a->depth != b->depth)
        return 0;
    if (a->kind == MDSD_POLICY_SEQ)
        return a->sequences == b->sequences;
    for (size_t d = 0; d < a->depth; d++)
        if (a->width[d] != b->width[d])
            return 0;
    return 1;
}

static const char *describe(const mdsd_policy *pol, char *buf, size_t size)
{
    if (pol->kind == MDSD_POLICY_SEQ)
        snprintf(buf, size, "seq K=%zu L=%zu", pol->sequences, pol->depth);
    else
        mdsd_policy_describe(pol, buf, size);
    return buf;
}

int mdsd_engine_check_dump(const mdsd_engine_metrics *m, const mdsd_tree_dump *t,
                           const mdsd_block_case *cases, size_t nc, mdsd_err *err)
{
    char want[160], have[160];
    describe(&m->c.pol, want, sizeof want);
    describe(&t->pol, have, sizeof have);
    mdsd_policy pol = m->c.pol;
    if (pol.kind == MDSD_POLICY_TREE)
        pol.scheme = t->pol.scheme;
    int fits = pol.kind == t->pol.kind && pol.depth <= t->pol.depth &&
               (pol.kind == MDSD_POLICY_SEQ ? pol.sequences <= t->pol.sequences : 1);
    for (size_t d = 0; fits && pol.kind == MDSD_POLICY_TREE && d < pol.depth; d++)
        fits = pol.width[d] == t->pol.width[d];
    if (!fits)
        return mdsd_fail(err, MDSD_EINVAL, "%s: the engine's policy %s (\"sequences\"/\"widths\", "
                         "\"depth\") is not one that dump %s (%s) answers", m->path, want, t->path, have);
    mdsd_block_case mine = m->c;
    mine.pol = pol;
    mdsd_err why;
    if (mdsd_block_case_check(&mine, &why) == MDSD_EUNSUPPORTED)
        return mdsd_fail(err, MDSD_EINVAL, "%s: the engine's verifier %s does not run at its policy "
                         "%s: %.300s", m->path, mdsd_block_case_name(&m->c), want, why.msg);
    for (size_t c = 0; c < nc; c++)
        if (cases[c].v == m->c.v && cases[c].block == m->c.block && same_policy(&cases[c].pol, &pol))
            return MDSD_OK;
    return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_VERIFIERS,
                            "%s: the job evaluates no case of the engine's verifier %s "
                            "at %s on %s: add %s to `verifiers`, and its K and L to `sequences` and "
                            "`depths`", m->path, mdsd_block_case_name(&m->c), want, t->path,
                            mdsd_block_case_name(&m->c));
}

int mdsd_engine_compare(const mdsd_engine_metrics *m, const mdsd_block_row *rows, size_t n,
                        mdsd_engine_cmp *cmp, mdsd_err *err)
{
    cmp->m = m, cmp->n = n;
    cmp->role = calloc(n ? n : 1, 1);
    if (!cmp->role)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    /* rows are grouped by dump (job order); in each group, the engine's case
     * and the largest E[tau] at its policy (the first of equals) */
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        for (hi = lo; hi < n && !strcmp(rows[hi].dump, rows[lo].dump); hi++)
            ;
        size_t best = n;
        for (size_t i = lo; i < hi; i++) {
            mdsd_policy pol = m->c.pol;
            pol.scheme = rows[i].c.pol.scheme;
            if (!same_policy(&rows[i].c.pol, &pol))
                continue;
            if (rows[i].c.v == m->c.v && rows[i].c.block == m->c.block)
                cmp->role[i] |= 1;
            if (best == n || rows[i].r.tau > rows[best].r.tau)
                best = i;
        }
        if (best < n)
            cmp->role[best] |= 2;
    }
    return MDSD_OK;
}

void mdsd_engine_cmp_free(mdsd_engine_cmp *cmp)
{
    free(cmp->role);
    cmp->role = NULL;
}

/* values[1..L] as "v1;v2;..." (%.9g; NAN as empty). */
static void list(FILE *f, const double *v, size_t L)
{
    for (size_t d = 1; d <= L; d++) {
        if (d > 1)
            fputc(';', f);
        if (isfinite(v[d]))
            fprintf(f, "%.9g", v[d]);
    }
}

void mdsd_engine_csv_header(FILE *f)
{
    fprintf(f, ",engine,engine_verifier,engine_role,engine_steps,engine_mean_acceptance_length,"
               "engine_mean_acceptance_length_stderr,engine_gap,engine_gap_stderr,"
               "engine_per_position_acceptance_rate,engine_per_position_gap,"
               "engine_per_position_gap_stderr");
}

static const char *role_name(unsigned char role)
{
    return role == 3 ? "same;best" : role == 1 ? "same" : role == 2 ? "best" : "";
}

/* The gap toolkit - engine has the two estimates' errors in quadrature
 * (independent data); without steps only the toolkit's. */
static double gap_se(double toolkit_se, double engine_se)
{
    return isfinite(engine_se) ? hypot(toolkit_se, engine_se) : toolkit_se;
}

void mdsd_engine_csv_fields(FILE *f, const mdsd_engine_cmp *cmp, size_t i, const mdsd_block_row *row)
{
    const mdsd_engine_metrics *m = cmp->m;
    if (!cmp->role[i]) {
        fprintf(f, ",,,,,,,,,,,");
        return;
    }
    size_t L = m->c.pol.depth;
    fputc(',', f);
    mdsd_csv_write_field(f, m->engine);
    fputc(',', f);
    mdsd_csv_write_field(f, m->verifier_given);
    fprintf(f, ",%s,", role_name(cmp->role[i]));
    if (m->steps)
        fprintf(f, "%llu", m->steps);
    fprintf(f, ",%.17g,", m->mal);
    if (isfinite(m->mal_se))
        fprintf(f, "%.17g", m->mal_se);
    fprintf(f, ",%.17g,%.17g,", row->r.tau - m->mal, gap_se(row->r.se, m->mal_se));
    double gap[MDSD_BLOCK_MAX_DEPTH + 1], gse[MDSD_BLOCK_MAX_DEPTH + 1];
    for (size_t d = 1; d <= L; d++) {
        gap[d] = m->has_rates ? row->r.reach[d] - m->rate[d] : NAN;
        gse[d] = m->has_rates ? gap_se(row->r.reach_se[d], m->rate_se[d]) : NAN;
    }
    if (m->has_rates)
        list(f, m->rate, L);
    fputc(',', f);
    if (m->has_rates)
        list(f, gap, L);
    fputc(',', f);
    if (m->has_rates)
        list(f, gse, L);
}

/* One line of the table: who, verifier, contexts, E[tau] (s.e.), gap, rates. */
static void table_line(FILE *f, int latex, const char *dump, const char *who, const char *verifier,
                       const char *contexts, double tau, double se, const double *gap,
                       const double *rates, size_t L)
{
    char s_se[64] = "n/a", s_gap[96] = "", sep = latex ? '&' : '|';
    if (isfinite(se))
        snprintf(s_se, sizeof s_se, "%.4f", se);
    if (gap)
        snprintf(s_gap, sizeof s_gap, "%+.4f (%.4f)", gap[0], gap[1]);
    if (latex) { /* names such as rejection_sampler escaped (report.h) */
        mdsd_report_latex_escape(f, who);
        fprintf(f, " & ");
        mdsd_report_latex_escape(f, verifier);
        fprintf(f, " & %s & %.4f (%s) & %s & ", contexts, tau, s_se, s_gap);
    } else
        fprintf(f, "| %s | %s | %s | %s | %.4f (%s) | %s | ", dump, who, verifier, contexts, tau,
                s_se, s_gap);
    for (size_t d = 1; rates && d <= L; d++)
        fprintf(f, d > 1 ? " %.3f" : "%.3f", rates[d]);
    if (!rates)
        fprintf(f, "n/a");
    fprintf(f, latex ? " \\\\\n" : " %c\n", sep);
}

void mdsd_engine_write_table(FILE *f, int latex, const mdsd_engine_cmp *cmp,
                             const mdsd_block_row *rows, size_t n)
{
    const mdsd_engine_metrics *m = cmp->m;
    char pol[160], verifier[160];
    size_t L = m->c.pol.depth;
    describe(&m->c.pol, pol, sizeof pol);
    if (strcmp(m->verifier_given, mdsd_block_case_name(&m->c)))
        snprintf(verifier, sizeof verifier, "%s = %s", m->verifier_given, mdsd_block_case_name(&m->c));
    else
        snprintf(verifier, sizeof verifier, "%s", m->verifier_given);
    char steps[64] = "steps not given: no engine s.e.";
    if (m->steps)
        snprintf(steps, sizeof steps, "%llu steps", m->steps);
    if (latex) { /* the table job's float (report.h); the file name and label stay out of it */
        char *cap = NULL;
        size_t caplen = 0;
        FILE *c = open_memstream(&cap, &caplen);
        if (c) {
            fputs("Engine counters (", c);
            mdsd_report_latex_escape(c, m->engine);
            fputs("), ", c);
            mdsd_report_latex_escape(c, pol);
            fprintf(c, ", %s; gap = toolkit $-$ engine (s.e.).", steps);
            if (fclose(c))
                cap = (free(cap), NULL);
        }
        fputc('\n', f);
        mdsd_report_latex_table_open(f, cap ? cap : "Engine counters.", NULL, "-block-engine", "lllrrl");
        free(cap);
    } else
        fprintf(f, "\nEngine counters: %s (%s%s%s), %s, %s. Gap = toolkit - engine (s.e.).\n\n",
                m->path, m->engine, m->label[0] ? ", " : "", m->label, pol, steps);
    if (latex)
        fprintf(f, "source & verifier & contexts & mean acceptance length (s.e.) & toolkit $-$ "
                   "engine (s.e.) & per-position acceptance rate \\\\\n\\midrule\n");
    else
        fprintf(f, "| dump | source | verifier | contexts | mean acceptance length (s.e.) | "
                   "toolkit - engine (s.e.) | per-position acceptance rate |\n"
                   "|---|---|---|---|---:|---:|---|\n");
    table_line(f, latex, "", m->engine, verifier, "live", m->mal, m->mal_se, NULL,
               m->has_rates ? m->rate : NULL, L);
    for (size_t i = 0; i < n; i++)
        for (int bit = 1; bit <= 2; bit++) {
            if (!(cmp->role[i] & bit) || (bit == 2 && (cmp->role[i] & 1)))
                continue;
            double g[2] = {rows[i].r.tau - m->mal, gap_se(rows[i].r.se, m->mal_se)};
            const char *who = cmp->role[i] == 3 ? "toolkit, same (best)" : bit == 1 ? "toolkit, same"
                                                                                   : "toolkit, best";
            table_line(f, latex, rows[i].dump, who, mdsd_block_case_name(&rows[i].c),
                       rows[i].live ? "live" : "positions", rows[i].r.tau, rows[i].r.se, g,
                       rows[i].r.reach, L);
        }
    if (latex)
        mdsd_report_latex_table_close(f);
}
