# colors.gp - line colours shared by the papers/ gnuplot scripts (colour-blind safe).
set linetype 1 lc rgb "#0072b2" lw 2
set linetype 2 lc rgb "#d55e00" lw 2
set linetype 3 lc rgb "#009e73" lw 2
set linetype 4 lc rgb "#cc79a7" lw 2
set linetype 5 lc rgb "#000000" lw 2
set linetype 6 lc rgb "#e69f00" lw 2
set linetype 7 lc rgb "#56b4e9" lw 2
set linetype 8 lc rgb "#999999" lw 2
