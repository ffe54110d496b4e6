#!/bin/bash
# Device run 36 (2026-11-30, session 4): the stmatrix epilogue A/B in one lease (bundle gpu_ab36):
#   b_fa  = 45bfb32 (run 35's kernels); b_stm = b_fa + ENCORE_SM90_EPI_STMATRIX=1 (own runner).
# The stmatrix build's kernel test first, then alternating benchmark rounds.
# Usage: bash benchmarks/results/run36.sh BUNDLE
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
for t in "$B"/tests/*; do
  n=$(basename "$t"); timeout 200 "$t" > "$L/t_$n.txt" 2>&1; echo "rc=$?" >> "$L/t_$n.txt"
  echo "$n: $(grep -E '^\[  (PASSED|FAILED)' "$L/t_$n.txt" | tr '\n' ' ') $(tail -1 "$L/t_$n.txt")"
done | tee "$L/tests_summary.txt"
F='gpumode/s./auto/it|fewtiles/.*/auto'
for round in 1 2 3; do
  for v in fa stm; do
    timeout 100 "$B/b_$v" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
done
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
