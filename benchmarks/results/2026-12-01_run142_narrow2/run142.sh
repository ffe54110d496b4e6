#!/bin/bash
# Device run 142: _narrow2 (tiles of <= 96 tokens in 2 parts of 4 steps in the persistent and
# stream-K kernels; wider tiles keep 4 parts) against the default: a subset of its kernel test,
# then ROUNDS rounds alternating the builds.
# Usage (repo root; carry gpu_a142.tar.xz = tools/ab_bundle.sh gpu_a142 _narrow2):
#   bash benchmarks/results/2026-12-01_run142_narrow2/run142.sh
mkdir -p ga && tar xJf gpu_a142.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
timeout 100 ga/tests/sm90_nvfp4_grouped_gemm_narrow2_test \
  --gtest_filter='*BalancedStreamK*:*PackedPersistent*:*NoKernelUsesLocalMemory*' > $L/t_narrow2.txt 2>&1
echo "narrow2 test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_narrow2.txt | tr '\n' ' ')"
pack
F='gpumode/s[01]/auto/it|fewtiles/(one_tile|decode8)/auto/it'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in default narrow2; do
    timeout 60 ga/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v $round: $(short $L/bench_${v}_$round.txt)"
  done
  pack
done
