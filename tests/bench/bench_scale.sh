#!/bin/sh
# bench_scale.sh MPI_MDSD [NP...] - the scaling figures of README's "Running on a
# cluster" (not a test): the table job below on data/kjv-ngram.h5, run REPS times
# (default 5) for each rank count, interleaved; prints the median wall time, CPU
# time (user + sys of mpirun and its ranks, or of the one process for 1 rank) and
# position-units per CPU-second per rank, and checks that every run wrote the
# single-process bytes. 1 rank = the binary run without mpirun.
set -eu
mdsd=$1
shift
nps=${*:-1 2}
reps=${REPS:-5}
dump=${DUMP:-data/kjv-ngram.h5}
job="-t 0.3,0.5,0.7,0.9,1.0,1.2 -d 2,3,4 -s iid,wor,greedy -v rrs,kseq,greedy --draft-model kn2,kn3 --threads 1"
units=$((723 * 6 * 2)) # positions x temperatures x drafter columns
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ "$i" -lt "$reps" ]; do
  for np in $nps; do
    if [ "$np" -eq 1 ]; then
      /usr/bin/time -f "$np %e %U %S" -a -o "$out/times" "$mdsd" table "$dump" $job -o "$out/r$np.csv" 2>/dev/null
    else
      /usr/bin/time -f "$np %e %U %S" -a -o "$out/times" mpirun --oversubscribe -np "$np" "$mdsd" table \
        "$dump" $job -o "$out/r$np.csv" 2>/dev/null
    fi
    [ "$np" -eq 1 ] || cmp -s "$out/r1.csv" "$out/r$np.csv" 2>/dev/null || [ ! -e "$out/r1.csv" ] ||
      { echo "ranks $np: the CSV differs from one process's"; exit 1; }
  done
  i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${BENCH_DEBUG:-}" ] && cat "$out/times"
echo "ranks  wall_s  cpu_s  cpu_per_rank_s  units_per_cpu_s_per_rank"
for np in $nps; do
  awk -v np="$np" -v units="$units" '
    BEGIN { n = 0 }
    $1 == np { w[n] = $2; c[n] = $3 + $4; n++ }
    function median(a, n,   i, j, t) {
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2 }
    END { mw = median(w, n); mc = median(c, n)
          printf "%5d  %6.1f  %5.1f  %14.1f  %24.0f\n", np, mw, mc, mc / np, units / np / (mc / np) }' "$out/times"
done
