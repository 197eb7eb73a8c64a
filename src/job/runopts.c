/* runopts.c - mdsd_run_opts (mdsd/run.h): its defaults and its one check, for
 * every job that takes it (table, block, Markov route, merge). */
#include <string.h>

#include "opts.h"
#include "runopts.h"

/* The name in parentheses: the header's macro of the same name passes the caller's size. */
void (mdsd_run_opts_init)(mdsd_run_opts *opts, size_t size)
{
    mdsd_run_opts d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    mdsd_opts_fill(opts, size, &d, sizeof d);
}

int mdsd_run_opts_take(mdsd_run_opts *run, const char *what, mdsd_run_opts *out, mdsd_err *err)
{
    mdsd_run_opts_init(out);
    if (!run)
        return MDSD_OK;
    if (mdsd_opts_check(run->size, sizeof *run, "mdsd_run_opts", NULL, err))
        return MDSD_EINVAL;
    run->usage = 0;
    *out = *run;
    if (run->tool && !*run->tool)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no tool named for the provenance", what);
    if (run->tool && (run->n_words > 65536 || (run->n_words && !run->words)))
        return mdsd_fail(err, MDSD_EINVAL, "%s: %zu command words and %s", what, run->n_words,
                         run->words ? "too many" : "none given (NULL)");
    for (size_t i = 0; run->tool && i < run->n_words; i++)
        if (!run->words[i])
            return mdsd_fail(err, MDSD_EINVAL, "%s: command word %zu is NULL", what, i);
    if (!run->shard_text != !run->shard_size)
        return mdsd_fail(err, MDSD_EINVAL, "%s: shard_text and shard_size go together", what);
    return MDSD_OK;
}

void mdsd_run_opts_usage(mdsd_run_opts *run, bool usage)
{
    if (run)
        run->usage = usage;
}
