#!/bin/bash
# Run 237 (session 37): where the GPU MODE calls' time goes with today's default (gpu_s34 =
# 530185e's kernels, byte for byte the tree's): the call (auto), the GEMM alone, the pre-pass
# alone, the multi-call graph (early), and the in-kernel token path (no pre-pass) forced on the
# simple and persistent kernels, 2 alternated rounds.
# There: bash benchmarks/results/2026-12-03_run237_call_parts/run237.sh (gpu_s34.tar.xz carried)
[ -d gb/gpu_s34 ] || { mkdir -p gb && tar xJf gpu_s34.tar.xz -C gb; }
B=gb/gpu_s34
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs237
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
F='gpumode/s[0-3]/(auto/(iter|gemm_only/|prepass_only/|early/)|simple/(in_kernel|prepass)/|persistent/in_kernel/)'
for r in 1 2; do
  timeout 200 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_report_aggregates_only=true > $L/bench_r$r.txt 2>&1
done
for f in $L/bench_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs237.tar.xz -C $L .
