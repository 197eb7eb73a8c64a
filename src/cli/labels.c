/* labels.c - parsing --label OLD=NEW (labels.h): the library's check
 * (report.h, mdsd_report_label_check, which mdsd_report makes too), its
 * refusal a usage error. */
#include <string.h>

#include "cli.h"
#include "labels.h"
#include "report.h"

_Static_assert(CLI_MAX_LABELS == MDSD_REPORT_MAX_LABELS, "one limit on --label");

size_t cli_label_old_length(const char *label)
{
    return strcspn(label, "=");
}

int cli_label_add(const char *cmd, const char *arg, const char **labels, size_t *n)
{
    mdsd_err err;
    if (mdsd_report_label_check(arg, labels, *n, &err)) {
        cli_usage_error(cmd, "%s", err.msg);
        return -1;
    }
    labels[(*n)++] = arg;
    return 0;
}
