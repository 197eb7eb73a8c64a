#!/usr/bin/env bash
# papers/pairs/block.sh - block efficiency E[tau] of every verifier on both model pairs'
# tree dumps (issue 30; BLOCK.md): papers/block's KJV comparison (papers/block/verifiers.py
# kjv: token-level sd, rrs, kseq, is against the block verifiers bv, gbv, traversal at every
# K' <= 4, L' <= 4, differences paired by tree) on the n-gram pair's and the neural pair's
# tree dumps (`make pair-trees`; data/README.md, "Pair dumps"), then the two side by side.
#
#   papers/pairs/block.sh [PAIR...]     PAIR: ngram, neural (default both)
#
# One `mdsd block PART --shard 1/1` job per part of a pair's dump (its samples are whole in
# one part), kept in BLOCK_WORK with its CPU time: a job with this script's options newer
# than its part is not rerun, so an interrupted run loses at most the part it was on, and
# parts can be evaluated while `make pair-trees` is still writing the others; a second run
# at the same time skips the part the first is on (its .lock), so two share the work. The
# tables are made once the first BLOCK_PARTS parts (default PAIR_TREE_PARTS, 25: all) are
# done; their captions give the samples and trees they cover. MDSD_PORTABLE_EXP=1 as in
# `make papers` (gbv's values depend on the exp's last bits). CPU time: papers/pairs/BLOCK.md.
# Writes papers/pairs/results/block/: PAIR_seq.csv, PAIR_paired.csv, PAIR_verifiers.md,
# cpu.csv, and with both pairs side_by_side.md, stderr.csv, orderings.csv,
# orderings_summary.csv (papers/pairs/block_tables.py).
#
# BLOCK_DEPTH=8 (issue 41): the same over the L = 8 tree dumps (`make pair-trees-l8`,
# build/pairs/kjv-PAIR-trees-L8/) with sd, rrs, kseq, ot, bv, gbv, traversal (is left out: its
# LP per node at K' <= 4, L' <= 8 would dominate the time), every L' <= 8, into
# papers/pairs/results/block-L8/ (work in build/pairs-block-L8); PARTS defaults to
# PAIR_TREE8_PARTS (4).
cd "$(dirname "$0")/../.."
source papers/lib.sh
export MDSD_PORTABLE_EXP=1
DEPTH=${BLOCK_DEPTH:-4}
THREADS=${BLOCK_THREADS:-2}
case $DEPTH in
  4) SUFFIX= OUT=papers/pairs/results/block WORK=${BLOCK_WORK:-build/pairs-block}
     PARTS=${BLOCK_PARTS:-${PAIR_TREE_PARTS:-25}}  # the first PARTS parts of each dump
     ARGS=(--verifiers sd,rrs,kseq,is,bv,gbv,traversal --is-top 32 --sequences 1,2,3,4)
     # a job's third line, the dump's hash left out: these options
     JOB="job verifiers=sd,rrs,kseq,is,bv,gbv,traversal sequences=1,2,3,4 depth=default is-top=32 " ;;
  8) SUFFIX=-L8 OUT=papers/pairs/results/block-L8 WORK=${BLOCK_WORK:-build/pairs-block-L8}
     PARTS=${BLOCK_PARTS:-${PAIR_TREE8_PARTS:-4}}
     ARGS=(--verifiers sd,rrs,kseq,bv,gbv,traversal,ot --sequences 1,2,3,4)
     JOB="job verifiers=sd,rrs,kseq,bv,gbv,traversal,ot sequences=1,2,3,4 depth=default is-top=0 " ;;
  *) echo "block.sh: BLOCK_DEPTH is 4 or 8, not '$DEPTH'" >&2; exit 2 ;;
esac
mkdir -p "$OUT" "$WORK"
[ $# -gt 0 ] || set -- ngram neural

# label PAIR: the pair in the tables' captions
label() {
  case $1 in
    ngram) echo "n-gram pair (Kneser-Ney 4-gram target, drafter kn2, V = 8,192)" ;;
    neural) echo "neural pair (transformer tf4 target, drafter tf1, V = 8,192)" ;;
  esac
}

for pair in "$@"; do
  trees=$(pair_trees "$pair" "$SUFFIX")
  jobs=()
  busy=0
  for k in $(seq -f %03g 1 "$PARTS"); do
    dump="$trees/part-$k.h5"
    [ -e "$dump" ] || continue
    job="$WORK/$pair-$(basename "$dump" .h5).job"
    jobs+=("$job")
    if [ "$job" -nt "$dump" ] && [ -e "$job.time" ] && [ "$(sed -n 3p "$job" | cut -d'[' -f1)" = "$JOB" ]; then
      continue
    fi
    if [ -e "$job.lock" ] && ! flock -n "$job.lock" true; then  # another run holds it
      note "$pair: $dump: being evaluated by another run"
      busy=1
      continue
    fi
    note "$pair: $dump"
    /usr/bin/time -o "$job.time.tmp" -f '%U %S %e' nice "$MDSD" block "$dump" "${ARGS[@]}" \
      --threads "$THREADS" --shard 1/1 --discard-partial -o "$job"
    mv "$job.time.tmp" "$job.time"
  done
  if [ ${#jobs[@]} -ne "$PARTS" ] || [ $busy = 1 ]; then
    note "$pair: ${#jobs[@]} of $PARTS parts in $trees (busy: $busy); tables when all are done"
    continue
  fi
  /usr/bin/python3 papers/block/verifiers.py pair "$MDSD" "$pair" "$(label "$pair")" "$OUT" "${jobs[@]}"
  # CPU seconds per part
  { echo "pair,part,user_s,system_s,wall_s"
    [ -e "$OUT/cpu.csv" ] && grep -v "^$pair,\|^pair," "$OUT/cpu.csv" || true
    for job in "${jobs[@]}"; do
      read -r u s w < "$job.time"
      echo "$pair,$(basename "$job" .job | sed "s/^$pair-//"),$u,$s,$w"
    done; } > "$WORK/cpu.csv.tmp"
  mv "$WORK/cpu.csv.tmp" "$OUT/cpu.csv"
done
if [ -e "$OUT/ngram_paired.csv" ] && [ -e "$OUT/neural_paired.csv" ]; then
  /usr/bin/python3 papers/pairs/block_tables.py "$OUT"
fi
note "wrote $OUT"
