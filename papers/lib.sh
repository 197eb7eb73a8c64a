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
    d = $0; sub(/.*"max_disagreement":/, "", d); sub(/}.*/, "", d)
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
