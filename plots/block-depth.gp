# block-depth.gp - block efficiency E[tau] (tokens per target call) against the draft
# depth L, one line per verifier with standard-error bars (SpecTr Fig. 3, Khisti et al.
# Fig. 4 analogues), or, with ylabeltext set to the speed-up, E[tau] / (1 + c L) with the
# draft cost c setting the dash. Run by analysis/block.sh, which sets through `gnuplot -e`:
#   datafile           data blocks ("title" line, then L y err rows), separated by two
#                      blank lines (gnuplot's `index`)
#   nseries            number of blocks
#   seriesmethods      the verifier of each block (words): its fixed style from styles.gp
#   seriesdash         the dash of each block (words, 1 = solid)
#   outfile, term      output file and gnuplot terminal (with size, font)
#   plottitle, ylabeltext, keyspec, stylefile
set terminal @term
set termoption noenhanced
load stylefile
set output outfile
set title plottitle
set xlabel "draft depth L (tokens drafted per step)"
set xtics 1
set ylabel ylabeltext
set key @keyspec
set grid
# L is discrete: ticks at the data's depths only, half a step of margin either side
set autoscale xfix
set offsets 0.5, 0.5, graph 0.05, graph 0.05
plot for [i=0:nseries-1] datafile index i using 1:2:3 with yerrorlines \
         lt method_lt(word(seriesmethods, i+1)) dt 0+int(word(seriesdash, i+1)) \
         title columnheader(1)
unset output
