#!/bin/bash
# Device run 189 (prepared in session 27, NOT RUN: its device time was spent): the graph_cache GPU tests at the session's last code (c62d1e6: the merge run cap
# Superseded (session 28): run 190 ran these tests and more at 94ae41e (2026-12-02_run190_harness_floor/).
# and zero limits, host logic; run 188 measured 34b2b0b).
# Build here: tools/bazel build -c opt //tests/graph_cache:{executor,sequence,batch}_test, stripped
# into gpu_t189/ with libbenchmark.so.1debian; tar cJf gpu_t189.tar.xz gpu_t189
# Usage (repo root; carry gpu_t189.tar.xz): bash benchmarks/results/2026-12-02_run189_final_graph_cache_tests/run189.sh
mkdir -p gb && tar xJf gpu_t189.tar.xz -C gb
B=gb/gpu_t189
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for n in executor_test sequence_test batch_test; do
  timeout 200 $B/$n > $L/t_$n.txt 2>&1
  echo "$n rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|^\[  SKIPPED \] [0-9]' $L/t_$n.txt | tr '\n' ' ')"
done
grep -E "OK \].*BatchMerges" $L/t_executor_test.txt
