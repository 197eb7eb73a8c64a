#!/usr/bin/env bash
# papers/block/run.sh - block efficiency E[tau] (tokens per target call) of multi-token
# drafts: the KJV pair's analogues of SpecTr's and Khisti et al.'s sequence comparisons,
# SpecHub's binary trees and Hu et al.'s trees (from tree dumps), and the optimal
# token-level verifier on Markov toys (mdsd block --optimal), the block verifiers against
# optimal-token and optimal-block (toys) and paired on the KJV large tree dump. Writes
# results/*.csv, *.md and the figures; about 15 minutes of CPU (most of it the large dump).
cd "$(dirname "$0")/../.."
source papers/lib.sh
OUT=papers/block/results
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. Sequences (SpecTr Alg. 3, Khisti et al.): the shipped seq tree dump, K' <= 4, L' <= 4.
note "seq: data/kjv-trees.h5"
"$MDSD" block data/kjv-trees.h5 --verifiers sd,rrs,kseq,is --is-top 32 --cost 0,0.1,0.3 \
  -o "$OUT/seq.csv" --markdown "$OUT/seq.md"

# 2. Trees (SpecHub's binary trees, Hu et al.'s Table 3): dumps made here with the same
#    pair and contexts as the shipped one (make tree-dump), one per drafting scheme.
RUNNER_ARGS=(ngram --corpus kjv --order 4 --draft-order 2 --vocab-size 2048
  --prompts data/prompts/kjv-openings.jsonl --num-samples 40 --seed 1 --gen-temperature 1
  --max-new-tokens 64 --logits-dtype float16 --compression gzip --tree-contexts 4
  --tree-stride 8 -q)
trees=()
for spec in "2,2,2,2 iid rrs,kseq" "2,2,2,2 wor rrsw" "2,2,2,2 hub spechub" \
            "2,2,2,2 greedy greedy" "4,4,4 iid rrs,kseq" "4,4,4 wor rrsw" "4,4,4 greedy greedy"; do
  set -- $spec
  f="$work/tree-${1//,/}-$2.h5"
  note "trees: $1 $2"
  src/bin/mdsd-runner "${RUNNER_ARGS[@]}" --tree-policy tree --tree-widths "$1" --tree-scheme "$2" -o "$f" >&2
  "$MDSD" block "$f" --verifiers "$3" --cost 0,0.1,0.3 -o "$work/$(basename "$f" .h5).csv"
  trees+=("$work/$(basename "$f" .h5).csv")
done
# one CSV: the header once, dump paths reduced to their names
{ head -n 1 "${trees[0]}"; for c in "${trees[@]}"; do tail -n +2 "$c"; done; } |
  sed "s|$work/||" > "$OUT/trees.csv"
awk -F, 'NR == 1 { next } $14 == 0 {
  printf "| %s | %s | %s | %s | %.4f (%.4f) | %s |\n", $1, $2, $6, $7, $11, $12, $13 }
  BEGIN { print "| dump | verifier | widths | L | E[tau] (s.e.) | per-depth rates |";
          print "|---|---|---|---:|---:|---|" }' "$OUT/trees.csv" > "$OUT/trees.md"

