# vs-drafts.gp - acceptance rate against the number of drafts n, one line per
# (scheme, verifier) with standard-error bars, alpha* dashed (Hu et al., ICLR
# 2025, Fig. 2). Variables as in vs-temperature.gp (x is n).
set terminal @term
set termoption noenhanced
set output outfile
set title plottitle
set xlabel "number of drafts n"
set ylabel "acceptance rate alpha"
set xtics 1
set key outside right top box
set grid
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
plot for [i=0:nseries-1] datafile index i using 1:2:3 with yerrorlines lw 2 pt 7 ps 0.8 \
         title columnheader(1), \
     for [i=0:nbounds-1] boundfile index i using 1:2 with linespoints lc "black" dt i+2 pt i+4 ps 1.2 lw 2 \
         title columnheader(1)
unset output
