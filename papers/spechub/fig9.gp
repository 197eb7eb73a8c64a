# fig9.gp - SpecHub Fig. 9 analogue: P(draft j is the accepted one) against j at T = 1,
# rrsw and rrs with n = 10 drafts, SpecHub with its 2; kn2 drafter on the shipped dump.
# Usage: gnuplot -e "datafile='fig9.dat'; outfile='fig9.png'" fig9.gp
set terminal pngcairo size 720,450 font ",10"
load 'plots/styles.gp'   # the fixed style of each method (run from the repository root)
set output outfile
set title "SpecHub Fig. 9 analogue: per-draft acceptance, T = 1 (kjv-ngram.h5, kn2 drafter)"
set xlabel "draft number j"
set ylabel "P(draft j accepted)"
set xtics 1 scale 0
set xrange [0.5:10.5]
set yrange [0:*]
set key right top box
set grid ytics
# j is discrete: the three methods' bars side by side at each j, not lines between them
w = 0.27
plot datafile using ($1 - w):2:(w) with boxes lt method_lt("rrsw") fs solid 0.85 border lt -1 \
       title "RRSw (n = 10)", \
     datafile using 1:3:(w) with boxes lt method_lt("rrs") fs solid 0.85 border lt -1 \
       title "RRS (n = 10)", \
     datafile using ($1 + w):4:(w) with boxes lt method_lt("spechub") fs solid 0.85 border lt -1 \
       title "SpecHub (n = 2)"
