# fig4.gp - SpecTr Fig. 4: alpha* (OTM) and k-Seq against n, draft Ber(0.25), target Ber(b).
# Usage: gnuplot -e "datadir='papers/spectr'" papers/spectr/fig4.gp  (reads fig4.csv)
set terminal pngcairo size 800,520 font ",10"
set output datadir.'/fig4.png'
set datafile separator ","
set title "SpecTr Fig. 4: draft Ber(0.25), target Ber(b) - OTM (alpha*, solid) vs k-Seq (dashed)"
set xlabel "number of drafts n (SpecTr's k)"
set ylabel "acceptance probability"
set key right bottom box
set grid
load datadir."/../colors.gp"
set xrange [1:20]
set yrange [0:1.02]
f = datadir.'/fig4.csv'
sel(b, col) = (abs($1 - b) < 1e-9 ? column(col) : 1/0)
B = "0.1 0.25 0.5 0.75 1"
plot for [i=1:5] f using 2:(sel(word(B, i) + 0, 4)) with linespoints lc i lw 2 pt 7 ps 0.6 \
       title sprintf("OTM, b = %s", word(B, i)), \
     for [i=1:5] f using 2:(sel(word(B, i) + 0, 6)) with linespoints lc i lw 2 dt 2 pt 4 ps 0.6 \
       title sprintf("k-Seq, b = %s", word(B, i))
