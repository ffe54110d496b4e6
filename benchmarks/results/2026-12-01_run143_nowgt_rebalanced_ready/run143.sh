#!/bin/bash
# Device run 143 (prepared in session 20, not yet run): run 140's caveat. Shape 0 forced to
# stream-K with narrow tiles costed cheaper (decode_rows 160 = costs0, 128 = costs10, 96 =
# costs11, 64 = costs12), in the default build and in `_exp_nowgt` (no weight decode, wrong
# results on purpose): if the narrow tiles' k-blocks get as much faster as run 38's micro says,
# `_exp_nowgt` gains on shape 0 once its partition gives the narrow tiles' CTAs more k-blocks.
# ROUNDS rounds alternating the builds.
# Usage (repo root; carry gpu_a143.tar.xz: the default and _exp_nowgt kernel benchmarks, stripped,
# with libbenchmark; here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm
# //benchmarks:sm90_nvfp4_grouped_gemm_exp_nowgt, copied as b_default / b_exp_nowgt):
#   bash benchmarks/results/2026-12-01_run143_nowgt_rebalanced_ready/run143.sh
mkdir -p ga && tar xJf gpu_a143.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
F='gpumode/s0/stream_k/costs(0|10|11|12)/'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in default exp_nowgt; do
    timeout 90 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
done
