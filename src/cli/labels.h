/* labels.h - --label OLD=NEW of `mdsd plot` and `mdsd report`: a name of the
 * results CSV (a dump, dump:drafter, method or scheme) shown as NEW in a
 * figure's legend and title or a table's headers, the CSV never edited; the
 * pairs go to the output's provenance ("labels"). The form check
 * (mdsd_labels_check, mdsd/plot.h) and the lookup (report.h,
 * mdsd_report_relabel) are the library's. */
#ifndef MDSD_CLI_LABELS_H
#define MDSD_CLI_LABELS_H
#include <stddef.h>

#define CLI_MAX_LABELS 64

/* Adds arg ("OLD=NEW": OLD ends at the first '=', neither side empty, OLD
 * not given twice) to labels[*n]; else a usage error for cmd, -1. */
int cli_label_add(const char *cmd, const char *arg, const char **labels, size_t *n);

/* The length of OLD of label "OLD=NEW". */
size_t cli_label_old_length(const char *label);
#endif
