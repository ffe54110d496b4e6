#!/bin/bash
# Device run 140: what the weight decode costs the current kernels. `_exp_nowgt` (measurement
# only, wrong results on purpose) feeds the raw packed words to wgmma as fragments instead of
# decoding them (no HighBytes, PRMT or scale HMUL2); everything else as in the default.
# ROUNDS rounds alternating the builds.
# Usage (repo root; carry gpu_a140.tar.xz: the default and _exp_nowgt kernel benchmarks of
# 4cb0305, stripped, with libbenchmark):
#   bash benchmarks/results/2026-12-01_run140_decode_share/run140.sh
mkdir -p ga && tar xJf gpu_a140.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
F='gpumode/s./auto/(it|gemm_only/)|fewtiles/(one_tile|decode8)/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in default exp_nowgt; do
    timeout 90 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
done
