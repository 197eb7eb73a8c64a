# vs-temperature.gp - acceptance rate against temperature, one line per
# (scheme, verifier) with standard-error bars, the scheme's optimal alpha*
# dashed (Hu et al., ICLR 2025, Fig. 1). Run by `mdsd plot --kind
# vs-temperature`, which sets through `gnuplot -e`:
#   datafile, boundfile  data blocks ("title" line, then x y err rows),
#                        one per series, separated by two blank lines
#   nseries, nbounds     number of blocks in each
#   outfile, term        output file and gnuplot terminal (with size)
#   plottitle            title
set terminal @term
set termoption noenhanced
set output outfile
set title plottitle
set xlabel "temperature T"
set ylabel "acceptance rate alpha"
set key outside right top box
set grid
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
plot for [i=0:nseries-1] datafile index i using 1:2:3 with yerrorlines lw 2 pt 7 ps 0.8 \
         title columnheader(1), \
     for [i=0:nbounds-1] boundfile index i using 1:2 with linespoints lc "black" dt i+2 pt i+4 ps 1.2 lw 2 \
         title columnheader(1)
unset output
