/* blocktable.c - the block job's cases of a dump (verifiers x sequences x
 * depths) and its writers: the results CSV, Markdown and LaTeX (blockjob.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockengine.h"
#include "blockjob_impl.h"
#include "csv.h"
#include "outfile.h"
#include "parse.h"
#include "report.h"

/* "1,2,4" into out[*n] (each in [lo, hi]); a refused list is a usage error. */
static int parse_sizes(mdsd_block_job *j, const char *spec, const char *opt, size_t lo, size_t hi,
                       size_t *out, size_t *n, mdsd_err *err)
{
    double *v = NULL;
    size_t len = 0;
    mdsd_err e;
    if (mdsd_parse_vector(spec, opt, &v, &len, &e) != MDSD_OK) {
        j->usage = true;
        return mdsd_fail(err, MDSD_EINVAL, "%s", e.msg);
    }
    int bad = len < 1 || len > MDSD_BLOCK_MAX_DEPTH;
    for (size_t i = 0; !bad && i < len; i++) {
        bad = !(v[i] >= (double)lo && v[i] <= (double)hi && v[i] == floor(v[i]));
        out[i] = bad ? 0 : (size_t)v[i];
        for (size_t k = 0; !bad && k < i; k++)
            if (out[k] == out[i]) { /* its rows would appear twice */
                free(v);
                j->usage = true;
                return mdsd_fail(err, MDSD_EINVAL, "%s %s: %zu is given twice", opt, spec, out[i]);
            }
    }
    free(v);
    if (bad) {
        j->usage = true;
        return mdsd_fail(err, MDSD_EINVAL, "%s %s: give 1 to %d integers in [%zu, %zu]", opt, spec,
                         MDSD_BLOCK_MAX_DEPTH, lo, hi);
    }
    *n = len;
    return MDSD_OK;
}

/* The default verifiers of a dump's policy (n: drafts at the root). */
static size_t default_verifiers(const mdsd_policy *pol, mdsd_verifier_kind *out)
{
    size_t k = 0;
    mdsd_scheme_kind s = pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pol->scheme;
    if (s == MDSD_SCHEME_IID) {
        out[k++] = MDSD_VERIFIER_SD;
        out[k++] = MDSD_VERIFIER_RRS;
        out[k++] = MDSD_VERIFIER_KSEQ;
    } else if (s == MDSD_SCHEME_WOR) {
        out[k++] = MDSD_VERIFIER_RRSW;
    } else if (s == MDSD_SCHEME_GREEDY) {
        out[k++] = MDSD_VERIFIER_GREEDY;
    } else if (s == MDSD_SCHEME_HUB) {
        out[k++] = MDSD_VERIFIER_SPECHUB;
    }
    return k;
}

/* The dump's policy at K sequences (seq; ignored for trees) and depth Ld. */
static mdsd_policy case_policy(const mdsd_tree_dump *t, size_t K, size_t Ld)
{
    mdsd_policy pol = t->pol;
    pol.depth = Ld;
    if (pol.kind == MDSD_POLICY_SEQ)
        pol.sequences = K;
    return pol;
}

/* Whether the case's verifier runs on its policy (a token-level one: its
 * scheme at the root's n; seq nodes further down have fewer drafts, which
 * every iid verifier takes); if not, why (may be NULL). */
static bool case_applies(const mdsd_block_case *c, mdsd_err *why)
{
    mdsd_err e;
    if (mdsd_block_case_check(c, &e) != MDSD_EUNSUPPORTED)
        return true;
    if (why)
        *why = e;
    return false;
}

