#!/bin/bash
# Run 241 (session 38): what a call would save if its weights came from the L2 (the new families
# gpumode/<s>/auto/warm_weights and .../gemm_only/pdl/warm_weights: every call of the batch reads
# the same weights), beside the call and the GEMMs alone with PDL, 2 rounds, the default build.
# Here: tools/bazel build -c opt --dynamic_mode=off //benchmarks:sm90_nvfp4_grouped_gemm, copied
#   with libbenchmark into gpu_ww/, packed as gpu_ww.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-03_run241_warm_weights/run241.sh
[ -d gb/gpu_ww ] || { mkdir -p gb && tar xJf gpu_ww.tar.xz -C gb; }
B=gb/gpu_ww
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs241
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
F='gpumode/s[0-3]/auto/(iter|warm_weights|gemm_only/pdl)|fewtiles/(one_tile|decode8)/auto/(iter|warm_weights)'
for r in 1 2; do
  timeout 200 $B/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_report_aggregates_only=true > $L/bench_r$r.txt 2>&1
done
for f in $L/bench_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs241.tar.xz -C $L .
