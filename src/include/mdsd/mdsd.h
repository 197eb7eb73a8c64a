/* mdsd/mdsd.h - libmdsd, multi-draft speculative decoding, exactly: the whole
 * public API. Notation (MATH.md): p = target distribution, q = draft
 * distribution, n = number of drafts, V = vocabulary size, D = joint law of
 * the drafts. Conventions: mdsd/common.h. Link: pkg-config --cflags --libs mdsd. */
#ifndef MDSD_PUBLIC_MDSD_H
#define MDSD_PUBLIC_MDSD_H

#include <mdsd/common.h>
#include <mdsd/run.h>
#include <mdsd/option.h>
#include <mdsd/dist.h>
#include <mdsd/scheme.h>
#include <mdsd/alpha.h>
#include <mdsd/lp.h>
#include <mdsd/verifier.h>
#include <mdsd/registry.h>
#include <mdsd/dump.h>
#include <mdsd/batch.h>
#include <mdsd/block.h>
#include <mdsd/merge.h>
#include <mdsd/treewrite.h>
#include <mdsd/output.h>
#include <mdsd/toy.h>
#include <mdsd/plot.h>
#include <mdsd/check.h>
#include <mdsd/report.h>

#endif
