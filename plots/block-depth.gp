# block-depth.gp - the block CSV's figures (`mdsd plot --kind block-depth|block-speedup|
# block-reach`, from `mdsd block -o`): block efficiency E[tau] (tokens per target call)
# against the draft depth L, one line per verifier and policy (SpecTr Fig. 3, Khisti et
# al. Fig. 4 analogues); the speed-up E[tau] / (1 + c L), the draft cost c setting the
# dash; or the reach P(at least d accepted) against the position d. Error bars: 95% CIs, the s.e.
# column times ci_z = 1.96 (styles.gp). `mdsd plot` sets through `gnuplot -e`:
#   datafile           data blocks ("title" line, then x y s.e. rows), separated by two
#                      blank lines (gnuplot's `index`); boundfile, nbounds: unused
#   nseries            number of blocks
#   seriesmethods      the verifier of each block (words): its fixed style from styles.gp
#   seriesdumps, overlay  the cost of each block (1-based) when several are drawn;
#                      costlist: those costs (words)
#   xlabeltext, ylabeltext, outfile, term, plottitle, keyspec, stylefile (as the others)
set terminal @term
set termoption noenhanced
load stylefile
set output outfile
set title plottitle
set xlabel xlabeltext
set xtics 1
set ylabel ylabeltext
set key @keyspec
eval ci_key
set grid
# L (d) is discrete: ticks at the data's depths only, half a step of margin either side
set autoscale xfix
set offsets 0.5, 0.5, graph 0.05, graph 0.05
# several costs (the speed-up): a series' title is its verifier's at the first cost only
# (empty at the others), and the dashes have entries of their own, "c = 0.1", from costlist
plot for [i=0:nseries-1] datafile index i using 1:2:(ci_z * $3) with yerrorlines \
         lt method_lt(word(seriesmethods, i+1)) \
         dt 0+(overlay ? dump_dt(word(seriesdumps, i+1)) : 1) title columnheader(1), \
     for [j=1:(overlay ? words(costlist) : 0)] keyentry with lines lc rgb "#333333" lw 2 \
         dt 0+dump_dt(sprintf("%d", j)) title sprintf("c = %s", word(costlist, j))
unset output
