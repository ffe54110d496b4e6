#!/bin/bash
# Device run 77 (2026-12-01, session 10): GPU MODE shape 0 in 5 fresh processes of run 76's
# binary (kAuto = balanced stream-K; persistent = packed): how much of run 75-76's 104 vs 107 us is
# the process (workspace placement) rather than the partition.
# Usage (repo root; carry gpu_r76.tar.xz): bash benchmarks/results/2026-12-01_run77_s0_spread/run77.sh
mkdir -p gb && tar xJf gpu_r76.tar.xz -C gb
B=gb/gpu_r76
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
for i in 1 2 3 4 5; do
  timeout 60 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='gpumode/s0/(auto|persistent|stream_k)/it' \
    > $L/s0_$i.txt 2>&1
  grep median $L/s0_$i.txt | awk -v i=$i '{print i, $1, $2, $3}'
done
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .
