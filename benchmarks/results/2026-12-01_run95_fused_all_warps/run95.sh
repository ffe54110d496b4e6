#!/bin/bash
# Device run 95 (session 13): the fused pre-pass converted by warps 1-11 before their roles (manual
# build _fall, ENCORE_SM90_FUSED_ALL_WARPS=1: k-block-major claims, per-k-block readiness, no grid
# barrier) against the default build's streamed fusion (warps 2-3) and its unfused calls.
# Usage (repo root; carry gpu_r95.tar.xz from tools/ab_bundle.sh gpu_r95 _fall).
mkdir -p gb && tar xJf gpu_r95.tar.xz -C gb
export LD_LIBRARY_PATH=$(pwd)/gb
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 90 gb/tests/sm90_nvfp4_grouped_gemm_fall_test --gtest_filter='*Fused*:*DynamicM*' \
  > $L/t_fall_fused.txt 2>&1; echo "rc=$?" >> $L/t_fall_fused.txt; tail -2 $L/t_fall_fused.txt
F='gpumode/s./auto/(it|fused/it)|fewtiles/(one_tile|decode8)/auto/(it|fused/it)'
for round in 1 2; do
  for v in default fall; do
    timeout 150 gb/b_$v --benchmark_filter="$F" --benchmark_out=$L/bench_${v}_$round.json \
      --benchmark_out_format=json > $L/bench_${v}_$round.txt 2>&1
    echo "== $v round $round"
    grep median $L/bench_${v}_$round.txt | sed 's#/iterations:1/repeats:[0-9]*/manual_time_median##' \
      | awk '{print $1, $2}'
  done
done
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
