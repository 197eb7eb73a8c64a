# fig9.gp - SpecHub Fig. 9 analogue: P(draft j is the accepted one) against j at T = 1,
# rrsw and rrs with n = 10 drafts, SpecHub with its 2; kn2 drafter on the shipped dump.
# Usage: gnuplot -e "datafile='fig9.dat'; outfile='fig9.png'" fig9.gp
set terminal pngcairo size 720,450 font ",10"
load 'plots/styles.gp'   # the fixed style of each method (run from the repository root)
set output outfile
set title "SpecHub Fig. 9 analogue: per-draft acceptance, T = 1 (kjv-ngram.h5, kn2 drafter)"
set xlabel "draft number j"
set ylabel "P(draft j accepted)"
set xtics 1
set xrange [0.5:10.5]
set yrange [0:*]
set key right top box
set grid
plot datafile using 1:2 with linespoints lt method_lt("rrsw") title "RRSw (n = 10)", \
     datafile using 1:3 with linespoints lt method_lt("rrs") title "RRS (n = 10)", \
     datafile using 1:4 with linespoints lt method_lt("spechub") title "SpecHub (n = 2)"
