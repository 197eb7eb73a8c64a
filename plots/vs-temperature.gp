# vs-temperature.gp - acceptance rate alpha against temperature, one line per
# (scheme, verifier) with 95% CI bars (±ci_z = 1.96 s.e., styles.gp), each scheme's optimal alpha*
# dashed with open markers and a shaded band of +-1.96 clustered s.e. (a
# pointwise 95% interval; compare two curves by their paired difference,
# `mdsd report --paired`, not by overlapping bands) (Hu et al., ICLR 2025,
# Fig. 1). Run by `mdsd plot
# --kind vs-temperature`, which sets through `gnuplot -e`:
#   datafile, boundfile  data blocks ("title" line, then x y err rows),
#                        one per series, separated by two blank lines
#   nseries, nbounds     number of blocks in each
#   outfile, term        output file and gnuplot terminal (with size, font)
#   plottitle            title
#   stylefile            plots/styles.gp: the fixed style of every method
#   seriesmethods, boundschemes   the method / scheme of each block (words)
#   seriesdumps, bounddumps       1-based dump of each block; overlay = 1 when
#                        several dumps are drawn (the dump sets the dash)
#   keyspec              `set key` arguments (legend placement)
set terminal @term
set termoption noenhanced
load stylefile
set output outfile
set title plottitle
set xlabel "temperature T"
set ylabel "acceptance rate α"
set key @keyspec
eval ci_key
set grid
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
plot for [i=0:nbounds-1] boundfile index i using 1:($2 - ci_z * $3):($2 + ci_z * $3) \
         with filledcurves fs transparent solid 0.12 noborder \
         lc rgb (word(boundschemes, i+1) eq "iid" || word(boundschemes, i+1) eq "wor" || \
                 word(boundschemes, i+1) eq "greedy" ? "#000000" : "#595959") notitle, \
     keyentry with filledcurves fs transparent solid 0.12 noborder lc rgb "#000000" \
         title (nbounds > 0 ? "α* band" : ""), \
     for [i=0:nseries-1] datafile index i using 1:2:(ci_z * $3) with yerrorlines \
         lt method_lt(word(seriesmethods, i+1)) \
         dt 0+(overlay ? dump_dt(word(seriesdumps, i+1)) : 1) title columnheader(1), \
     for [i=0:nbounds-1] boundfile index i using 1:2 with linespoints \
         lt bound_lt(word(boundschemes, i+1)) \
         dt 0+(overlay ? bound_dump_dt(word(bounddumps, i+1)) : bound_dt(word(boundschemes, i+1))) \
         title columnheader(1)
unset output
