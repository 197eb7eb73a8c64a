/* plot_draw.c - the gnuplot route of the figures (mdsd/plot.h): the series
 * (plot_api.c) written as gnuplot data blocks, the style and key variables
 * the scripts read, gnuplot run on a temporary output name, the figure
 * checked whole, its provenance sidecar put in place, then the figure
 * renamed onto the output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "plot.h"
#include "provenance.h"
#include "report.h"

const char *plot_relabel(const mdsd_plot_series *s, const char *name)
{
    return mdsd_report_relabel((const char *const *)s->labels, s->n_labels, name);
}

void plot_line_title(const mdsd_plot_series *s, const char *key, int bound, int dash_key, char *title,
                     size_t size)
{
    char raw[3][512];
    plot_key_parts(key, raw[0], raw[1], raw[2], sizeof raw[0]);
    /* the legend shows the --label names, the keys keep the CSV's */
    const char *scheme = plot_relabel(s, raw[0]), *method = plot_relabel(s, raw[1]), *dump = plot_relabel(s, raw[2]);
    if (dash_key)
        snprintf(title, size, "%s (%s)", method, scheme);
    else if (bound)
        snprintf(title, size, "%s%sα* %s", dump, *dump ? ": " : "", scheme);
    else
        snprintf(title, size, "%s%s%s (%s)", dump, *dump ? ": " : "", method, scheme);
}

/* Writes one gnuplot data block per line of s (bound: its alpha* lines, else
 * the verifiers'): a quoted title line (the legend entry: "α* iid", "rrs
 * (iid)", prefixed "DUMP: " when overlaid), then the points (x, y, s.e.: the
 * scripts scale it by ci_z); blocks separated by two blank lines (gnuplot's
 * `index`). With dash_key (the block speed-up's costs) the dash has a key of
 * its own and only the first cost's series are titled, without it: a key of
 * verifiers + costs entries, not their product. */
static int write_blocks(FILE *f, const mdsd_plot_series *s, int bound, bool dash_key)
{
    const series_list *keys = bound ? &s->bs : &s->ms;
    char first[512] = "";
    for (size_t k = 0; k < keys->n; k++) {
        const mdsd_plot_line *line = &s->lines[(bound ? s->ms.n : 0) + k];
        char title[1600];
        if (k == 0)
            snprintf(first, sizeof first, "%s", line->dump);
        if (dash_key && strcmp(line->dump, first))
            title[0] = '\0';
        else if (dash_key)
            plot_line_title(s, keys->keys[k], bound, 1, title, sizeof title);
        else
            snprintf(title, sizeof title, "%s", line->label);
        fputc('"', f);
        for (const char *c = title; *c; c++)
            if (*c != '"' && *c != '\\')
                fputc(*c, f);
        fputs("\"\n", f);
        for (size_t i = 0; i < line->points; i++)
            fprintf(f, "%.17g %.17g %.17g\n", line->x[i], line->y[i], line->se[i]);
        fprintf(f, "\n\n");
    }
    return ferror(f) ? MDSD_EIO : MDSD_OK;
}

typedef struct {
    char data[64], bounds[64], log[64];
} temp_files;

/* "; othermethods='W1 W2 ..'": the distinct words of `methods` in order, so that
 * styles.gp gives each method outside its table a style of its own. */
static size_t other_methods(char *v, size_t cap, const char *methods)
{
    char copy[65536], *save = NULL;
    snprintf(copy, sizeof copy, "%s", methods);
    const char *seen[256];
    size_t n = 0, len = (size_t)snprintf(v, cap, "; othermethods='");
    for (char *w = strtok_r(copy, " ", &save); w && n < 256; w = strtok_r(NULL, " ", &save)) {
        size_t k = 0;
        while (k < n && strcmp(seen[k], w))
            k++;
        if (k == n && len < cap) {
            len += (size_t)snprintf(v + len, cap - len, "%s%s", n ? " " : "", w);
            seen[n++] = w;
        }
    }
    if (len < cap)
        len += (size_t)snprintf(v + len, cap - len, "'");
    return len < cap ? len : cap;
}

/* The style variables the scripts read: stylefile (plots/styles.gp beside
 * the script), seriesmethods / boundschemes (one word per block, the key of
 * the style table), seriesdumps / bounddumps (1-based dump of each block when
 * overlaid, else 1), othermethods (their distinct methods), overlay, keyspec,
 * pointscale (markers: smaller for the PDF presets). */
