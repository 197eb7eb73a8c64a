/* plot_api.c - the public calls of mdsd/plot.h: the options checked, the
 * output-safety check, the series read (plot_rows.c, plot_block.c) into the
 * lines both routes use (the gnuplot route writes them, plot_draw.c; the
 * data route returns them), the labels checked against them, and mdsd_plot,
 * which is `mdsd plot`. */
#include <mdsd/plot.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "outfile.h"
#include "pathset.h"
#include "plot.h"
#include "provenance.h"

#define CI_Z 1.96 /* plots/styles.gp's ci_z */
static const char interval_name[] = "95% CI (±1.96 s.e.)";

void (mdsd_plot_opts_init)(mdsd_plot_opts *opts, size_t size)
{
    mdsd_plot_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.n = -1;
    d.temperature = NAN;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

/* opts (NULL: the defaults) into *o, its size checked. */
static int get_opts(const mdsd_plot_opts *opts, mdsd_plot_opts *o, mdsd_err *err)
{
    if (!opts) {
        mdsd_plot_opts_init(o);
        return MDSD_OK;
    }
    int rc = mdsd_opts_check(opts->size, sizeof *opts, "mdsd_plot_opts", NULL, err);
    if (rc == MDSD_OK)
        *o = *opts;
    return rc;
}

mdsd_status mdsd_plot_default_kind(const char *csv, const char **kind, mdsd_err *err)
{
    if (!csv || !kind)
        return mdsd_fail(err, MDSD_EINVAL, "plot: no %s given (NULL)", csv ? "kind pointer" : "CSV");
    *kind = NULL;
    mdsd_csv *t;
    int rc = mdsd_csv_read(csv, &t, err);
    if (rc)
        return rc;
    if (mdsd_csv_col(t, "block_efficiency") >= 0) /* a block CSV */
        *kind = "block-depth";
    mdsd_csv_free(t);
    return MDSD_OK;
}

mdsd_status mdsd_plot_check_opts(const mdsd_plot_opts *opts, mdsd_err *err)
{
    mdsd_plot_opts o;
    int rc = get_opts(opts, &o, err);
    if (rc)
        return rc;
    if (!plot_find_preset(o.paper_size))
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_PAPER_SIZE,
                                "`paper_size`: '%s' is not screen, column or full", o.paper_size);
    if (!plot_legend_spec(o.legend, o.paper_size))
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LEGEND,
                                "`legend`: '%s' is not outside, below, inside, top-left, top-right, "
                                "bottom-left, bottom-right or none", o.legend);
    if (o.dump && o.dumps)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_DUMP,
                                "`dump '%s'` and `dumps '%s'`: give one (`dumps` overlays several)",
                                o.dump, o.dumps);
    if ((o.dump && !*o.dump) || (o.dumps && !*o.dumps))
        return mdsd_fail(err, MDSD_EINVAL, "`%s`: an empty name", o.dumps ? "dumps" : "dump");
    if (o.n < -1)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_N,
                                "`n`: %lld is negative (-1: any)", (long long)o.n);
    if (!(isnan(o.temperature) || (o.temperature >= 0 && isfinite(o.temperature))))
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_TEMPERATURE,
                                "`temperature`: %g is not a finite number >= 0", o.temperature);
    if ((rc = mdsd_labels_check(o.n_labels, o.labels, err)))
        return rc;
    if (!o.kind) /* the CSV's default, resolved by the caller (mdsd_plot_default_kind) */
        return MDSD_OK;
    const plot_kind *k = plot_find_kind(o.kind);
    if (!k)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_KIND,
                                "`kind`: '%s' is not vs-temperature, vs-drafts, per-draft, gap, "
                                "block-depth, block-speedup or block-reach", o.kind);
    if (k->block && (!isnan(o.temperature) || o.scheme || o.dumps))
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_KIND,
                                "`kind %s`: `temperature`, `scheme` and `dumps` are not for a block "
                                "CSV (`dump`, `method VERIFIERS` and `n K` are)", k->name);
    return MDSD_OK;
}

/* o->kind resolved (the block CSV's default when NULL) and the options
 * checked. */
