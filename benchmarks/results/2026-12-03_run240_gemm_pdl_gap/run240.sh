#!/bin/bash
# Run 240 (session 37): the GEMM-to-GEMM launch gap with PDL (the new family
# gpumode/<s>/auto/gemm_only/pdl) beside the call, the GEMMs alone without PDL and the early calls,
# 2 rounds, the tree's default build.
# Here: tools/bazel build -c opt --dynamic_mode=off //benchmarks:sm90_nvfp4_grouped_gemm, copied
#   with libbenchmark into gpu_gp/, packed as gpu_gp.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-03_run240_gemm_pdl_gap/run240.sh
[ -d gb/gpu_gp ] || { mkdir -p gb && tar xJf gpu_gp.tar.xz -C gb; }
B=gb/gpu_gp
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs240
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
F='gpumode/s[0-3]/auto/(iter|gemm_only/|early/)'
for r in 1 2; do
  timeout 150 $B/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_report_aggregates_only=true > $L/bench_r$r.txt 2>&1
done
for f in $L/bench_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs240.tar.xz -C $L .
