#!/bin/bash
# Device run 199 (session 29): in-process A/B of per-call replay with its captures' allocations in
# a huge-page arena (replay --encore_ab_arena=1: graph_per_call_arena, graph_per_call,
# graph_per_call_arena2 in that order, each its own executor). 14 processes pinned to one core.
# Run 198 (glibc's whole heap on huge pages, alternated processes) had 1 of 16 processes with the
# per-call hit + 0.4-0.6 us over the harness floor against 4 of 16 plain, confounded in time.
# Build here: tools/gpu_bundle.sh gpu_r199 (no tests; replay only), stripped, tar cJf gpu_s199.tar.xz gpu_r199
# Usage (repo root; carry gpu_s199.tar.xz): bash benchmarks/results/2026-12-02_run199_arena_ab/run199.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r199 ] || { mkdir -p gb && tar xJf gpu_s199.tar.xz -C gb; }
B=gb/gpu_r199
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs199
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs199.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for i in $(seq 1 14); do
  timeout 60 taskset -c 5 $B/bin/replay --encore_ab_arena=1 --encore_json=$L/replay/ab_$i.json \
    --encore_commit=$C > $L/replay/ab_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call|^graph_prebuilt " $L/replay/ab_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}') $(grep -h 'huge arena' $L/replay/ab_$i.txt)"
  [ $((i % 4)) = 0 ] && pack
done
pack