static int resolve(const char *csv, const mdsd_plot_opts *opts, mdsd_plot_opts *o, mdsd_err *err)
{
    int rc = get_opts(opts, o, err);
    if (rc == MDSD_OK && !csv)
        rc = mdsd_fail(err, MDSD_EINVAL, "plot: no CSV given (NULL)");
    if (rc == MDSD_OK && !o->kind && !(rc = mdsd_plot_check_opts(o, err)) &&
        !(rc = mdsd_plot_default_kind(csv, &o->kind, err)) && !o->kind)
        rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_KIND,
                              "%s: missing `kind` (only a block CSV has a default, block-depth)", csv);
    return rc ? rc : (int)mdsd_plot_check_opts(o, err);
}

mdsd_status mdsd_plot_check_paths(const char *csv, const char *output, const mdsd_plot_opts *opts,
                                  mdsd_err *err)
{
    mdsd_plot_opts o;
    int rc = resolve(csv, opts, &o, err);
    if (rc)
        return rc;
    if (!output || !*output)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_OUTPUT, "missing `output`");
    /* the figure and its provenance must not replace the CSV it is drawn
     * from, its provenance, the gnuplot scripts, nor a directory */
    const plot_kind *k = plot_find_kind(o.kind);
    char script[4096], side[4200], styles[4200];
    if ((rc = plot_find_script(o.scripts, k->script ? k->script : k->name, script, sizeof script, err)))
        return rc;
    mdsd_provenance_path(csv, side, sizeof side);
    const char *slash = strrchr(script, '/'); /* styles.gp lives beside the script */
    if (slash)
        snprintf(styles, sizeof styles, "%.*s/styles.gp", (int)(slash - script), script);
    else
        snprintf(styles, sizeof styles, "styles.gp");
    mdsd_pathset ps;
    mdsd_pathset_init(&ps);
    mdsd_pathset_input(&ps, csv, "the results CSV");
    mdsd_pathset_input(&ps, side, "the provenance of %s", csv);
    mdsd_pathset_input(&ps, script, "the gnuplot script");
    mdsd_pathset_input(&ps, styles, "the gnuplot styles");
    mdsd_pathset_output_family(&ps, output, "`output`", mdsd_suffixes_provenance);
    rc = mdsd_pathset_check(&ps, err);
    mdsd_pathset_free(&ps);
    return rc;
}

void mdsd_plot_series_free(mdsd_plot_series *s)
{
    if (!s)
        return;
    plot_free_series(&s->ms);
    plot_free_series(&s->bs);
    free(s->mp), free(s->bp), free(s->csv), free(s->dump), free(s->title), free(s->interval);
    for (size_t i = 0; i < s->n_strings; i++)
        free(s->strings[i]);
    free(s->strings), free(s->lines), free(s->values);
    for (size_t i = 0; i < s->n_labels; i++)
        free(s->labels[i]);
    free(s->labels);
    free(s);
}

/* A copy kept by s for its lines (NULL: out of memory). */
static char *keep(mdsd_plot_series *s, const char *text)
{
    char *c = strdup(text);
    if (c)
        s->strings[s->n_strings++] = c;
    return c;
}

/* The title the figure gets without --title: the fixed dump / n / T. */
static void default_title(const mdsd_plot_series *s, char *buf, size_t size)
{
    const plot_kind *k = s->kind;
    size_t used = (size_t)snprintf(buf, size, "%s", s->overlay && !k->block ? "dumps overlaid (line dash = dump)"
                                                    : s->dump ? plot_relabel(s, s->dump) : "all dumps");
    if ((k->fixed & FIX_N) && s->n >= 0 && used < size)
        used += (size_t)snprintf(buf + used, size - used, ", n = %ld", s->n);
    if ((k->fixed & FIX_T) && !isnan(s->temperature) && used < size)
        snprintf(buf + used, size - used, ", T = %g", s->temperature);
}

/* s->lines from the series keys and their (sorted) points: the verifiers'
 * then alpha*'s, each with its legend text, style key and dash (the dump's
 * order of first appearance over both lists, as styles.gp numbers them). */
