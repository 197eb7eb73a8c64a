#!/usr/bin/env bash
# Hu et al. (ICLR 2025) with the toolkit on the shipped dump data/kjv-ngram.h5 (KJV
# Kneser-Ney 4-gram target; drafters kn2, kn3): Table 1 layout (T = 0.7, n = 3), Fig. 1
# (alpha against T) and Fig. 2 (alpha against n) analogues with every method and bound, plus
# Hu's generating-function Q(H) (= the cps scheme) next to exact sampling without
# replacement. Writes papers/hu/{table1.csv, table1.md, compare.md, above_bound.csv, paired.csv,
# paired.md, fig1.csv, fig1.png, fig2.csv, fig2.png}. The recipe for real model pairs is in papers/hu/README.md.
cd "$(dirname "$0")/../.."
. papers/lib.sh
OUT=papers/hu
DUMP=data/kjv-ngram.h5
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# kseq-mc: K-SEQ by Monte Carlo (lib.sh kseq_mc), appended to CSV as method kseq-mc.
add_kseq_mc() { kseq_mc "$1" $DUMP "${@:2}"; }

note "hu: Table 1 layout (T = 0.7, n = 3, drafters kn2 and kn3)"
"$MDSD" table $DUMP --draft-model kn2,kn3 -o $OUT/table1.csv -t 0.7 -d 3 -s iid,wor,cps,greedy \
  -v rrs,rrsw,kseq,greedy --trials 1000 --seed 1 --markdown=$OUT/table1.md \
  --per-position $TMP/table1-positions.csv 2> /dev/null
add_kseq_mc $OUT/table1.csv --draft-model kn2,kn3 -t 0.7 -d 3
/usr/bin/python3 $OUT/compare.py $OUT/published_table1.csv $OUT/table1.csv > $OUT/compare.md
# every published cell where a verifier exceeds its alpha* (FINDINGS #1)
/usr/bin/python3 $OUT/above_bound.py $OUT/published_table1.csv > $OUT/above_bound.csv

note "hu: Fig. 1 analogue (alpha against T, n = 3, kn2)"
"$MDSD" table $DUMP --draft-model kn2 -o $OUT/fig1.csv -t 0.1,0.3,0.5,0.7,0.9 -d 3 \
  -s iid,wor,cps,greedy -v rrs,rrsw,kseq,greedy --trials 300 --seed 1 \
  --per-position $TMP/fig1-positions.csv 2> /dev/null
add_kseq_mc $OUT/fig1.csv --draft-model kn2 -t 0.1,0.3,0.5,0.7,0.9 -d 3
"$MDSD" plot $OUT/fig1.csv --kind vs-temperature -o $OUT/fig1.png \
  --title "Hu Fig. 1 analogue: kjv-ngram.h5, kn2 drafter, n = 3" 2> /dev/null

note "hu: paired differences for the orderings the README states (Table 1 and Fig. 1)"
PAIRS_T1=rate_kseq:rate_rrs,rate_rrsw:rate_rrs,alpha_star_wor:alpha_star_iid,alpha_star_wor:alpha_star_cps,alpha_star_wor:alpha_star_greedy
PAIRS_F1=$PAIRS_T1,alpha_star_greedy:alpha_star_iid
"$MDSD" report $TMP/table1-positions.csv --paired $PAIRS_T1 --csv -o $TMP/p1.csv
"$MDSD" report $TMP/fig1-positions.csv --paired $PAIRS_F1 --csv -o $TMP/p2.csv
# Both jobs name kn2's column kjv-ngram.h5:kn2; at T = 0.7 the Fig. 1 job's pairs repeat the
# Table 1 job's (same positions, the same exact values): each (dump, T, a, b) is kept once.
{ cat $TMP/p1.csv; tail -n +2 $TMP/p2.csv; } | awk -F, '!seen[$1 FS $2 FS $3 FS $4]++' > $OUT/paired.csv
{ echo "# Paired differences on the shipped dump (papers/hu/run.sh)"; echo
  echo "## Table 1 layout (T = 0.7, n = 3, drafters kn2 and kn3)"; echo
  "$MDSD" report $TMP/table1-positions.csv --paired $PAIRS_T1 | sed 1,2d
  echo "## Fig. 1 analogue (n = 3, kn2)"; echo
  "$MDSD" report $TMP/fig1-positions.csv --paired $PAIRS_F1 | sed 1,2d; } > $OUT/paired.md

note "hu: Fig. 2 analogue (alpha against n, T = 0.7, kn2)"
"$MDSD" table $DUMP --draft-model kn2 -o $OUT/fig2.csv -t 0.7 -d 2,3,4,5,6,8,10 \
  -s iid,wor,cps,greedy -v rrs,rrsw,kseq,greedy --trials 200 --seed 1 2> /dev/null
add_kseq_mc $OUT/fig2.csv --draft-model kn2 -t 0.7 -d 2,3,4,5,6,8,10
"$MDSD" plot $OUT/fig2.csv --kind vs-drafts -o $OUT/fig2.png \
  --title "Hu Fig. 2 analogue: kjv-ngram.h5, kn2 drafter, T = 0.7" 2> /dev/null

note "hu: Q(H) of sampling without replacement vs Hu's W_{n,H}/W_{n,V} (= cps)"
{
  q=0.5,0.3,0.15,0.05
  echo "# Q(H) = P(all n = 3 drafts in H), H = {0, 1, 2}, q = ($q)"
  for s in wor cps; do
    echo "$s: Q(H) = $("$MDSD" draft -q $q -n 3 --scheme $s --subset 0,1,2 --json | jnum Q)"
  done
  echo "# Hu's formula: W_{3,H} / W_{3,V} = e3(0.5,0.3,0.15) / e3(0.5,0.3,0.15,0.05) = " \
       "$(awk 'BEGIN { a=.5; b=.3; c=.15; d=.05; e3H = a*b*c; e3 = a*b*c + a*b*d + a*c*d + b*c*d; printf "%.15g", e3H / e3 }')"
  p=0.1,0.2,0.3,0.4
  echo "# alpha* for p = ($p), q = ($q), n = 3, every route"
  for s in wor cps; do
    echo "$s: $(routes -p $p -q $q -n 3 -s $s)"
  done
  # FINDINGS #1: a verifier that samples without replacement beats the cps alpha*
  p=1,0,0
  q=0.6,0.2,0.2
  echo "# p = ($p), q = ($q), n = 2: rrsw (exact) against alpha* of wor and of cps"
  echo "rrsw: alpha = $(alpha accept -p $p -q $q -n 2 -v rrsw --exact)"
  for s in wor cps; do
    echo "$s: $(routes -p $p -q $q -n 2 -s $s)"
  done
} > $OUT/cps_vs_wor.txt
note "hu: done ($OUT)"
