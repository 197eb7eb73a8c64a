#!/bin/sh
# block.sh - block-efficiency study on a tree dump (mdsd-runner --tree-policy; data/README.md,
# 'Tree dumps'): E[tau] (tokens per target call) of every verifier against the draft
# depth, and the speed-up E[tau] / (1 + c L) for draft costs c.
#
#   analysis/block.sh TREES.h5 [OUTDIR]          (default OUTDIR: build/analysis/block)
#   VERIFIERS=rrs,kseq COSTS=0,0.1,0.3 analysis/block.sh data/kjv-trees.h5 out/
#
# Writes OUTDIR/block.csv (mdsd block's tidy CSV), block.md, block.tex, and the
# figures (mdsd plot --kind block-*) block-vs-depth (E[tau] against L at each
# verifier's largest number of sequences), block-speedup (the speed-up against L,
# one dash per cost) and block-reach (P(at least d accepted) against d).
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { sed -n 2,11p "$0" >&2; exit 2; }
dump=$1
out=${2:-build/analysis/block}
need_dump "$dump"
mkdir -p "$out"
COSTS=${COSTS:-0,0.1,0.3}
vopt=""
[ -n "${VERIFIERS:-}" ] && vopt="--verifiers $VERIFIERS"
run "$MDSD" block "$dump" $vopt --cost "$COSTS" ${THREADS:+--threads $THREADS} \
  -o "$out/block.csv" --markdown "$out/block.md" --latex "$out/block.tex"

# The figures: `mdsd plot`'s block kinds (its size presets, styles and provenance).
figure "$out/block.csv" block-depth block-vs-depth
figure "$out/block.csv" block-speedup block-speedup
figure "$out/block.csv" block-reach block-reach
echo "== $out: block.csv, block.md, block.tex, figures block-vs-depth, block-speedup, block-reach"
