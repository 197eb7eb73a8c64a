#!/usr/bin/env bash
# papers/ceilings/run.sh - ceilings for the 2025-26 tree and multi-draft verification claims
# (UniVer, GLS list coupling, hierarchical speculative decoding; README.md here), issue 41:
#   1. toys (exact): E[tau] of each claim's baseline (rrsw on wor trees, rrs and kseq on i.i.d.
#      sequences and trees, greedy on greedy trees, sd on one sequence) beside optimal-token,
#      otm-tiebreak and optimal-block (its LP where mdsd's cost guard allows; no --force), and
#      bv, gbv, traversal where defined, on papers/block's Markov toys;
#   1b. the same on 40 random Markov toys (V = 4, 5; written to results/random/);
#   2. the pairs' tree dumps: the gains read from papers/resolution's results (RESOLUTION_RESULTS,
#      default papers/resolution/results: trees_ngram.csv, trees_neural.csv, trees_paired.csv;
#      seq trees, i.i.d. drafts, K <= 4, L <= 4, made by papers/resolution/run.sh);
#   3. the tables (ceilings.py): results/toys.csv, random.csv, pairs.csv, gains.csv, claims.csv, tables.md.
#   papers/ceilings/run.sh
cd "$(dirname "$0")/../.."
source papers/lib.sh
export MDSD_PORTABLE_EXP=1
OUT=${CEILINGS_OUT:-papers/ceilings/results}
RES=${RESOLUTION_RESULTS:-papers/resolution/results}
mkdir -p "$OUT"
for f in trees_ngram.csv trees_neural.csv trees_paired.csv; do
  [ -e "$RES/$f" ] || { echo "papers/ceilings: $RES/$f not found; run papers/resolution/run.sh" >&2; exit 1; }
done
/usr/bin/python3 papers/ceilings/ceilings.py toys "$MDSD" "$OUT"
/usr/bin/python3 papers/ceilings/ceilings.py random "$MDSD" "$OUT"
/usr/bin/python3 papers/ceilings/ceilings.py pairs "$RES" "$OUT"
/usr/bin/python3 papers/ceilings/ceilings.py tables "$OUT"
note "wrote $OUT"
