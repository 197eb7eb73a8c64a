#!/usr/bin/env bash
# papers/ on both KJV model pairs (issue 30): Hu et al.'s Table 1 layout and Fig. 1, SpecHub's
# Tables 1-3 and Khisti et al.'s drafter comparison (Table 3 analogue), each on the large dumps
# of the n-gram pair (Kneser-Ney 4-gram target; kn2, kn3) and of the neural pair (tf4; tf1,
# tf2), the dump of temperature T generated at T (data/README.md, "Pair dumps"; `make
# pair-dumps`, PAIR_DIR as there, default build/pairs). The commands are those of
# papers/hu/run.sh, papers/spechub/run.sh and papers/khisti/run.sh (table3.sh), with their
# Markdown helpers. Writes papers/pairs/results/PAIR/{hu_table1,hu_fig1,spechub_dump,
# khisti_dump}.{csv,md}, {hu,spechub,khisti}_paired.{csv,md} for PAIR = ngram and neural, and
# the side-by-side tables papers/pairs/results/{dumps,hu_table1,hu_fig1,spechub,khisti,
# orderings}.md, hu_fig1.png, orderings.csv and orderings_summary.csv (side_by_side.py).
#   papers/pairs/run.sh [PAIR...]     (default: ngram neural; side by side once both exist)
# PAIRS_ANALYSES (default "hu spechub khisti") names the analyses to run; the others' results
# in papers/pairs/results are kept as they are.
cd "$(dirname "$0")/../.."
. papers/lib.sh
. papers/khisti/table3.sh
OUT=${PAIRS_OUT:-papers/pairs/results}   # elsewhere for a trial run
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PAIRS=${*:-ngram neural}
HU_T="0.1 0.3 0.5 0.7 0.9"        # Hu Fig. 1
SH_T="0.05 0.3 0.6 1"             # SpecHub Tables 1-3 (and T -> 0)
ANALYSES=" ${PAIRS_ANALYSES:-hu spechub khisti} "
for a in $ANALYSES; do
  case $a in hu|spechub|khisti) ;; *) echo "papers/pairs/run.sh: no analysis '$a' (hu, spechub, khisti)" >&2; exit 2 ;; esac
done
wants() { [[ $ANALYSES == *" $1 "* ]]; }
# Every dump must be there before any work starts (pair_dump names the make target).
for P in $PAIRS; do
  for T in $HU_T $SH_T; do pair_dump $P $T > /dev/null; done
done
# the orderings papers/hu/README.md states, paired over the same positions
PAIRS_T1=rate_kseq:rate_rrs,rate_rrsw:rate_rrs,alpha_star_wor:alpha_star_iid,alpha_star_wor:alpha_star_cps,alpha_star_wor:alpha_star_greedy
PAIRS_F1=$PAIRS_T1,alpha_star_greedy:alpha_star_iid,alpha_star_iid:rate_rrs,alpha_star_wor:rate_rrsw
PAIRS_SH=rate_spechub:rate_rrsw,rate_rrsw:rate_rrs,rate_spechub:rate_rrs

# paired CSV MD TITLE POSITIONS PAIRS: `mdsd report --paired` as CSV and Markdown.
paired() {
  "$MDSD" report "$4" --paired "$5" --csv -o "$1"
  { echo "# $3 (papers/pairs/run.sh)"; echo; "$MDSD" report "$4" --paired "$5" | sed 1,2d; } > "$2"
}
# cat_positions OUT IN...: per-position CSVs with one header (the same columns in each).
cat_positions() {
  local out=$1; shift
  { head -n 1 "$1"; for f in "$@"; do tail -n +2 "$f"; done; } > "$out"
}

