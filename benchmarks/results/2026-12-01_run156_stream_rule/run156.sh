#!/bin/bash
# Device run 156 (session 22): StreamTiles::kAuto (16-row plans, and 128-row plans of >= 32
# k-blocks) against kNever and kAlways, after run 155 (which streamed every 16/128-row plan).
# Kernels as in run 155 (the runner's choice changed); the streamed-kernel test, then one round.
# Usage (repo root; carry gpu_s156.tar.xz: the kernel test and kernel benchmark, stripped):
#   bash benchmarks/results/2026-12-01_run156_stream_rule/run156.sh
mkdir -p gb && tar xJf gpu_s156.tar.xz -C gb
B=gb/gpu_r156
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs156
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
timeout 60 $B/tests/sm90_nvfp4_grouped_gemm_test --gtest_filter='*StreamedSimpleKernel*' > $L/t_streamed.txt 2>&1
echo "streamed test rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED' $L/t_streamed.txt | tr '\n' ' ')"
pack
F='decode/n2048_k(7168|2048)/m(16|128)|gpumode/s[23]/auto/(it|nostream|stream)|fewtiles/(decode8|one_tile)/auto/(it|nostream)'
short() { grep median "$1" | awk '{printf "%s %s | ", $1, $2}' | sed 's/.iterations:1.repeats:[0-9]*.manual_time_median//g'; }
timeout 100 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" --benchmark_out=$L/bench_1.json \
  --benchmark_out_format=json > $L/bench_1.txt 2>&1
echo "== 1: $(short $L/bench_1.txt)"
pack
