#!/bin/bash
# Run 243 (session 38): the main job (replay) after the graph cache's review fixes (365e8c4: the
# guard's per-call record moved, unpatchable bindings kept beside their variant, no ring wait
# under the lock), 3 processes, as run 224 ran it.
# Here: tools/gpu_bundle.sh gpu_s38 at 6e57280 (its code = 39128be's but two comments). There:
#   bash benchmarks/results/2026-12-03_run243_replay_check/run243.sh
[ -d gb/gpu_s38 ] || { mkdir -p gb && tar xJf gpu_s38.tar.xz -C gb; }
B=gb/gpu_s38
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs243
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/logs243.tar.xz -C $L .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/env.txt 2>&1
for i in 1 2 3; do
  timeout 90 taskset -c 5 $B/bin/replay --encore_json=$L/replay_$i.json --encore_commit=6e57280 \
    > $L/replay_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_batch |^graph_batch_prebuilt |^sequence_step |^graph_per_call |^graph_launch_1 " $L/replay_$i.txt | awk '{printf "%s h %s | ", $1, $2}')"
  pack
done
