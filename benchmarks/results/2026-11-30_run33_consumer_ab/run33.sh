#!/bin/bash
# Device run 33 (2026-11-30, session 4): consumer changes A/B in one lease. Builds (bundle gpu_ab):
#   b_head  = 40964ed (session-3 kernels);
#   b_new   = 3-op weight unpacking (two shifted copies + one lop3) and shared-window addressing
#             (mbarriers, TMA, ld.shared from one 32-bit base, no cvta per use), pipe 1;
#   b_pipe2 = b_new + ENCORE_SM90_CONSUMER_PIPE=2 (cross-k-block pipe, simple kernels only).
# Tests of both new builds (and weights-normal) first, then alternating benchmark rounds.
# Usage: bash benchmarks/results/run33.sh BUNDLE
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
F=${BENCH_FILTER:-'gpumode/s./(auto|simple|persistent)/it|fewtiles/.*/auto'}
for round in 1 2; do
  for v in head new pipe2; do
    timeout 150 "$B/b_$v" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
  pack
done
