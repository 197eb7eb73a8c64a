# per-draft.gp - acceptance rate of each draft position j = 1..n, one line per
# (scheme, verifier): how acceptance decays along the drafts (SpecHub, EMNLP
# 2024, Fig. 9). Variables as in vs-temperature.gp (x is j, no bounds).
set terminal @term
set termoption noenhanced
load stylefile
set output outfile
set title plottitle
set xlabel "draft j"
set ylabel "P(draft j is the accepted one)"
set xtics 1
set key @keyspec
set grid
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot for [i=0:nseries-1] datafile index i using 1:2 with linespoints \
         lt method_lt(word(seriesmethods, i+1)) \
         dt 0+(overlay ? dump_dt(word(seriesdumps, i+1)) : 1) title columnheader(1)
unset output
