# fig5.gp - SpecTr Fig. 5: alpha* against n, draft U(120), target uniform on dq of the
# 120 symbols (alpha* = 1 - (1 - dq/120)^n; k-Seq attains it). Reads fig5.csv.
set terminal pngcairo size 800,520 font ",10"
set output datadir.'/fig5.png'
set datafile separator ","
set title "SpecTr Fig. 5: draft U(120), target U(dq) - alpha* (lines) and k-Seq (points)"
set xlabel "number of drafts n (SpecTr's k)"
set ylabel "optimal acceptance probability"
set key right bottom box
set grid
load datadir."/../colors.gp"
set xrange [1:20]
set yrange [0:1.02]
f = datadir.'/fig5.csv'
sel(d, col) = ($1 == d ? column(col) : 1/0)
plot for [i=1:5] f using 3:(sel(word("60 40 30 20 10", i) + 0, 5)) with lines lc i lw 2 \
       title sprintf("alpha*, dq = %s", word("60 40 30 20 10", i)), \
     for [i=1:5] f using 3:(sel(word("60 40 30 20 10", i) + 0, 7)) with points lc i pt 6 ps 0.8 notitle
