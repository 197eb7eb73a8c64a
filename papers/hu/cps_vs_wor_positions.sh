#!/bin/sh
# Per position of the shipped dump: is Hu et al.'s cps alpha* above or below the true
# without-replacement alpha* (n = 3)? Writes papers/hu/cps_vs_wor_positions.csv
# (temperature, positions, cps_above, cps_below, equal; a tie within 1e-12).
# Run from the repository root after `make`.
set -eu
MDSD=${MDSD:-./mdsd}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=papers/hu/cps_vs_wor_positions.csv
echo "temperature,positions,cps_above,cps_below,equal" > "$tmp/out.csv"
for T in 0.1 0.3 0.5 0.7 0.9; do
  "$MDSD" table data/kjv-ngram.h5 -o "$tmp/t.csv" -t "$T" -d 3 -s wor,cps \
    --per-position "$tmp/pos.csv" --discard-partial > /dev/null
  /usr/bin/python3 - "$T" "$tmp/pos.csv" >> "$tmp/out.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[2])))
wor = next(c for c in rows[0] if c.startswith("alpha_star_wor"))
cps = next(c for c in rows[0] if c.startswith("alpha_star_cps"))
above = sum(float(r[cps]) > float(r[wor]) + 1e-12 for r in rows)
below = sum(float(r[cps]) < float(r[wor]) - 1e-12 for r in rows)
print(f"{sys.argv[1]},{len(rows)},{above},{below},{len(rows) - above - below}")
PY
done
mv "$tmp/out.csv" "$out"
cat "$out"
