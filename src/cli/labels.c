/* labels.c - parsing --label OLD=NEW (labels.h): the form is the library's
 * check (mdsd_labels_check, mdsd/plot.h), reported here as a usage error. */
#include <mdsd/plot.h>
#include <mdsd/report.h>

#include <string.h>

#include "cli.h"
#include "labels.h"

_Static_assert(CLI_MAX_LABELS == MDSD_REPORT_MAX_LABELS, "one limit on --label");

size_t cli_label_old_length(const char *label)
{
    return strcspn(label, "=");
}

int cli_label_add(const char *cmd, const char *arg, const char **labels, size_t *n)
{
    if (*n == CLI_MAX_LABELS) {
        cli_usage_error(cmd, "--label: at most %d", CLI_MAX_LABELS);
        return -1;
    }
    labels[*n] = arg;
    mdsd_err err;
    mdsd_err_clear(&err);
    if (mdsd_labels_check(*n + 1, labels, &err)) {
        cli_usage_error(cmd, "%s", err.msg);
        return -1;
    }
    (*n)++;
    return 0;
}
