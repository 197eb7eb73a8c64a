# lib.sh - shared by the analysis/ recipes: finds mdsd, parses the common
# environment knobs and prints what it runs.
#   MDSD      the mdsd binary (default: ./mdsd of this repository, else mdsd on PATH)
#   TRIALS    Monte-Carlo trials per position for verifiers without an exact form
#   THREADS   OpenMP threads (default: all cores)
#   POSITIONS rows a:b of every dump (default: all)
#   SIZE      figure size preset: screen, column or full (default screen)
#   FORMAT    figure format: png, svg or pdf (default png)
#   FIGDIR    where the figures go (default: OUTDIR)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${MDSD:-}" ]; then
  if [ -x "$here/../mdsd" ]; then MDSD="$here/../mdsd"; else MDSD=mdsd; fi
fi
SIZE=${SIZE:-screen}
FORMAT=${FORMAT:-png}
common=""
[ -n "${THREADS:-}" ] && common="$common --threads $THREADS"
[ -n "${POSITIONS:-}" ] && common="$common --positions $POSITIONS"
run() { echo "+ $*" >&2; "$@"; }
figure() { # figure CSV KIND NAME [plot options...]
  csv=$1; kind=$2; name=$3; shift 3
  mkdir -p "${FIGDIR:-$out}"
  run "$MDSD" plot "$csv" --kind "$kind" --size "$SIZE" -o "${FIGDIR:-$out}/$name.$FORMAT" "$@"
}
need_dump() {
  [ -f "$1" ] || { echo "$(basename "$0"): no dump '$1'" >&2; exit 1; }
}