static char *style_vars(const char *script, const mdsd_plot_series *ps, const char *output,
                        const mdsd_plot_opts *o)
{
    const series_list *ms = &ps->ms, *bs = &ps->bs;
    size_t cap = 1024 + strlen(script) + 900 * (ms->n + bs->n);
    char *v = malloc(cap);
    if (!v)
        return NULL;
    char dir[4096], q_style[4200];
    snprintf(dir, sizeof dir, "%s", script);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    char style_path[4200];
    snprintf(style_path, sizeof style_path, "%s/styles.gp", dir);
    plot_gp_string(q_style, sizeof q_style, style_path);
    const char *dot = strrchr(output, '.');
    bool vector = (o->terminal && !strncmp(o->terminal, "pdf", 3)) ||
                  (!o->terminal && dot && !strcmp(dot, ".pdf"));
    /* A key below the plot gets the bottom margin its rows need: a fixed one let
     * the key of overlaid drafters (6 rows) cover the x label and tics. Rows:
     * the key's title (the interval, styles.gp's ci_key), then the entries (each
     * series, the alpha* band) in as many columns (at most 3) as a column-wide
     * figure's width holds of the longest entry (about 100 characters across). */
    char key[256];
    const char *spec = plot_legend_spec(o->legend, o->paper_size), *fixed = strstr(spec, "set bmargin at screen ");
    snprintf(key, sizeof key, "%s", spec);
    if (fixed) {
        size_t longest = 0, entries = ms->n + bs->n + (bs->n > 0);
        const series_list *both[2] = {ms, bs};
        for (int l = 0; l < 2; l++)
            for (size_t k = 0; k < both[l]->n; k++)
                longest = strlen(both[l]->keys[k]) > longest ? strlen(both[l]->keys[k]) : longest;
        size_t cols = 100 / (longest + 16);
        cols = cols < 1 ? 1 : cols > 3 ? 3 : cols;
        size_t rows = 1 + (entries + cols - 1) / cols;
        double margin = 0.13 + 0.035 * (double)rows;
        snprintf(key + (fixed - spec), sizeof key - (size_t)(fixed - spec), "set bmargin at screen %.3f",
                 margin < 0.25 ? 0.25 : margin > 0.5 ? 0.5 : margin);
    }
    size_t len = (size_t)snprintf(v, cap, "stylefile=%s; overlay=%d; keyspec='%s'; pointscale=%g", q_style,
                                  ps->overlay ? 1 : 0, key, vector ? plot_find_preset(o->paper_size)->pdf_pointscale : 1.0);
    /* each line's style key and dash (plot_api.c's lines, in this order) */
    const series_list *lists[2] = {ms, bs};
    const char *names[2][2] = {{"seriesmethods", "seriesdumps"}, {"boundschemes", "bounddumps"}};
    for (int l = 0; l < 2; l++) {
        char words[2][65536];
        size_t wl[2] = {0, 0};
        words[0][0] = words[1][0] = '\0';
        for (size_t k = 0; k < lists[l]->n; k++) {
            const mdsd_plot_line *line = &ps->lines[(l ? ms->n : 0) + k];
            wl[0] += (size_t)snprintf(words[0] + wl[0], sizeof words[0] - wl[0], "%s%s", k ? " " : "", line->style);
            wl[1] += (size_t)snprintf(words[1] + wl[1], sizeof words[1] - wl[1], "%s%zu", k ? " " : "", line->dash);
            if (wl[0] >= sizeof words[0] || wl[1] >= sizeof words[1])
                break;
        }
        len += (size_t)snprintf(v + len, cap - len, "; %s='%s'; %s='%s'", names[l][0], words[0], names[l][1], words[1]);
        if (l == 0)
            len += other_methods(v + len, cap - len, words[0]);
    }
    (void)len;
    return v;
}

