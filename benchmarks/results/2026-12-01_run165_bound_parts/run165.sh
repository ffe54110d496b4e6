#!/bin/bash
# Device run 165 (session 24): where a bound call's device time goes. 165a: the kernel benchmark's
# bound family (whole call, without the fetch kernel, the fetch kernels alone) beside auto, on the
# GPU MODE shapes and the tiny problem (15 input sets back to back, L2 flushed, CUDA events).
# 165b (after the fetch kernel's parallel map release): the bound tests first, then the same.
# Usage (repo root; carry gpu_s165.tar.xz: gpu_r165/{sm90_nvfp4_grouped_gemm, replay, the kernel
# and executor tests} + libbenchmark):
#   bash benchmarks/results/2026-12-01_run165_bound_parts/run165.sh
mkdir -p gb && tar xJf gpu_s165.tar.xz -C gb
B=gb/gpu_r165
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs165
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
if [ -x $B/executor_test ]; then
  timeout 120 $B/sm90_nvfp4_grouped_gemm_test --gtest_filter='*Bound*' > $L/t_kernel.txt 2>&1
  echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel.txt | tr '\n' ' ')"
  timeout 120 $B/executor_test --gtest_filter='*Bound*' > $L/t_executor.txt 2>&1
  echo "executor rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_executor.txt | tr '\n' ' ')"
  pack
fi
timeout 300 $B/sm90_nvfp4_grouped_gemm --benchmark_filter='bound|gpumode/s./auto$|fewtiles/tiny/auto$' \
  > $L/bench.txt 2>&1
echo "rc=$?"
grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
pack
