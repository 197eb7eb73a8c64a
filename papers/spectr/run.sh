#!/usr/bin/env bash
# SpecTr (Sun et al., NeurIPS 2023), App. B: Fig. 4 (Bernoulli pairs), Fig. 5 (uniform pairs)
# and Fig. 6 (multi-round = rrs) with the toolkit. Writes papers/spectr/{fig4,fig5}.csv,
# checks.txt and fig4.png, fig5.png, fig6.png. Run from anywhere: `papers/spectr/run.sh`.
cd "$(dirname "$0")/../.."
. papers/lib.sh
OUT=papers/spectr

# Fig. 4 / 6. SpecTr's p is our draft q = Ber(0.25), its q our target p = Ber(b);
# token 1 = "head", so q = (0.75, 0.25) and p = (1 - b, b).
a=0.25
q="0.75,0.25"
note "spectr: Fig. 4 (Bernoulli, n = 1..20)"
{
  echo "b,n,closed_form,otm_sort,otm_lp,kseq,rrs"
  for b in 0.1 0.25 0.5 0.75 1; do
    p=$(awk -v b=$b 'BEGIN { printf "%.17g,%.17g", 1 - b, b }')
    for n in $(seq 1 20); do
      cf=$(awk -v a=$a -v b=$b -v n=$n 'function min(x, y) { return x < y ? x : y }
           BEGIN { printf "%.12f", min(b, 1 - (1 - a)^n) + min(1 - b, 1 - a^n) }')
      sort=$(alpha bound -p "$p" -q "$q" -n $n -s iid -m sort)
      lp=$(alpha lp -p "$p" -q "$q" -n $n -s iid --reduced)
      kseq=$(alpha accept -p "$p" -q "$q" -n $n -v kseq --exact)
      rrs=$(alpha accept -p "$p" -q "$q" -n $n -v rrs --exact)
      echo "$b,$n,$cf,$sort,$lp,$kseq,$rrs"
    done
  done
} > $OUT/fig4.csv

# Fig. 5. SpecTr's p = U(d), d = 120, is our draft; its q = U(d/r) our target, uniform on
# the first d/r tokens. The r values of the figure were lost in the extraction (README).
d=120
qu=$(vec $d "1/$d")
note "spectr: Fig. 5 (uniform, d = $d, n = 1..20)"
{
  echo "dq,r,n,closed_form,otm_sort,otm_lp,kseq"
  for dq in 60 40 30 20 10; do
    r=$((d / dq))
    pu=$(vec $d "(i < $dq ? 1/$dq : 0)")
    for n in $(seq 1 20); do
      cf=$(awk -v r=$r -v n=$n 'BEGIN { printf "%.12f", 1 - (1 - 1/r)^n }')
      sort=$(alpha bound -p "$pu" -q "$qu" -n $n -s iid -m sort)
      lp=""
      [ $n -le 2 ] && lp=$(alpha lp -p "$pu" -q "$qu" -n $n -s iid --reduced)
      kseq=$(alpha accept -p "$pu" -q "$qu" -n $n -v kseq --exact)
      echo "$dq,$r,$n,$cf,$sort,$lp,$kseq"
    done
  done
} > $OUT/fig5.csv

# Every route to alpha* on a few Fig. 4 points (sort, brute, both LPs; k2 at n = 2).
note "spectr: cross-checks"
{
  echo "# mdsd bound --method all (sort, brute, both LPs, k2 at n = 2) on Fig. 4 and 5 instances"
  for b in 0.1 0.75; do
    p=$(awk -v b=$b 'BEGIN { printf "%.17g,%.17g", 1 - b, b }')
    for n in 2 3 8; do
      echo "Fig. 4, b = $b, n = $n: $(routes -p "$p" -q "$q" -n $n -s iid)"
    done
  done
  echo "Fig. 5, dq = 30, n = 2: $(routes -p "$(vec $d "(i < 30 ? 1/30 : 0)")" -q "$qu" -n 2 -s iid --max-vars 100000)"
  echo "# largest |column - closed_form| over fig4.csv and fig5.csv"
  awk -F, 'FNR > 1 && FILENAME ~ /fig4/ { for (c = 4; c <= 5; c++) { d = $c - $3; if (d < 0) d = -d; if (d > m4) m4 = d } }
           FNR > 1 && FILENAME ~ /fig5/ { for (c = 5; c <= 7; c++) if ($c != "" && c != 7) { d = $c - $4; if (d < 0) d = -d; if (d > m5) m5 = d }
                                          d = $7 - $4; if (d < 0) d = -d; if (d > k5) k5 = d }
           END { printf "fig4 (sort, LP vs eq. 10): %.3g\nfig5 (sort, LP vs 1-(1-1/r)^n): %.3g\nfig5 (k-Seq vs 1-(1-1/r)^n): %.3g\n", m4, m5, k5 }' \
      $OUT/fig4.csv $OUT/fig5.csv
  echo "# SpecTr Thm: k-Seq >= (1 - (1 - 1/n)^n) alpha*; smallest k-Seq / alpha* - (1 - (1 - 1/n)^n) over fig4.csv"
  awk -F, 'FNR > 1 { m = $6 / $4 - (1 - (1 - 1 / $2) ^ $2); if (!s || m < min) { min = m; at = "b = " $1 ", n = " $2; s = 1 } }
           END { if (min < 0 && min > -1e-12) min = 0; printf "%.4f (at %s)\n", min, at }' $OUT/fig4.csv
} > $OUT/checks.txt

# Markdown summaries of the curves (fig4.md, fig5.md)
{
  echo "| b | n = 1 | 2 | 3 | 4 | 5 | 10 | 20 |"
  echo "|---|---|---|---|---|---|---|---|"
  for b in 0.1 0.25 0.5 0.75 1; do
    awk -F, -v b=$b 'BEGIN { split("1 2 3 4 5 10 20", N, " "); for (i in N) want[N[i]] = 1 }
      FNR > 1 && $1 == b && ($2 in want) { c[$2] = sprintf("%.4f / %.4f / %.4f", $4, $6, $7) }
      END { printf "| %s |", b; for (i = 1; i <= 7; i++) printf " %s |", c[N[i]]; print "" }' $OUT/fig4.csv
  done
  echo
  echo "Each cell: alpha* (OTM) / k-Seq / multi-round (rrs), draft Ber(0.25), target Ber(b)."
} > $OUT/fig4.md
{
  echo "| target U(dq), r = 120/dq | n = 1 | 2 | 3 | 5 | 10 | 20 |"
  echo "|---|---|---|---|---|---|---|"
  for dq in 60 40 30 20 10; do
    awk -F, -v dq=$dq 'BEGIN { split("1 2 3 5 10 20", N, " "); for (i in N) want[N[i]] = 1 }
      FNR > 1 && $1 == dq && ($3 in want) { c[$3] = sprintf("%.4f / %.4f", $5, $7); r = $2 }
      END { printf "| dq = %s, r = %s |", dq, r; for (i = 1; i <= 6; i++) printf " %s |", c[N[i]]; print "" }' $OUT/fig5.csv
  done
  echo
  echo "Each cell: alpha* (sort-and-scan) / k-Seq; both equal 1 - (1 - 1/r)^n to 5e-13 (checks.txt)."
} > $OUT/fig5.md

note "spectr: figures"
for f in fig4 fig5 fig6; do
  gnuplot -e "datadir='$OUT'" $OUT/$f.gp
done
note "spectr: done ($OUT)"
