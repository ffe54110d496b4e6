#!/bin/bash
# Device run 122 (2026-12-01, session 18): an epilogue term in the schedules' cost model
# (StreamKCosts::epilogue_per_row: units per token row of a tile's end, in 32-row chunks) for the
# stream-K partition (shape 0, one_tile) and the packed persistent schedule (shape 1), candidates
# kSkCosts[1..4] against the defaults [0], all in one binary, ROUNDS rounds.
# Usage (repo root; carry gpu_a122.tar.xz = tools/ab_bundle.sh gpu_a122):
#   bash benchmarks/results/2026-12-01_run122_epilogue_costs/run122.sh
mkdir -p ga && tar xJf gpu_a122.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s[01]/auto/(it|costs[0-4]/)|fewtiles/one_tile/stream_k/costs[0-4]/'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 150 ga/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== round $round rc=$?"
  grep median $L/bench_$round.txt | awk '{print $1, $2, $NF}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//'
  pack
done
