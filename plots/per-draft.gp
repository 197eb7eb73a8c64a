# per-draft.gp - acceptance rate of each draft position j = 1..n, one bar per
# (scheme, verifier) in a group at each j: how acceptance decays along the
# drafts (SpecHub, EMNLP 2024, Fig. 9). j is discrete, so bars side by side
# rather than lines between the positions. Variables as in vs-temperature.gp
# (x is j, no bounds); overlaid dumps are told apart by the fill's density.
set terminal @term
set termoption noenhanced
load stylefile
set output outfile
set title plottitle
set xlabel "draft j"
set ylabel "P(draft j is the accepted one)"
set xtics 1 scale 0
set key @keyspec
set grid ytics
set autoscale xfix
set offsets 0.1, 0.1, graph 0.05, 0   # the bars reach 0.4 either side of j
set yrange [0:*]
barwidth = 0.8 / (nseries > 0 ? nseries : 1)
barx(x, i) = x + (i - (nseries - 1) / 2.0) * barwidth
bardensity(i) = overlay ? (dump_dt(word(seriesdumps, i+1)) <= 3 ? 1.15 - 0.3 * dump_dt(word(seriesdumps, i+1)) : 0.25) : 0.85
plot for [i=0:nseries-1] datafile index i using (barx($1, i)):2:(barwidth) with boxes \
         lt method_lt(word(seriesmethods, i+1)) fs solid bardensity(i) border lt -1 \
         title columnheader(1)
unset output
