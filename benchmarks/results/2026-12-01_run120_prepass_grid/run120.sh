#!/bin/bash
# Device run 120 (2026-12-01, session 18): a capped token pre-pass grid (RunnerOptions::
# prepass_blocks_per_sm = 1..4: the strided pre-pass kernel, each thread several jobs) against
# the default (one job per thread: 896 / 256 / 256 / 96 blocks on GPU MODE shapes 0-3), all in
# one binary; shape 1 also with only the small pre-passes padded (smallpad, run 119's default).
# First the kernel test's strided pre-pass and resource tests.
# Usage (repo root; carry gpu_a120.tar.xz = tools/ab_bundle.sh gpu_a120):
#   bash benchmarks/results/2026-12-01_run120_prepass_grid/run120.sh
mkdir -p ga && tar xJf gpu_a120.tar.xz -C ga
export LD_LIBRARY_PATH=$(pwd)/ga
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
s0=$(date +%s)
timeout 120 ga/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*StridedPrepass*:*NoKernelUsesLocalMemory*:*PrepassPlansBackToBack*' > $L/t_strided.txt 2>&1
echo "rc=$? seconds=$(( $(date +%s) - s0 ))" >> $L/t_strided.txt
echo "strided test: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_strided.txt | tr '\n' ' ') $(tail -1 $L/t_strided.txt)"
pack
F='gpumode/s./auto/(it|pgrid1/|pgrid2/|pgrid3/|pgrid4/)|gpumode/s1/auto/smallpad/'
for round in $(seq 1 ${ROUNDS:-3}); do
  timeout 150 ga/b_default --benchmark_filter="$F" --benchmark_out=$L/bench_$round.json \
    --benchmark_out_format=json > $L/bench_$round.txt 2>&1
  echo "== round $round rc=$?"
  grep median $L/bench_$round.txt | awk '{print $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//'
  pack
done
