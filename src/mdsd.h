/* mdsd.h - the whole library's internal headers, multi-draft speculative
 * decoding, exactly: for the CLI, the tests and the benchmarks (the public API
 * is src/include/mdsd/mdsd.h; the theorem checks and toys, src/check, are not
 * the library's: check.h, toy.h).
 * Notation (MATH.md): p = target distribution, q = draft distribution,
 * n = number of drafts, V = vocabulary size, D = joint law of the drafts. */
#ifndef MDSD_H
#define MDSD_H

#include "err.h"
#include "dist.h"
#include "parse.h"
#include "rng.h"
#include "json.h"
#include "stats.h"
#include "outfile.h"
#include "scheme.h"
#include "dump.h"
#include "csv.h"
#include "cluster.h"
#include "report.h"
#include "progress.h"
#include "batch.h"
#include "verifier.h"
#include "montecarlo.h"
#include "lp.h"
#include "lp_export.h"
#include "bound.h"
#include "qporder.h"
#include "subset.h"
#include "wor_q.h"
#include "block.h"
#include <mdsd/block.h>
#include <mdsd/merge.h>

#endif
