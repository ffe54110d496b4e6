#!/bin/bash
# Device run 201 (session 29): which step of Encore's per-call hit the bad episodes (runs 196-200)
# land in. replay built with -DENCORE_HIT_STAMPS=1 (graph_cache/internal/hit_stamps.h: TSC cycles
# per step of Run's fast hit, summed per executor and printed at exit), 20 processes limited to
# graph_per_call and graph_prebuilt, pinned to one core.
# Build here: tools/bazel build -c opt --copt=-DENCORE_HIT_STAMPS=1 //benchmarks:replay, the binary
#   (stripped) and libbenchmark.so.1debian copied into gpu_r201/bin and gpu_r201; tar cJf gpu_s201.tar.xz gpu_r201
# Usage (repo root; carry gpu_s201.tar.xz): bash benchmarks/results/2026-12-02_run201_hit_stamps/run201.sh <commit>
C=${1:-unknown}
[ -d gb/gpu_r201 ] || { mkdir -p gb && tar xJf gpu_s201.tar.xz -C gb; }
B=gb/gpu_r201
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs201
mkdir -p $L/replay
pack() { tar cJf ${OUT:-/tmp/out}/logs201.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
grep -m1 "model name" /proc/cpuinfo > $L/cpu.txt; grep -m1 "cpu MHz" /proc/cpuinfo >> $L/cpu.txt
for i in $(seq 1 20); do
  timeout 60 taskset -c 5 $B/bin/replay --benchmark_filter='graph_per_call|graph_prebuilt' \
    --encore_json=$L/replay/s_$i.json --encore_commit=$C > $L/replay/s_$i.txt 2>&1
  echo "$i rc=$? $(grep -E "^graph_per_call |^graph_prebuilt " $L/replay/s_$i.txt | awk '{printf "%s %s hf %s | ", $1, $2, $8}') $(grep -h 'hit stamps' $L/replay/s_$i.txt | cut -d: -f2-)"
  [ $((i % 5)) = 0 ] && pack
done
pack
