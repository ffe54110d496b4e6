#!/bin/bash
# Device run 165 (session 24): where a bound call's device time goes. The kernel benchmark's bound
# family (whole call, without the fetch kernel, the fetch kernels alone) beside auto, on the GPU MODE
# shapes and the tiny problem (15 input sets back to back, L2 flushed, CUDA events).
# Usage (repo root; carry gpu_s165.tar.xz: gpu_r165/sm90_nvfp4_grouped_gemm + libbenchmark):
#   bash benchmarks/results/2026-12-01_run165_bound_parts/run165.sh
mkdir -p gb && tar xJf gpu_s165.tar.xz -C gb
B=gb/gpu_r165
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs165
mkdir -p $L
timeout 300 $B/sm90_nvfp4_grouped_gemm --benchmark_filter='bound|gpumode/s./auto$|fewtiles/tiny/auto$' \
  > $L/bench.txt 2>&1
echo "rc=$?"
grep -E "_median" $L/bench.txt | awk '{print $1, $2, $3}'
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
