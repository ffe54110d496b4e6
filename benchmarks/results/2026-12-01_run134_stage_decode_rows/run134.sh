#!/bin/bash
# Device run 134: the staged pre-pass (the default since run 133) against the pre-pass before it
# (_shuffle), and stream-K partitions of GPU MODE shape 0 with narrow tiles costed dearer
# (StreamKCosts::decode_rows 160 = costs0, the default; 176 / 192 / 208 = costs6-8; run 129's
# stamps fit 192), ROUNDS rounds, the builds alternated within each.
# Usage (repo root; carry gpu_a134.tar.xz = tools/ab_bundle.sh gpu_a134 _shuffle):
#   bash benchmarks/results/2026-12-01_run134_stage_decode_rows/run134.sh
mkdir -p ga && tar xJf gpu_a134.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
F='gpumode/s./auto/(it|prepass_only/)|fewtiles/(one_tile|decode8)/auto/it'
C='(gpumode/s0|fewtiles/one_tile)/stream_k/costs[0678]/'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for v in default shuffle; do
    timeout 90 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  timeout 90 ga/b_default --benchmark_filter="$C" --benchmark_out=$L/costs_$round.json \
    --benchmark_out_format=json > $L/costs_$round.txt 2>&1
  echo "== costs $round: $(short $L/costs_$round.txt)"
  pack
done
