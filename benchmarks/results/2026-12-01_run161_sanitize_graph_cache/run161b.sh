#!/bin/bash
# Device run 161b (session 23): run 161 again after d82305a (the capture query checks for a current
# context before the driver's call). Binaries: the graph_cache test binaries at d82305a.
# Usage (repo root; carry gpu_s161.tar.xz): bash benchmarks/results/2026-12-01_run161_sanitize_graph_cache/run161b.sh
mkdir -p gb && tar xJf gpu_s161.tar.xz -C gb
B=gb/gpu_r161
L=/tmp/logs161b
mkdir -p $L
for n in backend_test executor_test sequence_test; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/$n > $L/memcheck_$n.txt 2>&1
  echo "$n memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $L/memcheck_$n.txt | tr '\n' ' ')"
done
for n in backend_test executor_test sequence_test; do
  timeout 200 $B/tests/$n > $L/plain_$n.txt 2>&1
  echo "$n rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $L/plain_$n.txt | tr '\n' ' ')"
done
tar cJf ${OUT:-/tmp/out}/logs_b.tar.xz -C $L .
