#!/bin/bash
# Device run 154c (session 22, same bundle as 154a/b): 5 more processes of the main job for
# replay.json's medians (154b's 3 processes had noisy host floors: 1.94 / 1.27 / 1.23 us).
# Usage: bash benchmarks/results/2026-12-01_run154_streamed_default/run154c.sh COMMIT
mkdir -p gb && [ -d gb/gpu_r154 ] || tar xJf gpu_s154.tar.xz -C gb
B=gb/gpu_r154
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs154c
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/all_logs_c.tar.xz -C $L .; }
uptime > $L/uptime.txt
for i in 4 5 6 7 8; do
  timeout 40 taskset -c 5 $B/bin/replay --encore_json=$L/replay/replay_$i.json \
    --encore_commit="$1" > $L/replay/replay_$i.txt 2>&1
  echo "replay $i rc=$?"
  grep -E "floors|graph_per_call  |graph_rebind  |graph_batch  |sequence_step  " $L/replay/replay_$i.txt | cut -c1-120
  pack
done
uptime >> $L/uptime.txt
