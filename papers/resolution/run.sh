#!/usr/bin/env bash
# papers/resolution/run.sh - the optimal verifier `ot` (MATH.md 3.10) beside the claims of
# Thomas & Pal's Partial Resolution (NeurIPS 2025) and Global Resolution (ICLR 2026, arXiv
# 2511.15898), issue 37 (README.md here). On both KJV model pairs (data/README.md, "Pair
# dumps"; PAIR_DIR as there, default build/pairs) and on toys:
#   1. acceptance of ot, rrs, kseq, rrsw (n = 2, 3), spechub (n = 2) and alpha* of iid and wor
#      on each pair's T = 0.7 dump (its smaller drafter), with no truncation and with top-k
#      50 and 10 (`mdsd table --top-k`: both models truncated), n = 2, 3, 4, 8;
#   2. ot's overhead: set-up per position and cost per verified draft tuple at V = 32,000 and
#      152,064, n = 2..8, one core (make bench's driver, tests/bench/bench_driver.c);
#   3. E[tau] of ot per node against sd, rrs, kseq, bv, gbv and traversal on the first
#      RESOLUTION_PARTS (default 5) parts of each pair's tree dump, K' <= 4, L' <= 4, paired
#      by tree (one `mdsd block PART --shard 1/1` job per part, kept in RESOLUTION_WORK);
#   4. toys: ot against otm, otm-tiebreak and optimal-token on papers/block's Markov toys
#      (exact), and ot against otm and the alpha* line on 200 random Dirichlet rows (V = 6).
# Writes papers/resolution/results/: acceptance.csv, overhead.csv, trees_PAIR.csv,
# trees_paired.csv, markov_toys.csv, flat_toys.csv and tables.md (tables.py).
#   papers/resolution/run.sh [PAIR...]     PAIR: ngram, neural (default both)
cd "$(dirname "$0")/../.."
source papers/lib.sh
export MDSD_PORTABLE_EXP=1
OUT=${RESOLUTION_OUT:-papers/resolution/results}
WORK=${RESOLUTION_WORK:-build/resolution}
PARTS=${RESOLUTION_PARTS:-5}
THREADS=${RESOLUTION_THREADS:-2}
DRIVER=${BENCH_DRIVER:-build/release/bench-driver}
PAIRS=${*:-ngram neural}
mkdir -p "$OUT" "$WORK"
[ -x "$DRIVER" ] || { echo "papers/resolution: $DRIVER not found; run 'make build/release/bench-driver'" >&2; exit 1; }
# Every input must be there before any work starts.
for P in $PAIRS; do
  pair_dump "$P" 0.7 > /dev/null
  trees=$(pair_trees "$P")
  for k in $(seq -f %03g 1 "$PARTS"); do
    [ -e "$trees/part-$k.h5" ] || { echo "papers/resolution: $trees/part-$k.h5 not found; run 'make pair-trees'" >&2; exit 1; }
  done
done

# ---- 1. acceptance on the pairs' flat dumps --------------------------------------------------
for P in $PAIRS; do
  dump=$(pair_dump "$P" 0.7)
  drafter=$(pair_drafters "$P" | cut -d, -f1)
  for K in 0 50 10; do
    topk=()
    [ "$K" = 0 ] || topk=(--top-k "$K")
    note "acceptance: $P, top-k $K"
    "$MDSD" table "$dump" -o "$WORK/acc-$P-k$K-a.csv" -t 0.7 -d 2,3 -s iid,wor -v ot,rrs,kseq,rrsw \
      --draft-model "$drafter" --threads "$THREADS" "${topk[@]}"
    "$MDSD" table "$dump" -o "$WORK/acc-$P-k$K-b.csv" -t 0.7 -d 4,8 -s iid,wor -v ot,rrs,kseq \
      --draft-model "$drafter" --threads "$THREADS" "${topk[@]}"
    "$MDSD" table "$dump" -o "$WORK/acc-$P-k$K-c.csv" -t 0.7 -d 2 -s iid -v spechub \
      --draft-model "$drafter" --threads "$THREADS" "${topk[@]}"
  done
