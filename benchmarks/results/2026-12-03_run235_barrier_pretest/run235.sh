#!/bin/bash
# Run 235 (session 36): the _pretest build (ENCORE_SM90_BARRIER_PRETEST = 1: the consumers test
# the next k-block's weight and token barriers with mbarrier.test_wait before a k-block's drain
# and skip the blocking wait after it where the test passed): the whole kernel-test binary, then
# 3 alternated rounds default / _pretest.
# Here: tools/bazel build -c opt //benchmarks:sm90_nvfp4_grouped_gemm_pretest
#   //tests/gemm:sm90_nvfp4_grouped_gemm_pretest_test, copied with the default benchmark of
#   gpu_s34 (530185e; the default kernels are byte for byte the same) into gpu_pt/, packed as
#   gpu_pt.tar.xz (carried). There:
#   bash benchmarks/results/2026-12-03_run235_barrier_pretest/run235.sh
[ -d gb/gpu_pt ] || { mkdir -p gb && tar xJf gpu_pt.tar.xz -C gb; }
B=gb/gpu_pt
export LD_LIBRARY_PATH=$(pwd)/$B
L=/tmp/logs235
mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $L/env.txt 2>&1
timeout 240 $B/sm90_nvfp4_grouped_gemm_pretest_test > $L/test_pretest.txt 2>&1
echo "pretest test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_pretest.txt | tr '\n' ' ')"
F='gpumode/s[0-3]/auto/iter|decode/n7168_k2048/m(64|96)/iter|moe/e64_s4096/n4096_k7168/iter|steady/w(64|128)/k8192/gemm_only/'
for r in 1 2 3; do
  for v in "" _pretest; do
    timeout 100 $B/sm90_nvfp4_grouped_gemm$v --benchmark_filter="$F" --benchmark_repetitions=10 \
      --benchmark_report_aggregates_only=true > $L/bench${v:-_default}_r$r.txt 2>&1
  done
done
for f in $L/bench*_r*.txt; do echo "== $(basename $f)"; grep median $f | awk '{print $1, $2}'; done > $L/summary.txt
cat $L/summary.txt
tar cJf ${OUT:-/tmp/out}/logs235.tar.xz -C $L .
