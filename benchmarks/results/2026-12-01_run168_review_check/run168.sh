#!/bin/bash
# Device run 168 (session 24): the review commit b59b410 (LaunchOnStream's fetch and pre-kernel
# through one helper) on the GPU: the kernel tests that launch plans directly, with PDL and as
# graphs, the bound tests, and every graph cache GPU test (executor, sequence).
# Usage (repo root; carry gpu_s168.tar.xz: gpu_r168/{kernel, executor, sequence tests}, -c opt,
# stripped): bash benchmarks/results/2026-12-01_run168_review_check/run168.sh
mkdir -p gb && tar xJf gpu_s168.tar.xz -C gb
B=gb/gpu_r168
L=${OUT:-/tmp/out}
timeout 150 $B/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*Bound*:*LaunchPlanAsGraphNodeAndPdl*:*PlansLaunchBehind*:*PrepassPlansBackToBack*:*StreamKWorkspaces*' \
  > $L/t_kernel.txt 2>&1
echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel.txt | tr '\n' ' ')"
timeout 100 $B/executor_test > $L/t_executor.txt 2>&1
echo "executor rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_executor.txt | tr '\n' ' ')"
timeout 60 $B/sequence_test > $L/t_sequence.txt 2>&1
echo "sequence rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_sequence.txt | tr '\n' ' ')"