done

# ---- 2. overhead per token -------------------------------------------------------------------
{ echo "V,n,positions,ot_setup_seconds,ot_verify_seconds,alpha_seconds,rrs_setup_seconds,kseq_setup_seconds,worst_gap,chi_square,dof,acceptance"
  for V in 32000 152064; do
    pos=$([ "$V" = 32000 ] && echo 16 || echo 8)
    f32="$WORK/logits-$V.f32"
    [ -e "$f32" ] || "$DRIVER" gen "$f32" --vocab "$V" --positions "$pos" --seed 1 > /dev/null
    for n in 2 3 4 6 8; do
      note "overhead: V = $V, n = $n"
      taskset -c 0 "$DRIVER" ot "$f32" --vocab "$V" --n "$n" --temperature 0.7 --repeats 3 --tuples 2000 |
        /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print(",".join(str(x) for x in [sys.argv[1], sys.argv[2], sys.argv[3]] + [d[k] for k in ("ot_setup_seconds", "ot_verify_seconds", "alpha_seconds", "rrs_setup_seconds", "kseq_setup_seconds", "worst_gap", "chi_square", "dof", "acceptance")]))' "$V" "$n" "$pos"
    done
  done; } > "$WORK/overhead.csv.tmp"
mv "$WORK/overhead.csv.tmp" "$OUT/overhead.csv"

# ---- 3. E[tau] on the pairs' tree dumps ------------------------------------------------------
ARGS=(--verifiers sd,rrs,kseq,ot,bv,gbv,traversal --sequences 1,2,3,4)
for P in $PAIRS; do
  trees=$(pair_trees "$P")
  jobs=()
  for k in $(seq -f %03g 1 "$PARTS"); do
    part="$trees/part-$k.h5"
    job="$WORK/$P-part-$k.job"
    jobs+=("$job")
    if [ "$job" -nt "$part" ] && [ "$(sed -n 3p "$job" | cut -d' ' -f2)" = "verifiers=sd,rrs,kseq,ot,bv,gbv,traversal" ]; then
      continue   # done by an earlier run
    fi
    note "trees: $part"
    nice "$MDSD" block "$part" "${ARGS[@]}" --threads "$THREADS" --shard 1/1 --discard-partial -o "$job"
  done
  /usr/bin/python3 papers/resolution/tables.py trees "$MDSD" "$P" "$OUT" "${jobs[@]}"
done

# ---- 4. toys ---------------------------------------------------------------------------------
{ echo "toy,sequences,depth,verifier,block_efficiency"
  for toy in papers/block/toys/*.txt; do
    for K in 2 3; do
      for v in ot otm rrs kseq otm-tiebreak optimal-token; do
        e=$("$MDSD" block --markov "$toy" --sequences "$K" --depth 2 -v "$v" --exact --json | jnum block_efficiency)
        echo "$(basename "$toy" .txt),$K,2,$v,$e"
      done
    done
  done; } > "$WORK/markov_toys.csv.tmp"
mv "$WORK/markov_toys.csv.tmp" "$OUT/markov_toys.csv"
# (otm solves an LP per position: 200 rows, n <= 3 keep this to a minute)
"$MDSD" toy --family dirichlet --vocab 6 --positions 200 --seed 37 -o "$WORK/dirichlet-6.h5" > /dev/null
"$MDSD" table "$WORK/dirichlet-6.h5" -o "$WORK/flat_toys.csv" -t 0.7,1 -d 2,3 -s iid -v ot,otm,rrs,kseq \
  --threads "$THREADS"
cp "$WORK/flat_toys.csv" "$OUT/flat_toys.csv.tmp" && mv "$OUT/flat_toys.csv.tmp" "$OUT/flat_toys.csv"

/usr/bin/python3 papers/resolution/tables.py acceptance "$OUT" "$WORK"/acc-*.csv
/usr/bin/python3 papers/resolution/tables.py markdown "$OUT"
note "wrote $OUT"
