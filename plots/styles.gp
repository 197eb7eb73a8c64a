# styles.gp - THE style table: one fixed colour, marker and dash per method,
# loaded by every figure of `mdsd plot` (plots/*.gp) and by the papers/ scripts
# that draw the same methods, so a method looks the same in every figure.
#
# Verifiers: a colour of their own (dark enough for white paper and greyscale
# print: contrast >= 3:1 against white), a filled marker, solid line.
# alpha* of a scheme: black or dark grey, an open marker, dashed.
# Linetype numbers are part of this table: a script selects a method's style
# with `lt method_lt("rrs")` or `lt bound_lt("wor")`.
set encoding utf8

# Marker size multiplier: 1 for raster output; `mdsd plot` passes a smaller one for its
# PDF presets, where gnuplot's point unit is large against a paper-sized figure (markers
# would hide the error bars).
if (!exists("pointscale")) pointscale = 1.0

method_names = "sd rrs rrsw kseq spechub greedy is otm"
#                                          colour          marker          dash
set linetype 1  lc rgb "#4d4d4d" lw 2 pt 13 ps 1.4*pointscale dt 1  # sd       dark grey, filled diamond
set linetype 2  lc rgb "#0072b2" lw 2 pt 7  ps 1.3*pointscale dt 1  # rrs      blue, filled circle
set linetype 3  lc rgb "#6a3d9a" lw 2 pt 5  ps 1.2*pointscale dt 1  # rrsw     purple, filled square
set linetype 4  lc rgb "#d55e00" lw 2 pt 9  ps 1.5*pointscale dt 1  # kseq     vermillion, filled triangle
set linetype 5  lc rgb "#8c510a" lw 2 pt 11 ps 1.5*pointscale dt 1  # spechub  brown, filled down-triangle
set linetype 6  lc rgb "#007a5e" lw 2 pt 15 ps 1.5*pointscale dt 1  # greedy   green, filled pentagon
set linetype 7  lc rgb "#b3006b" lw 2 pt 3  ps 1.3*pointscale dt 1  # is       magenta, star
set linetype 8  lc rgb "#666600" lw 2 pt 2  ps 1.3*pointscale dt 1  # otm      olive, cross
set linetype 9  lc rgb "#333333" lw 2 pt 1  ps 1.0*pointscale dt 1  # any other method
# Methods outside the table (`is-top5`, `is-top50`, ...) each get the next of these, in
# the order of `othermethods` (the distinct ones of a figure, which `mdsd plot` passes):
# colours not in the table, contrast >= 3:1 against white, the markers of the table.
set linetype 21 lc rgb "#1f5f8b" lw 2 pt 9  ps 1.4*pointscale dt 1  # other 1  steel blue, triangle
set linetype 22 lc rgb "#a6265e" lw 2 pt 5  ps 1.2*pointscale dt 1  # other 2  raspberry, square
set linetype 23 lc rgb "#5b7a00" lw 2 pt 7  ps 1.3*pointscale dt 1  # other 3  moss, circle
set linetype 24 lc rgb "#7a4c00" lw 2 pt 13 ps 1.4*pointscale dt 1  # other 4  umber, diamond
set linetype 25 lc rgb "#4b3c8c" lw 2 pt 11 ps 1.4*pointscale dt 1  # other 5  indigo, down-triangle
set linetype 26 lc rgb "#00757a" lw 2 pt 15 ps 1.4*pointscale dt 1  # other 6  teal, pentagon

scheme_names = "iid wor greedy hub cps multi custom"
set linetype 11 lc rgb "#000000" lw 2 pt 6  ps 1.5*pointscale dt 2  # alpha* iid     black, open circle, dashed
set linetype 12 lc rgb "#000000" lw 2 pt 4  ps 1.4*pointscale dt 4  # alpha* wor     black, open square, dash-dot
set linetype 13 lc rgb "#000000" lw 2 pt 14 ps 1.6*pointscale dt 3  # alpha* greedy  black, open pentagon, dotted
set linetype 14 lc rgb "#595959" lw 2 pt 10 ps 1.2*pointscale dt 2  # alpha* hub     grey, open down-triangle, dashed
set linetype 15 lc rgb "#595959" lw 2 pt 8  ps 1.2*pointscale dt 4  # alpha* cps     grey, open triangle, dash-dot
set linetype 16 lc rgb "#595959" lw 2 pt 12 ps 1.2*pointscale dt 3  # alpha* multi   grey, open diamond, dotted
set linetype 17 lc rgb "#595959" lw 2 pt 12 ps 1.2*pointscale dt 5  # alpha* custom
set linetype 18 lc rgb "#000000" lw 2 pt 6  ps 1.1*pointscale dt 2  # alpha* of any other scheme

# word index of w in list (0 if absent)
word_index(list, w) = sum [k=1:words(list)] (word(list, k) eq w ? k : 0)
if (!exists("othermethods")) othermethods = ""
other_lt(m) = (word_index(othermethods, m) > 0 ? 20 + (word_index(othermethods, m) - 1) % 6 + 1 : 9)
method_lt(m) = (word_index(method_names, m) > 0 ? word_index(method_names, m) : other_lt(m))
bound_lt(s) = (word_index(scheme_names, s) > 0 ? 10 + word_index(scheme_names, s) : 18)

# Several dumps or drafters overlaid: the method keeps its colour and marker,
# the dump sets the dash (1 solid, 2 dashed, 3 dotted, 4 dash-dot, ...).
overlay_dt(d) = (d <= 1 ? 1 : d == 2 ? 2 : d == 3 ? 3 : d == 4 ? 4 : 5)
# the dash of alpha* of a scheme (the linetype's own, for `dt` expressions)
bound_dt(s) = int(word("2 4 3 2 4 3 5 2", (word_index(scheme_names, s) > 0 ? word_index(scheme_names, s) : 8)))
dump_dt(s) = (s eq "" ? 1 : overlay_dt(int(s)))
# alpha* is never solid: overlaid, its dash is the one after its dump's (dump 1 dashed,
# dump 2 dotted, ...); the verifiers of dump d keep overlay_dt(d)
bound_dump_dt(s) = (s eq "" ? 2 : overlay_dt(int(s) + 1))

# THE interval convention of every figure: error bars and bands are 95% confidence
# intervals, ±ci_z clustered s.e. (the CSV's s.e. column times ci_z), and the figure says
# so in its key's title (or, with no key, a label in the corner): `eval ci_key` after
# `set key`.
ci_z = 1.96
ci_note = "bars, bands: 95% CI (±1.96 s.e.)"
ci_key = "set key title ci_note; if (exists('keyspec') && keyspec eq 'off') " . \
         "set label 101 ci_note at graph 0.01, graph 0.98 left front"
