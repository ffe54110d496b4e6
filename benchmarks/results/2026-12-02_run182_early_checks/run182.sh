#!/bin/bash
# Device run 182 (session 26): the final test additions: executor_test (the token pre-pass
# runner's batch test now checks ExecutorCounters::early_prepass_nodes) and the early kernel test
# with 16-row tiles (the streamed simple kernel).
# Usage (repo root; carry gpu_s182.tar.xz = gpu_r182/: the two test binaries built with
# tools/bazel build -c opt at the commit given):
#   bash benchmarks/results/2026-12-02_run182_early_checks/run182.sh <commit>
mkdir -p gb && tar xJf gpu_s182.tar.xz -C gb
B=gb/gpu_r182
L=/tmp/logs182
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs182.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 120 $B/tests/executor_test > $L/t_executor_test.txt 2>&1
echo "executor_test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_executor_test.txt | tr '\n' ' ')"
pack
timeout 150 $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter='*EarlyPrepass*' > $L/t_early.txt 2>&1
echo "early test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_early.txt | tr '\n' ' ')"
pack
