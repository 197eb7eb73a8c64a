/* labels.c - parsing --label OLD=NEW (labels.h). */
#include <string.h>

#include "cli.h"
#include "labels.h"

size_t cli_label_old_length(const char *label)
{
    return strcspn(label, "=");
}

int cli_label_add(const char *cmd, const char *arg, const char **labels, size_t *n)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) { /* OLD ends at the first '=' */
        cli_usage_error(cmd, "--label '%s': expected OLD=NEW, a name of the CSV (dump, drafter, method, "
                        "scheme) and its new text, neither empty", arg);
        return -1;
    }
    if (*n == CLI_MAX_LABELS) {
        cli_usage_error(cmd, "--label: at most %d", CLI_MAX_LABELS);
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        if (!strncmp(labels[i], arg, (size_t)(eq - arg) + 1)) {
            cli_usage_error(cmd, "--label '%s': '%.*s' is relabelled twice", arg, (int)(eq - arg), arg);
            return -1;
        }
    labels[(*n)++] = arg;
    return 0;
}
