#!/bin/bash
# Run 234 (session 36): (1) weight_hbm_reads micro with the kb2p form (two 64-byte boxes on one
# barrier pair: is run 233's kb2 gain the box or the stage?); (2) the _wpair build
# (ENCORE_SM90_WEIGHT_FILL = 2: the weight producer fills two k-blocks a turn on one barrier pair)
# kernel tests (the whole binary), then 3 alternated rounds default / _wpair.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_wpair
#   //tests/gemm:sm90_nvfp4_grouped_gemm_wpair_test, copied with the default benchmark of gpu_s34
#   (530185e; the default kernels are byte for byte the same at this commit) into gpu_wp/, packed
#   as gpu_wp.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-03_run234_weight_pairs/run234.sh
[ -d gb/gpu_wp ] || { mkdir -p gb && tar xJf gpu_wp.tar.xz -C gb; }
B=gb/gpu_wp
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs234
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o /tmp/weight_hbm_reads \
  benchmarks/micro/weight_hbm_reads.cu > $L/build.txt 2>&1 || cat $L/build.txt
timeout 120 /tmp/weight_hbm_reads > $L/weight_hbm_reads.txt 2>&1
echo "micro rc=$?"
grep -E "hold +(960|1280)" $L/weight_hbm_reads.txt
timeout 240 $B/sm90_nvfp4_grouped_gemm_wpair_test > $L/test_wpair.txt 2>&1
echo "wpair test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_wpair.txt | tr '\n' ' ')"
F='gpumode/s[0-3]/auto/iter|decode/n7168_k2048/m(64|96)/iter|moe/e64_s4096/n4096_k7168/iter|steady/w(64|128)/k8192/gemm_only/'
for r in 1 2 3; do
  for v in "" _wpair; do
    timeout 100 $B/sm90_nvfp4_grouped_gemm$v --benchmark_filter="$F" --benchmark_repetitions=10 \
      --benchmark_report_aggregates_only=true > $L/bench${v:-_default}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs234.tar.xz -C $L .
