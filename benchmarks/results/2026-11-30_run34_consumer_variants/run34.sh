#!/bin/bash
# Device run 34 (2026-11-30, session 4): consumer variants A/B in one lease (bundle gpu_ab34):
#   b_head  = af5b5ef (run 33's b_new);
#   b_fa    = accumulator fences limited to the width's accumulators (FenceAcc<kN>), default;
#   b_bufs3 = b_fa + three weight-fragment buffers (wait_group 2 before each build);
#   b_raw9  = b_fa + nine raw (weight) stages instead of six.
# Kernel tests of b_fa, b_bufs3, b_raw9 first, then alternating benchmark rounds, then ncu of s2.
# Usage: bash benchmarks/results/run34.sh BUNDLE
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
pack() { tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .; }
{ date -u; nvidia-smi -L; } > "$L/env.txt" 2>&1
for t in "$B"/tests/*; do
  n=$(basename "$t"); timeout 200 "$t" > "$L/t_$n.txt" 2>&1; echo "rc=$?" >> "$L/t_$n.txt"
  echo "$n: $(grep -E '^\[  (PASSED|FAILED)' "$L/t_$n.txt" | tr '\n' ' ') $(tail -1 "$L/t_$n.txt")"
done | tee "$L/tests_summary.txt"
F=${BENCH_FILTER:-'gpumode/s./(auto|persistent)/it|fewtiles/.*/auto'}
for round in 1 2; do
  for v in head fa bufs3 raw9; do
    timeout 150 "$B/b_$v" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
  pack
done
