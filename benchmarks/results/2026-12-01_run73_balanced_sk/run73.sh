#!/bin/bash
# Device run 73 (2026-12-01, session 10): the balanced stream-K partition (heuristics.h
# PlanStreamK) and the two-piece reduction: every GPU test; memcheck and racecheck of the stream-K
# tests; the kernel benchmark's GPU MODE and few-tile families per kernel kind (two passes).
# Usage (repo root; carry gpu_r73.tar.xz from tools/gpu_bundle.sh gpu_r73 + strip + tar):
#   bash benchmarks/results/2026-12-01_run73_balanced_sk/run73.sh
mkdir -p gb && tar xJf gpu_r73.tar.xz -C gb
B=gb/gpu_r73
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 200 $B/tests/sm90_nvfp4_grouped_gemm_test > $L/t_sm90_nvfp4_grouped_gemm_test.txt 2>&1
echo "rc=$?" >> $L/t_sm90_nvfp4_grouped_gemm_test.txt
tail -n 4 $L/t_sm90_nvfp4_grouped_gemm_test.txt
grep -E "FAILED|Failure" $L/t_sm90_nvfp4_grouped_gemm_test.txt | head -20
for pass in 1 2; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm \
    --benchmark_filter='gpumode/s./(auto|persistent|stream_k|simple)/it|gpumode/s./auto/unpacked|fewtiles/.*/(auto|stream_k)/it' \
    --benchmark_out=$L/bench_$pass.json --benchmark_out_format=json > $L/bench_$pass.txt 2>&1
  grep median $L/bench_$pass.txt | awk '{print $1, $2, $3, $NF}'
done
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $B/tests/sm90_nvfp4_grouped_gemm_test \
    --gtest_filter='*StreamK*' > $L/sanitize_$tool.txt 2>&1
  echo "rc=$?" >> $L/sanitize_$tool.txt
  tail -n 3 $L/sanitize_$tool.txt
done
tar czf ${OUT:-/tmp/out}/all_logs.tgz -C $L .
