#!/bin/bash
# Device run 93 (2026-12-01, session 13): the token pre-pass streamed inside the GEMM (the fused
# pre-pass without its grid barrier: warps 2-3 convert k-block after k-block, the token producer
# waits per k-block). Kernel test first (the fused and dynamic-M tests, then all), then 3 processes
# of the kernel benchmark (default vs fused vs GEMM only, same binary), then every other test
# binary, then compute-sanitizer on the fused test.
# Usage (repo root; carry gpu_r93.tar.xz = tools/gpu_bundle.sh gpu_r93, stripped, tar cJf):
#   bash benchmarks/results/2026-12-01_run93_streamed_fusion/run93.sh
mkdir -p gb && tar xJf gpu_r93.tar.xz -C gb
B=gb/gpu_r93
export LD_LIBRARY_PATH=$(pwd)/$B
L=${OUT:-/tmp/out}/logs
mkdir -p $L
pack() { tar cJf ${OUT:-/tmp/out}/all_logs.tar.xz -C $L .; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $L/env.txt
T=$B/tests/sm90_nvfp4_grouped_gemm_test
timeout 60 $T --gtest_filter='*Fused*:*DynamicM*' > $L/t_fused.txt 2>&1; echo "rc=$?" >> $L/t_fused.txt
tail -4 $L/t_fused.txt
grep -q "rc=0" $L/t_fused.txt || { pack; exit 1; }
F='gpumode/s./auto/(it|fused/it|gemm_only/it)|fewtiles/(one_tile|tiny|decode8)/auto/(it|fused/it)'
for i in 1 2 3; do
  timeout 150 $B/bin/sm90_nvfp4_grouped_gemm --benchmark_filter="$F" \
    --benchmark_out=$L/bench_$i.json --benchmark_out_format=json > $L/bench_$i.txt 2>&1
  echo "== process $i"; grep median $L/bench_$i.txt | awk '{print $1, $2, $3, $NF}'
done
pack
for t in $B/tests/*; do
  n=$(basename $t)
  timeout 200 $t > $L/t_$n.txt 2>&1; echo "rc=$?" >> $L/t_$n.txt
done
grep -H -E "FAILED|rc=" $L/t_*.txt | grep -v "rc=0"; grep -c "rc=0" $L/t_*.txt | grep -c ":1"
pack
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $T \
    --gtest_filter='*FusedPrepass*' > $L/san_$tool.txt 2>&1; echo "rc=$?" >> $L/san_$tool.txt
  tail -3 $L/san_$tool.txt
done
pack
