#!/bin/sh
# verifiers.sh - compare every verifier on YOUR dump: acceptance of sd, rrs,
# rrsw, kseq, greedy and spechub (and is with --is-top) at one temperature
# for n = 1..4 drafts, next to each scheme's optimal alpha*, with the gap and
# its significance; per-draft acceptance; per-position rates for slicing.
#
#   analysis/verifiers.sh DUMP.h5 [OUTDIR]        (default OUTDIR: build/analysis/verifiers)
#   T=1.0 DRAFTS=2,3,4 TRIALS=500 analysis/verifiers.sh my.h5 out/
#
# Writes OUTDIR/verifiers.csv (+ .provenance.json), verifiers.md, verifiers.tex
# (one table per n and the combined one), per-position.csv, and the figures
# vs-drafts, per-draft (n = 3) and gap.
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { sed -n 2,12p "$0" >&2; exit 2; }
dump=$1
out=${2:-build/analysis/verifiers}
need_dump "$dump"
mkdir -p "$out"
T=${T:-0.7}
DRAFTS=${DRAFTS:-1,2,3,4}
VERIFIERS=${VERIFIERS:-sd,rrs,rrsw,kseq,greedy,spechub}
run "$MDSD" table "$dump" -o "$out/verifiers.csv" -t "$T" -d "$DRAFTS" -s iid,wor,greedy \
  -v "$VERIFIERS" --trials "${TRIALS:-300}" $common --discard-partial \
  --per-position "$out/per-position.csv" --markdown="$out/verifiers.md" --latex="$out/verifiers.tex"
figure "$out/verifiers.csv" vs-drafts verifiers-vs-drafts
figure "$out/verifiers.csv" per-draft verifiers-per-draft --n 3
figure "$out/verifiers.csv" gap verifiers-gap --n 3 2>/dev/null || true
echo "== $out: verifiers.csv, verifiers.md, verifiers.tex, per-position.csv, figures"