for P in $PAIRS; do
  DRAFTS=$(pair_drafters $P)
  SMALL=${DRAFTS%%,*}
  W=$TMP/$P
  mkdir -p $W
  case $P in ngram) TARGET="KN 4-gram" ;; neural) TARGET=tf4 ;; esac

  if wants hu; then
    D=$(pair_dump $P 0.7)
    note "pairs: $P: Hu Table 1 layout ($D, n = 3, drafters $DRAFTS)"
    "$MDSD" table $D --draft-model $DRAFTS -o $W/hu_table1.csv -t 0.7 -d 3 -s iid,wor,cps,greedy \
      -v rrs,rrsw,kseq,greedy --trials 1000 --seed 1 --markdown=$W/hu_table1.md \
      --per-position $TMP/t1-pos.csv 2> /dev/null
    kseq_mc $W/hu_table1.csv $D --draft-model $DRAFTS -t 0.7 -d 3

    note "pairs: $P: Hu Fig. 1 (alpha against T, each T from its own dump, n = 3, $SMALL)"
    for T in $HU_T; do
      D=$(pair_dump $P $T)
      "$MDSD" table $D --draft-model $SMALL -o $TMP/f1-$T.csv -t $T -d 3 -s iid,wor,cps,greedy \
        -v rrs,rrsw,kseq,greedy --trials 300 --seed 1 --per-position $TMP/f1-$T-pos.csv 2> /dev/null
      kseq_mc $TMP/f1-$T.csv $D --draft-model $SMALL -t $T -d 3
    done
    csv_cat $W/hu_fig1.csv $(for T in $HU_T; do echo $TMP/f1-$T.csv; done)
    cat_positions $TMP/f1-pos.csv $(for T in $HU_T; do echo $TMP/f1-$T-pos.csv; done)
    paired $TMP/p1.csv $W/hu_paired_t1.md "Paired differences, Hu Table 1 layout, $P pair" $TMP/t1-pos.csv $PAIRS_T1
    paired $TMP/p2.csv $W/hu_paired_f1.md "Paired differences, Hu Fig. 1, $P pair, $SMALL" $TMP/f1-pos.csv $PAIRS_F1
    # At T = 0.7 the Fig. 1 pairs repeat Table 1's (the same dump and positions): kept once.
    { cat $TMP/p1.csv; tail -n +2 $TMP/p2.csv; } | awk -F, '!seen[$1 FS $2 FS $3 FS $4]++' > $W/hu_paired.csv
    cat $W/hu_paired_t1.md $W/hu_paired_f1.md > $W/hu_paired.md
    rm $W/hu_paired_t1.md $W/hu_paired_f1.md
  fi

  if wants spechub; then
    note "pairs: $P: SpecHub Tables 1-3 (n = 2, each T from its own dump, drafters $DRAFTS)"
    for T in $SH_T; do
      "$MDSD" table $(pair_dump $P $T) --draft-model $DRAFTS -o $TMP/s-$T.csv -t $T -d 2 \
        -s iid,wor,hub -v rrs,rrsw,spechub --trials 1000 --seed 1 --per-position $TMP/s-$T-pos.csv 2> /dev/null
    done
    csv_cat $W/spechub_dump.csv $(for T in $SH_T; do echo $TMP/s-$T.csv; done)
    cat_positions $TMP/s-pos.csv $(for T in $SH_T; do echo $TMP/s-$T-pos.csv; done)
    /usr/bin/python3 papers/spechub/dump_tables.py --drafters $DRAFTS --target "$TARGET" \
      $W/spechub_dump.csv > $W/spechub_dump.md
    paired $W/spechub_paired.csv $W/spechub_paired.md "Paired differences, SpecHub Tables 1-3 (n = 2), $P pair" \
      $TMP/s-pos.csv $PAIRS_SH
  fi

  if wants khisti; then
    D=$(pair_dump $P 0.7)
    note "pairs: $P: Khisti Table 3 analogue ($D, n = 2, 3, 4, drafters $DRAFTS)"
    khisti_table3 $D $DRAFTS $W/khisti_dump $W/khisti_paired "$(basename $D)" papers/pairs/run.sh
  fi

  mkdir -p $OUT/$P
  mv $W/* $OUT/$P/
done

if [ -d $OUT/ngram ] && [ -d $OUT/neural ]; then
  note "pairs: side by side"
  /usr/bin/python3 papers/pairs/side_by_side.py $OUT ngram:$(pair_drafters ngram) neural:$(pair_drafters neural)
  # Fig. 1 of both pairs in one plot: each pair's rows as one dump (its T from its own dumps)
  for P in ngram neural; do
    awk -F, -v d="kjv-$P:$(pair_drafters $P | cut -d, -f1)" 'NR > 1 { $1 = d } { print }' OFS=, $OUT/$P/hu_fig1.csv > $TMP/fig1-$P.csv
  done
  csv_cat $TMP/fig1.csv $TMP/fig1-ngram.csv $TMP/fig1-neural.csv
  "$MDSD" plot $TMP/fig1.csv --kind vs-temperature --dumps all --scheme iid,wor,greedy --method rrs,rrsw,kseq,bound \
    -o $OUT/hu_fig1.png --title "Hu Fig. 1 on both KJV pairs: n = 3, smaller drafter, responses generated at each T" 2> /dev/null
fi
note "pairs: done ($OUT)"
