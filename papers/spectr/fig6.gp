# fig6.gp - SpecTr Fig. 6: OTM (alpha*), k-Seq and multi-round (= rrs) against n for
# draft Ber(0.25), target Ber(b); one panel per b. Reads fig4.csv.
set terminal pngcairo size 900,620 font ",9"
set output datadir.'/fig6.png'
set datafile separator ","
set multiplot layout 2,2 title "SpecTr Fig. 6: OTM vs k-Seq vs multi-round (rrs); draft Ber(0.25), target Ber(b)"
set xlabel "n"
set ylabel "acceptance probability"
set key right bottom
set grid
set xrange [1:20]
f = datadir.'/fig4.csv'
sel(b, col) = (abs($1 - b) < 1e-9 ? column(col) : 1/0)
do for [i=1:4] {
  b = word("0.1 0.5 0.75 1", i) + 0
  set title sprintf("b = %g", b)
  plot f using 2:(sel(b, 4)) with lines lw 2 lc rgb "black" title "OTM (alpha*)", \
       f using 2:(sel(b, 6)) with linespoints lw 2 dt 2 pt 4 ps 0.5 lc rgb "#1f77b4" title "k-Seq", \
       f using 2:(sel(b, 7)) with linespoints lw 2 dt 3 pt 6 ps 0.5 lc rgb "#d62728" title "multi-round (rrs)"
}
unset multiplot
