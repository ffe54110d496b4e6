#!/bin/bash
# Device run 164 (session 24): bound plans (rebind without node patches, 1a5f601). The new GPU
# tests (kernel: BoundPlans*, plus the resource and GPU MODE tests; graph cache: the bound and
# swapping tests), the bound kernel test under memcheck, then the main job: 6 processes of
# //benchmarks:replay pinned to one core (graph_rebind_bound is the new mode).
# Usage (repo root; carry gpu_s164.tar.xz: gpu_r164/{tests,bin}/*, stripped, with libbenchmark):
#   bash benchmarks/results/2026-12-01_run164_bound_rebind/run164.sh COMMIT
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s164.tar.xz -C gb
B=gb/gpu_r164
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs164
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
uptime > $L/uptime.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
timeout 240 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*Bound*:*NoKernelUsesLocalMemory*:*GpuModeShapesBoth*:*PrepassPlansBackToBack*' \
  > $L/t_kernel.txt 2>&1
echo "kernel rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_kernel.txt | tr '\n' ' ')"
timeout 180 $B/tests/executor_test --gtest_filter='*Bound*:*Swapping*:*Replayed*' \
  > $L/t_executor_gpu.txt 2>&1
echo "executor_gpu rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $L/t_executor_gpu.txt | tr '\n' ' ')"
pack
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter='*BoundPlansServe*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_kernel.txt | tr '\n' ' ')"
pack
for i in 1 2 3 4 5 6; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json \
    --encore_commit=$C > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_rebind |^graph_rebind_bound " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s e %s tinyh %s fl %s | ", $1, $2, $3, $4, $5, $7}')"
  pack
done
