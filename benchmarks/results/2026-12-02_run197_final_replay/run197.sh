#!/bin/bash
# Device run 197 (session 29): the session's final code (the prefetch experiments of runs 195-196
# removed; the executor and recorder as at 5796f38). The graph_cache tests, then 16 processes of
# //benchmarks:replay as a user runs it, pinned to one core (replay.json).
# Build here: tools/gpu_bundle.sh gpu_r197 (graph_cache tests and the benchmarks kept), stripped,
#   tar cJf gpu_s197.tar.xz gpu_r197
# Usage (repo root; carry gpu_s197.tar.xz): bash benchmarks/results/2026-12-02_run197_final_replay/run197.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r197 ] || { mkdir -p gb && tar xJf gpu_s197.tar.xz -C gb; }
B=gb/gpu_r197
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs197
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs197.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in $(seq 1 16); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "new $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  [ $((i % 4)) = 0 ] && pack
done
pack
