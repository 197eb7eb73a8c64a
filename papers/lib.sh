# lib.sh - shell helpers shared by the papers/*/run.sh scripts (sourced, not run).
# Every script runs from the repository root with ./mdsd built (`make`).

set -euo pipefail
MDSD=${MDSD:-./mdsd}
[ -x "$MDSD" ] || { echo "papers: $MDSD not found; run 'make' first" >&2; exit 1; }
export LC_ALL=C

# jnum KEY: the first number stored under "KEY" in the JSON on standard input.
jnum() { sed -n "s/.*\"$1\":\([-+0-9.eE]*\).*/\1/p" | head -n 1; }

# vec V EXPR: a comma-separated vector of V values; EXPR is an awk expression in i
# (0-based), e.g. vec 4 '1/4'.
vec() { awk -v V="$1" "BEGIN { for (i = 0; i < V; i++) printf \"%s%.17g\", (i ? \",\" : \"\"), $2 }"; }

# alpha ARGS...: alpha (JSON) of an mdsd command, e.g. alpha bound -p .. -q .. -n 2 -s iid
alpha() { "$MDSD" "$@" --json | jnum alpha; }

# note MSG: progress on standard error.
note() { printf '%s\n' "$*" >&2; }

# routes ARGS...: one line "alpha* = A over routes R1,R2,..; largest disagreement D" from
# `mdsd bound ARGS --method all --json`.
routes() {
  "$MDSD" bound "$@" -m all --json | awk '{
    a = $0; sub(/^\{"alpha":/, "", a); sub(/,.*/, "", a)
    d = $0; sub(/.*"max_disagreement":/, "", d); sub(/[,}].*/, "", d)
    r = ""; s = $0; sub(/.*"methods":\[/, "", s)
    n = split(s, obj, /\},\{/)
    for (k = 1; k <= n; k++) {
      if (!match(obj[k], /"method":"[a-z0-9-]+"/)) continue
      m = substr(obj[k], RSTART + 10, RLENGTH - 11)
      if (m == "all") continue
      if (obj[k] ~ /"skipped"/) m = m " (skipped: too big)"
      r = r (r == "" ? "" : ", ") m
    }
    printf "alpha* = %s by %s; largest disagreement %s\n", a, r, d }'
}

# csv_cat OUT IN...: the rows of CSVs whose headers extend one another (mdsd table at
# different n has per_draft_1..per_draft_n) as one rectangular CSV: the longest header,
# empty cells where a file has fewer columns. Written to a temporary file, then renamed.
csv_cat() {
  local out=$1; shift
  /usr/bin/python3 - "$out" "$@" <<'PY'
import csv, os, sys
out, ins = sys.argv[1], sys.argv[2:]
tables = []
for path in ins:
    with open(path, newline="") as f:
        tables.append(list(csv.reader(f)))
header = max((t[0] for t in tables), key=len)
for path, t in zip(ins, tables):
    if t[0] != header[:len(t[0])]:
        sys.exit(f"csv_cat: {path}: header {t[0]} is not a prefix of {header}")
    for k, row in enumerate(t[1:], 2):
        if len(row) != len(t[0]):
            sys.exit(f"csv_cat: {path}:{k}: {len(row)} fields, its header has {len(t[0])}")
with open(out + ".tmp", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(header)
    for t in tables:
        for row in t[1:]:
            w.writerow(row + [""] * (len(header) - len(row)))
os.replace(out + ".tmp", out)
PY
}

# kseq_mc CSV DUMP ARGS...: K-SEQ by Monte Carlo (Hu's "K-SEQ" row; plain kseq is the exact
# rate, their alpha_K-SEQ "theory"): appends the rows of `mdsd table DUMP ARGS -s iid -v kseq
# --simulate --trials 1000 --seed 2` to CSV as method kseq-mc.
kseq_mc() {
  local csv=$1 dump=$2 tmp; shift 2
  tmp=$(mktemp -d)
  "$MDSD" table "$dump" -o "$tmp/mc.csv" -s iid -v kseq --simulate --trials 1000 --seed 2 "$@" 2> /dev/null \
    || { rm -rf "$tmp"; echo "papers: K-SEQ Monte Carlo on $dump failed" >&2; return 1; }
  awk -F, 'NR > 1 && $5 == "kseq" { $5 = "kseq-mc"; print }' OFS=, "$tmp/mc.csv" >> "$csv"
  rm -rf "$tmp"
}

# The two model pairs' large dumps (data/README.md, "Pair dumps"; `make pair-dumps`,
# `make pair-trees`), PAIR = ngram or neural:
#   DUMP=$(pair_dump PAIR T)     the dump whose responses were generated at temperature T
#   DRAFTS=$(pair_drafters PAIR) its drafters, the smaller first (for --draft-model)
#   TREES=$(pair_trees PAIR)     its tree dump (a directory of parts, for mdsd block)
PAIR_DIR=${PAIR_DIR:-build/pairs}
pair_check() {
  [ -e "$1" ] || { echo "papers: $1 not found; run 'make $2' (data/README.md, \"Pair dumps\")" >&2; return 1; }
  printf '%s\n' "$1"
}
pair_dump() { pair_drafters "$1" > /dev/null && pair_check "$PAIR_DIR/kjv-$1-T$(printf %g "$2").h5" pair-dumps; }
# pair_trees PAIR [-L8]: the L = 4 tree dump, or with -L8 that of `make pair-trees-l8`
pair_trees() { pair_drafters "$1" > /dev/null && pair_check "$PAIR_DIR/kjv-$1-trees$2" "pair-trees${2:+-l8}"; }
pair_drafters() {
  case $1 in
    ngram) echo kn2,kn3 ;;
    neural) echo tf1,tf2 ;;
    *) echo "papers: no model pair '$1' (ngram or neural)" >&2; return 1 ;;
  esac
}
