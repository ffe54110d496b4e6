#!/bin/bash
# Device run 202 (session 29): the session's last code (the per-call hit's stamps compiled out):
# the graph_cache tests, then 8 processes of //benchmarks:replay as a user runs it (pinned to one
# core), to check that the default build is unchanged against run 197.
# Build here: tools/gpu_bundle.sh gpu_r202 (graph_cache tests and replay kept), stripped,
#   tar cJf gpu_s202.tar.xz gpu_r202
# Usage (repo root; carry gpu_s202.tar.xz): bash benchmarks/results/2026-12-02_run202_final_check/run202.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r202 ] || { mkdir -p gb && tar xJf gpu_s202.tar.xz -C gb; }
B=gb/gpu_r202
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs202
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs202.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
pack
for i in $(seq 1 8); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "new $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
done
pack
