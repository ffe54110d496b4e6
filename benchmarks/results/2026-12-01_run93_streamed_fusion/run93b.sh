#!/bin/bash
# Device run 93b: run93.sh's benchmark phase again (run 93's filter matched nothing: the names end
# in /iterations:1/repeats:N/manual_time). 3 processes, same bundle.
mkdir -p gb && tar xJf gpu_r93.tar.xz -C gb
B=gb/gpu_r93
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $L/env.txt
F='gpumode/s./auto/(it|fused/it|gemm_only/it)|fewtiles/(one_tile|tiny|decode8)/auto/(it|fused/it)'
for i in 1 2 3; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_out=$L/bench_$i.json --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== process $i"; grep median $L/bench_$i.txt | awk '{print $1, $2, $3, $NF}'
done
tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .
