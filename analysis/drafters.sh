#!/bin/sh
# drafters.sh - compare the drafters of a dump (its /drafts groups) against
# one target: alpha* and the verifiers' acceptance per drafter, side by side
# in one table (a column per drafter) and overlaid in the figures (each
# method keeps its style; the drafter sets the dash).
#
#   analysis/drafters.sh DUMP.h5 [OUTDIR] [DRAFTERS]   (default: every drafter in the dump)
#   TEMPS=0.5,0.7,1.0 N=3 analysis/drafters.sh data/kjv-ngram.h5 out/ kn2,kn3
#
# Writes OUTDIR/drafters.csv (+ .provenance.json), drafters.md, drafters.tex,
# and the figures drafters-vs-temperature (n = N, drafters overlaid) and drafters-vs-drafts (T).
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { sed -n 2,11p "$0" >&2; exit 2; }
dump=$1
out=${2:-build/analysis/drafters}
need_dump "$dump"
drafters=${3:-$("$MDSD" info "$dump" --json | /usr/bin/python3 -c \
  'import json, sys; print(",".join(d["name"] for d in json.load(sys.stdin)["drafts"]))')}
mkdir -p "$out"
TEMPS=${TEMPS:-0.3,0.5,0.7,1.0}
DRAFTS=${DRAFTS:-2,3,4}
N=${N:-3}
T=${T:-0.7}
run "$MDSD" table "$dump" -o "$out/drafters.csv" --draft-model "$drafters" -t "$TEMPS" -d "$DRAFTS" \
  -s iid,wor -v "${VERIFIERS:-rrs,kseq}" --trials "${TRIALS:-300}" $common --resume \
  --markdown="$out/drafters.md" --latex="$out/drafters.tex" --layout both
figure "$out/drafters.csv" vs-temperature drafters-vs-temperature --n "$N" --dumps all
figure "$out/drafters.csv" vs-drafts drafters-vs-drafts --temperature "$T" --dumps all
echo "== $out: drafters.csv, drafters.md, drafters.tex, figures"
