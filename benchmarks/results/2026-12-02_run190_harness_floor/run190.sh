#!/bin/bash
# Device run 190 (session 28): the graph_cache GPU tests at the session's code (run 189's purpose:
# c62d1e6, 355f980, 4a14c5f had not run on the GPU), then 16 main-job processes pinned to one core
# with the harness floor (graph_floor_harness_us: 15 distinct 1-node empty graphs launched through
# the modes' own RunBatch right before each measured batch; floors' graph_launch_1_harness).
# Build here: tools/gpu_bundle.sh gpu_r190, kernel/host-only tests dropped, tar cJf gpu_s190.tar.xz gpu_r190
# Usage (repo root; carry gpu_s190.tar.xz): bash benchmarks/results/2026-12-02_run190_harness_floor/run190.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s190.tar.xz -C gb
B=gb/gpu_r190
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs190
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs190.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test backend_test policy_test; do
  timeout 300 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in $(seq 1 16); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch " $L/replay/new_$i.txt | awk '{printf "%s h %s fl %s hf %s | ", $1, $2, $7, $8}')"
  [ $((i % 4)) = 0 ] && pack
done
pack
