#!/bin/bash
# Device run 171 (session 25): the final code (499a812): the graph cache's GPU tests, then 24
# processes of //benchmarks:replay pinned to one core (replay.json: see the README).
# Usage (repo root; carry gpu_s171.tar.xz = gpu_r171/: replay, 4 test binaries, libbenchmark):
#   bash benchmarks/results/2026-12-02_run171_final/run171.sh 499a812
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s171.tar.xz -C gb
B=gb/gpu_r171
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs171
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs171.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test backend_test; do
  timeout 120 $B/tests/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in $(seq 1 24); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^graph_batch_prebuilt |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s fl %s | ", $1, $2, $7}')"
  [ $((i % 6)) = 0 ] && pack
done
pack
