#!/bin/bash
# Device run 204 (session 29): the main job at the session's last code (02adfd0; later commits
# are docs and results only), 16 processes of //benchmarks:replay as a user runs it, pinned to one
# core: replay.json.
# Bundle: run 203's (gpu_s203.tar.xz, built at 02adfd0).
# Usage (repo root; carry gpu_s203.tar.xz): bash benchmarks/results/2026-12-02_run204_final_replay/run204.sh 02adfd0
C=${1:-unknown}
[ -d gb/gpu_r203 ] || { mkdir -p gb && tar xJf gpu_s203.tar.xz -C gb; }
B=gb/gpu_r203
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs204
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs204.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for i in $(seq 1 16); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "new $i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  [ $((i % 4)) = 0 ] && pack
done
pack
