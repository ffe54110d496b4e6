#!/bin/bash
# Run 219 (session 32): the GPU tests after the final review's two behaviour-unchanged refactors
# (RecurrenceVerdict, OperandBytesOf) at d6c6d8c.
# Here: tools/gpu_bundle.sh gpu_s32e at d6c6d8c. There:
#   bash benchmarks/results/2026-12-02_run219_refactor_check/run219.sh
[ -d gb/gpu_s32e ] || { mkdir -p gb && tar xJf gpu_s32e.tar.xz -C gb; }
B=gb/gpu_s32e
L=/tmp/logs219
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs219.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for n in executor_test sequence_test backend_test device_test device_problem_test sm90_nvfp4_grouped_gemm_test; do
  s0=$(date +%s)
  timeout 200 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? seconds=$(( $(date +%s) - s0 )) $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
pack
