#!/bin/sh
# sweep.sh - temperature x n sweep on a dump: alpha* of the iid, wor and greedy
# schemes and every verifier over temperatures and draft counts (Hu et al.
# Fig. 1 and 2, SpecHub Fig. 9, the gap to alpha*).
#
#   analysis/sweep.sh DUMP.h5 [OUTDIR]            (default OUTDIR: build/analysis/sweep)
#   TEMPS=0.3,0.5,0.7,1.0 DRAFTS=1,2,3,4 TRIALS=300 N=3 T=0.7 analysis/sweep.sh my.h5
#
# Writes OUTDIR/sweep.csv (+ .provenance.json), sweep.md, sweep.tex (combined
# T x n table and one per setting), and the figures vs-temperature (n = N),
# vs-drafts (T), per-draft (n = N, T) and gap (n = N).
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { sed -n 2,11p "$0" >&2; exit 2; }
dump=$1
out=${2:-build/analysis/sweep}
need_dump "$dump"
mkdir -p "$out"
TEMPS=${TEMPS:-0.3,0.5,0.7,1.0}
DRAFTS=${DRAFTS:-1,2,3,4}
N=${N:-3}
T=${T:-0.7}
run "$MDSD" table "$dump" -o "$out/sweep.csv" -t "$TEMPS" -d "$DRAFTS" -s iid,wor,greedy \
  -v "${VERIFIERS:-sd,rrs,rrsw,kseq,greedy,spechub}" --trials "${TRIALS:-300}" $common \
  --resume --markdown="$out/sweep.md" --latex="$out/sweep.tex" --layout both
figure "$out/sweep.csv" vs-temperature vs-temperature --n "$N"
figure "$out/sweep.csv" vs-drafts vs-drafts --temperature "$T"
figure "$out/sweep.csv" per-draft per-draft --n "$N" --temperature "$T"
figure "$out/sweep.csv" gap gap --n "$N"
echo "== $out: sweep.csv, sweep.md, sweep.tex, figures"
