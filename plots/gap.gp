# gap.gp - gap between each verifier's acceptance rate and its scheme's
# optimal alpha* against temperature, with the paired standard error (the
# Delta-alpha of Hu et al., ICLR 2025, Table 1), bars 95% CIs (styles.gp). Variables as in
# vs-temperature.gp (no bounds).
set terminal @term
set termoption noenhanced
load stylefile
set output outfile
set title plottitle
set xlabel "temperature T"
set ylabel "gap α − α* of the scheme"
set xzeroaxis lt -1
set key @keyspec
eval ci_key
set grid
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
plot for [i=0:nseries-1] datafile index i using 1:2:(ci_z * $3) with yerrorlines \
         lt method_lt(word(seriesmethods, i+1)) \
         dt 0+(overlay ? dump_dt(word(seriesdumps, i+1)) : 1) title columnheader(1)
unset output
