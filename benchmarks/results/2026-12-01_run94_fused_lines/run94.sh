#!/bin/bash
# Device run 94 (session 13): the streamed fused pre-pass with its words on separate 128-byte lines
# and the token producer's poll backing off (run 93b: fused 1.5-1.8x slower). The fused and
# dynamic-M tests, then 2 processes of the kernel benchmark (default vs fused vs GEMM only).
# Usage (repo root; carry gpu_r94.tar.xz: the benchmark and the kernel test, -c opt, stripped).
mkdir -p gb && tar xJf gpu_r94.tar.xz -C gb
B=gb/gpu_r94
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
timeout 60 $B/sm90_nvfp4_grouped_gemm_test --gtest_filter='*Fused*:*DynamicM*' > $L/t_fused.txt 2>&1
echo "rc=$?" >> $L/t_fused.txt; tail -3 $L/t_fused.txt
F='gpumode/s./auto/(it|fused/it|gemm_only/it)|fewtiles/(one_tile|tiny|decode8)/auto/(it|fused/it)'
for i in 1 2; do
  timeout 150 $B/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_out=$L/bench_$i.json --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== process $i"; grep median $L/bench_$i.txt | awk '{print $1, $2, $3, $NF}'
done
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
