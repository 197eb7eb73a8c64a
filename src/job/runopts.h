/* runopts.h - the front end's run options (mdsd/run.h) as the jobs take them:
 * checked once, NULL replaced by the defaults. */
#ifndef MDSD_RUNOPTS_H
#define MDSD_RUNOPTS_H

#include <mdsd/run.h>

#include "err.h"

/* *out = *run (or the defaults for NULL), checked: its size (mdsd/common.h) and,
 * with a tool, the command words (what: the job, for messages). run->usage is
 * cleared. */
int mdsd_run_opts_take(mdsd_run_opts *run, const char *what, mdsd_run_opts *out, mdsd_err *err);
/* Sets run->usage (run may be NULL). */
void mdsd_run_opts_usage(mdsd_run_opts *run, bool usage);

#endif
