#!/bin/bash
# Device run 126 (2026-12-01, session 18): the same default options on five runner instances (each
# its own token and stream-K workspaces) in one process: what runner-instance placement alone
# moves on GPU MODE shapes 0-1 (runs 119-121 saw ~1% between identical plans on shape 0).
# Usage (repo root; carry gpu_a126.tar.xz: the default kernel benchmark, libbenchmark):
#   bash benchmarks/results/2026-12-01_run126_runner_instances/run126.sh
mkdir -p ga && tar xJf gpu_a126.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s[01]/auto/(it|inst[1-4]/)'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 90 ga/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== round $round rc=$?: $(grep median $L/bench_$round.txt | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g')"
  pack
done