# 3. The optimal token-level verifier on Markov toys (backward induction, one OTM LP per
#    node): E[tau] of every verifier against it.
note "toys: optimal recursive verification"
echo "toy,policy,verifier,block_efficiency,optimal_block_efficiency,gap" > "$OUT/toys.csv"
for toy in papers/block/toys/toy*.txt; do
  name=$(basename "$toy" .txt)
  while read -r label args verifiers; do
    for v in ${verifiers//,/ }; do
      json=$("$MDSD" block --markov "$toy" ${args//|/ } -v "$v" --exact --optimal --json)
      printf '%s,%s,%s,%s,%s,%s\n' "$name" "$label" "$v" "$(jnum block_efficiency <<<"$json")" \
        "$(jnum optimal_token_block_efficiency <<<"$json")" "$(jnum gap_to_optimal_token <<<"$json")" >> "$OUT/toys.csv"
    done
  done <<'POLICIES'
seq-K2-L3 --sequences|2|--depth|3 rrs,kseq,is,otm
seq-K3-L3 --sequences|3|--depth|3 rrs,kseq,otm
tree-222-iid --tree|2,2,2 rrs,kseq,otm
tree-222-wor --tree|2,2,2|--scheme|wor rrsw,otm
tree-222-hub --tree|2,2,2|--scheme|hub spechub,otm
tree-33-greedy --tree|3,3|--scheme|greedy greedy,otm
POLICIES
done
awk -F, 'NR == 1 { print "| toy | policy | verifier | E[tau] | optimal E[tau] | gap |";
                   print "|---|---|---|---:|---:|---:|"; next }
  { g = $6 + 0; if (g < 1e-12 && g > -1e-12) g = 0
    printf "| %s | %s | %s | %.6f | %.6f | %.2e |\n", $1, $2, $3, $4, $5, g }' \
  "$OUT/toys.csv" > "$OUT/toys.md"

# 4. Block verifiers (issue 24): every verifier against optimal-token and optimal-block on
#    the Markov toys (sun.txt: Sun et al.'s example), exact; then on the KJV pair's large
#    tree dump (make tree-dump-large: 24 parts, about 140 s of CPU to make, kept in build/),
#    differences paired by tree from the job's per-sample lines (verifiers.py).
note "block verifiers: toys"
/usr/bin/python3 papers/block/verifiers.py toys "$MDSD" "$OUT"
/usr/bin/python3 papers/block/verifiers.py scan "$MDSD" "$OUT"
note "block verifiers: gbv against bv at L = 8 on LLM-like Markov pairs of V = 256 (about 25 CPU-minutes)"
/usr/bin/python3 papers/block/markov_family.py "$MDSD" "$OUT"
note "block verifiers: traversal against token-level verification on random toys"
/usr/bin/python3 papers/block/traversal_scan.py "$MDSD" "$OUT"
note "block verifiers: the KJV large tree dump (about 10 minutes of CPU)"
make --no-print-directory tree-dump-large
"$MDSD" block build/kjv-trees-large --verifiers sd,rrs,kseq,is,bv,gbv,traversal --is-top 32 \
  --sequences 1,2,3,4 --shard 1/1 -o "$work/kjv-large.part"
/usr/bin/python3 papers/block/verifiers.py kjv "$MDSD" "$work/kjv-large.part" "$OUT"
sed -i "s|$work/||; s|build/kjv-trees-large|kjv-trees-large|" "$OUT/kjv_seq.csv"

# 5. Figures: tau vs L (K = 4) and tau vs K (L = 4) per verifier, from seq.csv.
note "figures"
awk -F, 'NR > 1 && $14 == 0 && $5 == 4 { print $2, $7, $11, $12 }' "$OUT/seq.csv" > "$work/vsL.dat"
awk -F, 'NR > 1 && $14 == 0 && $7 == 4 { print $2, $5, $11, $12 }' "$OUT/seq.csv" > "$work/vsK.dat"
plot() { # DATA XLABEL TITLE PNG VERIFIERS
  # each verifier in its fixed style (plots/styles.gp); K and L are discrete: ticks at the
  # data's values only, half a step of margin so that the end error bars show whole
  local ticks
  ticks=$(awk '{ print $2 }' "$1" | sort -nu | paste -sd, -)
  LC_ALL=C.UTF-8 gnuplot <<GP
set terminal pngcairo size 640,420 font ",10"
set output "$4"
load "plots/styles.gp"
set key left top
set xlabel "$2"; set ylabel "E[τ] (tokens per target call)"
set title "$3"
set grid
set xtics ($ticks)
set autoscale xfix
set offsets 0.5, 0.5, graph 0.05, graph 0.05
plot for [v in "$5"] "< grep '^".v." ' $1" using 2:3:4 with yerrorlines lt method_lt(v) title v
GP
}
plot "$work/vsL.dat" "draft length L" "KJV pair (4-gram target, bigram drafter), K = 4 sequences" "$OUT/tau_vs_L.png" "rrs kseq is"
plot "$work/vsK.dat" "draft sequences K" "KJV pair (4-gram target, bigram drafter), L = 4" "$OUT/tau_vs_K.png" "rrs kseq is"
/usr/bin/python3 papers/block/compare.py "$OUT"
note "wrote $OUT"
