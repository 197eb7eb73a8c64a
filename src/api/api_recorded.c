/* api_recorded.c - the table and block jobs with the provenance sidecar the
 * command line writes beside their results (mdsd_table_run_recorded,
 * mdsd_block_run_recorded): for callers that run the jobs through the API
 * (the Python package), so that OUTPUT.provenance.json describes the run
 * that wrote OUTPUT - never an earlier one's left beside it - with the keys,
 * hashes and order of publishing of `mdsd table` (tablerender.c, the CLI's
 * code) and `mdsd block`. */
#include <mdsd/mdsd.h>

#include "api.h"
#include "batch.h"
#include "blockjob.h"
#include "opts.h"
#include "provenance.h"

static int check_record(const char *what, const char *tool, size_t n_words, const char *const *words,
                        mdsd_err *err)
{
    if (!tool || !*tool)
        return mdsd_fail(err, MDSD_EINVAL, "%s: no tool named for the provenance", what);
    if (n_words > 65536 || (n_words && !words))
        return mdsd_fail(err, MDSD_EINVAL, "%s: %zu command words and %s", what, n_words,
                         words ? "too many" : "none given (NULL)");
    for (size_t i = 0; i < n_words; i++)
        if (!words[i])
            return mdsd_fail(err, MDSD_EINVAL, "%s: command word %zu is NULL", what, i);
    return MDSD_OK;
}

/* The run options of a recorded run: the provenance only. */
static mdsd_run_opts recorded(const char *tool, size_t n_words, const char *const *words)
{
    mdsd_run_opts run;
    mdsd_run_opts_init(&run);
    run.tool = tool, run.n_words = n_words, run.words = words;
    return run;
}

mdsd_status mdsd_table_run_recorded(const mdsd_table_opts *t, const char *tool, size_t n_words,
                            const char *const *words, mdsd_err *err)
{
    int rc = check_record("table", tool, n_words, words, err);
    if (rc)
        return rc;
    mdsd_run_opts run = recorded(tool, n_words, words);
    return mdsd_table_run_with(t, &run, err);
}

mdsd_status mdsd_block_run_recorded(const mdsd_block_job_opts *opts, const char *tool, size_t n_words,
                            const char *const *words, mdsd_err *err)
{
    int rc = check_record("block", tool, n_words, words, err);
    if (rc)
        return rc;
    if (opts && opts->size == sizeof *opts && !opts->output && opts->n_dumps && opts->dumps)
        return mdsd_fail(err, MDSD_EINVAL, "block: no output given (the provenance describes "
                         "the results CSV)");
    mdsd_run_opts run = recorded(tool, n_words, words);
    return mdsd_block_run_with(opts, &run, err);
}
