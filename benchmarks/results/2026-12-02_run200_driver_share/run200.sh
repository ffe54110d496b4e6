#!/bin/bash
# Device run 200 (session 29): where does a bad episode's per-call cost go (runs 196-199: Encore's
# hit + 0.4-0.7 us over the harness floor in some processes, in the same processes whatever its
# heap)? 20 processes of replay --encore_ab_query=1 limited to the per-call modes: graph_per_call,
# graph_prebuilt (cudaGraphLaunch), graph_prebuilt_driver (cuGraphLaunch), graph_prebuilt_query
# (cuCtxGetCurrent + cuStreamIsCapturing + cuGraphLaunch: the driver calls of an Encore hit
# without Encore's own work). Pinned to one core.
# Build here: tools/gpu_bundle.sh gpu_r200 (replay only), stripped, tar cJf gpu_s200.tar.xz gpu_r200
# Usage (repo root; carry gpu_s200.tar.xz): bash benchmarks/results/2026-12-02_run200_driver_share/run200.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r200 ] || { mkdir -p gb && tar xJf gpu_s200.tar.xz -C gb; }
B=gb/gpu_r200
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs200
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs200.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for i in $(seq 1 20); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_ab_query=1 --benchmark_filter='graph_per_call|graph_prebuilt' \
    --encore_json=$L/replay/q_$i.json --encore_commit=$C > $L/replay/q_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt" $L/replay/q_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}')"
  [ $((i % 5)) = 0 ] && pack
done
pack