static int make_lines(mdsd_plot_series *s, mdsd_err *err)
{
    size_t n = s->ms.n + s->bs.n, total = s->mn + s->bn;
    s->lines = calloc(n + 1, sizeof *s->lines);
    s->strings = calloc(5 * n + 1, sizeof *s->strings);
    s->values = malloc((4 * total + 1) * sizeof *s->values);
    if (!s->lines || !s->strings || !s->values)
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    const char *dumps[64];
    size_t nd = 0, at = 0;
    double *x = s->values, *y = x + total, *se = y + total, *half = se + total;
    for (int l = 0; l < 2; l++) {
        const series_list *keys = l ? &s->bs : &s->ms;
        const point *pts = l ? s->bp : s->mp;
        size_t np = l ? s->bn : s->mn, i = 0;
        for (size_t k = 0; k < keys->n; k++) {
            mdsd_plot_line *line = &s->lines[s->n_lines++];
            char scheme[512], method[512], dump[512], title[1600];
            plot_key_parts(keys->keys[k], scheme, method, dump, sizeof scheme);
            plot_line_title(s, keys->keys[k], l, 0, title, sizeof title);
            size_t d = 0;
            const char *key_dump = strchr(strchr(keys->keys[k], '\t') + 1, '\t') + 1;
            while (d < nd && strcmp(dumps[d], key_dump))
                d++;
            if (d == nd && nd < 64)
                dumps[nd++] = key_dump;
            /* the style table's key: a verifier for a line, the scheme for alpha* */
            const char *word = l == 0 ? method : scheme;
            if (strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(word))
                word = "other";
            if (!(line->label = keep(s, title)) || !(line->style = keep(s, word)) ||
                !(line->scheme = keep(s, scheme)) || !(line->method = keep(s, method)) ||
                !(line->dump = keep(s, dump)))
                return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
            line->bound = l;
            line->dash = d + 1;
            line->x = x + at, line->y = y + at, line->se = se + at, line->half = half + at;
            for (; i < np && pts[i].series == k; i++, at++, line->points++)
                x[at] = pts[i].x, y[at] = pts[i].y, se[at] = pts[i].e, half[at] = CI_Z * pts[i].e;
        }
    }
    return MDSD_OK;
}

