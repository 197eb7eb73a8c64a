# per-draft.gp - acceptance rate of each draft position j = 1..n, one line per
# (scheme, verifier): how acceptance decays along the drafts (SpecHub, EMNLP
# 2024, Fig. 9). Variables as in vs-temperature.gp (x is j, no bounds).
set terminal @term
set termoption noenhanced
set output outfile
set title plottitle
set xlabel "draft j"
set ylabel "P(draft j is the accepted one)"
set xtics 1
set key outside right top box
set grid
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot for [i=0:nseries-1] datafile index i using 1:2 with linespoints lw 2 pt 7 ps 0.8 \
         title columnheader(1)
unset output
