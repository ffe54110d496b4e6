#!/bin/bash
# Run 211 (session 31): //benchmarks:replay after its host summary became a geomean over the four
# GPU MODE shapes (as device and e2e; the tiny problem keeps its own columns): 4 processes pinned
# to one core as in run 204, then replay_median.py over them.
# Here: tools/gpu_bundle.sh gpu_s31e at 99c3bc1 (replay.cc as at 63d3e75), packed as
# gpu_s31e.tar.xz. There: bash benchmarks/results/2026-12-02_run211_replay_summary/run211.sh C
C=${1:-unknown}
[ -d gb/gpu_s31e ] || { mkdir -p gb && tar xJf gpu_s31e.tar.xz -C gb; }
B=gb/gpu_s31e
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs211
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs211.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for i in 1 2 3 4; do
  timeout 60 taskset -c 5 $B/bin/replay --encore_json=$L/replay/new_$i.json --encore_commit=$C \
    > $L/replay/new_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt |^graph_batch |^sequence_step " $L/replay/new_$i.txt | awk '{printf "%s h %s hf %s | ", $1, $2, $8}')"
done
pack
