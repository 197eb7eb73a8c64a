/* mdsd/report.h - the `mdsd report` job, from C: the results CSV of the table
 * job (mdsd/batch.h, `mdsd table -o`) rendered as Markdown or LaTeX tables
 * (rows scheme x method with each scheme's alpha*, columns dumps) without
 * recomputing anything, or, with `paired`, the paired differences of two
 * columns of the per-position CSV (`mdsd table --per-position`). The CLI
 * parses its options into these and calls mdsd_report, so both give the same
 * bytes. The layouts are the table job's too (mdsd_table_opts.layout). */
#ifndef MDSD_PUBLIC_REPORT_H
#define MDSD_PUBLIC_REPORT_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the tables of settings (temperature, n) are laid out. */
typedef enum {
    MDSD_REPORT_PER_SETTING = 1, /* one table per (temperature, n) */
    MDSD_REPORT_COMBINED = 2,    /* one table, (temperature, n) as row groups */
    MDSD_REPORT_BOTH = 3         /* both, per-setting tables first */
} mdsd_report_layout;

/* "per-setting", "combined" or "both" into *layout; MDSD_EINVAL (the message:
 * "'NAME' is not per-setting, combined or both") otherwise. */
MDSD_API mdsd_status mdsd_report_layout_parse(const char *name, mdsd_report_layout *layout,
                                              mdsd_err *err);

/* At most this many labels (mdsd_report_opts.labels, mdsd_plot_opts.labels). */
#define MDSD_REPORT_MAX_LABELS 64

/* Lists are the CLI's: comma-separated text (each entry once), NULL for all;
 * kept rows are ordered as the lists name them, else as in the file. */
typedef struct {
    size_t size;                /* set by the _init below; checked by the library (mdsd/common.h) */
    int latex;                  /* LaTeX (booktabs, graphicx); 0: Markdown */
    int standalone;             /* LaTeX: a whole document (needs latex) */
    int layout;                 /* an mdsd_report_layout; 0 (_init): both */
    const char *label_prefix;   /* LaTeX \label prefix: P-T<T>-n<n>, P-all; NULL: "tab:mdsd" */
    size_t n_labels;            /* "OLD=NEW" each (OLD ends at the first '='): the CSV's */
    const char *const *labels;  /* dump, scheme or method OLD shown as NEW; at most 64 */
    const char *temperatures;   /* "0.7,1": numbers, each a different value */
    const char *drafts;         /* numbers of drafts "2,3" */
    const char *schemes;        /* "iid,wor" */
    const char *methods;        /* verifiers "rrs,kseq" (the alpha* rows always stay) */
    const char *dumps;          /* dump columns */
    int64_t is_top;             /* the is cells' truncation mark; -1 (_init): from the
                                   CSV's provenance, else none */
    /* Paired differences instead: results is the per-position CSV and this
     * "A:B,C:D" lists the column pairs (a name, or a stem without _n<N> for
     * every N present); only latex = 0, csv, the output and the provenance
     * fields go with it. */
    const char *paired;
    int csv;                    /* paired: CSV (dump,temperature,a,b,difference,stderr,z,
                                   significance,positions,samples) instead of Markdown */
    /* The caller prints the returned text on its standard output (output
     * NULL): refused beforehand when that is a file this call reads. */
    int to_stdout;
    /* How the caller was called, for the provenance sidecar OUTPUT.provenance.json
     * written beside output: "tool" (NULL: "mdsd report"), "command" "mdsd" then
     * words[0..n_words). */
    const char *tool;
    size_t n_words;
    const char *const *words;
    /* Told notes (a dump of one sample: its standard errors are not clustered),
     * "note: ..." each; NULL = none. */
    void (*on_note)(const char *message, void *ctx);
    void *note_ctx;
} mdsd_report_opts;

/* Zeroes opts, sets is_top = -1 and size. */
MDSD_API void mdsd_report_opts_init(mdsd_report_opts *opts, size_t size);
#define mdsd_report_opts_init(opts) mdsd_report_opts_init((opts), sizeof *(opts))

/* Renders the CSV `results` (NULL opts: the defaults). output: a file written
 * atomically with its provenance sidecar OUTPUT.provenance.json (both appear,
 * or neither; an output that is an input, its provenance or another output is
 * refused, mdsd/output.h); NULL: none. text (may be NULL when output is
 * given) receives the rendered text, NUL-terminated (release it with
 * mdsd_report_free). option_error (may be NULL) is set to 1 when the failure
 * is an option refused - a malformed list, label or pair, options that do not
 * go together, a label whose OLD names nothing in the table kept (the CLI's
 * usage errors, exit 2) - else 0. A list entry that matches no row, a file
 * that is not a results CSV, a malformed row are errors naming file and line. */
MDSD_API mdsd_status mdsd_report(const char *results, const char *output, const mdsd_report_opts *opts,
                                 char **text, int *option_error, mdsd_err *err);
MDSD_API void mdsd_report_free(char *text);

#ifdef __cplusplus
}
#endif
#endif
