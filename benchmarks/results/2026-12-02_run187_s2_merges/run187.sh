#!/bin/bash
# Device run 187: why shape 2 gained little in run 186's batch mode. Two main-job processes with the
# new merged_calls counter per workload, and the kernel benchmark's merge<c> (kAuto and forced
# persistent, c = 2, 4, 5, 8, 15) on shapes 2-3.
# Build here: tools/bazel build -c opt //benchmarks:replay //benchmarks:sm90_nvfp4_grouped_gemm,
# stripped into gpu_d187/ with libbenchmark.so.1debian; tar cJf gpu_d187.tar.xz gpu_d187
# Usage (repo root; carry gpu_d187.tar.xz): bash benchmarks/results/2026-12-02_run187_s2_merges/run187.sh <commit>
C=${1:-unknown}
mkdir -p gb && tar xJf gpu_d187.tar.xz -C gb
B=gb/gpu_d187
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}
for i in 1 2; do
  timeout 60 taskset -c 5 $B/replay --encore_json=$L/replay_$i.json --encore_commit=$C > $L/replay_$i.txt 2>&1
  echo "replay $i rc=$?"
done
grep -E "^(graph_batch|sequence_step)/" $L/replay_1.txt | sed -E 's#/iterations:[0-9]+/manual_time##' | awk '{print $1, $0}' | grep -oE "^[^ ]+|device_us=[0-9.]+|merged_calls=[0-9.]+" | paste - - - 
$B/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s[23]/(auto|persistent)/merge' \
  --benchmark_out=$L/bench_merge.json > $L/bench_merge.txt 2>&1
echo "bench rc=$?"
grep -E "_median" $L/bench_merge.txt | sed -E "s#/iterations:1/repeats:[0-9]+/manual_time##" | cut -c1-150
