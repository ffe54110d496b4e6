#!/bin/bash
# Device run 178 (session 26): early pre-passes (PlanOptions: alternate workspace halves, the
# pre-pass converting before its wait) against the default calls in the kernel benchmark, their
# new test, and the whole kernel test at this code (session 25 left it unrun at its final code).
# Usage (repo root; carry gpu_s178.tar.xz = gpu_r178/: kernel test, graph-cache tests, kernel
# benchmark, replay, libbenchmark; built with tools/bazel build -c opt at the commit given):
#   bash benchmarks/results/2026-12-02_run178_early_prepass/run178.sh 83f4185
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s178.tar.xz -C gb
B=gb/gpu_r178
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs178
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs178.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 120 $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter='*EarlyPrepass*' > $L/t_early.txt 2>&1
echo "early test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_early.txt | tr '\n' ' ')"
pack
for r in 1 2 3; do
  timeout 100 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='(gpumode/s.|fewtiles/(decode8|one_tile|tiny))/auto/(early|iter)' \
    > $L/bench_$r.txt 2>&1
  echo "bench $r rc=$?"
  grep -E "_median" $L/bench_$r.txt | awk '{print $1, $2, $3}'
  pack
done
timeout 330 $B/tests/sm90_nvfp4_grouped_gemm_test > $L/t_kernel.txt 2>&1
echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel.txt | tr '\n' ' ')"
pack
