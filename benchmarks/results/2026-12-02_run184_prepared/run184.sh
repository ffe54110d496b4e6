#!/bin/bash
# Device run 184 (prepared in session 26, not run: its device time was spent): the session's final
# code in full. Every test binary (the whole kernel test ~300 s), then 24 processes of
# //benchmarks:replay pinned to one core for a new replay.json (run 171's is the current one; run
# 181 measured the early pre-passes with 8 processes, 6 of them in the host's slow state).
# Build here: tools/gpu_bundle.sh gpu_r184 && tar cJf gpu_s184.tar.xz gpu_r184
# Usage (repo root; carry gpu_s184.tar.xz):
#   bash benchmarks/results/2026-12-02_run184_prepared/run184.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_s184.tar.xz -C gb
B=gb/gpu_r184
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs184
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs184.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 400 $t > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in $(seq 1 24); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s d %s fl %s | ", $1, $2, $3, $7}')"
  [ $((i % 6)) = 0 ] && pack
done
pack
