# fig2.gp - Khisti et al. Fig. 2 analogue: acceptance with n = 2 iid drafts from
# q = (1/3, 1/3, 1/3) as the target moves along p = (p1, t, 1 - p1 - t): the optimum
# (Thm 3; `is` with the full LP on top), SpecTr's k-Seq and SpecInfer's RRS. The thick band
# at 1 marks where Thm 2's condition (alpha* = 1) holds. Reads fig2.csv.
set terminal pngcairo size 1000,430 font ",10" noenhanced
load 'plots/styles.gp'   # the fixed style of each method (run from the repository root)
set output datadir.'/fig2.png'
set datafile separator ","
set multiplot layout 1,2 title "Khisti Fig. 2 analogue: draft q = (1/3, 1/3, 1/3), two drafts"
set xlabel "t = p(token 2)"
set ylabel "acceptance probability"
set key left bottom box
set grid
set yrange [0.4:1.03]
f = datadir.'/fig2.csv'
sel(panel, col) = ($1 == panel ? column(col) : 1/0)
one(panel) = ($1 == panel && strcol(7) eq "true" ? 1.0 : 1/0)
do for [panel=1:2] {
  set title (panel == 1 ? "target p = (1/3, t, 2/3 - t)" : "target p = (1/6, t, 5/6 - t)")
  set xrange [0:(panel == 1 ? 2.0/3 : 5.0/6)]
  plot f using 2:(one(panel)) with lines lw 10 lc rgb "#5aae61" title "Thm 2: α* = 1", \
       f using 2:(sel(panel, 6)) with lines lt bound_lt("iid") title "optimal α* (Thm 3)", \
       f using 2:(sel(panel, 10)) every 3 with points lt method_lt("is") title "IS, full LP", \
       f using 2:(sel(panel, 11)) with lines lt method_lt("kseq") title "SpecTr (k-Seq)", \
       f using 2:(sel(panel, 12)) with lines lt method_lt("rrs") title "SpecInfer (RRS)"
}
unset multiplot
