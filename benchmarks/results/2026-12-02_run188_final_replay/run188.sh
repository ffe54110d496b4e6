#!/bin/bash
# Device run 188: the final code (near-equal merged launches). The graph_cache test binaries, memcheck
# of the merged-launch GPU test, and 16 main-job processes pinned to one core for replay.json.
# Build here: tools/gpu_bundle.sh gpu_r188 (kernel and host-only runner tests and the signature
# benchmark removed: unchanged since run 186), tar cJf gpu_s188.tar.xz gpu_r188
# Usage (repo root; carry gpu_s188.tar.xz): bash benchmarks/results/2026-12-02_run188_final_replay/run188.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s188.tar.xz -C gb
B=gb/gpu_r188
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs188
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs188.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test backend_test policy_test; do
  timeout 300 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
timeout 120 compute-sanitizer --tool memcheck $B/tests/executor_test --gtest_filter='*BatchMerges*' > $L/memcheck_merges.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $L/memcheck_merges.txt | tr '\n' ' ')"
pack
for i in $(seq 1 16); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s te %s fl %s | ", $1, $2, $3, $6, $7}')"
  [ $((i % 4)) = 0 ] && pack
done
grep -E "^(graph_batch|sequence_step)/" $L/replay/new_1.txt | sed -E 's#/iterations:[0-9]+/manual_time##' | grep -oE "^[^ ]+|device_us=[0-9.]+|merged_calls=[0-9.]+" | paste - - -
pack
