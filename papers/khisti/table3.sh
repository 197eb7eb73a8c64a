# table3.sh - Khisti et al.'s Table 3 analogue on a dump (sourced by papers/khisti/run.sh and
# papers/pairs/run.sh after papers/lib.sh, with $TMP a scratch directory).
# Khisti's IS with successive pairing (Remark 4) and the truncated LP (s = 5, their Table 2's
# best; and s = 50), SpecTr's k-Seq, SpecInfer's RRS, alpha*_iid; T = 0.7, n = 2, 3, 4.
# khisti_table3 DUMP DRAFTERS DUMP_OUT PAIRED_OUT WHERE SCRIPT [OPTIONS]: the runs on DUMP
# (drafters DRAFTERS, the smaller first) with OPTIONS added, written to DUMP_OUT.csv, .md and
# the paired orderings PAIRED_OUT.csv, .md (headed "on WHERE", "SCRIPT").
khisti_table3() {
  local dump=$1 drafters=$2 dump_out=$3 paired_out=$4 where=$5 script=$6; shift 6
  "$MDSD" table "$dump" --draft-model $drafters -o $TMP/a.csv -t 0.7 -d 2,3,4 -s iid \
    -v rrs,kseq,is --is-top 5 --trials 300 --seed 1 --per-position $TMP/a-pos.csv "$@" 2> /dev/null
  "$MDSD" table "$dump" --draft-model $drafters -o $TMP/b.csv -t 0.7 -d 2,3,4 -s iid \
    -v is --is-top 50 --trials 300 --seed 1 --per-position $TMP/b-pos.csv "$@" 2> /dev/null
  # the orderings the README states, paired over the same positions: the s = 50 run's is
  # columns joined to the first run's rows (the same dump, temperature and row on every line)
  awk -F, 'NR == FNR && FNR == 1 { for (c = 1; c <= NF; c++) if ($c ~ /^rate_is_n/) { cols[++m] = c
                                       n = $c; sub(/^rate_is/, "rate_is50", n); h = h FS n }
                                     next }
           NR == FNR { k = $1 FS $2 FS $3; for (i = 1; i <= m; i++) b[k] = b[k] FS $cols[i]; next }
           FNR == 1 { print $0 h; next }
           { k = $1 FS $2 FS $3
             if (!(k in b)) { print "khisti: row " k " missing from the s = 50 run" > "/dev/stderr"; exit 1 }
             print $0 b[k] }' $TMP/b-pos.csv $TMP/a-pos.csv > $TMP/pos.csv
  local PAIRS=rate_is:rate_kseq,rate_is:rate_rrs,rate_is50:rate_kseq,rate_kseq:rate_rrs
  "$MDSD" report $TMP/pos.csv --paired $PAIRS --csv -o $TMP/paired.csv
  mv $TMP/paired.csv $paired_out.csv
  { echo "# Paired differences on $where, T = 0.7${*:+, $*} ($script; is = IS with s = 5, is50 = s = 50)"; echo
    "$MDSD" report $TMP/pos.csv --paired $PAIRS | sed 1,2d; } > $paired_out.md
  { cat $TMP/a.csv; awk -F, 'NR > 1 && $5 == "is" { $5 = "is-top50"; print }' OFS=, $TMP/b.csv; } \
    | awk -F, 'NR == 1 || $5 != "is" { print; next } { $5 = "is-top5"; print }' OFS=, > $dump_out.csv
  /usr/bin/python3 papers/khisti/dump_table.py --drafters $drafters $dump_out.csv > $dump_out.md
}
