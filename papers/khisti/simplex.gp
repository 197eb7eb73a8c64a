# simplex.gp - alpha*_iid (n = 2) over the target simplex for a fixed draft q: colour =
# alpha*, open circles = grid points where `mdsd bound -m k2` reports Thm 2's condition
# (alpha* = 1); lines = the condition's boundaries p_k = q_k^2 and p_k = 1 - (1 - q_k)^2;
# star = p = q. Corners: token 1 bottom left, token 2 bottom right, token 3 top. Reads
# simplex.csv.
set terminal pngcairo size 1100,520 font ",10" noenhanced
set output datadir.'/simplex.png'
set datafile separator ","
set multiplot layout 1,2 title "alpha*_iid, two drafts, over the target simplex (colour). Circles: alpha* = 1 by mdsd bound -m k2; dashed: Thm 2 boundaries; star: p = q"
unset border
unset tics
set cbtics 0.1
set size ratio -1
set xrange [-0.08:1.08]
set yrange [-0.08:0.92]
set cbrange [0.4:1]
set palette defined (0.4 "#313695", 0.7 "#74add1", 0.9 "#fee090", 0.999 "#f46d43", 1 "#a50026")
unset key
f = datadir.'/simplex.csv'
X(p1, p2, p3) = p2 + p3 / 2.0
Y(p1, p2, p3) = p3 * sqrt(3) / 2.0
sel(name) = (strcol(1) eq name)
# segment of the line p_k = c inside the simplex, as two points for "with lines"
do for [panel=1:2] {
  name = (panel == 1 ? "uniform" : "skewed")
  q1 = (panel == 1 ? 1.0/3 : 0.5); q2 = (panel == 1 ? 1.0/3 : 0.3); q3 = (panel == 1 ? 1.0/3 : 0.2)
  if (panel == 1) { unset colorbox; set lmargin at screen 0.02; set rmargin at screen 0.46 } \
  else { set colorbox vertical user origin screen 0.95, screen 0.15 size screen 0.015, screen 0.65; set lmargin at screen 0.49; set rmargin at screen 0.93 }
  set tmargin at screen 0.86; set bmargin at screen 0.04
  set title (panel == 1 ? "q = (1/3, 1/3, 1/3)" : "q = (0.5, 0.3, 0.2)")
  unset arrow
  set arrow from 0,0 to 1,0 nohead lc rgb "black" front
  set arrow from 1,0 to 0.5,sqrt(3)/2 nohead lc rgb "black" front
  set arrow from 0.5,sqrt(3)/2 to 0,0 nohead lc rgb "black" front
  do for [k=1:3] {
    qk = (k == 1 ? q1 : k == 2 ? q2 : q3)
    do for [m=1:2] {
      c = (m == 1 ? qk**2 : 1 - (1 - qk)**2)
      if (k == 1) { ax = X(c, 1-c, 0); ay = Y(c, 1-c, 0); bx = X(c, 0, 1-c); by = Y(c, 0, 1-c) }
      if (k == 2) { ax = X(1-c, c, 0); ay = Y(1-c, c, 0); bx = X(0, c, 1-c); by = Y(0, c, 1-c) }
      if (k == 3) { ax = X(1-c, 0, c); ay = Y(1-c, 0, c); bx = X(0, 1-c, c); by = Y(0, 1-c, c) }
      set arrow from ax,ay to bx,by nohead lc rgb "#444444" dt 2 lw 1.5 front
    }
  }
  set label 1 "1" at -0.04,-0.03 center
  set label 2 "2" at 1.04,-0.03 center
  set label 3 "3" at 0.5,0.9 center
  plot f using (sel(name) ? X($2,$3,$4) : 1/0):(Y($2,$3,$4)):5 with points pt 5 ps 2.4 palette notitle, \
       f using (sel(name) && strcol(6) eq "true" ? X($2,$3,$4) : 1/0):(Y($2,$3,$4)) with points pt 6 ps 1.2 lc rgb "black" notitle, \
       '+' using (X(q1,q2,q3)):(Y(q1,q2,q3)) every ::0::0 with points pt 3 ps 2.5 lw 2 lc rgb "white" notitle
}
unset multiplot
