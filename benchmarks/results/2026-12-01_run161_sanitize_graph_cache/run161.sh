#!/bin/bash
# Device run 161 (session 23): the graph_cache GPU tests under compute-sanitizer memcheck, after
# the hit memo (Run and RunBatch) and the driver entry points (cuGraphLaunch, cuStreamIsCapturing).
# Binaries: run 160's test binaries (956bc66).
# Usage (repo root; carry gpu_s160.tar.xz): bash benchmarks/results/2026-12-01_run161_sanitize_graph_cache/run161.sh
mkdir -p gb && tar xJf gpu_s160.tar.xz -C gb
B=gb/gpu_r160
L=/tmp/logs161
mkdir -p $L
for n in backend_test executor_test sequence_test batch_test; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/$n > $L/memcheck_$n.txt 2>&1
  echo "$n memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_$n.txt | tr '\n' ' ')"
done
tar cJf ${OUT:-/tmp/out}/logs.tar.xz -C $L .
