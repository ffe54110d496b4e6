#!/bin/bash
# Device run 92 (2026-12-01, session 12): stream-K partitions of shape 0 and one_tile from six cost
# constants (RunnerOptions::stream_k_costs, the benchmark's kSkCosts), kernels as 1e4acf2; 3
# processes, each: costs 0..5 for both shapes, then shape 0 kAuto.
# Usage (repo root; carry gpu_c92.tar.xz): bash benchmarks/results/2026-12-01_run92_stream_k_costs/run92.sh
mkdir -p gb && tar xJf gpu_c92.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
for r in 1 2 3; do
  timeout 60 gb/b_default --benchmark_filter='stream_k/costs|gpumode/s0/auto/it' \
    --benchmark_out=$L/costs_$r.json --benchmark_out_format=json > $L/costs_$r.txt 2>&1
  grep median $L/costs_$r.txt | awk '{print $1, $2, $3}'
  tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
done
