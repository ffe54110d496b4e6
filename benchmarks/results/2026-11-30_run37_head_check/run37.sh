#!/bin/bash
# Device run 37 (2026-11-30, session 4): every test binary of f3dbd30 (the stmatrix epilogue as
# default, incl. the weights-normal build), the GPU MODE kernel timings once more, and the main job.
# Usage: bash benchmarks/results/run37.sh BUNDLE
B=$(cd "$1" && pwd)
R=benchmarks/results
SANITIZERS=memcheck SAN_TIMEOUT=100 bash $R/run23.sh "$1" tests
TORCH=0 BENCH_FILTER='gpumode/s./auto/it' bash $R/run23.sh "$1" bench
L=${OUT:-/tmp/out}/logs
export LD_LIBRARY_PATH=$B
for i in 1 2 3; do
  timeout 60 "$B/bin/replay" --encore_json="$L/replay_$i.json" --encore_commit=f3dbd30 > "$L/replay_$i.txt" 2>&1
done
grep -h "floors\|graph_per_call\|graph_batch\|sequence" "$L"/replay_*.txt
tar czf "${OUT:-/tmp/out}/all_logs.tgz" -C "$L" .
