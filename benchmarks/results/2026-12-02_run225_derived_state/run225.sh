#!/bin/bash
# Run 225 (session 33): the graph_cache GPU tests at 0fe45a9 (GemmBatch without its repeating_
# flag, a behaviour-unchanged refactor of run 224's e65b76f).
# Here: tools/gpu_bundle.sh gpu_s33d at 0fe45a9. There:
#   bash benchmarks/results/2026-12-02_run225_derived_state/run225.sh
[ -d gb/gpu_s33d ] || { mkdir -p gb && tar xJf gpu_s33d.tar.xz -C gb; }
B=gb/gpu_s33d
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs225
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for n in executor_test sequence_test backend_test device_test device_problem_test; do
  timeout 120 $B/tests/$n > $L/$n.txt 2>&1
  echo "$n rc=$? $(grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' $L/$n.txt | tr '\n' ' ')"
done
tar cJf ${OUT:-/tmp/out}/logs225.tar.xz -C $L .