static int draw(const mdsd_plot_series *s, const char *csv, const char *output, const mdsd_plot_opts *o,
                temp_files *tf, mdsd_err *err)
{
    const plot_kind *k = s->kind;
    const series_list *ms = &s->ms, *bs = &s->bs;
    char script[4096], term[128], tmp[4096];
    int rc = plot_find_script(o->scripts, k->script ? k->script : k->name, script, sizeof script, err);
    if (rc == MDSD_OK)
        rc = plot_make_temp(tf->log, sizeof tf->log, "log", err);
    if (rc == MDSD_OK) {
        if (o->terminal)
            snprintf(term, sizeof term, "%s", o->terminal);
        else
            rc = plot_choose_terminal(output, o->paper_size, tf->log, term, sizeof term, o, err);
    }
    if (rc == MDSD_OK)
        rc = plot_make_temp(tf->data, sizeof tf->data, "data", err);
    if (rc == MDSD_OK)
        rc = plot_make_temp(tf->bounds, sizeof tf->bounds, "bounds", err);
    if (rc == MDSD_OK)
        rc = mdsd_tmpname(output, tmp, sizeof tmp, err);
    if (rc)
        return rc;
    FILE *f = fopen(tf->data, "w"), *g = fopen(tf->bounds, "w");
    int wrc = (!f || !g) ? MDSD_EIO : write_blocks(f, s, 0, s->overlay && k->block) | write_blocks(g, s, 1, false);
    if (f && fclose(f))
        wrc = MDSD_EIO;
    if (g && fclose(g))
        wrc = MDSD_EIO;
    if (wrc)
        return mdsd_fail(err, MDSD_EIO, "cannot write the temporary data files");
    char q_data[200], q_bounds[200], q_out[8200], q_term[300], q_title[1300], kvars[600] = "";
    plot_gp_string(q_data, sizeof q_data, tf->data);
    plot_gp_string(q_bounds, sizeof q_bounds, tf->bounds);
    plot_gp_string(q_out, sizeof q_out, tmp);
    plot_gp_string(q_term, sizeof q_term, term);
    plot_gp_string(q_title, sizeof q_title, s->title);
    if (k->block) /* the block kinds share one script: their axis texts */
        snprintf(kvars, sizeof kvars, "; xlabeltext='%s'; ylabeltext='%s'", k->xlabel, k->ylabel);
    char *style = style_vars(script, s, output, o), dashes[2048] = "";
    /* the block speed-up's costs in order ("c = 0.1" keys): the dash key's entries */
    for (size_t i = 0, at = 0; s->overlay && k->block && i < ms->n && at + 600 < sizeof dashes; i++) {
        char scheme[512], method[512], dump[512];
        plot_key_parts(ms->keys[i], scheme, method, dump, sizeof scheme);
        char padded[2100], word[520];
        snprintf(padded, sizeof padded, " %s ", dashes);
        snprintf(word, sizeof word, " %s ", strlen(dump) > 4 ? dump + 4 : dump);
        if (!strstr(padded, word))
            at += (size_t)snprintf(dashes + at, sizeof dashes - at, "%s%s", at ? " " : "", word + 1),
            dashes[--at] = '\0';
    }
    size_t vlen = strlen(q_data) + strlen(q_bounds) + strlen(q_out) + strlen(q_term) + strlen(q_title) +
                  (style ? strlen(style) : 0) + strlen(kvars) + strlen(dashes) + 200;
    char *vars = style ? malloc(vlen) : NULL;
    if (!vars) {
        free(style);
        return mdsd_fail(err, MDSD_ENOMEM, "out of memory");
    }
    snprintf(vars, vlen, "datafile=%s; boundfile=%s; nseries=%zu; nbounds=%zu; outfile=%s; term=%s; "
             "plottitle=%s; %s%s; costlist='%s'", q_data, q_bounds, ms->n, bs->n, q_out, q_term, q_title,
             style, kvars, dashes);
    free(style);
    char *argv[] = {"gnuplot", "-e", vars, script, NULL};
    int status = plot_run_gnuplot(argv, tf->log);
    free(vars);
    struct stat st;
    if (status != 0 || stat(tmp, &st) != 0 || st.st_size == 0) {
        char why[400];
        plot_log_tail(tf->log, why, sizeof why);
        unlink(tmp);
        mdsd_cleanup_unregister(tmp);
        if (status == 127 || status < 0)
            return mdsd_fail(err, MDSD_EIO, "cannot run gnuplot (install the Debian package gnuplot-nox)");
        return mdsd_fail(err, MDSD_EIO, "gnuplot failed on %s (exit %d)%s%s", script, status,
                         why[0] ? ": " : "", why);
    }
    if (!plot_figure_complete(tmp, output)) {
        unlink(tmp);
        mdsd_cleanup_unregister(tmp);
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': gnuplot's figure came out incomplete (a full "
                         "disk?)", output);
    }
    /* the sidecar first, finished and in place before the figure is: a
     * failure leaves the old figure with its old sidecar */
    mdsd_outfile side;
    mdsd_provenance pv = {.tool = o->tool ? o->tool : "mdsd plot", .argc = o->tool ? (int)o->n_words : 0,
                          .argv = o->tool ? (char *const *)o->words : NULL, .output = output,
                          .source = csv, .n_labels = s->n_labels, .labels = (const char *const *)s->labels};
    rc = mdsd_provenance_prepare(&pv, &side, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&side, err);
    mdsd_outfile_abort(&side);
    if (rc) {
        unlink(tmp);
        mdsd_cleanup_unregister(tmp);
        return rc;
    }
    return mdsd_publish(tmp, output, err);
}

int plot_draw(const mdsd_plot_series *s, const char *csv, const char *output, const mdsd_plot_opts *o,
              mdsd_err *err)
{
    temp_files tf = {"", "", ""};
    int rc = draw(s, csv, output, o, &tf, err);
    const char *temps[] = {tf.data, tf.bounds, tf.log};
    for (size_t i = 0; i < 3; i++)
        if (temps[i][0]) {
            unlink(temps[i]);
            mdsd_cleanup_unregister(temps[i]);
        }
    return rc;
}