mdsd_status mdsd_plot_series_read(const char *csv, const mdsd_plot_opts *opts, mdsd_plot_series **out,
                                  mdsd_err *err)
{
    if (!out)
        return mdsd_fail(err, MDSD_EINVAL, "plot: no place for the series given (NULL)");
    *out = NULL;
    mdsd_plot_opts o;
    int rc = resolve(csv, opts, &o, err);
    if (rc)
        return rc;
    const plot_kind *k = plot_find_kind(o.kind);
    mdsd_csv *t;
    if ((rc = mdsd_csv_read(csv, &t, err)))
        return rc;
    mdsd_plot_series *s = calloc(1, sizeof *s);
    if (!s || !(s->csv = strdup(csv)) || (o.n_labels && !(s->labels = calloc(o.n_labels, sizeof *s->labels)))) {
        mdsd_csv_free(t);
        mdsd_plot_series_free(s);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    s->kind = k;
    for (size_t i = 0; i < o.n_labels && rc == MDSD_OK; i++)
        if (!(s->labels[s->n_labels++] = strdup(o.labels[i])))
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    const char *dump = NULL;
    if (rc) {
    } else if (k->block) { /* plot_block.c: its own columns and selection */
        size_t cap = 0;
        plot_block_sel sel = {o.dump, o.method, (long)o.n, false, o.on_note, o.note_ctx};
        rc = plot_block_series(t, k->block, &sel, &s->ms, &s->mp, &s->mn, &cap, err);
        dump = sel.dump, s->overlay = sel.overlay, s->n = (long)o.n, s->temperature = o.temperature;
    } else {
        plot_sel sel = {o.dumps ? o.dumps : o.dump, o.scheme, o.method, o.dumps != NULL, o.temperature,
                        (long)o.n, o.on_note, o.note_ctx};
        rc = plot_results_series(t, k, &sel, &s->ms, &s->mp, &s->mn, &s->bs, &s->bp, &s->bn, err);
        dump = sel.dump, s->overlay = sel.overlay, s->n = sel.n, s->temperature = sel.temperature;
    }
    if (rc == MDSD_OK && dump && !(s->dump = strdup(dump))) /* dump may be a cell of t */
        rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    if (rc == MDSD_OK && s->mn + s->bn == 0)
        rc = mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_KIND,
                              "%s: no rows to plot for `kind %s` with the chosen dump, n, T, schemes "
                              "and methods", t->path, k->name);
    mdsd_csv_free(t);
    if (rc == MDSD_OK) {
        plot_sort_points(s->mp, s->mn);
        plot_sort_points(s->bp, s->bn);
        char title[600];
        if (o.title)
            snprintf(title, sizeof title, "%s", o.title);
        else
            default_title(s, title, sizeof title);
        if (!(s->title = strdup(title)) || !(s->interval = strdup(interval_name)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    if (rc == MDSD_OK)
        rc = make_lines(s, err);
    if (rc) {
        mdsd_plot_series_free(s);
        return rc;
    }
    *out = s;
    return MDSD_OK;
}

mdsd_status mdsd_plot_check_labels(const mdsd_plot_series *s, const mdsd_plot_opts *opts, mdsd_err *err)
{
    mdsd_plot_opts o;
    int rc = get_opts(opts, &o, err);
    if (rc)
        return rc;
    if (!s)
        return mdsd_fail(err, MDSD_EINVAL, "plot: no series given (NULL)");
    /* Every --label names something the figure shows (a typo is an error,
     * not a legend left unchanged): a part of a series key, or the title's dump. */
    for (size_t i = 0; i < o.n_labels; i++) {
        size_t len = strcspn(o.labels[i], "=");
        bool found = s->dump && strlen(s->dump) == len && !strncmp(s->dump, o.labels[i], len);
        const series_list *lists[2] = {&s->ms, &s->bs};
        for (int l = 0; l < 2 && !found; l++)
            for (size_t k = 0; k < lists[l]->n && !found; k++)
                for (const char *p = lists[l]->keys[k]; p && !found; p = strchr(p, '\t') ? strchr(p, '\t') + 1 : NULL)
                    found = strcspn(p, "\t") == len && !strncmp(p, o.labels[i], len);
        if (!found)
            return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS,
                                    "`labels '%s'`: '%.*s' names no dump, drafter, method, scheme "
                                    "or policy of this figure", o.labels[i], (int)len, o.labels[i]);
    }
    return MDSD_OK;
}

void mdsd_plot_series_figure(const mdsd_plot_series *s, mdsd_plot_figure *fig)
{
    if (!fig)
        return;
    memset(fig, 0, sizeof *fig);
    if (!s)
        return;
    *fig = (mdsd_plot_figure){s->kind->name, s->title, s->kind->xlabel, s->kind->ylabel, s->interval, CI_Z,
                              s->n_lines};
}

const mdsd_plot_line *mdsd_plot_series_line(const mdsd_plot_series *s, size_t i)
{
    return s && i < s->n_lines ? &s->lines[i] : NULL;
}

mdsd_status mdsd_plot_draw(const mdsd_plot_series *s, const char *csv, const char *output,
                           const mdsd_plot_opts *opts, mdsd_err *err)
{
    mdsd_plot_opts o;
    int rc = get_opts(opts, &o, err);
    if (rc)
        return rc;
    if (!s || !output || !*output)
        return mdsd_fail(err, MDSD_EINVAL, !s ? "plot: no series given (NULL)" : "missing `output`");
    if (o.tool && o.n_words && !o.words)
        return mdsd_fail(err, MDSD_EINVAL, "plot: %zu command words and none given (NULL)", o.n_words);
    for (size_t i = 0; o.tool && i < o.n_words; i++)
        if (!o.words[i])
            return mdsd_fail(err, MDSD_EINVAL, "plot: command word %zu is NULL", i);
    return plot_draw(s, csv ? csv : s->csv, output, &o, err);
}

mdsd_status mdsd_plot(const char *csv, const char *output, const mdsd_plot_opts *opts, mdsd_err *err)
{
    mdsd_plot_opts o;
    int rc = resolve(csv, opts, &o, err);
    if (rc == MDSD_OK)
        rc = mdsd_plot_check_paths(csv, output, &o, err);
    mdsd_plot_series *s = NULL;
    if (rc == MDSD_OK)
        rc = mdsd_plot_series_read(csv, &o, &s, err);
    if (rc == MDSD_OK)
        rc = mdsd_plot_check_labels(s, &o, err);
    if (rc == MDSD_OK)
        rc = mdsd_plot_draw(s, csv, output, &o, err);
    mdsd_plot_series_free(s);
    return rc;
}
