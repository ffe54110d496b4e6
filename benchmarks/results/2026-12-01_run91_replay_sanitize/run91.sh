#!/bin/bash
# Device run 91 (2026-12-01, session 12): run 90's bundle again: compute-sanitizer memcheck and
# racecheck on the kernel tests that cover the changed epilogue and the stream-K reduction, then 4
# processes of the main job (run 90's host floors moved by 50% between its processes).
# Usage (repo root; carry gpu_r90.tar.xz): bash benchmarks/results/2026-12-01_run91_replay_sanitize/run91.sh COMMIT
mkdir -p gb && tar xJf gpu_r90.tar.xz -C gb
B=gb/gpu_r90
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
F='*GpuModeShapesBothKernels*:*StreamKSplits*:*BalancedStreamK*:*PackedPersistent*:*DynamicM*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter="$F" > $L/sanitize_$tool.txt 2>&1; echo "rc=$?" >> $L/sanitize_$tool.txt
  tail -3 $L/sanitize_$tool.txt
  tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
done
for i in 1 2 3 4; do
  timeout 80 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
  grep -E "floors|graph_per_call  |graph_batch  |sequence_step  " $L/replay/replay_$i.txt | cut -c1-120
  tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
done
