#!/bin/bash
# Device run 25 (2026-11-30, session 3): the consumer-pipe and no-weight-dequant builds of the
# default (narrow + pre-pass) kernel against the default, same filter, one lease.
# Usage: bash benchmarks/results/run25.sh BUNDLE (b_default, b_pipe, b_exp_nowgt in it)
B=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$B
L=${OUT:-/tmp/out}/logs
mkdir -p "$L"
F='gpumode/s./auto|fewtiles/decode8/auto|fewtiles/one_tile/auto|prepass_even/k7168/nt8/prepass'
for round in 1 2; do
  for v in default pipe exp_nowgt; do
    timeout 120 "$B/b_$v" --benchmark_filter="$F" --benchmark_out="$L/bench_${v}_$round.json" \
      --benchmark_out_format=json > "$L/bench_${v}_$round.txt" 2>&1
    echo "== $v round $round"; grep median "$L/bench_${v}_$round.txt" | awk '{print $1, $2, $3}'
  done
done
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
