#!/bin/sh
# Small valid dumps as seeds for fuzz_dump: tests/fuzz/seed_dumps.sh DIR [MDSD]
set -e
dir=$1
mdsd=${2:-./mdsd}
mkdir -p "$dir"
"$mdsd" toy --family zipf --vocab 4 --positions 6 --samples 2 --seed 1 -o "$dir/f32.h5" >/dev/null
"$mdsd" toy --family uniform --vocab 3 --positions 5 --samples 1 --seed 2 --dtype float16 --chunk-rows 2 -o "$dir/f16.h5" >/dev/null
"$mdsd" toy --family dirichlet --vocab 5 --positions 4 --samples 2 --seed 3 --dtype bfloat16 --drafts a,b -o "$dir/bf16.h5" >/dev/null
"$mdsd" toy --family zipf --vocab 6 --positions 8 --samples 2 --seed 4 --gzip 1 --chunk-rows 4 -o "$dir/gzip.h5" >/dev/null
