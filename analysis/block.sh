#!/bin/sh
# block.sh - block-efficiency study on a tree dump (mdsd-runner --tree-policy; data/README.md,
# 'Tree dumps'): E[tau] (tokens per target call) of every verifier against the draft
# depth, and the speed-up E[tau] / (1 + c L) for draft costs c.
#
#   analysis/block.sh TREES.h5 [OUTDIR]          (default OUTDIR: build/analysis/block)
#   VERIFIERS=rrs,kseq COSTS=0,0.1,0.3 analysis/block.sh data/kjv-trees.h5 out/
#
# Writes OUTDIR/block.csv (mdsd block's tidy CSV), block.md, block.tex, and the
# figures block-vs-depth (E[tau] against L at the largest number of sequences or
# tree widths, cost 0) and block-speedup (the speed-up against L, one dash per cost).
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { sed -n 2,11p "$0" >&2; exit 2; }
dump=$1
out=${2:-build/analysis/block}
need_dump "$dump"
mkdir -p "$out"
COSTS=${COSTS:-0,0.1,0.3}
vopt=""
[ -n "${VERIFIERS:-}" ] && vopt="--verifiers $VERIFIERS"
run "$MDSD" block "$dump" $vopt --cost "$COSTS" ${THREADS:+--threads $THREADS} \
  -o "$out/block.csv" --markdown "$out/block.md" --latex "$out/block.tex"

# Terminal size and font: the presets of `mdsd plot --size` (src/cli/cmd_plot.c).
case "$SIZE" in
  screen) inches=6in,4in; pixels=900,600; fpt=10; fpx=12 ;;
  column) inches=3.4in,2.6in; pixels=1020,780; fpt=7; fpx=17 ;;
  full) inches=7in,3in; pixels=1400,600; fpt=9; fpx=15 ;;
  *) echo "block.sh: SIZE must be screen, column or full (got '$SIZE')" >&2; exit 2 ;;
esac
case "$FORMAT" in
  png) term="pngcairo size $pixels font \",$fpx\"" ;;
  svg) term="svg size $pixels font \",$fpx\"" ;;
  pdf) term="pdfcairo size $inches font \",$fpt\"" ;;
  *) echo "block.sh: FORMAT must be png, svg or pdf (got '$FORMAT')" >&2; exit 2 ;;
esac
[ "$SIZE" = column ] && key="at screen 0.5, screen 0.01 center bottom horizontal box maxcols 3 samplen 2; set bmargin at screen 0.25" \
  || key="outside right top vertical box"
figdir=${FIGDIR:-$out}
mkdir -p "$figdir"
scripts="$here/../plots"

# blocks CSV COSTMODE: one gnuplot data block per series, written to $work/data, the
# verifier of each block to $work/methods and its dash to $work/dashes. Series: each
# (verifier, policy) at the policy's largest setting (sequences K, or the widest tree);
# COSTMODE 0: cost 0 only, y = block_efficiency; 1: every cost, y = speedup (dash = cost).
blocks() {
  awk -F, -v mode="$2" -v work="$work" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { setting = ($(c["policy"]) == "seq") ? $(c["sequences"]) + 0 : length($(c["widths"]))
      key = $(c["verifier"]) SUBSEP $(c["policy"]) SUBSEP $(c["scheme"])
      if (!(key in best) || setting > best[key]) best[key] = setting
      row[NR] = $0 }
    END {
      n = 0
      for (r = 2; r <= NR; r++) {
        split(row[r], f, ",")
        key = f[c["verifier"]] SUBSEP f[c["policy"]] SUBSEP f[c["scheme"]]
        setting = (f[c["policy"]] == "seq") ? f[c["sequences"]] + 0 : length(f[c["widths"]])
        if (setting != best[key]) continue
        if (mode == 0 && f[c["cost"]] + 0 != 0) continue
        label = f[c["verifier"]] " (" (f[c["policy"]] == "seq" ? "K = " f[c["sequences"]] : \
                "tree " f[c["widths"]] ", " f[c["scheme"]]) ")"
        if (mode == 1) label = label ", c = " f[c["cost"]] + 0
        s = label
        if (!(s in id)) { id[s] = n; name[n] = s; method[n] = f[c["verifier"]]
                          cost[n] = f[c["cost"]] + 0; n++ }
        k = id[s]; cnt[k]++
        pt[k, cnt[k]] = f[c["depth"]] " " (mode == 0 ? f[c["block_efficiency"]] : f[c["speedup"]]) \
                        " " (mode == 0 ? f[c["stderr"]] : f[c["stderr"]] / (1 + f[c["cost"]] * f[c["depth"]]))
      }
      nc = 0
      for (k = 0; k < n; k++) if (!(cost[k] in dash)) dash[cost[k]] = ++nc
      for (k = 0; k < n; k++) {
        printf "\"%s\"\n", name[k] > (work "/data")
        for (j = 1; j <= cnt[k]; j++) print pt[k, j] > (work "/data")
        printf "\n\n" > (work "/data")
        printf "%s ", method[k] > (work "/methods")
        printf "%d ", (mode == 1 ? dash[cost[k]] : 1) > (work "/dashes")
      }
      print n > (work "/count")
    }' "$1"
}

json_string() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

# FIG.provenance.json beside a figure, as `mdsd plot` writes it: the source CSV and
# that CSV's own provenance, verbatim.
provenance() { # provenance FIG
  {
    printf '{"tool":"analysis/block.sh","version":%s,"created_utc":"%s","output":%s,"source":%s,' \
      "$(json_string "$("$MDSD" --version | cut -d' ' -f2)")" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "$(json_string "$(basename "$1")")" "$(json_string "$out/block.csv")"
    printf '"source_provenance":'
    if [ -f "$out/block.csv.provenance.json" ]; then tr -d '\n' < "$out/block.csv.provenance.json"; else printf null; fi
    printf '}\n'
  } > "$1.provenance.json.tmp" && mv -f "$1.provenance.json.tmp" "$1.provenance.json"
}

draw() { # draw NAME YLABEL
  tmp="$figdir/.$1.$FORMAT.tmp"
  run gnuplot -e "datafile='$work/data'; nseries=$(cat "$work/count"); seriesmethods='$(cat "$work/methods")'; \
seriesdash='$(cat "$work/dashes")'; outfile='$tmp'; term='$term'; plottitle='$(basename "$dump")'; \
ylabeltext='$2'; keyspec='$key'; stylefile='$scripts/styles.gp'" "$scripts/block-depth.gp" &&
    provenance "$figdir/$1.$FORMAT" && mv -f "$tmp" "$figdir/$1.$FORMAT"
}

work=$(mktemp -d)
trap 'rm -rf "$work"; rm -f "$figdir"/.block-*.tmp "$figdir"/block-*.provenance.json.tmp' EXIT INT TERM
blocks "$out/block.csv" 0
draw block-vs-depth "block efficiency E[τ] (tokens per target call)"
rm -f "$work/data" "$work/methods" "$work/dashes"
blocks "$out/block.csv" 1
draw block-speedup "speed-up E[τ] / (1 + c L)"
echo "== $out: block.csv, block.md, block.tex, figures block-vs-depth, block-speedup"
