#!/bin/bash
# Run 226 (session 34): the consumer loop's forms by width, without TMA or mbarriers
# (benchmarks/micro/wgmma_rs_ceiling.cu: the ping-pong modes and `table`), beside the kernel's
# steady family (the real loop per k-block, simple kernel, gemm_only) at the same widths.
# Here: the micro at this commit; the kernel binaries from tools/gpu_bundle.sh gpu_s33d (0fe45a9:
# the kernels are unchanged since). There:
#   bash benchmarks/results/2026-12-02_run226_loop_forms/run226.sh
[ -d gb/gpu_s33d ] || { mkdir -p gb && tar xJf gpu_s33d.tar.xz -C gb; }
B=gb/gpu_s33d
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > $L/env.txt 2>&1
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
  -diag-suppress=1160 -I. -o /tmp/ceiling benchmarks/micro/wgmma_rs_ceiling.cu || exit 1
/tmp/ceiling > $L/ceiling_modes.txt 2>&1
/tmp/ceiling table > $L/ceiling_table.txt 2>&1
$B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter='steady/w[0-9]+/k[0-9]+/gemm_only' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $L/steady.txt 2>&1
cat $L/ceiling_table.txt; grep -E "median" $L/steady.txt