int mdsd_block_dump_cases(mdsd_block_job *j, const mdsd_block_setup *s, const mdsd_tree_dump *t,
                          mdsd_block_case *cases, size_t *ncases, mdsd_err *err)
{
    const mdsd_block_job_opts *o = &j->pub;
    size_t Ls[MDSD_BLOCK_MAX_DEPTH], nL = 0, Ks[MDSD_BLOCK_MAX_DEPTH], nK = 0;
    int rc = MDSD_OK;
    if (t->live && !s->n_verifiers && !o->depths && !o->sequences) {
        /* a live dump answers its own case only (mdsd_tree_dump_check_live) */
        cases[0] = (mdsd_block_case){t->live_verifier, t->pol, 0};
        *ncases = 1;
        return MDSD_OK;
    }
    if (o->depths) {
        if ((rc = parse_sizes(j, o->depths, "`depths`", 1, t->pol.depth, Ls, &nL, err)))
            return rc;
    } else {
        for (size_t d = 1; d <= t->pol.depth; d++)
            Ls[nL++] = d;
    }
    if (t->pol.kind == MDSD_POLICY_SEQ) {
        if (o->sequences) {
            if ((rc = parse_sizes(j, o->sequences, "`sequences`", 1, t->pol.sequences, Ks, &nK, err)))
                return rc;
        } else {
            for (size_t k = 1; k < t->pol.sequences; k *= 2)
                Ks[nK++] = k;
            Ks[nK++] = t->pol.sequences;
        }
    } else {
        if (o->sequences) {
            j->usage = true;
            return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_SEQUENCES,
                                    "`sequences` is for seq dumps; %s holds trees", t->path);
        }
        Ks[nK++] = 0;
    }
    mdsd_verifier_kind defaults[8];
    mdsd_block_case dv[8] = {{0}};
    const mdsd_block_case *vlist = s->verifiers;
    size_t nv = s->n_verifiers;
    if (!nv) {
        nv = default_verifiers(&t->pol, defaults);
        for (size_t k = 0; k < nv; k++)
            dv[k].v = defaults[k];
        vlist = dv;
    }
    size_t n = 0;
    for (size_t iv = 0; iv < nv; iv++)
        for (size_t ik = 0; ik < nK; ik++)
            for (size_t il = 0; il < nL; il++) {
                cases[n] = vlist[iv];
                cases[n].pol = case_policy(t, Ks[ik], Ls[il]);
                if (case_applies(&cases[n], NULL))
                    n++;
            }
    /* The defaults run where they apply. A listed verifier is never dropped
     * without a word: each policy it cannot run on is named, as mdsd table's
     * "skipping" note names each n (nothing left at all: refused below). */
    for (size_t iv = 0; n > 0 && s->n_verifiers && j->note && iv < nv; iv++)
        for (size_t ik = 0; ik < nK; ik++) {
            mdsd_err why = {0, "", MDSD_OPTION_NONE};
            for (size_t il = 0; il < nL && !why.msg[0]; il++) {
                mdsd_block_case c = {vlist[iv].v, case_policy(t, Ks[ik], Ls[il]), vlist[iv].block};
                case_applies(&c, &why);
            }
            if (!why.msg[0])
                continue;
            char msg[5200], desc[128];
            mdsd_policy pol = case_policy(t, Ks[ik], t->pol.depth);
            mdsd_policy_describe(&pol, desc, sizeof desc);
            snprintf(msg, sizeof msg, "%s: skipping verifier %s at %s: %.511s", t->path,
                     mdsd_block_case_name(&vlist[iv]), desc, why.msg);
            j->note(msg, j->note_ctx);
        }
    *ncases = n;
    if (n == 0) { /* the selection matches nothing here: not an empty table */
        j->usage = true;
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_SEQUENCES,
                                "%s: no case left: the verifiers %s apply to none of its "
                                "policies with `sequences %s` `depths %s`", t->path,
                                o->verifiers ? o->verifiers : "(default)", o->sequences ? o->sequences : "(all)",
                                o->depths ? o->depths : "(all)");
    }
    return MDSD_OK;
}

void mdsd_block_options_text(const mdsd_block_job_opts *o, char *buf, size_t size)
{
    snprintf(buf, size, "verifiers=%s sequences=%s depth=%s is-top=%zu",
             o->verifiers ? o->verifiers : "default", o->sequences ? o->sequences : "default",
             o->depths ? o->depths : "default", o->is_top);
}

static void widths_text(const mdsd_policy *pol, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t d = 0; pol->kind == MDSD_POLICY_TREE && d < pol->depth && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, d ? ";%zu" : "%zu", pol->width[d]);
}

/* values[1..L] as "v1;v2;..." (%.9g) into buf. */
static void depth_list(const double *values, size_t L, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t d = 1; d <= L && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, d > 1 ? ";%.9g" : "%.9g", values[d]);
}

/* mean_acceptance_length and per_position_acceptance_rate are vLLM's names
 * for the same quantities (MATH.md §5.2): its "mean acceptance length"
 * 1 + accepted / drafts is E[tau] (its s.e. is stderr), and its
 * "per-position acceptance rate" at position d, accepted at d / drafts, is
 * the unconditional reach_d = P(at least d accepted), not per_depth; the
 * last column its standard errors (a mean over trees, clustered). */
