#!/bin/bash
# Run 233 (session 35): (1) benchmarks/micro/weight_hbm_reads.cu: what HBM delivers to the weight
# producer with the kernel's {64 B, 128 rows} boxes against {128 B, 128 rows} (two k-blocks a box),
# 132 CTAs streaming distinct weights, consumers holding a k-block 0 / 960 / 1280 cycles;
# (2) racecheck of the persistent kernel's 2-part default (530185e, PTX identical at f4e9048).
# There: bash benchmarks/results/2026-12-03_run233_weight_boxes/run233.sh (gpu_s34.tar.xz carried)
[ -d gb/gpu_s34 ] || { mkdir -p gb && tar xJf gpu_s34.tar.xz -C gb; }
L=/tmp/logs233
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o /tmp/weight_hbm_reads \
  benchmarks/micro/weight_hbm_reads.cu > $L/build.txt 2>&1 || { cat $L/build.txt; exit 1; }
timeout 200 /tmp/weight_hbm_reads > $L/weight_hbm_reads.txt 2>&1
echo "micro rc=$?"
cat $L/weight_hbm_reads.txt
export LD_LIBRARY_PATH=$(pwd)/gb/gpu_s34
timeout 330 compute-sanitizer --tool racecheck --error-exitcode 9 \
  gb/gpu_s34/tests/sm90_nvfp4_grouped_gemm_test \
  --gtest_filter='Sm90GemmTest.PackedPersistentScheduleMatchesReference' > $L/racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $L/racecheck.txt | tr '\n' ' ')"
tar cJf ${OUT:-/tmp/out}/logs233.tar.xz -C $L .
