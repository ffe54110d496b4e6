#!/bin/bash
# Device run 135: stream-K partitions of GPU MODE shape 0 (and one_tile) with narrow tiles costed
# cheaper than the default (StreamKCosts::decode_rows 160 = costs0; 144 / 128 / 96 = costs9-11),
# after run 134 found dearer ones (176-208) slower. ROUNDS rounds of one benchmark binary.
# Usage (repo root; carry gpu_a135.tar.xz: the default kernel benchmark, stripped, with
# libbenchmark.so.1debian):
#   bash benchmarks/results/2026-12-01_run135_decode_rows_lower/run135.sh
mkdir -p ga && tar xJf gpu_a135.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
C='(gpumode/s0|fewtiles/one_tile)/stream_k/costs(0|9|10|11)/'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 90 ga/b_default --benchmark_filter="$C" --benchmark_out=$L/costs_$round.json \
    --benchmark_out_format=json > $L/costs_$round.txt 2>&1
  echo "== costs $round: $(short $L/costs_$round.txt)"
  pack
done