static void write_csv(FILE *f, const mdsd_block_row *rows, size_t n, const double *cost, size_t ncost,
                      const mdsd_engine_cmp *eng)
{
    fprintf(f, "dump,verifier,policy,scheme,sequences,widths,depth,tree_size,trees,samples,"
               "block_efficiency,stderr,per_depth,cost,speedup,per_depth_stderr,contexts,"
               "mean_acceptance_length,per_position_acceptance_rate,"
               "per_position_acceptance_rate_stderr");
    if (eng)
        mdsd_engine_csv_header(f);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const mdsd_policy *pol = &rows[i].c.pol;
        char w[256], rates[1024], rates_se[1024], reach[1024], reach_se[1024];
        widths_text(pol, w, sizeof w);
        depth_list(rows[i].r.rate, pol->depth, rates, sizeof rates);
        depth_list(rows[i].r.rate_se, pol->depth, rates_se, sizeof rates_se);
        depth_list(rows[i].r.reach, pol->depth, reach, sizeof reach);
        depth_list(rows[i].r.reach_se, pol->depth, reach_se, sizeof reach_se);
        for (size_t k = 0; k < ncost; k++) {
            mdsd_csv_write_field(f, rows[i].dump);
            fprintf(f, ",%s,%s,%s,", mdsd_block_case_name(&rows[i].c),
                    pol->kind == MDSD_POLICY_SEQ ? "seq" : "tree",
                    mdsd_scheme_name(pol->kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pol->scheme));
            if (pol->kind == MDSD_POLICY_SEQ)
                fprintf(f, "%zu", pol->sequences);
            fprintf(f, ",%s,%zu,%.17g,%zu,%zu,%.17g,%.17g,%s,%.17g,%.17g,%s,%s,%.17g,%s,%s", w,
                    pol->depth, mdsd_policy_size(pol), rows[i].r.trees, rows[i].r.samples,
                    rows[i].r.tau, rows[i].r.se, rates, cost[k],
                    rows[i].r.tau / (1.0 + cost[k] * (double)pol->depth), rates_se,
                    rows[i].live ? "live" : "positions", rows[i].r.tau, reach, reach_se);
            if (eng)
                mdsd_engine_csv_fields(f, eng, i, &rows[i]);
            fputc('\n', f);
        }
    }
}

/* One column per fact, so that the LaTeX table fits a column of a two-column
 * paper: E[tau] (s.e.) once (vLLM's "mean acceptance length" and the speed-up
 * at cost 0 are the same number: the CSV keeps both names), the reaches
 * P(at least d accepted) (vLLM's "per-position acceptance rates"; the
 * conditional per-depth rates are the CSV's per_depth), and the speed-up at
 * every non-zero cost. LaTeX shows the last reach r_L only (r_d does not
 * depend on L, so with every depth drawn the list repeats the rows above, and
 * the list is the widest cell); Markdown, for reading, keeps it. The dump goes to
 * the caption when there is one, else a column. The LaTeX float is the table
 * job's (report.h): booktabs, caption, label, shrunk to the line width only
 * when still wider; E[tau] and its s.e. to 3 places there, as the speed-ups
 * (the CSV has every digit). */
static bool one_dump(const mdsd_block_row *rows, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(rows[i].dump, rows[0].dump))
            return false;
    return true;
}

static void block_caption(FILE *f, int latex, const mdsd_block_row *rows, size_t n, bool dump_col,
                          size_t speedups)
{
    if (latex) {
        fputs("Block efficiency", f);
        if (!dump_col && n) {
            fputs(" of \\texttt{", f);
            mdsd_report_latex_escape(f, rows[0].dump);
            fputs("}", f);
        }
        fputs(". Policy $K$: $K$ draft sequences; $E[\\tau]$: tokens per target call (vLLM's mean "
              "acceptance length), mean (s.e.) over trees; $r_L = P(\\geq L$ accepted$)$: vLLM's per-position acceptance rate at "
              "position $L$ (every position in the CSV and the Markdown table)", f);
        if (speedups)
            fputs("; $S_c = E[\\tau] / (1 + cL)$: speed-up at draft cost $c$ per token", f);
        fputs(".", f);
    } else {
        fputs("**Block efficiency", f);
        if (!dump_col && n)
            fprintf(f, " of %s", rows[0].dump);
        fputs("** (E[tau]: tokens per target call, vLLM's mean acceptance length, mean (s.e.) over "
              "trees; reach: P(at least d accepted), d = 1..L, vLLM's per-position acceptance rates", f);
        if (speedups)
            fputs("; S(c) = E[tau] / (1 + c L): speed-up at draft cost c per token", f);
        fputs(")\n\n", f);
    }
}

