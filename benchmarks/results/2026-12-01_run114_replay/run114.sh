#!/bin/bash
# Device run 114 (2026-12-01, session 17): 4 more processes of the main job with run 110's binary
# (b5aa92c), so replay.json's medians come from 7 processes in two leases as runs 90-91's did
# (run 110's 3 disagreed by 50% between the host's states).
# Usage (repo root; carry gpu_r110.tar.xz as run 110):
#   bash benchmarks/results/2026-12-01_run114_replay/run114.sh b5aa92c
mkdir -p gb && tar xJf gpu_r110.tar.xz -C gb
B=gb/gpu_r110
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L/replay
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $L/gpu.txt
for i in 4 5 6 7; do
  timeout 80 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
  echo "replay $i rc=$?"
  grep -E "floors|graph_per_call  |graph_batch  |sequence_step  " $L/replay/replay_$i.txt | cut -c1-120
  tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
done
