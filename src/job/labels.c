/* labels.c - the form of --label OLD=NEW of `mdsd plot` and `mdsd report`
 * (mdsd/plot.h, mdsd_labels_check): checked once here for the CLI, the C API
 * and Python. The lookup is report.c's mdsd_report_relabel. */
#include <mdsd/plot.h>

#include <string.h>

#include "err.h"
#include "report.h"

#define MAX_LABELS MDSD_REPORT_MAX_LABELS /* also the CLI's --label array (src/cli/labels.h) */

mdsd_status mdsd_labels_check(size_t n, const char *const *labels, mdsd_err *err)
{
    if (n && !labels)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS,
                                "`labels`: %zu labels and none given (NULL)", n);
    if (n > MAX_LABELS)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS, "`labels`: at most %d", MAX_LABELS);
    for (size_t k = 0; k < n; k++) {
        const char *arg = labels[k], *eq = arg ? strchr(arg, '=') : NULL;
        if (!arg)
            return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS,
                                    "label %zu of `labels` is NULL", k + 1);
        if (!eq || eq == arg || !eq[1]) /* OLD ends at the first '=' */
            return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS,
                                    "`labels '%s'`: expected OLD=NEW, a name of the CSV (dump, "
                                    "drafter, method, scheme) and its new text, neither empty", arg);
        for (size_t i = 0; i < k; i++)
            if (!strncmp(labels[i], arg, (size_t)(eq - arg) + 1))
                return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_LABELS,
                                        "`labels '%s'`: '%.*s' is relabelled twice", arg,
                                        (int)(eq - arg), arg);
    }
    return MDSD_OK;
}