void mdsd_block_write_table(FILE *f, int latex, const mdsd_block_row *rows, size_t n,
                            const double *cost, size_t ncost, const mdsd_engine_cmp *eng)
{
    bool dump_col = !one_dump(rows, n);
    size_t speedups = 0;
    for (size_t k = 0; k < ncost; k++)
        speedups += cost[k] != 0.0;
    if (latex) {
        char *cap = NULL, spec[64];
        size_t caplen = 0;
        FILE *m = open_memstream(&cap, &caplen);
        if (m) {
            block_caption(m, 1, rows, n, dump_col, speedups);
            if (fclose(m))
                cap = (free(cap), NULL);
        }
        snprintf(spec, sizeof spec, "@{}%sllrrr", dump_col ? "l" : "");
        for (size_t k = 0; k < speedups && strlen(spec) + 4 < sizeof spec; k++)
            strcat(spec, "r");
        strcat(spec, "@{}");
        mdsd_report_latex_preamble(f);
        mdsd_report_latex_table_open(f, cap ? cap : "Block efficiency.", NULL, "-block", spec);
        free(cap);
        fputs(dump_col ? "dump & verifier" : "verifier", f);
        fputs(" & policy & $L$ & $E[\\tau]$ (s.e.) & $r_L$", f);
        for (size_t k = 0; k < ncost; k++)
            if (cost[k] != 0.0)
                fprintf(f, " & $S_{%g}$", cost[k]);
        fprintf(f, " \\\\\n\\midrule\n");
    } else {
        block_caption(f, 0, rows, n, dump_col, speedups);
        fprintf(f, "|%s verifier | policy | L | E[tau] (s.e.) | reach |", dump_col ? " dump |" : "");
        for (size_t k = 0; k < ncost; k++)
            if (cost[k] != 0.0)
                fprintf(f, " S(%g) |", cost[k]);
        fprintf(f, "\n|%s---|---|---:|---:|---|", dump_col ? "---|" : "");
        for (size_t k = 0; k < speedups; k++)
            fprintf(f, "---:|");
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < n; i++) {
        const mdsd_policy *pol = &rows[i].c.pol;
        char desc[256];
        if (pol->kind == MDSD_POLICY_SEQ) /* LaTeX: "K=4", the caption says what K is */
            snprintf(desc, sizeof desc, "%sK=%zu", latex ? "" : "seq ", pol->sequences);
        else
            mdsd_policy_describe(pol, desc, sizeof desc);
        if (rows[i].live)
            strncat(desc, " live", sizeof desc - strlen(desc) - 1);
        if (latex) {
            if (dump_col) {
                fputs("\\texttt{", f);
                mdsd_report_latex_escape(f, rows[i].dump);
                fputs("} & ", f);
            }
            mdsd_report_latex_escape(f, mdsd_block_case_name(&rows[i].c));
            fputs(" & ", f);
            mdsd_report_latex_escape(f, desc);
            fprintf(f, " & %zu & %.3f (%.3f) & %.3f", pol->depth, rows[i].r.tau, rows[i].r.se,
                    rows[i].r.reach[pol->depth]);
        } else {
            fputs("| ", f);
            if (dump_col)
                fprintf(f, "%s | ", rows[i].dump);
            fprintf(f, "%s | %s | %zu | %.4f (%.4f) | ", mdsd_block_case_name(&rows[i].c), desc,
                    pol->depth, rows[i].r.tau, rows[i].r.se);
        }
        for (size_t d = 1; !latex && d <= pol->depth; d++)
            fprintf(f, d > 1 ? " %.3f" : "%.3f", rows[i].r.reach[d]);
        for (size_t k = 0; k < ncost; k++)
            if (cost[k] != 0.0)
                fprintf(f, latex ? " & %.3f" : " | %.3f",
                        rows[i].r.tau / (1.0 + cost[k] * (double)pol->depth));
        fprintf(f, latex ? " \\\\\n" : " |\n");
    }
    if (latex)
        mdsd_report_latex_table_close(f);
    if (eng)
        mdsd_engine_write_table(f, latex, eng, rows, n);
}

int mdsd_block_write_file(const char *path, int kind, const mdsd_block_row *rows, size_t n,
                          const double *cost, size_t ncost, const mdsd_engine_cmp *eng,
                          mdsd_outfile *of, mdsd_err *err)
{
    int rc = mdsd_outfile_open(of, path, err);
    if (rc)
        return rc;
    if (kind == 0)
        write_csv(of->f, rows, n, cost, ncost, eng);
    else
        mdsd_block_write_table(of->f, kind == 2, rows, n, cost, ncost, eng);
    return mdsd_outfile_finish(of, err);
}
