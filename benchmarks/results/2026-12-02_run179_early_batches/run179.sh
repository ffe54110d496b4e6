#!/bin/bash
# Device run 179 (session 26): multi-call graphs with early pre-passes (0fafd33): the graph
# cache's GPU tests (the real runners' batches now take alternate workspace halves and early
# pre-passes), memcheck of the early kernel test and of the batch test, then 12 processes of
# //benchmarks:replay pinned to one core (graph_batch and sequence_step against
# graph_batch_prebuilt, whose hand-captured graphs keep Prepare's plans: the same-process control).
# Usage (repo root; carry gpu_s179.tar.xz = gpu_r179/: replay, 4 graph-cache test binaries, the
# kernel test of run 178 (kernels unchanged since 83f4185), libbenchmark):
#   bash benchmarks/results/2026-12-02_run179_early_batches/run179.sh 0fafd33
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s179.tar.xz -C gb
B=gb/gpu_r179
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs179
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs179.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test backend_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/executor_test \
  --gtest_filter='*BatchReplays*:*SwappingBuffers*' > $L/memcheck_executor.txt 2>&1
echo "memcheck executor rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_executor.txt | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='*EarlyPrepass*' > $L/memcheck_kernel.txt 2>&1
echo "memcheck kernel rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_kernel.txt | tr '\n' ' ')"
pack
for i in $(seq 1 12); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^graph_batch_prebuilt |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s e %s | ", $1, $2, $3, $4}')"
  [ $((i % 4)) = 0 ] && pack
done
pack
